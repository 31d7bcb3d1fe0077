//! Debugging inside an enclosure: a debugpy session in the real bubblewrap
//! (breakpoint, evaluate, continue to the exit) whose debuggee sees the host
//! read-only; a TCP adapter refused in a sandbox without network; the
//! fixture adapter started through a command prefix.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use dap_session::{DebugConfig, DebugSupervisor, LaunchSpec, Limits, Resume, RunOutcome};
use enclosure::Enclosure;

use crate::common::{has_debugpy, project, require};

fn bwrap_ready() -> bool {
    let verdict = Enclosure::bwrap("/").check();
    if let Err(error) = &verdict {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
        eprintln!("SKIPPED: {error}");
    }
    verdict.is_ok()
}

fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python")
}

fn config(enclosure: Enclosure) -> DebugConfig {
    DebugConfig {
        limits: Limits {
            request_timeout: Duration::from_secs(20),
            start_timeout: Duration::from_secs(60),
            run_timeout: Duration::from_secs(30),
            ..Limits::default()
        },
        enclosure: Some(enclosure),
        ..DebugConfig::default()
    }
}

#[tokio::test]
async fn a_debugpy_session_with_a_breakpoint_runs_in_bwrap() {
    let python = venv_python();
    if !bwrap_ready() || !require("debugpy in .tools/venv", has_debugpy(&python)) {
        return;
    }
    let root = project("python");
    let venv = python.parent().unwrap().parent().unwrap().canonicalize().unwrap();
    std::os::unix::fs::symlink(&venv, root.path().join(".venv")).unwrap();
    let source = root.path().join("main.py");
    // The root's `.venv` links to the setup venv, which a checkout under /tmp would hide:
    // listed read-only, as a host lists a venv kept outside the root.
    let debug = DebugSupervisor::new(config(Enclosure { ro_paths: vec![venv], ..Enclosure::bwrap(root.path()) }));
    debug.set_breakpoints("c", &source, &[9]).await.unwrap();
    let started = debug.launch("c", LaunchSpec::new(root.path().to_path_buf(), source.clone())).await.unwrap();
    match &started.outcome {
        RunOutcome::Stopped(stop) => assert_eq!(stop.location.as_ref().unwrap().line, 9, "{stop:?}"),
        other => panic!("expected the breakpoint, got {other:?}"),
    }
    assert_eq!(debug.evaluate("c", "count + 1", None).await.unwrap().value, "42");
    // The debuggee is inside: the host's /usr is read-only to it, and the real home is gone.
    let probe = "__import__('os').access('/usr', __import__('os').W_OK)";
    assert_eq!(debug.evaluate("c", probe, None).await.unwrap().value, "False");
    let end = debug.resume("c", Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { .. }), "{end:?}");
    let output = debug.output("c").await.unwrap();
    assert!(output.text.contains("hello debugger 42 3"), "{}", output.text);
}

#[tokio::test]
async fn a_tcp_adapter_is_refused_in_a_sandbox_without_network() {
    if !bwrap_ready() {
        return;
    }
    let root = project("go");
    let bin = common::bin_dir_with(&["dlv"]);
    let mut config = common::config(Some(bin.path()), &[]);
    config.enclosure = Some(Enclosure::bwrap(root.path()));
    let debug = DebugSupervisor::new(config);
    let error = debug.launch("c", LaunchSpec::new(root.path().to_path_buf(), root.path().join("main.go"))).await;
    let error = error.unwrap_err().to_string();
    assert!(error.contains("a bwrap sandbox without network shuts out"), "{error}");
}

#[tokio::test]
async fn the_adapter_starts_through_a_command_prefix() {
    let root = project("fixture");
    let log = root.path().join("entered.log");
    let wrapper = root.path().join("enter.sh");
    std::fs::write(&wrapper, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec \"$@\"\n", log.display())).unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let bin = common::bin_dir_with(&["dart"]);
    let mut config = common::config(Some(bin.path()), &[]);
    config.enclosure = Some(Enclosure::command(root.path(), vec![wrapper.display().to_string()]));
    let debug = DebugSupervisor::new(config);
    let program = root.path().join("main.dart");
    let started = debug.launch("c", LaunchSpec::new(root.path().to_path_buf(), program)).await;
    assert!(started.is_ok(), "{started:?}");
    // The fixture program may have run to its end already.
    let _ = debug.terminate("c").await;
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 1, "{logged}");
    assert!(logged.starts_with("env --default-signal=INT -C "), "{logged}");
    assert!(logged.contains("dart"), "{logged}");
}
