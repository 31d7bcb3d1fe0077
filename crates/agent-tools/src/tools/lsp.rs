//! `lsp` and `lsp_rename` over the `lsp-supervisor` crate.
//!
//! Registered when a run wires a supervisor and a working directory
//! ([`LspWiring`]). Whether a server can answer for a file is found at call
//! time; `status` says why not. Paths in results are relative to the working
//! directory; lines and columns are 1-indexed (columns in characters).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_supervisor::{Capped, Cursor, Diagnostic, Language, Location, Supervisor, Symbol, SymbolScope};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::Result;
use crate::registry::RegistryBuilder;
use crate::result::ToolResult;
use crate::schema::output_schema;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::tools::lsp_output::{
    AvailabilityOutput, CheckerOutput, CodeActionOutput, CursorOutput, DiagnosticOutput, FileDiagnosticsOutput,
    HelperFailureOutput, HoverOutput, LeftoverOutput, LocationOutput, LspOutput, NavigationOutput, RenameOutput,
    RenamedFileOutput, StatusOutput, SymbolFailureOutput, SymbolOutput, SymbolsOutput,
};
use crate::workspace::Workspace;
use crate::workspace::relative_text;

/// References shown at most, by default ([`LspCaps`]).
pub const REFERENCES_CAP: usize = 50;
/// Workspace symbols shown at most, by default ([`LspCaps`]).
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;
/// Document symbols shown at most, by default ([`LspCaps`]).
pub const DOCUMENT_SYMBOLS_CAP: usize = 200;

/// How many results `lsp` shows at most; a capped list says how many there were in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LspCaps {
    /// `references`. Default [`REFERENCES_CAP`].
    pub references: usize,
    /// `symbols` with a `query` (a workspace search). Default [`WORKSPACE_SYMBOLS_CAP`].
    pub workspace_symbols: usize,
    /// `symbols` with only a `file` (its outline). Default [`DOCUMENT_SYMBOLS_CAP`].
    pub document_symbols: usize,
}

impl Default for LspCaps {
    fn default() -> LspCaps {
        LspCaps {
            references: REFERENCES_CAP,
            workspace_symbols: WORKSPACE_SYMBOLS_CAP,
            document_symbols: DOCUMENT_SYMBOLS_CAP,
        }
    }
}

/// The resources behind `lsp` and `lsp_rename`.
#[derive(Debug, Clone)]
pub struct LspWiring {
    pub supervisor: Arc<Supervisor>,
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// The result caps.
    pub caps: LspCaps,
}

impl LspWiring {
    /// The wiring with the default caps.
    pub fn new(supervisor: Arc<Supervisor>, workspace: Workspace) -> LspWiring {
        LspWiring { supervisor, workspace, caps: LspCaps::default() }
    }
}

impl RegistryBuilder {
    /// Wires a language-server supervisor and the working directory:
    /// registers `lsp` and `lsp_rename`.
    pub fn with_lsp(self, wiring: LspWiring) -> RegistryBuilder {
        self.register(Lsp(wiring.clone())).register(LspRename(wiring))
    }
}

/// The `lsp` action.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LspAction {
    Diagnostics,
    Definition,
    TypeDefinition,
    Implementation,
    References,
    Hover,
    Symbols,
    CodeActions,
    Status,
    Reload,
}

/// Ask the project's language server. Actions: diagnostics (file, or "*" to run the project checker such as cargo check, tsc, pyright, go vet); definition, type_definition, implementation, references (capped at 50), hover, code_actions (each needs file, line and symbol); symbols (query for a workspace search capped at 100, or file for its outline capped at 200); status (which servers run, for which roots, and why a language has none); reload (restart the servers for the working directory). A place is a 1-indexed line plus a symbol: a substring of that line naming what you mean (the first whole-identifier occurrence is used; the result says which column); never a column. Results give paths relative to the working directory and 1-indexed lines. A server still indexing answers "not ready", a slow one "timed out": neither means "nothing found". A language may have helper servers beside its primary (ruff beside pyright): diagnostics and code_actions then include theirs, each item naming its server, and say which helper did not answer; navigation comes from the primary.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspInput {
    /// What to ask.
    pub action: LspAction,
    /// The file, relative to the working directory; "*" for diagnostics means the whole project.
    pub file: Option<String>,
    /// 1-indexed line of the symbol.
    pub line: Option<u32>,
    /// A substring of that line naming the symbol, e.g. "parse_config" or "self.items".
    pub symbol: Option<String>,
    /// symbols: search the workspace for names containing this.
    pub query: Option<String>,
    /// diagnostics "*" and symbols with a query: limit to this language (rust, python, typescript, javascript, c, cpp, go).
    pub language: Option<String>,
    /// symbols with a query: also list matches outside the working directory (dependencies, standard libraries), marked as such.
    pub dependencies: Option<bool>,
}

