//! The crate's one error type.

use std::path::PathBuf;

use crate::Language;

/// Why a kernel could not be started or driven. A cell that fails, times out
/// or crashes its kernel is not an error: it is a [`crate::CellResult`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No interpreter for the language was found where discovery looks.
    #[error("no {language} interpreter found (tried {tried})")]
    InterpreterNotFound {
        /// The kernel's language.
        language: Language,
        /// Every place tried, joined by `, ` (`.venv/bin/python, venv/bin/python,
        /// python3 on PATH`), ending in `, inside …` when looked for through a prefix.
        tried: String,
    },
    /// The kernel's process could not be started.
    #[error("could not start the {language} kernel with {program}: {source}")]
    Spawn {
        /// The kernel's language.
        language: Language,
        /// The interpreter it was to run.
        program: PathBuf,
        /// Why the spawn failed.
        #[source]
        source: std::io::Error,
    },
    /// The kernel's process ended before it reported ready.
    #[error("the {language} kernel exited while starting ({status}){stderr_tail}")]
    StartFailed {
        /// The kernel's language.
        language: Language,
        /// How it ended, such as `exit status 1`, `killed by SIGSEGV` or
        /// `did not exit; killed`.
        status: String,
        /// `: ` and the end of what it wrote on stderr (a few thousand bytes at
        /// most), or empty when it wrote nothing.
        stderr_tail: String,
    },
    /// The kernel did not report ready within [`KernelConfig::start_timeout`](crate::KernelConfig::start_timeout);
    /// it was killed.
    #[error("the {language} kernel did not start within {seconds} s")]
    StartTimeout {
        /// The kernel's language.
        language: Language,
        /// The start timeout, in whole seconds.
        seconds: u64,
    },
    /// The spawner, or the plumbing around it, failed to set the kernel up
    /// (the frame pipes, the interpreter's lookup, a task that failed); the
    /// string says what.
    #[error("the spawner could not run the kernel: {0}")]
    Spawner(String),
    /// The enclosure cannot run the kernel (bwrap missing or broken): nothing ran.
    #[error(transparent)]
    Enclosure(#[from] enclosure::Error),
    /// A language name other than `python` or `javascript`, as given.
    #[error("unknown language {0:?} (expected python or javascript)")]
    UnknownLanguage(String),
    /// Reading or writing the kernel's pipes failed.
    #[error("kernel pipe failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
