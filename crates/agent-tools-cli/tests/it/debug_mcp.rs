//! `debug` in the command: `serve` keeps one session across calls (the
//! fixture debug adapter stands in for `dart` on the server's PATH), and
//! `status` lists the debug adapters with the half of detection each misses.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::common::{call, text};

const PROGRAM: &str = include_str!("../../../../fixtures/debug/fixture/main.dart");

/// `<target>/debug/fixture-dap-adapter`, built by `cargo xtask fixtures`.
fn fixture_adapter() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().and_then(Path::parent).unwrap().join("fixture-dap-adapter");
    assert!(binary.exists(), "{} is missing: run `cargo xtask fixtures` first", binary.display());
    binary
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pubspec.yaml"), "name: fixture\n").unwrap();
    std::fs::write(dir.path().join("main.dart"), PROGRAM).unwrap();
    dir
}

async fn connect(root: &Path, path: &std::ffi::OsStr) -> RunningService<RoleClient, ()> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).env("AGENT_TOOLS_LOG", "warn").env("PATH", path);
    });
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

#[tokio::test]
async fn serve_keeps_the_debug_session_across_calls() {
    let root = project();
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixture_adapter(), bin.path().join("dart")).unwrap();
    let mut dirs = vec![bin.path().to_path_buf()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(dirs).unwrap();
    let client = connect(root.path(), &path).await;

    let set = call(&client, "debug", json!({ "op": "breakpoints", "file": "main.dart", "lines": [5] })).await;
    assert_eq!(text(&set), "breakpoints in main.dart at lines 5; sent to the adapter at launch");
    let launched = call(&client, "debug", json!({ "op": "launch", "program": "main.dart" })).await;
    assert_eq!(launched.is_error, Some(false), "{}", text(&launched));
    assert!(text(&launched).ends_with("stopped (breakpoint) at main.dart:5 in greet, thread 1"), "{}", text(&launched));

    // Later calls see the same session.
    let stack = call(&client, "debug", json!({ "op": "stack" })).await;
    assert_eq!(text(&stack), "#0 main.dart:5 in greet (frame_id 1001)\n#1 main.dart:4 in main (frame_id 1000)");
    assert_eq!(stack.structured_content.clone().unwrap()["total"], 2);
    let again = call(&client, "debug", json!({ "op": "launch", "program": "main.dart" })).await;
    assert_eq!(again.is_error, Some(true));
    assert!(text(&again).contains("already running"), "{}", text(&again));
    let stepped = call(&client, "debug", json!({ "op": "step_out" })).await;
    assert_eq!(text(&stepped), "stopped (step) at main.dart:9 in main, thread 1");
    let scopes = call(&client, "debug", json!({ "op": "scopes", "frame_id": 1000 })).await;
    let reference = scopes.structured_content.clone().unwrap()["scopes"][0]["reference"].as_u64().unwrap();
    let variables = call(&client, "debug", json!({ "op": "variables", "reference": reference })).await;
    assert_eq!(text(&variables), "count: int = 41\nname: str = fixture");
    let finished = call(&client, "debug", json!({ "op": "continue" })).await;
    assert_eq!(text(&finished), "ended: the program finished (exit code 0); op output shows what it printed");
    let output = call(&client, "debug", json!({ "op": "output" })).await;
    assert_eq!(text(&output), "[stdout]\nhello from the fixture\nin greet\n[stderr]\nwarning on stderr\n");
    client.cancel().await.unwrap();
}

#[test]
fn status_lists_the_debug_adapters_and_why_not() {
    let root = project();
    let empty = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["status", "--json"])
        .current_dir(root.path())
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let status: Value = serde_json::from_slice(&output.stdout).unwrap();
    let adapters = status["debug_adapters"].as_array().unwrap();
    let ids: Vec<&str> = adapters.iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["dart", "debugpy", "lldb", "delve"]);
    assert_eq!(
        adapters[0]["detail"],
        "not usable: pubspec.yaml at the root, but no dart on PATH (the Dart SDK is not installed here)"
    );
    assert_eq!(adapters[0]["marker"], "pubspec.yaml");
    assert_eq!(adapters[3]["detail"], "not usable: no root marker (go.mod) and no dlv on PATH (apt install delve)");
    let text = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["status"])
        .current_dir(root.path())
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("debug adapters for debug (started on launch or attach):\ndart         not usable: pubspec.yaml"),
        "{text}"
    );
}
