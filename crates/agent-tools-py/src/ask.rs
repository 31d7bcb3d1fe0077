//! Questions to the Python host: the question port behind `ask_user` and the
//! approval gate, asking the `ask` callable of the call that is running.
//!
//! Each call runs inside a [`CallScope`] (a tokio task-local, as `serve` routes
//! a 2026-07-28 session's questions): its port finds there the call's bridge, a
//! Python callable `bridge(kind, card, retry_reason, reply)` that schedules the
//! host's `ask` on the caller's event loop and returns a callable that cancels
//! it. The answer comes back through [`Reply`], already read into
//! `{"outcome": "answered", "labels", "text"}`, `skipped` or `timed_out`, and
//! is checked against the card as an MCP client's answer is: one that does not
//! fit is asked again with the reason (3 times in all), and replies that never
//! fit are [`question_port::Error::UnfitReplies`]. A cell's `tool()` calls run
//! on the kernel's own task: the surface carries the outer call's scope into
//! them ([`AskScope`]), so their questions reach the same `ask`. No bridge
//! (the call had no `ask`) is nobody attached: unavailable at once. An exception
//! raised by `ask` fails the whole call with it. A question dropped before its
//! answer (the call was cancelled) cancels the host's `ask` task.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use agent_tools::question_port::{self, Answer, BoxFuture, Card, Outcome, QuestionPort};
use agent_tools::{CallerFuture, CapturedScope, TaskScope};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, oneshot};

/// How many times a reply that does not fit the card is asked again, as over MCP.
const ATTEMPTS: usize = 3;

tokio::task_local! {
    static SCOPE: Arc<CallScope>;
}

/// What one call's questions reach: the host's bridge, and the first exception it raised.
pub struct CallScope {
    bridge: Option<Py<PyAny>>,
    failure: Mutex<Option<PyErr>>,
    failed: Notify,
}

impl CallScope {
    /// A scope asking through `bridge`, or nobody.
    pub fn new(bridge: Option<Py<PyAny>>) -> Arc<CallScope> {
        Arc::new(CallScope { bridge, failure: Mutex::new(None), failed: Notify::new() })
    }

    /// Runs `future` with this scope as the current call's.
    pub async fn run<F: Future>(self: &Arc<CallScope>, future: F) -> F::Output {
        SCOPE.scope(Arc::clone(self), future).await
    }

    /// Resolves with the exception the host's `ask` raised, once it has raised one.
    pub async fn failed(&self) -> PyErr {
        self.failed.notified().await;
        let taken = self.failure.lock().unwrap_or_else(PoisonError::into_inner).take();
        taken.unwrap_or_else(|| crate::Error::new_err("the ask callable failed"))
    }

    fn fail(&self, error: PyErr) {
        let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        if failure.is_none() {
            *failure = Some(error);
            // A stored permit: the call's select sees it even if it polls later.
            self.failed.notify_one();
        }
    }
}

/// The surface's [`TaskScope`]: a call's scope, carried into the calls its tool
/// makes from another task (a cell's `tool()`).
#[derive(Debug)]
pub struct AskScope;

impl TaskScope for AskScope {
    fn capture(&self) -> Option<Arc<dyn CapturedScope>> {
        SCOPE.try_with(Arc::clone).ok().map(|scope| Arc::new(Captured(scope)) as Arc<dyn CapturedScope>)
    }
}

struct Captured(Arc<CallScope>);

impl CapturedScope for Captured {
    fn enter<'a>(&self, call: CallerFuture<'a>) -> CallerFuture<'a> {
        Box::pin(SCOPE.scope(Arc::clone(&self.0), call))
    }
}

/// Which card a port shows: `ask_user`'s question, or the gate's permission card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Question,
    Approval,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Question => "question",
            Kind::Approval => "approval",
        }
    }
}

/// The port of one kind of card, asking the current call's host.
pub struct PyPort {
    kind: Kind,
}

impl PyPort {
    pub fn new(kind: Kind) -> PyPort {
        PyPort { kind }
    }
}

