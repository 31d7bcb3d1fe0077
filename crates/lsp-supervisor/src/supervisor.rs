//! The supervisor: one server process per (server, root), started on first
//! use, restarted after a crash (re-opening its documents) until it crashes
//! too often, and every `lsp` action on top.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::detect::{Binary, find_root, resolve_binary, search_path};
use crate::encoding::{PositionEncoding, char_column, from_lsp_column, lines, to_lsp_column};
use crate::error::{Error, Result};
use crate::server::Server;
use crate::spec::{Language, ServerSpec};
use crate::uri::{path_to_uri, uri_to_path};

/// How long the check a save starts (rust-analyzer's `cargo check`) may take to begin.
const CHECK_START: Duration = Duration::from_secs(1);
/// How long files opened after an edit of ours are waited for to be indexed
/// ([`ServerSpec::opens_changed_files`]).
const OPENED_INDEXED: Duration = Duration::from_secs(10);

/// How a supervisor finds and drives its servers.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// The run's working directory; servers start for roots inside it.
    pub root: PathBuf,
    /// The servers known, in order of preference per language ([`ServerSpec::builtin`]).
    pub servers: Vec<ServerSpec>,
    /// The server chosen for a language (by id); otherwise the first usable in `servers` order.
    pub preferred: HashMap<Language, String>,
    /// Directories searched for server binaries after the project's own and before `PATH`.
    pub extra_path: Vec<PathBuf>,
    /// Timeout of each request.
    pub request_timeout: Duration,
    /// Timeout of `initialize`.
    pub init_timeout: Duration,
    /// How long diagnostics are waited for after a write before they are reported as pending.
    pub diagnostics_timeout: Duration,
    /// Quiet time after a non-empty publication before it is taken as final.
    pub settle: Duration,
    /// Quiet time after an empty publication from a server that publishes in rounds
    /// ([`ServerSpec::publishes_in_rounds`]), which may be an empty first round.
    pub settle_empty: Duration,
    /// Crashes in a row (without an answered request between them) after which a server is not restarted.
    pub max_crashes: u32,
    /// Timeout of a project checker run (`diagnostics` with `"*"`).
    pub checker_timeout: Duration,
}

impl SupervisorConfig {
    pub fn new(root: impl Into<PathBuf>) -> SupervisorConfig {
        SupervisorConfig {
            root: root.into(),
            servers: ServerSpec::builtin(),
            preferred: HashMap::new(),
            extra_path: Vec::new(),
            request_timeout: Duration::from_secs(30),
            init_timeout: Duration::from_secs(60),
            diagnostics_timeout: Duration::from_secs(20),
            settle: Duration::from_millis(30),
            settle_empty: Duration::from_millis(250),
            max_crashes: 3,
            checker_timeout: Duration::from_secs(300),
        }
    }
}

#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    crashes: u32,
    last_death: Option<String>,
    docs: Vec<(PathBuf, Language)>,
}

/// Supervises the language servers of one checkout.
pub struct Supervisor {
    config: SupervisorConfig,
    path: OsString,
    slots: tokio::sync::Mutex<HashMap<(&'static str, PathBuf), Slot>>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor").field("root", &self.config.root).finish()
    }
}

/// A place in a file, as results give it: 1-indexed line, 1-indexed column in characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    pub path: PathBuf,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    /// The text of the start line, trimmed.
    pub text: String,
}

/// Where a navigation request was sent from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cursor {
    pub path: PathBuf,
    /// 1-indexed.
    pub line: u32,
    /// 1-indexed, in characters: the column used for the symbol.
    pub column: u32,
    pub symbol: String,
    /// How many times the symbol occurs on the line.
    pub occurrences: usize,
    /// Whether the occurrence used stands as a whole identifier (the first such one is used when there is one).
    pub whole: bool,
}

/// A list with the total before capping.
#[derive(Debug, Clone, Serialize)]
pub struct Capped<T> {
    pub items: Vec<T>,
    /// How many there were in all.
    pub total: usize,
}

/// The answer to definition, type_definition, implementation or references.
#[derive(Debug, Clone, Serialize)]
pub struct Navigation {
    pub server: &'static str,
    pub cursor: Cursor,
    pub locations: Capped<Location>,
    /// Why the answer may be partial (a server without a project index), if it may.
    pub warning: Option<String>,
}

/// LSP `DiagnosticSeverity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    fn from_lsp(n: Option<i64>) -> Severity {
        match n {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            // LSP: absent severity is the client's to interpret; an error is the safe reading.
            _ => Severity::Error,
        }
    }

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
    pub location: Location,
    pub severity: Severity,
    pub code: Option<String>,
    pub source: Option<String>,
    pub message: String,
}

/// Diagnostics of one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileDiagnostics {
    pub server: &'static str,
    pub path: PathBuf,
    pub diagnostics: Vec<Diagnostic>,
    /// False when the wait ran out before the server published after the last change:
    /// the list is what was known then, and more may come.
    pub complete: bool,
    /// When the server's publication (or pull answer) that this list comes from arrived.
    #[serde(skip)]
    pub published_at: Option<std::time::Instant>,
}

/// A document or workspace symbol.
#[derive(Debug, Clone, Serialize)]
pub struct Symbol {
    pub name: String,
    /// LSP `SymbolKind` name, lowercase (`function`, `struct`, …).
    pub kind: &'static str,
    pub detail: Option<String>,
    pub container: Option<String>,
    /// Nesting depth in a document outline, from 0.
    pub depth: usize,
    pub location: Location,
}

