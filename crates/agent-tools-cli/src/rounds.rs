//! Questions on MCP 2026-07-28 sessions: multi round-trip requests (SEP-2322,
//! "MRTR"; spec `basic/patterns/mrtr`). On that revision a server may not send
//! requests to the client (`basic/transports/stdio`), so a `tools/call` that
//! needs the human (the `ask_user` card, the approval card of `serve --ask`)
//! returns an `InputRequiredResult`: one `inputRequests` entry, `"question"`,
//! holding the `elicitation/create` form, and a `requestState`. The client
//! asks the human and retries the same `tools/call` (same tool and arguments)
//! with `inputResponses.question` and the `requestState` echoed.
//!
//! The call runs once: it is a task of its own, kept here between rounds and
//! suspended inside its question port ([`Asker`], reached through a task-local
//! so that the tools and the ports know nothing of rounds). The state lives
//! here; the client holds only `requestState`, the call's key for this round, sealed with
//! HMAC-SHA256 (rmcp's `RequestStateCodec`, a random key per process) over the
//! tool's name and arguments, with the question timeout as its TTL. So:
//! - a forged or altered state, or one from another process or for other
//!   arguments, fails its integrity check: refused, nothing runs;
//! - a state used once is spent (its round is over): a replay is refused;
//! - a retry after the question timeout: "the question expired", nothing runs
//!   (an approval that timed out was denied; a question, unanswered);
//! - a retry without an answer, or with one that is no `ElicitResult`, is a
//!   reply that does not fit: asked again with the reason, as a form that
//!   does not fit is today, and after three the call fails.
//!
//! Handshake-era sessions (2025-06-18, 2025-11-25) never come here: their
//! questions are `elicitation/create` requests ([`crate::elicit`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_tools::{CallerFuture, Progress, ProgressSink, Surface, ToolResult};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tokio::sync::{mpsc, oneshot};

/// The `inputRequests` key of the one question a round asks.
pub const QUESTION_KEY: &str = "question";

/// How long a question waits for its retry by default (the `ask.timeout_s` setting).
pub const QUESTION_TIMEOUT: Duration = Duration::from_secs(600);

tokio::task_local! {
    static ASKER: Asker;
}

/// What a question port uses, inside a call of a 2026-07-28 session, to ask
/// the human: the question goes to the round that returns it to the client.
#[derive(Clone)]
pub struct Asker {
    questions: mpsc::UnboundedSender<Question>,
    timeout: Duration,
}

/// One question on its way out, and where its answer comes back.
pub(crate) struct Question {
    pub(crate) message: String,
    pub(crate) schema: ElicitationSchema,
    /// `None`: the retry brought no answer that reads as an `ElicitResult`.
    pub(crate) reply: oneshot::Sender<Option<ElicitResult>>,
}

/// An asker whose questions, each waiting at most `timeout` for its answer, arrive on
/// the receiver: for a call that is not driven by rounds (a task, [`crate::tasks`]).
pub(crate) fn asker(timeout: Duration) -> (Asker, mpsc::UnboundedReceiver<Question>) {
    let (questions, received) = mpsc::unbounded_channel();
    (Asker { questions, timeout }, received)
}

/// `call`, its questions (and those of the calls it makes) asked through `asker`.
pub(crate) async fn asking<F: std::future::Future>(asker: Asker, call: F) -> F::Output {
    ASKER.scope(asker, call).await
}

/// The `elicitation/create` form a question travels in, inside an input request.
pub(crate) fn input_request(message: String, schema: ElicitationSchema) -> InputRequest {
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema };
    InputRequest::Elicitation(ElicitRequest::new(params))
}

/// How a question asked through an [`Asker`] ended.
pub enum Reply {
    /// The client's answer; `None` when the retry brought none that reads.
    Answer(Option<ElicitResult>),
    /// No retry came within the question timeout.
    Expired,
}

