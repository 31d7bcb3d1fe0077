//! Where the tools are, the rule for a missing one, and the one build of the extension.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// This crate's directory.
pub fn crate_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Where `cargo xtask setup` installs tools.
pub fn tools() -> PathBuf {
    workspace().join(".tools")
}

/// A program of setup's venv (`python`, `maturin`, `uvx`).
pub fn venv_bin(name: &str) -> PathBuf {
    tools().join("venv/bin").join(name)
}

/// The npm programs setup installs (`pyright`, `pyright-langserver`).
pub fn node_bin_dir() -> PathBuf {
    tools().join("node/node_modules/.bin")
}

/// Whether `what` is there: under `CI=true` a missing tool fails the test; elsewhere the
/// test says what is missing and passes.
pub fn require(what: &str, path: &Path) -> bool {
    if path.exists() {
        return true;
    }
    let message = format!("{what} is missing ({}): run `cargo xtask setup`", path.display());
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    false
}

/// The command's output as text, for a failure message.
pub fn shown(out: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// One maturin build at a time: the two tests share the target directory and the output.
static MATURIN: Mutex<()> = Mutex::new(());

/// `maturin ARGS` on this crate with the `test-build` feature, with setup's venv as the
/// interpreter: the configuration of setup's `maturin develop`, whose artifacts, and the test
/// build's, cargo reuses.
pub fn maturin(args: &[&str]) -> Output {
    let _one = MATURIN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Command::new(venv_bin("maturin"))
        .args(args)
        .args(["--features", "test-build"])
        .arg("--manifest-path")
        .arg(crate_dir().join("Cargo.toml"))
        .env("VIRTUAL_ENV", tools().join("venv"))
        .current_dir(workspace())
        .output()
        .unwrap()
}
