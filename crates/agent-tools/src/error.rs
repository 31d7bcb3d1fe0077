//! The facade's error type: host failures only. Anything a model should read
//! (bad arguments, nothing found, a refused call) is a [`crate::ToolResult`]
//! with `is_error` set, never an [`Error`].

use std::path::PathBuf;

/// A host failure: the run cannot go on as wired.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two tools were registered under one name.
    #[error("tool '{name}' is registered twice")]
    DuplicateTool {
        /// The tool's name.
        name: &'static str,
    },
    /// The working directory cannot be used.
    #[error("working directory {}: {source}", path.display())]
    Workspace {
        /// The directory as given.
        path: PathBuf,
        /// Why it cannot be canonicalized: missing, unreadable, a dangling link.
        #[source]
        source: std::io::Error,
    },
    /// The working directory is not a directory.
    #[error("working directory {} is not a directory", path.display())]
    NotADirectory {
        /// The path, canonical.
        path: PathBuf,
    },
    /// A tool's task panicked or was cancelled.
    #[error("tool {tool} failed: {message}")]
    TaskFailed {
        /// The tool's name.
        tool: &'static str,
        /// The join error, as tokio words it.
        message: String,
    },
}

/// The facade's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
