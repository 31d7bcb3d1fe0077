//! The whole session against the fixture adapter standing in as `dart` (and
//! as `dlv` for the TCP transport): start-up order, breakpoints, steps,
//! stale references, output, refusals, faults, terminate and the TTL,
//! checked by pid.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use dap_session::{
    AdapterId, AttachSpec, DebugConfig, DebugSupervisor, Error, LaunchSpec, Phase, Resume, RunOutcome, Start, Stop,
    alive,
};
use serde_json::Value;

use crate::common::{bin_dir_with, config, eventually, project};

const CONV: &str = "c1";

fn launch(root: &Path) -> LaunchSpec {
    LaunchSpec::new(root.to_path_buf(), root.join("main.dart"))
}

fn stopped(outcome: &RunOutcome) -> &Stop {
    match outcome {
        RunOutcome::Stopped(stop) => stop,
        other => panic!("expected a stop, got {other:?}"),
    }
}

/// (line, function) of a stop.
fn at(outcome: &RunOutcome) -> (u64, String) {
    let location = stopped(outcome).location.clone().unwrap();
    (location.line, location.function)
}

fn setup(env: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, DebugSupervisor) {
    setup_with(env, |_| {})
}

fn setup_with(
    env: &[(&str, &str)],
    tweak: impl FnOnce(&mut DebugConfig),
) -> (tempfile::TempDir, tempfile::TempDir, DebugSupervisor) {
    let root = project("fixture");
    let bin = bin_dir_with(&["dart"]);
    let mut config = config(Some(bin.path()), env);
    tweak(&mut config);
    (root, bin, DebugSupervisor::new(config))
}

fn pids(supervisor_status: &dap_session::Status) -> (u32, u32) {
    let info = supervisor_status.session.as_ref().unwrap();
    (info.debuggee_pid.unwrap(), info.adapter_pid.unwrap())
}

