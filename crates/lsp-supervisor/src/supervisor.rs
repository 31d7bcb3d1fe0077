//! The supervisor: one server process per (server, root), started on first
//! use, restarted after a crash (re-opening its documents) until it crashes
//! too often, and every `lsp` action on top.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::change::FileChange;
use crate::detect::{RootChoice, choose_root, project_search_path, resolve_binary};
use crate::error::{Error, Result};
use crate::pool::{ServerPool, SlotKey};
use crate::results::{Availability, HelperFailure, ServerExit, ServerStatus};
use crate::server::Server;
use crate::spec::{Language, ServerSpec};
use crate::watch::RootWatcher;

/// How long files opened after an edit of ours are waited for to be indexed
/// ([`ServerSpec::opens_changed_files`]).
const OPENED_INDEXED: Duration = Duration::from_secs(10);

/// What a running server is busy with ([`Supervisor::activity`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The server's id (`rust-analyzer`).
    pub server: &'static str,
    /// The root it serves, absolute.
    pub root: PathBuf,
    /// Its progress: `Indexing: 40/120 (33%)`.
    pub what: String,
    /// The progress's percentage (0–100), when it gives one.
    pub percentage: Option<u32>,
}

/// How a supervisor finds and drives its servers.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// The run's working directory; servers start for roots inside it.
    pub root: PathBuf,
    /// The servers known, in order of preference per language ([`ServerSpec::builtin`]).
    pub servers: Vec<ServerSpec>,
    /// The server chosen for a language (by id); otherwise the first usable in `servers` order.
    /// It is the language's primary server: navigation, hover, symbols and rename come from it alone.
    pub preferred: HashMap<Language, String>,
    /// The helper servers of a language (by id), in order: their diagnostics and code
    /// actions are added to the primary's, each item naming its server. A helper
    /// that cannot start, crashes or times out leaves the primary's answer as it
    /// is, and the result names it. A language absent here takes the servers
    /// whose [`ServerSpec::helps`] lists it, when they are usable (a missing one is
    /// then left out without a word), unless `preferred` chooses its server.
    pub helpers: HashMap<Language, Vec<String>>,
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
    /// Bytes of a project checker's stdout, and of its stderr, read (default 64 MiB,
    /// 67 108 864): `pyright --outputjson` and `cargo check`'s JSON messages take a few MB
    /// for thousands of findings, and a checker runs the project's code (build scripts,
    /// proc macros), which may print without end. The rest is dropped as it arrives; a
    /// cut run says so in [`ProjectDiagnostics::failure`](crate::ProjectDiagnostics).
    pub checker_output_limit: usize,
    /// Whether the root is watched for changes on disk once a server runs, so
    /// every server hears of them (`workspace/didChangeWatchedFiles`). A host
    /// with its own watcher turns it off and calls [`Supervisor::files_changed`].
    pub watch: bool,
    /// Where the project checkers (`diagnostics` with `"*"`: `cargo check`, which runs build
    /// scripts and proc macros, `tsc`, `pyright`, `go vet`) run; `None` is the host. An
    /// enclosure that is not available fails the check; nothing runs unenclosed.
    pub enclosure: Option<enclosure::Enclosure>,
    /// Whether the language servers run in [`SupervisorConfig::enclosure`] too. Off by default:
    /// some servers need the network or a cache outside the root (clangd's index in
    /// `$XDG_CACHE_HOME`), which a bwrap sandbox hides.
    pub enclose_servers: bool,
    /// Per server id, whether it runs in the enclosure, over [`SupervisorConfig::enclose_servers`]
    /// (a server that needs the network left out, or one trusted less put in).
    pub enclosed_servers: HashMap<String, bool>,
}

impl SupervisorConfig {
    /// The defaults for a run whose working directory is `root`: every built-in
    /// server, none preferred, no enclosure, the root watched; requests time out
    /// after 30 s, a start after 60 s, a diagnostics wait after 20 s, a project
    /// checker after 300 s (its output read up to 64 MiB); a list settles after
    /// 30 ms of quiet (250 ms for an empty one); a server is given up after 3
    /// crashes in a row.
    pub fn new(root: impl Into<PathBuf>) -> SupervisorConfig {
        SupervisorConfig {
            root: root.into(),
            servers: ServerSpec::builtin(),
            preferred: HashMap::new(),
            helpers: HashMap::new(),
            extra_path: Vec::new(),
            request_timeout: Duration::from_secs(30),
            init_timeout: Duration::from_secs(60),
            diagnostics_timeout: Duration::from_secs(20),
            settle: Duration::from_millis(30),
            settle_empty: Duration::from_millis(250),
            max_crashes: 3,
            checker_timeout: Duration::from_secs(300),
            checker_output_limit: 64 << 20,
            watch: true,
            enclosure: None,
            enclose_servers: false,
            enclosed_servers: HashMap::new(),
        }
    }
}

