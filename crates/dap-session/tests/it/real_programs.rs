//! Real programs under real adapters, in the shapes projects have: a project
//! venv made without debugpy, a program whose children are Python processes
//! (`multiprocessing`), a server attached to while it runs (then paused and
//! continued), a property getter that never returns, a failing pytest test
//! run as `-m pytest`, a failing Go test under delve's test mode, a failing
//! Rust test built by cargo and run by lldb, a line-tables-only build whose
//! frames show no locals, output by stream, `pause` then `continue` on a
//! running C program (lldb) and Go program (delve), and lldb attached to a
//! running C program by its pid.
//!
//! A missing adapter, compiler or interpreter fails the test under `CI=true`
//! and skips it with a printed reason elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::field_reassign_with_default)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use dap_session::{
    AdapterId, AttachSpec, DebugConfig, DebugSupervisor, LaunchSpec, Limits, Phase, Resume, RunOutcome, alive,
};

use crate::common::{KillOnDrop, eventually, has_debugpy, listening_on, lldb_dap, project, require};

const CONV: &str = "programs";

fn tools_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python")
}

/// debugpy from `.tools/venv` as the configured adapter Python.
fn debugpy_config(run_timeout: Duration) -> Option<DebugConfig> {
    if !require("debugpy in .tools/venv", has_debugpy(&tools_python())) {
        return None;
    }
    let mut config = DebugConfig::default();
    config.limits = Limits {
        request_timeout: Duration::from_secs(20),
        start_timeout: Duration::from_secs(60),
        run_timeout,
        ..Limits::default()
    };
    config.detection.python = Some(tools_python());
    Some(config)
}

fn stop_line(outcome: &RunOutcome) -> u64 {
    match outcome {
        RunOutcome::Stopped(stop) => stop.location.as_ref().map_or(0, |l| l.line),
        other => panic!("expected a stop, got {other:?}"),
    }
}

#[tokio::test]
async fn a_project_venv_without_debugpy_debugs_on_its_own_interpreter() {
    let Some(config) = debugpy_config(Duration::from_secs(30)) else { return };
    let root = project("python");
    let venv = root.path().join(".venv");
    let made = Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(&venv).status().unwrap();
    assert!(made.success());
    let project_python = venv.join("bin/python");
    assert!(!has_debugpy(&project_python), "the test's venv must lack debugpy");

    let debug = DebugSupervisor::new(config);
    let reports = debug.adapters(root.path()).await;
    let report = reports.iter().find(|r| r.id == AdapterId::Debugpy).unwrap();
    assert!(report.usable(), "{}", report.detail);
    assert_eq!(report.command.as_ref().unwrap().program, tools_python(), "{}", report.detail);
    assert!(
        report.detail.contains(&format!("the program on {} (the project's .venv)", project_python.display())),
        "{}",
        report.detail
    );

    let source = root.path().join("main.py");
    debug.set_breakpoints(CONV, &source, &[9]).await.unwrap();
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), &source)).await.unwrap();
    assert_eq!(stop_line(&started.outcome), 9, "{:?}", started.outcome);
    let executable = debug.evaluate(CONV, "__import__('sys').executable", None).await.unwrap();
    assert_eq!(executable.value, format!("'{}'", project_python.display()));
    let prefix = debug.evaluate(CONV, "__import__('sys').prefix", None).await.unwrap();
    assert_eq!(prefix.value, format!("'{}'", venv.display()));
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { .. }), "{end:?}");
    assert!(debug.output(CONV).await.unwrap().text.contains("hello debugger 42 3"));
}

