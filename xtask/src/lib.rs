//! What `cargo xtask` and the suites in `xtask-suites` share: where the workspace
//! is, where `setup` installs each tool, and running a command with its stderr in
//! the failure.
//!
//! It depends on nothing of the workspace (anyhow and serde_json only), so
//! `cargo xtask setup` builds in seconds on a fresh clone. `xtask-suites` reads
//! the tools' places from here, so the two cannot disagree about them.

#![warn(missing_docs)]
// Printing is setup's job: it tells people what it checked and installed.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod dist;
pub mod image;
pub mod setup;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Where `setup` installs tools: `<workspace>/.tools` (ignored in git).
pub fn tools_dir() -> PathBuf {
    workspace_root().join(".tools")
}

/// A program in setup's Python venv, `<workspace>/.tools/venv/bin/NAME`.
pub fn venv_bin(name: &str) -> PathBuf {
    tools_dir().join("venv").join("bin").join(name)
}

/// The npm language servers setup installs, pinned (typescript-language-server's later
/// releases need a newer node than Debian's 20); the image copies setup's pyright.
pub const NPM_SERVERS: &[(&str, &str)] = &[("pyright", "1.1.414"), ("typescript-language-server", "5.3.0")];

/// Runs a command to completion with no stdin, failing with its stderr when it fails.
pub fn run_quiet(cmd: &mut Command) -> Result<std::process::Output> {
    let shown = format!("{cmd:?}");
    let out = cmd.stdin(std::process::Stdio::null()).output().with_context(|| format!("could not start {shown}"))?;
    if !out.status.success() {
        bail!(
            "{shown} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}
