//! What `lsp` shows of its servers (`status`: the root and why, uptime,
//! restarts, the last exit with its stderr tail, why it gave up) and of a
//! workspace symbol search (who answered, what was left out), against the
//! fixture language server (`cargo xtask fixtures` builds it).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_tools::{LspWiring, Registry, Surface, Tier, Workspace};
use lsp_supervisor::{Supervisor, SupervisorConfig};
use serde_json::json;

fn surface(root: &Path, env: &[(&str, &str)]) -> (Surface, Arc<Supervisor>) {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(dir.join("fixture-lsp-server").is_file(), "run `cargo xtask fixtures` first");
    let mut config = SupervisorConfig::new(root);
    config.extra_path = vec![dir];
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        }
    }
    let supervisor = Arc::new(Supervisor::new(config));
    let workspace = Workspace::new(root).unwrap();
    let registry = Registry::builder().with_lsp(LspWiring::new(Arc::clone(&supervisor), workspace)).build().unwrap();
    (Arc::new(registry).surface(Tier::Read), supervisor)
}

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    (dir, root)
}

#[tokio::test]
async fn status_shows_the_root_and_why_restarts_and_the_last_exit() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let (surface, supervisor) = surface(&root, &[("FIXTURE_LSP_CRASH_ON", "textDocument/hover")]);
    let at = json!({ "file": "a.fix", "line": 2, "symbol": "alpha" });
    let call = |action: &str| {
        let mut args = at.clone();
        args["action"] = json!(action);
        surface.call("lsp", args)
    };
    assert!(!call("definition").await.unwrap().is_error);
    let crashed = call("hover").await.unwrap();
    assert!(crashed.is_error && crashed.text.contains("fixture: crashing on textDocument/hover"), "{}", crashed.text);
    assert!(!call("definition").await.unwrap().is_error);
    let status = surface.call("lsp", json!({ "action": "status" })).await.unwrap();
    let text = &status.text;
    assert!(text.contains("  fixture for . (nearest fixture.toml): running, pid "), "{text}");
    assert!(text.contains(", 1 restart, 1 open documents"), "{text}");
    assert!(
        text.contains(
            "    last exit: exited with status 3; its stderr ended with:\n      fixture: crashing on textDocument/hover"
        ),
        "{text}"
    );
    let running = &status.structured.as_ref().unwrap()["running"][0];
    assert_eq!(
        (running["restarts"].as_u64(), running["root_reason"].as_str()),
        (Some(1), Some("nearest fixture.toml"))
    );
    assert!(
        text.contains(
            "  fixture     fixture                     used for . (nearest fixture.toml): fixture-lsp-server "
        ),
        "{text}"
    );
    supervisor.shutdown().await;
}

#[tokio::test]
async fn status_says_why_a_server_was_given_up() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let (surface, supervisor) = surface(&root, &[("FIXTURE_LSP_CRASH_ALWAYS", "1")]);
    for _ in 0..4 {
        let r = surface.call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 2, "symbol": "alpha" }));
        assert!(r.await.unwrap().is_error);
    }
    let text = surface.call("lsp", json!({ "action": "status" })).await.unwrap().text;
    assert!(text.contains(": gave up after 3 crashes in a row; `reload` tries again, 2 restarts"), "{text}");
    assert!(
        text.contains(
            "    gave up because: exited with status 3; its stderr ended with:\n      fixture: crashing on initialized"
        ),
        "{text}"
    );
    supervisor.shutdown().await;
}

#[tokio::test]
async fn workspace_symbols_name_who_answered() {
    let (_dir, root) = project(&[("a.fix", "def xalp\ndef alpha\ndef beta\n"), ("package.json", "{}")]);
    let (surface, supervisor) = surface(&root, &[]);
    let r = surface.call("lsp", json!({ "action": "symbols", "query": "ALP" })).await.unwrap();
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        r.text, "symbols matching \"ALP\" (fixture for .): 2\nfunction alpha  a.fix:2:5\nfunction xalp  a.fix:1:5",
        "{}",
        r.text
    );
    let structured = r.structured.unwrap();
    assert_eq!(structured["servers"], json!(["fixture for ."]));
    assert_eq!(structured["symbols"][0]["dependency"], false);
    supervisor.shutdown().await;
}
