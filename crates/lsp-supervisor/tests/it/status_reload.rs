//! What `status` says of each server (its root and why, uptime, restarts, the
//! last exit with its stderr tail, why it gave up), `reload` running detection
//! again, progress named in "not ready" and timeouts, workspace symbols asked
//! only of servers whose languages have files, and the project checkers
//! running only where their project is. Against the fixture server (`cargo
//! xtask fixtures`), and gopls and go where named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_supervisor::{Error, Language, Supervisor, SupervisorConfig, SymbolScope};

/// A project with `fixture.toml` and the given files.
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    (dir, root)
}

fn config(root: &Path, env: &[(&str, &str)]) -> SupervisorConfig {
    assert!(
        common::fixture_bin_dir().join("fixture-lsp-server").is_file(),
        "the fixture server is missing: run `cargo xtask fixtures` first"
    );
    let mut config = common::config(root);
    config.request_timeout = Duration::from_secs(10);
    config.diagnostics_timeout = Duration::from_secs(5);
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        }
    }
    config
}

#[tokio::test]
async fn status_says_how_it_ended_how_often_it_restarted_and_why_it_gave_up() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_CRASH_ALWAYS", "1")]));
    let file = root.join("a.fix");
    for _ in 0..3 {
        assert!(matches!(sup.definition(&file, 2, "alpha").await.unwrap_err(), Error::Crashed { .. }));
    }
    let error = sup.definition(&file, 2, "alpha").await.unwrap_err();
    assert!(matches!(error, Error::GaveUp { crashes: 3, .. }), "{error}");
    // The reason it gave up is the last crash, stderr included.
    assert!(error.to_string().contains("fixture: crashing on initialized"), "{error}");
    let status = sup.status().await;
    assert_eq!(status.len(), 1);
    let s = &status[0];
    assert!(s.state.starts_with("gave up after 3 crashes in a row"), "{}", s.state);
    assert_eq!((s.crashes, s.restarts, s.pid, s.uptime_ms), (3, 2, None, None));
    assert_eq!(s.root_reason, "nearest fixture.toml");
    let exit = s.last_exit.as_ref().unwrap();
    assert!(exit.what.contains("exited with status 3"), "{exit:?}");
    assert!(exit.stderr_tail.contains("fixture: crashing on initialized"), "{exit:?}");
    let gave_up = s.gave_up.as_deref().unwrap();
    assert!(
        gave_up.contains("exited with status 3") && gave_up.contains("fixture: crashing on initialized"),
        "{gave_up}"
    );
    // Reload forgets the crashes: the next use starts it again (and it crashes again).
    sup.reload(None).await;
    assert!(sup.status().await.is_empty());
    assert!(matches!(sup.definition(&file, 2, "alpha").await.unwrap_err(), Error::Crashed { .. }));
    sup.shutdown().await;
}

#[tokio::test]
async fn status_of_a_restarted_server_keeps_its_last_exit() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_CRASH_ON", "textDocument/hover")]));
    let file = root.join("a.fix");
    sup.definition(&file, 2, "alpha").await.unwrap();
    let s = &sup.status().await[0];
    assert_eq!((s.state.as_str(), s.restarts, s.last_exit.is_none()), ("running", 0, true));
    assert!(s.uptime_ms.is_some() && s.pid.is_some());
    assert!(matches!(sup.hover(&file, 2, "alpha").await.unwrap_err(), Error::Crashed { .. }));
    // Dead and not restarted yet: the exit is shown at once.
    let s = &sup.status().await[0];
    assert!(s.state.starts_with("crashed (exited with status 3)"), "{}", s.state);
    assert!(s.last_exit.as_ref().unwrap().stderr_tail.contains("fixture: crashing on textDocument/hover"));
    sup.definition(&file, 2, "alpha").await.unwrap();
    let s = &sup.status().await[0];
    assert_eq!((s.state.as_str(), s.restarts, s.crashes), ("running", 1, 1));
    let exit = s.last_exit.as_ref().unwrap();
    assert!(exit.stderr_tail.contains("fixture: crashing on textDocument/hover"), "{exit:?}");
    assert_eq!(s.gave_up, None);
    sup.shutdown().await;
}