/// A code action a server offers (not applied).
#[derive(Debug, Clone, Serialize)]
pub struct CodeAction {
    pub title: String,
    pub kind: Option<String>,
    pub preferred: bool,
    /// The files its edit would change.
    pub files: Vec<PathBuf>,
    /// Whether it runs a server command instead of (or besides) an edit.
    pub command: bool,
    pub disabled: Option<String>,
}

/// The state of one (server, root) slot, for `status`.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    pub server: &'static str,
    pub root: PathBuf,
    pub binary: Option<PathBuf>,
    /// `running`, `crashed` (restarts on next use), `gave up`, `stopped`.
    pub state: String,
    pub pid: Option<u32>,
    pub encoding: Option<PositionEncoding>,
    pub busy: Option<String>,
    pub open_documents: usize,
    pub crashes: u32,
    pub last_crash: Option<String>,
    pub uptime_ms: Option<u128>,
    /// The last errors and warnings the server showed (`window/showMessage`).
    pub messages: Vec<String>,
}

/// Why a server is or is not usable for a language in the checkout, for `status`.
#[derive(Debug, Clone, Serialize)]
pub struct Availability {
    pub language: Language,
    pub server: &'static str,
    /// Whether this server is the one used for the language.
    pub chosen: bool,
    /// The directory holding a root marker, or why there is none.
    pub root: std::result::Result<PathBuf, String>,
    /// When there is no root marker at or above the directory: the project
    /// roots below it (up to 3 levels down), whose files the server serves.
    pub projects: Vec<PathBuf>,
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

/// Directories from `dir` down (3 levels, `.gitignore` honoured, hidden ones
/// skipped) holding one of `spec`'s root markers, nearest first.
pub fn project_roots(spec: &ServerSpec, dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .max_depth(Some(3))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(ignore::DirEntry::into_path)
        .filter(|d| spec.root_markers.iter().any(|m| d.join(m).exists()))
        .collect();
    out.sort_by_key(|d| (d.components().count(), d.clone()));
    // A project inside another project is the outer one's.
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in out {
        if !kept.iter().any(|k| d.starts_with(k)) {
            kept.push(d);
        }
    }
    kept
}

/// What resolving `line` + `symbol` gave.
pub(crate) struct Target {
    pub server: Arc<Server>,
    pub cursor: Cursor,
    pub position: Value,
}

impl Supervisor {
    pub fn new(config: SupervisorConfig) -> Supervisor {
        let path = search_path(&config.root, &config.extra_path);
        Supervisor { config, path, slots: tokio::sync::Mutex::default() }
    }

    pub fn config(&self) -> &SupervisorConfig {
        &self.config
    }

    fn candidates(&self, language: Language) -> Vec<&ServerSpec> {
        let serving = self.config.servers.iter().filter(|s| s.languages.contains(&language));
        match self.config.preferred.get(&language) {
            Some(id) => serving.filter(|s| s.id == id).collect(),
            None => serving.collect(),
        }
    }

    /// Which server would serve files of each language under `dir`, and why others would not.
    pub async fn availability(&self, dir: &Path) -> Vec<Availability> {
        let mut out = Vec::new();
        for language in Language::ALL {
            let mut chosen_seen = false;
            for spec in self.config.servers.iter().filter(|s| s.languages.contains(&language)) {
                let preferred_ok = self.config.preferred.get(&language).is_none_or(|id| id == spec.id);
                let root = find_root(spec, &self.config.root, dir).ok_or_else(|| {
                    let place = if dir == self.config.root {
                        format!("in {}", dir.display())
                    } else {
                        format!("from {} up to the workspace root", dir.display())
                    };
                    format!("no root marker ({}) {place}", spec.root_markers.join(", "))
                });
                let projects = if root.is_err() { project_roots(spec, dir) } else { Vec::new() };
                let binary = resolve_binary(spec, &self.config.root, &self.path).await;
                let mut entry = Availability { language, server: spec.id, chosen: false, root, projects, binary };
                entry.chosen = entry.usable() && preferred_ok && !chosen_seen;
                chosen_seen |= entry.chosen;
                out.push(entry);
            }
        }
        out
    }

    /// The server for a file, started (or restarted) if need be.
    pub(crate) async fn server_for(&self, path: &Path) -> Result<(Arc<Server>, Language)> {
        let language = Language::from_path(path).ok_or_else(|| Error::UnknownLanguage(path.to_path_buf()))?;
        let mut why = Vec::new();
        for spec in self.candidates(language) {
            let Some(root) = find_root(spec, &self.config.root, path) else {
                why.push(format!(
                    "{}: no root marker ({}) between the file and the workspace root",
                    spec.id,
                    spec.root_markers.join(", ")
                ));
                continue;
            };
            match resolve_binary(spec, &self.config.root, &self.path).await {
                Ok(binary) => return Ok((self.ensure(spec, root, binary.path).await?, language)),
                Err(e) => why.push(format!("{}: {e}", spec.id)),
            }
        }
        if why.is_empty() {
            why.push(format!("no server configured for {language}"));
        }
        Err(Error::NoServer { language, why: why.join("; ") })
    }

