//! One scenario per real adapter (debugpy, lldb-dap on C and on Rust, delve),
//! on the small programs in `fixtures/debug/`, compiled at test time:
//! breakpoint → stop there → frames → scopes → variables → evaluate → step
//! in / over / out → continue to the exit → the program's output. Plus
//! debugpy attach, which must leave the attached process running.
//!
//! A missing adapter or compiler fails the test under `CI=true` and skips
//! it with a printed reason elsewhere.
#![allow(clippy::unwrap_used, clippy::print_stderr, clippy::field_reassign_with_default)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dap_session::{AdapterId, AttachSpec, DebugConfig, DebugSupervisor, LaunchSpec, Limits, Resume, RunOutcome, alive};

use crate::common::{KillOnDrop, eventually, has_debugpy, listening_on, lldb_dap, project, require};

const CONV: &str = "real";

/// What a scenario expects, line numbers 1-based in the fixture's source.
struct Expect {
    breakpoint: u64,
    /// Function names (as the adapter shows them) and lines of the top frames at the breakpoint.
    frames: &'static [(&'static str, u64)],
    /// Variables of the top frame's first scope that must be there, with their values.
    variables: &'static [(&'static str, &'static str)],
    /// An expression and its value at the breakpoint.
    evaluate: (&'static str, &'static str),
    /// (line, function) after step in, then after step over.
    step_in: (u64, &'static str),
    step_over: (u64, &'static str),
    /// (line, function) after step out.
    step_out: (u64, &'static str),
    /// What the program prints.
    output: &'static str,
}

fn config(python: Option<PathBuf>) -> DebugConfig {
    let mut config = DebugConfig::default();
    config.limits = Limits {
        request_timeout: Duration::from_secs(20),
        start_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    config.detection.python = python;
    config
}

fn located(outcome: &RunOutcome) -> (u64, String) {
    match outcome {
        RunOutcome::Stopped(stop) => {
            let location = stop.location.as_ref().unwrap();
            (location.line, location.function.clone())
        }
        other => panic!("expected a stop, got {other:?}"),
    }
}

async fn scenario(debug: &DebugSupervisor, root: &Path, source: &Path, program: &Path, expect: &Expect) {
    debug.set_breakpoints(CONV, source, &[expect.breakpoint]).await.unwrap();
    let spec = LaunchSpec::new(root.to_path_buf(), program.to_path_buf());
    let started = debug.launch(CONV, spec).await.unwrap();
    let placed = started.breakpoints[0].placed.as_ref().unwrap();
    assert!(placed[0].verified, "{placed:?}");
    let (line, _) = located(&started.outcome);
    assert_eq!(line, expect.breakpoint, "{:?}", started.outcome);
    let debuggee = debug.status(CONV).await.session.unwrap().debuggee_pid;

    let stack = debug.stack(CONV, None).await.unwrap();
    let frames: Vec<(String, u64)> =
        stack.items.iter().map(|f| (f.location.function.clone(), f.location.line)).collect();
    let expected: Vec<(String, u64)> = expect.frames.iter().map(|(f, l)| ((*f).to_owned(), *l)).collect();
    assert_eq!(frames[..expected.len()], expected[..], "frames: {frames:?}");
    assert_eq!(stack.items[0].location.file.as_deref(), Some(source), "{:?}", stack.items[0]);

    let scopes = debug.scopes(CONV, stack.items[0].id).await.unwrap();
    assert!(!scopes.is_empty());
    let variables = debug.variables(CONV, scopes[0].reference).await.unwrap();
    for (name, value) in expect.variables {
        let found = variables.items.iter().find(|v| v.name == *name);
        assert_eq!(found.map(|v| v.value.as_str()), Some(*value), "{name} in {:?}", variables.items);
    }
    let (expression, value) = expect.evaluate;
    assert_eq!(debug.evaluate(CONV, expression, None).await.unwrap().value, value);

    let step_in = debug.resume(CONV, Resume::StepIn, None).await.unwrap();
    assert_eq!(located(&step_in), (expect.step_in.0, expect.step_in.1.to_owned()), "step in");
    let step_over = debug.resume(CONV, Resume::StepOver, None).await.unwrap();
    assert_eq!(located(&step_over), (expect.step_over.0, expect.step_over.1.to_owned()), "step over");
    let step_out = debug.resume(CONV, Resume::StepOut, None).await.unwrap();
    assert_eq!(located(&step_out), (expect.step_out.0, expect.step_out.1.to_owned()), "step out");

    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { .. }), "{end:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.text.contains(expect.output), "output: {:?}", output.text);
    if let Some(pid) = debuggee {
        assert!(eventually(Duration::from_secs(5), || !alive(pid)).await, "debuggee {pid} left running");
    }
}

fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python")
}

/// A debug target ready to launch: its root, source, program and a supervisor.
struct Prepared {
    root: tempfile::TempDir,
    source: PathBuf,
    program: PathBuf,
    debug: DebugSupervisor,
}

fn python_target() -> Option<Prepared> {
    let python = venv_python();
    if !require("debugpy in .tools/venv", has_debugpy(&python)) {
        return None;
    }
    let root = project("python");
    // The project's own venv, as debugpy detection prefers it.
    std::os::unix::fs::symlink(python.parent().unwrap().parent().unwrap(), root.path().join(".venv")).unwrap();
    let source = root.path().join("main.py");
    Some(Prepared { source: source.clone(), program: source, root, debug: DebugSupervisor::new(config(None)) })
}

fn c_target() -> Option<Prepared> {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return None;
    }
    let root = project("c");
    let source = root.path().join("main.c");
    let program = root.path().join("debugme");
    let (source_arg, program_arg) = (source.to_str().unwrap(), program.to_str().unwrap());
    if !compile("cc", &["-g", "-O0", "-o", program_arg, source_arg], root.path()) {
        return None;
    }
    Some(Prepared { root, source, program, debug: DebugSupervisor::new(config(None)) })
}