/// A binary that did not run is probed again on `reload`: installed or fixed
/// since, it is found (the probe result is cached until then).
#[tokio::test]
async fn reload_finds_a_binary_fixed_since() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("fixture-lsp-server");
    let write = |script: &str| {
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write("#!/bin/sh\necho 'broken: cannot load its library' >&2\nexit 1\n");
    let mut config = config(&root, &[]);
    config.extra_path.insert(0, bin.path().to_path_buf());
    let sup = Supervisor::new(config);
    let file = root.join("a.fix");
    let availability = sup.availability(&root).await;
    let fixture = availability.iter().find(|a| a.server == "fixture").unwrap();
    let why = fixture.binary.as_ref().unwrap_err();
    assert!(why.contains("is there but does not run") && why.contains("cannot load its library"), "{why}");
    let error = sup.definition(&file, 2, "alpha").await.unwrap_err();
    assert!(matches!(error, Error::NoServer { .. }), "{error}");
    // Fixed: the cached probe still says it does not run, until reload.
    let real = common::fixture_bin_dir().join("fixture-lsp-server");
    write(&format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()));
    assert!(matches!(sup.definition(&file, 2, "alpha").await.unwrap_err(), Error::NoServer { .. }));
    sup.reload(None).await;
    let nav = sup.definition(&file, 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.items[0].line, 1);
    assert_eq!(sup.status().await[0].binary.as_deref(), Some(fake.as_path()));
    sup.shutdown().await;
}

/// A timeout names what the server was busy with: its progress's title, message and percentage.
#[tokio::test]
async fn a_timeout_names_the_progress_the_server_was_busy_with() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let mut config =
        config(&root, &[("FIXTURE_LSP_INDEX_MS", "60000"), ("FIXTURE_LSP_HANG_ON", "textDocument/definition")]);
    config.request_timeout = Duration::from_millis(2500);
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            // Its indexing does not change answers here, so the request does not wait for it.
            spec.background_progress = vec!["Indexing"];
        }
    }
    let sup = Supervisor::new(config);
    let error = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap_err();
    assert!(
        matches!(&error, Error::Timeout { busy: Some(busy), .. } if busy == "Indexing: fixture files (0%)"),
        "{error:?}"
    );
    assert!(error.to_string().ends_with("; it was busy with Indexing: fixture files (0%)"), "{error}");
    let status = sup.status().await;
    assert_eq!(status[0].busy.as_deref(), Some("Indexing: fixture files (0%)"));
    assert_eq!(status[0].load, None, "background work is not loading");
    sup.shutdown().await;
}

/// Workspace symbols without a file: only the servers of languages that have
/// files under the root are asked (a `package.json` and a `CMakeLists.txt`
/// with no source next to them start nothing), exact matches first.
#[tokio::test]
async fn workspace_symbols_ask_only_servers_with_files_and_rank_exact_matches_first() {
    let (_dir, root) = project(&[
        ("a.fix", "def xalp\ndef alphabet\ndef alp\ndef beta\n"),
        ("package.json", "{ \"name\": \"tooling\" }"),
        ("CMakeLists.txt", "project(x)\n"),
    ]);
    let sup = Supervisor::new(config(&root, &[]));
    let scope = SymbolScope { file: None, language: None, dependencies: false, cap: 100 };
    let found = sup.search_symbols("ALP", &scope).await.unwrap();
    assert_eq!(found.servers, [("fixture", root.clone())]);
    let names: Vec<&str> = found.symbols.items.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["alp", "alphabet", "xalp"]);
    assert_eq!((found.outside, found.failures.len()), (0, 0));
    let started: Vec<&str> = sup.status().await.iter().map(|s| s.server).collect();
    assert_eq!(started, ["fixture"]);
    sup.shutdown().await;
}

