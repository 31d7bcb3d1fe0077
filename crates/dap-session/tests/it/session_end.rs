//! Calls that wait on a session while it ends, under real adapters: a
//! `launch` or `continue` waiting for a program that never stops returns as
//! soon as the TTL, a `terminate` from another task or the adapter's death
//! ends the session, and says how; `terminate` on an ended session succeeds
//! and says how it had ended; an `attach` to a port that accepts and never
//! answers fails within the request timeout, naming the address and what
//! came back. (debugpy `--wait-for-client` after a port probe is that port
//! at times, but at others it exits or serves the next client, so it makes
//! no steady test.)
//!
//! The waits are set far longer than the ends, so a call that returns by its
//! own timeout gives another outcome and fails on the value; the outer
//! timeouts only catch hangs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::field_reassign_with_default)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use dap_session::{
    ADAPTER_EXITED, AdapterId, AttachSpec, DebugConfig, DebugSupervisor, LaunchSpec, Limits, Phase, Resume, RunOutcome,
    alive,
};

use crate::common::{has_debugpy, lldb_dap, project, require};

const CONV: &str = "ending";

/// A hang bound, far past any wait these tests expect to end.
const HANG: Duration = Duration::from_secs(120);

fn tools_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python")
}

/// debugpy from `.tools/venv`, a run timeout of a minute and the given TTL; `None` (skipped) without it.
fn debugpy_config(ttl: Duration) -> Option<DebugConfig> {
    if !require("debugpy in .tools/venv", has_debugpy(&tools_python())) {
        return None;
    }
    let mut config = DebugConfig::default();
    config.ttl = ttl;
    config.limits = Limits {
        request_timeout: Duration::from_secs(20),
        start_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    config.detection.python = Some(tools_python());
    Some(config)
}

/// The fixture's Python project, whose `attach_target.py` loops for ever.
fn looping_python() -> (tempfile::TempDir, PathBuf) {
    let root = project("python");
    let program = root.path().join("attach_target.py");
    (root, program)
}

fn ended_reason(outcome: &RunOutcome) -> &str {
    match outcome {
        RunOutcome::Exited { reason, .. } => reason,
        other => panic!("expected the session's end, got {other:?}"),
    }
}

/// Polls `status` until the session is there and running (a launch past its start-up), and
/// the adapter has said the program's process id.
async fn until_running(debug: &DebugSupervisor) -> dap_session::SessionInfo {
    for _ in 0..600 {
        if let Some(info) = debug.status(CONV).await.session
            && info.phase == Phase::Running
            && info.debuggee_pid.is_some()
        {
            return info;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the session never showed as running");
}

#[tokio::test]
async fn a_launch_that_never_stops_returns_when_the_ttl_ends_the_session() {
    let Some(config) = debugpy_config(Duration::from_secs(4)) else { return };
    let (root, program) = looping_python();
    let debug = DebugSupervisor::new(config);
    let started = tokio::time::timeout(HANG, debug.launch(CONV, LaunchSpec::new(root.path(), &program)))
        .await
        .expect("launch hung")
        .unwrap();
    assert_eq!(ended_reason(&started.outcome), "its lifetime of 4 s (TTL) ran out");
    let info = debug.status(CONV).await.session.unwrap();
    assert_eq!(info.phase, Phase::Ended { reason: "its lifetime of 4 s (TTL) ran out".into(), exit_code: None });
    let (debuggee, adapter) = (info.debuggee_pid.unwrap(), info.adapter_pid.unwrap());
    assert!(!alive(debuggee), "the debuggee {debuggee} outlived the TTL");
    assert!(!alive(adapter), "the adapter {adapter} outlived the TTL");
}

#[tokio::test]
async fn a_launch_waiting_for_its_first_stop_returns_when_another_task_terminates_the_session() {
    let Some(config) = debugpy_config(Duration::from_secs(30 * 60)) else { return };
    let (root, program) = looping_python();
    let debug = Arc::new(DebugSupervisor::new(config));
    let launching = tokio::spawn({
        let debug = Arc::clone(&debug);
        async move { debug.launch(CONV, LaunchSpec::new(root.path(), &program)).await }
    });
    let info = tokio::time::timeout(HANG, until_running(&debug)).await.expect("status hung");
    let debuggee = info.debuggee_pid.unwrap();
    // A second start is refused while the first still waits.
    let (other_root, other) = looping_python();
    let again = debug.launch(CONV, LaunchSpec::new(other_root.path(), &other)).await.unwrap_err();
    assert!(again.to_string().starts_with("a debug session is already running (debugpy launched "), "{again}");
    let terminated = debug.terminate(CONV).await.unwrap();
    assert_eq!((terminated.debuggee_ended, terminated.was), (true, Phase::Running));
    let started = tokio::time::timeout(HANG, launching).await.expect("launch hung").unwrap().unwrap();
    assert_eq!(ended_reason(&started.outcome), "terminated by request");
    assert!(!alive(debuggee), "the debuggee {debuggee} outlived terminate");
}

const C_LOOP: &str = "#include <unistd.h>\n\nint main(void) {\n    long ticks = 0;\n    for (;;) {\n        ticks++;\n        usleep(10000);\n    }\n}\n";

/// A C program that loops for ever, built with debug info; `None` (skipped) without cc or lldb-dap.
fn c_loop(root: &Path) -> Option<PathBuf> {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return None;
    }
    std::fs::write(root.join("loop.c"), C_LOOP).unwrap();
    std::fs::write(root.join("CMakeLists.txt"), "project(loop C)\nadd_executable(loop loop.c)\n").unwrap();
    let program = root.join("loop");
    let built = Command::new("cc").args(["-g", "-O0", "-o"]).arg(&program).arg(root.join("loop.c")).status();
    require("cc", built.is_ok_and(|s| s.success())).then_some(program)
}

fn lldb_config() -> DebugConfig {
    let mut config = DebugConfig::default();
    config.limits.request_timeout = Duration::from_secs(20);
    config.limits.run_timeout = Duration::from_secs(60);
    config
}

/// Launches the C loop stopped in its loop, then continues with no breakpoint left: the
/// `continue` waits, on a task of its own, for a stop that never comes.
async fn continuing_c_loop(
    debug: &Arc<DebugSupervisor>,
    root: &Path,
    program: &Path,
) -> tokio::task::JoinHandle<RunOutcome> {
    let source = root.join("loop.c");
    debug.set_breakpoints(CONV, &source, &[6]).await.unwrap();
    let started = debug.launch(CONV, LaunchSpec::new(root, program)).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::Stopped(_)), "{:?}", started.outcome);
    debug.set_breakpoints(CONV, &source, &[]).await.unwrap();
    let continuing = tokio::spawn({
        let debug = Arc::clone(debug);
        async move { debug.resume(CONV, Resume::Continue, None).await.unwrap() }
    });
    tokio::time::timeout(HANG, until_running(debug)).await.expect("status hung");
    continuing
}

