//! Shared test helpers: the fixture adapter's binary, fixture projects copied
//! into temporary roots, and the rule for real adapters (missing = failure
//! under `CI=true`, a printed skip elsewhere).
#![allow(dead_code, clippy::unwrap_used, clippy::print_stderr, clippy::field_reassign_with_default)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use dap_session::{DebugConfig, Limits};

/// `<target>/debug/fixture-dap-adapter`, built by `cargo xtask fixtures`.
pub fn fixture_adapter() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/debug/deps/<test> → <target>/debug
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let binary = dir.join("fixture-dap-adapter");
    assert!(binary.exists(), "{} is missing: run `cargo xtask fixtures` first", binary.display());
    binary
}

/// The repository's `fixtures/debug/<name>` directory.
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/debug").join(name)
}

/// A copy of `fixtures/debug/<name>` in a fresh temporary directory (the root).
pub fn project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture_dir(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A directory holding `name` → the fixture adapter, to put on a test search path.
pub fn bin_dir_with(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        std::os::unix::fs::symlink(fixture_adapter(), dir.path().join(name)).unwrap();
    }
    dir
}

/// Short timeouts for the fixture (it answers at once unless told otherwise).
pub fn config(search_path: Option<&Path>, env: &[(&str, &str)]) -> DebugConfig {
    let mut config = DebugConfig::default();
    config.limits = Limits {
        request_timeout: Duration::from_secs(5),
        start_timeout: Duration::from_secs(10),
        run_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    if let Some(path) = search_path {
        // The fixture's bin dir first, then the usual PATH (for `sleep`).
        let mut dirs = vec![path.to_path_buf()];
        dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        config.detection.search_path = Some(std::env::join_paths(dirs).unwrap());
    }
    config.env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    config
}

/// Whether a real part is present; under `CI=true` its absence fails the test.
pub fn require(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{what} is missing (CI=true): run `cargo xtask setup`");
    eprintln!("skipped: {what} is missing; run `cargo xtask setup`");
    false
}

/// Polls `check` every 50 ms for up to `limit`.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

/// Kills a test's own child even when an assertion fails.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether something listens on 127.0.0.1:`port` (read from /proc/net/tcp, without connecting:
/// debugpy takes the first connection as its client).
pub fn listening_on(port: u16) -> bool {
    let wanted = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/tcp").is_ok_and(|table| {
        table.lines().skip(1).any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&wanted.as_str()) && fields.get(3) == Some(&"0A")
        })
    })
}

/// Whether an `lldb-dap` (or versioned `lldb-dap-N`) is on `PATH`.
pub fn lldb_dap() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("lldb-dap")))
        })
    })
}

/// Whether `python` imports debugpy.
pub fn has_debugpy(python: &Path) -> bool {
    std::process::Command::new(python).args(["-c", "import debugpy"]).status().is_ok_and(|s| s.success())
}