/// The asker of the call this task runs, when it is a call of a 2026-07-28
/// session whose client declared elicitation.
pub fn current() -> Option<Asker> {
    ASKER.try_with(Asker::clone).ok()
}

impl Asker {
    /// `call`, with this asker as the one its questions go through.
    pub fn enter<'a>(self, call: CallerFuture<'a>) -> CallerFuture<'a> {
        Box::pin(ASKER.scope(self, call))
    }
}

impl Asker {
    /// Asks `message` with the form `schema` and waits for the retry's answer.
    pub async fn ask(&self, message: String, schema: ElicitationSchema) -> Reply {
        let (reply, answer) = oneshot::channel();
        if self.questions.send(Question { message, schema, reply }).is_err() {
            return Reply::Expired;
        }
        match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(answer)) => Reply::Answer(answer),
            // The round was dropped (the call was cancelled), or the time ran out.
            Ok(Err(_)) | Err(_) => Reply::Expired,
        }
    }
}

/// A call between rounds: its task, and where its questions and progress arrive.
struct Pending {
    task: tokio::task::JoinHandle<agent_tools::Result<ToolResult>>,
    questions: mpsc::UnboundedReceiver<Question>,
    progress: mpsc::UnboundedReceiver<Progress>,
    /// Where the answer to the question that is out goes.
    answer: Option<oneshot::Sender<Option<ElicitResult>>>,
    asked: Instant,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What `requestState` carries, sealed: the key the pending call is kept
/// under, new for every question, so a state names one round only.
#[derive(serde::Serialize, serde::Deserialize)]
struct State {
    call: u64,
}

/// The calls of this process that wait for a retry.
pub struct Rounds {
    codec: RequestStateCodec,
    calls: Mutex<HashMap<u64, Pending>>,
    next: AtomicU64,
    timeout: Duration,
}

impl Rounds {
    /// Rounds whose questions wait `timeout` for their retry, sealed with a new random key.
    ///
    /// # Errors
    /// When the process cannot read 32 random bytes from `/dev/urandom`.
    pub fn new(timeout: Duration) -> anyhow::Result<Rounds> {
        use std::io::Read as _;
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        let codec = RequestStateCodec::try_new(key.to_vec())?;
        Ok(Rounds { codec, calls: Mutex::default(), next: AtomicU64::new(1), timeout })
    }

    /// One round of `request` on a 2026-07-28 session: a new call, or the
    /// retry of one that asked. `elicits`: whether the client declared
    /// elicitation (else the call runs with nobody to ask).
    pub async fn call(
        &self,
        surface: &Surface,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        elicits: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        self.sweep();
        let args = request.arguments.clone().map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
        let bound = binding(&request.name, &args);
        let pending = match &request.request_state {
            None => self.start(surface, &request.name, args, elicits),
            Some(state) => match self.resume(state, &bound, &request) {
                Ok(pending) => pending,
                Err(refusal) => return Ok(refused(&refusal).into()),
            },
        };
        self.drive(pending, &request.name, &bound, context).await
    }

    /// Starts the call in a task of its own, its questions going to the round.
    fn start(&self, surface: &Surface, name: &str, args: serde_json::Value, elicits: bool) -> Pending {
        let (questions_tx, questions) = mpsc::unbounded_channel();
        let (progress_tx, progress) = mpsc::unbounded_channel::<Progress>();
        let sink = ProgressSink::new(move |report| drop(progress_tx.send(report)));
        let surface = surface.clone();
        let name = name.to_owned();
        let asker = Asker { questions: questions_tx, timeout: self.timeout };
        let task = tokio::spawn(async move {
            let call = surface.call_with_progress(&name, args, Some(sink));
            if elicits { ASKER.scope(asker, call).await } else { call.await }
        });
        Pending { task, questions, progress, answer: None, asked: Instant::now() }
    }