#[tokio::test]
async fn breakpoints_steps_scopes_variables_evaluate_and_output() {
    let (root, _bin, debug) = setup(&[]);
    let program = root.path().join("main.dart");
    let early = debug.set_breakpoints(CONV, &program, &[10, 5]).await.unwrap();
    assert_eq!((early.lines.clone(), early.placed), (vec![5, 10], None));
    let lines = std::fs::read_to_string(&program).unwrap().lines().count();
    let error = debug.set_breakpoints(CONV, &program, &[5, lines as u64 + 1]).await.unwrap_err();
    let expected = format!("line {} is out of range: {} has {lines} lines", lines + 1, program.display());
    assert!(error.to_string().starts_with(&expected), "{error}");
    assert_eq!(debug.status(CONV).await.breakpoints[0].lines, [5, 10], "a refused call changes nothing");

    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Dart);
    let placed = started.breakpoints[0].placed.as_ref().unwrap();
    assert_eq!(placed.iter().map(|p| (p.requested_line, p.verified)).collect::<Vec<_>>(), [(5, true), (10, true)]);
    assert_eq!(at(&started.outcome), (5, "greet".into()));
    assert_eq!(stopped(&started.outcome).reason, "breakpoint");
    assert_eq!(stopped(&started.outcome).location.as_ref().unwrap().file.as_deref(), Some(program.as_path()));

    let stack = debug.stack(CONV, None).await.unwrap();
    assert_eq!(stack.total, 2);
    let frames: Vec<(String, u64)> =
        stack.items.iter().map(|f| (f.location.function.clone(), f.location.line)).collect();
    assert_eq!(frames, [("greet".to_owned(), 5), ("main".to_owned(), 4)]);

    let main_scopes = debug.scopes(CONV, stack.items[1].id).await.unwrap();
    assert_eq!(main_scopes[0].name, "Locals");
    let main_vars = debug.variables(CONV, main_scopes[0].reference).await.unwrap();
    let shown: Vec<(&str, &str)> = main_vars.items.iter().map(|v| (v.name.as_str(), v.value.as_str())).collect();
    assert_eq!(shown, [("count", "41"), ("name", "fixture")]);
    let stale_reference = main_scopes[0].reference;
    // The caller's frame; the top frame's id is handed out again with the next stop's location.
    let stale_frame = stack.items[1].id;

    let outcome = debug.resume(CONV, Resume::StepOver, None).await.unwrap();
    assert_eq!(at(&outcome), (6, "greet".into()));
    assert_eq!(stopped(&outcome).reason, "step");
    // References from the first stop are refused after the program moved.
    let error = debug.variables(CONV, stale_reference).await.unwrap_err();
    assert!(matches!(error, Error::Stale { issued: 1, current: 2, .. }), "{error}");
    assert!(error.to_string().contains("is stale"), "{error}");
    assert!(matches!(debug.scopes(CONV, stale_frame).await.unwrap_err(), Error::Stale { .. }));

    let evaluated = debug.evaluate(CONV, "greeting", None).await.unwrap();
    assert_eq!(evaluated.value, "hi");
    let error = debug.evaluate(CONV, "nope", None).await.unwrap_err();
    assert_eq!(error.to_string(), "evaluate failed: name 'nope' is not defined");

    let outcome = debug.resume(CONV, Resume::StepIn, None).await.unwrap();
    assert_eq!(at(&outcome), (7, "greet".into()));
    let stack = debug.stack(CONV, None).await.unwrap();
    let scopes = debug.scopes(CONV, stack.items[0].id).await.unwrap();
    let vars = debug.variables(CONV, scopes[0].reference).await.unwrap();
    let items = vars.items.iter().find(|v| v.name == "items").unwrap();
    assert_eq!((items.value.as_str(), items.type_name.as_deref()), ("[1, 2, 3]", Some("list")));
    let children = debug.variables(CONV, items.reference).await.unwrap();
    assert_eq!(children.items.iter().map(|v| v.value.as_str()).collect::<Vec<_>>(), ["1", "2", "3"]);

    let outcome = debug.resume(CONV, Resume::StepOut, None).await.unwrap();
    assert_eq!(at(&outcome), (9, "main".into()));
    let outcome = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert_eq!(at(&outcome), (10, "main".into()));
    assert_eq!(stopped(&outcome).reason, "breakpoint");
    let threads = debug.threads(CONV).await.unwrap();
    assert_eq!((threads[0].id, threads[0].name.as_str()), (1, "main"));

    let (debuggee, adapter) = pids(&debug.status(CONV).await);
    let outcome = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert_eq!(outcome, RunOutcome::Exited { exit_code: Some(0), reason: "the program finished".into() });
    let output = debug.output(CONV).await.unwrap();
    assert_eq!(output.text, "hello from the fixture\nin greet\nwarning on stderr\n");
    assert_eq!(output.dropped_chars, 0);
    // The program ended on its own: the adapter is gone too.
    assert!(eventually(Duration::from_secs(5), || !alive(adapter) && !alive(debuggee)).await);
    assert!(matches!(debug.resume(CONV, Resume::Continue, None).await, Err(Error::Ended(_))));
}

#[tokio::test]
async fn start_up_order_and_refused_reverse_requests() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let log_path = log.path().to_str().unwrap().to_owned();
    let (root, _bin, debug) = setup(&[("FIXTURE_DAP_LOG", &log_path), ("FIXTURE_DAP_NOISE", "1")]);
    std::fs::write(root.path().join("main.dart"), "print one\nnoise\nlet x = 1\nprint two\n").unwrap();
    debug.set_breakpoints(CONV, &root.path().join("main.dart"), &[4]).await.unwrap();
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert_eq!(at(&started.outcome), (4, "main".into()));
    assert_eq!(debug.evaluate(CONV, "x", None).await.unwrap().value, "1");
    let outcome = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Exited { exit_code: Some(0), .. }), "{outcome:?}");
    assert_eq!(debug.output(CONV).await.unwrap().text, "one\ntwo\n");

    let messages: Vec<Value> =
        std::fs::read_to_string(log.path()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let requests: Vec<&str> =
        messages.iter().filter(|m| m["type"] == "request").filter_map(|m| m["command"].as_str()).collect();
    assert_eq!(
        requests[..5],
        ["initialize", "launch", "setBreakpoints", "setExceptionBreakpoints", "configurationDone"]
    );
    let exceptions = messages.iter().find(|m| m["command"] == "setExceptionBreakpoints").unwrap();
    assert_eq!(exceptions["arguments"]["filters"], serde_json::json!(["uncaught"]));
    assert_eq!(messages[0]["arguments"]["linesStartAt1"], true);
    let refusals: Vec<(&str, bool, &str)> = messages
        .iter()
        .filter(|m| m["type"] == "response")
        .map(|m| (m["command"].as_str().unwrap(), m["success"].as_bool().unwrap(), m["message"].as_str().unwrap()))
        .collect();
    assert_eq!(refusals.len(), 4, "{refusals:?}");
    for (command, success, message) in refusals {
        assert!(!success);
        assert!(message.starts_with(&format!("{command} is not supported")), "{message}");
    }
}

