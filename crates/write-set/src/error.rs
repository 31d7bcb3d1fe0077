//! The crate's error type.

use std::path::PathBuf;

/// Why a set of files was not written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Files differ from what the caller read (changed, created, removed, or
    /// now a symlink); nothing was written.
    #[error(
        "refused: {} changed since {} read ({}); nothing was written",
        if .files.len() == 1 { "1 file" } else { "files" },
        if .files.len() == 1 { "it was" } else { "they were" },
        .files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    Conflict {
        /// The files that differ, as their [`FileWrite::shown`](crate::FileWrite::shown) names them.
        files: Vec<PathBuf>,
    },
    /// A step failed midway; the files already changed were put back, except `unrestored`.
    #[error(
        "write failed on {}: {source}; {}",
        path.display(),
        if .unrestored.is_empty() {
            format!("the {restored} file(s) already written were restored, nothing changed")
        } else {
            format!(
                "{restored} file(s) already written were restored, but these could not be put back: {}",
                .unrestored.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
            )
        }
    )]
    WriteFailed {
        /// The file whose step failed, as its [`FileWrite::shown`](crate::FileWrite::shown) names it.
        path: PathBuf,
        /// How many files already changed were put back (0 when preparing failed,
        /// before any file was changed).
        restored: usize,
        /// Files changed before the failure that could not be put back, as
        /// [`FileWrite::shown`](crate::FileWrite::shown) names them.
        unrestored: Vec<PathBuf>,
        /// The I/O error that stopped the write.
        #[source]
        source: std::io::Error,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