struct Lsp(LspWiring);

impl Tool for Lsp {
    type Input = LspInput;
    const NAME: &'static str = "lsp";
    const TIER: Tier = Tier::Read;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<LspOutput>())
    }

    async fn call(&self, input: LspInput, cx: &CallContext) -> Result<ToolResult> {
        Ok(match reporting_servers(&self.0.supervisor, cx, self.run(input)).await {
            Ok(result) => result,
            Err(message) => ToolResult::error(message),
        })
    }
}

/// Rename a symbol across the project with the language server, writing every file it touches (all or nothing; files outside the working directory are refused). The place is a 1-indexed line plus a symbol substring of that line, as for lsp. Lists the files changed; an edit that changes nothing is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspRenameInput {
    /// The file, relative to the working directory.
    pub file: String,
    /// 1-indexed line of the symbol.
    pub line: u32,
    /// A substring of that line naming the symbol.
    pub symbol: String,
    /// The new name.
    pub new_name: String,
}

struct LspRename(LspWiring);

impl Tool for LspRename {
    type Input = LspRenameInput;
    const NAME: &'static str = "lsp_rename";
    const TIER: Tier = Tier::Write;
    const PARALLEL_SAFE: bool = false;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<RenameOutput>())
    }

    fn preview(&self, input: &LspRenameInput) -> CallPreview {
        CallPreview {
            summary: Some(format!(
                "rename `{}` (line {} of {}) to `{}` across the project",
                input.symbol, input.line, input.file, input.new_name
            )),
            // Every file may change: the whole tree is in scope.
            paths: vec![PathBuf::from(".")],
        }
    }

    async fn call(&self, input: LspRenameInput, cx: &CallContext) -> Result<ToolResult> {
        let ws = &self.0.workspace;
        let path = match ws.resolve(&input.file) {
            Ok(path) => path,
            Err(e) => return Ok(ToolResult::error(e.to_string())),
        };
        if input.new_name.trim().is_empty() {
            return Ok(ToolResult::error("new_name must not be empty"));
        }
        let renamed = self.0.supervisor.rename(&path, input.line, &input.symbol, &input.new_name);
        match reporting_servers(&self.0.supervisor, cx, renamed).await {
            Err(e) => Ok(ToolResult::error(relative_text(ws, &e.to_string()))),
            Ok(outcome) => {
                let mut text = format!(
                    "renamed `{}` to `{}` ({}; {} in {}):\n",
                    input.symbol,
                    input.new_name,
                    cursor_note(ws, &outcome.cursor),
                    count(outcome.edits, "edit"),
                    count(outcome.files.len(), "file")
                );
                for file in &outcome.files {
                    let _ = writeln!(text, "{} {}", file.change, ws.relative(&file.path).display());
                }
                if let Some(at) = &outcome.asked_at {
                    let _ = writeln!(
                        text,
                        "asked at the declaration {} ({} renames an imported name only locally when asked at a use)",
                        loc(ws, at),
                        outcome.server
                    );
                }
                for alias in &outcome.kept_aliases {
                    let _ = writeln!(
                        text,
                        "kept `{}` as an alias at {} (`{}`), so code that imports `{}` goes on working; rename it too if that name should go",
                        outcome.old_name,
                        loc(ws, alias),
                        alias.text,
                        outcome.old_name
                    );
                }
                text.push_str(&leftover_text(ws, &outcome));
                let leftover = |l: &lsp_supervisor::Leftover| LeftoverOutput {
                    location: LocationOutput::new(ws, &l.location),
                    excluded: l.excluded.clone(),
                    unasked: l.unasked.clone(),
                };
                Ok(ToolResult::text(text.trim_end()).with_output(&RenameOutput {
                    server: outcome.server,
                    old_name: outcome.old_name.clone(),
                    asked_at: outcome.asked_at.as_ref().map(|l| LocationOutput::new(ws, l)),
                    edits: outcome.edits,
                    files: outcome
                        .files
                        .iter()
                        .map(|f| RenamedFileOutput { path: ws.relative(&f.path).to_path_buf(), change: f.change })
                        .collect(),
                    not_covered: outcome.not_covered.iter().map(leftover).collect(),
                    unresolved: outcome.unresolved.iter().map(leftover).collect(),
                    other_symbols: outcome.other_symbols,
                    unchecked: outcome.unchecked,
                    kept_aliases: outcome.kept_aliases.iter().map(|l| LocationOutput::new(ws, l)).collect(),
                }))
            }
        }
    }
}