/// Supervises the language servers of one checkout.
pub struct Supervisor {
    pub(crate) config: SupervisorConfig,
    /// Where its servers run: its own, or a host's shared by its runs.
    pool: Arc<ServerPool>,
    /// Its id in the pool's claims.
    user: u64,
    /// The root's watcher, started with the first server; `Err` says why it could not be.
    watcher: std::sync::OnceLock<std::result::Result<Arc<RootWatcher>, String>>,
    /// Each (server, root, binary)'s slot key, made once: it reads the disk (the git repository).
    keys: std::sync::Mutex<HashMap<(&'static str, PathBuf, PathBuf), SlotKey>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Its servers' idle time starts now; a supervisor's own pool stops them as it drops.
        self.pool.release(self.user);
    }
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
    /// A supervisor with servers of its own, stopped when it shuts down or is dropped.
    pub fn new(config: SupervisorConfig) -> Supervisor {
        Supervisor::with_pool(config, Arc::new(ServerPool::new(Duration::ZERO)))
    }

    /// A supervisor whose servers come from `pool`, shared with the pool's other
    /// supervisors: a server the same root would start the same way is started once.
    /// Its status, activity and reload cover only the servers it has used.
    pub fn with_pool(config: SupervisorConfig, pool: Arc<ServerPool>) -> Supervisor {
        Supervisor {
            config,
            pool,
            user: crate::pool::next_user(),
            watcher: std::sync::OnceLock::new(),
            keys: std::sync::Mutex::default(),
        }
    }

    /// The pool its servers come from.
    pub fn pool(&self) -> &Arc<ServerPool> {
        &self.pool
    }

    /// The configuration the supervisor was made with.
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

    /// The helper servers of a language, by id: the configured ones, or the
    /// built-in defaults (whether each was configured), without the primary.
    pub(crate) fn helper_ids(&self, language: Language) -> (Vec<&str>, bool) {
        if let Some(ids) = self.config.helpers.get(&language) {
            return (ids.iter().map(String::as_str).collect(), true);
        }
        if self.config.preferred.contains_key(&language) {
            return (Vec::new(), false);
        }
        let ids = self.config.servers.iter().filter(|s| s.helps.contains(&language)).map(|s| s.id).collect();
        (ids, false)
    }

    /// The helper servers of a file, started (or restarted) if need be, other
    /// than `primary`: each running, or why not. A default helper that is not
    /// usable here (no binary, no root marker) is left out; a configured one is
    /// a failure.
    pub(crate) async fn helpers_for(
        &self,
        path: &Path,
        language: Language,
        primary: &str,
    ) -> Vec<std::result::Result<Arc<Server>, HelperFailure>> {
        let (ids, configured) = self.helper_ids(language);
        let mut out = Vec::new();
        for id in ids.into_iter().filter(|id| *id != primary) {
            let spec = self.config.servers.iter().find(|s| s.id == id && s.languages.contains(&language));
            let Some(spec) = spec else {
                if configured {
                    let why = format!("no server {id} is known for {language}");
                    out.push(Err(HelperFailure { server: id.to_owned(), why }));
                }
                continue;
            };
            let Some(choice) = choose_root(spec, &self.config.root, path) else {
                if configured {
                    let why = format!(
                        "no root marker ({}) between the file and the workspace root",
                        spec.root_markers.join(", ")
                    );
                    out.push(Err(HelperFailure { server: spec.id.to_owned(), why }));
                }
                continue;
            };
            let search = project_search_path(&choice.dir, &self.config.root, &self.config.extra_path);
            let binary = match resolve_binary(spec, &choice.dir, &search).await {
                Ok(binary) => binary,
                Err(e) => {
                    if configured {
                        out.push(Err(HelperFailure { server: spec.id.to_owned(), why: e.to_string() }));
                    }
                    continue;
                }
            };
            out.push(
                self.ensure(spec, choice, binary.path, &search)
                    .await
                    .map_err(|e| HelperFailure { server: spec.id.to_owned(), why: e.to_string() }),
            );
        }
        out
    }

