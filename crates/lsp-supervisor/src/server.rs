//! One running language server for one root: start-up (`initialize` with the
//! client capabilities of [`crate::protocol`]), its requests and notifications
//! typed by lsp-types, the documents it has open, what it published, its
//! progress, and the answers to everything it asks the client.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_types::notification::{self as note, Notification};
use lsp_types::request::{self as req, Request};
use lsp_types::{ServerCapabilities, TextDocumentIdentifier};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::change::FileChange;
use crate::encoding::PositionEncoding;
use crate::error::{Error, Result};
use crate::protocol::{Provided, ServerNotification, ServerRequest};
use crate::spec::{Language, ServerSpec};
use crate::transport::{Connection, Death, Incoming, RequestError};
use crate::uri::{file_uri, uri_path};

/// What a server published for one file.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// Order of arrival over all files, from 1.
    pub seq: u64,
    pub items: Vec<lsp_types::Diagnostic>,
    /// When it arrived.
    pub at: Instant,
}

#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub version: i32,
    pub text: String,
    pub language: Language,
    /// The last publication's sequence number (any file) when this text was
    /// sent: publications after it are for this text, whoever sent it (a
    /// request's sync or the root's watcher).
    pub sent_after: u64,
    /// The version whose diagnostics were last read to the end ([`Server::mark_read`]); 0 before any.
    pub read_version: i32,
}

/// One work-done progress, as its `begin` and latest `report` left it.
#[derive(Debug, Clone)]
struct Progress {
    title: String,
    message: Option<String>,
    percentage: Option<u32>,
    /// Order of its `begin` among all progress, from 1.
    order: u64,
}

impl Progress {
    /// `Roots Scanned: 12/222 (5%)`, the message cut at 100 characters.
    fn describe(&self) -> String {
        let mut text = self.title.clone();
        if let Some(message) = self.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            let cut: String = message.chars().take(100).collect();
            let more = if cut.len() < message.len() { "…" } else { "" };
            text.push_str(&format!(": {cut}{more}"));
        }
        if let Some(percentage) = self.percentage {
            text.push_str(&format!(" ({percentage}%)"));
        }
        text
    }
}

/// How far a server's loading has come, for a request deciding whether to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Load {
    /// Nothing that changes its answers is going on.
    Ready,
    /// Only work during which answers are right but may lack what it produces
    /// ([`ServerSpec::partial_progress`]); what it is.
    Partial(String),
    /// Still loading; what it is doing.
    Loading(String),
}

#[derive(Debug, Default)]
struct State {
    docs: HashMap<PathBuf, Doc>,
    published: HashMap<PathBuf, Published>,
    /// For a server that pushes a check's findings beside its own
    /// ([`ServerSpec::pulled_source`]): per file, the latest publication that
    /// held some of the check's.
    published_checked: HashMap<PathBuf, Published>,
    /// The publication count when the latest check ([`ServerSpec::background_progress`]) began.
    check_began_at: u64,
    seq: u64,
    /// Work-done progress tokens begun and not ended.
    progress: HashMap<String, Progress>,
    /// Titles of progress that has ended at least once.
    progress_ended: std::collections::HashSet<String>,
    /// How many progress tokens have begun so far.
    progress_begins: u64,
    /// Per progress title, the order of its latest `begin`, so a wait can tell
    /// a check begun after a save from one begun before it.
    latest_begin: HashMap<String, u64>,
    /// rust-analyzer's `experimental/serverStatus` quiescence; `None` when the server sends none.
    quiescent: Option<bool>,
    /// rust-analyzer's `experimental/serverStatus` with `health: "error"`: its
    /// message (it could not load the project), until a later status clears it.
    load_error: Option<String>,
    /// rust-analyzer's `experimental/serverStatus` with `health: "warning"`: its
    /// message (it loaded the project in part, without its dependencies when
    /// `cargo metadata` failed), until a later status clears it.
    load_warning: Option<String>,
    /// Dynamic registrations by id → method.
    registrations: HashMap<String, String>,
    /// The file watchers registered (`workspace/didChangeWatchedFiles`), by registration id.
    file_watchers: HashMap<String, Vec<FileWatcher>>,
    /// The last messages the server showed (`window/showMessage`, errors and warnings only).
    messages: Vec<String>,
}

/// One watcher a server registered: what it asked to hear about.
#[derive(Debug, Clone)]
struct FileWatcher {
    glob: globset::GlobMatcher,
    /// A relative pattern's base; `None` matches against the root and the whole path.
    base: Option<PathBuf>,
    /// LSP `WatchKind` bits: 1 create, 2 change, 4 delete.
    kind: u8,
}

impl FileWatcher {
    fn matches(&self, root: &Path, path: &Path, change: FileChange) -> bool {
        let bit = match change {
            FileChange::Created => 1,
            FileChange::Changed => 2,
            FileChange::Deleted => 4,
        };
        if self.kind & bit == 0 {
            return false;
        }
        match &self.base {
            Some(base) => path.strip_prefix(base).is_ok_and(|rel| self.glob.is_match(rel)),
            None => self.glob.is_match(path) || path.strip_prefix(root).is_ok_and(|rel| self.glob.is_match(rel)),
        }
    }
}

/// The watchers of a `workspace/didChangeWatchedFiles` registration
/// (`DidChangeWatchedFilesRegistrationOptions`); a pattern that is not a glob is skipped.
fn file_watchers(options: Option<Value>) -> Vec<FileWatcher> {
    let options = options.unwrap_or(Value::Null);
    let Ok(options) = crate::protocol::decode::<lsp_types::DidChangeWatchedFilesRegistrationOptions>(&options) else {
        return Vec::new();
    };
    options
        .watchers
        .into_iter()
        .filter_map(|w| {
            let (pattern, base) = match w.glob_pattern {
                lsp_types::GlobPattern::String(pattern) => (pattern, None),
                lsp_types::GlobPattern::Relative(relative) => {
                    let base = match &relative.base_uri {
                        lsp_types::OneOf::Left(folder) => uri_path(&folder.uri),
                        lsp_types::OneOf::Right(uri) => uri_path(uri),
                    }?;
                    (relative.pattern, Some(base))
                }
            };
            let glob = globset::GlobBuilder::new(&pattern).literal_separator(true).build().ok()?.compile_matcher();
            Some(FileWatcher { glob, base, kind: w.kind.map_or(7, |k| k.bits()) })
        })
        .collect()
}