    async fn ensure(&self, spec: &ServerSpec, root: PathBuf, binary: PathBuf) -> Result<Arc<Server>> {
        let mut slots = self.slots.lock().await;
        let slot = slots.entry((spec.id, root.clone())).or_default();
        if let Some(server) = &slot.server {
            match server.death() {
                None => return Ok(Arc::clone(server)),
                Some(death) => {
                    slot.crashes = if server.answered.load(Ordering::Relaxed) { 1 } else { slot.crashes + 1 };
                    slot.last_death = Some(death.what.clone());
                    slot.docs = server.open_docs();
                    slot.server = None;
                    tracing::warn!(server = spec.id, what = %death.what, crashes = slot.crashes, "language server crashed");
                }
            }
        }
        if slot.crashes >= self.config.max_crashes {
            return Err(Error::GaveUp {
                server: spec.id,
                crashes: slot.crashes,
                last: slot.last_death.clone().unwrap_or_default(),
            });
        }
        let started = Server::start(
            spec.clone(),
            root,
            binary,
            &self.path,
            self.config.request_timeout,
            self.config.init_timeout,
        )
        .await;
        let server = match started {
            Ok(server) => Arc::new(server),
            Err(e) => {
                if matches!(e, Error::Crashed { .. } | Error::Timeout { .. }) {
                    slot.crashes += 1;
                    slot.last_death = Some(e.to_string());
                }
                return Err(e);
            }
        };
        for (path, language) in std::mem::take(&mut slot.docs) {
            if path.exists() {
                server.sync(&path, language).await?;
            }
        }
        slot.server = Some(Arc::clone(&server));
        Ok(server)
    }

    /// Every slot's state.
    pub async fn status(&self) -> Vec<ServerStatus> {
        let slots = self.slots.lock().await;
        let mut out: Vec<ServerStatus> = slots
            .iter()
            .map(|((id, root), slot)| {
                let server = slot.server.as_ref();
                let dead = server.and_then(|s| s.death());
                let state = match (server, &dead) {
                    (Some(_), None) => "running".to_string(),
                    (Some(_), Some(d)) => format!("crashed ({}); restarts on next use", d.what),
                    (None, _) if slot.crashes >= self.config.max_crashes => {
                        format!("gave up after {} crashes in a row; `reload` tries again", slot.crashes)
                    }
                    (None, _) => "stopped".to_string(),
                };
                ServerStatus {
                    server: id,
                    root: root.clone(),
                    binary: server.map(|s| s.binary.clone()),
                    state,
                    pid: server.and_then(|s| s.pid).filter(|_| dead.is_none()),
                    encoding: server.map(|s| s.encoding),
                    busy: server.and_then(|s| s.busy()),
                    open_documents: server.map(|s| s.open_docs().len()).unwrap_or(0),
                    crashes: slot.crashes,
                    last_crash: slot.last_death.clone().or(dead.map(|d| d.what)),
                    uptime_ms: server.map(|s| s.started.elapsed().as_millis()),
                    messages: server.map(|s| s.messages()).unwrap_or_default(),
                }
            })
            .collect();
        out.sort_by(|a, b| (a.server, &a.root).cmp(&(b.server, &b.root)));
        out
    }

    /// Stops the servers whose root contains `dir` (all when `None`) and forgets their crashes;
    /// they start again on next use. Returns the (server, root) pairs stopped.
    pub async fn reload(&self, dir: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
        let mut slots = self.slots.lock().await;
        let keys: Vec<_> = slots
            .keys()
            .filter(|(_, root)| dir.is_none_or(|d| d.starts_with(root) || root.starts_with(d)))
            .cloned()
            .collect();
        let mut stopped = Vec::new();
        for key in keys {
            if let Some(slot) = slots.remove(&key) {
                if let Some(server) = slot.server {
                    server.stop().await;
                }
                stopped.push(key);
            }
        }
        stopped
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        self.reload(None).await;
    }

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
        let position = json!({ "line": index, "character": character });
        Ok(Target { server, cursor, position })
    }

    /// A request whose empty answer may only mean "still loading": while the
    /// server is busy, waits for it to finish (within the request timeout) and asks again.
    pub(crate) async fn query(&self, server: &Server, method: &'static str, params: Value) -> Result<Value> {
        let deadline = tokio::time::Instant::now() + server.request_timeout;
        // Answers during the first load are partial (an import instead of the
        // declaration, nothing at all): wait for it, within the timeout.
        if let Some(what) = server.initial_load(server.spec.load_grace, deadline).await {
            return Err(Error::NotReady { server: server.spec.id, what });
        }
        let mut asked_after_idle = false;
        loop {
            let remaining =
                deadline.saturating_duration_since(tokio::time::Instant::now()).max(Duration::from_millis(500));
            let answer = match server.request_with(method, params.clone(), remaining).await {
                // ContentModified / ServerCancelled: the server changed under the request; ask again.
                Err(Error::Response { code: -32801 | -32802, .. }) => Value::Null,
                other => other?,
            };
            if !is_empty(&answer) || asked_after_idle {
                return Ok(answer);
            }
            // A server that has just started may not have announced its loading yet.
            let grace_end = tokio::time::Instant::from_std(server.started) + server.spec.load_grace;
            let in_grace = tokio::time::Instant::now() < grace_end;
            while server.busy().is_none() && tokio::time::Instant::now() < grace_end {
                if !server.next_change(grace_end.min(deadline)).await {
                    break;
                }
            }
            match server.busy() {
                Some(what) => {
                    if !server.wait_idle(deadline).await {
                        return Err(Error::NotReady { server: server.spec.id, what });
                    }
                }
                // Idle and long started: the empty answer is the answer.
                None if !in_grace => return Ok(answer),
                None => {}
            }
            asked_after_idle = true;
        }
    }