#[tokio::test]
async fn a_second_launch_is_refused_and_terminate_leaves_no_process() {
    let (root, _bin, debug) = setup_with(&[], |c| c.limits.run_timeout = Duration::from_millis(300));
    std::fs::write(root.path().join("main.dart"), "print start\nspin\n").unwrap();
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::StillRunning { .. }), "{:?}", started.outcome);
    let status = debug.status(CONV).await;
    assert_eq!(status.session.as_ref().map(|s| s.phase.clone()), Some(dap_session::Phase::Running));
    let (debuggee, adapter) = pids(&status);
    assert!(alive(debuggee) && alive(adapter));

    let error = debug.launch(CONV, launch(root.path())).await.unwrap_err();
    assert!(matches!(error, Error::AlreadyRunning(_)), "{error}");
    assert!(error.to_string().contains("terminate it before starting another"), "{error}");
    assert!(matches!(debug.stack(CONV, None).await, Err(Error::NotStopped)));
    // Another conversation has its own slot.
    assert!(matches!(debug.output("other").await, Err(Error::NoSession)));

    let paused = debug.pause(CONV, None).await.unwrap();
    assert_eq!(stopped(&paused).reason, "pause");
    assert_eq!(at(&paused), (2, "main".into()));

    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(terminated.debuggee_ended);
    assert!(!alive(debuggee), "debuggee {debuggee} still running");
    assert!(!alive(adapter), "adapter {adapter} still running");
    let status = debug.status(CONV).await;
    assert!(matches!(&status.session.unwrap().phase, Phase::Ended { reason, .. } if reason == "terminated by request"));
    // Once ended, a new launch is allowed.
    let again = debug.launch(CONV, launch(root.path())).await;
    assert!(again.is_ok());
    debug.terminate(CONV).await.unwrap();
}

#[tokio::test]
async fn the_ttl_ends_the_session_and_kills_everything() {
    let root = project("fixture");
    let bin = bin_dir_with(&["dart"]);
    let mut config = config(Some(bin.path()), &[]);
    config.ttl = Duration::from_millis(1500);
    // The launch waits this long for a stop before it returns: the TTL still counts from
    // the session's start, as status's time left does.
    config.limits.run_timeout = Duration::from_millis(800);
    let debug = DebugSupervisor::new(config);
    std::fs::write(root.path().join("main.dart"), "spin\n").unwrap();
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::StillRunning { .. }));
    let (debuggee, adapter) = pids(&debug.status(CONV).await);
    assert!(alive(debuggee));
    let mut ended = false;
    for _ in 0..200 {
        let session = debug.status(CONV).await.session.unwrap();
        if let Phase::Ended { reason, .. } = &session.phase {
            assert_eq!(reason, "its lifetime of 1 s (TTL) ran out");
            ended = true;
            break;
        }
        // A live session whose time left is zero is one the TTL is about to end; the TTL
        // counting from the launch's return kept such a session going for the launch's wait.
        let overdue = session.age.saturating_sub(Duration::from_millis(1500));
        assert!(
            session.ttl_left > Duration::ZERO || overdue < Duration::from_millis(500),
            "status said no time was left {overdue:?} ago, and the session still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended, "the TTL did not end the session");
    assert!(!alive(debuggee) && !alive(adapter));
    let error = debug.stack(CONV, None).await.unwrap_err();
    assert_eq!(error.to_string(), "the debug session has ended: its lifetime of 1 s (TTL) ran out");
}

#[tokio::test]
async fn a_crashing_adapter_is_reported_with_its_status_and_stderr() {
    let (root, _bin, debug) = setup(&[("FIXTURE_DAP_CRASH_ON", "next")]);
    debug.set_breakpoints(CONV, &root.path().join("main.dart"), &[2]).await.unwrap();
    debug.launch(CONV, launch(root.path())).await.unwrap();
    let error = debug.resume(CONV, Resume::StepOver, None).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, Error::AdapterGone { .. }), "{text}");
    assert!(text.contains("exit status: 3") && text.contains("crashing on next as asked"), "{text}");
    let status = debug.status(CONV).await;
    assert!(matches!(status.session.unwrap().phase, Phase::Ended { .. }));

    // A program line that crashes the adapter while running ends the run.
    let (root, _bin, debug) = setup(&[]);
    std::fs::write(root.path().join("main.dart"), "print before\ncrash\n").unwrap();
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert_eq!(
        started.outcome,
        RunOutcome::Exited { exit_code: None, reason: "the debug adapter exited (exit status: 3)".into() }
    );
    assert_eq!(debug.output(CONV).await.unwrap().text, "before\n");
}

