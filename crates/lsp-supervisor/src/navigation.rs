//! Navigation: a line and a symbol resolved to a position, the requests whose
//! empty answer may mean "still loading", and the answers converted to locations and symbols.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::request::{self as req, Request};
use lsp_types::{
    CodeActionOrCommand, DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, HoverContents, MarkedString,
    OneOf, Position, Range, SymbolInformation, SymbolKind, TextDocumentIdentifier, TextDocumentPositionParams,
    WorkspaceSymbolResponse,
};

use crate::encoding::{PositionEncoding, char_column, from_lsp_column, lines, to_lsp_column};
use crate::error::{Error, Result};
use crate::protocol::Provided;
use crate::results::{
    Capped, CodeAction, CodeActions, Cursor, HelperFailure, Location, Navigation, Symbol, WorkspaceSymbols,
};
use crate::server::{Load, Server};
use crate::spec::Language;
use crate::supervisor::Supervisor;
use crate::uri::{file_uri, uri_path};

/// How long after a project file changed (`Cargo.lock`, `go.mod`, …) an empty
/// answer may be the server not yet announcing that it reloads.
const PROJECT_RELOAD_GRACE: Duration = Duration::from_secs(2);

/// What a request takes from a partly loaded server ([`Load::Partial`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Partly {
    /// Nothing: it waits for the server's load to end (a rename, which must be complete).
    Wait,
    /// A non-empty answer, with a note; an empty one is asked again until the deadline.
    NonEmpty,
    /// Any answer, with a note (a workspace symbol search, where nothing found is common
    /// and the note says the list may lack what is still being built).
    Any,
}

/// How often a partly loaded server ([`Load::Partial`]) is asked again after an empty answer.
const PARTIAL_RETRY: Duration = Duration::from_secs(1);

/// What resolving `line` + `symbol` gave.
pub(crate) struct Target {
    pub server: Arc<Server>,
    pub cursor: Cursor,
    pub position: Position,
}

impl Target {
    /// The document and position the requests at the target take.
    pub fn at(&self, path: &Path) -> TextDocumentPositionParams {
        TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: file_uri(path) },
            position: self.position,
        }
    }
}

/// An answer that may be empty, which from a server still loading may only mean "not yet".
pub(crate) trait Answer {
    /// The empty answer (what a request the server cancelled counts as).
    fn none() -> Self;
    fn is_empty(&self) -> bool;
}

/// What an answer holds, when it holds something.
pub(crate) trait Contents {
    fn is_empty(&self) -> bool;
}

impl<T: Contents> Answer for Option<T> {
    fn none() -> Self {
        None
    }

    fn is_empty(&self) -> bool {
        self.as_ref().is_none_or(T::is_empty)
    }
}

impl<T> Contents for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

impl Contents for GotoDefinitionResponse {
    fn is_empty(&self) -> bool {
        match self {
            GotoDefinitionResponse::Scalar(_) => false,
            GotoDefinitionResponse::Array(locations) => locations.is_empty(),
            GotoDefinitionResponse::Link(links) => links.is_empty(),
        }
    }
}

impl Contents for lsp_types::Hover {
    fn is_empty(&self) -> bool {
        hover_text(&self.contents).is_none()
    }
}

impl Contents for DocumentSymbolResponse {
    fn is_empty(&self) -> bool {
        match self {
            DocumentSymbolResponse::Flat(symbols) => symbols.is_empty(),
            DocumentSymbolResponse::Nested(symbols) => symbols.is_empty(),
        }
    }
}

impl Contents for WorkspaceSymbolResponse {
    fn is_empty(&self) -> bool {
        match self {
            WorkspaceSymbolResponse::Flat(symbols) => symbols.is_empty(),
            WorkspaceSymbolResponse::Nested(symbols) => symbols.is_empty(),
        }
    }
}

impl Contents for lsp_types::WorkspaceEdit {
    fn is_empty(&self) -> bool {
        self.changes.is_none() && self.document_changes.is_none() && self.change_annotations.is_none()
    }
}

/// The places a navigation answer names: `uri` and the range of the name there.
pub(crate) trait Places {
    fn places(&self) -> Vec<(&lsp_types::Uri, &Range)>;
}