    async fn navigate(
        &self,
        method: &'static str,
        capability: &str,
        path: &Path,
        line: u32,
        symbol: &str,
        cap: usize,
    ) -> Result<Navigation> {
        let target = self.target(path, line, symbol).await?;
        let server = &target.server;
        if !server.supports(capability, method) {
            return Err(Error::Unsupported { server: server.spec.id, what: method });
        }
        let mut params = json!({ "textDocument": { "uri": path_to_uri(path) }, "position": target.position });
        if method == "textDocument/references" {
            params["context"] = json!({ "includeDeclaration": true });
        }
        let answer = self.query(server, method, params).await?;
        let mut locations = convert_locations(&answer, server.encoding).await;
        locations.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        locations.dedup();
        let total = locations.len();
        locations.truncate(cap);
        let warning = match method {
            "textDocument/references" | "textDocument/implementation" => server.spec.missing_index(&server.root),
            _ => None,
        };
        Ok(Navigation {
            server: server.spec.id,
            cursor: target.cursor,
            locations: Capped { items: locations, total },
            warning,
        })
    }

    /// Where the symbol is declared (`textDocument/definition`).
    pub async fn definition(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        self.navigate("textDocument/definition", "definitionProvider", path, line, symbol, usize::MAX).await
    }

    /// Where its type is declared (`textDocument/typeDefinition`).
    pub async fn type_definition(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        self.navigate("textDocument/typeDefinition", "typeDefinitionProvider", path, line, symbol, usize::MAX).await
    }

    /// Concrete implementations (`textDocument/implementation`).
    pub async fn implementation(&self, path: &Path, line: u32, symbol: &str) -> Result<Navigation> {
        self.navigate("textDocument/implementation", "implementationProvider", path, line, symbol, usize::MAX).await
    }

    /// Every use, declaration included, capped at `cap` (`textDocument/references`).
    pub async fn references(&self, path: &Path, line: u32, symbol: &str, cap: usize) -> Result<Navigation> {
        self.navigate("textDocument/references", "referencesProvider", path, line, symbol, cap).await
    }

    /// The hover text (markdown or plain), `None` when the server has none.
    pub async fn hover(&self, path: &Path, line: u32, symbol: &str) -> Result<(Cursor, Option<String>)> {
        let target = self.target(path, line, symbol).await?;
        let params = json!({ "textDocument": { "uri": path_to_uri(path) }, "position": target.position });
        let answer = self.query(&target.server, "textDocument/hover", params).await?;
        Ok((target.cursor, hover_text(answer.get("contents").unwrap_or(&Value::Null))))
    }

    /// The file's outline, flattened depth-first, capped at `cap`.
    pub async fn document_symbols(&self, path: &Path, cap: usize) -> Result<(&'static str, Capped<Symbol>)> {
        let (server, language) = self.server_for(path).await?;
        let (text, _) = server.sync(path, language).await?;
        let params = json!({ "textDocument": { "uri": path_to_uri(path) } });
        let answer = self.query(&server, "textDocument/documentSymbol", params).await?;
        let mut out = Vec::new();
        let file_lines: Vec<String> = lines(&text).into_iter().map(str::to_string).collect();
        for item in answer.as_array().into_iter().flatten() {
            flatten_symbol(item, path, &file_lines, server.encoding, 0, None, &mut out);
        }
        let total = out.len();
        out.truncate(cap);
        Ok((server.spec.id, Capped { items: out, total }))
    }