#[tokio::test]
async fn a_multiprocessing_pool_runs_its_children_and_reaches_the_breakpoint_after_them() {
    let Some(config) = debugpy_config(Duration::from_secs(60)) else { return };
    let root = project("python");
    let source = root.path().join("pool.py");
    std::fs::write(
        &source,
        "import multiprocessing\n\n\ndef square(x):\n    return x * x\n\n\nif __name__ == \"__main__\":\n    with multiprocessing.Pool(2) as pool:\n        result = pool.map(square, [1, 2, 3])\n    print(\"squares\", result)\n",
    )
    .unwrap();
    let debug = DebugSupervisor::new(config);
    debug.set_breakpoints(CONV, &source, &[11]).await.unwrap();
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), &source)).await.unwrap();
    assert_eq!(stop_line(&started.outcome), 11, "{:?}", started.outcome);
    assert_eq!(debug.evaluate(CONV, "result", None).await.unwrap().value, "[1, 4, 9]");
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { exit_code: Some(0), .. }), "{end:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.text.contains("squares [1, 4, 9]"), "{output:?}");
}

#[tokio::test]
async fn attach_to_a_running_server_returns_once_configured_then_pause_and_continue_work() {
    let Some(config) = debugpy_config(Duration::from_secs(5)) else { return };
    let root = project("python");
    let script = root.path().join("serve.py");
    std::fs::write(
        &script,
        "import time\n\nfor i in range(1200):\n    print(\"tick\", i, flush=True)\n    time.sleep(0.05)\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let target = Command::new(tools_python())
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}"), "--wait-for-client"])
        .arg(&script)
        .current_dir(root.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let target = KillOnDrop(target);
    let pid = target.0.id();
    assert!(eventually(Duration::from_secs(20), || listening_on(port)).await, "debugpy did not listen on {port}");

    let debug = DebugSupervisor::new(config);
    let asked = Instant::now();
    let spec = AttachSpec::port(root.path(), port);
    let started = debug.attach(CONV, spec).await.unwrap();
    // Generous: the program runs for a minute; a blocked attach would take that long.
    assert!(asked.elapsed() < Duration::from_secs(20), "attach took {:?}", asked.elapsed());
    assert!(
        matches!(started.outcome, RunOutcome::StillRunning { waited } if waited <= Duration::from_secs(2)),
        "{:?}",
        started.outcome
    );
    assert_eq!(debug.status(CONV).await.session.unwrap().phase, Phase::Running);
    // The loop has begun (it has printed) before the pause, so `i` exists where it stops;
    // on a loaded machine the program may still be importing when the attach returns.
    let mut ticking = false;
    for _ in 0..200 {
        let output = debug.output(CONV).await.unwrap();
        if output.chunks.iter().any(|c| c.stream == "stdout" && c.text.contains("tick")) {
            ticking = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ticking, "the program printed no tick within 20 s of the attach");

    let paused = debug.pause(CONV, None).await.unwrap();
    let RunOutcome::Stopped(stop) = &paused else { panic!("pause did not stop: {paused:?}") };
    assert_eq!(stop.reason, "pause");
    assert_eq!(debug.evaluate(CONV, "i >= 0", None).await.unwrap().value, "True");
    // Continue to a breakpoint set while paused, then on without one.
    debug.set_breakpoints(CONV, &script, &[4]).await.unwrap();
    let at = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert_eq!(stop_line(&at), 4, "{at:?}");
    debug.set_breakpoints(CONV, &script, &[]).await.unwrap();
    let running = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(running, RunOutcome::StillRunning { .. }), "{running:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.chunks.iter().any(|c| c.stream == "stdout" && c.text.contains("tick")), "{output:?}");

    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(!terminated.debuggee_ended);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(alive(pid), "the attached server {pid} was ended");
}

#[tokio::test]
async fn an_evaluation_that_never_returns_is_bounded_and_the_session_stays_usable() {
    let Some(mut config) = debugpy_config(Duration::from_secs(30)) else { return };
    config.limits.request_timeout = Duration::from_secs(4);
    let root = project("python");
    let source = root.path().join("getter.py");
    std::fs::write(
        &source,
        "class Slow:\n    @property\n    def value(self):\n        while True:\n            pass\n\n\nslow = Slow()\nprint(\"ready\")\n",
    )
    .unwrap();
    let debug = DebugSupervisor::new(config);
    debug.set_breakpoints(CONV, &source, &[9]).await.unwrap();
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), &source)).await.unwrap();
    assert_eq!(stop_line(&started.outcome), 9, "{:?}", started.outcome);
    let asked = Instant::now();
    let stuck = debug.evaluate(CONV, "slow.value", None).await;
    let error = stuck.expect_err("a getter that loops forever cannot answer").to_string();
    assert!(
        error.starts_with("the evaluation ran for ") && error.contains("was interrupted; the program is still stopped"),
        "{error}"
    );
    assert!(asked.elapsed() < Duration::from_secs(15), "{:?}", asked.elapsed());
    // Still stopped where it was, and the next evaluation answers.
    assert!(matches!(debug.status(CONV).await.session.unwrap().phase, Phase::Stopped(_)));
    assert_eq!(debug.evaluate(CONV, "1 + 1", None).await.unwrap().value, "2");
    debug.terminate(CONV).await.unwrap();
}