impl Places for Option<GotoDefinitionResponse> {
    fn places(&self) -> Vec<(&lsp_types::Uri, &Range)> {
        match self {
            None => Vec::new(),
            Some(GotoDefinitionResponse::Scalar(l)) => vec![(&l.uri, &l.range)],
            Some(GotoDefinitionResponse::Array(ls)) => ls.iter().map(|l| (&l.uri, &l.range)).collect(),
            // A link's selection range is the name; its target range the whole item.
            Some(GotoDefinitionResponse::Link(links)) => {
                links.iter().map(|l| (&l.target_uri, &l.target_selection_range)).collect()
            }
        }
    }
}

impl Places for Option<Vec<lsp_types::Location>> {
    fn places(&self) -> Vec<(&lsp_types::Uri, &Range)> {
        self.iter().flatten().map(|l| (&l.uri, &l.range)).collect()
    }
}

fn goto(at: TextDocumentPositionParams) -> lsp_types::GotoDefinitionParams {
    lsp_types::GotoDefinitionParams {
        text_document_position_params: at,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

impl Supervisor {
    /// Resolves `line` (1-indexed) and `symbol` in a file to an LSP position, opening the file.
    pub(crate) async fn target(&self, path: &Path, line: u32, symbol: &str) -> Result<Target> {
        if symbol.trim().is_empty() {
            return Err(Error::EmptySymbol);
        }
        let (server, language) = self.server_for(path).await?;
        let (text, _) = server.sync(path, language).await?;
        let all = lines(&text);
        // A final line terminator ends the last line; it does not start another (as `wc -l` counts).
        let count = if all.len() > 1 && all.last() == Some(&"") { all.len() - 1 } else { all.len() };
        let index = (line as usize).checked_sub(1).filter(|&i| i < count).ok_or(Error::LineOutOfRange {
            path: path.to_path_buf(),
            line,
            lines: count,
        })?;
        let line_text = all[index];
        let (byte, occurrences, whole) = find_symbol(line_text, symbol).ok_or_else(|| Error::SymbolNotOnLine {
            path: path.to_path_buf(),
            line,
            symbol: symbol.to_string(),
            text: line_text.to_string(),
        })?;
        let character = to_lsp_column(line_text, byte, server.encoding);
        let cursor = Cursor {
            path: path.to_path_buf(),
            line,
            column: u32::try_from(char_column(line_text, byte)).unwrap_or(u32::MAX),
            symbol: symbol.to_string(),
            occurrences,
            whole,
        };
        let position = Position { line: u32::try_from(index).unwrap_or(u32::MAX), character };
        Ok(Target { server, cursor, position })
    }

    /// A request whose empty answer may only mean "still loading": while the
    /// server is loading, waits for it to finish (within the request timeout) and asks again.
    pub(crate) async fn query<R>(&self, server: &Server, params: R::Params) -> Result<R::Result>
    where
        R: Request,
        R::Params: Clone,
        R::Result: Answer,
    {
        self.query_partial::<R>(server, params, Partly::Wait).await.map(|(answer, _)| answer)
    }

    /// [`Supervisor::query`]; unless `partly` is [`Partly::Wait`], a server
    /// whose only work left is [`crate::ServerSpec::partial_progress`] is asked
    /// at once, and its answer comes with a note of what it may lack.
    pub(crate) async fn query_partial<R>(
        &self,
        server: &Server,
        params: R::Params,
        partly: Partly,
    ) -> Result<(R::Result, Option<String>)>
    where
        R: Request,
        R::Params: Clone,
        R::Result: Answer,
    {
        let method = R::METHOD;
        let partial_ok = partly != Partly::Wait;
        let mut deadline = tokio::time::Instant::now() + server.request_timeout;
        if let Some(first) = server.spec.first_load_timeout.filter(|_| !server.loaded()) {
            deadline = deadline.max(tokio::time::Instant::from_std(server.started) + first);
        }
        // Answers during the first load are partial (an import instead of the
        // declaration, nothing at all): wait for it, within the timeout.
        let partial = server
            .first_load(server.spec.load_grace, deadline, partial_ok)
            .await
            .map_err(|what| Error::NotReady { server: server.spec.id, what })?
            .map(|what| {
                format!(
                    "{} has not finished its first load ({what}), so what build scripts and proc macros generate may be missing",
                    server.spec.id
                )
            });
        tracing::debug!(server = server.spec.id, method, partial = ?partial, "asking");
        let mut asked_after_idle = false;
        loop {
            let remaining =
                deadline.saturating_duration_since(tokio::time::Instant::now()).max(Duration::from_millis(500));
            let mut cancelled = false;
            let answer = match server.request_with::<R>(params.clone(), remaining).await {
                // ContentModified / ServerCancelled: the server changed under the request; ask again.
                Err(Error::Response { code: -32801 | -32802, .. }) => {
                    cancelled = true;
                    R::Result::none()
                }
                other => other?,
            };
            tracing::debug!(server = server.spec.id, method, empty = answer.is_empty(), load = ?server.load(), "answered");
            if !answer.is_empty() {
                return Ok((answer, if asked_after_idle { None } else { partial }));
            }
            if asked_after_idle {
                return Ok((answer, None));
            }
            // Partly loaded (rust-analyzer building build scripts): it answers
            // nothing, or cancels, until it has caught up with its latest crate
            // graph; ask again every second, until the deadline.
            if partial_ok && let Load::Partial(what) = server.load() {
                if partly == Partly::Any && partial.is_some() && !cancelled {
                    return Ok((answer, partial));
                }
                if tokio::time::Instant::now() + PARTIAL_RETRY >= deadline {
                    return Err(Error::NotReady { server: server.spec.id, what });
                }
                tokio::time::sleep(PARTIAL_RETRY).await;
                continue;
            }
            // A server that has just started, or just heard that a project file
            // changed (it reloads), may not have announced its loading yet.
            let grace_end = (tokio::time::Instant::from_std(server.started) + server.spec.load_grace).max(
                server.project_changed().map_or(tokio::time::Instant::now(), |at| {
                    tokio::time::Instant::from_std(at) + PROJECT_RELOAD_GRACE
                }),
            );
            let in_grace = tokio::time::Instant::now() < grace_end;
            while server.loading().is_none() && tokio::time::Instant::now() < grace_end {
                if !server.next_change(grace_end.min(deadline)).await {
                    break;
                }
            }
            match server.loading() {
                Some(what) if !server.wait_ready(deadline).await => {
                    return Err(Error::NotReady { server: server.spec.id, what: server.loading().unwrap_or(what) });
                }
                Some(_) => {}
                // Idle and long started: the empty answer is the answer.
                None if !in_grace => return Ok((answer, None)),
                None => {}
            }
            asked_after_idle = true;
        }
    }

    /// `R` at the symbol, its params made by `params` from the place.
    async fn navigate<R>(
        &self,
        path: &Path,
        line: u32,
        symbol: &str,
        cap: usize,
        params: impl FnOnce(TextDocumentPositionParams) -> R::Params,
    ) -> Result<Navigation>
    where
        R: Provided,
        R::Params: Clone,
        R::Result: Answer + Places,
    {
        let target = self.target(path, line, symbol).await?;
        let server = &target.server;
        if !server.supports::<R>() {
            return Err(Error::Unsupported { server: server.spec.id, what: R::METHOD });
        }
        let (answer, partial) = self.query_partial::<R>(server, params(target.at(path)), Partly::NonEmpty).await?;
        let mut locations = convert_locations(answer.places(), server.encoding).await;
        // Another run's worktree, served by the same process, is not this run's to see.
        locations.retain(|l| !server.foreign(&l.path));
        locations.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        locations.dedup();
        let total = locations.len();
        // A server that failed to load the project answers from no project at all.
        if total == 0
            && let Some(why) = server.load_error()
        {
            return Err(Error::NotLoaded { server: server.spec.id, why });
        }
        locations.truncate(cap);
        // Uses and implementations are searched in the server's index, which may not cover every file.
        let searched = [req::References::METHOD, req::GotoImplementation::METHOD].contains(&R::METHOD);
        let warning = searched
            .then(|| server.spec.missing_index(&server.root).or_else(|| crate::coverage::left_out(server)))
            .flatten();
        // A project loaded in part (without its dependencies) answers from what it loaded.
        let loaded_in_part =
            server.load_warning().map(|why| format!("{} loaded the project only in part ({why})", server.spec.id));
        let warning = [partial, warning, loaded_in_part].into_iter().flatten().reduce(|a, b| format!("{a}; {b}"));
        Ok(Navigation {
            server: server.spec.id,
            cursor: target.cursor,
            locations: Capped { items: locations, total },
            warning,
        })
    }

    /// One server's raw answer to `workspace/symbol`, converted.
    async fn symbols_of(
        &self,
        query: &str,
        context: &Path,
    ) -> Result<((&'static str, PathBuf), Vec<Symbol>, Option<String>)> {
        let (server, language) = self.server_for(context).await?;
        if context.is_file() {
            server.sync(context, language).await?;
        }
        let params = lsp_types::WorkspaceSymbolParams {
            query: query.to_string(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let (answer, partial) = self.query_partial::<req::WorkspaceSymbolRequest>(&server, params, Partly::Any).await?;
        // Name, kind, container, and where: a symbol may give its file without a range.
        let found: Vec<(String, SymbolKind, Option<String>, lsp_types::Uri, Range)> = match answer {
            None => Vec::new(),
            Some(WorkspaceSymbolResponse::Flat(symbols)) => symbols
                .into_iter()
                .map(|s| (s.name, s.kind, s.container_name, s.location.uri, s.location.range))
                .collect(),
            Some(WorkspaceSymbolResponse::Nested(symbols)) => symbols
                .into_iter()
                .map(|s| {
                    let (uri, range) = match s.location {
                        OneOf::Left(location) => (location.uri, location.range),
                        OneOf::Right(file) => (file.uri, Range::default()),
                    };
                    (s.name, s.kind, s.container_name, uri, range)
                })
                .collect(),
        };
        let mut out = Vec::new();
        for (name, kind, container, uri, range) in found {
            let Some(path) = uri_path(&uri) else { continue };
            if server.foreign(&path) {
                continue;
            }
            let Some(location) = convert_range(&path, &range, server.encoding, None).await else { continue };
            out.push(Symbol {
                name,
                kind: symbol_kind(kind),
                detail: None,
                container: container.filter(|s| !s.is_empty()),
                depth: 0,
                location,
            });
        }
        Ok(((server.spec.id, server.root.clone()), out, partial))
    }

    /// A file per (server, root) to ask a workspace query through: for each
    /// language (or only `language`) whose chosen server has a root at or below
    /// the workspace root, the first file of the language under that root; a
    /// root without one is not asked, and a server serving two languages
    /// (C and C++, TypeScript and JavaScript) is asked once per root.
    async fn symbol_contexts(&self, language: Option<Language>) -> Vec<PathBuf> {
        let available = self.availability(&self.config.root).await;
        let mut asked: Vec<(&'static str, PathBuf)> = Vec::new();
        let mut contexts = Vec::new();
        for a in available.iter().filter(|a| a.chosen && language.is_none_or(|l| l == a.language)) {
            for root in a.roots() {
                if asked.contains(&(a.server, root.clone())) {
                    continue;
                }
                if let Some(file) = first_file_of(&root, a.language) {
                    asked.push((a.server, root));
                    contexts.push(file);
                }
            }
        }
        contexts
    }

    /// The root a file's server would run for (for naming a failure).
    fn root_of(&self, file: &Path) -> PathBuf {
        Language::from_path(file)
            .and_then(|l| self.config.servers.iter().find(|s| s.languages.contains(&l)))
            .and_then(|spec| crate::detect::find_root(spec, &self.config.root, file))
            .unwrap_or_else(|| self.config.root.clone())
    }

    fn server_id_for(&self, file: &Path) -> Option<&'static str> {
        let language = Language::from_path(file)?;
        let preferred = self.config.preferred.get(&language);
        self.config
            .servers
            .iter()
            .find(|s| s.languages.contains(&language) && preferred.is_none_or(|p| p == s.id))
            .map(|s| s.id)
    }

    /// One server's code actions on line `index` (0-indexed) of the file, for
    /// the diagnostics it has there.
    async fn actions_of(&self, server: &Server, path: &Path, index: u32) -> Result<Vec<CodeAction>> {
        let file = self.file_diagnostics_raw(server, path, false).await?;
        let on_line: Vec<lsp_types::Diagnostic> =
            file.into_iter().filter(|d| (d.range.start.line..=d.range.end.line).contains(&index)).collect();
        let text = crate::encoding::read_text(path)
            .await
            .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let line_text = lines(&text).get(index as usize).copied().unwrap_or("").to_string();
        let end = to_lsp_column(&line_text, line_text.len(), server.encoding);
        let params = lsp_types::CodeActionParams {
            text_document: TextDocumentIdentifier { uri: file_uri(path) },
            range: Range {
                start: Position { line: index, character: 0 },
                end: Position { line: index, character: end },
            },
            context: lsp_types::CodeActionContext {
                diagnostics: on_line,
                only: None,
                trigger_kind: Some(lsp_types::CodeActionTriggerKind::INVOKED),
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        // Through `query`: an empty list from a server still loading is "not ready", not "none offered".
        let answer = self.query::<req::CodeActionRequest>(server, params).await?;
        let id = server.spec.id;
        let mut out = Vec::new();
        for item in answer.into_iter().flatten() {
            out.push(match item {
                CodeActionOrCommand::Command(command) => CodeAction {
                    server: id,
                    title: command.title,
                    kind: None,
                    preferred: false,
                    files: Vec::new(),
                    command: true,
                    disabled: None,
                },
                CodeActionOrCommand::CodeAction(action) => CodeAction {
                    server: id,
                    title: action.title,
                    kind: action.kind.map(|k| k.as_str().to_string()),
                    preferred: action.is_preferred.unwrap_or(false),
                    files: action.edit.as_ref().map(crate::edit::files_of).unwrap_or_default(),
                    command: action.command.is_some(),
                    disabled: action.disabled.map(|d| d.reason),
                },
            });
        }
        Ok(out)
    }
}

/// Where a workspace symbol search looks ([`Supervisor::search_symbols`]).
#[derive(Debug, Clone)]
pub struct SymbolScope {
    /// Ask only the server of this file.
    pub file: Option<PathBuf>,
    /// Ask only the servers of this language.
    pub language: Option<Language>,
    /// Keep matches outside the workspace root (dependencies, standard libraries).
    pub dependencies: bool,
    /// How many matches are kept.
    pub cap: usize,
}

/// The first file of the language under `root` (gitignore-aware, 6 levels deep).
fn first_file_of(root: &Path, language: Language) -> Option<PathBuf> {
    ignore::WalkBuilder::new(root)
        .max_depth(Some(6))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .find(|p| Language::from_path(p) == Some(language))
}

/// Finds `symbol` on a line: the first occurrence that stands as a whole
/// identifier, else the first occurrence. The cursor goes on the symbol's
/// last identifier (so `self.items` points at `items`). Returns the byte
/// offset, how many occurrences there are, and whether the one used is a whole identifier.
pub(crate) fn find_symbol(line: &str, symbol: &str) -> Option<(usize, usize, bool)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let occurrences: Vec<usize> = line.match_indices(symbol).map(|(i, _)| i).collect();
    let first = *occurrences.first()?;
    let whole = occurrences.iter().copied().find(|&i| {
        let before = line[..i].chars().next_back();
        let after = line[i + symbol.len()..].chars().next();
        before.is_none_or(|c| !is_ident(c)) && after.is_none_or(|c| !is_ident(c))
    });
    let start = whole.unwrap_or(first);
    // The last identifier run inside the symbol.
    let mut offset = 0;
    let mut in_run = false;
    for (i, c) in symbol.char_indices() {
        if is_ident(c) && !in_run {
            offset = i;
        }
        in_run = is_ident(c);
    }
    if !symbol.chars().any(is_ident) {
        offset = 0;
    }
    Some((start + offset, occurrences.len(), whole.is_some()))
}

pub(crate) async fn read_lines(path: &Path) -> Vec<String> {
    crate::encoding::read_text(path)
        .await
        .map(|t| lines(&t).into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Converts an LSP range in `path` to a [`Location`], reading the file's lines (or using `file_lines`).
pub(crate) async fn convert_range(
    path: &Path,
    range: &Range,
    encoding: PositionEncoding,
    file_lines: Option<&[String]>,
) -> Option<Location> {
    let owned;
    let file_lines = match file_lines {
        Some(l) => l,
        None => {
            owned = read_lines(path).await;
            &owned
        }
    };
    Some(range_to_location(path, range, file_lines, encoding))
}

pub(crate) fn range_to_location(
    path: &Path,
    range: &Range,
    file_lines: &[String],
    encoding: PositionEncoding,
) -> Location {
    let point = |position: Position| {
        let line = position.line as usize;
        let text = file_lines.get(line).map(String::as_str).unwrap_or("");
        let byte = from_lsp_column(text, position.character, encoding);
        (u32::try_from(line + 1).unwrap_or(u32::MAX), u32::try_from(char_column(text, byte)).unwrap_or(u32::MAX))
    };
    let (line, column) = point(range.start);
    let (end_line, end_column) = point(range.end);
    let text = file_lines.get(line as usize - 1).map(|l| l.trim().to_string()).unwrap_or_default();
    Location { path: path.to_path_buf(), line, column, end_line, end_column, text }
}

/// The places of an answer ([`Places`]) as locations; a URI that is not a file's is left out.
pub(crate) async fn convert_locations(
    places: Vec<(&lsp_types::Uri, &Range)>,
    encoding: PositionEncoding,
) -> Vec<Location> {
    let mut cache: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut out = Vec::new();
    for (uri, range) in places {
        let Some(path) = uri_path(uri) else { continue };
        if !cache.contains_key(&path) {
            cache.insert(path.clone(), read_lines(&path).await);
        }
        out.push(range_to_location(&path, range, &cache[&path], encoding));
    }
    out
}

/// `MarkupContent | MarkedString | MarkedString[]` as text; `None` when blank.
fn hover_text(contents: &HoverContents) -> Option<String> {
    let marked = |m: &MarkedString| match m {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(code) => format!("```{}\n{}\n```", code.language, code.value),
    };
    let text = match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(items) => {
            let texts = items.iter().map(|m| marked(m).trim().to_string());
            texts.filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
        }
        HoverContents::Markup(markup) => markup.value.clone(),
    };
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// A `SymbolInformation` of a file's outline: where its location says, else in `path`.
fn information_symbol(
    item: &SymbolInformation,
    path: &Path,
    file_lines: &[String],
    encoding: PositionEncoding,
) -> Symbol {
    let symbol_path = uri_path(&item.location.uri).unwrap_or_else(|| path.to_path_buf());
    Symbol {
        name: item.name.clone(),
        kind: symbol_kind(item.kind),
        detail: None,
        container: item.container_name.clone().filter(|s| !s.is_empty()),
        depth: 0,
        location: range_to_location(&symbol_path, &item.location.range, file_lines, encoding),
    }
}

/// A `DocumentSymbol` and its children, depth first, each at its name (`selectionRange`).
fn flatten_symbol(
    item: &DocumentSymbol,
    path: &Path,
    file_lines: &[String],
    encoding: PositionEncoding,
    depth: usize,
    container: Option<&str>,
    out: &mut Vec<Symbol>,
) {
    out.push(Symbol {
        name: item.name.clone(),
        kind: symbol_kind(item.kind),
        detail: item.detail.clone().filter(|s| !s.is_empty()),
        container: container.map(str::to_string),
        depth,
        location: range_to_location(path, &item.selection_range, file_lines, encoding),
    });
    for child in item.children.iter().flatten() {
        flatten_symbol(child, path, file_lines, encoding, depth + 1, Some(&item.name), out);
    }
}

/// LSP `SymbolKind` by name.
fn symbol_kind(kind: SymbolKind) -> &'static str {
    const NAMES: [(SymbolKind, &str); 26] = [
        (SymbolKind::FILE, "file"),
        (SymbolKind::MODULE, "module"),
        (SymbolKind::NAMESPACE, "namespace"),
        (SymbolKind::PACKAGE, "package"),
        (SymbolKind::CLASS, "class"),
        (SymbolKind::METHOD, "method"),
        (SymbolKind::PROPERTY, "property"),
        (SymbolKind::FIELD, "field"),
        (SymbolKind::CONSTRUCTOR, "constructor"),
        (SymbolKind::ENUM, "enum"),
        (SymbolKind::INTERFACE, "interface"),
        (SymbolKind::FUNCTION, "function"),
        (SymbolKind::VARIABLE, "variable"),
        (SymbolKind::CONSTANT, "constant"),
        (SymbolKind::STRING, "string"),
        (SymbolKind::NUMBER, "number"),
        (SymbolKind::BOOLEAN, "boolean"),
        (SymbolKind::ARRAY, "array"),
        (SymbolKind::OBJECT, "object"),
        (SymbolKind::KEY, "key"),
        (SymbolKind::NULL, "null"),
        (SymbolKind::ENUM_MEMBER, "enum member"),
        (SymbolKind::STRUCT, "struct"),
        (SymbolKind::EVENT, "event"),
        (SymbolKind::OPERATOR, "operator"),
        (SymbolKind::TYPE_PARAMETER, "type parameter"),
    ];
    NAMES.iter().find(|(k, _)| *k == kind).map_or("symbol", |(_, name)| name)
}

/// [`Supervisor::definition`].
pub(crate) async fn definition(sup: &Supervisor, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
    sup.navigate::<req::GotoDefinition>(path, line, symbol, usize::MAX, goto).await
}

/// [`Supervisor::type_definition`].
pub(crate) async fn type_definition(sup: &Supervisor, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
    sup.navigate::<req::GotoTypeDefinition>(path, line, symbol, usize::MAX, goto).await
}

/// [`Supervisor::implementation`].
pub(crate) async fn implementation(sup: &Supervisor, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
    sup.navigate::<req::GotoImplementation>(path, line, symbol, usize::MAX, goto).await
}

/// [`Supervisor::references`].
pub(crate) async fn references(
    sup: &Supervisor,
    path: &Path,
    line: u32,
    symbol: &str,
    cap: usize,
) -> Result<Navigation> {
    sup.navigate::<req::References>(path, line, symbol, cap, |at| lsp_types::ReferenceParams {
        text_document_position: at,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: lsp_types::ReferenceContext { include_declaration: true },
    })
    .await
}

/// [`Supervisor::hover`].
pub(crate) async fn hover(sup: &Supervisor, path: &Path, line: u32, symbol: &str) -> Result<(Cursor, Option<String>)> {
    let target = sup.target(path, line, symbol).await?;
    let params = lsp_types::HoverParams {
        text_document_position_params: target.at(path),
        work_done_progress_params: Default::default(),
    };
    let answer = sup.query::<req::HoverRequest>(&target.server, params).await?;
    Ok((target.cursor, answer.and_then(|hover| hover_text(&hover.contents))))
}

/// [`Supervisor::document_symbols`].
pub(crate) async fn document_symbols(
    sup: &Supervisor,
    path: &Path,
    cap: usize,
) -> Result<(&'static str, Capped<Symbol>)> {
    let (server, language) = sup.server_for(path).await?;
    let (text, _) = server.sync(path, language).await?;
    let params = lsp_types::DocumentSymbolParams {
        text_document: TextDocumentIdentifier { uri: file_uri(path) },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let answer = sup.query::<req::DocumentSymbolRequest>(&server, params).await?;
    let mut out = Vec::new();
    let file_lines: Vec<String> = lines(&text).into_iter().map(str::to_string).collect();
    match answer {
        None => {}
        Some(DocumentSymbolResponse::Flat(symbols)) => {
            for symbol in &symbols {
                out.push(information_symbol(symbol, path, &file_lines, server.encoding));
            }
        }
        Some(DocumentSymbolResponse::Nested(symbols)) => {
            for symbol in &symbols {
                flatten_symbol(symbol, path, &file_lines, server.encoding, 0, None, &mut out);
            }
        }
    }
    let total = out.len();
    out.truncate(cap);
    Ok((server.spec.id, Capped { items: out, total }))
}

/// [`Supervisor::workspace_symbols`].
pub(crate) async fn workspace_symbols(
    sup: &Supervisor,
    query: &str,
    context: &Path,
    cap: usize,
) -> Result<(&'static str, Capped<Symbol>)> {
    let scope = SymbolScope { file: Some(context.to_path_buf()), language: None, dependencies: false, cap };
    let found = sup.search_symbols(query, &scope).await?;
    let server = found.servers.first().map(|(id, _)| *id).unwrap_or("");
    Ok((server, found.symbols))
}

/// [`Supervisor::search_symbols`].
pub(crate) async fn search_symbols(sup: &Supervisor, query: &str, scope: &SymbolScope) -> Result<WorkspaceSymbols> {
    let contexts: Vec<PathBuf> = match &scope.file {
        Some(file) => vec![file.clone()],
        None => sup.symbol_contexts(scope.language).await,
    };
    if contexts.is_empty() {
        let why = "none is usable for the files under the root; `status` says why".to_string();
        return Err(match scope.language {
            Some(language) => Error::NoServer { language, why },
            None => Error::NoServers { why },
        });
    }
    let answers = futures_util::future::join_all(contexts.iter().map(|c| sup.symbols_of(query, c))).await;
    let needle = query.to_lowercase();
    let mut out = WorkspaceSymbols {
        symbols: Capped { items: Vec::new(), total: 0 },
        servers: Vec::new(),
        failures: Vec::new(),
        outside: 0,
        notes: Vec::new(),
    };
    let mut first_error = None;
    let mut seen = HashSet::new();
    for (context, answer) in contexts.iter().zip(answers) {
        let (server, symbols, partial) = match answer {
            Ok(found) => found,
            Err(e) => {
                let root = sup.root_of(context);
                let server = sup.server_id_for(context).unwrap_or("");
                out.failures.push((server, root, e.to_string()));
                first_error.get_or_insert(e);
                continue;
            }
        };
        out.servers.push((server.0, server.1));
        out.notes.extend(partial);
        for symbol in symbols {
            if !symbol.name.to_lowercase().contains(&needle) {
                continue;
            }
            if !symbol.location.path.starts_with(&sup.config.root) && !scope.dependencies {
                out.outside += 1;
                continue;
            }
            let l = &symbol.location;
            if seen.insert((symbol.name.clone(), symbol.kind, l.path.clone(), l.line, l.column)) {
                out.symbols.items.push(symbol);
            }
        }
    }
    if out.servers.is_empty()
        && let Some(e) = first_error
    {
        return Err(e);
    }
    let root = &sup.config.root;
    let rank = |s: &Symbol| {
        let name = s.name.to_lowercase();
        let closeness = if name == needle {
            0
        } else if name.starts_with(&needle) {
            1
        } else {
            2
        };
        (!s.location.path.starts_with(root), closeness)
    };
    out.symbols.items.sort_by_key(rank);
    out.symbols.total = out.symbols.items.len();
    out.symbols.items.truncate(scope.cap);
    Ok(out)
}

/// [`Supervisor::code_actions`].
pub(crate) async fn code_actions(sup: &Supervisor, path: &Path, line: u32, symbol: &str) -> Result<CodeActions> {
    let target = sup.target(path, line, symbol).await?;
    let language = Language::from_path(path).ok_or_else(|| Error::UnknownLanguage(path.to_path_buf()))?;
    let index = line - 1;
    let helpers = async {
        let started = sup.helpers_for(path, language, target.server.spec.id).await;
        let asked = started.into_iter().map(|helper| async move {
            let server = helper?;
            sup.actions_of(&server, path, index)
                .await
                .map_err(|e| HelperFailure { server: server.spec.id.to_owned(), why: e.to_string() })
        });
        futures_util::future::join_all(asked).await
    };
    let (primary, helpers) = tokio::join!(sup.actions_of(&target.server, path, index), helpers);
    let mut actions = primary?;
    let mut helpers_failed = Vec::new();
    for answer in helpers {
        match answer {
            Ok(more) => actions.extend(more),
            Err(failure) => helpers_failed.push(failure),
        }
    }
    Ok(CodeActions { cursor: target.cursor, actions, helpers_failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_found_as_whole_identifiers_first() {
        assert_eq!(find_symbol("let total = subtotal + total;", "total"), Some((4, 3, true)));
        assert_eq!(find_symbol("subtotal", "total"), Some((3, 1, false)));
        assert_eq!(find_symbol("use a::{mean_area, area};", "area"), Some((19, 2, true)));
        assert_eq!(find_symbol("use a::{mean_area, x};", "area"), Some((13, 1, false)));
        assert_eq!(find_symbol("    self.items.len()", "self.items"), Some((9, 1, true)));
        assert_eq!(find_symbol("x", "y"), None);
    }

    #[test]
    fn hover_contents_of_every_shape_become_text() -> anyhow::Result<()> {
        use serde_json::json;
        let text = |contents| -> anyhow::Result<Option<String>> { Ok(hover_text(&serde_json::from_value(contents)?)) };
        assert_eq!(text(json!({ "kind": "markdown", "value": "**x**" }))?, Some("**x**".into()));
        assert_eq!(
            text(json!([{ "language": "rust", "value": "fn f()" }, "doc"]))?,
            Some("```rust\nfn f()\n```\n\ndoc".into())
        );
        assert_eq!(text(json!(""))?, None);
        // `null` is no hover; blank contents are none either.
        let none: Option<lsp_types::Hover> = serde_json::from_value(json!(null))?;
        assert!(Answer::is_empty(&none));
        let blank: Option<lsp_types::Hover> = serde_json::from_value(json!({ "contents": [""] }))?;
        assert!(Answer::is_empty(&blank));
        assert_eq!(symbol_kind(SymbolKind::STRUCT), "struct");
        Ok(())
    }
}