    /// Workspace symbols matching `query`, from the server of `context` (a file
    /// of the language to search), capped at `cap`.
    pub async fn workspace_symbols(
        &self,
        query: &str,
        context: &Path,
        cap: usize,
    ) -> Result<(&'static str, Capped<Symbol>)> {
        let (server, language) = self.server_for(context).await?;
        if context.is_file() {
            server.sync(context, language).await?;
        }
        let answer = self.query(&server, "workspace/symbol", json!({ "query": query })).await?;
        let mut out = Vec::new();
        for item in answer.as_array().into_iter().flatten() {
            let Some(location) = item.get("location") else { continue };
            let Some(path) = location.get("uri").and_then(Value::as_str).and_then(uri_to_path) else { continue };
            let range = location
                .get("range")
                .cloned()
                .unwrap_or(json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }));
            let Some(location) = convert_range(&path, &range, server.encoding, None).await else { continue };
            out.push(Symbol {
                name: item.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                kind: symbol_kind(item.get("kind").and_then(Value::as_i64)),
                detail: None,
                container: item
                    .get("containerName")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
                depth: 0,
                location,
            });
        }
        let total = out.len();
        out.truncate(cap);
        Ok((server.spec.id, Capped { items: out, total }))
    }

    /// The code actions offered on the symbol's line (not applied).
    pub async fn code_actions(&self, path: &Path, line: u32, symbol: &str) -> Result<(Cursor, Vec<CodeAction>)> {
        let target = self.target(path, line, symbol).await?;
        let server = &target.server;
        let file = self.file_diagnostics_raw(server, path, false).await?;
        let index = line - 1;
        let on_line: Vec<Value> = file
            .into_iter()
            .filter(|d| {
                let start = d.pointer("/range/start/line").and_then(Value::as_u64).unwrap_or(0);
                let end = d.pointer("/range/end/line").and_then(Value::as_u64).unwrap_or(start);
                (start..=end).contains(&u64::from(index))
            })
            .collect();
        let text = crate::encoding::read_text(path)
            .await
            .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let line_text = lines(&text).get(index as usize).copied().unwrap_or("").to_string();
        let end = to_lsp_column(&line_text, line_text.len(), server.encoding);
        let params = json!({
            "textDocument": { "uri": path_to_uri(path) },
            "range": { "start": { "line": index, "character": 0 }, "end": { "line": index, "character": end } },
            "context": { "diagnostics": on_line, "triggerKind": 1 },
        });
        // Through `query`: an empty list from a server still loading is "not ready", not "none offered".
        let answer = self.query(server, "textDocument/codeAction", params).await?;
        let mut out = Vec::new();
        for item in answer.as_array().into_iter().flatten() {
            // A bare Command has a string `command`; a CodeAction may carry one as an object.
            let bare_command = item.get("command").is_some_and(Value::is_string);
            let edit = item.get("edit").cloned().unwrap_or(Value::Null);
            out.push(CodeAction {
                title: item.get("title").and_then(Value::as_str).unwrap_or("").to_string(),
                kind: item.get("kind").and_then(Value::as_str).map(str::to_string),
                preferred: item.get("isPreferred").and_then(Value::as_bool).unwrap_or(false),
                files: crate::edit::edited_files(&edit),
                command: bare_command || item.get("command").is_some_and(Value::is_object),
                disabled: item.pointer("/disabled/reason").and_then(Value::as_str).map(str::to_string),
            });
        }
        Ok((target.cursor, out))
    }

    /// The file's diagnostics now: its text is synced first; a change waits
    /// for the server's next publication (pull servers are asked). For a
    /// server that checks on save (rust-analyzer), a changed file is also
    /// saved, so the compiler's findings are included.
    pub async fn diagnostics(&self, path: &Path) -> Result<FileDiagnostics> {
        self.file_diagnostics(path, false).await
    }

    /// After a write: the file is synced (change, then save) and only what the
    /// server published after that counts; when the wait runs out the result
    /// is marked incomplete, never clean.
    pub async fn diagnostics_after_write(&self, path: &Path) -> Result<FileDiagnostics> {
        self.file_diagnostics(path, true).await
    }

    /// `after_write`: the file is saved whatever the server. Otherwise it is saved
    /// only for a server whose compiler findings come from a check on save
    /// (rust-analyzer), which would else report only what it sees itself.
    async fn file_diagnostics(&self, path: &Path, after_write: bool) -> Result<FileDiagnostics> {
        let (server, _) = self.server_for(path).await?;
        let saved = after_write || server.spec.checks_on_save;
        let deadline = tokio::time::Instant::now() + self.config.diagnostics_timeout;
        let (raw, complete) = self.collect_diagnostics(&server, path, saved, deadline).await?;
        let pulled_at = std::time::Instant::now();
        let text = crate::encoding::read_text(path).await.unwrap_or_default();
        let file_lines: Vec<String> = lines(&text).into_iter().map(str::to_string).collect();
        let mut diagnostics = Vec::new();
        for item in &raw {
            if let Some(d) = convert_diagnostic(item, path, &file_lines, server.encoding) {
                diagnostics.push(d);
            }
        }
        diagnostics.sort_by(|a, b| (a.location.line, a.location.column).cmp(&(b.location.line, b.location.column)));
        let published_at = if server.pulls_diagnostics() || server.tsserver_request().is_some() {
            Some(pulled_at)
        } else {
            server.published(path).map(|p| p.at)
        };
        Ok(FileDiagnostics { server: server.spec.id, path: path.to_path_buf(), diagnostics, complete, published_at })
    }

    async fn file_diagnostics_raw(&self, server: &Server, path: &Path, saved: bool) -> Result<Vec<Value>> {
        let deadline = tokio::time::Instant::now() + self.config.diagnostics_timeout.min(Duration::from_secs(5));
        Ok(self.collect_diagnostics(server, path, saved, deadline).await?.0)
    }

    async fn collect_diagnostics(
        &self,
        server: &Server,
        path: &Path,
        saved: bool,
        deadline: tokio::time::Instant,
    ) -> Result<(Vec<Value>, bool)> {
        let language = Language::from_path(path).ok_or_else(|| Error::UnknownLanguage(path.to_path_buf()))?;
        let before = server.publish_seq();
        let (_, changed) = server.sync(path, language).await?;
        let begins = server.progress_begins();
        if saved {
            server.saved(path);
        }
        let mut checked = false;
        if saved && changed && server.spec.checks_on_save {
            // The save starts a check (rust-analyzer's `cargo check`); its findings come after it ends.
            let until = (tokio::time::Instant::now() + CHECK_START).min(deadline);
            while server.progress_begins() == begins && server.next_change(until).await {}
            checked = server.progress_begins() != begins;
        }
        if let Some(command) = server.tsserver_request() {
            // tsserver answers once it has loaded the project: no load to wait out first.
            return tsserver_diagnostics(server, command, path, deadline).await;
        }
        // Diagnostics from a server still loading are not final.
        if server.initial_load(server.spec.load_grace, deadline).await.is_some() {
            let items = server.published(path).filter(|p| p.seq > before).map(|p| p.items).unwrap_or_default();
            return Ok((items, false));
        }
        if let Some(own) = server.spec.pulled_source
            && server.supports("diagnosticProvider", "textDocument/diagnostic")
        {
            return self.pulled_and_checked(server, path, own, checked, deadline).await;
        }
        if server.pulls_diagnostics() {
            let params = json!({ "textDocument": { "uri": path_to_uri(path) } });
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            let answer = match server.request_with("textDocument/diagnostic", params, remaining).await {
                Ok(answer) => answer,
                Err(Error::Timeout { .. }) => return Ok((Vec::new(), false)),
                Err(e) => return Err(e),
            };
            // A "full" report has items; "unchanged" means the last pushed/pulled list stands.
            let items = match answer.get("items").and_then(Value::as_array) {
                Some(items) => items.clone(),
                None => server.published(path).map(|p| p.items).unwrap_or_default(),
            };
            return Ok((items, true));
        }
        let settle_empty = if server.spec.publishes_in_rounds { self.config.settle_empty } else { self.config.settle };
        // Unchanged text and an earlier publication: that publication is current.
        let after = if !changed { server.published(path).map(|p| p.seq - 1).unwrap_or(before) } else { before };
        // A server that does not publish a list again when it is unchanged: once
        // its check after the save has ended (or, without one, after a longer
        // quiet), silence means the last list stands.
        let stands = (!server.spec.publishes_unchanged)
            .then(|| if checked { self.config.settle } else { self.config.settle_empty });
        let waits = Waits { settle: self.config.settle, settle_empty, stands };
        wait_published(server, path, after, deadline, waits).await
    }

    /// For a server that answers a pull with its own findings only and pushes
    /// a check's ([`ServerSpec::pulled_source`]: rust-analyzer and `cargo
    /// check`): its own are pulled, exact for the text just sent (a push may be
    /// a list it is still computing); the check's are the last pushed ones,
    /// once a check this save started (`checked`) has ended.
    async fn pulled_and_checked(
        &self,
        server: &Server,
        path: &Path,
        own: &str,
        checked: bool,
        deadline: tokio::time::Instant,
    ) -> Result<(Vec<Value>, bool)> {
        let params = json!({ "textDocument": { "uri": path_to_uri(path) } });
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        let answer = match server.request_with("textDocument/diagnostic", params, remaining).await {
            Ok(answer) => answer,
            Err(Error::Timeout { .. }) => return Ok((Vec::new(), false)),
            Err(e) => return Err(e),
        };
        // No `previousResultId` is sent, so the report is a full one with its items.
        let Some(mut items) = answer.get("items").and_then(Value::as_array).cloned() else {
            return Err(Error::Response {
                server: server.spec.id,
                method: "textDocument/diagnostic",
                code: 0,
                message: format!("a report without items: {answer}"),
            });
        };
        // A check (this save's, or one still running from before) ends with its
        // progress, and its publication follows right behind.
        let waited = checked || server.busy().is_some();
        while server.busy().is_some() && server.next_change(deadline).await {}
        let complete = server.busy().is_none();
        if waited {
            let until = (tokio::time::Instant::now() + self.config.settle).min(deadline);
            while server.next_change(until).await {}
        }
        let pushed = server.published(path).map(|p| p.items).unwrap_or_default();
        items.extend(pushed.into_iter().filter(|d| d.get("source").and_then(Value::as_str) != Some(own)));
        Ok((items, complete))
    }

    /// Tells every running server of a root that files changed on disk
    /// (`workspace/didChangeWatchedFiles`), and syncs the ones they have open
    /// (and, for a server with [`ServerSpec::opens_changed_files`], opens the
    /// ones of its languages).
    pub async fn files_changed(&self, changes: &[(PathBuf, FileChange)]) {
        let servers: Vec<Arc<Server>> = self.slots.lock().await.values().filter_map(|s| s.server.clone()).collect();
        for server in servers {
            let events: Vec<Value> = changes
                .iter()
                .filter(|(p, _)| p.starts_with(&server.root))
                .map(|(p, change)| json!({ "uri": path_to_uri(p), "type": *change as u8 }))
                .collect();
            if events.is_empty() {
                continue;
            }
            let before = server.publish_seq();
            let mut opened = Vec::new();
            for (path, change) in changes {
                let opens = server.spec.opens_changed_files
                    && *change != FileChange::Deleted
                    && path.starts_with(&server.root)
                    && Language::from_path(path).is_some_and(|l| server.spec.languages.contains(&l));
                if server.is_open(path) || opens {
                    match change {
                        FileChange::Deleted => server.closed(path),
                        _ => {
                            if let Some(language) = Language::from_path(path) {
                                let _ = server.sync(path, language).await;
                                server.saved(path);
                                opened.push(path);
                            }
                        }
                    }
                }
            }
            server.conn.notify("workspace/didChangeWatchedFiles", json!({ "changes": events }));
            if server.spec.opens_changed_files {
                // Each file is in its index once it has been built, which its
                // publication follows: the next query sees the new text everywhere.
                let deadline = tokio::time::Instant::now() + self.config.diagnostics_timeout.min(OPENED_INDEXED);
                while !opened.iter().all(|p| server.published(p).is_some_and(|p| p.seq > before))
                    && server.next_change(deadline).await
                {}
            }
        }
    }
}

