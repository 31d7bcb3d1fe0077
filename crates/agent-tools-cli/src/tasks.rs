//! Long calls as tasks: the Tasks extension of MCP 2026-07-28 (SEP-2663,
//! `io.modelcontextprotocol/tasks`), with rmcp's `TaskManager`.
//!
//! When a 2026-07-28 request's client declares the extension (its
//! `clientCapabilities.extensions` has `io.modelcontextprotocol/tasks`), a long
//! call ([`runs_long`]: `eval`, `debug` runs and starts, `vibe_wait`,
//! `lsp_rename`, `ast_edit` over the whole root) answers at once with a task
//! (`resultType: "task"`) and runs on. The client polls `tasks/get`:
//! - `working`, with the call's latest progress message as `statusMessage`;
//! - `input_required`, with the question (the `ask_user` card, an approval card
//!   of `serve --ask`) as an `elicitation/create` form under `inputRequests`
//!   (keys `question-1`, `question-2`, …), answered by `tasks/update`;
//! - `completed`, with the call's result (a tool error is a completed task whose
//!   result has `isError`), `failed` for a host failure, `cancelled` after
//!   `tasks/cancel`, which drops the call as a request's cancellation does.
//!
//! A client that did not declare the extension never gets a task, nor does any
//! 2025-11-25 session. Tasks are the run's: another run's server knows none of
//! its ids. A task is kept [`TASK_TTL`] from its creation (a call still running
//! then is ended and the task `failed`), and its end is kept as long again.

use std::time::Duration;

use agent_tools::{Progress, ProgressSink, Surface};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult, DetailedTask, ElicitResult};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};

use crate::rounds;

/// How long a task is kept from its creation: an hour, past every default bound of a
/// long call (`eval.timeout_s`, the debugger's run timeout, `vibe.max_wait_s`, a question's wait).
pub const TASK_TTL: Duration = Duration::from_secs(3600);

/// How often a client is told to poll, in milliseconds.
const POLL_MS: u64 = 500;

/// Whether the call `name` with `args` may run long enough to be a task: `eval`;
/// `debug`'s starts and runs (`launch`, `attach`, `continue`, steps, `pause`);
/// `vibe_wait`; `lsp_rename`; `ast_edit` with no `path` (the whole root).
pub fn runs_long(name: &str, args: &serde_json::Value) -> bool {
    match name {
        "eval" | "vibe_wait" | "lsp_rename" => true,
        "debug" => matches!(
            args.get("op").and_then(serde_json::Value::as_str),
            Some("launch" | "attach" | "continue" | "step_over" | "step_in" | "step_out" | "pause")
        ),
        "ast_edit" => args.get("path").is_none_or(serde_json::Value::is_null),
        _ => false,
    }
}

/// The run's tasks.
pub struct Tasks {
    manager: TaskManager,
    question_timeout: Duration,
}

impl Tasks {
    /// Tasks whose questions wait `question_timeout` for their answer (`ask.timeout_s`).
    pub fn new(question_timeout: Duration) -> Tasks {
        Tasks { manager: TaskManager::new(), question_timeout }
    }

    /// Starts the call as a task and returns its handle; `elicits`: whether the client
    /// declared elicitation (else a question has nobody to ask, as in a plain call).
    pub fn start(&self, surface: &Surface, name: String, args: serde_json::Value, elicits: bool) -> CallToolResponse {
        let surface = surface.clone();
        let timeout = self.question_timeout;
        let options = TaskOptions::new()
            .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
            .with_poll_interval_ms(POLL_MS)
            .with_status_message(format!("{name} is running"));
        let task = self.manager.spawn(options, move |task| {
            Box::pin(async move { run(task, surface, name, args, elicits, timeout).await })
        });
        tracing::debug!(task = %task.task_id, "call runs as a task");
        CreateTaskResult::new(task).into()
    }

    /// `tasks/get`. Errors: an id this run does not know.
    pub fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        self.manager.get_task(id)
    }

    /// `tasks/update`: the answers to the task's questions, by key.
    /// Errors: an id this run does not know.
    pub fn update(&self, id: &str, responses: rmcp::model::InputResponses) -> Result<(), ErrorData> {
        self.manager.update_task(id, responses)
    }

    /// `tasks/cancel`: the call is dropped, which stops its work, and the task ends `cancelled`.
    /// Errors: an id this run does not know.
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(id)
    }
}

impl Drop for Tasks {
    /// The run's end ends its tasks' calls.
    fn drop(&mut self) {
        self.manager.shutdown();
    }
}

/// The task's call: run to its end, its progress as the task's status message, its
/// questions as the task's input requests, dropped when the task is cancelled.
async fn run(
    task: TaskContext,
    surface: Surface,
    name: String,
    args: serde_json::Value,
    elicits: bool,
    timeout: Duration,
) -> Result<rmcp::model::CallToolResult, TaskExit> {
    let (sender, mut progress) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let sink = ProgressSink::new(move |report| drop(sender.send(report)));
    let (asker, mut questions) = rounds::asker(timeout);
    let call = surface.call_with_progress(&name, args, Some(sink));
    type Call<'a> =
        std::pin::Pin<Box<dyn std::future::Future<Output = agent_tools::Result<agent_tools::ToolResult>> + Send + 'a>>;
    let call: Call<'_> = if elicits { Box::pin(rounds::asking(asker, call)) } else { Box::pin(call) };
    tokio::pin!(call);
    let mut asked = 0u32;
    loop {
        tokio::select! {
            ended = &mut call => {
                return match ended {
                    Ok(result) => Ok(crate::mcp_shapes::mcp_result(result)),
                    Err(e) => {
                        tracing::error!(tool = %name, error = %e, "host failure");
                        Err(TaskExit::Error(ErrorData::internal_error(e.to_string(), None)))
                    }
                };
            }
            Some(question) = questions.recv() => {
                asked += 1;
                let (task, key) = (task.clone(), format!("question-{asked}"));
                let request = rounds::input_request(question.message, question.schema);
                // The call waits in its question port (at most the question timeout); the answer
                // comes with `tasks/update`. A reply that is no `ElicitResult` is asked again.
                tokio::spawn(async move {
                    if let Ok(value) = task.request_input(key, request).await {
                        let _ = question.reply.send(serde_json::from_value::<ElicitResult>(value).ok());
                    }
                });
            }
            Some(report) = progress.recv() => task.set_status_message(report.message),
            () = task.cancelled() => {
                tracing::info!(tool = %name, "task cancelled; the call was dropped");
                return Err(TaskExit::Cancelled);
            }
        }
    }
}
