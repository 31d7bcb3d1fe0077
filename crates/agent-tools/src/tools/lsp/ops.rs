//! Each `lsp` action: its arguments checked, the supervisor's call, and the result.

use std::path::PathBuf;

use lsp_supervisor::{Language, SymbolScope};

use crate::workspace::relative_text;

use super::Lsp;
use super::input::*;
use super::output::*;
use super::status::*;
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

    pub(super) async fn run(&self, input: LspInput) -> std::result::Result<LspOutput, String> {
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
                Ok(LspOutput::Navigation(NavigationOutput {
                    server: nav.server,
                    cursor: CursorOutput::new(ws, &nav.cursor),
                    locations: nav.locations.items.iter().map(|l| LocationOutput::new(ws, l)).collect(),
                    total: nav.locations.total,
                    warning: nav.warning.as_deref().map(|w| relative_text(ws, w)),
                    action: action_name(input.action),
                }))
            }
            LspAction::Hover => {
                let (path, line, symbol) = self.place(&input)?;
                let (cursor, text) = sup.hover(&path, line, &symbol).await.map_err(e)?;
                Ok(LspOutput::Hover(HoverOutput {
                    hover: text,
                    line: cursor.line,
                    column: cursor.column,
                    cursor: CursorOutput::new(ws, &cursor),
                }))
            }
            LspAction::CodeActions => {
                let (path, line, symbol) = self.place(&input)?;
                let offered = sup.code_actions(&path, line, &symbol).await.map_err(e)?;
                let actions = offered
                    .actions
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
                Ok(LspOutput::CodeActions(CodeActionsOutput {
                    actions,
                    helpers_failed: helper_failures(&offered.helpers_failed),
                    line: offered.cursor.line,
                    path: ws.relative(&path).to_path_buf(),
                }))
            }
            LspAction::Diagnostics => {
                if input.file.as_deref() == Some("*") {
                    return self.project_diagnostics(input.language.as_deref()).await;
                }
                let path = self.file(&input)?;
                let report = sup.diagnostics(&path).await.map_err(e)?;
                Ok(LspOutput::Diagnostics(FileDiagnosticsOutput {
                    server: report.server,
                    helpers: report.helpers.clone(),
                    helpers_failed: helper_failures(&report.helpers_failed),
                    complete: report.complete,
                    diagnostics: report.diagnostics.iter().map(|d| DiagnosticOutput::new(ws, d)).collect(),
                    path: ws.relative(&path).to_path_buf(),
                }))
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
                    Ok(LspOutput::Symbols(SymbolsOutput {
                        symbols: items,
                        total: symbols.total,
                        servers: None,
                        outside: None,
                        failures: None,
                        notes: None,
                        title: format!("symbols in {} ({server})", ws.relative(&path).display()),
                    }))
                }
                (None, None) => Err("symbols needs `query` (workspace search) or `file` (its outline)".into()),
            },
            LspAction::Status => Ok(LspOutput::Status(self.status().await)),
            LspAction::Reload => {
                let stopped = sup.reload(None).await;
                let names = stopped.iter().map(|(id, root)| format!("{id} ({})", display_root(ws, root))).collect();
                Ok(LspOutput::Reload(ReloadOutput { stopped: names }))
            }
        }
    }

    pub(super) async fn project_diagnostics(&self, language: Option<&str>) -> std::result::Result<LspOutput, String> {
        let ws = &self.0.workspace;
        let language = match language {
            Some(id) => Some(Language::from_id(id).ok_or_else(|| format!("unknown language {id:?}"))?),
            None => None,
        };
        let runs =
            self.0.supervisor.project_diagnostics(language).await.map_err(|e| relative_text(ws, &e.to_string()))?;
        let checkers = runs
            .iter()
            .map(|run| CheckerOutput {
                language: run.language.id().to_owned(),
                command: run.command.clone(),
                success: run.success,
                diagnostics: run.diagnostics.iter().map(|d| DiagnosticOutput::new(ws, d)).collect(),
                failure: run.failure.as_deref().map(|f| relative_text(ws, f)),
                cut: run.cut.as_deref().map(|c| relative_text(ws, c)),
                root: display_root(ws, &run.root),
            })
            .collect();
        Ok(LspOutput::Checkers(CheckersOutput { checkers }))
    }

    pub(super) async fn workspace_symbols(
        &self,
        query: &str,
        file: Option<&str>,
        language: Option<&str>,
        dependencies: bool,
    ) -> std::result::Result<LspOutput, String> {
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
        let items = found
            .symbols
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
        Ok(LspOutput::Symbols(SymbolsOutput {
            symbols: items,
            total: found.symbols.total,
            title: format!("symbols matching {query:?} ({})", servers.join(", ")),
            servers: Some(servers),
            outside: Some(found.outside),
            failures: Some(failures),
            notes: Some(found.notes.clone()),
        }))
    }

    pub(super) async fn status(&self) -> StatusOutput {
        let sup = &self.0.supervisor;
        let ws = &self.0.workspace;
        let running = sup.status().await;
        let available = sup.availability(ws.root()).await;
        let watching = match sup.watching() {
            Some(Ok(dirs)) => format!(
                "watched for changes on disk ({dirs} {}, .gitignore honoured)",
                if dirs == 1 { "directory" } else { "directories" }
            ),
            Some(Err(why)) => why,
            None => "not watched yet (the watch starts with the first server)".to_string(),
        };
        let availability = available
            .iter()
            .map(|a| AvailabilityOutput {
                language: a.language.id().to_owned(),
                server: a.server,
                chosen: a.chosen,
                helper: a.helper,
                usable: a.usable(),
                root: a.root.as_ref().ok().map(|r| ws.relative(r).to_path_buf()),
                root_error: a.root.as_ref().err().cloned(),
                reason: a.reason.clone(),
                projects: a.projects.iter().map(|p| ws.relative(p).to_path_buf()).collect(),
                binary: a.binary.as_ref().ok().map(|b| b.path.clone()),
                binary_error: a.binary.as_ref().err().cloned(),
                version: a.binary.as_ref().ok().map(|b| version_text(&b.path, &b.version)),
            })
            .collect();
        StatusOutput {
            running: running.into_iter().map(Into::into).collect(),
            watching,
            availability,
            root: ws.root().to_path_buf(),
            stopped_over_budget: sup.pool().stopped_over_budget(),
            request_timeout_ms: sup.config().request_timeout.as_millis(),
        }
    }
}