/// LSP `FileChangeType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FileChange {
    Created = 1,
    Changed = 2,
    Deleted = 3,
}

/// A file's diagnostics asked of tsserver through typescript-language-server's
/// `command` (`typescript.tsserverRequest`): the three kinds it publishes, in
/// its order, each converted as the server converts what it publishes
/// (tsserver's 1-based `line`/`offset` in UTF-16 units become a 0-based LSP
/// range; category `error`/`warning`/`suggestion` becomes severity 1/2/4).
/// Running out of time is "not final", with what came so far.
async fn tsserver_diagnostics(
    server: &Server,
    command: &str,
    path: &Path,
    deadline: tokio::time::Instant,
) -> Result<(Vec<Value>, bool)> {
    let uri = path_to_uri(path);
    let mut items = Vec::new();
    for request in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"] {
        let params = json!({ "command": command, "arguments": [request, { "file": uri }] });
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        let answer = match server.request_with("workspace/executeCommand", params, remaining).await {
            Ok(answer) => answer,
            Err(Error::Timeout { .. }) => return Ok((items, false)),
            Err(e) => return Err(e),
        };
        // The command answers with tsserver's whole response: `{ success, body, message }`.
        if answer.get("success").and_then(Value::as_bool) == Some(false) {
            let message = answer.get("message").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(Error::Response {
                server: server.spec.id,
                method: "workspace/executeCommand",
                code: 0,
                message: format!("tsserver {request} failed: {message}"),
            });
        }
        // An answer without its list is not an empty list.
        let Some(body) = answer.get("body").and_then(Value::as_array) else {
            return Err(Error::Response {
                server: server.spec.id,
                method: "workspace/executeCommand",
                code: 0,
                message: format!("tsserver {request} answered without a list of diagnostics: {answer}"),
            });
        };
        items.extend(body.iter().filter_map(tsserver_to_lsp));
    }
    Ok((items, true))
}

