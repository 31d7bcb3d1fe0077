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

#![warn(missing_docs)]

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

use std::path::{Path, PathBuf};

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

/// The supervisor's face: every query and edit a host makes, each a call into the module
/// that does the work (navigation, diagnostics, the project checkers, rename), as
/// rust-analyzer's `Analysis` is one face over its `ide` crates. Its lifecycle (`new`,
/// `status`, `shutdown`) is in `supervisor.rs`, where the type is.
impl Supervisor {
    /// Where the symbol is declared (`textDocument/definition`).
    pub async fn definition(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        crate::navigation::definition(self, path, line, symbol).await
    }

    /// Where its type is declared (`textDocument/typeDefinition`).
    pub async fn type_definition(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        crate::navigation::type_definition(self, path, line, symbol).await
    }

    /// Concrete implementations (`textDocument/implementation`).
    pub async fn implementation(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        crate::navigation::implementation(self, path, line, symbol).await
    }

    /// Every use, declaration included, capped at `cap` (`textDocument/references`).
    pub async fn references(&self, path: &Path, line: u32, symbol: &str, cap: usize) -> Result<Navigation> {
        crate::navigation::references(self, path, line, symbol, cap).await
    }

    /// The hover text (markdown or plain), `None` when the server has none.
    pub async fn hover(&self, path: &Path, line: u32, symbol: &str) -> Result<(Cursor, Option<String>)> {
        crate::navigation::hover(self, path, line, symbol).await
    }

    /// The file's outline, flattened depth-first, capped at `cap`.
    pub async fn document_symbols(&self, path: &Path, cap: usize) -> Result<(&'static str, Capped<Symbol>)> {
        crate::navigation::document_symbols(self, path, cap).await
    }

    /// Workspace symbols matching `query`, from the server of `context` (a file
    /// of the language to search), capped at `cap`: inside the workspace root,
    /// each containing the query case-insensitively, each place once.
    pub async fn workspace_symbols(
        &self,
        query: &str,
        context: &Path,
        cap: usize,
    ) -> Result<(&'static str, Capped<Symbol>)> {
        crate::navigation::workspace_symbols(self, query, context, cap).await
    }

    /// Workspace symbols matching `query` from the server of `scope.file`, or
    /// else from every (server, root) that serves a language with files under
    /// the workspace root (only `scope.language`'s, when given), asked side by
    /// side. Kept: names that contain the query case-insensitively, inside the
    /// root (outside only with `scope.dependencies`), each place once; exact
    /// matches first, then prefixes. A server that cannot answer is listed in
    /// [`WorkspaceSymbols::failures`]; when none could, its error is the answer.
    pub async fn search_symbols(&self, query: &str, scope: &SymbolScope) -> Result<WorkspaceSymbols> {
        crate::navigation::search_symbols(self, query, scope).await
    }

    /// The code actions offered on the symbol's line (not applied): the
    /// primary server's, then each helper's ([`crate::SupervisorConfig::helpers`]),
    /// each naming its server. The primary's failure is the error; a helper's
    /// is named in [`CodeActions::helpers_failed`], beside the others' actions.
    pub async fn code_actions(&self, path: &Path, line: u32, symbol: &str) -> Result<CodeActions> {
        crate::navigation::code_actions(self, path, line, symbol).await
    }

    /// The file's diagnostics now: its text is synced first; a change waits
    /// for the server's next publication (pull servers are asked). For a
    /// server that checks on save (rust-analyzer), a changed file is also
    /// saved, so the compiler's findings are included.
    pub async fn diagnostics(&self, path: &Path) -> Result<FileDiagnostics> {
        crate::diagnostics::diagnostics(self, path).await
    }

    /// After a write: the file is synced (change, then save) and only what the
    /// server published after that counts; when the wait runs out the result
    /// is marked incomplete, never clean.
    pub async fn diagnostics_after_write(&self, path: &Path) -> Result<FileDiagnostics> {
        crate::diagnostics::diagnostics_after_write(self, path).await
    }

    /// Before a write of `paths`: per server of theirs, what the other files
    /// have (see the module doc for each server's way). Bounded by the
    /// diagnostics timeout; a file whose diagnostics do not come in time has
    /// an unknown baseline. Call [`OtherFilesBefore::mark_write`] right before
    /// writing.
    pub async fn other_files_before_write(&self, paths: &[PathBuf]) -> OtherFilesBefore {
        crate::diagnostics::other_files_before_write(self, paths).await
    }

    /// After a write: per server of the written files, the diagnostics the
    /// other files have now, with what they had before. `pending`: written
    /// files whose own diagnostics were not had in time (their server's other
    /// files are then pending too). `started`: when the write's diagnostics
    /// began to be waited for; the wait ends a diagnostics timeout after it.
    pub async fn other_files_after_write(
        &self,
        before: OtherFilesBefore,
        pending: &[PathBuf],
        started: std::time::Instant,
    ) -> Vec<OtherFilesReport> {
        crate::diagnostics::other_files_after_write(self, before, pending, started).await
    }

    /// Runs the project checker of each language that has a root marker at the
    /// workspace root (or only `language`), and parses what it reports.
    pub async fn project_diagnostics(&self, language: Option<Language>) -> Result<Vec<ProjectDiagnostics>> {
        crate::checker::project_diagnostics(self, language).await
    }

    /// Renames the symbol project-wide (`textDocument/rename`) and applies the
    /// edit all or nothing, once it is checked against the disk and the uses
    /// of the old name it leaves are known (see the module docs); the servers
    /// are told about every changed file.
    pub async fn rename(&self, path: &Path, line: u32, symbol: &str, new_name: &str) -> Result<RenameOutcome> {
        crate::rename::rename(self, path, line, symbol, new_name).await
    }
}