/// The uses of the old name a rename left, as lines: the ones in files the
/// server's configuration leaves out (grouped by why), the ones it could not
/// resolve, and counts of other symbols and of uses not asked about.
fn leftover_text(ws: &Workspace, outcome: &lsp_supervisor::RenameOutcome) -> String {
    const SHOWN: usize = 10;
    let mut text = String::new();
    let old = &outcome.old_name;
    let mut reasons: Vec<&str> = outcome.not_covered.iter().filter_map(|l| l.excluded.as_deref()).collect();
    reasons.dedup();
    for why in reasons {
        let uses: Vec<&lsp_supervisor::Leftover> =
            outcome.not_covered.iter().filter(|l| l.excluded.as_deref() == Some(why)).collect();
        let mut files: Vec<String> = uses.iter().map(|l| ws.relative(&l.location.path).display().to_string()).collect();
        files.dedup();
        let _ = writeln!(
            text,
            "{} of `{old}` in {} not renamed, because {why}:",
            count(uses.len(), "more use"),
            files.join(", ")
        );
        for l in uses.iter().take(SHOWN) {
            let _ = writeln!(text, "  {}: {}", loc(ws, &l.location), l.location.text);
        }
    }
    if !outcome.unresolved.is_empty() {
        let _ = writeln!(
            text,
            "{} of `{old}` that {} does not resolve (a comment, a string, or code it does not see) or could not be asked about, not renamed:",
            count(outcome.unresolved.len(), "more occurrence"),
            outcome.server
        );
        for l in outcome.unresolved.iter().take(SHOWN) {
            let unasked = l.unasked.as_ref().map(|e| format!("  (not asked: {e})")).unwrap_or_default();
            let _ = writeln!(text, "  {}: {}{unasked}", loc(ws, &l.location), l.location.text);
        }
        if outcome.unresolved.len() > SHOWN {
            let _ = writeln!(text, "  … {} more", outcome.unresolved.len() - SHOWN);
        }
    }
    if outcome.other_symbols > 0 || outcome.unchecked > 0 {
        let mut parts = Vec::new();
        if outcome.other_symbols > 0 {
            parts.push(format!(
                "{} of other symbols named `{old}` left as they are",
                count(outcome.other_symbols, "use")
            ));
        }
        if outcome.unchecked > 0 {
            parts.push(format!("{} more occurrences of `{old}` not checked", outcome.unchecked));
        }
        let _ = writeln!(text, "{}", parts.join("; "));
    }
    text
}

/// Runs `work` and, while it runs, reports what the language servers are busy
/// with, as their own `$/progress` says it (`rust-analyzer: Indexing: 40/120
/// (33%)`, with `progress`/`total` from the percentage), checked once a
/// second; the surface paces the reports. Nothing is gathered without a listener.
pub(crate) async fn reporting_servers<T>(
    supervisor: &Supervisor,
    cx: &CallContext,
    work: impl std::future::Future<Output = T>,
) -> T {
    if !cx.wants_progress() {
        return work.await;
    }
    tokio::pin!(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            out = &mut work => return out,
            _ = tick.tick() => {
                if let Some(busy) = supervisor.activity().into_iter().next() {
                    cx.progress(crate::progress::Progress {
                        message: format!("{}: {}", busy.server, busy.what),
                        progress: busy.percentage.map(f64::from),
                        total: busy.percentage.map(|_| 100.0),
                    });
                }
            }
        }
    }
}

