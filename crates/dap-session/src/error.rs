//! The crate's one error type.

use std::time::Duration;

/// Why a debug operation failed. A program that stops, exits or crashes is
/// not an error: it is a [`crate::RunOutcome`]. Messages are lowercase and
/// meant to be read by a person or a model as they are.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No adapter fits, or the one asked for is not usable here; the text says which half is missing.
    #[error("{0}")]
    NoAdapter(String),
    #[error("could not start {adapter}: {detail}")]
    Spawn { adapter: String, detail: String },
    /// The adapter answered a request with `success: false`.
    #[error("{command} failed: {message}")]
    Request { command: String, message: String },
    /// The adapter sent no response in time.
    #[error("{command} got no answer from the adapter within {} ms", .after.as_millis())]
    Timeout { command: String, after: Duration },
    /// A debug server reached over TCP (an attach to a port) did not complete the DAP
    /// handshake (`initialize`, then the `initialized` event after `attach`) within the
    /// request timeout; `heard` says what it sent, if anything.
    #[error("{address} did not answer as a DAP debug server within {}: {heard}", seconds(*.waited))]
    NoHandshake { address: String, waited: Duration, heard: String },
    /// The adapter's process or connection is gone.
    #[error("the debug adapter is gone ({status}){stderr_tail}")]
    AdapterGone { status: String, stderr_tail: String },
    /// A response body did not have the shape the DAP specification gives it.
    #[error("the adapter's {command} response is unreadable: {detail}")]
    Unreadable { command: String, detail: String },
    #[error("no debug session is running; launch or attach first")]
    NoSession,
    /// The session has ended; the text says how.
    #[error("the debug session has ended: {0}")]
    Ended(String),
    #[error("a debug session is already running ({0}); terminate it before starting another")]
    AlreadyRunning(String),
    #[error("the program is running; pause it or wait for a breakpoint first")]
    NotStopped,
    /// A variables reference or frame id from before the program last resumed.
    #[error(
        "{what} {id} is stale: it came from stop {issued} and the program has resumed since (now at stop {current}); ask for the stack or scopes again"
    )]
    Stale { what: &'static str, id: u64, issued: u64, current: u64 },
    /// A variables reference or frame id this session never handed out.
    #[error("unknown {what} {id}: use one from the latest stack, scopes or variables")]
    Unknown { what: &'static str, id: u64 },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `3 s`, `0.5 s`.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
