//! The structured values of `lsp`, `lsp_rename` and diagnostics on write
//! (MCP's `structuredContent`), as types: the output schemas are generated
//! from them. Paths are relative to the working directory; lines and columns
//! are 1-indexed, columns in characters.

use std::path::PathBuf;

use lsp_supervisor::{Diagnostic, Location};
use schemars::JsonSchema;
use serde::Serialize;

use super::status::StatusOutput;
use crate::workspace::Workspace;

/// A range in a file, with the text of its first line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationOutput {
    /// The file, relative to the working directory (absolute when outside it).
    pub path: PathBuf,
    /// The first line (1-based).
    pub line: u32,
    /// The first column (1-based, in characters).
    pub column: u32,
    /// The last line (1-based).
    pub end_line: u32,
    /// The column just past the end (1-based, in characters): exclusive.
    pub end_column: u32,
    /// The source line it starts on.
    pub text: String,
}

impl LocationOutput {
    /// `path:line:column`.
    pub(crate) fn at(&self) -> String {
        format!("{}:{}:{}", self.path.display(), self.line, self.column)
    }

    pub(crate) fn new(ws: &Workspace, l: &Location) -> LocationOutput {
        LocationOutput {
            path: ws.relative(&l.path).to_path_buf(),
            line: l.line,
            column: l.column,
            end_line: l.end_line,
            end_column: l.end_column,
            text: l.text.clone(),
        }
    }
}

/// One diagnostic, as the server published it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticOutput {
    /// The language server that reported it (the primary or a helper); `null` for a project checker's.
    pub server: Option<&'static str>,
    /// The range it covers.
    pub location: LocationOutput,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: &'static str,
    /// Its code, such as `E0308`; a numeric code as its digits.
    pub code: Option<String>,
    /// Who reported it (`rustc`, `Pyright`, `ts`, …).
    pub source: Option<String>,
    /// The message, as the server wrote it.
    pub message: String,
}

impl DiagnosticOutput {
    /// One diagnostic as a line: `path:line:col severity[code]: message (source)`.
    pub(crate) fn line(&self) -> String {
        let code = self.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
        let source = self.source.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
        format!("{} {}{code}: {}{source}", self.location.at(), self.severity, self.message)
    }

    /// [`DiagnosticOutput::line`] in a list that mixes servers (a primary and its helpers): it names its server.
    pub(crate) fn line_named(&self, mixed: bool) -> String {
        if !mixed {
            return self.line();
        }
        let code = self.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
        let source = match (&self.source, self.server) {
            (Some(source), Some(server)) => format!(" ({source}, from {server})"),
            (Some(source), None) => format!(" ({source})"),
            (None, Some(server)) => format!(" (from {server})"),
            (None, None) => String::new(),
        };
        format!("{} {}{code}: {}{source}", self.location.at(), self.severity, self.message)
    }

    pub(crate) fn new(ws: &Workspace, d: &Diagnostic) -> DiagnosticOutput {
        DiagnosticOutput {
            server: d.server,
            location: LocationOutput::new(ws, &d.location),
            severity: d.severity.as_str(),
            code: d.code.clone(),
            source: d.source.clone(),
            message: d.message.clone(),
        }
    }
}

/// `lsp`'s structured value, by action.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LspOutput {
    /// `definition`, `type_definition`, `implementation`, `references`.
    Navigation(NavigationOutput),
    /// `hover`.
    Hover(HoverOutput),
    /// `code_actions`.
    CodeActions(CodeActionsOutput),
    /// `diagnostics` of one file.
    Diagnostics(FileDiagnosticsOutput),
    /// `diagnostics` of `"*"`: one run of each project checker.
    Checkers(CheckersOutput),
    /// `symbols` with a `query` (workspace) or a `file` (its outline).
    Symbols(SymbolsOutput),
    /// `status`.
    Status(StatusOutput),
    /// `reload`: the servers stopped (`id (root)`).
    Reload(ReloadOutput),
}

/// `code_actions`: what the servers offer on a line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CodeActionsOutput {
    /// The primary server's, then each helper's.
    pub actions: Vec<CodeActionOutput>,
    /// The helpers that did not answer: their actions are missing.
    pub helpers_failed: Vec<HelperFailureOutput>,
    /// The line asked about; for the words.
    #[serde(skip)]
    pub line: u32,
    /// The file, relative; for the words.
    #[serde(skip)]
    pub path: PathBuf,
}

/// `diagnostics` of `"*"`: one run of each project checker.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckersOutput {
    /// One run per project found, each with its own diagnostics.
    pub checkers: Vec<CheckerOutput>,
}

/// `reload`: the servers stopped.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReloadOutput {
    /// `id (root)`.
    pub stopped: Vec<String>,
}

/// Where the place the model named was found.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CursorOutput {
    /// The line as given (1-based).
    pub line: u32,
    /// The symbol's column on it (1-based, in characters).
    pub column: u32,
    /// The symbol as given.
    pub symbol: String,
    /// The file, relative; for the words.
    #[serde(skip)]
    pub path: PathBuf,
    /// Whole-identifier occurrences of the symbol on the line; for the words.
    #[serde(skip)]
    pub occurrences: usize,
    /// Whether the place is a whole identifier; for the words.
    #[serde(skip)]
    pub whole: bool,
}

