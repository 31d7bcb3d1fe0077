//! Project checkers inside an enclosure: `cargo check` for `"*"` on a fixture
//! crate in the real bubblewrap (its build script cannot write outside the
//! root, and the error is still found), a missing bwrap failing the check
//! closed, and a checker started through a command prefix.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};

use enclosure::Enclosure;
use lsp_supervisor::{Language, Severity, Supervisor};

fn bwrap_ready() -> bool {
    let verdict = Enclosure::bwrap("/").check();
    if let Err(error) = &verdict {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
        eprintln!("SKIPPED: {error}");
    }
    verdict.is_ok()
}

fn canary(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lsp-enclosure-canaries");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "untouched").unwrap();
    path
}

/// The broken fixture crate, with a build script that tries to write `canary`
/// and records in the root that it ran.
fn crate_with_build_script(canary: &Path) -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = common::project("lsp/rust-broken");
    let script = format!(
        "fn main() {{\n    let outside = std::fs::write({:?}, \"changed\").is_ok();\n    std::fs::write(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/build-ran.txt\"), format!(\"outside written: {{outside}}\")).unwrap();\n}}\n",
        canary.display().to_string()
    );
    std::fs::write(root.join("build.rs"), script).unwrap();
    (dir, root)
}

#[tokio::test(flavor = "multi_thread")]
async fn cargo_check_for_every_file_runs_in_bwrap() {
    if !bwrap_ready() {
        return;
    }
    let canary = canary("build-script");
    let (_dir, root) = crate_with_build_script(&canary);
    let mut config = common::config(&root);
    config.enclosure = Some(Enclosure::bwrap(&root));
    let sup = Supervisor::new(config);
    let checked = sup.project_diagnostics(Some(Language::Rust)).await.unwrap();
    let errors: Vec<_> = checked[0].diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{:?}", checked[0]);
    assert_eq!((errors[0].code.as_deref(), errors[0].location.line, errors[0].location.column), (Some("E0384"), 6, 5));
    assert_eq!(std::fs::read_to_string(root.join("build-ran.txt")).unwrap(), "outside written: false");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_bwrap_fails_the_check_closed() {
    let canary = canary("missing-bwrap");
    let (_dir, root) = crate_with_build_script(&canary);
    let mut config = common::config(&root);
    config.enclosure = Some(Enclosure { bwrap: "/nonexistent/bwrap".into(), ..Enclosure::bwrap(&root) });
    let sup = Supervisor::new(config);
    let error = sup.project_diagnostics(Some(Language::Rust)).await.unwrap_err().to_string();
    assert!(error.contains("the bwrap enclosure is not available here, so nothing was run"), "{error}");
    assert!(!root.join("build-ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checker_starts_through_a_command_prefix() {
    let (_dir, root) = common::project("lsp/rust-broken");
    let log = root.join("entered.log");
    let wrapper = root.join("enter.sh");
    std::fs::write(&wrapper, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec \"$@\"\n", log.display())).unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let mut config = common::config(&root);
    config.enclosure = Some(Enclosure::command(&root, vec![wrapper.display().to_string()]));
    let sup = Supervisor::new(config);
    let checked = sup.project_diagnostics(Some(Language::Rust)).await.unwrap();
    assert!(checked[0].diagnostics.iter().any(|d| d.code.as_deref() == Some("E0384")), "{:?}", checked[0]);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.starts_with("env --default-signal=INT -C "), "{logged}");
    // cargo is looked up through the prefix first (where the checker will run), then run as found.
    assert!(logged.contains(" sh -c for c do"), "{logged}");
    assert!(logged.contains("/cargo check --message-format=json"), "{logged}");
}

/// A project of the fixture server's toy language.
fn fixture_project() -> (tempfile::TempDir, PathBuf) {
    let bin = common::fixture_bin_dir().join("fixture-lsp-server");
    assert!(bin.is_file(), "{} is missing: run `cargo xtask fixtures` first", bin.display());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    std::fs::write(root.join("a.fix"), "def alpha\nalpha\n").unwrap();
    (dir, root)
}

#[tokio::test(flavor = "multi_thread")]
async fn language_servers_go_through_the_prefix_when_asked_in_all_or_per_server() {
    // (every server, this server's own setting, whether it went through)
    let cases = [(false, None, false), (true, None, true), (false, Some(true), true), (true, Some(false), false)];
    for (enclose_servers, its_own, through) in cases {
        let (_dir, root) = fixture_project();
        let log = root.join("entered.log");
        let wrapper = root.join("enter.sh");
        std::fs::write(&wrapper, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec \"$@\"\n", log.display())).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
        let mut config = common::config(&root);
        config.enclosure = Some(Enclosure::command(&root, vec![wrapper.display().to_string()]));
        config.enclose_servers = enclose_servers;
        if let Some(enclosed) = its_own {
            config.enclosed_servers.insert("fixture".to_owned(), enclosed);
        }
        let sup = Supervisor::new(config);
        let nav = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap();
        assert_eq!(nav.locations.items[0].line, 1);
        sup.shutdown().await;
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(logged.contains("fixture-lsp-server"), through, "{enclose_servers} {its_own:?}: {logged}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_language_server_answers_from_bwrap() {
    if !bwrap_ready() {
        return;
    }
    let (_dir, root) = fixture_project();
    let mut config = common::config(&root);
    config.enclosure = Some(Enclosure::bwrap(&root));
    config.enclose_servers = true;
    let sup = Supervisor::new(config);
    let nav = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.items[0].line, 1);
    // The server runs in a PID namespace of its own, under bwrap: its process is bwrap's wrapper.
    let pid = sup.status().await.iter().find_map(|s| s.pid).unwrap();
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap().replace('\0', " ");
    assert!(cmdline.contains("bwrap") && cmdline.contains("--unshare-net"), "{cmdline}");
    sup.shutdown().await;
}

/// A real server in bwrap: the supervisor for `server`, with every server enclosed.
async fn enclosed_real_server(root: &Path, language: Language, server: &str) -> Option<Supervisor> {
    if !bwrap_ready() {
        return None;
    }
    let mut config = common::config(root);
    config.preferred.insert(language, server.to_owned());
    config.enclosure = Some(Enclosure::bwrap(root));
    config.enclose_servers = true;
    let sup = Supervisor::new(config);
    let availability = sup.availability(root).await;
    let entry = availability.iter().find(|a| a.language == language && a.server == server).unwrap();
    if let Err(why) = &entry.binary {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{server} is not usable here: {why}");
        eprintln!("SKIPPED: {server} is not usable here: {why}");
        return None;
    }
    Some(sup)
}

/// The pid's command line, to see that a server runs under bwrap.
fn server_cmdline(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap().replace('\0', " ")
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_answers_from_bwrap_and_its_build_scripts_stay_inside() {
    let canary = canary("rust-analyzer");
    let (_dir, root) = common::project("lsp/rust");
    let script = format!(
        "fn main() {{\n    let outside = std::fs::write({:?}, \"changed\").is_ok();\n    std::fs::write(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/build-ran.txt\"), format!(\"outside written: {{outside}}\")).unwrap();\n}}\n",
        canary.display().to_string()
    );
    std::fs::write(root.join("build.rs"), script).unwrap();
    let Some(sup) = enclosed_real_server(&root, Language::Rust, "rust-analyzer").await else { return };
    let main = root.join("src/main.rs");
    let nav = sup.definition(&main, 14, "total_area").await.unwrap();
    let found: Vec<String> = nav
        .locations
        .items
        .iter()
        .map(|l| format!("{}:{}:{}", l.path.strip_prefix(&root).unwrap().display(), l.line, l.column))
        .collect();
    assert_eq!(found, ["src/shapes.rs:43:8"]);
    // A write's diagnostics come from the server and its cargo check, both in the sandbox.
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, format!("{text}\nfn broken() -> u32 {{ \"text\" }}\n")).unwrap();
    let report = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(report.complete, "{report:?}");
    assert!(
        report.diagnostics.iter().any(|d| d.severity == Severity::Error && d.code.as_deref() == Some("E0308")),
        "{report:?}"
    );
    let pid = sup.status().await.iter().find_map(|s| s.pid).unwrap();
    let cmdline = server_cmdline(pid);
    assert!(cmdline.contains("bwrap") && cmdline.contains("rust-analyzer"), "{cmdline}");
    // Without network, its `cargo metadata` works offline over the registry already on disk.
    assert!(cmdline.contains("--setenv CARGO_NET_OFFLINE true"), "{cmdline}");
    sup.shutdown().await;
    // The build script ran (rust-analyzer loads the crate with it) and could not write outside.
    assert_eq!(std::fs::read_to_string(root.join("build-ran.txt")).unwrap(), "outside written: false");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

/// The fixture crate with a registry dependency (itoa) and no `Cargo.lock`, and a use of
/// `itoa::Buffer` at the end of `src/main.rs`: its root, that file and the use's 1-indexed line.
fn project_using_itoa() -> (tempfile::TempDir, PathBuf, PathBuf, u32) {
    let (dir, root) = common::project("lsp/rust");
    std::fs::remove_file(root.join("Cargo.lock")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // itoa is one of this workspace's own dependencies, so its index entry and source are on disk.
    std::fs::write(root.join("Cargo.toml"), format!("{manifest}\n[dependencies]\nitoa = \"1\"\n")).unwrap();
    let main = root.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(
        &main,
        format!("{text}\nfn digits(n: u64) -> String {{\n    itoa::Buffer::new().format(n).to_owned()\n}}\n"),
    )
    .unwrap();
    let line = u32::try_from(text.lines().count() + 3).unwrap();
    (dir, root, main, line)
}

/// rust-analyzer in bwrap has no network, so its `cargo metadata` cannot update the
/// registry's index: a project with a registry dependency and no `Cargo.lock` loads
/// only in cargo's offline mode, over the index and sources already on disk, and a
/// definition inside the dependency is answered from them.
#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_in_bwrap_resolves_a_registry_dependency_offline() {
    let (_dir, root, main, line) = project_using_itoa();
    let Some(sup) = enclosed_real_server(&root, Language::Rust, "rust-analyzer").await else { return };
    let nav = sup.definition(&main, line, "Buffer").await.unwrap();
    let found: Vec<String> = nav
        .locations
        .items
        .iter()
        .map(|l| format!("{}:{}", l.path.file_name().unwrap().to_string_lossy(), l.line))
        .collect();
    assert_eq!(found.len(), 1, "{nav:?}");
    let location = &nav.locations.items[0];
    assert!(
        location.path.components().any(|c| c.as_os_str().to_string_lossy().starts_with("itoa-1."))
            && location.path.ends_with("src/lib.rs"),
        "the definition is in the registry's itoa source: {found:?}"
    );
    assert!(location.text.contains("pub struct Buffer"), "{location:?}");
    sup.shutdown().await;
}

/// The same project with cargo's offline mode taken away: `cargo metadata` cannot reach
/// the index, rust-analyzer loads the crate without its dependencies and says so only as
/// a warning, and the empty answer says that the project was loaded in part, and why.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_from_a_project_loaded_in_part_says_so() {
    let (_dir, root, main, line) = project_using_itoa();
    if !bwrap_ready() {
        return;
    }
    let mut config = common::config(&root);
    config.preferred.insert(Language::Rust, "rust-analyzer".to_owned());
    config.enclosure = Some(Enclosure::bwrap(&root));
    config.enclose_servers = true;
    for spec in &mut config.servers {
        spec.offline_env.clear();
    }
    let sup = Supervisor::new(config);
    let nav = match sup.definition(&main, line, "Buffer").await {
        Ok(nav) => nav,
        Err(e) if e.to_string().contains("not usable") && std::env::var("CI").as_deref() != Ok("true") => return,
        Err(e) => panic!("{e}"),
    };
    assert!(nav.locations.items.is_empty(), "{nav:?}");
    let warning = nav.warning.unwrap_or_default();
    // Its health message is `cargo metadata`'s failure, or, once its check has run, the
    // check's failing to start for the same reason: either names the dependency and why.
    assert!(warning.contains("rust-analyzer loaded the project only in part ("), "{warning}");
    assert!(warning.contains("failed to get `itoa` as a dependency"), "{warning}");
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_answers_from_bwrap() {
    let (_dir, root) = common::project("lsp/python");
    let Some(sup) = enclosed_real_server(&root, Language::Python, "pyright").await else { return };
    let report = root.join("geometry/report.py");
    let nav = sup.definition(&report, 15, "total_area").await.unwrap();
    assert_eq!(nav.locations.items.len(), 1);
    let location = &nav.locations.items[0];
    assert_eq!(
        (location.path.strip_prefix(&root).unwrap().display().to_string(), location.line, location.column),
        ("geometry/shapes.py".to_owned(), 17, 5)
    );
    let pid = sup.status().await.iter().find_map(|s| s.pid).unwrap();
    let cmdline = server_cmdline(pid);
    assert!(cmdline.contains("bwrap") && cmdline.contains("pyright"), "{cmdline}");
    sup.shutdown().await;
}

/// The TypeScript checker in real containers (podman under runc and under runsc, gVisor),
/// through `podman exec -i NAME`: `tsc` is the image's own (Debian's, which the project's
/// `node_modules/.bin` does not have here), found inside, run on its `PATH`, and its one error read.
async fn tsc_checks_inside(runtime: enclosure::engine::Runtime) {
    use enclosure::engine::Container;
    let (_dir, root) = common::project("lsp/typescript");
    let Some(container) = Container::for_test(runtime, &root) else { return };
    let mut config = common::config(&root);
    config.enclosure = Some(container.enclosure());
    let sup = Supervisor::new(config);
    let checked = sup.project_diagnostics(Some(Language::TypeScript)).await.unwrap();
    let d = &checked[0].diagnostics;
    assert_eq!(d.len(), 1, "{:?}", checked[0]);
    assert_eq!((d[0].location.line, d[0].location.column, d[0].code.as_deref()), (2, 25, Some("TS2304")));
    assert!(d[0].location.path.ends_with("src/broken.ts"), "{:?}", d[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn tsc_checks_a_project_inside_a_runc_container() {
    tsc_checks_inside(enclosure::engine::Runtime::Runc).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tsc_checks_a_project_inside_a_gvisor_container() {
    tsc_checks_inside(enclosure::engine::Runtime::Runsc).await;
}
