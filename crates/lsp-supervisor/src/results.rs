//! The result types the supervisor's actions return.

use std::path::PathBuf;

use serde::Serialize;

use crate::detect::Binary;
use crate::encoding::PositionEncoding;
use crate::spec::Language;

/// A place in a file, as results give it: 1-indexed line, 1-indexed column in characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file.
    pub path: PathBuf,
    /// The start line (1-based).
    pub line: u32,
    /// The start column (1-based, in characters).
    pub column: u32,
    /// The end line (1-based).
    pub end_line: u32,
    /// The column just past the end (1-based, in characters): the range is half-open, as LSP's.
    pub end_column: u32,
    /// The text of the start line, trimmed.
    pub text: String,
}

/// Where a navigation request was sent from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cursor {
    /// The file, as given.
    pub path: PathBuf,
    /// 1-indexed.
    pub line: u32,
    /// 1-indexed, in characters: the column used for the symbol.
    pub column: u32,
    /// The symbol as given.
    pub symbol: String,
    /// How many times the symbol occurs on the line.
    pub occurrences: usize,
    /// Whether the occurrence used stands as a whole identifier (the first such one is used when there is one).
    pub whole: bool,
}

/// A list with the total before capping.
#[derive(Debug, Clone, Serialize)]
pub struct Capped<T> {
    /// The first items, at most the cap.
    pub items: Vec<T>,
    /// How many there were in all.
    pub total: usize,
}

/// The answer to definition, type_definition, implementation or references.
#[derive(Debug, Clone, Serialize)]
pub struct Navigation {
    /// The id of the server that answered.
    pub server: &'static str,
    /// Where the request was sent from.
    pub cursor: Cursor,
    /// The places found, by path, line and column, each once; none outside this run's worktree.
    pub locations: Capped<Location>,
    /// Why the answer may be partial (a server without a project index), if it may.
    pub warning: Option<String>,
}

/// LSP `DiagnosticSeverity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// LSP `Error` (1); also a diagnostic that gives no severity.
    Error,
    /// LSP `Warning` (2).
    Warning,
    /// LSP `Information` (3).
    Information,
    /// LSP `Hint` (4).
    Hint,
}

impl Severity {
    pub(crate) fn from_lsp(severity: Option<lsp_types::DiagnosticSeverity>) -> Severity {
        use lsp_types::DiagnosticSeverity as S;
        match severity {
            Some(S::WARNING) => Severity::Warning,
            Some(S::INFORMATION) => Severity::Information,
            Some(S::HINT) => Severity::Hint,
            // LSP: absent severity is the client's to interpret; an error is the safe reading.
            _ => Severity::Error,
        }
    }

    /// The lowercase name, as serialized: `error`, `warning`, `information`, `hint`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// A diagnostic with its range converted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The language server that reported it (a primary or a helper); `None`
    /// for a project checker's (`cargo check`, `tsc`, `pyright`, `go vet`).
    pub server: Option<&'static str>,
    /// The range it covers.
    pub location: Location,
    /// How serious it is.
    pub severity: Severity,
    /// The diagnostic's code, such as `E0308` or `reportMissingImports`; a numeric code as its digits.
    pub code: Option<String>,
    /// What produced it, such as `rustc` or `tsc`, when it says.
    pub source: Option<String>,
    /// The message, as written.
    pub message: String,
}

/// Diagnostics of one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileDiagnostics {
    /// The language's primary server.
    pub server: &'static str,
    /// The file, as given.
    pub path: PathBuf,
    /// The primary's and each helper's, by line and column; each names its server.
    pub diagnostics: Vec<Diagnostic>,
    /// False when the wait ran out before a server published after the last change,
    /// or a helper did not answer: the list is what was known then, and more may come.
    pub complete: bool,
    /// The helpers that answered ([`crate::SupervisorConfig::helpers`]).
    pub helpers: Vec<&'static str>,
    /// The helpers that did not answer, and why: their diagnostics are missing.
    pub helpers_failed: Vec<HelperFailure>,
    /// When the server's publication (or pull answer) that this list comes from arrived.
    #[serde(skip)]
    pub published_at: Option<std::time::Instant>,
}

/// A document or workspace symbol.
#[derive(Debug, Clone, Serialize)]
pub struct Symbol {
    /// The symbol's name, as the server gives it.
    pub name: String,
    /// LSP `SymbolKind` name, lowercase (`function`, `struct`, …).
    pub kind: &'static str,
    /// More about it, such as a signature or type (outline symbols only, when the server gives it).
    pub detail: Option<String>,
    /// The symbol it is inside: its parent in an outline, or the server's container name.
    pub container: Option<String>,
    /// Nesting depth in a document outline, from 0.
    pub depth: usize,
    /// Where its name is (an outline symbol's `selectionRange`).
    pub location: Location,
}