fn rust_target() -> Option<Prepared> {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return None;
    }
    let root = project("rust");
    let source = root.path().join("src/main.rs");
    let program = root.path().join("debugme");
    let (source_arg, program_arg) = (source.to_str().unwrap(), program.to_str().unwrap());
    if !compile("rustc", &["-g", "-C", "opt-level=0", "-o", program_arg, source_arg], root.path()) {
        return None;
    }
    Some(Prepared { root, source, program, debug: DebugSupervisor::new(config(None)) })
}

fn go_target() -> Option<Prepared> {
    let dlv = Command::new("dlv").arg("version").output().is_ok_and(|o| o.status.success());
    if !require("dlv (apt install delve)", dlv) {
        return None;
    }
    let root = project("go");
    let cache = tempfile::tempdir().unwrap();
    let program = root.path().join("debugme");
    let built = Command::new("go")
        .args(["build", "-gcflags=all=-N -l", "-o", program.to_str().unwrap(), "."])
        .current_dir(root.path())
        .env("GOCACHE", cache.path().join("cache"))
        .env("GOPATH", cache.path().join("gopath"))
        .env("GOFLAGS", "-mod=mod")
        .status();
    match built {
        Ok(status) => assert!(status.success(), "go build failed"),
        Err(_) => {
            require("go (apt install golang-go)", false);
            return None;
        }
    }
    let source = root.path().join("main.go");
    Some(Prepared { root, source, program, debug: DebugSupervisor::new(config(None)) })
}

