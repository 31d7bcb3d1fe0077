//! Shared helpers for the kernel tests: which interpreter, required packages,
//! and running a cell.
#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kernel::{BoxFuture, Cell, CellResult, KernelConfig, Kernels, Language, Output, ToolBridge};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test interpreter: the project's setup venv (`cargo xtask setup`
/// creates `.tools/venv` with pandas and matplotlib), else `python3`.
pub fn test_python() -> PathBuf {
    let venv = workspace_root().join(".tools/venv/bin/python");
    if venv.exists() { venv } else { PathBuf::from("python3") }
}

/// Whether `modules` import in the test interpreter. Missing modules fail the
/// test under `CI=true`; elsewhere the test says what is missing and passes.
pub fn require_modules(modules: &[&str]) -> bool {
    let python = test_python();
    let missing: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|module| {
            !std::process::Command::new(&python)
                .args(["-c", &format!("import {module}")])
                .output()
                .map(|out| out.status.success())
                .unwrap_or(false)
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    let message = format!(
        "missing Python packages {missing:?} in {} (run `cargo xtask setup`, or `.tools/venv/bin/pip install {}`)",
        python.display(),
        missing.join(" ")
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    false
}

pub fn config(root: &Path) -> KernelConfig {
    let mut config = KernelConfig::new(root);
    config.python = Some(test_python());
    config
}

pub fn quick_timeouts(mut config: KernelConfig) -> KernelConfig {
    config.inactivity_timeout = Duration::from_millis(1500);
    config.interrupt_grace = Duration::from_millis(1500);
    config
}

pub fn kernels(root: &Path) -> Kernels {
    Kernels::new(config(root))
}

pub async fn run(kernels: &Kernels, language: Language, code: &str) -> CellResult {
    match kernels.execute(Cell::new(language, code)).await {
        Ok(result) => result,
        Err(error) => panic!("kernel failed to run {code:?}: {error}"),
    }
}

pub async fn py(kernels: &Kernels, code: &str) -> CellResult {
    run(kernels, Language::Python, code).await
}

pub async fn js(kernels: &Kernels, code: &str) -> CellResult {
    run(kernels, Language::JavaScript, code).await
}

/// The text of every stream output, concatenated.
/// The text of one stream (`stdout` or `stderr`), in order.
pub fn stream(result: &CellResult, wanted: &str) -> String {
    result
        .outputs
        .iter()
        .filter_map(|output| match output {
            Output::Stream { name, text } if name.to_string() == wanted => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn streams(result: &CellResult) -> String {
    result
        .outputs
        .iter()
        .filter_map(|output| match output {
            Output::Stream { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The `text/plain` of the execute result, if any.
pub fn result_text(result: &CellResult) -> Option<String> {
    result.outputs.iter().find_map(|output| match output {
        Output::Result { data } => data.get("text/plain").cloned(),
        _ => None,
    })
}

pub fn displays(result: &CellResult) -> Vec<kernel::MimeBundle> {
    result
        .outputs
        .iter()
        .filter_map(|output| match output {
            Output::Display { data } => Some(data.clone()),
            _ => None,
        })
        .collect()
}

pub fn error_name(result: &CellResult) -> Option<String> {
    result.outputs.iter().find_map(|output| match output {
        Output::Error { ename, .. } => Some(ename.clone()),
        _ => None,
    })
}

/// A bridge standing in for the host's gated registry: `read` is under the
/// cap and echoes its arguments; `shell` is over it and refused.
pub struct GateBridge;

impl ToolBridge for GateBridge {
    fn call(&self, name: String, args: serde_json::Value) -> BoxFuture<Result<serde_json::Value, String>> {
        Box::pin(async move {
            match name.as_str() {
                "read" => Ok(serde_json::json!({ "tool": name, "args": args, "text": "contents" })),
                "slow" => {
                    tokio::time::sleep(Duration::from_millis(3000)).await;
                    Ok(serde_json::json!("slept"))
                }
                other => Err(format!("tool `{other}` is exec tier, above this surface's cap (read): refused")),
            }
        })
    }
}

pub fn bridged<'a>(language: Language, code: &'a str) -> Cell<'a> {
    Cell { bridge: Some(Arc::new(GateBridge)), ..Cell::new(language, code) }
}

/// The escape table's cell: writes a canary outside the root, reads a key in `home` and in
/// `~/.ssh`, connects to `port` on loopback, and writes inside the root. It prints each
/// attempt's outcome (`done` or the `OSError` subclass), then what it read back inside.
pub fn escape_cell(canary: &Path, home: &Path, port: u16) -> String {
    format!(
        r#"
import os, socket
def attempt(f):
    try:
        f()
        return "done"
    except OSError as e:
        return type(e).__name__
def write_canary():
    with open({canary:?}, "w") as f:
        f.write("changed")
def read_key():
    with open(os.path.join({home:?}, ".ssh", "id_ed25519")) as f:
        return f.read()
def read_home_key():
    with open(os.path.expanduser("~/.ssh/id_ed25519")) as f:
        return f.read()
def connect():
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
open("inside.txt", "w").write("ok")
print(attempt(write_canary), attempt(read_key), attempt(read_home_key), attempt(connect), open("inside.txt").read())
"#,
        canary = canary.display().to_string(),
        home = home.display().to_string(),
    )
}