#[tokio::test]
async fn a_failing_pytest_test_is_stopped_inside_when_run_as_a_module() {
    let Some(config) = debugpy_config(Duration::from_secs(60)) else { return };
    let has_pytest = Command::new(tools_python()).args(["-c", "import pytest"]).status().is_ok_and(|s| s.success());
    if !require("pytest in .tools/venv", has_pytest) {
        return;
    }
    let root = project("python");
    // The program runs on the project's interpreter: the tools venv, which has pytest.
    std::os::unix::fs::symlink(tools_python().parent().unwrap().parent().unwrap(), root.path().join(".venv")).unwrap();
    std::fs::create_dir(root.path().join("tests")).unwrap();
    let test = root.path().join("tests/test_math.py");
    std::fs::write(
        &test,
        "def add(a, b):\n    return a - b\n\n\ndef test_add():\n    total = add(2, 3)\n    assert total == 5\n\n\ndef test_other():\n    assert True\n",
    )
    .unwrap();
    let debug = DebugSupervisor::new(config);
    debug.set_breakpoints(CONV, &test, &[7]).await.unwrap();
    let mut spec = LaunchSpec::new(root.path(), root.path());
    spec.module = Some("pytest".into());
    spec.args = vec!["tests/test_math.py::test_add".into(), "-q".into()];
    spec.env = vec![("PYTEST_ADDOPTS".into(), "-p no:cacheprovider".into())];
    let started = debug.launch(CONV, spec).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Debugpy);
    assert_eq!(stop_line(&started.outcome), 7, "{:?}", started.outcome);
    assert_eq!(debug.evaluate(CONV, "total", None).await.unwrap().value, "-1");
    let stack = debug.stack(CONV, None).await.unwrap();
    assert_eq!(stack.items[0].location.function, "test_add");
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { .. }), "{end:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.text.contains("1 failed"), "{}", output.text);
    // Nothing of pytest's is left in the project.
    assert!(!root.path().join(".pytest_cache").exists());
}

fn go_and_delve() -> bool {
    let found = |program: &str, arg: &str| Command::new(program).arg(arg).output().is_ok_and(|o| o.status.success());
    found("go", "version") && found("dlv", "version")
}

