//! `lsp`, `lsp_rename` and diagnostics on write through a surface, against the
//! fixture language server (`cargo xtask fixtures` builds it): the ledger's
//! rules (new, repeated, moved, fixed and reintroduced, pending), the
//! navigation argument rules, and tiers.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{DiagnosticsOnWrite, LspWiring, Registry, Surface, Tier, Workspace};
use lsp_supervisor::{Supervisor, SupervisorConfig};
use serde_json::{Value, json};

fn fixture_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(dir.join("fixture-lsp-server").is_file(), "run `cargo xtask fixtures` first");
    dir
}

fn surface(root: &Path, env: &[(&str, &str)], diagnostics_timeout: Duration) -> (Surface, Arc<Supervisor>) {
    let mut config = SupervisorConfig::new(root);
    config.extra_path = vec![fixture_dir()];
    config.diagnostics_timeout = diagnostics_timeout;
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        }
    }
    let supervisor = Arc::new(Supervisor::new(config));
    let workspace = Workspace::new(root).unwrap();
    let diagnostics = Arc::new(DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
    let registry = Registry::builder()
        .with_lsp(LspWiring::new(Arc::clone(&supervisor), workspace.clone()))
        .with_checked_file_tools(workspace, diagnostics)
        .build()
        .unwrap();
    (Arc::new(registry).surface(Tier::Write), supervisor)
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    std::fs::write(root.join("a.fix"), "def alpha\nWARN W1: old warning\nalpha\n").unwrap();
    (dir, root)
}