fn cursor_note(ws: &Workspace, cursor: &Cursor) -> String {
    let mut note =
        format!("{}:{}:{} `{}`", ws.relative(&cursor.path).display(), cursor.line, cursor.column, cursor.symbol);
    match (cursor.occurrences, cursor.whole) {
        (1, true) => {}
        (_, true) => {
            note.push_str(&format!(", the first whole-identifier occurrence of {} on the line", cursor.occurrences))
        }
        (_, false) => note.push_str(", inside a longer identifier (no whole-identifier occurrence on the line)"),
    }
    note
}

fn loc(ws: &Workspace, l: &Location) -> String {
    format!("{}:{}:{}", ws.relative(&l.path).display(), l.line, l.column)
}

/// One diagnostic as a line: `path:line:col severity[code] message (source)`.
pub(crate) fn diagnostic_line(ws: &Workspace, d: &Diagnostic) -> String {
    let code = d.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
    let source = d.source.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
    format!("{} {}{code}: {}{source}", loc(ws, &d.location), d.severity.as_str(), d.message)
}

/// [`diagnostic_line`] in a list that mixes servers (a primary and its helpers): it names its server.
pub(crate) fn diagnostic_line_named(ws: &Workspace, d: &Diagnostic, mixed: bool) -> String {
    if !mixed {
        return diagnostic_line(ws, d);
    }
    let code = d.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
    let source = match (&d.source, d.server) {
        (Some(source), Some(server)) => format!(" ({source}, from {server})"),
        (Some(source), None) => format!(" ({source})"),
        (None, Some(server)) => format!(" (from {server})"),
        (None, None) => String::new(),
    };
    format!("{} {}{code}: {}{source}", loc(ws, &d.location), d.severity.as_str(), d.message)
}

/// The helpers that did not answer, as the results give them.
pub(crate) fn helper_failures(failures: &[lsp_supervisor::HelperFailure]) -> Vec<HelperFailureOutput> {
    failures.iter().map(|f| HelperFailureOutput { server: f.server.clone(), why: f.why.clone() }).collect()
}

fn capped_note<T>(list: &Capped<T>) -> String {
    if list.total > list.items.len() {
        format!(" (showing {} of {})", list.items.len(), list.total)
    } else {
        String::new()
    }
}

impl Lsp {
    fn file(&self, input: &LspInput) -> std::result::Result<PathBuf, String> {
        let file = input.file.as_deref().ok_or_else(|| format!("{} needs `file`", action_name(input.action)))?;
        let path = self.0.workspace.resolve(file).map_err(|e| e.to_string())?;
        if path.is_dir() {
            return Err(format!(
                "{file} is a directory: `file` names one source file (the whole project: diagnostics with \"*\", \
                 symbols with a `query`)"
            ));
        }
        Ok(path)
    }

    fn place(&self, input: &LspInput) -> std::result::Result<(PathBuf, u32, String), String> {
        let path = self.file(input)?;
        let action = action_name(input.action);
        let line = input.line.ok_or_else(|| format!("{action} needs `line` (1-indexed) and `symbol`"))?;
        let symbol = input.symbol.clone().filter(|s| !s.is_empty()).ok_or_else(|| {
            format!(
                "{action} needs `symbol`: a substring of line {line} naming what you mean (a column is never guessed)"
            )
        })?;
        Ok((path, line, symbol))
    }

