//! The language servers a host shares between its runs.
//!
//! A [`ServerPool`] holds one process per (server, root, launch): two
//! supervisors whose runs share a checkout, and that would start the same
//! binary with the same arguments, settings and enclosure there, use one
//! process. Each supervisor claims the slots it uses; a slot no supervisor
//! claims is stopped once it has been unused for the pool's idle time (at once
//! with an idle time of zero), or sooner, least recently used first, while the
//! servers take more memory than the pool's budget. Worktrees of one git
//! repository whose server takes workspace folders at run time share one
//! process too, each worktree a folder of it ([`SlotKey::family`]). What is per
//! run stays with the run: the supervisor's view of the slots (its status lists
//! only the servers it uses), and above it the diagnostics ledger of
//! diagnostics on write.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::results::ServerExit;
use crate::server::Server;
use crate::watch::{RootWatcher, Servers};

/// How often an idle pool looks for servers to stop, at most.
const REAP_EVERY: Duration = Duration::from_secs(5);

/// One server's place in the pool: the process (while it runs) and its history.
#[derive(Default)]
pub(crate) struct Slot {
    pub server: Option<Arc<Server>>,
    pub crashes: u32,
    /// How the last process of this slot ended (a crash, or a start that failed).
    pub last_exit: Option<ServerExit>,
    pub docs: Vec<(PathBuf, crate::spec::Language)>,
    /// Why this root ([`crate::RootChoice::why`]).
    pub why: String,
    /// Processes started for this slot after the first.
    pub restarts: u32,
    /// Processes started for this slot.
    pub starts: u32,
}

/// A slot's key: the server's id, its root, and a digest of how it is launched
/// (the spec, the binary, the search path, the enclosure and the timeouts), so
/// two runs configured differently never share a process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SlotKey {
    pub server: &'static str,
    pub root: PathBuf,
    pub launch: u64,
    /// The same digest with the root left out, and the git repository the root
    /// belongs to: slots of one family are worktrees of one repository that would
    /// launch the server alike, and may share one process as its workspace folders.
    /// `None` outside a git repository, or for an enclosed server (its sandbox is its root's).
    pub family: Option<u64>,
}