/// Files a server that registered no watchers still hears about: project
/// files whose change changes what the project is.
const PROJECT_FILES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "go.mod",
    "go.sum",
    "go.work",
    "package.json",
    "tsconfig.json",
    "jsconfig.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pyrightconfig.json",
    "compile_commands.json",
    "compile_flags.txt",
    ".clangd",
];

/// One running server, as one of its workspace folders sees it: the process, and
/// the folder (`root`) its requests and results are about. A process that serves
/// several folders (worktrees of one repository, [`Server::attach`]) has a view per folder.
pub(crate) struct Server {
    process: Arc<Process>,
    /// The workspace folder this view serves: the project root, as the toolchain draws it.
    pub root: PathBuf,
}

impl std::ops::Deref for Server {
    type Target = Process;
    fn deref(&self) -> &Process {
        &self.process
    }
}

/// A language server process and what it has told.
pub(crate) struct Process {
    pub spec: ServerSpec,
    /// Its workspace folders, the first the one it started with.
    folders: Arc<Mutex<Vec<PathBuf>>>,
    pub binary: PathBuf,
    pub encoding: PositionEncoding,
    pub capabilities: ServerCapabilities,
    pub started: Instant,
    pub conn: Connection,
    pub pid: Option<u32>,
    /// Set once a request got an answer: a crash after that is not a crash loop.
    pub answered: AtomicBool,
    /// Set once the server was idle after its first load.
    loaded: AtomicBool,
    /// When its last load began: its start, or a workspace folder added ([`Server::attach`]);
    /// a load's grace (a server may not have announced its loading yet) counts from it.
    load_since: Mutex<Instant>,
    /// When it last heard that a project file changed (it may reload).
    project_changed: Mutex<Option<Instant>>,
    state: Arc<Mutex<State>>,
    changed: watch::Receiver<u64>,
    child: Mutex<Option<tokio::process::Child>>,
    pub request_timeout: Duration,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("id", &self.spec.id).field("root", &self.root).finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Server {
    /// Spawns the server and runs `initialize`/`initialized`.
    pub async fn start(
        spec: ServerSpec,
        root: PathBuf,
        binary: PathBuf,
        search_path: &std::ffi::OsString,
        request_timeout: Duration,
        init_timeout: Duration,
        enclosure: Option<&enclosure::Enclosure>,
    ) -> Result<Server> {
        let mut plain = std::process::Command::new(&binary);
        plain.args(&spec.args).current_dir(&root).env("PATH", search_path).envs(spec.env.iter().map(|(k, v)| (k, v)));
        if let Some(enclosure) = enclosure {
            if enclosure.mode == enclosure::Mode::Bwrap && !enclosure.network {
                plain.envs(spec.offline_env.iter().map(|(k, v)| (k, v)));
            }
            plain = enclosure.enclose(&plain).map_err(|e| Error::Spawn {
                server: spec.id,
                binary: binary.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
        }
        let mut command = tokio::process::Command::from(plain);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true).process_group(0);
        let mut child =
            command.spawn().map_err(|source| Error::Spawn { server: spec.id, binary: binary.clone(), source })?;
        let pid = child.id();
        let (conn, incoming) = Connection::start(&mut child).ok_or(Error::Spawn {
            server: spec.id,
            binary: binary.clone(),
            source: std::io::Error::other("no stdio pipes"),
        })?;
        let state: Arc<Mutex<State>> = Arc::default();
        if spec.reports_quiescence {
            // It announces quiescence once loaded; until then it is not ready.
            lock(&state).quiescent = Some(false);
        }
        let (changed_tx, changed) = watch::channel(0u64);
        // A server exits when the `processId` it was given is not alive (LSP 3.17,
        // `InitializeParams`); inside an enclosure our pid names nothing (bwrap's PID
        // namespace, a container), so it is `null` there: "not started by another process".
        let process_id = match enclosure {
            Some(enclosure) if !enclosure.is_host() => None,
            _ => Some(std::process::id()),
        };
        #[allow(deprecated)] // `rootUri` and `rootPath`: older servers read only them.
        let params = lsp_types::InitializeParams {
            process_id,
            client_info: Some(lsp_types::ClientInfo {
                name: "agent-tools".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            root_uri: Some(file_uri(&root)),
            root_path: Some(root.to_string_lossy().into_owned()),
            workspace_folders: Some(vec![workspace_folder(&root)]),
            // The server's own settings, which lsp-types does not type.
            initialization_options: Some(spec.initialization_options.clone()),
            capabilities: crate::protocol::client_capabilities(spec.advertise_pull),
            ..Default::default()
        };
        // The event loop must run while initialize is pending: some servers ask
        // for configuration before they answer.
        let loop_conn = conn.clone();
        let folders = Arc::new(Mutex::new(vec![root.clone()]));
        tokio::spawn(event_loop(
            incoming,
            loop_conn,
            Arc::clone(&state),
            changed_tx,
            spec.clone(),
            Arc::clone(&folders),
        ));
        let params = crate::protocol::InitializeParams(params);
        let answer = match call::<crate::protocol::Initialize>(&conn, spec.id, params, init_timeout).await {
            Ok(answer) => answer,
            Err(e) => {
                // Whatever it started goes with it.
                kill_group(pid);
                return Err(e);
            }
        };
        if !answer.unreadable.is_empty() {
            tracing::warn!(server = spec.id, capabilities = ?answer.unreadable, "capabilities not of the protocol, left out");
        }
        let capabilities = answer.capabilities;
        let encoding = PositionEncoding::from_lsp(
            capabilities.position_encoding.as_ref().map(lsp_types::PositionEncodingKind::as_str),
        );
        conn.notify::<note::Initialized>(lsp_types::InitializedParams {});
        tracing::info!(server = spec.id, root = %root.display(), encoding = encoding.as_str(), "language server started");
        let process = Process {
            spec,
            folders,
            binary,
            encoding,
            capabilities,
            started: Instant::now(),
            load_since: Mutex::new(Instant::now()),
            conn,
            pid,
            answered: AtomicBool::new(false),
            loaded: AtomicBool::new(false),
            project_changed: Mutex::new(None),
            state,
            changed,
            child: Mutex::new(Some(child)),
            request_timeout,
        };
        Ok(Server { process: Arc::new(process), root })
    }

    /// Whether the server takes workspace folders added and removed while it runs
    /// (`workspace.workspaceFolders.supported` and `changeNotifications`, LSP 3.17
    /// `WorkspaceFoldersServerCapabilities`).
    pub fn takes_folders(&self) -> bool {
        use lsp_types::OneOf;
        let folders = self.capabilities.workspace.as_ref().and_then(|w| w.workspace_folders.as_ref());
        folders.is_some_and(|f| {
            f.supported == Some(true) && matches!(f.change_notifications, Some(OneOf::Left(true) | OneOf::Right(_)))
        })
    }

    /// The same process serving `root` too, added as a workspace folder
    /// (`workspace/didChangeWorkspaceFolders`), as a view of its own.
    pub fn attach(&self, root: PathBuf) -> Server {
        let mut folders = lock(&self.folders);
        if !folders.contains(&root) {
            folders.push(root.clone());
            self.notify::<note::DidChangeWorkspaceFolders>(lsp_types::DidChangeWorkspaceFoldersParams {
                event: lsp_types::WorkspaceFoldersChangeEvent { added: vec![workspace_folder(&root)], removed: vec![] },
            });
        }
        drop(folders);
        // Until the server has loaded the folder, it is loading again: one that
        // announces quiescence is not ready before it announces it anew.
        *lock(&self.load_since) = Instant::now();
        self.loaded.store(false, Ordering::Relaxed);
        if self.spec.reports_quiescence {
            lock(&self.state).quiescent = Some(false);
        }
        Server { process: Arc::clone(&self.process), root }
    }

    /// This view's folder is no longer served: removed from the server's workspace
    /// folders. Returns whether other folders remain (else the process is for stopping).
    pub fn detach(&self) -> bool {
        let mut folders = lock(&self.folders);
        if folders.len() <= 1 {
            return false;
        }
        folders.retain(|f| *f != self.root);
        self.notify::<note::DidChangeWorkspaceFolders>(lsp_types::DidChangeWorkspaceFoldersParams {
            event: lsp_types::WorkspaceFoldersChangeEvent {
                added: vec![],
                removed: vec![workspace_folder(&self.root)],
            },
        });
        true
    }

    /// Whether `other` is a view of the same process.
    pub fn same_process(&self, other: &Server) -> bool {
        Arc::ptr_eq(&self.process, &other.process)
    }

    /// Whether `path` is in another of the process's folders and not in this view's:
    /// another run's file, which this view's answers leave out.
    pub fn foreign(&self, path: &Path) -> bool {
        !path.starts_with(&self.root) && lock(&self.folders).iter().any(|f| path.starts_with(f))
    }

    /// A request of the protocol within `timeout`; errors are this crate's,
    /// and an answer that is not `R::Result` is [`Error::Protocol`].
    pub async fn request_with<R: Request>(&self, params: R::Params, timeout: Duration) -> Result<R::Result> {
        let answer = call::<R>(&self.conn, self.spec.id, params, timeout).await;
        match answer {
            // A result, read or not: the server is serving.
            Ok(_) | Err(Error::Protocol { .. }) => {
                self.answered.store(true, Ordering::Relaxed);
            }
            Err(_) => {}
        }
        answer.map_err(|e| match e {
            // What it was doing is why it did not answer, often.
            Error::Timeout { server, method, after, .. } => Error::Timeout { server, method, after, busy: self.busy() },
            other => other,
        })
    }

    /// A notification of the protocol.
    pub fn notify<N: Notification>(&self, params: N::Params) {
        self.conn.notify::<N>(params);
    }

    /// Whether the server is gone.
    pub fn death(&self) -> Option<Death> {
        self.conn.death()
    }

    /// [`Server::death`], waiting for the reader to record it when the process has already exited.
    pub async fn settled_death(&self) -> Option<Death> {
        self.conn.settled_death().await
    }

    /// Whether the server answers `R`: by its capabilities, or since it registered `R`'s method.
    pub fn supports<R: Provided>(&self) -> bool {
        R::provided(&self.capabilities) || lock(&self.state).registrations.values().any(|m| m == R::METHOD)
    }

    /// The command through which a file's diagnostics are asked of tsserver
    /// ([`ServerSpec::tsserver_request`]), when the server offers it.
    pub fn tsserver_request(&self) -> Option<&'static str> {
        let commands = &self.capabilities.execute_command_provider.as_ref()?.commands;
        self.spec.tsserver_request.filter(|wanted| commands.iter().any(|c| c == wanted))
    }

    /// Whether diagnostics are pulled (`textDocument/diagnostic`) rather than waited for.
    pub fn pulls_diagnostics(&self) -> bool {
        // Only when the client said it pulls: a server told nothing pushes everything.
        self.spec.advertise_pull && self.supports::<req::DocumentDiagnosticRequest>()
    }

    /// What the server is busy with (its oldest progress: title, message and
    /// percentage; "loading the project" while it is not quiescent), if anything.
    pub fn busy(&self) -> Option<String> {
        let state = lock(&self.state);
        if let Some(progress) = state.progress.values().min_by_key(|p| p.order) {
            return Some(progress.describe());
        }
        (state.quiescent == Some(false)).then(|| "loading the project".to_string())
    }

    /// The percentage of the progress [`Server::busy`] names, when it gives one.
    pub fn busy_percentage(&self) -> Option<u32> {
        lock(&self.state).progress.values().min_by_key(|p| p.order).and_then(|p| p.percentage)
    }

    /// How far loading has come: progress of [`ServerSpec::background_progress`]
    /// does not count; [`ServerSpec::partial_progress`] alone, once the files
    /// have loaded ([`ServerSpec::files_progress`]), is [`Load::Partial`].
    pub fn load(&self) -> Load {
        let state = lock(&self.state);
        let has = |titles: &[&str], p: &Progress| titles.iter().any(|t| p.title.starts_with(t));
        let mut active: Vec<&Progress> =
            state.progress.values().filter(|p| !has(&self.spec.background_progress, p)).collect();
        active.sort_by_key(|p| p.order);
        let files_loaded = self.spec.files_progress.is_none_or(|t| state.progress_ended.contains(t));
        if let Some(p) = active.iter().find(|p| !has(&self.spec.partial_progress, p) || !files_loaded) {
            return Load::Loading(p.describe());
        }
        if let Some(p) = active.first() {
            return Load::Partial(p.describe());
        }
        if state.quiescent == Some(false) {
            return Load::Loading("loading the project".to_string());
        }
        Load::Ready
    }

    /// Whether a progress of [`ServerSpec::background_progress`] (rust-analyzer's
    /// `cargo check`) has ended at least once since the server started.
    pub fn background_ended(&self) -> bool {
        let state = lock(&self.state);
        state.progress_ended.iter().any(|t| self.spec.background_progress.iter().any(|b| t.starts_with(b)))
    }

    /// What the server is loading ([`Server::load`]), if it is not ready.
    pub fn loading(&self) -> Option<String> {
        match self.load() {
            Load::Ready => None,
            Load::Partial(what) | Load::Loading(what) => Some(what),
        }
    }

    /// Whether the server's first load has been waited out ([`Server::first_load`]).
    pub fn loaded(&self) -> bool {
        self.loaded.load(Ordering::Relaxed)
    }

    /// Waits out the server's first load: its first seconds (a server may not
    /// have announced its loading yet) and then any loading it announced,
    /// background progress included. After the first time it is idle this
    /// returns at once. Returns what it is still busy with when `deadline` passes.
    pub async fn initial_load(&self, grace: Duration, deadline: tokio::time::Instant) -> Option<String> {
        if self.loaded.load(Ordering::Relaxed) {
            return None;
        }
        let grace_end = tokio::time::Instant::from_std(*lock(&self.load_since)) + grace;
        while self.busy().is_none() && tokio::time::Instant::now() < grace_end {
            if !self.next_change(grace_end.min(deadline)).await {
                break;
            }
        }
        if self.wait_idle(deadline).await {
            self.loaded.store(true, Ordering::Relaxed);
            None
        } else {
            self.busy()
        }
    }

    /// Waits out the server's first load for a request ([`Server::load`]: its
    /// background progress does not count): its first seconds, then any
    /// loading it announced. After the first time it is ready this returns at once. With
    /// `partial_ok`, a [`Load::Partial`] server is waited for no longer:
    /// `Ok(Some(what))` says what is still going on. `Err(what)` is what it is
    /// still loading when `deadline` passes.
    pub async fn first_load(
        &self,
        grace: Duration,
        deadline: tokio::time::Instant,
        partial_ok: bool,
    ) -> std::result::Result<Option<String>, String> {
        if self.loaded.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let grace_end = tokio::time::Instant::from_std(*lock(&self.load_since)) + grace;
        while self.load() == Load::Ready && tokio::time::Instant::now() < grace_end {
            if !self.next_change(grace_end.min(deadline)).await {
                break;
            }
        }
        let mut changed = self.changed.clone();
        loop {
            changed.borrow_and_update();
            match self.load() {
                Load::Ready => {
                    self.loaded.store(true, Ordering::Relaxed);
                    return Ok(None);
                }
                Load::Partial(what) if partial_ok => return Ok(Some(what)),
                Load::Partial(what) | Load::Loading(what) => {
                    let waited = tokio::time::timeout_at(deadline, changed.changed()).await;
                    if self.death().is_some() || !matches!(waited, Ok(Ok(()))) {
                        return match self.load() {
                            Load::Ready => Ok(None),
                            Load::Partial(what) if partial_ok => Ok(Some(what)),
                            _ => Err(self.loading().unwrap_or(what)),
                        };
                    }
                }
            }
        }
    }

    /// Waits until the server is [`Load::Ready`] or `deadline` passes; true when it is.
    pub async fn wait_ready(&self, deadline: tokio::time::Instant) -> bool {
        let mut changed = self.changed.clone();
        loop {
            changed.borrow_and_update();
            if self.load() == Load::Ready {
                return true;
            }
            if self.death().is_some() {
                return false;
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                _ => return self.load() == Load::Ready,
            }
        }
    }

    /// Waits until the server is not busy or `deadline` passes; true when it is idle.
    pub async fn wait_idle(&self, deadline: tokio::time::Instant) -> bool {
        let mut changed = self.changed.clone();
        loop {
            if self.busy().is_none() {
                return true;
            }
            if self.death().is_some() {
                return false;
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                _ => return self.busy().is_none(),
            }
        }
    }

    /// Resolves on the next state change (a publication, progress, a registration) or at `deadline`.
    pub async fn next_change(&self, deadline: tokio::time::Instant) -> bool {
        let mut changed = self.changed.clone();
        changed.borrow_and_update();
        matches!(tokio::time::timeout_at(deadline, changed.changed()).await, Ok(Ok(())))
    }

    /// Opens the file, or sends its current text when it changed on disk since. Returns its text.
    pub async fn sync(&self, path: &Path, language: Language) -> Result<(String, bool)> {
        let text = crate::encoding::read_text(path)
            .await
            .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let uri = file_uri(path);
        let mut state = lock(&self.state);
        match state.docs.get_mut(path) {
            Some(doc) if doc.text == text => Ok((text, false)),
            Some(doc) => {
                doc.version += 1;
                doc.text = text.clone();
                let version = doc.version;
                let seq = state.seq;
                if let Some(doc) = state.docs.get_mut(path) {
                    doc.sent_after = seq;
                }
                drop(state);
                self.notify::<note::DidChangeTextDocument>(lsp_types::DidChangeTextDocumentParams {
                    text_document: lsp_types::VersionedTextDocumentIdentifier { uri, version },
                    content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.clone(),
                    }],
                });
                Ok((text, true))
            }
            None => {
                let doc = Doc { version: 1, text: text.clone(), language, sent_after: state.seq, read_version: 0 };
                state.docs.insert(path.to_path_buf(), doc);
                drop(state);
                self.notify::<note::DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
                    text_document: lsp_types::TextDocumentItem {
                        uri,
                        language_id: language.language_id(path).to_string(),
                        version: 1,
                        text: text.clone(),
                    },
                });
                Ok((text, true))
            }
        }
    }

    /// When the server last heard that a project file changed.
    pub fn project_changed(&self) -> Option<Instant> {
        *lock(&self.project_changed)
    }

    /// Whether the server asked to hear of this change: by the watchers it
    /// registered; without any, a file of its languages or a project file.
    pub fn wants(&self, path: &Path, change: FileChange) -> bool {
        let state = lock(&self.state);
        if state.file_watchers.is_empty() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            return Language::from_path(path).is_some_and(|l| self.spec.languages.contains(&l))
                || PROJECT_FILES.contains(&name)
                || self.spec.root_markers.contains(&name);
        }
        state.file_watchers.values().flatten().any(|w| w.matches(&self.root, path, change))
    }

    /// Files changed on disk (seen by the root's watcher): the open ones are
    /// synced (a deleted one closed), and the server hears of the ones it asked
    /// for (`workspace/didChangeWatchedFiles`).
    pub async fn disk_changed(&self, changes: &[(PathBuf, FileChange)]) {
        let mut events = Vec::new();
        for (path, change) in changes.iter().filter(|(p, _)| p.starts_with(&self.root)) {
            if self.is_open(path) {
                match (change, Language::from_path(path)) {
                    (FileChange::Deleted, _) => self.closed(path),
                    (_, Some(language)) => {
                        // Unreadable now (removed again): the next event says so.
                        let _ = self.sync(path, language).await;
                    }
                    (_, None) => {}
                }
            }
            // The lock file a server's own first load writes (rust-analyzer's
            // `cargo metadata` creates Cargo.lock) is what it just read: told of
            // it, it would load the project all over again.
            let own_lock =
                *change == FileChange::Created && !self.loaded() && path.file_name().is_some_and(|n| n == "Cargo.lock");
            if self.wants(path, *change) && !own_lock {
                events.push(file_event(path, *change));
                if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| PROJECT_FILES.contains(&n)) {
                    *lock(&self.project_changed) = Some(Instant::now());
                }
            }
        }
        tracing::debug!(server = self.spec.id, root = %self.root.display(), events = events.len(), "changes on disk told");
        if !events.is_empty() {
            self.notify::<note::DidChangeWatchedFiles>(lsp_types::DidChangeWatchedFilesParams { changes: events });
        }
    }

    /// An open document's version, the version whose diagnostics were last
    /// read to the end, and the publication sequence number its text was sent after.
    pub fn doc_sync(&self, path: &Path) -> Option<(i32, i32, u64)> {
        lock(&self.state).docs.get(path).map(|d| (d.version, d.read_version, d.sent_after))
    }

    /// Marks `version` of an open document as read: its diagnostics were had to the end.
    pub fn mark_read(&self, path: &Path, version: i32) {
        if let Some(doc) = lock(&self.state).docs.get_mut(path) {
            doc.read_version = doc.read_version.max(version);
        }
    }

    /// Every file's latest publication.
    pub fn publications(&self) -> Vec<(PathBuf, Published)> {
        lock(&self.state).published.iter().map(|(p, x)| (p.clone(), x.clone())).collect()
    }

    /// `textDocument/didSave` for an open file.
    pub fn saved(&self, path: &Path) {
        let text = lock(&self.state).docs.get(path).map(|d| d.text.clone());
        if let Some(text) = text {
            use lsp_types::{TextDocumentSyncCapability, TextDocumentSyncSaveOptions};
            let include = match &self.capabilities.text_document_sync {
                Some(TextDocumentSyncCapability::Options(options)) => matches!(
                    &options.save,
                    Some(TextDocumentSyncSaveOptions::SaveOptions(save)) if save.include_text == Some(true)
                ),
                _ => false,
            };
            self.notify::<note::DidSaveTextDocument>(lsp_types::DidSaveTextDocumentParams {
                text_document: TextDocumentIdentifier { uri: file_uri(path) },
                text: include.then_some(text),
            });
        }
    }

    /// `textDocument/didClose` for an open file that no longer exists.
    pub fn closed(&self, path: &Path) {
        if lock(&self.state).docs.remove(path).is_some() {
            self.notify::<note::DidCloseTextDocument>(lsp_types::DidCloseTextDocumentParams {
                text_document: TextDocumentIdentifier { uri: file_uri(path) },
            });
        }
    }

    /// The open documents, for re-opening them in a restarted server.
    pub fn open_docs(&self) -> Vec<(PathBuf, Language)> {
        lock(&self.state).docs.iter().map(|(p, d)| (p.clone(), d.language)).collect()
    }

    pub fn is_open(&self, path: &Path) -> bool {
        lock(&self.state).docs.contains_key(path)
    }

    /// How many work-done progress tokens have begun so far.
    pub fn progress_begins(&self) -> u64 {
        lock(&self.state).progress_begins
    }

    /// Whether the server's check ([`ServerSpec::background_progress`]; any
    /// progress when it names none) has begun since `mark`, a value of
    /// [`Server::progress_begins`].
    pub fn check_began_since(&self, mark: u64) -> bool {
        let state = lock(&self.state);
        state.latest_begin.iter().any(|(title, begun)| *begun > mark && self.is_check(title))
    }

    fn is_check(&self, title: &str) -> bool {
        let titles = &self.spec.background_progress;
        titles.is_empty() || titles.iter().any(|t| title.starts_with(t))
    }

    /// The sequence number of the latest publication (any file).
    pub fn publish_seq(&self) -> u64 {
        lock(&self.state).seq
    }

    /// The latest publication for a file.
    pub fn published(&self, path: &Path) -> Option<Published> {
        lock(&self.state).published.get(path).cloned()
    }

    /// For a server that pushes a check's findings beside its own: the latest
    /// publication for a file that held some of the check's, when it came after
    /// the latest check began.
    pub fn published_by_this_check(&self, path: &Path) -> Option<Published> {
        let state = lock(&self.state);
        state.published_checked.get(path).filter(|p| p.seq > state.check_began_at).cloned()
    }

    /// What the server could not load, when it says it loaded the project in
    /// part (rust-analyzer's `experimental/serverStatus` with `health:
    /// "warning"`): its first line, and the last `error:` line of the `cargo`
    /// output it quotes, cut at 500 characters.
    pub fn load_warning(&self) -> Option<String> {
        let message = lock(&self.state).load_warning.clone()?;
        let first = message.lines().next().unwrap_or_default().trim().trim_end_matches(':');
        let error = message.lines().rev().find(|l| l.trim_start().starts_with("error:")).map(str::trim);
        let caused = message.lines().rev().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("Caused by"));
        let mut said = first.to_owned();
        for more in [error, caused].into_iter().flatten() {
            if !said.contains(more) {
                said = format!("{said}: {more}");
            }
        }
        let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
        let cut: String = said.chars().take(500).collect();
        Some(if cut.len() < said.len() { format!("{cut}…") } else { cut })
    }

    /// The messages the server showed (errors and warnings), most recent last.
    /// Why the server could not load the project, when it said so
    /// (rust-analyzer's `experimental/serverStatus` with `health: "error"`).
    /// Its status says only that loading failed; the cause (`cargo
    /// metadata`'s error and what caused it) is the last `error:` it wrote to
    /// stderr, which follows on one line, cut at 500 characters.
    pub fn load_error(&self) -> Option<String> {
        let status = lock(&self.state).load_error.clone()?;
        let tail = self.conn.stderr_tail();
        let Some(at) = tail.rfind("error:") else { return Some(status) };
        let cause = tail[at..].split_whitespace().collect::<Vec<_>>().join(" ");
        let cut: String = cause.chars().take(500).collect();
        let more = if cut.len() < cause.len() { "…" } else { "" };
        Some(format!("{} ({cut}{more})", status.trim_end_matches('.')))
    }

    pub fn messages(&self) -> Vec<String> {
        lock(&self.state).messages.clone()
    }

    /// Kills the server if it went silent after a timeout and does not answer
    /// a probe within `bound` ([`Connection::kill_if_hung`]).
    pub async fn kill_if_hung(&self, bound: Duration) -> bool {
        self.conn.kill_if_hung(bound).await
    }

    /// Asks the server to shut down, then kills its process group.
    pub async fn stop(&self) {
        if self.death().is_none() {
            let _ = self.request_with::<req::Shutdown>((), Duration::from_secs(2)).await;
            self.notify::<note::Exit>(());
        }
        let child = lock(&self.child).take();
        if let Some(mut child) = child
            && tokio::time::timeout(Duration::from_millis(500), child.wait()).await.is_err()
        {
            kill_group(self.pid);
            let _ = child.wait().await;
        }
        kill_group(self.pid);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        kill_group(self.pid);
    }
}

