//! Supervises real language servers for one checkout and answers the `lsp`
//! actions on top of them.
//!
//! - **Detection** ([`Supervisor::availability`]): a server serves a file only
//!   when a root marker exists between the file and the workspace root and the
//!   server's binary resolves and runs (a probe, so a toolchain proxy for a
//!   component that is not installed does not count).
//! - **Processes**: one per (server, root), started on first use in its own
//!   process group, stopped with the supervisor, or shared by a host's runs
//!   through a [`ServerPool`] and stopped when no run has used it for the
//!   pool's idle time. A crash fails the pending
//!   requests at once with the exit status and stderr tail; the next call
//!   restarts the server and re-opens its documents; after
//!   [`SupervisorConfig::max_crashes`] crashes in a row it is not restarted
//!   until [`Supervisor::reload`].
//! - **Positions**: callers address a place by a 1-indexed line and a symbol
//!   substring of that line; results give 1-indexed lines and 1-indexed
//!   character columns. The position encoding is negotiated (`utf-8` or
//!   `utf-16` offered) and converted in [`encoding`] only.
//! - **Honest answers**: every request has a timeout ([`Error::Timeout`]); an
//!   empty answer while the server is still loading waits for it and asks
//!   again, then is [`Error::NotReady`], never "no results".
//! - **Edits**: [`Supervisor::rename`] applies the server's workspace edit all
//!   or nothing, inside the root only, and tells the servers what changed.

mod change;
mod checker;
mod coverage;
mod detect;
mod diagnostics;
mod edit;
pub mod encoding;
mod error;
/// The connection's reader over any byte stream, for the fuzz targets (the `fuzzing` feature).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod importers;
mod navigation;
mod pool;
mod protocol;
mod rename;
mod results;
mod server;
mod spec;
mod supervisor;
mod transport;
mod uri;
mod watch;

pub use crate::change::FileChange;
pub use crate::checker::ProjectDiagnostics;
pub use crate::detect::{Binary, RootChoice, choose_root, find_root, index_cache_dir};
pub use crate::diagnostics::{MAX_IMPORTERS, OtherFile, OtherFilesBefore, OtherFilesReport};
pub use crate::edit::{ChangedFile, Leftover, RenameOutcome, edited_files};
pub use crate::encoding::PositionEncoding;
pub use crate::error::{Error, Result};
pub use crate::navigation::SymbolScope;
pub use crate::pool::ServerPool;
pub use crate::results::{
    Availability, Capped, CodeAction, CodeActions, Cursor, Diagnostic, FileDiagnostics, HelperFailure, Location,
    Navigation, ServerExit, ServerStatus, Severity, Symbol, WorkspaceSymbols,
};
pub use crate::spec::{CustomLanguage, Language, OtherFiles, RootRule, ServerSpec};
pub use crate::supervisor::{Activity, Supervisor, SupervisorConfig, project_roots};
pub use crate::uri::{path_to_uri, uri_to_path};

/// For `cargo xtask trials` only (the `fault-injection` feature): a rename's
/// `WorkspaceEdit` planned and written exactly as `Supervisor::rename` does,
/// with no server, and the writer's fault seam.
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
pub mod trials {
    use std::path::{Path, PathBuf};

    pub use write_set::fault;

    use crate::change::FileChange;

    /// A planned edit: read from disk, nothing written.
    pub struct PlannedEdit(crate::edit::Plan);

    /// Plans `edit` (a `WorkspaceEdit`, UTF-16 columns) over `root`, as a rename does.
    pub fn plan(root: &Path, edit: &serde_json::Value) -> crate::Result<PlannedEdit> {
        crate::edit::plan_json(root, edit, crate::PositionEncoding::Utf16).map(PlannedEdit)
    }

    impl PlannedEdit {
        /// Writes it, as a rename does once its checks pass.
        pub fn commit(self) -> crate::Result<Vec<(PathBuf, FileChange)>> {
            self.0.commit()
        }
    }
}