/// The files under `dir`, relative, sorted (`.git`-style listing of what is there).
fn files_under(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[tokio::test]
async fn a_failing_go_test_is_stopped_inside_and_delve_leaves_nothing_in_the_project() {
    if !require("go and dlv (apt install golang delve)", go_and_delve()) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("go.mod"), "module example.com/calc\n\ngo 1.19\n").unwrap();
    std::fs::write(root.path().join("calc.go"), "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
        .unwrap();
    let test = root.path().join("calc_test.go");
    std::fs::write(
        &test,
        "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestAdd(t *testing.T) {\n\ttotal := Add(2, 3)\n\tfmt.Fprintln(os.Stderr, \"checking\", total)\n\tif total != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d\", total)\n\t}\n}\n",
    )
    .unwrap();
    let before = files_under(root.path());
    let mut config = DebugConfig::default();
    config.limits.run_timeout = Duration::from_secs(120);
    config.limits.start_timeout = Duration::from_secs(120);
    config.limits.request_timeout = Duration::from_secs(30);
    // No module proxy here; the test needs none.
    config.env = vec![("GOFLAGS".into(), "-mod=mod".into()), ("GOPROXY".into(), "off".into())];
    let debug = DebugSupervisor::new(config);
    debug.set_breakpoints(CONV, &test, &[11]).await.unwrap();
    let mut spec = LaunchSpec::new(root.path(), &test);
    spec.test = true;
    spec.args = vec!["-test.run".into(), "TestAdd".into()];
    let started = debug.launch(CONV, spec).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Delve);
    assert_eq!(stop_line(&started.outcome), 11, "{:?}", started.outcome);
    assert_eq!(debug.evaluate(CONV, "total", None).await.unwrap().value, "-1");
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    // delve sends no `exited` event: the code comes from its console line.
    assert!(
        matches!(end, RunOutcome::Exited { exit_code: Some(1), .. }),
        "the test fails: {end:?} {:?}",
        debug.output(CONV).await
    );
    // What the test wrote to stderr reaches the output, labelled.
    let output = debug.output(CONV).await.unwrap();
    assert!(output.chunks.iter().any(|c| c.stream == "stderr" && c.text.contains("checking -1")), "{output:?}");
    drop(debug);
    assert_eq!(files_under(root.path()), before, "delve left files in the project");
}

fn lldb_config() -> DebugConfig {
    let mut config = DebugConfig::default();
    config.limits.run_timeout = Duration::from_secs(60);
    config.limits.request_timeout = Duration::from_secs(30);
    config
}

#[tokio::test]
async fn a_failing_rust_test_is_built_by_cargo_and_stopped_inside() {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("Cargo.toml"),
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir(root.path().join("src")).unwrap();
    let source = root.path().join("src/lib.rs");
    std::fs::write(
        &source,
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        let total = super::add(2, 3);\n        assert_eq!(total, 5);\n    }\n\n    #[test]\n    fn other() {}\n}\n",
    )
    .unwrap();
    let debug = DebugSupervisor::new(lldb_config());
    debug.set_breakpoints(CONV, &source, &[10]).await.unwrap();
    let mut spec = LaunchSpec::new(root.path(), &source);
    spec.test = true;
    spec.args = vec!["tests::adds".into(), "--exact".into()];
    let started = debug.launch(CONV, spec).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Lldb);
    assert_eq!(stop_line(&started.outcome), 10, "{:?}", started.outcome);
    let stack = debug.stack(CONV, None).await.unwrap();
    assert_eq!(stack.items[0].location.function, "calc::tests::adds");
    assert_eq!(debug.evaluate(CONV, "total", None).await.unwrap().value, "-1");
    // `assert_eq!` expands to several places on its line, each a location of the one breakpoint
    // to lldb (1.1, 1.2, …): one continue goes past them all.
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { exit_code: Some(101), .. }), "the test fails: {end:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.text.contains("1 passed") || output.text.contains("FAILED"), "{}", output.text);
    assert!(!output.text.contains("other"), "only the named test ran: {}", output.text);
}

#[tokio::test]
async fn frames_without_locals_in_a_line_tables_only_build_say_why_once() {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return;
    }
    let root = project("rust");
    let source = root.path().join("src/main.rs");
    for (debuginfo, note) in [("line-tables-only", true), ("2", false)] {
        let program = root.path().join(format!("debugme-{debuginfo}"));
        let built = Command::new("rustc")
            .args(["-C", &format!("debuginfo={debuginfo}"), "-C", "opt-level=0", "-o"])
            .args([&program, &source])
            .status()
            .unwrap();
        assert!(built.success());
        let debug = DebugSupervisor::new(lldb_config());
        debug.set_breakpoints(CONV, &source, &[9]).await.unwrap();
        let started = debug.launch(CONV, LaunchSpec::new(root.path(), &program)).await.unwrap();
        assert_eq!(stop_line(&started.outcome), 9, "{debuginfo}: {:?}", started.outcome);
        let frame = debug.stack(CONV, None).await.unwrap().items[0].id;
        let scopes = debug.scopes(CONV, frame).await.unwrap();
        let said = debug.locals_note(CONV, &scopes).await;
        if note {
            let said = said.unwrap_or_default();
            assert!(said.contains("built without debug info for locals"), "{said}");
            assert!(said.contains("`debug = true`"), "{said}");
            // Once a session.
            assert_eq!(debug.locals_note(CONV, &scopes).await, None);
        } else {
            assert_eq!(said, None, "a full build shows its locals");
        }
        debug.terminate(CONV).await.unwrap();
    }
}