    async fn run(&self, input: LspInput) -> std::result::Result<ToolResult, String> {
        let sup = &self.0.supervisor;
        let ws = &self.0.workspace;
        let e = |e: lsp_supervisor::Error| relative_text(ws, &e.to_string());
        match input.action {
            LspAction::Definition | LspAction::TypeDefinition | LspAction::Implementation | LspAction::References => {
                let (path, line, symbol) = self.place(&input)?;
                let nav = match input.action {
                    LspAction::Definition => sup.definition(&path, line, &symbol).await,
                    LspAction::TypeDefinition => sup.type_definition(&path, line, &symbol).await,
                    LspAction::Implementation => sup.implementation(&path, line, &symbol).await,
                    _ => sup.references(&path, line, &symbol, self.0.caps.references).await,
                }
                .map_err(e)?;
                let what = action_name(input.action).replace('_', " ");
                let mut text = format!("{what} of {}", cursor_note(ws, &nav.cursor));
                if nav.locations.items.is_empty() {
                    let _ = writeln!(text, ": none ({} has no {what} for it)", nav.server);
                } else {
                    let _ = writeln!(text, ": {}{}", nav.locations.total, capped_note(&nav.locations));
                    for l in &nav.locations.items {
                        let _ = writeln!(text, "{}  {}", loc(ws, l), l.text);
                    }
                }
                if let Some(warning) = &nav.warning {
                    let _ = writeln!(text, "note: {}; the list may be incomplete", relative_text(ws, warning));
                }
                Ok(ToolResult::text(text.trim_end()).with_output(&LspOutput::Navigation(NavigationOutput {
                    server: nav.server,
                    cursor: CursorOutput {
                        line: nav.cursor.line,
                        column: nav.cursor.column,
                        symbol: nav.cursor.symbol.clone(),
                    },
                    locations: nav.locations.items.iter().map(|l| LocationOutput::new(ws, l)).collect(),
                    total: nav.locations.total,
                    warning: nav.warning.clone(),
                })))
            }
            LspAction::Hover => {
                let (path, line, symbol) = self.place(&input)?;
                let (cursor, text) = sup.hover(&path, line, &symbol).await.map_err(e)?;
                let shown = match &text {
                    Some(text) => format!("hover at {}:\n{text}", cursor_note(ws, &cursor)),
                    None => format!("no hover information at {}", cursor_note(ws, &cursor)),
                };
                Ok(ToolResult::text(shown).with_output(&LspOutput::Hover(HoverOutput {
                    hover: text,
                    line: cursor.line,
                    column: cursor.column,
                })))
            }
            LspAction::CodeActions => {
                let (path, line, symbol) = self.place(&input)?;
                let offered = sup.code_actions(&path, line, &symbol).await.map_err(e)?;
                let (cursor, actions) = (&offered.cursor, &offered.actions);
                let mut text = format!(
                    "code actions on line {} of {}: {}\n",
                    cursor.line,
                    ws.relative(&path).display(),
                    actions.len()
                );
                for a in actions {
                    let kind = a.kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default();
                    let preferred = if a.preferred { " (preferred)" } else { "" };
                    let disabled = a.disabled.as_deref().map(|d| format!(" (disabled: {d})")).unwrap_or_default();
                    let _ = writeln!(text, "- {}{kind}{preferred}{disabled} ({})", a.title, a.server);
                }
                for failure in &offered.helpers_failed {
                    let _ = writeln!(
                        text,
                        "{} did not answer, so its actions are missing: {}",
                        failure.server, failure.why
                    );
                }
                let helpers_failed = helper_failures(&offered.helpers_failed);
                let actions = actions
                    .iter()
                    .map(|a| CodeActionOutput {
                        server: a.server,
                        title: a.title.clone(),
                        kind: a.kind.clone(),
                        preferred: a.preferred,
                        files: a.files.iter().map(|f| ws.relative(f).to_path_buf()).collect(),
                        command: a.command,
                        disabled: a.disabled.clone(),
                    })
                    .collect();
                Ok(ToolResult::text(text.trim_end()).with_output(&LspOutput::CodeActions { actions, helpers_failed }))
            }
            LspAction::Diagnostics => {
                if input.file.as_deref() == Some("*") {
                    return self.project_diagnostics(input.language.as_deref()).await;
                }
                let path = self.file(&input)?;
                let report = sup.diagnostics(&path).await.map_err(e)?;
                let servers = std::iter::once(report.server).chain(report.helpers.iter().copied()).collect::<Vec<_>>();
                let mut text = format!(
                    "{}: {} ({})",
                    ws.relative(&path).display(),
                    count(report.diagnostics.len(), "diagnostic"),
                    servers.join(" + ")
                );
                if !report.complete && report.helpers_failed.is_empty() {
                    text.push_str(&format!(", pending: {} had not published for the current text when the wait ran out; this list may be incomplete", servers.join(" or ")));
                }
                text.push('\n');
                for failure in &report.helpers_failed {
                    let _ = writeln!(
                        text,
                        "{} did not answer, so its diagnostics are missing: {}",
                        failure.server, failure.why
                    );
                }
                for d in &report.diagnostics {
                    let _ = writeln!(text, "{}", diagnostic_line_named(ws, d, !report.helpers.is_empty()));
                }
                Ok(ToolResult::text(text.trim_end()).with_output(&LspOutput::Diagnostics(FileDiagnosticsOutput {
                    server: report.server,
                    helpers: report.helpers.clone(),
                    helpers_failed: helper_failures(&report.helpers_failed),
                    complete: report.complete,
                    diagnostics: report.diagnostics.iter().map(|d| DiagnosticOutput::new(ws, d)).collect(),
                })))
            }
            LspAction::Symbols => match (&input.query, &input.file) {
                (Some(query), _) => {
                    let dependencies = input.dependencies.unwrap_or(false);
                    self.workspace_symbols(query, input.file.as_deref(), input.language.as_deref(), dependencies).await
                }
                (None, Some(_)) => {
                    let path = self.file(&input)?;
                    let (server, symbols) =
                        sup.document_symbols(&path, self.0.caps.document_symbols).await.map_err(e)?;
                    Ok(symbols_result(ws, &format!("symbols in {} ({server})", ws.relative(&path).display()), &symbols))
                }
                (None, None) => Err("symbols needs `query` (workspace search) or `file` (its outline)".into()),
            },
            LspAction::Status => Ok(self.status().await),
            LspAction::Reload => {
                let stopped = sup.reload(None).await;
                let names: Vec<String> =
                    stopped.iter().map(|(id, root)| format!("{id} ({})", display_root(ws, root))).collect();
                let text = if names.is_empty() {
                    "no server was running; detection runs again, and servers start on next use".to_string()
                } else {
                    format!("stopped {}; detection runs again, and each starts on next use", names.join(", "))
                };
                Ok(ToolResult::text(text).with_output(&LspOutput::Reload { stopped: names }))
            }
        }
    }