#[tokio::test]
async fn a_hanging_or_slow_adapter_times_out_naming_the_request() {
    let (root, _bin, _debug) = setup(&[]);
    let bin = bin_dir_with(&["dart"]);
    let mut hang = config(Some(bin.path()), &[("FIXTURE_DAP_HANG_ON", "scopes")]);
    hang.limits.request_timeout = Duration::from_millis(400);
    let debug = DebugSupervisor::new(hang);
    debug.set_breakpoints(CONV, &root.path().join("main.dart"), &[2]).await.unwrap();
    debug.launch(CONV, launch(root.path())).await.unwrap();
    let frame = debug.stack(CONV, None).await.unwrap().items[0].id;
    let error = debug.scopes(CONV, frame).await.unwrap_err();
    assert_eq!(error.to_string(), "scopes got no answer from the adapter within 400 ms");
    let (debuggee, adapter) = pids(&debug.status(CONV).await);
    // A hung adapter does not keep terminate from ending everything.
    debug.terminate(CONV).await.unwrap();
    assert!(!alive(debuggee) && !alive(adapter));

    let mut slow = config(Some(bin.path()), &[("FIXTURE_DAP_SLOW_MS", "600")]);
    slow.limits.start_timeout = Duration::from_millis(300);
    let debug = DebugSupervisor::new(slow);
    let error = debug.launch(CONV, launch(root.path())).await.unwrap_err();
    assert_eq!(error.to_string(), "initialize got no answer from the adapter within 300 ms");
    assert!(debug.status(CONV).await.session.is_none());

    // Slow but within the limits: it works.
    let mut slow = config(Some(bin.path()), &[("FIXTURE_DAP_SLOW_MS", "50")]);
    slow.limits.start_timeout = Duration::from_secs(5);
    let debug = DebugSupervisor::new(slow);
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::Exited { exit_code: Some(0), .. }), "{:?}", started.outcome);
}

#[tokio::test]
async fn attach_leaves_the_debuggee_and_detection_explains_dart() {
    let (root, _bin, debug) = setup_with(&[], |c| c.limits.run_timeout = Duration::from_millis(300));
    let started = debug.attach(CONV, AttachSpec::port(root.path(), 9)).await.unwrap();
    assert!(
        matches!(started.outcome, RunOutcome::StillRunning { .. }) || matches!(started.outcome, RunOutcome::Stopped(_))
    );
    let info = debug.status(CONV).await.session.unwrap();
    assert_eq!(info.start, Start::Attach { host: "127.0.0.1".into(), port: 9, pid: None });
    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(!terminated.debuggee_ended);

    // Without the stand-in on the search path, dart is missing and detection says which half.
    let empty = tempfile::tempdir().unwrap();
    let mut config = DebugConfig::default();
    config.detection.search_path = Some(empty.path().as_os_str().to_owned());
    let debug = DebugSupervisor::new(config);
    let reports = debug.adapters(root.path()).await;
    let dart = reports.iter().find(|r| r.id == AdapterId::Dart).unwrap();
    assert!(!dart.usable());
    assert_eq!(
        dart.detail,
        "not usable: pubspec.yaml at the root, but no dart on PATH (the Dart SDK is not installed here)"
    );
    let error = debug.launch(CONV, launch(root.path())).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "dart is not usable: pubspec.yaml at the root, but no dart on PATH (the Dart SDK is not installed here)"
    );
}

