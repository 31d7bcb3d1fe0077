//! Detection: a server is usable for a file only when a root marker exists
//! between the file and the workspace root **and** the server's binary
//! resolves **and runs**. A PATH entry that is only a proxy (rustup's
//! `rust-analyzer` shim before the component is installed) fails the probe,
//! so it does not count.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::spec::ServerSpec;

/// How long a binary's probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// A binary that resolved and ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Binary {
    pub path: PathBuf,
    /// The first line the probe printed (usually the version).
    pub version: String,
}

/// The nearest directory from `start` up to `workspace` (inclusive) holding one of the spec's root markers.
pub fn find_root(spec: &ServerSpec, workspace: &Path, start: &Path) -> Option<PathBuf> {
    let mut dir = if start.is_dir() { Some(start) } else { start.parent() };
    while let Some(d) = dir {
        if spec.root_markers.iter().any(|m| d.join(m).exists()) {
            return Some(d.to_path_buf());
        }
        if d == workspace || !d.starts_with(workspace) {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// The directories searched for a server's binary, in order: the project's
/// `node_modules/.bin`, `.venv/bin` and `venv/bin`, then `extra`, then `PATH`.
pub fn search_path(workspace: &Path, extra: &[PathBuf]) -> OsString {
    let mut dirs: Vec<PathBuf> =
        ["node_modules/.bin", ".venv/bin", "venv/bin"].iter().map(|d| workspace.join(d)).collect();
    dirs.extend(extra.iter().cloned());
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// The first of the spec's programs that resolves on `path` and whose probe succeeds;
/// otherwise why none did.
pub async fn resolve_binary(spec: &ServerSpec, workspace: &Path, path: &OsString) -> Result<Binary, String> {
    let mut why = Vec::new();
    for program in &spec.programs {
        let Ok(found) = which::which_in(program, Some(path), workspace) else { continue };
        match probe(spec, &found).await {
            Ok(version) => return Ok(Binary { path: found, version }),
            Err(e) => why.push(format!("{} is there but does not run ({e})", found.display())),
        }
    }
    if why.is_empty() { Err(format!("no {} on PATH", spec.programs.join(" or "))) } else { Err(why.join("; ")) }
}

fn probe_cache() -> &'static Mutex<HashMap<PathBuf, Result<String, String>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Result<String, String>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Runs the probe once per binary and process.
async fn probe(spec: &ServerSpec, binary: &Path) -> Result<String, String> {
    let program = match spec.probe_sibling {
        Some(sibling) => binary.with_file_name(sibling),
        None => binary.to_path_buf(),
    };
    if let Some(cached) = probe_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&program) {
        return cached.clone();
    }
    let run =
        tokio::process::Command::new(&program).args(&spec.probe_args).stdin(Stdio::null()).kill_on_drop(true).output();
    let result = match tokio::time::timeout(PROBE_TIMEOUT, run).await {
        Err(_) => Err(format!(
            "`{} {}` did not finish in {} s",
            program.display(),
            spec.probe_args.join(" "),
            PROBE_TIMEOUT.as_secs()
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(out)) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = |t: &str| t.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            if out.status.success() {
                Ok(if stdout.trim().is_empty() { first(&stderr) } else { first(&stdout) })
            } else {
                let said = if stderr.trim().is_empty() { first(&stdout) } else { first(&stderr) };
                Err(format!("`{} {}` failed ({}): {said}", program.display(), spec.probe_args.join(" "), out.status))
            }
        }
    };
    probe_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(program, result.clone());
    result
}
