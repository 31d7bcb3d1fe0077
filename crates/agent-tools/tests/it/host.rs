//! `Host::open_run`: runs opened on one host share its language servers and parse
//! trees and nothing else, and closing a run lets go of what it used. Against the
//! fixture language server (`cargo xtask fixtures` builds it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_tools::{AstmatchWiring, Host, HostConfig, LspCaps, Run, RunLsp, RunSpec, Tier, Workspace};
use lsp_supervisor::SupervisorConfig;
use serde_json::json;

fn fixture_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(dir.join("fixture-lsp-server").is_file(), "run `cargo xtask fixtures` first");
    dir
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    std::fs::write(root.join("a.fix"), "def alpha\nalpha\n").unwrap();
    std::fs::write(root.join("m.py"), "def f(x):\n    return g(x)\n").unwrap();
    (dir, root)
}

/// A run at `root` with the structural tools, the language servers and the file tools.
fn open(host: &Host, root: &Path) -> Run {
    let workspace = Workspace::new(root).unwrap();
    let mut config = SupervisorConfig::new(root);
    config.extra_path = vec![fixture_dir()];
    let mut spec = RunSpec::new(workspace.clone(), Tier::Write);
    spec.search = Some(AstmatchWiring::new(workspace));
    spec.lsp = Some(RunLsp { config, caps: LspCaps::default() });
    spec.file_tools = true;
    host.open_run(spec).unwrap()
}

#[tokio::test]
async fn runs_on_one_checkout_share_the_hosts_server_and_parse_trees() {
    let (_dir, root) = project();
    let host = Host::new(HostConfig { lsp_idle: Duration::ZERO, ..HostConfig::default() });
    let (a, b) = (open(&host, &root), open(&host, &root));
    let definition = json!({ "action": "definition", "file": "a.fix", "line": 2, "symbol": "alpha" });
    for run in [&a, &b] {
        let r = run.surface().call("lsp", definition.clone()).await.unwrap();
        assert_eq!(r.text, "definition of a.fix:2:1 `alpha`: 1\na.fix:1:5  def alpha");
    }
    let running = host.server_pool().running().await;
    assert_eq!(running.len(), 1, "one fixture server for both runs: {running:?}");
    assert_eq!((running[0].0, running[0].3), ("fixture", 2), "claimed by both runs: {running:?}");
    let r = b.surface().call("lsp", json!({ "action": "status" })).await.unwrap();
    assert!(r.text.contains("shared with 1 other run"), "{}", r.text);

    // The second run's search reads the tree the first one parsed.
    let search = json!({ "pattern": "g($X)", "language": "python" });
    let first = a.surface().call("ast_grep", search.clone()).await.unwrap();
    assert!(first.text.contains("m.py:2"), "{}", first.text);
    let before = host.parse_cache().stats();
    let second = b.surface().call("ast_grep", search).await.unwrap();
    assert_eq!(second.text, first.text);
    let after = host.parse_cache().stats();
    assert_eq!((after.hits - before.hits, after.misses - before.misses), (1, 0), "{before:?} → {after:?}");

    // What a run holds stays its own: a's staged edit is unknown to b.
    let staged = a
        .surface()
        .call("ast_edit", json!({ "pattern": "g($X)", "rewrite": "h($X)", "language": "python" }))
        .await
        .unwrap();
    let id = staged.structured.as_ref().unwrap()["edit_id"].as_str().unwrap().to_owned();
    let r = b.surface().call("resolve", json!({ "edit_id": id, "action": "accept" })).await.unwrap();
    assert!(r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(root.join("m.py")).unwrap(), "def f(x):\n    return g(x)\n");

    // Closing a run lets go of the server; it stops only when no run uses it.
    a.close().await;
    let running = host.server_pool().running().await;
    assert_eq!(running.iter().map(|r| r.3).collect::<Vec<_>>(), [1], "b still uses it: {running:?}");
    let r = b.surface().call("lsp", definition).await.unwrap();
    assert!(!r.is_error, "{}", r.text);
    b.close().await;
    assert_eq!(host.server_pool().running().await, [], "no run uses it, and the host keeps none idle");
}
