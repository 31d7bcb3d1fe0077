//! The crate's error type.

use std::time::Duration;

/// Everything that can go wrong directing workers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No worker has this id.
    #[error("no worker '{id}' (known: {known})")]
    UnknownWorker { id: String, known: String },
    /// A brief or message that is empty or only whitespace.
    #[error("the {what} is empty")]
    Empty { what: &'static str },
    /// A tier name other than `fast` or `good`.
    #[error("unknown tier '{given}': use fast or good")]
    UnknownTier { given: String },
    /// Called outside a tokio runtime.
    #[error("no tokio runtime to run workers on")]
    NoRuntime,
    /// The run did not confirm it stopped within the hard deadline; its process
    /// group was sent SIGKILL and the worker is marked killed.
    #[error("worker '{id}' did not confirm it stopped within {deadline:?}; its process group was sent SIGKILL")]
    StopDeadline { id: String, deadline: Duration },
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
