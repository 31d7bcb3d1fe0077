//! The crate's error type.

use std::time::Duration;

/// Everything that can go wrong directing workers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No worker has this id.
    #[error("no worker '{id}' (known: {known})")]
    UnknownWorker {
        /// The id asked for.
        id: String,
        /// The roster's ids (`w1`, `w2`, …) joined by `, `, or `none`.
        known: String,
    },
    /// A brief or message that is empty or only whitespace.
    #[error("the {what} is empty")]
    Empty {
        /// Which text was empty: `brief` or `message`.
        what: &'static str,
    },
    /// A tier name other than `fast` or `good`.
    #[error("unknown tier '{given}': use fast or good")]
    UnknownTier {
        /// The name as given.
        given: String,
    },
    /// Called outside a tokio runtime.
    #[error("no tokio runtime to run workers on")]
    NoRuntime,
    /// The run did not confirm it stopped within the hard deadline; its process
    /// group was sent SIGKILL and the worker is marked killed.
    #[error("worker '{id}' did not confirm it stopped within {deadline:?}; its process group was sent SIGKILL")]
    StopDeadline {
        /// The worker's id, `w1`, `w2`, …
        id: String,
        /// How long the roster waited: its configured `stop_deadline` plus 1 s.
        deadline: Duration,
    },
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