/// The `(severity, code, message, line)` of each new diagnostic of a write's result.
fn new_diagnostics(result: &agent_tools::ToolResult) -> (String, Vec<(String, String, String, u64)>) {
    assert!(!result.is_error, "{}", result.text);
    let entry = &result.structured.as_ref().unwrap()["diagnostics"][0];
    let status = entry["status"].as_str().unwrap().to_string();
    let new = entry["new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap_or("").to_string(),
                d["message"].as_str().unwrap().to_string(),
                d["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    (status, new)
}

fn err(code: &str, message: &str, line: u64) -> (String, String, String, u64) {
    ("error".into(), code.into(), message.into(), line)
}

#[tokio::test]
async fn writes_report_exactly_the_diagnostics_they_introduce() {
    let (_dir, root) = project();
    let (surface, supervisor) = surface(&root, &[], Duration::from_secs(10));
    let write =
        async |content: &str| surface.call("write", json!({ "path": "a.fix", "content": content })).await.unwrap();

    // The existing warning is the baseline, not new; the introduced error is.
    let r = write("def alpha\nWARN W1: old warning\nalpha\nERROR E1: broken\n").await;
    assert_eq!(new_diagnostics(&r), ("new".into(), vec![err("E1", "broken", 4)]));
    assert!(
        r.text.contains("new diagnostics in a.fix (fixture):\na.fix:4:1 error[E1]: broken (fixture)"),
        "{}",
        r.text
    );

    // A second identical error in the same file is new.
    let r = write("def alpha\nWARN W1: old warning\nalpha\nERROR E1: broken\nERROR E1: broken\n").await;
    assert_eq!(new_diagnostics(&r), ("new".into(), vec![err("E1", "broken", 5)]));

    // Both errors moved down two lines: nothing new.
    let r = write("def alpha\n\n\nWARN W1: old warning\nalpha\nERROR E1: broken\nERROR E1: broken\n").await;
    assert_eq!(new_diagnostics(&r), ("no new".into(), vec![]));
    assert!(
        r.text.ends_with("no new diagnostics in a.fix (fixture)\nno new diagnostics in other files (fixture)"),
        "{}",
        r.text
    );

    // Fixed, then reintroduced: new again.
    let r = write("def alpha\nalpha\n").await;
    assert_eq!(new_diagnostics(&r), ("no new".into(), vec![]));
    assert!(r.text.ends_with("no new diagnostics in a.fix (fixture); 3 earlier diagnostics gone\nno new diagnostics in other files (fixture)"), "{}", r.text);
    let r = surface
        .call(
            "edit",
            json!({ "path": "a.fix", "old_string": "alpha\nalpha", "new_string": "alpha\nERROR E1: broken\nalpha" }),
        )
        .await
        .unwrap();
    assert_eq!(new_diagnostics(&r), ("new".into(), vec![err("E1", "broken", 2)]));
    // The old warning came back too: it had left the ledger.
    let r = write("def alpha\nERROR E1: broken\nalpha\nWARN W1: old warning\n").await;
    let (_, new) = new_diagnostics(&r);
    assert_eq!(new, vec![("warning".into(), "W1".into(), "old warning".into(), 4)]);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn a_slow_server_gives_pending_never_clean() {
    let (_dir, root) = project();
    let (surface, supervisor) = surface(&root, &[("FIXTURE_LSP_PUBLISH_DELAY_MS", "4000")], Duration::from_millis(600));
    let r = surface.call("write", json!({ "path": "a.fix", "content": "def alpha\nERROR E1: late\n" })).await.unwrap();
    let (status, new) = new_diagnostics(&r);
    assert_eq!((status.as_str(), new.len()), ("pending", 0));
    assert!(r.text.contains("diagnostics pending for a.fix"), "{}", r.text);
    assert!(!r.text.contains("no new"), "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn navigation_needs_a_symbol_and_reports_the_column_used() {
    let (_dir, root) = project();
    let (surface, supervisor) = surface(&root, &[], Duration::from_secs(10));
    let r = surface.call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3 })).await.unwrap();
    assert!(r.is_error && r.text.contains("definition needs `symbol`"), "{}", r.text);
    let r = surface
        .call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "beta" }))
        .await
        .unwrap();
    assert!(r.is_error && r.text.contains("`beta` does not occur on line 3"), "{}", r.text);
    let r = surface
        .call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 4, "symbol": "alpha" }))
        .await
        .unwrap();
    // The file ends with a newline after its third line: three lines, as `wc -l` counts; paths relative.
    assert!(r.is_error && r.text.contains("line 4 is out of range: a.fix has 3 lines"), "{}", r.text);
    let r = surface
        .call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "  " }))
        .await
        .unwrap();
    assert!(r.is_error && r.text.contains("symbol must name something"), "{}", r.text);
    std::fs::create_dir(root.join("sub")).unwrap();
    let r = surface.call("lsp", json!({ "action": "symbols", "file": "sub" })).await.unwrap();
    assert!(r.is_error && r.text.starts_with("sub is a directory: `file` names one source file"), "{}", r.text);
    let r = surface
        .call("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "alpha" }))
        .await
        .unwrap();
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.text, "definition of a.fix:3:1 `alpha`: 1\na.fix:1:5  def alpha");
    let s: &Value = r.structured.as_ref().unwrap();
    assert_eq!(s["locations"][0]["line"], 1);
    let r = surface
        .call("lsp", json!({ "action": "references", "file": "a.fix", "line": 1, "symbol": "alpha" }))
        .await
        .unwrap();
    assert_eq!(r.structured.as_ref().unwrap()["total"], 2, "{}", r.text);
    let r =
        surface.call("lsp", json!({ "action": "hover", "file": "a.fix", "line": 3, "symbol": "alpha" })).await.unwrap();
    assert!(r.text.contains("def alpha") && r.text.contains("(line 1)"), "{}", r.text);
    let r = surface.call("lsp", json!({ "action": "symbols", "query": "alp" })).await.unwrap();
    assert_eq!(r.structured.as_ref().unwrap()["symbols"][0]["name"], "alpha", "{}", r.text);
    let r = surface.call("lsp", json!({ "action": "status" })).await.unwrap();
    assert!(r.text.contains("fixture for . (nearest fixture.toml): running"), "{}", r.text);
    let r = surface
        .call("lsp_rename", json!({ "file": "a.fix", "line": 3, "symbol": "alpha", "new_name": "omega" }))
        .await
        .unwrap();
    assert_eq!(
        r.text, "renamed `alpha` to `omega` (a.fix:3:1 `alpha`; 2 edits in 1 file):\nchanged a.fix",
        "{}",
        r.text
    );
    assert_eq!(std::fs::read_to_string(root.join("a.fix")).unwrap(), "def omega\nWARN W1: old warning\nomega\n");
    let r = surface
        .call("lsp_rename", json!({ "file": "a.fix", "line": 2, "symbol": "WARN", "new_name": "x" }))
        .await
        .unwrap();
    assert!(r.is_error, "{}", r.text);
    let r = surface
        .call("lsp_rename", json!({ "file": "a.fix", "line": 3, "symbol": "omega", "new_name": "1bad" }))
        .await
        .unwrap();
    assert!(
        r.is_error && r.text.contains("`1bad` is not a name a symbol can have (it starts with a digit)"),
        "{}",
        r.text
    );
    assert_eq!(std::fs::read_to_string(root.join("a.fix")).unwrap(), "def omega\nWARN W1: old warning\nomega\n");
    supervisor.shutdown().await;
}

#[tokio::test]
async fn rename_is_write_tier_and_lsp_is_read_tier() {
    let (_dir, root) = project();
    let (surface, _supervisor) = surface(&root, &[], Duration::from_secs(10));
    let registry = Arc::clone(surface.registry());
    let read = registry.surface(Tier::Read);
    let names: Vec<&str> = read.list().iter().map(|s| s.name).collect();
    assert!(names.contains(&"lsp") && !names.contains(&"lsp_rename") && !names.contains(&"write"), "{names:?}");
    let r = read
        .call("lsp_rename", json!({ "file": "a.fix", "line": 1, "symbol": "alpha", "new_name": "b" }))
        .await
        .unwrap();
    assert!(r.is_error && r.text.contains("write tier"), "{}", r.text);
}