/// One tsserver `protocol.Diagnostic` as the LSP `Diagnostic` typescript-language-server publishes for it.
fn tsserver_to_lsp(diagnostic: &Value) -> Option<Value> {
    let position = |location: &Value| -> Option<Value> {
        let line = location.get("line")?.as_u64()?.checked_sub(1)?;
        let character = location.get("offset")?.as_u64()?.checked_sub(1)?;
        Some(json!({ "line": line, "character": character }))
    };
    let severity = match diagnostic.get("category").and_then(Value::as_str) {
        Some("warning") => 2,
        Some("suggestion") => 4,
        _ => 1,
    };
    Some(json!({
        "range": { "start": position(diagnostic.get("start")?)?, "end": position(diagnostic.get("end")?)? },
        "message": diagnostic.get("text").and_then(Value::as_str).unwrap_or_default(),
        "severity": severity,
        "code": diagnostic.get("code").cloned().unwrap_or(Value::Null),
        "source": diagnostic.get("source").and_then(Value::as_str).unwrap_or("typescript"),
    }))
}

/// How long [`wait_published`] waits in quiet before it takes a list as final.
struct Waits {
    /// After a publication with items.
    settle: Duration,
    /// After an empty publication.
    settle_empty: Duration,
    /// Without any publication since the change, from a server that does not
    /// publish an unchanged list again; `None`: such silence is never final.
    stands: Option<Duration>,
}

/// Waits for a publication for `path` newer than `after`, then for the server
/// to settle (no progress, quiet for a moment). Returns the items and whether
/// they are final.
async fn wait_published(
    server: &Server,
    path: &Path,
    after: u64,
    deadline: tokio::time::Instant,
    waits: Waits,
) -> Result<(Vec<Value>, bool)> {
    let Waits { settle, settle_empty, stands } = waits;
    loop {
        if let Some(death) = server.death() {
            return Err(Error::Crashed { server: server.spec.id, what: death.what, stderr_tail: death.stderr_tail });
        }
        let latest = server.published(path).filter(|p| p.seq > after);
        if let Some(published) = &latest
            && server.busy().is_none()
        {
            let quiet = if published.items.is_empty() { settle_empty } else { settle };
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            if !server.next_change(until).await {
                let still = server.published(path).map(|p| p.seq) == Some(published.seq) && server.busy().is_none();
                if still {
                    return Ok((published.items.clone(), true));
                }
                if tokio::time::Instant::now() >= deadline {
                    return Ok((published.items.clone(), false));
                }
            }
            continue;
        }
        if latest.is_none()
            && let Some(quiet) = stands
            && server.busy().is_none()
        {
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            if !server.next_change(until).await {
                let fresh = server.published(path).is_some_and(|p| p.seq > after);
                if !fresh && server.busy().is_none() && tokio::time::Instant::now() < deadline {
                    return Ok((server.published(path).map(|p| p.items).unwrap_or_default(), true));
                }
                if tokio::time::Instant::now() >= deadline {
                    return Ok((Vec::new(), false));
                }
            }
            continue;
        }
        if !server.next_change(deadline).await {
            let items = latest.map(|p| p.items).unwrap_or_default();
            return Ok((items, false));
        }
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.get("contents").is_some_and(|c| hover_text(c).is_none()) || o.is_empty(),
        _ => false,
    }
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
    range: &Value,
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
    range: &Value,
    file_lines: &[String],
    encoding: PositionEncoding,
) -> Location {
    let point = |key: &str| {
        let line = range.pointer(&format!("/{key}/line")).and_then(Value::as_u64).unwrap_or(0) as usize;
        let character = range.pointer(&format!("/{key}/character")).and_then(Value::as_u64).unwrap_or(0) as u32;
        let text = file_lines.get(line).map(String::as_str).unwrap_or("");
        let byte = from_lsp_column(text, character, encoding);
        (u32::try_from(line + 1).unwrap_or(u32::MAX), u32::try_from(char_column(text, byte)).unwrap_or(u32::MAX))
    };
    let (line, column) = point("start");
    let (end_line, end_column) = point("end");
    let text = file_lines.get(line as usize - 1).map(|l| l.trim().to_string()).unwrap_or_default();
    Location { path: path.to_path_buf(), line, column, end_line, end_column, text }
}