    /// Which server would serve files of each language under `dir`, and why others would not.
    pub async fn availability(&self, dir: &Path) -> Vec<Availability> {
        let mut out: Vec<Availability> = Vec::new();
        for language in Language::all() {
            let first = out.len();
            let mut chosen_seen = false;
            for spec in self.config.servers.iter().filter(|s| s.languages.contains(&language)) {
                let preferred_ok = self.config.preferred.get(&language).is_none_or(|id| id == spec.id);
                let choice = choose_root(spec, &self.config.root, dir);
                let reason = choice.as_ref().map(|c| c.why.clone());
                let root = choice.map(|c| c.dir).ok_or_else(|| {
                    let place = if dir == self.config.root {
                        format!("in {}", dir.display())
                    } else {
                        format!("from {} up to the workspace root", dir.display())
                    };
                    format!("no root marker ({}) {place}", spec.root_markers.join(", "))
                });
                let projects = if root.is_err() { project_roots(spec, dir) } else { Vec::new() };
                let project = root.as_ref().unwrap_or(&self.config.root);
                let path = project_search_path(project, &self.config.root, &self.config.extra_path);
                let binary = resolve_binary(spec, project, &path).await;
                let mut entry = Availability {
                    language,
                    server: spec.id,
                    chosen: false,
                    helper: false,
                    root,
                    reason,
                    projects,
                    binary,
                };
                entry.chosen = entry.usable() && preferred_ok && !chosen_seen;
                chosen_seen |= entry.chosen;
                out.push(entry);
            }
            let (helpers, _) = self.helper_ids(language);
            for entry in &mut out[first..] {
                entry.helper = !entry.chosen && helpers.contains(&entry.server);
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
            let Some(choice) = choose_root(spec, &self.config.root, path) else {
                why.push(format!(
                    "{}: no root marker ({}) between the file and the workspace root",
                    spec.id,
                    spec.root_markers.join(", ")
                ));
                continue;
            };
            // The project's own tools first (its `.venv/bin`, `node_modules/.bin`).
            let search = project_search_path(&choice.dir, &self.config.root, &self.config.extra_path);
            match resolve_binary(spec, &choice.dir, &search).await {
                Ok(binary) => return Ok((self.ensure(spec, choice, binary.path, &search).await?, language)),
                Err(e) => why.push(format!("{}: {e}", spec.id)),
            }
        }
        if why.is_empty() {
            why.push(format!("no server configured for {language}"));
        }
        Err(Error::NoServer { language, why: why.join("; ") })
    }

    async fn ensure(
        &self,
        spec: &ServerSpec,
        choice: RootChoice,
        binary: PathBuf,
        search: &OsString,
    ) -> Result<Arc<Server>> {
        let root = choice.dir;
        let enclosed = self.config.enclosed_servers.get(spec.id).copied().unwrap_or(self.config.enclose_servers);
        let enclosure = self.config.enclosure.as_ref().filter(|_| enclosed);
        let key = {
            let mut keys = crate::pool::lock(&self.keys);
            let known = keys.entry((spec.id, root.clone(), binary.clone()));
            known
                .or_insert_with(|| {
                    // clangd's launch links its compilation database outside the root: made on a miss only.
                    let launch = crate::detect::launch_spec(spec, &root);
                    let launch =
                        (&launch, &binary, search, enclosure, self.config.request_timeout, self.config.init_timeout);
                    SlotKey::new(spec.id, root.clone(), &launch, enclosure.is_none())
                })
                .clone()
        };
        self.pool.claim(&key, self.user);
        let gate = self.pool.gate(&key);
        let _starting = gate.lock().await;
        // A server that went silent after a timeout is probed before it is used again (without
        // the slots locked): a hung one is killed here, and restarted below like a crashed one.
        let suspect = self.pool.slots.lock().await.get(&key).and_then(|slot| slot.server.clone());
        if let Some(server) = suspect {
            server.kill_if_hung(self.config.request_timeout.min(crate::transport::HUNG_PROBE)).await;
            // One that exited between requests is dead, even before its reader says so.
            server.settled_death().await;
        }
        let docs = {
            let mut slots = self.pool.slots.lock().await;
            let slot = slots.entry(key.clone()).or_default();
            if slot.why.is_empty() {
                slot.why = choice.why;
            }
            if let Some(server) = &slot.server {
                match server.death() {
                    None => {
                        let server = Arc::clone(server);
                        drop(slots);
                        // A run that joins another's server watches its root too: the
                        // watcher is the pool's, and lives as long as one run holds it.
                        self.start_watching();
                        return Ok(server);
                    }
                    Some(death) => {
                        slot.crashes = if server.answered.load(Ordering::Relaxed) { 1 } else { slot.crashes + 1 };
                        slot.last_exit = Some(ServerExit { what: death.what.clone(), stderr_tail: death.stderr_tail });
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
                    last: slot.last_exit.as_ref().map(ServerExit::describe).unwrap_or_default(),
                });
            }
            slot.restarts += u32::from(slot.starts > 0);
            slot.starts += 1;
            std::mem::take(&mut slot.docs)
        };
        // A worktree of a repository whose server runs for another worktree joins it;
        // else it starts, without the slots locked: other servers start and answer meanwhile.
        let started = match self.pool.attach(&key).await {
            Some(joined) => Ok(joined),
            None => Server::start(
                crate::detect::launch_spec(spec, &root),
                root,
                binary,
                search,
                self.config.request_timeout,
                self.config.init_timeout,
                enclosure,
            )
            .await
            .map(Arc::new),
        };
        let mut slots = self.pool.slots.lock().await;
        let slot = slots.entry(key).or_default();
        let server = match started {
            Ok(server) => server,
            Err(e) => {
                let exit = match &e {
                    Error::Crashed { what, stderr_tail, .. } => {
                        Some(ServerExit { what: what.clone(), stderr_tail: stderr_tail.clone() })
                    }
                    Error::Timeout { .. } => Some(ServerExit { what: e.to_string(), stderr_tail: String::new() }),
                    _ => None,
                };
                if let Some(exit) = exit {
                    slot.crashes += 1;
                    slot.last_exit = Some(exit);
                }
                slot.docs = docs;
                return Err(e);
            }
        };
        for (path, language) in docs {
            if path.exists() {
                server.sync(&path, language).await?;
            }
        }
        slot.server = Some(Arc::clone(&server));
        drop(slots);
        self.pool.started(&server);
        self.start_watching();
        Ok(server)
    }

    /// What each running server is busy with now, as its own work-done
    /// progress says it (`$/progress` title, message and percentage, or
    /// "loading the project"): for showing a waiting caller.
    /// It never waits: while a server is being started (its slot held), it
    /// says nothing.
    pub fn activity(&self) -> Vec<Activity> {
        let Ok(slots) = self.pool.slots.try_lock() else { return Vec::new() };
        let mut out: Vec<Activity> = slots
            .iter()
            .filter(|(key, _)| self.pool.claimed_by(key, self.user))
            .filter_map(|(_, slot)| slot.server.as_ref())
            .filter(|server| server.death().is_none())
            .filter_map(|server| {
                server.busy().map(|what| Activity {
                    server: server.spec.id,
                    root: server.root.clone(),
                    what,
                    percentage: server.busy_percentage(),
                })
            })
            .collect();
        out.sort_by(|a, b| (a.server, &a.root).cmp(&(b.server, &b.root)));
        out
    }

    /// Every slot's state.
    pub async fn status(&self) -> Vec<ServerStatus> {
        let starting: Vec<SlotKey> = {
            let gates = crate::pool::lock(&self.pool.starting);
            gates.iter().filter(|(_, gate)| gate.try_lock().is_err()).map(|(key, _)| key.clone()).collect()
        };
        let slots = self.pool.slots.lock().await;
        let mut out: Vec<ServerStatus> = slots
            .iter()
            .filter(|(key, _)| self.pool.claimed_by(key, self.user))
            .map(|(key, slot)| {
                let (id, root) = (&key.server, &key.root);
                let server = slot.server.as_ref();
                let dead = server.and_then(|s| s.death());
                let gave_up = slot.crashes >= self.config.max_crashes;
                let state = match (server, &dead) {
                    (Some(_), None) => "running".to_string(),
                    (Some(_), Some(d)) => format!("crashed ({}); restarts on next use", d.what),
                    (None, _) if starting.contains(key) => "starting".to_string(),
                    (None, _) if gave_up => {
                        format!("gave up after {} crashes in a row; `reload` tries again", slot.crashes)
                    }
                    (None, _) => "stopped".to_string(),
                };
                let last_exit = dead
                    .as_ref()
                    .map(|d| ServerExit { what: d.what.clone(), stderr_tail: d.stderr_tail.clone() })
                    .or_else(|| slot.last_exit.clone());
                let spec = self.config.servers.iter().find(|s| s.id == *id);
                let first_load = spec
                    .and_then(|s| s.first_load_timeout)
                    .filter(|t| *t > self.config.request_timeout)
                    .map(|t| t.as_millis());
                ServerStatus {
                    server: id,
                    root: root.clone(),
                    root_reason: slot.why.clone(),
                    binary: server.map(|s| s.binary.clone()),
                    state,
                    pid: server.and_then(|s| s.pid).filter(|_| dead.is_none()),
                    encoding: server.map(|s| s.encoding),
                    busy: server.filter(|_| dead.is_none()).and_then(|s| s.busy()),
                    load: server.filter(|_| dead.is_none()).map(|s| s.load()).and_then(|l| match l {
                        crate::server::Load::Ready => None,
                        crate::server::Load::Partial(what) => Some(format!("partly loaded, still {what}")),
                        crate::server::Load::Loading(what) => Some(format!("loading: {what}")),
                    }),
                    open_documents: server.map(|s| s.open_docs().len()).unwrap_or(0),
                    crashes: slot.crashes,
                    restarts: slot.restarts,
                    last_crash: last_exit.as_ref().map(|e| e.what.clone()),
                    last_exit: last_exit.clone(),
                    gave_up: gave_up.then(|| last_exit.as_ref().map(ServerExit::describe).unwrap_or_default()),
                    uptime_ms: server.filter(|_| dead.is_none()).map(|s| s.started.elapsed().as_millis()),
                    first_load_timeout_ms: first_load,
                    messages: server.map(|s| s.messages()).unwrap_or_default(),
                    shared_with: server
                        .map_or_else(|| self.pool.users(key), |s| self.pool.users_of_process(&slots, s))
                        .saturating_sub(1),
                }
            })
            .collect();
        out.sort_by(|a, b| (a.server, &a.root).cmp(&(b.server, &b.root)));
        out
    }

    /// Stops the servers whose root contains `dir` (all when `None`) and forgets their crashes;
    /// they start again on next use. Returns the (server, root) pairs stopped.
    pub async fn reload(&self, dir: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
        // Detection runs again: a binary installed or fixed since is probed anew.
        crate::detect::clear_caches();
        let mut slots = self.pool.slots.lock().await;
        let keys: Vec<SlotKey> = slots
            .keys()
            .filter(|key| self.pool.claimed_by(key, self.user))
            .filter(|key| dir.is_none_or(|d| d.starts_with(&key.root) || key.root.starts_with(d)))
            .cloned()
            .collect();
        let mut stopped = Vec::new();
        for key in keys {
            if let Some(slot) = slots.remove(&key) {
                // A worktree's folder of a process that serves others is removed from it only.
                if let Some(server) = slot.server
                    && !server.detach()
                {
                    server.stop().await;
                }
                stopped.push((key.server, key.root));
            }
        }
        stopped
    }

    /// Releases every server it used: one no other supervisor of its pool uses is
    /// stopped now when the pool's idle time is zero (a supervisor's own pool),
    /// else once it has been unused that long. A later request claims a server again.
    pub async fn shutdown(&self) {
        let freed = self.pool.release(self.user);
        if self.pool.idle().is_zero() {
            self.pool.stop_unclaimed(freed).await;
        }
    }

    /// Starts the root's watcher once (with [`SupervisorConfig::watch`]).
    fn start_watching(&self) {
        if !self.config.watch {
            return;
        }
        self.watcher.get_or_init(|| {
            self.pool.watcher(&self.config.root).map_err(|e| {
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
        let servers: Vec<Arc<Server>> = self
            .pool
            .slots
            .lock()
            .await
            .iter()
            .filter(|(key, _)| self.pool.claimed_by(key, self.user))
            .filter_map(|(_, s)| s.server.clone())
            .collect();
        for server in servers {
            let events: Vec<lsp_types::FileEvent> = changes
                .iter()
                .filter(|(p, _)| p.starts_with(&server.root))
                .map(|(p, change)| crate::server::file_event(p, *change))
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
            server.notify::<lsp_types::notification::DidChangeWatchedFiles>(lsp_types::DidChangeWatchedFilesParams {
                changes: events,
            });
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