/// What a workspace symbol search found, over one server or several
/// ([`crate::Supervisor::search_symbols`]).
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceSymbols {
    /// The matches: each name contains the query (case-insensitively), each
    /// place once, the closest matches first; inside the workspace root unless
    /// dependencies were asked for.
    pub symbols: Capped<Symbol>,
    /// The (server, root) pairs that answered.
    pub servers: Vec<(&'static str, PathBuf)>,
    /// The (server, root) pairs that could not answer, and why (not ready, timed out, crashed, …).
    pub failures: Vec<(&'static str, PathBuf, String)>,
    /// How many matches lay outside the workspace root and were left out (dependencies not asked for).
    pub outside: usize,
    /// Why some answers may be partial (a server still building build scripts and proc macros).
    pub notes: Vec<String>,
}

/// A code action a server offers (not applied).
#[derive(Debug, Clone, Serialize)]
pub struct CodeAction {
    /// The server that offers it (the primary, or a helper).
    pub server: &'static str,
    /// The action's title, as the server words it.
    pub title: String,
    /// The LSP `CodeActionKind`, such as `quickfix` or `refactor.extract`.
    pub kind: Option<String>,
    /// Whether the server marks it preferred (the fix to apply by default).
    pub preferred: bool,
    /// The files its edit would change.
    pub files: Vec<PathBuf>,
    /// Whether it runs a server command instead of (or besides) an edit.
    pub command: bool,
    /// Why it cannot be applied now, when the server offers it disabled.
    pub disabled: Option<String>,
}

/// The code actions offered on a line ([`crate::Supervisor::code_actions`]).
#[derive(Debug, Clone, Serialize)]
pub struct CodeActions {
    /// The line and symbol the actions were asked at.
    pub cursor: Cursor,
    /// The primary server's actions, then each helper's in order.
    pub actions: Vec<CodeAction>,
    /// The helpers that did not answer, and why: their actions are missing.
    pub helpers_failed: Vec<HelperFailure>,
}

/// A helper server that gave no answer to a request ([`crate::SupervisorConfig::helpers`]):
/// not usable, not started, crashed, timed out or not ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HelperFailure {
    /// The helper's id, as configured.
    pub server: String,
    /// Why, as the error says it.
    pub why: String,
}

/// How a server process ended (or failed to start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerExit {
    /// "exited with status 3", "sent a malformed frame: …", "did not answer initialize …".
    pub what: String,
    /// The last lines it wrote to stderr.
    pub stderr_tail: String,
}

impl ServerExit {
    /// `what`, then the stderr tail when there is one.
    pub fn describe(&self) -> String {
        if self.stderr_tail.trim().is_empty() {
            self.what.clone()
        } else {
            format!("{}; its stderr ended with:\n{}", self.what, self.stderr_tail.trim_end())
        }
    }
}

/// The state of one (server, root) slot, for `status`.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    /// The server's id.
    pub server: &'static str,
    /// The root it serves.
    pub root: PathBuf,
    /// Why this root ("Cargo workspace of crates/x", "outermost compile_commands.json that lists it", …).
    pub root_reason: String,
    /// The binary it runs, while it has a process.
    pub binary: Option<PathBuf>,
    /// `running`, `starting`, `crashed (…); restarts on next use`, `gave up after N crashes …`, `stopped`.
    pub state: String,
    /// Its process id, while it runs.
    pub pid: Option<u32>,
    /// The position encoding agreed at initialization, while it has a process.
    pub encoding: Option<PositionEncoding>,
    /// What it is busy with: its oldest progress (title, message, percentage), its check on save included.
    pub busy: Option<String>,
    /// Whether it is still loading what answers need (`loading: …`) or has loaded
    /// all but what build scripts and proc macros generate (`partly loaded, still …`); `None` when ready.
    pub load: Option<String>,
    /// How many files it has open.
    pub open_documents: usize,
    /// Crashes in a row without an answered request between them.
    pub crashes: u32,
    /// Processes started for this root after the first (after crashes).
    pub restarts: u32,
    /// What the last exit was (`last_exit.what`).
    pub last_crash: Option<String>,
    /// How the last process ended: its status and stderr tail.
    pub last_exit: Option<ServerExit>,
    /// After it has given up: why (the last crash, with its stderr tail).
    pub gave_up: Option<String>,
    /// How long the running process has been up.
    pub uptime_ms: Option<u128>,
    /// How long its first request may wait for its first load, when that is
    /// longer than the request timeout (rust-analyzer on a cold project).
    pub first_load_timeout_ms: Option<u128>,
    /// The last errors and warnings the server showed (`window/showMessage`).
    pub messages: Vec<String>,
    /// How many other runs of the host use this process too (0 when it is this run's alone).
    pub shared_with: usize,
}

/// Why a server is or is not usable for a language in the checkout, for `status`.
#[derive(Debug, Clone, Serialize)]
pub struct Availability {
    /// The language.
    pub language: Language,
    /// The server's id.
    pub server: &'static str,
    /// Whether this server is the one used for the language (its primary).
    pub chosen: bool,
    /// Whether it is one of the language's helpers ([`crate::SupervisorConfig::helpers`]):
    /// when usable, its diagnostics and code actions are added to the primary's.
    pub helper: bool,
    /// The directory holding a root marker, or why there is none.
    pub root: std::result::Result<PathBuf, String>,
    /// Why that directory ([`crate::RootChoice::why`]), when there is one.
    pub reason: Option<String>,
    /// When there is no root marker at or above the directory: the project
    /// roots below it (up to 3 levels down), whose files the server serves.
    pub projects: Vec<PathBuf>,
    /// The binary found and probed, or why there is none that runs.
    pub binary: std::result::Result<Binary, String>,
}

impl Availability {
    /// Whether the binary runs and there is a root (here or, for a directory holding projects, below).
    pub fn usable(&self) -> bool {
        (self.root.is_ok() || !self.projects.is_empty()) && self.binary.is_ok()
    }

    /// The project roots the server would serve: the root, or the ones below.
    pub fn roots(&self) -> Vec<PathBuf> {
        match &self.root {
            Ok(root) => vec![root.clone()],
            Err(_) => self.projects.clone(),
        }
    }
}
