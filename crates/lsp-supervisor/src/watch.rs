//! The root watched for changes on disk, so the servers see what anyone else
//! (a shell, `git checkout`, a formatter, another tool) changed.
//!
//! Every directory under the root that `.gitignore` does not exclude (and not
//! `.git`) gets a non-recursive inotify watch (`notify`); a directory created
//! later is watched when its event is handled, and the files already in it are
//! reported as created. Events are coalesced per path and delivered about
//! 50 ms after the last one: each running server of the root hears of the files
//! it asked to hear about (`workspace/didChangeWatchedFiles`, by the watchers it
//! registered, else by its languages and project files), and the documents it
//! has open are synced with the disk. [`RootWatcher::catch_up`] delivers what
//! is pending at once; every request calls it first, so a request never runs on
//! a view older than the events already received.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify::event::{CreateKind, ModifyKind, RenameMode};
use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::change::FileChange;
use crate::server::Server;

/// How long the watcher waits after the last event before it delivers.
const QUIET: Duration = Duration::from_millis(50);
/// The file a catch-up creates and removes in the watcher's own directory
/// (outside the root, watched by the same inotify instance): once its removal
/// is seen, every event before it has been read (inotify keeps their order).
const BARRIER: &str = "barrier";
/// How long a catch-up waits for the barrier's event.
const BARRIER_WAIT: Duration = Duration::from_millis(250);

/// What the notify thread hands over.
#[derive(Debug, Default)]
struct Pending {
    files: BTreeMap<PathBuf, FileChange>,
    /// Directories created since, to be watched (the watcher cannot be told
    /// from inside its own event handler).
    dirs: Vec<PathBuf>,
}

/// Where the running servers are found: the supervisor's slots.
pub(crate) type Servers = Arc<dyn Fn() -> Vec<Arc<Server>> + Send + Sync>;

pub(crate) struct RootWatcher {
    root: PathBuf,
    watcher: Mutex<notify::RecommendedWatcher>,
    pending: Arc<Mutex<Pending>>,
    wake: Arc<tokio::sync::Notify>,
    ignore: Arc<Gitignore>,
    servers: Servers,
    /// Held while a batch is delivered, so a catch-up waits for one in flight.
    delivering: tokio::sync::Mutex<()>,
    /// How many directories are watched.
    watched: Mutex<usize>,
    /// How many barrier removals the handler has seen, and a wake-up for each.
    barriers: Arc<(Mutex<u64>, tokio::sync::Notify)>,
    /// The watcher's own directory for the barrier file (removed on drop);
    /// `None` when it could not be made: catch-ups then skip the barrier.
    barrier_dir: Option<PathBuf>,
}

impl std::fmt::Debug for RootWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootWatcher").field("root", &self.root).finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Merges a new event for a path into what is pending for it.
fn merge(files: &mut BTreeMap<PathBuf, FileChange>, path: PathBuf, change: FileChange) {
    use FileChange::{Changed, Created, Deleted};
    let merged = match (files.get(&path).copied(), change) {
        (None, c) => Some(c),
        (Some(Created), Changed) => Some(Created),
        (Some(Created), Deleted) => None,
        (Some(Deleted), Created) => Some(Changed),
        (Some(_), c) => Some(c),
    };
    match merged {
        Some(c) => {
            files.insert(path, c);
        }
        None => {
            files.remove(&path);
        }
    }
}

/// A fresh private directory for the barrier file, in the system's temporary directory.
fn barrier_dir() -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("agent-tools-watch-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).ok().map(|()| dir)
}

fn ignorer(root: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(root);
    for file in [root.join(".gitignore"), root.join(".git/info/exclude")] {
        if file.is_file() {
            // A malformed line is skipped, as git skips it.
            let _ = builder.add(file);
        }
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

fn ignored(ignore: &Gitignore, root: &Path, path: &Path, is_dir: bool) -> bool {
    let Ok(rel) = path.strip_prefix(root) else { return true };
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return true;
    }
    // A build cache (Cargo's `target/`, tagged by the Cache Directory Tagging
    // convention) is output, not source, whether or not `.gitignore` says so.
    if path.ancestors().skip(1).take_while(|d| d.starts_with(root)).any(|d| d.join("CACHEDIR.TAG").is_file()) {
        return true;
    }
    // Our own atomic writes' temporary files.
    if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".agent-tools-tmp")) {
        return true;
    }
    !rel.as_os_str().is_empty() && ignore.matched_path_or_any_parents(rel, is_dir).is_ignore()
}

