//! `agent-tools serve` driven by a second real client, the official TypeScript
//! MCP SDK (`tests/node/sdk_client.mjs`, the SDK from `.tools/node`, which
//! `cargo xtask setup` installs): a cell that runs past the client's request
//! timeout returns because progress reset the timer, so does a human's
//! answer given after that timeout, a call without a progress token hears
//! none, and a runaway cell
//! cancelled through the SDK's `AbortSignal` frees the kernel, whose next
//! cell answers with the state set before. The client's timeout and the
//! cell's sleep are short here (3 s, 6 s) and set by
//! `AGENT_TOOLS_TEST_SDK_TIMEOUT_MS` and `AGENT_TOOLS_TEST_SDK_SLEEP_S`.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `.tools/node/node_modules` when node and the SDK are there. Missing, the
/// test fails under `CI=true` and says what is missing elsewhere.
fn sdk() -> Option<PathBuf> {
    let modules = workspace_root().join(".tools/node/node_modules");
    let node = Command::new("node").arg("--version").output().is_ok_and(|out| out.status.success());
    let sdk = modules.join("@modelcontextprotocol/sdk/package.json").exists();
    if node && sdk {
        return Some(modules);
    }
    let message = format!(
        "{} missing: run `cargo xtask setup` (it installs @modelcontextprotocol/sdk into .tools/node)",
        if node { "the TypeScript MCP SDK is" } else { "node is" }
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn the_typescript_sdk_keeps_a_long_cell_alive_by_progress_and_cancels_a_runaway_one() {
    let Some(node_modules) = sdk() else { return };
    let dir = tempfile::tempdir().unwrap();
    let timeout_ms = setting("AGENT_TOOLS_TEST_SDK_TIMEOUT_MS", 3000);
    let sleep_s = setting("AGENT_TOOLS_TEST_SDK_SLEEP_S", 6);
    let args = json!({
        "bin": env!("CARGO_BIN_EXE_agent-tools"),
        "root": dir.path(),
        "node_modules": node_modules,
        "timeout_ms": timeout_ms,
        "sleep_s": sleep_s,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/sdk_client.mjs");
    let out = Command::new("node").arg(script).arg(args.to_string()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK client failed: {stderr}");
    let findings: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("unreadable findings ({e}): {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));

    let long = &findings["long"];
    assert_eq!(long["ok"], true, "the long cell did not return: {long}");
    assert_eq!(long["is_error"], false, "{long}");
    assert!(long["text"].as_str().unwrap().contains("'slept'"), "{long}");
    assert!(long["seconds"].as_f64().unwrap() * 1000.0 > timeout_ms as f64, "it ran past the timeout: {long}");
    let progress = long["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "{long}");
    // Increasing, readable, and none after the answer.
    let values: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    assert!(progress.iter().all(|p| p["after_answer"] == false), "{long}");
    assert!(progress.iter().any(|p| p["message"].as_str().unwrap().contains("last output: sleeping")), "{long}");
    // The first about 2 s in, then at least every 10 s (generously).
    let at: Vec<f64> = progress.iter().map(|p| p["at"].as_f64().unwrap()).collect();
    assert!(at[0] >= 1500.0, "{at:?}");
    assert!(at.windows(2).all(|w| w[1] - w[0] < 10_000.0), "{at:?}");

    let ask = &findings["ask"];
    assert_eq!(ask["ok"], true, "the answer given after the timeout was lost: {ask}");
    assert!(ask["text"].as_str().unwrap().contains("the user answered: 2. sqlite"), "{ask}");
    assert!(ask["seconds"].as_f64().unwrap() * 1000.0 > timeout_ms as f64, "{ask}");
    assert!(
        ask["progress"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["message"].as_str().unwrap().contains("waiting for the user's answer")),
        "{ask}"
    );

    assert_eq!(findings["untracked_errors"], json!([]), "progress without a token: {findings}");
    // Nothing the SDK could not place: no progress for a token it did not
    // give, no response to the request it cancelled.
    assert_eq!(findings["errors"], json!([]), "{findings}");

    let cancel = &findings["cancel"];
    assert!(cancel["rejected"].as_str().is_some_and(|e| e.contains("the user pressed stop")), "{cancel}");
    let next = cancel["next"].as_str().unwrap();
    assert!(next.contains("42"), "the state survived: {cancel}");
    assert!(next.contains("the previous cell was cancelled and interrupted"), "{cancel}");
    // Generous: the interrupt lands at once; only a broken cancel waits for the 5-minute budget.
    assert!(cancel["next_seconds"].as_f64().unwrap() < 30.0, "{cancel}");
}