/// SIGKILL to the process group the server leads (it and anything it started).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}

/// `R` sent over `conn` and its answer read as `R::Result`, within `timeout`.
pub(crate) async fn call<R: Request>(
    conn: &Connection,
    server: &'static str,
    params: R::Params,
    timeout: Duration,
) -> Result<R::Result> {
    let method = R::METHOD;
    let params = serde_json::to_value(params).map_err(|e| Error::Protocol {
        server,
        method,
        why: format!("the request could not be written ({e})"),
    })?;
    let answer = conn.request(method, params, timeout).await.map_err(|e| request_error(server, method, e))?;
    crate::protocol::decode(&answer).map_err(|e| {
        let text = answer.to_string();
        let cut: String = text.chars().take(300).collect();
        let more = if cut.len() < text.len() { "…" } else { "" };
        Error::Protocol {
            server,
            method,
            why: format!("its answer does not read as the protocol's ({e}): {cut}{more}"),
        }
    })
}

/// A root as a workspace folder.
fn workspace_folder(root: &Path) -> lsp_types::WorkspaceFolder {
    let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("root").to_string();
    lsp_types::WorkspaceFolder { uri: file_uri(root), name }
}

/// A change on disk as `workspace/didChangeWatchedFiles` tells it.
pub(crate) fn file_event(path: &Path, change: FileChange) -> lsp_types::FileEvent {
    let typ = match change {
        FileChange::Created => lsp_types::FileChangeType::CREATED,
        FileChange::Changed => lsp_types::FileChangeType::CHANGED,
        FileChange::Deleted => lsp_types::FileChangeType::DELETED,
    };
    lsp_types::FileEvent { uri: file_uri(path), typ }
}