    async fn project_diagnostics(&self, language: Option<&str>) -> std::result::Result<ToolResult, String> {
        let ws = &self.0.workspace;
        let language = match language {
            Some(id) => Some(Language::from_id(id).ok_or_else(|| format!("unknown language {id:?}"))?),
            None => None,
        };
        let runs =
            self.0.supervisor.project_diagnostics(language).await.map_err(|e| relative_text(ws, &e.to_string()))?;
        let mut text = String::new();
        let mut checkers = Vec::new();
        for run in &runs {
            let _ = writeln!(
                text,
                "`{}` in {}: {}",
                run.command,
                display_root(ws, &run.root),
                count(run.diagnostics.len(), "diagnostic")
            );
            for d in &run.diagnostics {
                let _ = writeln!(text, "{}", diagnostic_line(ws, d));
            }
            if let Some(failure) = &run.failure {
                let _ = writeln!(text, "{}", relative_text(ws, failure));
            }
            if let Some(cut) = &run.cut {
                let _ = writeln!(text, "{}", relative_text(ws, cut));
            }
            checkers.push(CheckerOutput {
                language: run.language,
                command: run.command.clone(),
                success: run.success,
                diagnostics: run.diagnostics.iter().map(|d| DiagnosticOutput::new(ws, d)).collect(),
                failure: run.failure.as_deref().map(|f| relative_text(ws, f)),
                cut: run.cut.as_deref().map(|c| relative_text(ws, c)),
            });
        }
        Ok(ToolResult::text(text.trim_end()).with_output(&LspOutput::Checkers { checkers }))
    }