fn digest(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

impl SlotKey {
    pub fn new(server: &'static str, root: PathBuf, launch: &impl std::fmt::Debug, shareable: bool) -> SlotKey {
        let text = format!("{launch:?}");
        let family = shareable.then(|| repository(&root)).flatten().map(|repository| {
            let rootless = text.replace(&*root.to_string_lossy(), "<root>");
            digest(&format!("{rootless}\n{}", repository.display()))
        });
        SlotKey { server, launch: digest(&text), root, family }
    }
}

/// The git repository `dir` belongs to: its common directory, the same for every
/// worktree (`.git` is a directory in the main worktree, and a file `gitdir: …`
/// pointing to `<common>/worktrees/<name>`, whose `commondir` leads back, in the others).
pub(crate) fn repository(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.ancestors().map(|d| d.join(".git")).find(|g| g.exists())?;
    if dot_git.is_dir() {
        return dot_git.canonicalize().ok();
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let gitdir = dot_git.parent()?.join(gitdir);
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok();
    let common = match common.as_deref().map(str::trim) {
        Some(rel) if !rel.is_empty() => gitdir.join(rel),
        _ => gitdir,
    };
    common.canonicalize().ok()
}

/// Who uses a slot, and when it was last used.
struct Claim {
    users: HashSet<u64>,
    last_used: Instant,
}

/// Language servers shared by supervisors ([`crate::Supervisor::with_pool`]).
///
/// A supervisor made with [`crate::Supervisor::new`] has a pool of its own,
/// with an idle time of zero: its servers stop when it shuts down or is dropped.
pub struct ServerPool {
    /// How long a server no supervisor claims is kept running.
    idle: Duration,
    pub(crate) slots: tokio::sync::Mutex<HashMap<SlotKey, Slot>>,
    /// One gate per slot, held while its server starts, so starts of
    /// different servers run side by side and one slot never starts twice.
    pub(crate) starting: Mutex<HashMap<SlotKey, Arc<tokio::sync::Mutex<()>>>>,
    claims: Mutex<HashMap<SlotKey, Claim>>,
    /// Every server started, for the watchers to tell (dead ones are skipped).
    live: Arc<Mutex<Vec<Weak<Server>>>>,
    /// One watcher per watched root, shared by the supervisors of that root.
    watchers: Mutex<HashMap<PathBuf, Weak<RootWatcher>>>,
    /// Whether the task that stops idle servers runs.
    reaping: std::sync::atomic::AtomicBool,
    /// The resident memory (bytes) the servers may take together before unclaimed ones
    /// are stopped early, least recently used first; `None`: no budget.
    budget: Option<u64>,
    /// How many unclaimed servers were stopped early to keep under the budget.
    over_budget: AtomicU64,
}

impl std::fmt::Debug for ServerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPool").field("idle", &self.idle).finish_non_exhaustive()
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A new supervisor's id, unique in the process.
pub(crate) fn next_user() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl ServerPool {
    /// A host's idle time by default: ten minutes.
    pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);

    /// A pool that keeps a server no supervisor claims for `idle` (a host's
    /// `lsp.idle_s`), then stops it; zero stops it as soon as the last
    /// supervisor using it shuts down or is dropped.
    pub fn new(idle: Duration) -> ServerPool {
        ServerPool {
            idle,
            slots: tokio::sync::Mutex::default(),
            starting: Mutex::default(),
            claims: Mutex::default(),
            live: Arc::default(),
            watchers: Mutex::default(),
            reaping: std::sync::atomic::AtomicBool::new(false),
            budget: None,
            over_budget: AtomicU64::new(0),
        }
    }

    /// The pool with a memory budget: when the servers' resident memory together (each
    /// process and its children) is over `bytes`, servers no supervisor claims are stopped
    /// before their idle time, least recently used first. A claimed server is never stopped
    /// for it: the runs in use may go over.
    #[must_use]
    pub fn with_memory_budget(mut self, bytes: u64) -> ServerPool {
        self.budget = Some(bytes);
        self
    }

    /// How many unclaimed servers have been stopped early to keep under the memory budget.
    pub fn stopped_over_budget(&self) -> u64 {
        self.over_budget.load(Ordering::Relaxed)
    }

    /// How long a server no supervisor claims is kept running.
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// The servers running now, each with its pid and how many supervisors claim it.
    pub async fn running(&self) -> Vec<(&'static str, PathBuf, Option<u32>, usize)> {
        let slots = self.slots.lock().await;
        let claims = lock(&self.claims);
        let mut out: Vec<_> = slots
            .iter()
            .filter_map(|(key, slot)| {
                let server = slot.server.as_ref().filter(|s| s.death().is_none())?;
                let users = claims.get(key).map_or(0, |c| c.users.len());
                Some((key.server, key.root.clone(), server.pid, users))
            })
            .collect();
        out.sort();
        out
    }

    pub(crate) fn gate(&self, key: &SlotKey) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(lock(&self.starting).entry(key.clone()).or_default())
    }

    /// `user` uses the slot now.
    pub(crate) fn claim(self: &Arc<Self>, key: &SlotKey, user: u64) {
        let mut claims = lock(&self.claims);
        let claim =
            claims.entry(key.clone()).or_insert_with(|| Claim { users: HashSet::new(), last_used: Instant::now() });
        claim.users.insert(user);
        claim.last_used = Instant::now();
        drop(claims);
        self.reap_idle();
    }

    /// Whether `user` has claimed the slot.
    pub(crate) fn claimed_by(&self, key: &SlotKey, user: u64) -> bool {
        lock(&self.claims).get(key).is_some_and(|c| c.users.contains(&user))
    }

    /// How many supervisors claim the slot.
    pub(crate) fn users(&self, key: &SlotKey) -> usize {
        lock(&self.claims).get(key).map_or(0, |c| c.users.len())
    }

    /// `user` no longer uses any slot; the slots left unclaimed start their idle time now.
    pub(crate) fn release(&self, user: u64) -> Vec<SlotKey> {
        let mut freed = Vec::new();
        for (key, claim) in lock(&self.claims).iter_mut() {
            if claim.users.remove(&user) {
                claim.last_used = Instant::now();
                if claim.users.is_empty() {
                    freed.push(key.clone());
                }
            }
        }
        freed
    }

    /// A running server of `key`'s family that takes workspace folders, serving
    /// `key.root` too (added as a folder): a worktree of a repository another run's
    /// worktree already has a server for.
    pub(crate) async fn attach(&self, key: &SlotKey) -> Option<Arc<Server>> {
        let family = key.family?;
        let slots = self.slots.lock().await;
        let (_, slot) = slots.iter().find(|(k, slot)| {
            k.server == key.server
                && k.family == Some(family)
                && k.root != key.root
                && slot.server.as_ref().is_some_and(|s| s.death().is_none() && s.takes_folders())
        })?;
        let server = slot.server.as_ref()?;
        tracing::info!(server = key.server, root = %key.root.display(), with = %server.root.display(), "a worktree joined a running language server");
        Some(Arc::new(server.attach(key.root.clone())))
    }

    /// How many supervisors claim a slot served by `server`'s process (its folders' slots together).
    pub(crate) fn users_of_process(&self, slots: &HashMap<SlotKey, Slot>, server: &Server) -> usize {
        let claims = lock(&self.claims);
        let mut users = HashSet::new();
        for (key, slot) in slots {
            if slot.server.as_ref().is_some_and(|s| s.same_process(server))
                && let Some(claim) = claims.get(key)
            {
                users.extend(claim.users.iter().copied());
            }
        }
        users.len()
    }

    /// Stops the servers of `keys` that no supervisor claims (between the check
    /// and the stop, none can claim one: the slot's start gate is held).
    pub(crate) async fn stop_unclaimed(&self, keys: Vec<SlotKey>) -> Vec<SlotKey> {
        let mut stopped = Vec::new();
        for key in keys {
            let gate = self.gate(&key);
            let Ok(_starting) = gate.try_lock() else { continue };
            if self.users(&key) > 0 {
                continue;
            }
            let slot = self.slots.lock().await.remove(&key);
            lock(&self.claims).remove(&key);
            if let Some(server) = slot.and_then(|s| s.server) {
                tracing::info!(server = key.server, root = %key.root.display(), "stopped a language server no run uses");
                // A folder of a process other folders still use is removed from it; the last one stops it.
                if !server.detach() {
                    server.stop().await;
                }
            }
            stopped.push(key);
        }
        stopped
    }

    /// Starts the task that stops servers unclaimed for the idle time, once (with a
    /// nonzero idle time, and inside a Tokio runtime). It ends with the pool.
    fn reap_idle(self: &Arc<Self>) {
        if (self.idle.is_zero() && self.budget.is_none()) || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if self.reaping.swap(true, Ordering::AcqRel) {
            return;
        }
        let pool = Arc::downgrade(self);
        let mut every = (self.idle / 4).clamp(Duration::from_millis(50), REAP_EVERY);
        if self.budget.is_some() {
            every = every.min(Duration::from_secs(1));
        }
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(pool) = pool.upgrade() else { return };
                let due: Vec<SlotKey> = lock(&pool.claims)
                    .iter()
                    .filter(|(_, c)| c.users.is_empty() && c.last_used.elapsed() >= pool.idle)
                    .map(|(key, _)| key.clone())
                    .collect();
                if !due.is_empty() {
                    pool.stop_unclaimed(due).await;
                }
                if let Some(budget) = pool.budget {
                    pool.keep_under(budget).await;
                }
            }
        });
    }

    /// Stops unclaimed servers, least recently used first, while the servers' resident
    /// memory is over `budget`.
    async fn keep_under(&self, budget: u64) {
        let servers: Vec<(SlotKey, Option<u32>)> = {
            let slots = self.slots.lock().await;
            slots
                .iter()
                .filter_map(|(k, s)| s.server.as_ref().filter(|s| s.death().is_none()).map(|s| (k.clone(), s.pid)))
                .collect()
        };
        // Nothing to stop unless some server no one claims runs: no need to read /proc.
        let unclaimed = {
            let claims = lock(&self.claims);
            servers.iter().any(|(key, _)| claims.get(key).is_none_or(|c| c.users.is_empty()))
        };
        if !unclaimed {
            return;
        }
        let parents = parents();
        let mut counted = HashSet::new();
        let mut sizes: HashMap<SlotKey, u64> = HashMap::new();
        for (key, pid) in &servers {
            // Worktrees' views of one process count it once.
            let size = pid.filter(|p| counted.insert(*p)).map_or(0, |p| tree_rss(p, &parents));
            sizes.insert(key.clone(), size);
        }
        let mut total: u64 = sizes.values().sum();
        if total <= budget {
            return;
        }
        let mut idle: Vec<(Instant, SlotKey)> = lock(&self.claims)
            .iter()
            .filter(|(key, c)| c.users.is_empty() && sizes.contains_key(*key))
            .map(|(key, c)| (c.last_used, key.clone()))
            .collect();
        idle.sort();
        for (_, key) in idle {
            if total <= budget {
                break;
            }
            let size = sizes.get(&key).copied().unwrap_or(0);
            if !self.stop_unclaimed(vec![key.clone()]).await.is_empty() {
                tracing::info!(server = key.server, root = %key.root.display(), bytes = size, budget, "stopped an idle language server to keep under the memory budget");
                self.over_budget.fetch_add(1, Ordering::Relaxed);
                total = total.saturating_sub(size);
            }
        }
    }

    /// A server started: the watchers tell it of changes from now on.
    pub(crate) fn started(&self, server: &Arc<Server>) {
        let mut live = lock(&self.live);
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(server));
    }

    /// The watcher of `root`, started if no supervisor of the pool watches it yet.
    /// It tells the pool's running servers whose root is inside `root`.
    pub(crate) fn watcher(&self, root: &Path) -> notify::Result<Arc<RootWatcher>> {
        let mut watchers = lock(&self.watchers);
        watchers.retain(|_, w| w.strong_count() > 0);
        if let Some(watcher) = watchers.get(root).and_then(Weak::upgrade) {
            return Ok(watcher);
        }
        let live = Arc::clone(&self.live);
        let inside = root.to_path_buf();
        let servers: Servers = Arc::new(move || {
            let live = lock(&live);
            live.iter()
                .filter_map(Weak::upgrade)
                .filter(|s| s.death().is_none() && s.root.starts_with(&inside))
                .collect()
        });
        let watcher = RootWatcher::start(root, servers)?;
        watchers.insert(root.to_path_buf(), Arc::downgrade(&watcher));
        Ok(watcher)
    }
}

/// Every process's parent, from `/proc`.
fn parents() -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`: the comm may hold spaces and parentheses.
        if let Some(ppid) = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok()) {
            out.insert(pid, ppid);
        }
    }
    out
}

/// The resident memory (bytes, `VmRSS`) of `pid` and every process under it.
fn tree_rss(pid: u32, parents: &HashMap<u32, u32>) -> u64 {
    let mut pids = vec![pid];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        pids.extend(parents.iter().filter(|(_, p)| **p == parent).map(|(c, _)| *c));
        i += 1;
    }
    pids.iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .filter_map(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .sum::<u64>()
        * 1024
}
