//! `lsp` and diagnostics on write through a surface when a language has a
//! primary server and helpers: Python with pyright and ruff, the built-in
//! default when both are installed, on `fixtures/lsp/python` (copied to a
//! temporary directory). Navigation comes from pyright; ruff's lint and its
//! fix come beside pyright's answers, each item naming its server. A server
//! missing here fails the test under `CI=true` and skips it otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{DiagnosticsOnWrite, LspWiring, Registry, Surface, Tier, Workspace};
use lsp_supervisor::{Language, Supervisor, SupervisorConfig};
use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "__pycache__" || name == ".ruff_cache" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// A write surface over a copy of `fixtures/lsp/python` with the built-in
/// servers for Python (none chosen); `None` when pyright or ruff is not usable here.
async fn surface() -> Option<(tempfile::TempDir, PathBuf, Surface, Arc<Supervisor>)> {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&workspace_root().join("fixtures/lsp/python"), dir.path());
    let root = dir.path().canonicalize().unwrap();
    let tools = workspace_root().join(".tools");
    let mut config = SupervisorConfig::new(&root);
    config.extra_path = vec![tools.join("node/node_modules/.bin"), tools.join("venv/bin")];
    config.request_timeout = Duration::from_secs(60);
    config.diagnostics_timeout = Duration::from_secs(60);
    let supervisor = Arc::new(Supervisor::new(config));
    let availability = supervisor.availability(&root).await;
    for server in ["pyright", "ruff"] {
        let entry = availability.iter().find(|a| a.language == Language::Python && a.server == server).unwrap();
        if let Err(why) = &entry.binary {
            let message = format!("{server} is not usable here: {why}; run `cargo xtask setup`");
            assert!(std::env::var_os("CI").is_none(), "{message}");
            eprintln!("skipped: {message}");
            return None;
        }
    }
    let workspace = Workspace::new(&root).unwrap();
    let diagnostics = Arc::new(DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
    let registry = Registry::builder()
        .with_lsp(LspWiring::new(Arc::clone(&supervisor), workspace.clone()))
        .with_checked_file_tools(workspace, diagnostics)
        .build()
        .unwrap();
    Some((dir, root, Arc::new(registry).surface(Tier::Write), supervisor))
}

#[tokio::test(flavor = "multi_thread")]
async fn ruff_fixes_and_lints_beside_pyright_and_each_item_names_its_server() {
    let Some((_dir, _root, surface, supervisor)) = surface().await else { return };
    let lsp = async |args: Value| {
        let r = surface.call("lsp", args).await.unwrap();
        assert!(!r.is_error, "{}", r.text);
        r
    };

    let r = lsp(json!({ "action": "code_actions", "file": "geometry/broken.py", "line": 3, "symbol": "os" })).await;
    let value = r.structured.as_ref().unwrap();
    let actions = value["actions"].as_array().unwrap();
    assert!(
        actions.iter().any(|a| a["server"] == "ruff" && a["title"] == "Ruff (F401): Remove unused import: `os`"),
        "{value}"
    );
    assert_eq!(value["helpers_failed"], json!([]));
    assert!(r.text.contains("- Ruff (F401): Remove unused import: `os` [quickfix]"), "{}", r.text);
    assert!(r.text.contains("(ruff)"), "{}", r.text);

    let r =
        lsp(json!({ "action": "definition", "file": "geometry/report.py", "line": 15, "symbol": "total_area" })).await;
    let value = r.structured.as_ref().unwrap();
    assert_eq!(value["server"], "pyright");
    assert_eq!(value["locations"][0]["path"], "geometry/shapes.py");
    assert_eq!(value["locations"][0]["line"], 17);

    let r = lsp(json!({ "action": "diagnostics", "file": "geometry/broken.py" })).await;
    let value = r.structured.as_ref().unwrap();
    assert_eq!(
        (&value["server"], &value["helpers"], &value["complete"]),
        (&json!("pyright"), &json!(["ruff"]), &json!(true))
    );
    let found: Vec<(String, u64, String)> = value["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != "hint")
        .map(|d| {
            let server = d["server"].as_str().unwrap().to_string();
            (server, d["location"]["line"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(found, [("ruff".into(), 3, "F401".into()), ("pyright".into(), 7, "reportAssignmentType".into())]);
    assert!(r.text.starts_with("geometry/broken.py: "), "{}", r.text);
    assert!(r.text.contains("(pyright + ruff)"), "{}", r.text);

    // A write that adds an unused import: the write's result has ruff's F401, named as ruff's.
    let r = surface
        .call(
            "edit",
            json!({ "path": "geometry/report.py", "old_string": "from geometry.shapes", "new_string": "import json\n\nfrom geometry.shapes" }),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{}", r.text);
    let entry = &r.structured.as_ref().unwrap()["diagnostics"][0];
    assert_eq!(
        (&entry["status"], &entry["server"], &entry["helpers"]),
        (&json!("new"), &json!("pyright"), &json!(["ruff"])),
        "{entry}"
    );
    let new: Vec<(String, u64, String)> = entry["new"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != "hint")
        .map(|d| {
            let server = d["server"].as_str().unwrap().to_string();
            (server, d["location"]["line"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(new, [("ruff".into(), 3, "F401".into())], "{entry}");
    assert!(r.text.contains("new diagnostics in geometry/report.py (pyright + ruff):"), "{}", r.text);
    assert!(r.text.contains("`json` imported but unused"), "{}", r.text);
    assert!(r.text.contains("from ruff)"), "{}", r.text);
    supervisor.shutdown().await;
}
