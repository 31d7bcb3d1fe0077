//! The supervisor against the fixture language server, for what real servers
//! will not do on demand: position encodings on awkward text, crashes, hangs,
//! garbage frames, slow indexing, odd server-to-client requests, late and
//! multi-round diagnostics, pull diagnostics. Needs `cargo xtask fixtures`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_supervisor::{Error, Language, Supervisor, SupervisorConfig};

fn fixture_binary() -> PathBuf {
    let bin = common::fixture_bin_dir().join("fixture-lsp-server");
    assert!(bin.is_file(), "{} is missing: run `cargo xtask fixtures` first", bin.display());
    bin
}

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
    fixture_binary();
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

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

async fn pid_of(sup: &Supervisor) -> u32 {
    sup.status().await.iter().find_map(|s| s.pid).expect("a running server")
}

#[tokio::test]
async fn tabs_crlf_bom_and_non_bmp_positions_come_out_right_in_both_encodings() {
    // BOM, then a definition after a tab; a use on a CRLF line after non-BMP characters, a tab and an accent.
    let text = "\u{feff}\tdef target\r\n\r\n😀 𝒳\té target\r\n";
    for encoding in ["utf-16", "utf-8"] {
        let (_dir, root) = project(&[("a.fix", text)]);
        let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_ENCODING", encoding)]));
        let file = root.join("a.fix");
        let nav = sup.definition(&file, 3, "target").await.unwrap();
        assert_eq!(nav.cursor.column, 7, "{encoding}");
        let l = &nav.locations.items[0];
        assert_eq!((l.line, l.column, l.end_line, l.end_column), (1, 6, 1, 12), "{encoding}");
        let refs = sup.references(&file, 1, "target", 50).await.unwrap();
        let places: Vec<(u32, u32)> = refs.locations.items.iter().map(|l| (l.line, l.column)).collect();
        assert_eq!(places, vec![(1, 6), (3, 7)], "{encoding}");
        let status = sup.status().await;
        let expected = if encoding == "utf-8" { "Utf8" } else { "Utf16" };
        assert_eq!(format!("{:?}", status[0].encoding.unwrap()), expected);
        // Rename keeps the BOM and the CRLFs.
        sup.rename(&file, 3, "target", "renamed").await.unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "\u{feff}\tdef renamed\r\n\r\n😀 𝒳\té renamed\r\n");
        sup.shutdown().await;
    }
}

#[tokio::test]
async fn a_crash_mid_request_fails_it_at_once_then_restarts_and_reopens() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_CRASH_ON", "textDocument/hover")]));
    let file = root.join("a.fix");
    sup.definition(&file, 2, "alpha").await.unwrap();
    let first = pid_of(&sup).await;
    let started = std::time::Instant::now();
    let error = sup.hover(&file, 2, "alpha").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "crash reported after {:?}", started.elapsed());
    let message = error.to_string();
    assert!(matches!(error, Error::Crashed { .. }), "{message}");
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(message.contains("fixture: crashing on textDocument/hover"), "{message}");
    // The next call restarts the server, which has the document open again.
    let nav = sup.definition(&file, 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.items[0].line, 1);
    let second = pid_of(&sup).await;
    assert_ne!(first, second);
    assert_eq!(sup.status().await[0].open_documents, 1);
    sup.shutdown().await;
    assert!(!alive(first) && !alive(second));
}

#[tokio::test]
async fn repeated_crashes_stop_the_retries_until_reload() {
    let (_dir, root) = project(&[("a.fix", "def alpha\n")]);
    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_CRASH_ALWAYS", "1")]));
    let file = root.join("a.fix");
    let mut errors = Vec::new();
    for _ in 0..5 {
        errors.push(sup.definition(&file, 1, "alpha").await.unwrap_err());
    }
    assert!(errors.iter().take(3).all(|e| matches!(e, Error::Crashed { .. })), "{errors:?}");
    assert!(matches!(errors[3], Error::GaveUp { crashes: 3, .. }), "{:?}", errors[3]);
    let status = sup.status().await;
    assert!(status[0].state.starts_with("gave up after 3 crashes"), "{:?}", status[0].state);
    assert_eq!(sup.reload(None).await.len(), 1);
    assert!(matches!(sup.definition(&file, 1, "alpha").await.unwrap_err(), Error::Crashed { .. }));
    sup.shutdown().await;
}

