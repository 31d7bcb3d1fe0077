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
    /// The adapter's process could not be started, or its TCP port could not be reached.
    #[error("could not start {adapter}: {detail}")]
    Spawn {
        /// The adapter's name (`debugpy`), or the `HOST:PORT` connected to.
        adapter: String,
        /// What failed: the spawn's error, a refused connection, or why the
        /// enclosure keeps a TCP adapter out.
        detail: String,
    },
    /// The adapter answered a request with `success: false`.
    #[error("{command} failed: {message}")]
    Request {
        /// The DAP command, such as `evaluate`.
        command: String,
        /// The adapter's error text: the body's `error.format` with its variables
        /// filled in, else the response's `message`.
        message: String,
    },
    /// The adapter sent no response in time.
    #[error("{command} got no answer from the adapter within {} ms", .after.as_millis())]
    Timeout {
        /// The DAP command, such as `stackTrace`, or `initialized event`.
        command: String,
        /// How long it waited.
        after: Duration,
    },
    /// A debug server reached over TCP (an attach to a port) did not complete the DAP
    /// handshake (`initialize`, then the `initialized` event after `attach`) within the
    /// request timeout; `heard` says what it sent, if anything.
    #[error("{address} did not answer as a DAP debug server within {}: {heard}", seconds(*.waited))]
    NoHandshake {
        /// The `HOST:PORT` connected to.
        address: String,
        /// How long it waited: the request timeout.
        waited: Duration,
        /// What it sent, in words: nothing, the connection closed, or the first
        /// messages and bytes read.
        heard: String,
    },
    /// The adapter's process or connection is gone.
    #[error("the debug adapter is gone ({status}){stderr_tail}")]
    AdapterGone {
        /// Its exit status (`exit status: 1`, `signal: 9`) once known, else why the
        /// connection ended.
        status: String,
        /// `; its stderr ends with:` and the last 20 lines it wrote on stderr, or
        /// empty when it wrote nothing.
        stderr_tail: String,
    },
    /// A response body did not have the shape the DAP specification gives it.
    #[error("the adapter's {command} response is unreadable: {detail}")]
    Unreadable {
        /// The DAP command whose response it was.
        command: String,
        /// What did not fit, as the decoder says it.
        detail: String,
    },
    /// The conversation has no session, running or ended.
    #[error("no debug session is running; launch or attach first")]
    NoSession,
    /// The session has ended; the text says how.
    #[error("the debug session has ended: {0}")]
    Ended(String),
    /// The conversation's session is still running; the text says what it runs
    /// (`debugpy launched app.py`, `lldb attached to process 42`).
    #[error("a debug session is already running ({0}); terminate it before starting another")]
    AlreadyRunning(String),
    /// The operation needs the program stopped, and it is starting or running.
    #[error("the program is running; pause it or wait for a breakpoint first")]
    NotStopped,
    /// A variables reference or frame id from before the program last resumed.
    #[error(
        "{what} {id} is stale: it came from stop {issued} and the program has resumed since (now at stop {current}); ask for the stack or scopes again"
    )]
    Stale {
        /// `frame id` or `variables reference`.
        what: &'static str,
        /// The id as given.
        id: u64,
        /// The number of the stop it came from (1 for the session's first).
        issued: u64,
        /// The number of the latest stop.
        current: u64,
    },
    /// A variables reference or frame id this session never handed out.
    #[error("unknown {what} {id}: use one from the latest stack, scopes or variables")]
    Unknown {
        /// `frame id` or `variables reference`.
        what: &'static str,
        /// The id as given.
        id: u64,
    },
    /// A request this crate refuses before it reaches the adapter (a line 0, a
    /// directory as a breakpoint's file, a failed build of a Rust test), or a
    /// failure with no variant of its own; the text says what.
    #[error("{0}")]
    Invalid(String),
    /// An I/O failure, worded as the operating system gave it.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `3 s`, `0.5 s`.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