    async fn workspace_symbols(
        &self,
        query: &str,
        file: Option<&str>,
        language: Option<&str>,
        dependencies: bool,
    ) -> std::result::Result<ToolResult, String> {
        let sup = &self.0.supervisor;
        let ws = &self.0.workspace;
        let file = file.map(|f| ws.resolve(f).map_err(|e| e.to_string())).transpose()?;
        let language = match language {
            Some(id) => Some(Language::from_id(id).ok_or_else(|| format!("unknown language {id:?}"))?),
            None => None,
        };
        let scope = SymbolScope { file, language, dependencies, cap: self.0.caps.workspace_symbols };
        let found = sup.search_symbols(query, &scope).await.map_err(|e| relative_text(ws, &e.to_string()))?;
        let servers: Vec<String> =
            found.servers.iter().map(|(id, root)| format!("{id} for {}", display_root(ws, root))).collect();
        let symbols = &found.symbols;
        let mut text =
            format!("symbols matching {query:?} ({}): {}{}\n", servers.join(", "), symbols.total, capped_note(symbols));
        for s in &symbols.items {
            let container = s.container.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
            let outside = if s.location.path.starts_with(ws.root()) { "" } else { " (dependency)" };
            let _ = writeln!(text, "{} {}{container}  {}{outside}", s.kind, s.name, loc(ws, &s.location));
        }
        if found.outside > 0 {
            let _ = writeln!(
                text,
                "{} outside the working directory left out (dependencies: true lists them)",
                count(found.outside, "hit")
            );
        }
        for (id, root, why) in &found.failures {
            let _ = writeln!(text, "{id} for {} could not answer: {}", display_root(ws, root), relative_text(ws, why));
        }
        for note in &found.notes {
            let _ = writeln!(text, "note: {note}");
        }
        let items = symbols
            .items
            .iter()
            .map(|s| SymbolOutput {
                name: s.name.clone(),
                kind: s.kind,
                container: s.container.clone(),
                depth: None,
                location: LocationOutput::new(ws, &s.location),
                dependency: Some(!s.location.path.starts_with(ws.root())),
            })
            .collect();
        let failures = found
            .failures
            .iter()
            .map(|(id, root, why)| SymbolFailureOutput {
                server: id,
                root: display_root(ws, root),
                error: relative_text(ws, why),
            })
            .collect();
        Ok(ToolResult::text(text.trim_end()).with_output(&LspOutput::Symbols(SymbolsOutput {
            symbols: items,
            total: symbols.total,
            servers: Some(servers),
            outside: Some(found.outside),
            failures: Some(failures),
            notes: Some(found.notes.clone()),
        })))
    }

    async fn status(&self) -> ToolResult {
        let sup = &self.0.supervisor;
        let ws = &self.0.workspace;
        let running = sup.status().await;
        let available = sup.availability(ws.root()).await;
        let mut text = String::from("servers:\n");
        if running.is_empty() {
            text.push_str("  none running (a server starts on first use)\n");
        }
        for s in &running {
            let reason = if s.root_reason.is_empty() { String::new() } else { format!(" ({})", s.root_reason) };
            let mut line = format!("  {} for {}{reason}: {}", s.server, display_root(ws, &s.root), s.state);
            if let Some(pid) = s.pid {
                line.push_str(&format!(", pid {pid}"));
            }
            if let Some(up) = s.uptime_ms {
                line.push_str(&format!(", up {}", duration_text(up)));
            }
            line.push_str(&format!(", {}, {} open documents", count(s.restarts as usize, "restart"), s.open_documents));
            if s.shared_with > 0 {
                line.push_str(&format!(", shared with {}", count(s.shared_with, "other run")));
            }
            if let Some(busy) = &s.busy {
                line.push_str(&format!(", busy: {busy}"));
            }
            let _ = writeln!(text, "{line}");
            if let Some(load) = &s.load {
                let _ = writeln!(text, "    {load}");
            }
            if let Some(first) = s.first_load_timeout_ms {
                let _ = writeln!(
                    text,
                    "    its first request may wait up to {} for its first load (a cold project), later ones {}",
                    duration_text(first),
                    duration_text(sup.config().request_timeout.as_millis())
                );
            }
            match (&s.gave_up, &s.last_exit) {
                (Some(why), _) => {
                    let _ = writeln!(text, "    gave up because: {}", indent(&relative_text(ws, why)));
                }
                (None, Some(exit)) => {
                    let _ = writeln!(text, "    last exit: {}", indent(&relative_text(ws, &exit.describe())));
                }
                (None, None) => {}
            }
            for message in &s.messages {
                let _ = writeln!(text, "    it said: {message}");
            }
        }
        let over = sup.pool().stopped_over_budget();
        if over > 0 {
            let _ = writeln!(
                text,
                "  the host has stopped {} no run was using before its idle time, to keep under its memory budget",
                count(usize::try_from(over).unwrap_or(usize::MAX), "language server")
            );
        }
        let watching = match sup.watching() {
            Some(Ok(dirs)) => format!(
                "watched for changes on disk ({dirs} {}, .gitignore honoured)",
                if dirs == 1 { "directory" } else { "directories" }
            ),
            Some(Err(why)) => why,
            None => "not watched yet (the watch starts with the first server)".to_string(),
        };
        let _ = writeln!(text, "the root: {watching}");
        text.push_str("languages at the root:\n");
        for a in available.iter().filter(|a| a.language != Language::Fixture || a.usable()) {
            let projects: Vec<String> = a.projects.iter().map(|p| format!("{}/", display_root(ws, p))).collect();
            let verdict = match (&a.root, &a.binary) {
                (Err(_), Ok(b)) if a.chosen && !projects.is_empty() => {
                    format!("used for the projects in {} ({})", projects.join(", "), version_text(&b.path, &b.version))
                }
                (Ok(root), Ok(b)) if a.chosen => format!(
                    "used for {}{}: {}",
                    display_root(ws, root),
                    a.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default(),
                    version_text(&b.path, &b.version)
                ),
                (Ok(root), Ok(b)) if a.helper => format!(
                    "helps with diagnostics and code actions for {}: {}",
                    display_root(ws, root),
                    version_text(&b.path, &b.version)
                ),
                (Ok(_), Ok(_)) => "usable, not chosen".to_string(),
                (Err(why), Ok(_)) => format!("binary found, but {why}"),
                (Ok(_), Err(why)) => format!("root marker found, but {why}"),
                (Err(_), Err(why)) => format!("no root marker and {why}"),
            };
            let _ = writeln!(text, "  {:<11} {:<27} {verdict}", a.language.id(), a.server);
        }
        let availability = available
            .iter()
            .map(|a| AvailabilityOutput {
                language: a.language,
                server: a.server,
                chosen: a.chosen,
                helper: a.helper,
                usable: a.usable(),
                root: a.root.as_ref().map(|r| ws.relative(r).to_path_buf()).map_err(Clone::clone),
                reason: a.reason.clone(),
                projects: a.projects.iter().map(|p| ws.relative(p).to_path_buf()).collect(),
                binary: a.binary.as_ref().map(|b| b.path.clone()).map_err(Clone::clone),
            })
            .collect();
        ToolResult::text(text.trim_end()).with_output(&LspOutput::Status(StatusOutput {
            running,
            watching,
            availability,
        }))
    }
}