#[tokio::test]
async fn a_hang_is_a_timeout_and_the_server_goes_on() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let mut config = config(&root, &[("FIXTURE_LSP_HANG_ON", "textDocument/references")]);
    config.request_timeout = Duration::from_millis(800);
    let sup = Supervisor::new(config);
    let file = root.join("a.fix");
    let error = sup.references(&file, 2, "alpha", 50).await.unwrap_err();
    assert!(matches!(error, Error::Timeout { method: "textDocument/references", .. }), "{error}");
    assert!(error.to_string().contains("timed out"), "{error}");
    assert_eq!(sup.definition(&file, 2, "alpha").await.unwrap().locations.total, 1);
    sup.shutdown().await;
}

/// A server whose whole process stopped: the request times out; the server,
/// silent since and to a probe, is killed (its status says why), and the next
/// call restarts it.
#[tokio::test]
async fn a_frozen_server_times_out_then_is_killed_and_restarted() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let once = root.join(".frozen-once");
    let once = once.display().to_string();
    let mut config =
        config(&root, &[("FIXTURE_LSP_FREEZE_ON", "textDocument/hover"), ("FIXTURE_LSP_FAULT_ONCE", once.as_str())]);
    config.request_timeout = Duration::from_millis(800);
    let sup = Supervisor::new(config);
    let file = root.join("a.fix");
    sup.definition(&file, 2, "alpha").await.unwrap();
    let frozen = pid_of(&sup).await;
    let error = sup.hover(&file, 2, "alpha").await.unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error}");
    let nav = sup.definition(&file, 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.items[0].line, 1);
    assert!(!alive(frozen));
    let status = sup.status().await;
    assert_eq!(status[0].restarts, 1);
    let exit = status[0].last_exit.as_ref().unwrap();
    assert!(exit.what.starts_with("stopped answering: a request timed out, then a probe got no answer"), "{exit:?}");
    sup.shutdown().await;
}

/// A server that drops one answer but answers everything else (the probe too) goes on.
#[tokio::test]
async fn a_dropped_answer_leaves_a_server_that_answers_the_probe_running() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let mut config = config(&root, &[("FIXTURE_LSP_HANG_ON", "textDocument/hover")]);
    config.request_timeout = Duration::from_millis(800);
    let sup = Supervisor::new(config);
    let file = root.join("a.fix");
    sup.definition(&file, 2, "alpha").await.unwrap();
    let first = pid_of(&sup).await;
    assert!(matches!(sup.hover(&file, 2, "alpha").await.unwrap_err(), Error::Timeout { .. }));
    sup.definition(&file, 2, "alpha").await.unwrap();
    assert_eq!(pid_of(&sup).await, first);
    assert_eq!(sup.status().await[0].restarts, 0);
    sup.shutdown().await;
}

#[tokio::test]
async fn garbage_on_the_wire_is_reported_not_waited_on() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_GARBAGE_ON", "textDocument/hover")]));
    let file = root.join("a.fix");
    sup.definition(&file, 2, "alpha").await.unwrap();
    let pid = pid_of(&sup).await;
    let error = sup.hover(&file, 2, "alpha").await.unwrap_err();
    assert!(error.to_string().contains("malformed frame (bad Content-Length \"abc\")"), "{error}");
    sup.shutdown().await;
    assert!(!alive(pid));
}

#[tokio::test]
async fn while_indexing_an_empty_answer_is_not_ready_and_waits_when_it_can() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let mut slow = config(&root, &[("FIXTURE_LSP_INDEX_MS", "60000")]);
    slow.request_timeout = Duration::from_millis(1500);
    let sup = Supervisor::new(slow);
    let error = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap_err();
    assert!(matches!(&error, Error::NotReady { what, .. } if what == "Indexing: fixture files (0%)"), "{error}");
    sup.shutdown().await;

    let sup = Supervisor::new(config(&root, &[("FIXTURE_LSP_INDEX_MS", "1500")]));
    let nav = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.items.iter().map(|l| l.line).collect::<Vec<_>>(), vec![1]);
    sup.shutdown().await;
}