#[tokio::test]
async fn debugpy_on_python() {
    let Some(t) = python_target() else { return };
    let reports = t.debug.adapters(t.root.path()).await;
    let report = reports.iter().find(|r| r.id == AdapterId::Debugpy).unwrap();
    assert!(report.usable(), "{}", report.detail);
    assert_eq!(report.command.as_ref().unwrap().program, t.root.path().join(".venv/bin/python"));
    let expect = Expect {
        breakpoint: 9,
        frames: &[("main", 9), ("<module>", 16)],
        variables: &[("count", "41"), ("items", "[1, 2, 3]")],
        evaluate: ("count + 1", "42"),
        step_in: (2, "greet"),
        step_over: (3, "greet"),
        step_out: (9, "main"),
        output: "hello debugger 42 3",
    };
    scenario(&t.debug, t.root.path(), &t.source, &t.program, &expect).await;
}

fn compile(program: &str, args: &[&str], dir: &Path) -> bool {
    let status = Command::new(program).args(args).current_dir(dir).status();
    match status {
        Ok(status) if status.success() => true,
        Ok(status) => panic!("{program} {args:?} failed: {status}"),
        Err(_) => require(program, false),
    }
}

#[tokio::test]
async fn lldb_on_c() {
    let Some(t) = c_target() else { return };
    let expect = Expect {
        breakpoint: 11,
        frames: &[("main", 11)],
        variables: &[("count", "41")],
        evaluate: ("count + 1", "42"),
        step_in: (4, "square"),
        step_over: (5, "square"),
        step_out: (11, "main"),
        output: "square 1681 count 42 first 1",
    };
    scenario(&t.debug, t.root.path(), &t.source, &t.program, &expect).await;
}

#[tokio::test]
async fn lldb_on_rust() {
    let Some(t) = rust_target() else { return };
    let expect = Expect {
        breakpoint: 9,
        frames: &[("main::main", 9)],
        variables: &[("count", "41")],
        evaluate: ("count", "41"),
        step_in: (2, "main::square"),
        // The tail expression `result` has no line-table row of its own: the step lands on the closing brace.
        step_over: (4, "main::square"),
        step_out: (9, "main::main"),
        output: "square 1681 count 42 items 3",
    };
    scenario(&t.debug, t.root.path(), &t.source, &t.program, &expect).await;
}

#[tokio::test]
async fn delve_on_go() {
    let Some(t) = go_target() else { return };
    let expect = Expect {
        breakpoint: 13,
        frames: &[("main.main", 13)],
        variables: &[("count", "41")],
        evaluate: ("count + 1", "42"),
        step_in: (5, "main.square"),
        step_over: (6, "main.square"),
        step_out: (13, "main.main"),
        output: "square 1681 count 42 items 3",
    };
    scenario(&t.debug, t.root.path(), &t.source, &t.program, &expect).await;
}

/// Pids of live processes (zombies excluded) whose command line mentions `needle`, this test's own excepted.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&pid| pid != own && alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle))
        })
        .collect()
}

/// Stops at `line`, terminates mid-session, and checks by pid that neither
/// the adapter nor any process running the program is left.
async fn terminate_leaves_nothing(t: &Prepared, line: u64) {
    t.debug.set_breakpoints(CONV, &t.source, &[line]).await.unwrap();
    let spec = LaunchSpec::new(t.root.path().to_path_buf(), t.program.clone());
    let started = t.debug.launch(CONV, spec).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::Stopped(_)), "{:?}", started.outcome);
    let adapter = t.debug.status(CONV).await.session.unwrap().adapter_pid.unwrap();
    let needle = t.program.to_str().unwrap();
    let running = processes_mentioning(needle);
    assert!(!running.is_empty(), "no process runs {needle}");
    let terminated = t.debug.terminate(CONV).await.unwrap();
    assert!(terminated.debuggee_ended);
    assert!(!alive(adapter), "adapter {adapter} left running");
    let gone = eventually(Duration::from_secs(5), || processes_mentioning(needle).is_empty()).await;
    assert!(gone, "left running: {:?} (before: {running:?})", processes_mentioning(needle));
}

#[tokio::test]
async fn debugpy_terminate_leaves_nothing() {
    let Some(t) = python_target() else { return };
    terminate_leaves_nothing(&t, 9).await;
}