/// A probe's version line, with the program's name when the line lacks it (`typescript-language-server 5.3.0`).
pub(crate) fn version_text(program: &Path, version: &str) -> String {
    let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if version.contains(name) { version.to_string() } else { format!("{name} {version}") }
}

/// `850 ms`, `12 s`, `3 min 5 s`.
fn duration_text(ms: u128) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{} s", ms / 1_000),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
    }
}

/// Continuation lines indented under a status entry.
fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n      ")
}

/// "1 diagnostic", "2 diagnostics".
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

fn display_root(ws: &Workspace, root: &Path) -> String {
    let rel = ws.relative(root);
    if rel.as_os_str().is_empty() { ".".to_string() } else { rel.display().to_string() }
}

fn action_name(action: LspAction) -> &'static str {
    match action {
        LspAction::Diagnostics => "diagnostics",
        LspAction::Definition => "definition",
        LspAction::TypeDefinition => "type_definition",
        LspAction::Implementation => "implementation",
        LspAction::References => "references",
        LspAction::Hover => "hover",
        LspAction::Symbols => "symbols",
        LspAction::CodeActions => "code_actions",
        LspAction::Status => "status",
        LspAction::Reload => "reload",
    }
}

fn symbols_result(ws: &Workspace, title: &str, symbols: &Capped<Symbol>) -> ToolResult {
    let mut text = format!("{title}: {}{}\n", symbols.total, capped_note(symbols));
    for s in &symbols.items {
        let indent = "  ".repeat(s.depth);
        let container = s.container.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
        let _ = writeln!(text, "{indent}{} {}{container}  {}", s.kind, s.name, loc(ws, &s.location));
    }
    let items = symbols
        .items
        .iter()
        .map(|s| SymbolOutput {
            name: s.name.clone(),
            kind: s.kind,
            container: s.container.clone(),
            depth: Some(s.depth),
            location: LocationOutput::new(ws, &s.location),
            dependency: None,
        })
        .collect();
    ToolResult::text(text.trim_end()).with_output(&LspOutput::Symbols(SymbolsOutput {
        symbols: items,
        total: symbols.total,
        servers: None,
        outside: None,
        failures: None,
        notes: None,
    }))
}