#[tokio::test]
async fn every_server_to_client_request_is_answered_with_its_shape() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let log = root.join("log.jsonl");
    let sup = Supervisor::new(config(
        &root,
        &[("FIXTURE_LSP_ODD_REQUESTS", "1"), ("FIXTURE_LSP_LOG", log.to_str().unwrap())],
    ));
    // The server answers nothing until every odd request got its answer.
    let nav = sup.definition(&root.join("a.fix"), 2, "alpha").await.unwrap();
    assert_eq!(nav.locations.total, 1);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let answer = |method: &str| {
        lines
            .iter()
            .find(|l| l["dir"] == "out" && l["method"] == method)
            .cloned()
            .unwrap_or_else(|| panic!("no answer to {method}"))
    };
    assert!(answer("workspace/configuration")["result"].is_array());
    assert_eq!(answer("workspace/workspaceFolders")["result"][0]["name"], root.file_name().unwrap().to_str().unwrap());
    assert!(answer("client/registerCapability")["result"].is_null());
    assert!(answer("client/unregisterCapability")["result"].is_null());
    assert!(answer("window/workDoneProgress/create")["result"].is_null());
    assert!(answer("workspace/diagnostic/refresh")["result"].is_null());
    assert!(answer("workspace/semanticTokens/refresh")["result"].is_null());
    assert!(answer("window/showMessageRequest")["result"].is_null());
    assert_eq!(answer("window/showDocument")["result"]["success"], false);
    assert_eq!(answer("workspace/applyEdit")["result"]["applied"], false);
    assert_eq!(answer("fixture/unknown")["error"]["code"], -32601);
    assert!(lines.iter().any(|l| l["event"] == "odd-requests-done"));
    // The server's applyEdit was refused, so the file is untouched.
    assert_eq!(std::fs::read_to_string(root.join("a.fix")).unwrap(), "def alpha\nalpha\n");
    sup.shutdown().await;
}

