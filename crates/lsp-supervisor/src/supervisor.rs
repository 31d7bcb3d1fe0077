//! The supervisor: one server process per (server, root), started on first
//! use, restarted after a crash (re-opening its documents) until it crashes
//! too often, and every `lsp` action on top.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use crate::detect::{find_root, resolve_binary, search_path};
use crate::error::{Error, Result};
use crate::results::{Availability, ServerStatus};
use crate::server::Server;
use crate::spec::{Language, ServerSpec};
use crate::uri::path_to_uri;
use crate::watch::{RootWatcher, Servers};

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
    /// Whether the root is watched for changes on disk once a server runs, so
    /// every server hears of them (`workspace/didChangeWatchedFiles`). A host
    /// with its own watcher turns it off and calls [`Supervisor::files_changed`].
    pub watch: bool,
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
            watch: true,
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
    pub(crate) config: SupervisorConfig,
    path: OsString,
    slots: tokio::sync::Mutex<HashMap<(&'static str, PathBuf), Slot>>,
    /// Every server started, for the watcher to tell (dead ones are skipped).
    live: Arc<std::sync::Mutex<Vec<std::sync::Weak<Server>>>>,
    /// The root's watcher, started with the first server; `Err` says why it could not be.
    watcher: std::sync::OnceLock<std::result::Result<Arc<RootWatcher>, String>>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor").field("root", &self.config.root).finish()
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

impl Supervisor {
    pub fn new(config: SupervisorConfig) -> Supervisor {
        let path = search_path(&config.root, &config.extra_path);
        Supervisor {
            config,
            path,
            slots: tokio::sync::Mutex::default(),
            live: Arc::default(),
            watcher: std::sync::OnceLock::new(),
        }
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
        self.catch_up().await;
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
        drop(slots);
        {
            let mut live = self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&server));
        }
        self.start_watching();
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

    /// Starts the root's watcher once (with [`SupervisorConfig::watch`]).
    fn start_watching(&self) {
        if !self.config.watch {
            return;
        }
        self.watcher.get_or_init(|| {
            let live = Arc::clone(&self.live);
            let servers: Servers = Arc::new(move || {
                let live = live.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                live.iter().filter_map(std::sync::Weak::upgrade).filter(|s| s.death().is_none()).collect()
            });
            RootWatcher::start(&self.config.root, servers).map_err(|e| {
                tracing::warn!(root = %self.config.root.display(), error = %e, "the root is not watched");
                format!("the root is not watched ({e}): servers hear only of changes made through this supervisor")
            })
        });
    }

    /// Delivers the changes on disk the watcher has seen and not yet told the
    /// servers, so the next request runs on the disk's view.
    pub(crate) async fn catch_up(&self) {
        if let Some(Ok(watcher)) = self.watcher.get() {
            watcher.catch_up().await;
        }
    }

    /// Whether the root is watched: how many directories, or why not (`None`
    /// before the first server started or with [`SupervisorConfig::watch`] off).
    pub fn watching(&self) -> Option<std::result::Result<usize, String>> {
        self.watcher.get().map(|w| w.as_ref().map(|w| w.watched()).map_err(Clone::clone))
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