#[tokio::test]
async fn a_baseline_that_could_not_be_read_is_not_taken_as_empty() {
    let (_dir, root) = project();
    // Still indexing when the baseline's wait runs out; done by the time the write is checked.
    let (surface, supervisor) = surface(&root, &[("FIXTURE_LSP_INDEX_MS", "2500")], Duration::from_millis(1500));
    let r = surface
        .call(
            "write",
            json!({ "path": "a.fix", "content": "def alpha\nWARN W1: old warning\nalpha\nERROR E1: broken\n" }),
        )
        .await
        .unwrap();
    let (status, new) = new_diagnostics(&r);
    assert_eq!(status, "unknown baseline", "{}", r.text);
    assert_eq!(new.len(), 2, "{new:?}");
    assert!(r.text.contains("could not be read, so some may be older"), "{}", r.text);
    // Now the ledger knows the file: the next write reports only its own change.
    let r = surface
        .call("write", json!({ "path": "a.fix", "content": "def alpha\nWARN W1: old warning\nalpha\nERROR E1: broken\nERROR E2: more\n" }))
        .await
        .unwrap();
    assert_eq!(new_diagnostics(&r), ("new".into(), vec![err("E2", "more", 5)]));
    supervisor.shutdown().await;
}

/// While a call waits for a server that is still loading, the progress
/// reports carry the server's own `$/progress` (title and percentage, as
/// `progress`/`total`); a call without a listener gets none.
#[tokio::test]
async fn a_call_waiting_for_a_loading_server_reports_its_progress() {
    let (_dir, root) = project();
    let (surface, supervisor) = surface(&root, &[("FIXTURE_LSP_INDEX_MS", "4000")], Duration::from_secs(10));
    let surface = surface
        .with_pacing(agent_tools::Pacing { first_after: Duration::from_millis(200), ..agent_tools::Pacing::default() });
    let reports = Arc::new(std::sync::Mutex::new(Vec::<agent_tools::Progress>::new()));
    let sink = {
        let reports = Arc::clone(&reports);
        agent_tools::ProgressSink::new(move |p| reports.lock().unwrap().push(p))
    };
    let args = json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "alpha" });
    let result = surface.call_with_progress("lsp", args, Some(sink)).await.unwrap();
    assert!(!result.is_error, "{}", result.text);
    assert!(result.text.contains("a.fix:1:5"), "{}", result.text);
    let reports = reports.lock().unwrap().clone();
    // The pacer puts the elapsed time first: `3 s: fixture: Indexing: fixture files (50%)`.
    let indexing: Vec<&agent_tools::Progress> =
        reports.iter().filter(|p| p.message.contains(": fixture: Indexing: fixture files (")).collect();
    assert!(!indexing.is_empty(), "no report of the server's indexing in {reports:?}");
    for p in &indexing {
        let percent = p.progress.unwrap_or(-1.0);
        assert!(p.message.ends_with(&format!("({percent}%)")), "{p:?}");
        assert_eq!(p.total, Some(100.0), "{p:?}");
    }
    supervisor.shutdown().await;
}

/// Every action's text and structured value over the fixture server, and the file tools'
/// diagnostics on write, as the golden transcript (but `status`, whose other rows are this machine's).
#[tokio::test]
async fn transcript() {
    let (_dir, root) = project();
    let (surface, supervisor) = surface(&root, &[], Duration::from_secs(10));
    let mut transcript = crate::golden::Transcript::new(&[&root]);
    let calls = [
        ("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "alpha" })),
        ("lsp", json!({ "action": "definition", "file": "a.fix", "line": 3, "symbol": "beta" })),
        ("lsp", json!({ "action": "references", "file": "a.fix", "line": 1, "symbol": "alpha" })),
        ("lsp", json!({ "action": "hover", "file": "a.fix", "line": 3, "symbol": "alpha" })),
        ("lsp", json!({ "action": "symbols", "query": "alp" })),
        ("lsp", json!({ "action": "symbols", "file": "a.fix" })),
        ("lsp", json!({ "action": "diagnostics", "file": "a.fix" })),
        ("lsp", json!({ "action": "code_actions", "file": "a.fix", "line": 2 })),
        ("write", json!({ "path": "a.fix", "content": "def alpha\nWARN W1: old warning\nalpha\nERROR E1: broken\n" })),
        ("edit", json!({ "path": "a.fix", "old_string": "ERROR E1: broken\n", "new_string": "" })),
        ("apply_patch", json!({ "patch": "*** Begin Patch\n*** Add File: b.fix\n+def beta\n+alpha\n*** End Patch\n" })),
        ("lsp_rename", json!({ "file": "a.fix", "line": 1, "symbol": "alpha", "new_name": "gamma" })),
        ("lsp", json!({ "action": "definition", "file": "missing.fix", "line": 1, "symbol": "x" })),
    ];
    for (tool, args) in calls {
        let result = surface.call(tool, args.clone()).await.unwrap();
        transcript.record(tool, &args, &result);
    }
    supervisor.shutdown().await;
    insta::assert_snapshot!(transcript.finish());
}