#[tokio::test]
async fn diagnostics_wait_out_empty_rounds_and_late_publications_and_pull() {
    let text = "def alpha\nERROR E1: broken here\n";
    for env in [
        vec![("FIXTURE_LSP_PUBLISH_ROUNDS", "3"), ("FIXTURE_LSP_PUBLISH_DELAY_MS", "150")],
        vec![("FIXTURE_LSP_PUBLISH_DELAY_MS", "1000")],
        vec![("FIXTURE_LSP_DIAGNOSTICS", "pull")],
        vec![("FIXTURE_LSP_DIAGNOSTICS", "push-unless-pull")],
    ] {
        let (_dir, root) = project(&[("a.fix", text)]);
        let sup = Supervisor::new(config(&root, &env));
        let report = sup.diagnostics(&root.join("a.fix")).await.unwrap();
        assert!(report.complete, "{env:?}");
        let got: Vec<_> =
            report.diagnostics.iter().map(|d| (d.location.line, d.code.clone(), d.message.clone())).collect();
        assert_eq!(got, vec![(2, Some("E1".to_string()), "broken here".to_string())], "{env:?}");
        sup.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_that_publishes_too_late_gives_pending_never_clean() {
    let (_dir, root) = project(&[("a.fix", "def alpha\n")]);
    let mut config = config(&root, &[("FIXTURE_LSP_PUBLISH_DELAY_MS", "3000")]);
    config.diagnostics_timeout = Duration::from_millis(500);
    let sup = Supervisor::new(config);
    let file = root.join("a.fix");
    std::fs::write(&file, "def alpha\nERROR E1: late\n").unwrap();
    let report = sup.diagnostics_after_write(&file).await.unwrap();
    assert!(!report.complete);
    assert!(report.diagnostics.is_empty());
    assert_eq!(Language::from_path(&file), Some(Language::Fixture));
    sup.shutdown().await;
}

#[tokio::test]
async fn silence_from_a_server_that_publishes_only_changes_leaves_the_last_list_standing() {
    let env = [("FIXTURE_LSP_PUBLISH_CHANGED_ONLY", "1")];
    let (_dir, root) = project(&[("a.fix", "def alpha\nERROR E1: broken here\n")]);
    let file = root.join("a.fix");
    let mut told = config(&root, &env);
    for spec in &mut told.servers {
        if spec.id == "fixture" {
            spec.publishes_unchanged = false;
        }
    }
    let sup = Supervisor::new(told);
    let listed = |report: &lsp_supervisor::FileDiagnostics| -> Vec<(u32, Option<String>)> {
        report.diagnostics.iter().map(|d| (d.location.line, d.code.clone())).collect()
    };
    let report = sup.diagnostics(&file).await.unwrap();
    assert!(report.complete);
    assert_eq!(listed(&report), [(2, Some("E1".to_string()))]);
    // The same diagnostics after the write: nothing is published, the last list stands.
    std::fs::write(&file, "def alpha\nERROR E1: broken here\ndef beta\n").unwrap();
    let report = sup.diagnostics_after_write(&file).await.unwrap();
    assert!(report.complete, "{report:?}");
    assert_eq!(listed(&report), [(2, Some("E1".to_string()))]);
    std::fs::write(&file, "def alpha\n").unwrap();
    let report = sup.diagnostics_after_write(&file).await.unwrap();
    assert!(report.complete && report.diagnostics.is_empty(), "{report:?}");
    std::fs::write(&file, "def alpha\ndef gamma\n").unwrap();
    let report = sup.diagnostics_after_write(&file).await.unwrap();
    assert!(report.complete && report.diagnostics.is_empty(), "{report:?}");
    sup.shutdown().await;

    // Not told that the server is like this, the same silence is pending, never clean.
    let mut untold = config(&root, &env);
    untold.diagnostics_timeout = Duration::from_millis(800);
    let sup = Supervisor::new(untold);
    assert!(sup.diagnostics(&file).await.unwrap().complete);
    std::fs::write(&file, "def alpha\ndef gamma\ndef delta\n").unwrap();
    let report = sup.diagnostics_after_write(&file).await.unwrap();
    assert!(!report.complete, "{report:?}");
    sup.shutdown().await;
}

#[tokio::test]
async fn a_directory_of_projects_serves_each_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for project in ["one", "nested/two"] {
        std::fs::create_dir_all(root.join(project)).unwrap();
        std::fs::write(root.join(project).join("fixture.toml"), "").unwrap();
        std::fs::write(root.join(project).join("a.fix"), "def alpha\nalpha\n").unwrap();
    }
    let sup = Supervisor::new(config(&root, &[]));
    let availability = sup.availability(&root).await;
    let fixture = availability.iter().find(|a| a.server == "fixture").unwrap();
    assert!(fixture.root.as_ref().unwrap_err().starts_with("no root marker (fixture.toml) in "));
    assert_eq!(fixture.projects, [root.join("one"), root.join("nested/two")]);
    assert!(fixture.usable() && fixture.chosen);
    for project in ["one", "nested/two"] {
        let nav = sup.definition(&root.join(project).join("a.fix"), 2, "alpha").await.unwrap();
        assert_eq!(nav.locations.items[0].path, root.join(project).join("a.fix"));
    }
    let mut roots: Vec<PathBuf> = sup.status().await.into_iter().map(|s| s.root).collect();
    roots.sort();
    assert_eq!(roots, [root.join("nested/two"), root.join("one")]);
    sup.shutdown().await;
}

/// Files changed on disk by someone else reach the server before the next
/// request: the ones its registered watcher (`**/*.fix`) asks for as
/// `workspace/didChangeWatchedFiles`, an open one as `didChange` with the disk's
/// text; a file no watcher asks for is not sent.
#[tokio::test]
async fn changes_on_disk_reach_the_server_by_its_registered_watchers_before_the_next_request() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("log.jsonl");
    let sup = Supervisor::new(config(
        &root,
        &[("FIXTURE_LSP_ODD_REQUESTS", "1"), ("FIXTURE_LSP_LOG", log.to_str().unwrap())],
    ));
    let a = root.join("a.fix");
    assert_eq!(sup.definition(&a, 2, "alpha").await.unwrap().locations.total, 1);
    // The server's own applyEdit was refused; now a shell edits behind its back.
    std::fs::write(root.join("b.fix"), "def beta\n").unwrap();
    std::fs::write(root.join("notes.txt"), "not a fixture file\n").unwrap();
    std::fs::write(&a, "def alpha\n\nalpha\n").unwrap();
    let nav = sup.definition(&a, 3, "alpha").await.unwrap();
    assert_eq!(nav.locations.items.iter().map(|l| l.line).collect::<Vec<_>>(), [1]);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let watched: Vec<(String, u64)> = lines
        .iter()
        .filter(|l| l["method"] == "workspace/didChangeWatchedFiles")
        .flat_map(|l| l["params"]["changes"].as_array().cloned().unwrap_or_default())
        .map(|c| (c["uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string(), c["type"].as_u64().unwrap()))
        .collect();
    assert!(watched.contains(&("b.fix".to_string(), 1)), "{watched:?}");
    assert!(watched.contains(&("a.fix".to_string(), 2)), "{watched:?}");
    assert!(!watched.iter().any(|(name, _)| name == "notes.txt"), "{watched:?}");
    let synced = lines.iter().any(|l| {
        l["method"] == "textDocument/didChange" && l["params"]["contentChanges"][0]["text"] == "def alpha\n\nalpha\n"
    });
    assert!(synced, "the open document was synced with the disk");
    assert!(matches!(sup.watching(), Some(Ok(n)) if n >= 1));
    sup.shutdown().await;
}

/// A caller that gives up on a request (its future dropped, as a cancelled
/// tool call does) withdraws it: the server gets `$/cancelRequest` for its id
/// and goes on answering.
#[tokio::test]
async fn a_dropped_request_is_cancelled_at_the_server_and_the_server_goes_on() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nalpha\n")]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("log.jsonl");
    let sup = Supervisor::new(config(
        &root,
        &[("FIXTURE_LSP_HANG_ON", "textDocument/references"), ("FIXTURE_LSP_LOG", log.to_str().unwrap())],
    ));
    let file = root.join("a.fix");
    assert_eq!(sup.definition(&file, 2, "alpha").await.unwrap().locations.total, 1);
    let received = |method: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(&format!("\"method\":\"{method}\"")))
    };
    {
        // The caller gives up once the server has the request (it never answers it).
        let call = sup.references(&file, 2, "alpha", 50);
        tokio::pin!(call);
        while !received("textDocument/references") {
            tokio::select! {
                answer = &mut call => panic!("a hung request was answered: {answer:?}"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    }
    assert_eq!(sup.definition(&file, 2, "alpha").await.unwrap().locations.total, 1);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let cancelled: Vec<i64> =
        lines.iter().filter(|l| l["method"] == "$/cancelRequest").filter_map(|l| l["params"]["id"].as_i64()).collect();
    // The log has no request ids; the one request left unanswered is the one cancelled.
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    sup.shutdown().await;
}

/// `config` with the fixture server as a checking one, as rust-analyzer is: a check
/// on save, known by its progress, whose findings are pushed beside its own pulled ones.
fn checking(mut config: SupervisorConfig) -> SupervisorConfig {
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.checks_on_save = true;
            spec.background_progress = vec!["fixture check"];
            spec.pulled_source = Some("fixture");
        }
    }
    config
}

/// A checking server whose two lists during the save's check come swapped (the one with the
/// check's finding, then the one cleared as the check began), as rust-analyzer's publishing
/// tasks can deliver them: the answer after each write holds the check's finding, because a
/// check never withdraws one it made.
#[tokio::test]
async fn a_check_whose_lists_come_swapped_keeps_its_findings() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nWARN W1: own finding\nalpha\n")]);
    let knobs =
        [("FIXTURE_LSP_DIAGNOSTICS", "both"), ("FIXTURE_LSP_CHECK_LATE_MS", "0"), ("FIXTURE_LSP_CHECK_SWAPPED", "1")];
    let config = checking(config(&root, &knobs));
    let sup = Supervisor::new(config);
    let path = root.join("a.fix");
    for round in 1..=3 {
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}alpha\n")).unwrap();
        let report = sup.diagnostics_after_write(&path).await.unwrap();
        assert!(report.complete, "round {round}: {report:?}");
        let mut codes: Vec<(u32, Option<String>)> =
            report.diagnostics.iter().map(|d| (d.location.line, d.code.clone())).collect();
        codes.sort();
        assert_eq!(
            codes,
            [(1, Some("C1".to_owned())), (2, Some("W1".to_owned()))],
            "round {round}: the check's finding and the server's own"
        );
    }
    sup.shutdown().await;
}