#[tokio::test]
async fn a_tcp_adapter_is_reached_through_the_port_it_prints() {
    // The fixture stands in for `dlv dap --listen 127.0.0.1:0`.
    let root = project("fixture");
    std::fs::write(root.path().join("go.mod"), "module fixture\n").unwrap();
    std::fs::rename(root.path().join("main.dart"), root.path().join("main.go")).unwrap();
    let bin = bin_dir_with(&["dlv"]);
    let debug = DebugSupervisor::new(config(Some(bin.path()), &[]));
    let program = root.path().join("main.go");
    debug.set_breakpoints(CONV, &program, &[7]).await.unwrap();
    let spec = LaunchSpec::new(root.path(), program);
    let started = debug.launch(CONV, spec).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Delve);
    assert_eq!(at(&started.outcome), (7, "greet".into()));
    let outcome = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Exited { exit_code: Some(0), .. }), "{outcome:?}");
    assert_eq!(debug.output(CONV).await.unwrap().text, "hello from the fixture\nin greet\nwarning on stderr\n");
}

#[tokio::test]
async fn capped_lists_say_how_many_there_were() {
    let (root, _bin, debug) = setup(&[]);
    let mut program = String::new();
    // 35 nested calls: 36 frames in all.
    for depth in 0..35 {
        program.push_str(&format!("call f{depth}\n"));
    }
    let items: Vec<String> = (0..60).map(|i| i.to_string()).collect();
    program.push_str(&format!("let many = [{}]\n", items.join(", ")));
    program.push_str(&format!("let long = {}\n", "x".repeat(450)));
    program.push_str("print done\n");
    std::fs::write(root.path().join("main.dart"), &program).unwrap();
    debug.set_breakpoints(CONV, &root.path().join("main.dart"), &[38]).await.unwrap();
    let started = debug.launch(CONV, launch(root.path())).await.unwrap();
    assert_eq!(at(&started.outcome), (38, "f34".into()));

    let stack = debug.stack(CONV, None).await.unwrap();
    assert_eq!((stack.items.len(), stack.total), (30, 36));
    let scopes = debug.scopes(CONV, stack.items[0].id).await.unwrap();
    let locals = debug.variables(CONV, scopes[0].reference).await.unwrap();
    let long = locals.items.iter().find(|v| v.name == "long").unwrap();
    assert_eq!((long.value.chars().count(), long.cut_from), (400, Some(450)));
    let many = locals.items.iter().find(|v| v.name == "many").unwrap();
    let children = debug.variables(CONV, many.reference).await.unwrap();
    assert_eq!((children.items.len(), children.total), (50, 60));
    assert_eq!(children.items[49].value, "49");
    debug.terminate(CONV).await.unwrap();
}

#[tokio::test]
async fn a_refused_step_leaves_the_program_stopped_where_it_was() {
    let (root, _bin, debug) = setup(&[]);
    debug.set_breakpoints(CONV, &root.path().join("main.dart"), &[5]).await.unwrap();
    debug.launch(CONV, launch(root.path())).await.unwrap();
    let stack = debug.stack(CONV, None).await.unwrap();
    let error = debug.resume(CONV, Resume::StepOver, Some(7)).await.unwrap_err();
    assert_eq!(error.to_string(), "next failed: no thread 7");
    // Still stopped at the same stop: its ids are still good.
    assert_eq!(debug.scopes(CONV, stack.items[1].id).await.unwrap()[0].name, "Locals");
    let outcome = debug.resume(CONV, Resume::StepOver, None).await.unwrap();
    assert_eq!(at(&outcome), (6, "greet".into()));
    debug.terminate(CONV).await.unwrap();
}