pub(crate) fn request_error(server: &'static str, method: &'static str, error: RequestError) -> Error {
    match error {
        RequestError::Timeout(after) => Error::Timeout { server, method, after, busy: None },
        RequestError::Dead(death) => Error::Crashed { server, what: death.what, stderr_tail: death.stderr_tail },
        // Method not found: the server does not implement it.
        RequestError::Response { code: -32601, .. } => Error::Unsupported { server, what: method },
        RequestError::Response { code, message } => Error::Response { server, method, code, message },
    }
}

/// Handles what the server sends besides responses, for as long as it runs:
/// each message is parsed once, here, into what it is.
async fn event_loop(
    mut incoming: mpsc::UnboundedReceiver<Incoming>,
    conn: Connection,
    state: Arc<Mutex<State>>,
    changed: watch::Sender<u64>,
    spec: ServerSpec,
    folders: Arc<Mutex<Vec<PathBuf>>>,
) {
    let bump = |changed: &watch::Sender<u64>| changed.send_modify(|n| *n += 1);
    while let Some(message) = incoming.recv().await {
        match message {
            Incoming::Notification { method, params } => {
                on_notification(ServerNotification::parse(&method, params), &state, &spec);
                bump(&changed);
            }
            Incoming::Request { id, method, params } => {
                let request = ServerRequest::parse(&method, params);
                let folders = lock(&folders).clone();
                let answer = answer_request(&request, &state, &spec, &folders);
                conn.respond(id, answer);
                // A refresh, or a registration: what the server answers may have changed.
                if matches!(
                    request,
                    ServerRequest::DiagnosticRefresh
                        | ServerRequest::RegisterCapability(_)
                        | ServerRequest::UnregisterCapability(_)
                ) {
                    bump(&changed);
                }
            }
        }
    }
}