impl CursorOutput {
    pub(crate) fn new(ws: &Workspace, cursor: &lsp_supervisor::Cursor) -> CursorOutput {
        CursorOutput {
            line: cursor.line,
            column: cursor.column,
            symbol: cursor.symbol.clone(),
            path: ws.relative(&cursor.path).to_path_buf(),
            occurrences: cursor.occurrences,
            whole: cursor.whole,
        }
    }
}

/// The answer of a navigation request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigationOutput {
    /// The server that answered.
    pub server: &'static str,
    /// Where it was asked.
    pub cursor: CursorOutput,
    /// The locations shown (capped).
    pub locations: Vec<LocationOutput>,
    /// How many the server gave in all.
    pub total: usize,
    /// Why the list may be incomplete (a server still loading).
    pub warning: Option<String>,
    /// `definition`, `type_definition`, `implementation` or `references`; for the words.
    #[serde(skip)]
    pub action: &'static str,
}

/// The hover text at a place.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoverOutput {
    /// `null` when the server has nothing there.
    pub hover: Option<String>,
    /// The line asked at (1-based).
    pub line: u32,
    /// The symbol's column on it (1-based, in characters).
    pub column: u32,
    /// Where it was asked; for the words.
    #[serde(skip)]
    pub cursor: CursorOutput,
}

/// One code action the server offers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeActionOutput {
    /// The language server that offers it (the primary or a helper).
    pub server: &'static str,
    /// The action's title, as the server words it.
    pub title: String,
    /// LSP `CodeActionKind` (`quickfix`, `refactor.extract`, …).
    pub kind: Option<String>,
    /// Whether the server marks it as the fix to apply by default.
    pub preferred: bool,
    /// The files its edit changes.
    pub files: Vec<PathBuf>,
    /// Whether it runs a server command (besides or instead of an edit).
    pub command: bool,
    /// Why the server says it cannot be applied now.
    pub disabled: Option<String>,
}

/// One file's diagnostics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileDiagnosticsOutput {
    /// The language's primary server.
    pub server: &'static str,
    /// The helper servers that answered too (ruff beside pyright).
    pub helpers: Vec<&'static str>,
    /// The helpers that did not answer: their diagnostics are missing.
    pub helpers_failed: Vec<HelperFailureOutput>,
    /// False when a server had not published for the current text when the wait ran out,
    /// or a helper did not answer.
    pub complete: bool,
    /// The primary's and each helper's, by line and column.
    pub diagnostics: Vec<DiagnosticOutput>,
    /// The file, relative; for the words.
    #[serde(skip)]
    pub path: PathBuf,
}

/// A helper server that did not answer (not usable, crashed, timed out, not ready).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HelperFailureOutput {
    /// The helper's id, as configured.
    pub server: String,
    /// Why it did not answer.
    pub why: String,
}

/// One run of a project checker (`cargo check`, `tsc`, `pyright`, `go vet`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckerOutput {
    /// The language's id: rust, python, typescript, javascript, c, cpp, go, or one the configuration defines.
    pub language: String,
    /// The command line that ran.
    pub command: String,
    /// Whether the checker exited with status 0.
    pub success: bool,
    /// What it reported, each once.
    pub diagnostics: Vec<DiagnosticOutput>,
    /// Why the checker failed to run or its output could not be read.
    pub failure: Option<String>,
    /// That the checker's output was cut at the read limit (`its stdout was cut at N bytes (M written)`).
    /// `diagnostics` then holds what came before the cut.
    pub cut: Option<String>,
    /// Where it ran, relative (`.` for the working directory); for the words.
    #[serde(skip)]
    pub root: String,
}

/// Symbols: a workspace search (`query`) or a file's outline.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsOutput {
    /// The symbols shown (capped).
    pub symbols: Vec<SymbolOutput>,
    /// How many there were in all.
    pub total: usize,
    /// Workspace search: the servers asked (`id for root`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// Workspace search: hits outside the working directory left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside: Option<usize>,
    /// Workspace search: servers that could not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<SymbolFailureOutput>>,
    /// Workspace search: why some answers may be partial (a server still loading).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    /// What was asked (`symbols in src/main.rs (rust-analyzer)`); for the words.
    #[serde(skip)]
    pub title: String,
}

/// One symbol.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolOutput {
    /// The symbol's name, as the server gives it.
    pub name: String,
    /// LSP `SymbolKind`, by name (`function`, `struct`, …).
    pub kind: &'static str,
    /// The symbol it is inside, when there is one.
    pub container: Option<String>,
    /// Outline: nesting depth (0 at the top).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// Where its name is.
    pub location: LocationOutput,
    /// Workspace search: whether it lies outside the working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependency: Option<bool>,
}

/// A server that could not answer a workspace search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolFailureOutput {
    /// The server's id.
    pub server: &'static str,
    /// The root it serves, relative to the working directory (`.` for it).
    pub root: String,
    /// Why it could not answer.
    pub error: String,
}

/// The helpers that did not answer, as the results give them.
pub(crate) fn helper_failures(failures: &[lsp_supervisor::HelperFailure]) -> Vec<HelperFailureOutput> {
    failures.iter().map(|f| HelperFailureOutput { server: f.server.clone(), why: f.why.clone() }).collect()
}
