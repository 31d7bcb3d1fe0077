//! Shared by the real-server tests: where the project's tools are, copying a
//! fixture project into a fresh directory, and the rule that a missing server
//! fails under `CI=true` and is skipped (with a line saying so) elsewhere.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_supervisor::{Language, Supervisor, SupervisorConfig};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `.tools/node/node_modules/.bin` and `.tools/venv/bin`, where `cargo xtask setup` installs servers.
pub fn tool_dirs() -> Vec<PathBuf> {
    let tools = workspace().join(".tools");
    vec![tools.join("node/node_modules/.bin"), tools.join("venv/bin")]
}

/// The fixture language server's directory (`cargo xtask fixtures` builds it
/// into the target directory the tests run from).
pub fn fixture_bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// Copies `fixtures/<rel>` into a new temporary directory and returns it (canonical path).
pub fn project(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&workspace().join("fixtures").join(rel), dir.path());
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "node_modules" || name == ".cache" {
            continue;
        }
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

pub fn config(root: &Path) -> SupervisorConfig {
    let mut config = SupervisorConfig::new(root);
    config.extra_path = tool_dirs();
    config.extra_path.push(fixture_bin_dir());
    config.request_timeout = Duration::from_secs(60);
    config.diagnostics_timeout = Duration::from_secs(60);
    config
}

/// The supervisor, choosing `server` for `language`; `None` (test skipped) when
/// the server is not usable here and `CI` is not set; a panic under `CI=true`.
pub async fn supervisor(root: &Path, language: Language, server: &str) -> Option<Supervisor> {
    supervisor_with(config(root), language, server).await
}

/// [`supervisor`] with a configuration of the test's own (its root is `config.root`).
pub async fn supervisor_with(mut config: SupervisorConfig, language: Language, server: &str) -> Option<Supervisor> {
    let root = config.root.clone();
    let root = root.as_path();
    config.preferred.insert(language, server.to_string());
    let supervisor = Supervisor::new(config);
    usable(&supervisor, root, language, &[server]).await.then_some(supervisor)
}

/// Whether each of `servers` is usable for `language` at `root`: when one is not, a
/// panic under `CI`, else `false` after saying which (the test is skipped).
pub async fn usable(supervisor: &Supervisor, root: &Path, language: Language, servers: &[&str]) -> bool {
    let availability = supervisor.availability(root).await;
    for server in servers {
        let entry = availability.iter().find(|a| a.language == language && a.server == *server).unwrap();
        if let Err(why) = &entry.binary {
            let message = format!("{server} is not usable here: {why}; run `cargo xtask setup`");
            if std::env::var_os("CI").is_some() {
                panic!("{message}");
            }
            eprintln!("skipped: {message}");
            return false;
        }
    }
    true
}
