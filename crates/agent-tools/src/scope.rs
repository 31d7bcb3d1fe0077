//! A host's per-call state, carried into the calls a tool makes from another task.
//!
//! A host may keep what belongs to the call it is answering in a tokio
//! task-local: `agent-tools serve` keeps there the question channel of an MCP
//! 2026-07-28 request (its questions go back to the client as input-required
//! results), and the Python module the `ask` callable the call was given. The
//! question ports read it, so a question reaches the human of that call.
//!
//! A tool that calls tools from a task of its own would lose it: a cell's
//! `tool()` runs on the kernel's task, so the approval its call needs would
//! find nobody to ask. A [`Surface`](crate::Surface) given a [`TaskScope`]
//! therefore captures the host's scope when a call starts, and enters it
//! again around every call the tool makes through [`crate::ToolCaller`], so a
//! nested call's questions go where the outer call's go.

use std::fmt::Debug;
use std::sync::Arc;

use crate::tool::CallerFuture;

/// What of the running task a host wants carried into nested calls.
pub trait TaskScope: Send + Sync + Debug {
    /// The host's scope on the task running now, or `None` when it has none
    /// (the nested calls then run without it, as the outer call does).
    fn capture(&self) -> Option<Arc<dyn CapturedScope>>;
}

/// A host's scope, captured when a call started.
pub trait CapturedScope: Send + Sync {
    /// `call`, run inside the captured scope.
    fn enter<'a>(&self, call: CallerFuture<'a>) -> CallerFuture<'a>;
}