impl QuestionPort for PyPort {
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, question_port::Result<Outcome>> {
        Box::pin(async move {
            card.check()?;
            let Ok(scope) = SCOPE.try_with(Arc::clone) else { return Ok(Outcome::Unavailable) };
            let Some(bridge) = scope.bridge.as_ref() else { return Ok(Outcome::Unavailable) };
            let mut reason: Option<String> = None;
            for _ in 0..ATTEMPTS {
                let reply = match ask_once(bridge, self.kind, card, reason.as_deref()).await {
                    Ok(reply) => reply,
                    Err(error) => {
                        // The call ends with the host's exception; this question never settles.
                        scope.fail(error);
                        return std::future::pending().await;
                    }
                };
                match reply {
                    HostReply::Skipped => return Ok(Outcome::Skipped),
                    HostReply::TimedOut => return Ok(Outcome::TimedOut),
                    HostReply::Answered { labels, text } => match card.validate(Answer { labels, text }) {
                        Ok(answer) => return Ok(Outcome::Answered(answer)),
                        Err(e) => reason = Some(e.to_string()),
                    },
                }
            }
            Err(question_port::Error::UnfitReplies { attempts: ATTEMPTS, last: reason.unwrap_or_default() })
        })
    }
}

/// An answer as the Python half reads the host's return value.
#[derive(Debug, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum HostReply {
    Answered { labels: Vec<String>, text: Option<String> },
    Skipped,
    TimedOut,
}

/// A card as the Python half builds its `Question` or `Approval` from it.
#[derive(Debug, Serialize)]
struct CardView<'a> {
    question: &'a str,
    context: Option<&'a str>,
    options: Vec<ChoiceView<'a>>,
    allow_free_text: bool,
    multi_select: bool,
    /// For a permission card: the tool asking to run, and its tier.
    tool: Option<&'a str>,
    tier: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct ChoiceView<'a> {
    label: &'a str,
    description: Option<&'a str>,
}

/// The tool and tier a permission card names in its question, worded by the
/// facade's `permission_card` as `Allow NAME (TIER tier) to run?`.
pub fn permission_subject(card: &Card) -> Option<(&str, &str)> {
    card.question.strip_prefix("Allow ")?.strip_suffix(" tier) to run?")?.rsplit_once(" (")
}

/// Asks the host once and waits for its reply; dropped first, it cancels the host's task.
async fn ask_once(bridge: &Py<PyAny>, kind: Kind, card: &Card, reason: Option<&str>) -> PyResult<HostReply> {
    let (sender, answer) = oneshot::channel();
    let cancel = Python::attach(|py| -> PyResult<Py<PyAny>> {
        let subject = if kind == Kind::Approval { permission_subject(card) } else { None };
        let view = CardView {
            question: &card.question,
            context: card.context.as_deref(),
            options: card
                .options
                .iter()
                .map(|c| ChoiceView { label: &c.label, description: c.description.as_deref() })
                .collect(),
            allow_free_text: card.allow_free_text,
            multi_select: card.multi_select,
            tool: subject.map(|(tool, _)| tool),
            tier: subject.map(|(_, tier)| tier),
        };
        let view = pythonize::pythonize(py, &view).map_err(|e| crate::Error::new_err(e.to_string()))?;
        let reply = Py::new(py, Reply { sender: Mutex::new(Some(sender)) })?;
        bridge.call1(py, (kind.as_str(), view, reason, reply))
    })?;
    let mut withdraw = Withdraw { cancel: Some(cancel) };
    let settled = answer.await;
    withdraw.cancel = None;
    let value = match settled {
        Ok(value) => value?,
        Err(_) => return Err(crate::Error::new_err("the ask callable's task ended without an answer")),
    };
    Python::attach(|py| {
        pythonize::depythonize::<HostReply>(value.bind(py))
            .map_err(|e| crate::Error::new_err(format!("the ask bridge gave an unreadable reply: {e}")))
    })
}

/// Cancels the host's `ask` task of a question dropped before its answer.
struct Withdraw {
    cancel: Option<Py<PyAny>>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            Python::attach(|py| {
                // A loop already closed has nothing left to cancel.
                let _ = cancel.call0(py);
            });
        }
    }
}

/// Where the Python half sends the host's answer to one question: `answer(reply)`
/// or `fail(exception)`, once; later calls are ignored.
#[pyclass(frozen, module = "agent_tools._native")]
pub struct Reply {
    sender: Mutex<Option<oneshot::Sender<PyResult<Py<PyAny>>>>>,
}

impl Reply {
    fn settle(&self, value: PyResult<Py<PyAny>>) {
        if let Some(sender) = self.sender.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = sender.send(value);
        }
    }
}

#[pymethods]
impl Reply {
    /// The host's reply, read: `{"outcome": "answered", "labels": [...], "text": str | None}`,
    /// `{"outcome": "skipped"}` or `{"outcome": "timed_out"}`.
    fn answer(&self, reply: Py<PyAny>) {
        self.settle(Ok(reply));
    }

    /// The exception the host's `ask` raised; the call raises it.
    fn fail(&self, error: Bound<'_, PyBaseException>) {
        self.settle(Err(PyErr::from_value(error.into_any())));
    }
}