    /// The pending call a retry's `requestState` names, its answer delivered;
    /// or why the retry is refused.
    fn resume(&self, sealed: &str, bound: &[u8], request: &CallToolRequestParams) -> Result<Pending, String> {
        let state: State = self.codec.open_json_with(sealed, bound).map_err(|error| match error {
            rmcp::model::RequestStateError::Expired => expired(),
            _ => "the requestState is not one this run gave for this call (altered, for other arguments, or from \
                  another run or server process); nothing was run. Call the tool again without requestState"
                .to_owned(),
        })?;
        let mut calls = self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(mut pending) = calls.remove(&state.call) else {
            return Err("this requestState was used already, or its call has ended; nothing was run".to_owned());
        };
        drop(calls);
        let answer = pending.answer.take().filter(|answer| !answer.is_closed()).ok_or_else(expired)?;
        let reply = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(QUESTION_KEY))
            .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok());
        answer.send(reply).map_err(|_| expired())?;
        // Reports made while nobody listened ("waiting for the user's answer") are stale now.
        while pending.progress.try_recv().is_ok() {}
        Ok(pending)
    }

    /// Runs the call until it ends (the result), asks (an `InputRequiredResult`,
    /// the call kept for its retry) or is cancelled; forwarding its progress
    /// to this round's `progressToken`.
    async fn drive(
        &self,
        mut pending: Pending,
        name: &str,
        bound: &[u8],
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = context.meta.get_progress_token();
        let mut progress = crate::mcp_shapes::Paced::default();
        loop {
            tokio::select! {
                ended = &mut pending.task => {
                    while let Ok(report) = pending.progress.try_recv() {
                        progress.send(&context.peer, token.as_ref(), report).await;
                    }
                    return match ended {
                        Ok(Ok(result)) => Ok(crate::mcp_shapes::mcp_result(result).into()),
                        Ok(Err(e)) => {
                            tracing::error!(tool = %name, error = %e, "host failure");
                            Err(ErrorData::internal_error(e.to_string(), None))
                        }
                        Err(e) => Err(ErrorData::internal_error(format!("the {name} call ended abnormally: {e}"), None)),
                    };
                }
                Some(question) = pending.questions.recv() => {
                    let state = State { call: self.next.fetch_add(1, Ordering::Relaxed) };
                    let options = SealOptions::new().associated_data(bound).ttl(self.timeout);
                    let sealed = self.codec.seal_json_with(&state, &options)
                        .map_err(|e| ErrorData::internal_error(format!("cannot seal the request state: {e}"), None))?;
                    let mut requests = InputRequests::new();
                    requests.insert(QUESTION_KEY.to_owned(), input_request(question.message, question.schema));
                    pending.answer = Some(question.reply);
                    pending.asked = Instant::now();
                    self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(state.call, pending);
                    tracing::debug!(tool = %name, call = state.call, "input required");
                    return Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into());
                }
                Some(report) = pending.progress.recv() => {
                    progress.send(&context.peer, token.as_ref(), report).await;
                }
                () = context.ct.cancelled() => {
                    tracing::info!(tool = %name, "cancelled by the client; the call was dropped");
                    return Err(ErrorData::internal_error(format!("the {name} call was cancelled by the client"), None));
                }
            }
        }
    }

    /// Drops the calls whose question has waited past twice its timeout
    /// (their port gave up at once the timeout; nobody retried).
    fn sweep(&self) {
        let mut calls = self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        calls.retain(|_, pending| pending.asked.elapsed() < self.timeout * 2);
    }
}

/// The associated data a state is sealed over: the tool's name and its
/// arguments as JSON (serde_json writes an object's keys in order).
fn binding(name: &str, args: &serde_json::Value) -> Vec<u8> {
    let mut bound = name.as_bytes().to_vec();
    bound.push(0);
    bound.extend(serde_json::to_vec(args).unwrap_or_default());
    bound
}

fn expired() -> String {
    "the question expired: no answer came within the question timeout (setting ask.timeout_s); nothing was run. \
     Call the tool again to ask anew"
        .to_owned()
}

fn refused(why: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("refused: {why}"))])
}