const C_LOOP: &str = "#include <unistd.h>\n\nint main(void) {\n    long ticks = 0;\n    for (;;) {\n        ticks++;\n        usleep(10000);\n    }\n}\n";

/// A C program that loops for ever, built with debug info; `None` (skipped) without cc.
fn c_loop(root: &Path) -> Option<PathBuf> {
    std::fs::write(root.join("loop.c"), C_LOOP).unwrap();
    std::fs::write(root.join("CMakeLists.txt"), "project(loop C)\nadd_executable(loop loop.c)\n").unwrap();
    let program = root.join("loop");
    let built = Command::new("cc").args(["-g", "-O0", "-o"]).arg(&program).arg(root.join("loop.c")).status();
    require("cc", built.is_ok_and(|s| s.success())).then_some(program)
}

/// Pause a running program, read it, continue it to a breakpoint, let it run on.
async fn pause_read_continue(debug: &DebugSupervisor, source: &Path, line: u64, expression: &str, expect: &str) {
    let paused = debug.pause(CONV, None).await.unwrap();
    assert!(matches!(&paused, RunOutcome::Stopped(stop) if stop.reason == "pause"), "{paused:?}");
    debug.set_breakpoints(CONV, source, &[line]).await.unwrap();
    let at = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert_eq!(stop_line(&at), line, "{at:?}");
    assert_eq!(debug.evaluate(CONV, expression, None).await.unwrap().value, expect);
    debug.set_breakpoints(CONV, source, &[]).await.unwrap();
    let running = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(running, RunOutcome::StillRunning { .. }), "{running:?}");
    assert_eq!(debug.status(CONV).await.session.unwrap().phase, Phase::Running);
}

fn short_run(mut config: DebugConfig) -> DebugConfig {
    config.limits.run_timeout = Duration::from_secs(3);
    config
}

#[tokio::test]
async fn lldb_pauses_a_running_c_program_and_continues_it() {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let Some(program) = c_loop(root.path()) else { return };
    let debug = DebugSupervisor::new(short_run(lldb_config()));
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), &program)).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::StillRunning { .. }), "{:?}", started.outcome);
    pause_read_continue(&debug, &root.path().join("loop.c"), 6, "ticks >= 0", "true").await;
    debug.terminate(CONV).await.unwrap();
}

#[tokio::test]
async fn lldb_attaches_to_a_running_c_program_by_pid_and_detaches_leaving_it_running() {
    if !require("lldb-dap (apt install lldb-19)", lldb_dap()) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let Some(program) = c_loop(root.path()) else { return };
    let target = KillOnDrop(Command::new(&program).spawn().unwrap());
    let pid = target.0.id();
    let debug = DebugSupervisor::new(short_run(lldb_config()));
    let started = debug.attach(CONV, AttachSpec::pid(root.path(), pid)).await.unwrap();
    assert_eq!(started.adapter, AdapterId::Lldb);
    // lldb stops the process it attaches to (SIGSTOP, reported as the pause it is).
    if let RunOutcome::Stopped(stop) = &started.outcome {
        assert_eq!(stop.reason, "pause", "{stop:?}");
        let running = debug.resume(CONV, Resume::Continue, None).await.unwrap();
        assert!(matches!(running, RunOutcome::StillRunning { .. }), "{running:?}");
    }
    pause_read_continue(&debug, &root.path().join("loop.c"), 6, "ticks >= 0", "true").await;
    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(!terminated.debuggee_ended);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(alive(pid), "the attached program {pid} was ended");
}