fn on_notification(notification: ServerNotification, state: &Mutex<State>, spec: &ServerSpec) {
    let mut state = lock(state);
    match notification {
        ServerNotification::PublishDiagnostics(params) => {
            let Some(path) = uri_path(&params.uri) else { return };
            state.seq += 1;
            let seq = state.seq;
            let published = Published { seq, items: params.diagnostics, at: Instant::now() };
            if let Some(own) = spec.pulled_source
                && published.items.iter().any(|d| d.source.as_deref() != Some(own))
            {
                state.published_checked.insert(path.clone(), published.clone());
            }
            state.published.insert(path, published);
        }
        ServerNotification::Progress(params) => {
            use lsp_types::{ProgressParamsValue, WorkDoneProgress};
            let token = match params.token {
                lsp_types::NumberOrString::String(s) => s,
                lsp_types::NumberOrString::Number(n) => n.to_string(),
            };
            let ProgressParamsValue::WorkDone(value) = params.value;
            match value {
                WorkDoneProgress::Begin(begin) => {
                    tracing::debug!(title = %begin.title, message = ?begin.message, "progress begins");
                    state.progress_begins += 1;
                    let order = state.progress_begins;
                    state.latest_begin.insert(begin.title.clone(), order);
                    if spec.background_progress.iter().any(|b| begin.title.starts_with(b)) {
                        state.check_began_at = state.seq;
                    }
                    let progress = Progress {
                        title: begin.title,
                        message: begin.message,
                        percentage: begin.percentage,
                        order: state.progress_begins,
                    };
                    state.progress.insert(token, progress);
                }
                WorkDoneProgress::Report(report) => {
                    if let Some(progress) = state.progress.get_mut(&token) {
                        if report.message.is_some() {
                            progress.message = report.message;
                        }
                        if report.percentage.is_some() {
                            progress.percentage = report.percentage;
                        }
                    }
                }
                WorkDoneProgress::End(_) => {
                    if let Some(progress) = state.progress.remove(&token) {
                        tracing::debug!(title = %progress.title, "progress ends");
                        state.progress_ended.insert(progress.title);
                    }
                }
            }
        }
        ServerNotification::ServerStatus(status) => {
            state.quiescent = status.quiescent;
            let health = status.health.as_deref();
            let message = || status.message.clone().unwrap_or_else(|| "it gave no reason".to_string());
            state.load_error = (health == Some("error")).then(message);
            state.load_warning = (health == Some("warning")).then(message);
        }
        // Errors and warnings only.
        ServerNotification::ShowMessage(message)
            if message.typ == lsp_types::MessageType::ERROR || message.typ == lsp_types::MessageType::WARNING =>
        {
            state.messages.push(message.message);
            let excess = state.messages.len().saturating_sub(5);
            state.messages.drain(..excess);
        }
        ServerNotification::LogMessage(log) => tracing::trace!(message = %log.message, "server log"),
        ServerNotification::ShowMessage(_) => {}
        ServerNotification::Other(method) => tracing::trace!(%method, "notification not acted on"),
    }
}