/// gopls answers a workspace query with the standard library's symbols too,
/// matched fuzzily; two modules under the root are two gopls. Only names that
/// contain the query are kept, outside the root only when asked for, each once.
#[tokio::test(flavor = "multi_thread")]
async fn workspace_symbols_drop_the_standard_library_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for module in ["one", "two"] {
        std::fs::create_dir_all(root.join(module)).unwrap();
        std::fs::write(root.join(module).join("go.mod"), format!("module example.com/{module}\n\ngo 1.19\n")).unwrap();
        std::fs::write(
            root.join(module).join("main.go"),
            "package main\n\nimport \"fmt\"\n\n// TotalArea sums.\nfunc TotalArea() int { return 1 }\n\nfunc main() {\n\tfmt.Println(TotalArea())\n}\n",
        )
        .unwrap();
    }
    let Some(sup) = common::supervisor(&root, Language::Go, "gopls").await else { return };
    let scope = SymbolScope { file: None, language: Some(Language::Go), dependencies: false, cap: 100 };
    let found = sup.search_symbols("TotalArea", &scope).await.unwrap();
    assert_eq!(found.servers.len(), 2, "{found:?}");
    let places: Vec<(String, PathBuf)> =
        found.symbols.items.iter().map(|s| (s.name.clone(), s.location.path.clone())).collect();
    assert_eq!(
        places,
        [("TotalArea".to_string(), root.join("one/main.go")), ("TotalArea".to_string(), root.join("two/main.go"))]
    );
    let found = sup.search_symbols("Println", &scope).await.unwrap();
    assert!(found.symbols.items.is_empty() && found.outside > 0, "{found:?}");
    let with = SymbolScope { dependencies: true, ..scope };
    let found = sup.search_symbols("Println", &with).await.unwrap();
    assert!(!found.symbols.items.is_empty());
    let mut seen = std::collections::HashSet::new();
    for s in &found.symbols.items {
        assert!(s.name.to_lowercase().contains("println"), "{s:?}");
        assert!(!s.location.path.starts_with(&root), "{s:?}");
        assert!(seen.insert((s.location.path.clone(), s.location.line, s.location.column)), "twice: {s:?}");
    }
    sup.shutdown().await;
}

/// `diagnostics "*"` runs a checker only where its project is: a C project's
/// tooling `package.json` (no tsconfig, no typescript) is not a TypeScript project.
#[tokio::test]
async fn a_package_json_without_typescript_is_not_a_typescript_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("CMakeLists.txt"), "project(json)\n").unwrap();
    std::fs::write(root.join("json.c"), "int main(void) { return 0; }\n").unwrap();
    std::fs::create_dir(root.join("tools")).unwrap();
    std::fs::write(root.join("tools/package.json"), "{ \"devDependencies\": { \"prettier\": \"3\" } }").unwrap();
    let sup = Supervisor::new(SupervisorConfig::new(&root));
    let error = sup.project_diagnostics(Some(Language::TypeScript)).await.unwrap_err();
    assert!(error.to_string().starts_with("no project checker applies for typescript"), "{error}");
    let error = sup.project_diagnostics(None).await.unwrap_err();
    assert!(error.to_string().starts_with("no project checker applies for any language"), "{error}");
}

/// A checker that fails without a diagnostic shows the tail of what it printed.
#[tokio::test]
async fn a_failing_checker_shows_its_stderr_tail() {
    if which_go().is_none() {
        assert!(std::env::var_os("CI").is_none(), "go is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("go.mod"), "module example.com/x\n\ngo 1.19\n\nfrobnicate all\n").unwrap();
    std::fs::write(root.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
    let sup = Supervisor::new(SupervisorConfig::new(&root));
    let error = sup.project_diagnostics(Some(Language::Go)).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("`go vet ./...`") && text.contains("failed (exit status: 1) without a diagnostic"), "{text}");
    assert!(text.contains("it ended with:\n") && text.contains("unknown directive: frobnicate"), "{text}");
}

fn which_go() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("go")).find(|p| p.is_file())
}

/// A symbol search across languages where no server is usable names no
/// language it was not asked about (it said "no rust language server" in a
/// Python-only root); asked for one language, it names that one.
#[tokio::test]
async fn a_symbol_search_with_no_usable_server_names_no_language_it_was_not_asked_about() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(root.join("a.py"), "def f():\n    return 1\n").unwrap();
    let mut config = SupervisorConfig::new(&root);
    for spec in &mut config.servers {
        spec.programs = vec!["agent-tools-test-no-such-server".to_string()];
    }
    let sup = Supervisor::new(config);
    let any = SymbolScope { file: None, language: None, dependencies: false, cap: 10 };
    let error = sup.search_symbols("f", &any).await.unwrap_err();
    assert!(matches!(error, Error::NoServers { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "no language server is usable here: none is usable for the files under the root; `status` says why"
    );
    let python = SymbolScope { language: Some(Language::Python), ..any };
    let error = sup.search_symbols("f", &python).await.unwrap_err();
    assert!(error.to_string().starts_with("no python language server is usable here"), "{error}");
}