/// A save that fixes the check's finding: while the check runs the server republishes the
/// file's list with the earlier check's finding, and 300 ms later the check's end leaves the
/// list without it. The answer has no finding: a list that came that long before the last
/// is not the later one of a pair sent together.
#[tokio::test]
async fn a_check_that_found_nothing_drops_the_earlier_finding() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nWARN W1: own finding\nalpha\n")]);
    let knobs = [
        ("FIXTURE_LSP_DIAGNOSTICS", "both"),
        ("FIXTURE_LSP_CHECK_LATE_MS", "0"),
        ("FIXTURE_LSP_CHECK_SWAPPED", "1"),
        ("FIXTURE_LSP_CHECK_FIXED_MS", "300"),
    ];
    let config = checking(config(&root, &knobs));
    let sup = Supervisor::new(config);
    let path = root.join("a.fix");
    std::fs::write(&path, "def alpha\nWARN W1: own finding\nalpha\nalpha\n").unwrap();
    let report = sup.diagnostics_after_write(&path).await.unwrap();
    let codes: Vec<Option<String>> = report.diagnostics.iter().map(|d| d.code.clone()).collect();
    assert_eq!(codes, [Some("W1".to_owned())], "{report:?}");
    sup.shutdown().await;
}

/// A checking server (as rust-analyzer's `cargo check`) whose list, cleared while the save's
/// check ran, comes after the check's end, and whose findings come back 100 ms later: with no
/// quiet time at all (`settle` zero), the answer after each write of an open file waits for
/// them, because the file had them before the save, and is final only with them.
#[tokio::test]
async fn a_check_whose_cleared_list_comes_after_its_end_is_final_only_with_its_findings() {
    let (_dir, root) = project(&[("a.fix", "def alpha\nWARN W1: own finding\nalpha\n")]);
    let mut config =
        checking(config(&root, &[("FIXTURE_LSP_DIAGNOSTICS", "both"), ("FIXTURE_LSP_CHECK_LATE_MS", "100")]));
    config.settle = Duration::ZERO;
    let sup = Supervisor::new(config);
    let path = root.join("a.fix");
    let codes = |report: &lsp_supervisor::FileDiagnostics| {
        let mut codes: Vec<(u32, Option<String>)> =
            report.diagnostics.iter().map(|d| (d.location.line, d.code.clone())).collect();
        codes.sort();
        codes
    };
    // A first write opens the file and runs the first check; once the check's finding has come
    // (100 ms after its end), the file is open with it: that tells the next writes' wait that a
    // list without it may not be the last.
    std::fs::write(&path, "def alpha\nWARN W1: own finding\nalpha\nalpha\n").unwrap();
    sup.diagnostics_after_write(&path).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    for round in 1..=3 {
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}alpha\n")).unwrap();
        let report = sup.diagnostics_after_write(&path).await.unwrap();
        assert!(report.complete, "round {round}: {report:?}");
        assert_eq!(
            codes(&report),
            [(1, Some("C1".to_owned())), (2, Some("W1".to_owned()))],
            "round {round}: the check's finding and the server's own"
        );
    }
    sup.shutdown().await;
}