/// `R`'s answer, as its result type says.
fn answer<R: Request>(result: R::Result) -> std::result::Result<Value, (i64, String)> {
    serde_json::to_value(result).map_err(|e| (-32603, format!("the answer to {} could not be written: {e}", R::METHOD)))
}

/// The answer to every server-to-client request of LSP 3.17; anything else is "method not found".
fn answer_request(
    request: &ServerRequest,
    state: &Mutex<State>,
    spec: &ServerSpec,
    folders: &[PathBuf],
) -> std::result::Result<Value, (i64, String)> {
    match request {
        ServerRequest::Configuration(params) => answer::<req::WorkspaceConfiguration>(
            params.items.iter().map(|item| spec.setting(item.section.as_deref())).collect(),
        ),
        ServerRequest::WorkspaceFolders => {
            answer::<req::WorkspaceFoldersRequest>(Some(folders.iter().map(|f| workspace_folder(f)).collect()))
        }
        ServerRequest::WorkDoneProgressCreate => answer::<req::WorkDoneProgressCreate>(()),
        ServerRequest::RegisterCapability(params) => {
            let mut state = lock(state);
            for registration in &params.registrations {
                state.registrations.insert(registration.id.clone(), registration.method.clone());
                if registration.method == note::DidChangeWatchedFiles::METHOD {
                    let watchers = file_watchers(registration.register_options.clone());
                    state.file_watchers.insert(registration.id.clone(), watchers);
                }
            }
            answer::<req::RegisterCapability>(())
        }
        ServerRequest::UnregisterCapability(params) => {
            let mut state = lock(state);
            // The field's name is misspelt in the protocol ("unregisterations").
            for registration in &params.unregisterations {
                state.registrations.remove(&registration.id);
                state.file_watchers.remove(&registration.id);
            }
            answer::<req::UnregisterCapability>(())
        }
        ServerRequest::DiagnosticRefresh => answer::<req::WorkspaceDiagnosticRefresh>(()),
        ServerRequest::Refresh => Ok(Value::Null),
        ServerRequest::ApplyEdit => answer::<req::ApplyWorkspaceEdit>(lsp_types::ApplyWorkspaceEditResponse {
            applied: false,
            failure_reason: Some(
                "this client applies edits only through lsp_rename, never on a server's request".into(),
            ),
            failed_change: None,
        }),
        // No human to pick an action: null is "none chosen" (LSP `MessageActionItem | null`).
        ServerRequest::ShowMessageRequest => answer::<req::ShowMessageRequest>(None),
        ServerRequest::ShowDocument => answer::<req::ShowDocument>(lsp_types::ShowDocumentResult { success: false }),
        ServerRequest::Invalid { method, why } => Err((-32602, format!("invalid params for {method}: {why}"))),
        ServerRequest::Unknown(method) => Err((-32601, format!("method not found: {method}"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The answer to a request the server sends with `R`'s method.
    fn ask<R: Request>(
        params: Value,
        state: &Mutex<State>,
        spec: &ServerSpec,
    ) -> std::result::Result<Value, (i64, String)> {
        answer_request(&ServerRequest::parse(R::METHOD, params), state, spec, &[PathBuf::from("/tmp/x")])
    }

    #[test]
    fn every_server_request_gets_the_right_shape() {
        let state = Mutex::new(State::default());
        let mut spec = ServerSpec::builtin().remove(0);
        spec.settings = json!({ "a": { "b": 1 } });
        let pull = req::DocumentDiagnosticRequest::METHOD;
        assert_eq!(
            ask::<req::WorkspaceConfiguration>(
                json!({ "items": [{ "section": "a.b" }, { "section": "zz" }] }),
                &state,
                &spec
            ),
            Ok(json!([1, null]))
        );
        assert_eq!(
            ask::<req::WorkspaceFoldersRequest>(json!(null), &state, &spec),
            Ok(json!([{ "uri": "file:///tmp/x", "name": "x" }]))
        );
        assert_eq!(ask::<req::WorkDoneProgressCreate>(json!({ "token": 1 }), &state, &spec), Ok(Value::Null));
        assert_eq!(
            ask::<req::RegisterCapability>(json!({ "registrations": [{ "id": "r1", "method": pull }] }), &state, &spec),
            Ok(Value::Null)
        );
        assert_eq!(lock(&state).registrations.get("r1").map(String::as_str), Some(pull));
        assert_eq!(
            ask::<req::UnregisterCapability>(
                json!({ "unregisterations": [{ "id": "r1", "method": pull }] }),
                &state,
                &spec
            ),
            Ok(Value::Null)
        );
        assert!(lock(&state).registrations.is_empty());
        assert_eq!(ask::<req::WorkspaceDiagnosticRefresh>(json!(null), &state, &spec), Ok(Value::Null));
        assert_eq!(ask::<crate::protocol::FoldingRangeRefresh>(json!(null), &state, &spec), Ok(Value::Null));
        assert_eq!(
            ask::<req::ApplyWorkspaceEdit>(json!({ "edit": {} }), &state, &spec).map(|v| v["applied"].clone()),
            Ok(json!(false))
        );
        assert_eq!(
            ask::<req::ShowMessageRequest>(
                json!({ "type": 1, "message": "m", "actions": [{ "title": "ok" }] }),
                &state,
                &spec
            ),
            Ok(Value::Null)
        );
        assert_eq!(
            ask::<req::ShowDocument>(json!({ "uri": "file:///tmp/x/a" }), &state, &spec),
            Ok(json!({ "success": false }))
        );
        let unknown =
            answer_request(&ServerRequest::parse("fixture/unknown", json!(null)), &state, &spec, &[PathBuf::from("/")]);
        assert_eq!(unknown.map_err(|e| e.0), Err(-32601));
        let invalid = ask::<req::RegisterCapability>(json!({ "registrations": 1 }), &state, &spec);
        assert_eq!(invalid.map_err(|e| e.0), Err(-32602));
    }

    #[test]
    fn registered_file_watchers_decide_what_a_server_hears() {
        let state = Mutex::new(State::default());
        let spec = ServerSpec::builtin().remove(0);
        let root = Path::new("/tmp/x");
        let options = json!({ "watchers": [
            // gopls and pyright register string globs; rust-analyzer relative ones with kinds.
            { "globPattern": "**/*.{go,mod}" },
            { "globPattern": { "baseUri": "file:///tmp/x/sub", "pattern": "*.toml" }, "kind": 4 }
        ] });
        let watch = note::DidChangeWatchedFiles::METHOD;
        let registration = json!({ "registrations": [{ "id": "w1", "method": watch, "registerOptions": options }] });
        assert_eq!(ask::<req::RegisterCapability>(registration, &state, &spec), Ok(Value::Null));
        let watchers: Vec<FileWatcher> = lock(&state).file_watchers["w1"].clone();
        let hears = |path: &str, change| watchers.iter().any(|w| w.matches(root, Path::new(path), change));
        assert!(hears("/tmp/x/cmd/root.go", FileChange::Changed));
        assert!(hears("/tmp/x/go.mod", FileChange::Created));
        assert!(!hears("/tmp/x/README.md", FileChange::Changed));
        assert!(hears("/tmp/x/sub/a.toml", FileChange::Deleted));
        assert!(!hears("/tmp/x/sub/a.toml", FileChange::Changed), "kind 4 is deletes only");
        assert!(!hears("/tmp/x/sub/deeper/a.toml", FileChange::Deleted), "`*` does not cross a `/`");
        let unregister = json!({ "unregisterations": [{ "id": "w1", "method": watch }] });
        assert_eq!(ask::<req::UnregisterCapability>(unregister, &state, &spec), Ok(Value::Null));
        assert!(lock(&state).file_watchers.is_empty());
    }
}
