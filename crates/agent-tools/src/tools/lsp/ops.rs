//! Each `lsp` action: its arguments checked, the supervisor's call, and the result.

use std::fmt::Write as _;
use std::path::PathBuf;

use lsp_supervisor::{Language, SymbolScope};

use crate::result::ToolResult;
use crate::workspace::relative_text;

use super::Lsp;
use super::input::*;
use super::output::*;
use super::words::*;

impl Lsp {
    pub(super) fn file(&self, input: &LspInput) -> std::result::Result<PathBuf, String> {
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

    pub(super) fn place(&self, input: &LspInput) -> std::result::Result<(PathBuf, u32, String), String> {
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

    pub(super) async fn run(&self, input: LspInput) -> std::result::Result<ToolResult, String> {
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

    pub(super) async fn project_diagnostics(&self, language: Option<&str>) -> std::result::Result<ToolResult, String> {
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

    pub(super) async fn workspace_symbols(
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

    pub(super) async fn status(&self) -> ToolResult {
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