#[tokio::test]
async fn lldb_terminate_leaves_nothing() {
    let Some(t) = c_target() else { return };
    terminate_leaves_nothing(&t, 11).await;
}

#[tokio::test]
async fn delve_terminate_leaves_nothing() {
    let Some(t) = go_target() else { return };
    terminate_leaves_nothing(&t, 13).await;
}

#[tokio::test]
async fn debugpy_attach_then_terminate_leaves_the_process_running() {
    let python = venv_python();
    if !require("debugpy in .tools/venv", has_debugpy(&python)) {
        return;
    }
    let root = project("python");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let script = root.path().join("attach_target.py");
    let target = Command::new(&python)
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}"), script.to_str().unwrap()])
        .current_dir(root.path())
        .spawn()
        .unwrap();
    let mut target = KillOnDrop(target);
    let pid = target.0.id();
    // Not by connecting: debugpy takes the first connection as its client.
    let listening = eventually(Duration::from_secs(20), || listening_on(port)).await;
    assert!(listening, "debugpy --listen did not open port {port}");
    let mut config = config(Some(python.clone()));
    config.limits.run_timeout = Duration::from_secs(10);
    let debug = DebugSupervisor::new(config);
    // The loop's body runs every 50 ms: a breakpoint there is hit at once.
    debug.set_breakpoints(CONV, &script, &[5]).await.unwrap();
    let spec = AttachSpec::port(root.path(), port);
    let started = debug.attach(CONV, spec).await.unwrap();
    // The breakpoint is hit within the attach's settle time (`ATTACH_SETTLE`, 2 s), or, on a loaded
    // machine, soon after it returned the program running: then the status shows the stop.
    let stop = match started.outcome {
        RunOutcome::StillRunning { .. } => {
            let mut stopped = None;
            for _ in 0..200 {
                if let Some(dap_session::Phase::Stopped(stop)) = debug.status(CONV).await.session.map(|s| s.phase) {
                    stopped = Some(RunOutcome::Stopped(stop));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stopped.expect("the breakpoint in the loop was not hit within 20 s of the attach")
        }
        outcome => outcome,
    };
    assert_eq!(located(&stop), (5, "<module>".to_owned()));
    let ticks = debug.evaluate(CONV, "ticks >= 0", None).await.unwrap();
    assert_eq!(ticks.value, "True");
    // debugpy --listen is its own adapter: nothing of ours was spawned.
    assert_eq!(debug.status(CONV).await.session.unwrap().adapter_pid, None);
    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(!terminated.debuggee_ended);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(alive(pid), "the attached process {pid} was ended");
    assert!(target.0.try_wait().unwrap().is_none());
}

/// A host that goes away while its program runs (the MCP client closed the
/// `serve` it was launched from) drops the supervisor: the program goes too,
/// though debugpy starts it outside the adapter's process group.
#[tokio::test]
async fn dropping_the_supervisor_while_the_program_runs_ends_it() {
    let python = venv_python();
    if !require("debugpy in .tools/venv", has_debugpy(&python)) {
        return;
    }
    let root = project("python");
    let mut config = config(Some(python));
    config.limits.run_timeout = Duration::from_secs(2);
    let debug = DebugSupervisor::new(config);
    let program = root.path().join("attach_target.py");
    let spec = LaunchSpec::new(root.path(), program);
    let started = debug.launch(CONV, spec).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::StillRunning { .. }), "{:?}", started.outcome);
    let session = debug.status(CONV).await.session.unwrap();
    let (pid, adapter) = (session.debuggee_pid.unwrap(), session.adapter_pid.unwrap());
    assert!(alive(pid));
    drop(debug);
    assert!(eventually(Duration::from_secs(5), || !alive(pid)).await, "debuggee {pid} left running");
    assert!(eventually(Duration::from_secs(5), || !alive(adapter)).await, "adapter {adapter} left running");
}