/// `Location | Location[] | LocationLink[] | null` as locations.
async fn convert_locations(answer: &Value, encoding: PositionEncoding) -> Vec<Location> {
    let items: Vec<&Value> = match answer {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![answer],
        _ => Vec::new(),
    };
    let mut cache: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut out = Vec::new();
    for item in items {
        // LocationLink: targetUri + targetSelectionRange (the name); Location: uri + range.
        let (uri, range) = match item.get("targetUri") {
            Some(uri) => (uri, item.get("targetSelectionRange").or_else(|| item.get("targetRange"))),
            None => (item.get("uri").unwrap_or(&Value::Null), item.get("range")),
        };
        let (Some(path), Some(range)) = (uri.as_str().and_then(uri_to_path), range) else { continue };
        if !cache.contains_key(&path) {
            cache.insert(path.clone(), read_lines(&path).await);
        }
        out.push(range_to_location(&path, range, &cache[&path], encoding));
    }
    out
}

fn convert_diagnostic(
    item: &Value,
    path: &Path,
    file_lines: &[String],
    encoding: PositionEncoding,
) -> Option<Diagnostic> {
    let range = item.get("range")?;
    let code = match item.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Some(Diagnostic {
        location: range_to_location(path, range, file_lines, encoding),
        severity: Severity::from_lsp(item.get("severity").and_then(Value::as_i64)),
        code,
        source: item.get("source").and_then(Value::as_str).map(str::to_string),
        message: item.get("message").and_then(Value::as_str).unwrap_or("").to_string(),
    })
}

/// `MarkupContent | MarkedString | MarkedString[]` as text; `None` when blank.
fn hover_text(contents: &Value) -> Option<String> {
    let text = match contents {
        Value::String(s) => s.clone(),
        Value::Object(o) => match (o.get("kind"), o.get("language"), o.get("value").and_then(Value::as_str)) {
            (_, Some(lang), Some(value)) => format!("```{}\n{value}\n```", lang.as_str().unwrap_or("")),
            (_, None, Some(value)) => value.to_string(),
            _ => String::new(),
        },
        Value::Array(items) => items.iter().filter_map(hover_text).collect::<Vec<_>>().join("\n\n"),
        _ => String::new(),
    };
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn flatten_symbol(
    item: &Value,
    path: &Path,
    file_lines: &[String],
    encoding: PositionEncoding,
    depth: usize,
    container: Option<&str>,
    out: &mut Vec<Symbol>,
) {
    let name = item.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    // DocumentSymbol has selectionRange; SymbolInformation has location.
    let (symbol_path, range) = match item.get("location") {
        Some(location) => (
            location.get("uri").and_then(Value::as_str).and_then(uri_to_path).unwrap_or_else(|| path.to_path_buf()),
            location.get("range").cloned(),
        ),
        None => (path.to_path_buf(), item.get("selectionRange").or_else(|| item.get("range")).cloned()),
    };
    let Some(range) = range else { return };
    out.push(Symbol {
        name: name.clone(),
        kind: symbol_kind(item.get("kind").and_then(Value::as_i64)),
        detail: item.get("detail").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string),
        container: item
            .get("containerName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| container.map(str::to_string)),
        depth,
        location: range_to_location(&symbol_path, &range, file_lines, encoding),
    });
    for child in item.get("children").and_then(Value::as_array).into_iter().flatten() {
        flatten_symbol(child, path, file_lines, encoding, depth + 1, Some(&name), out);
    }
}

/// LSP `SymbolKind` (1–26) by name.
fn symbol_kind(kind: Option<i64>) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    kind.and_then(|k| usize::try_from(k - 1).ok()).and_then(|i| NAMES.get(i)).copied().unwrap_or("symbol")
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
    fn hover_contents_of_every_shape_become_text() {
        assert_eq!(hover_text(&json!({ "kind": "markdown", "value": "**x**" })), Some("**x**".into()));
        assert_eq!(
            hover_text(&json!([{ "language": "rust", "value": "fn f()" }, "doc"])),
            Some("```rust\nfn f()\n```\n\ndoc".into())
        );
        assert_eq!(hover_text(&json!("")), None);
    }
}