#[tokio::test]
async fn delve_pauses_a_running_go_program_and_continues_it() {
    if !require("go and dlv (apt install golang delve)", go_and_delve()) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("go.mod"), "module example.com/loop\n\ngo 1.19\n").unwrap();
    let source = root.path().join("main.go");
    std::fs::write(
        &source,
        "package main\n\nimport \"time\"\n\nfunc main() {\n\tticks := 0\n\tfor {\n\t\tticks++\n\t\ttime.Sleep(10 * time.Millisecond)\n\t}\n}\n",
    )
    .unwrap();
    let mut config = DebugConfig::default();
    config.limits.start_timeout = Duration::from_secs(120);
    config.limits.request_timeout = Duration::from_secs(30);
    config.env = vec![("GOFLAGS".into(), "-mod=mod".into()), ("GOPROXY".into(), "off".into())];
    let debug = DebugSupervisor::new(short_run(config));
    let started = debug.launch(CONV, LaunchSpec::new(root.path(), root.path())).await.unwrap();
    assert!(matches!(started.outcome, RunOutcome::StillRunning { .. }), "{:?}", started.outcome);
    pause_read_continue(&debug, &source, 8, "ticks >= 0", "true").await;
    debug.terminate(CONV).await.unwrap();
}

#[tokio::test]
async fn a_test_that_does_not_compile_says_why_in_go_and_in_rust() {
    if !require("go and dlv (apt install golang delve)", go_and_delve())
        || !require("lldb-dap (apt install lldb-19)", lldb_dap())
    {
        return;
    }
    let go = tempfile::tempdir().unwrap();
    std::fs::write(go.path().join("go.mod"), "module example.com/calc\n\ngo 1.19\n").unwrap();
    let test = go.path().join("calc_test.go");
    std::fs::write(
        &test,
        "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tundefinedThing()\n}\n",
    )
    .unwrap();
    let mut config = DebugConfig::default();
    config.limits.start_timeout = Duration::from_secs(120);
    config.env = vec![("GOFLAGS".into(), "-mod=mod".into()), ("GOPROXY".into(), "off".into())];
    let debug = DebugSupervisor::new(config);
    let mut spec = LaunchSpec::new(go.path(), &test);
    spec.test = true;
    let error = debug.launch(CONV, spec).await.unwrap_err().to_string();
    assert!(error.contains("undefined: undefinedThing"), "the compiler's error is shown: {error}");

    let rust = tempfile::tempdir().unwrap();
    std::fs::write(
        rust.path().join("Cargo.toml"),
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir(rust.path().join("src")).unwrap();
    let source = rust.path().join("src/lib.rs");
    std::fs::write(&source, "#[test]\nfn adds() {\n    assert_eq!(2, undefined_thing);\n}\n").unwrap();
    let debug = DebugSupervisor::new(lldb_config());
    let mut spec = LaunchSpec::new(rust.path(), &source);
    spec.test = true;
    let error = debug.launch(CONV, spec).await.unwrap_err().to_string();
    assert!(error.contains("error[E0425]: cannot find value `undefined_thing`"), "{error}");
    assert!(error.contains("src/lib.rs:3:19"), "{error}");
}

#[tokio::test]
async fn test_mode_outside_go_and_rust_and_a_directory_as_breakpoint_file_are_refused() {
    let root = project("python");
    let debug = DebugSupervisor::new(DebugConfig::default());
    let mut spec = LaunchSpec::new(root.path(), root.path().join("main.py"));
    spec.test = true;
    let error = debug.launch(CONV, spec).await.unwrap_err().to_string();
    assert!(error.starts_with("test: true runs a Go package's tests"), "{error}");
    assert!(error.contains("launch `-m pytest`"), "{error}");
    let error = debug.set_breakpoints(CONV, root.path(), &[1]).await.unwrap_err().to_string();
    assert!(error.ends_with("is a directory: breakpoints go in a source file"), "{error}");
}
