//! Supervisors sharing a host's servers through a `ServerPool`, against the
//! fixture language server: one process per (server, root, launch), each
//! supervisor's view limited to the servers it uses, and a server no
//! supervisor uses stopped after the pool's idle time. Needs `cargo xtask fixtures`.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_supervisor::{ServerPool, Supervisor, SupervisorConfig};

/// A project with `fixture.toml` and one file defining and using `target`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    std::fs::write(root.join("a.fix"), "def target\n\nuse target\n").unwrap();
    (dir, root)
}

fn config(root: &Path) -> SupervisorConfig {
    let bin = common::fixture_bin_dir().join("fixture-lsp-server");
    assert!(bin.is_file(), "{} is missing: run `cargo xtask fixtures` first", bin.display());
    let mut config = common::config(root);
    config.request_timeout = Duration::from_secs(10);
    config
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// The pid of the fixture server `sup` uses, after one definition through it.
async fn serve_once(sup: &Supervisor, root: &Path) -> u32 {
    let nav = sup.definition(&root.join("a.fix"), 3, "target").await.unwrap();
    assert_eq!(nav.locations.items[0].line, 1, "{nav:?}");
    let status = sup.status().await;
    assert_eq!(status.len(), 1, "{status:?}");
    status[0].pid.expect("a running server")
}

/// Waits up to 10 s for `pid` to be gone.
async fn gone(pid: u32) -> bool {
    for _ in 0..200 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn runs_on_one_checkout_share_one_process_and_each_sees_only_its_own() {
    let (_dir, root) = project();
    let (_other_dir, other) = project();
    let pool = Arc::new(ServerPool::new(Duration::from_secs(600)));
    let a = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let b = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let pid = serve_once(&a, &root).await;
    assert_eq!(serve_once(&b, &root).await, pid, "the second run joins the first's server");
    assert_eq!(a.status().await[0].shared_with, 1);
    assert_eq!(b.status().await[0].shared_with, 1);
    // The run that joined watches the root too, and goes on watching it when the first run goes.
    assert!(matches!(b.watching(), Some(Ok(1))), "{:?}", b.watching());
    drop(a);
    assert!(matches!(b.watching(), Some(Ok(1))), "{:?}", b.watching());

    // Another checkout, and the same checkout with a server launched differently, get their own.
    let c = Supervisor::with_pool(config(&other), Arc::clone(&pool));
    let c_pid = serve_once(&c, &other).await;
    let mut changed = config(&root);
    for spec in changed.servers.iter_mut().filter(|s| s.id == "fixture") {
        spec.env.push(("FIXTURE_LSP_ENCODING".into(), "utf-8".into()));
    }
    let d = Supervisor::with_pool(changed, Arc::clone(&pool));
    let d_pid = serve_once(&d, &root).await;
    assert!(c_pid != pid && d_pid != pid && c_pid != d_pid, "{pid} {c_pid} {d_pid}");
    assert_eq!(c.status().await[0].root, other, "a run sees only the servers it uses");
    assert_eq!(c.status().await[0].shared_with, 0);
    let running: Vec<(u32, usize)> = pool.running().await.iter().map(|r| (r.2.unwrap(), r.3)).collect();
    assert_eq!(running.len(), 3, "{running:?}");
    assert!(running.contains(&(pid, 1)) && running.contains(&(c_pid, 1)) && running.contains(&(d_pid, 1)));

    // A run's reload stops only the servers it uses.
    let stopped = c.reload(None).await;
    assert_eq!(stopped, vec![("fixture", other.clone())]);
    assert!(gone(c_pid).await && alive(pid) && alive(d_pid));
}

#[tokio::test]
async fn a_server_no_run_uses_stops_after_the_idle_time_and_the_next_run_starts_it_again() {
    let (_dir, root) = project();
    let pool = Arc::new(ServerPool::new(Duration::from_millis(300)));
    let a = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let b = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let pid = serve_once(&a, &root).await;
    assert_eq!(serve_once(&b, &root).await, pid);

    // One run ends: the other still uses the server, past the idle time.
    a.shutdown().await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(alive(pid), "a server another run uses is kept");
    assert_eq!(b.status().await[0].shared_with, 0);
    assert!(a.status().await.is_empty(), "a run that ended lists no server");

    // The last run goes: the server stops once it has been unused for the idle time.
    drop(b);
    assert!(alive(pid), "kept for the idle time, for the next run");
    assert!(gone(pid).await, "stopped after the idle time");
    assert!(pool.running().await.is_empty());

    let c = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let again = serve_once(&c, &root).await;
    assert_ne!(again, pid);
}

#[tokio::test]
async fn a_supervisors_own_servers_stop_at_its_shutdown() {
    let (_dir, root) = project();
    let own = Supervisor::new(config(&root));
    let pid = serve_once(&own, &root).await;
    own.shutdown().await;
    assert!(!alive(pid), "stopped before shutdown returned");
    assert!(own.status().await.is_empty());
    // A later request starts it again.
    assert_ne!(serve_once(&own, &root).await, pid);
}

/// `git init` and one commit in `root`, then a second worktree beside it; returns its path.
fn with_worktree(root: &Path) -> PathBuf {
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=test", "-c", "user.email=test@localhost"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "the project"]);
    let tree = root.with_file_name("worktree");
    git(root, &["worktree", "add", "-q", "--detach", &tree.to_string_lossy()]);
    tree.canonicalize().unwrap()
}

fn places(nav: &lsp_supervisor::Navigation) -> Vec<String> {
    nav.locations.items.iter().map(|l| format!("{}:{}:{}", l.path.display(), l.line, l.column)).collect()
}

/// Two runs on two git worktrees of one repository: one pyright serves both, each
/// worktree a workspace folder of it, and neither run's answers carry the other's paths.
#[tokio::test(flavor = "multi_thread")]
async fn worktrees_of_one_repository_share_one_pyright_and_see_only_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().canonicalize().unwrap().join("main");
    common::copy_dir(&common::workspace().join("fixtures/lsp/python"), &main);
    let tree = with_worktree(&main);
    let pool = Arc::new(ServerPool::new(Duration::from_secs(1)));
    let supervisor = |root: &Path| {
        let mut config = common::config(root);
        config.preferred.insert(lsp_supervisor::Language::Python, "pyright".into());
        Supervisor::with_pool(config, Arc::clone(&pool))
    };
    let (a, b) = (supervisor(&main), supervisor(&tree));
    if !common::usable(&a, &main, lsp_supervisor::Language::Python, &["pyright"]).await {
        return;
    }
    let report = "geometry/report.py";
    let nav = a.definition(&main.join(report), 15, "total_area").await.unwrap();
    assert_eq!(places(&nav), [format!("{}/geometry/shapes.py:17:5", main.display())]);
    let nav = b.definition(&tree.join(report), 15, "total_area").await.unwrap();
    assert_eq!(places(&nav), [format!("{}/geometry/shapes.py:17:5", tree.display())]);
    let (sa, sb) = (a.status().await, b.status().await);
    assert_eq!((sa.len(), sb.len()), (1, 1), "{sa:?} {sb:?}");
    assert_eq!(sa[0].pid, sb[0].pid, "one pyright for both worktrees");
    assert_eq!((sa[0].root.clone(), sb[0].root.clone()), (main.clone(), tree.clone()));
    assert_eq!((sa[0].shared_with, sb[0].shared_with), (1, 1));
    assert_eq!(pool.running().await.len(), 2, "a slot per worktree, one process");

    // References and workspace symbols, dependencies included, stay in the asking run's worktree.
    let refs = b.references(&tree.join(report), 15, "total_area", 50).await.unwrap();
    assert_eq!(refs.locations.items.len(), 5, "{:?}", places(&refs));
    assert!(refs.locations.items.iter().all(|l| l.path.starts_with(&tree)), "{:?}", places(&refs));
    let scope = lsp_supervisor::SymbolScope {
        file: None,
        language: Some(lsp_supervisor::Language::Python),
        dependencies: true,
        cap: 50,
    };
    let found = b.search_symbols("total_area", &scope).await.unwrap();
    assert!(!found.symbols.items.is_empty());
    assert!(found.symbols.items.iter().all(|s| !s.location.path.starts_with(&main)), "{:?}", found.symbols.items);

    // The first run ends: after the idle time its folder leaves the server, which goes on serving the other.
    let pid = sa[0].pid.unwrap();
    a.shutdown().await;
    drop(a);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let running = pool.running().await;
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!((running[0].1.clone(), running[0].2), (tree.clone(), Some(pid)));
    let nav = b.definition(&tree.join(report), 15, "total_area").await.unwrap();
    assert_eq!(places(&nav), [format!("{}/geometry/shapes.py:17:5", tree.display())]);
    assert_eq!(b.status().await[0].pid, Some(pid));
}

/// Over the pool's memory budget, a server no run uses is stopped before its idle time;
/// one a run uses is kept, over the budget or not.
#[tokio::test]
async fn over_the_memory_budget_an_unused_server_stops_early_and_a_used_one_stays() {
    let (_dir, root) = project();
    let (_other_dir, other) = project();
    let pool = Arc::new(ServerPool::new(Duration::from_secs(600)).with_memory_budget(1));
    let a = Supervisor::with_pool(config(&root), Arc::clone(&pool));
    let b = Supervisor::with_pool(config(&other), Arc::clone(&pool));
    let released = serve_once(&a, &root).await;
    let kept = serve_once(&b, &other).await;
    a.shutdown().await;
    assert!(gone(released).await, "the unused server is stopped long before its 600 s");
    // The stop is counted once the stopping returns, which can be a moment after the process is gone.
    for _ in 0..200 {
        if pool.stopped_over_budget() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(pool.stopped_over_budget(), 1);
    assert!(alive(kept), "the server a run uses is kept over the budget");
    assert_eq!(serve_once(&b, &other).await, kept);
}