/// The directories to watch under `dir`, `.gitignore` honoured (nested ones
/// too), `.git` skipped; with `files`, the files found on the way.
fn walk(dir: &Path, files: Option<&mut Vec<PathBuf>>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut found = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .parents(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git" && !e.path().join("CACHEDIR.TAG").is_file())
        .build();
    for entry in walker.flatten() {
        match entry.file_type() {
            Some(t) if t.is_dir() => dirs.push(entry.into_path()),
            Some(t) if t.is_file() => found.push(entry.into_path()),
            _ => {}
        }
    }
    if let Some(files) = files {
        files.extend(found);
    }
    dirs
}

impl Drop for RootWatcher {
    fn drop(&mut self) {
        // The delivery task finds the watcher gone and ends.
        self.wake.notify_one();
        if let Some(dir) = &self.barrier_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl RootWatcher {
    /// Watches `root`; the servers to tell are asked of `servers` at each delivery.
    pub fn start(root: &Path, servers: Servers) -> notify::Result<Arc<RootWatcher>> {
        let pending: Arc<Mutex<Pending>> = Arc::default();
        let wake = Arc::new(tokio::sync::Notify::new());
        let ignore = Arc::new(ignorer(root));
        let barriers: Arc<(Mutex<u64>, tokio::sync::Notify)> = Arc::default();
        let barrier_dir = barrier_dir();
        let handler = {
            let (pending, wake, ignore, root) =
                (Arc::clone(&pending), Arc::clone(&wake), Arc::clone(&ignore), root.to_path_buf());
            let barriers = Arc::clone(&barriers);
            let barrier = barrier_dir.as_ref().map(|d| d.join(BARRIER));
            move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if let Some(barrier) = &barrier
                    && event.paths.contains(barrier)
                {
                    if matches!(event.kind, EventKind::Remove(_)) {
                        *lock(&barriers.0) += 1;
                        barriers.1.notify_waiters();
                    }
                    return;
                }
                let mut pending = lock(&pending);
                let add = |path: &PathBuf, change: FileChange, pending: &mut Pending| {
                    let is_dir = path.is_dir();
                    if ignored(&ignore, &root, path, is_dir) {
                        return;
                    }
                    if is_dir {
                        if change == FileChange::Created {
                            pending.dirs.push(path.clone());
                        }
                        return;
                    }
                    merge(&mut pending.files, path.clone(), change);
                };
                match event.kind {
                    EventKind::Create(CreateKind::Folder) => {
                        for path in &event.paths {
                            if !ignored(&ignore, &root, path, true) {
                                pending.dirs.push(path.clone());
                            }
                        }
                    }
                    EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                        for path in &event.paths {
                            add(path, FileChange::Created, &mut pending);
                        }
                    }
                    EventKind::Modify(ModifyKind::Name(RenameMode::From)) | EventKind::Remove(_) => {
                        for path in &event.paths {
                            // A removed path is no longer a directory to ask about.
                            if !ignored(&ignore, &root, path, false) {
                                merge(&mut pending.files, path.clone(), FileChange::Deleted);
                            }
                        }
                    }
                    EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if event.paths.len() == 2 => {
                        if !ignored(&ignore, &root, &event.paths[0], false) {
                            merge(&mut pending.files, event.paths[0].clone(), FileChange::Deleted);
                        }
                        add(&event.paths[1], FileChange::Created, &mut pending);
                    }
                    EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Name(_)) => {
                        for path in &event.paths {
                            add(path, FileChange::Changed, &mut pending);
                        }
                    }
                    _ => return,
                }
                drop(pending);
                wake.notify_one();
            }
        };
        let mut watcher = notify::recommended_watcher(handler)?;
        let dirs = walk(root, None);
        for dir in &dirs {
            // A directory gone meanwhile is not an error of the watch as a whole.
            if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
                if dirs.first() == Some(dir) {
                    return Err(e);
                }
                tracing::debug!(dir = %dir.display(), error = %e, "not watched");
            }
        }
        let barrier_dir = match barrier_dir {
            Some(dir) if watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() => Some(dir),
            Some(dir) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
            None => None,
        };
        let this = Arc::new(RootWatcher {
            root: root.to_path_buf(),
            watcher: Mutex::new(watcher),
            pending,
            wake,
            ignore,
            servers,
            delivering: tokio::sync::Mutex::new(()),
            watched: Mutex::new(dirs.len()),
            barriers,
            barrier_dir,
        });
        let weak = Arc::downgrade(&this);
        tokio::spawn(async move {
            loop {
                let Some(wake) = weak.upgrade().map(|w| Arc::clone(&w.wake)) else { return };
                wake.notified().await;
                // Quiet for a moment: a checkout writes many files in a row.
                while tokio::time::timeout(QUIET, wake.notified()).await.is_ok() {}
                let Some(watcher) = weak.upgrade() else { return };
                watcher.catch_up().await;
            }
        });
        Ok(this)
    }

    /// How many directories are watched.
    pub fn watched(&self) -> usize {
        *lock(&self.watched)
    }

    /// Waits until the handler has read every event the kernel queued before
    /// now: a file created and removed in the root, and its removal seen
    /// (within [`BARRIER_WAIT`]).
    async fn barrier(&self) {
        let Some(dir) = &self.barrier_dir else { return };
        let seen = *lock(&self.barriers.0);
        let path = dir.join(BARRIER);
        if std::fs::write(&path, b"").is_err() || std::fs::remove_file(&path).is_err() {
            return;
        }
        let deadline = tokio::time::Instant::now() + BARRIER_WAIT;
        while *lock(&self.barriers.0) == seen {
            let notified = self.barriers.1.notified();
            if *lock(&self.barriers.0) != seen {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                tracing::debug!("the watcher's barrier event did not come in time");
                break;
            }
        }
    }

    /// Delivers whatever is pending now, once every event queued before this
    /// call has been read: new directories watched (their files reported as
    /// created), then every running server told.
    pub async fn catch_up(&self) {
        self.barrier().await;
        let _delivering = self.delivering.lock().await;
        let (mut files, dirs) = {
            let mut pending = lock(&self.pending);
            (std::mem::take(&mut pending.files), std::mem::take(&mut pending.dirs))
        };
        for dir in dirs {
            let mut found = Vec::new();
            let new_dirs = walk(&dir, Some(&mut found));
            let mut watcher = lock(&self.watcher);
            for d in &new_dirs {
                if watcher.watch(d, RecursiveMode::NonRecursive).is_ok() {
                    *lock(&self.watched) += 1;
                }
            }
            drop(watcher);
            for file in found {
                if !ignored(&self.ignore, &self.root, &file, false) {
                    merge(&mut files, file, FileChange::Created);
                }
            }
        }
        if files.is_empty() {
            return;
        }
        let changes: Vec<(PathBuf, FileChange)> = files.into_iter().collect();
        tracing::debug!(files = changes.len(), "files changed on disk");
        for server in (self.servers)() {
            server.disk_changed(&changes).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_for_one_path_merge_into_what_a_server_should_hear() {
        use FileChange::{Changed, Created, Deleted};
        let p = PathBuf::from("/r/a.py");
        let mut files = BTreeMap::new();
        merge(&mut files, p.clone(), Created);
        merge(&mut files, p.clone(), Changed);
        assert_eq!(files.get(&p), Some(&Created));
        merge(&mut files, p.clone(), Deleted);
        assert_eq!(files.get(&p), None, "created and deleted in one batch: nothing to hear");
        merge(&mut files, p.clone(), Deleted);
        merge(&mut files, p.clone(), Created);
        assert_eq!(files.get(&p), Some(&Changed), "replaced (git checkout unlinks and writes)");
    }

    #[test]
    fn ignored_paths_follow_gitignore_and_skip_git_and_our_temporaries() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n")?;
        let ignore = ignorer(root);
        assert!(ignored(&ignore, root, &root.join("target/debug/x.rs"), false));
        assert!(ignored(&ignore, root, &root.join("a.log"), false));
        assert!(ignored(&ignore, root, &root.join(".git/index"), false));
        assert!(ignored(&ignore, root, &root.join("src/.a.py.agent-tools-tmp"), false));
        assert!(!ignored(&ignore, root, &root.join("src/a.py"), false));
        assert!(ignored(&ignore, root, Path::new("/elsewhere/a.py"), false));
        Ok(())
    }

    #[tokio::test]
    async fn a_catch_up_sees_its_barrier_and_writes_nothing_into_the_root() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::create_dir(root.join("src"))?;
        let watcher = RootWatcher::start(&root, Arc::new(Vec::new))?;
        assert_eq!(watcher.watched(), 2);
        std::fs::write(root.join("src/a.py"), "x = 1\n")?;
        watcher.catch_up().await;
        assert_eq!(*lock(&watcher.barriers.0), 1, "the barrier's removal was seen");
        assert!(lock(&watcher.pending).files.is_empty(), "what came before the barrier was delivered");
        let mut names: Vec<String> = std::fs::read_dir(&root)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.sort();
        assert_eq!(names, ["src"]);
        let barrier_dir = watcher.barrier_dir.clone();
        drop(watcher);
        assert!(barrier_dir.is_some_and(|d| !d.exists()), "its own directory goes with it");
        Ok(())
    }
}