#[tokio::test]
async fn a_continue_that_never_stops_returns_when_another_task_terminates_the_session() {
    let root = tempfile::tempdir().unwrap();
    let Some(program) = c_loop(root.path()) else { return };
    let debug = Arc::new(DebugSupervisor::new(lldb_config()));
    let continuing = continuing_c_loop(&debug, root.path(), &program).await;
    let debuggee = debug.status(CONV).await.session.unwrap().debuggee_pid.unwrap();
    let terminated = debug.terminate(CONV).await.unwrap();
    assert_eq!(terminated.was, Phase::Running);
    let outcome = tokio::time::timeout(HANG, continuing).await.expect("continue hung").unwrap();
    assert_eq!(ended_reason(&outcome), "terminated by request");
    assert!(!alive(debuggee), "the debuggee {debuggee} outlived terminate");
}

#[tokio::test]
async fn a_continue_that_never_stops_returns_when_the_adapter_dies_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    let Some(program) = c_loop(root.path()) else { return };
    let debug = Arc::new(DebugSupervisor::new(lldb_config()));
    let continuing = continuing_c_loop(&debug, root.path(), &program).await;
    let adapter = debug.status(CONV).await.session.unwrap().adapter_pid.unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(adapter).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    let outcome = tokio::time::timeout(HANG, continuing).await.expect("continue hung").unwrap();
    assert_eq!(ended_reason(&outcome), format!("{ADAPTER_EXITED} (signal: 9 (SIGKILL))"));
}

#[tokio::test]
async fn terminate_after_the_program_ended_succeeds_and_says_how_it_ended() {
    let Some(config) = debugpy_config(Duration::from_secs(30 * 60)) else { return };
    let root = project("python");
    let debug = DebugSupervisor::new(config);
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), root.path().join("main.py"))).await.unwrap();
    assert_eq!(started.outcome, RunOutcome::Exited { exit_code: Some(0), reason: "the program finished".into() });
    let ended = Phase::Ended { reason: "the program finished".into(), exit_code: Some(0) };
    // Once, and again: a model that cleans up may ask twice.
    for _ in 0..2 {
        let terminated = debug.terminate(CONV).await.unwrap();
        assert_eq!((terminated.adapter, terminated.debuggee_ended), (AdapterId::Debugpy, true));
        assert_eq!(terminated.was, ended);
    }
    assert_eq!(debug.status(CONV).await.session.unwrap().phase, ended);
}

/// The attach's error for `port`, with a request timeout of 3 s and a start-up timeout of a minute.
async fn attach_error(root: &Path, port: u16) -> String {
    let mut config = debugpy_config(Duration::from_secs(30 * 60)).unwrap();
    config.limits.request_timeout = Duration::from_secs(3);
    let debug = DebugSupervisor::new(config);
    let mut spec = AttachSpec::port(root, port);
    spec.adapter = Some(AdapterId::Debugpy);
    let attached = tokio::time::timeout(Duration::from_secs(40), debug.attach(CONV, spec)).await.expect("attach hung");
    let error = attached.unwrap_err().to_string();
    eprintln!("attach error: {error}");
    // Nothing is left half-open: the conversation has no session.
    assert!(debug.status(CONV).await.session.is_none());
    error
}

#[tokio::test]
async fn attach_to_a_port_that_accepts_and_never_answers_fails_within_the_request_timeout() {
    if !require("debugpy in .tools/venv", has_debugpy(&tools_python())) {
        return;
    }
    let root = project("python");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts, reads what comes, answers nothing, and keeps the connection open.
    let (read_tx, read_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Read as _;
        let (mut stream, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buffer) {
            if n == 0 {
                break;
            }
            let _ = read_tx.send(String::from_utf8_lossy(&buffer[..n]).into_owned());
        }
    });
    let error = attach_error(root.path(), port).await;
    assert!(
        error.starts_with(&format!(
            "127.0.0.1:{port} did not answer as a DAP debug server within 3 s: the connection was accepted, but nothing came back (0 bytes)"
        )),
        "{error}"
    );
    // It was asked: the listener read our `initialize`.
    let asked: String = read_rx.try_iter().collect();
    assert!(asked.contains("\"command\":\"initialize\""), "{asked}");
}
