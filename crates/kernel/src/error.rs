//! The crate's one error type.

use std::path::PathBuf;

use crate::Language;

/// Why a kernel could not be started or driven. A cell that fails, times out
/// or crashes its kernel is not an error: it is a [`crate::CellResult`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no {language} interpreter found (tried {tried})")]
    InterpreterNotFound { language: Language, tried: String },
    #[error("could not start the {language} kernel with {program}: {source}")]
    Spawn {
        language: Language,
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the {language} kernel exited while starting ({status}){stderr_tail}")]
    StartFailed { language: Language, status: String, stderr_tail: String },
    #[error("the {language} kernel did not start within {seconds} s")]
    StartTimeout { language: Language, seconds: u64 },
    #[error("the spawner could not run the kernel: {0}")]
    Spawner(String),
    /// The enclosure cannot run the kernel (bwrap missing or broken): nothing ran.
    #[error(transparent)]
    Enclosure(#[from] enclosure::Error),
    #[error("unknown language {0:?} (expected python or javascript)")]
    UnknownLanguage(String),
    #[error("kernel pipe failed: {0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
