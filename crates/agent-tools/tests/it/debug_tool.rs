//! The `debug` tool through a surface, with the fixture debug adapter standing
//! in for `dart` (built by `cargo xtask fixtures`): tier and parallel-safety,
//! the wording of each op, refusals as tool errors, and the permission card
//! of a launch.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{
    ALLOW_ONCE, ApprovalPolicy, ApprovalWiring, DebugWiring, Registry, Surface, Tier, ToolResult, Workspace,
};
use dap_session::{DebugConfig, DebugSupervisor};
use question_port::{Answer, ChannelConfig, channel};
use serde_json::{Value, json};

const PROGRAM: &str = include_str!("../../../../fixtures/debug/fixture/main.dart");

/// `<target>/debug/fixture-dap-adapter`.
fn fixture_adapter() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().and_then(Path::parent).unwrap().join("fixture-dap-adapter");
    assert!(binary.exists(), "{} is missing: run `cargo xtask fixtures` first", binary.display());
    binary
}

struct Setup {
    _root: tempfile::TempDir,
    _bin: tempfile::TempDir,
    workspace: Workspace,
    supervisor: Arc<DebugSupervisor>,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("pubspec.yaml"), "name: fixture\n").unwrap();
    std::fs::write(root.path().join("main.dart"), PROGRAM).unwrap();
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixture_adapter(), bin.path().join("dart")).unwrap();
    let mut config = DebugConfig::default();
    let mut dirs = vec![bin.path().to_path_buf()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    config.detection.search_path = Some(std::env::join_paths(dirs).unwrap());
    config.limits.run_timeout = Duration::from_secs(10);
    let workspace = Workspace::new(root.path()).unwrap();
    Setup { _root: root, _bin: bin, workspace, supervisor: Arc::new(DebugSupervisor::new(config)) }
}

fn surface(setup: &Setup, cap: Tier) -> Surface {
    let wiring = DebugWiring::new(Arc::clone(&setup.supervisor), setup.workspace.clone(), "conversation-1");
    Arc::new(Registry::builder().with_debug(wiring).build().unwrap()).surface(cap)
}

async fn ok(surface: &Surface, args: Value) -> ToolResult {
    let result = surface.call("debug", args.clone()).await.unwrap();
    assert!(!result.is_error, "{args}: {}", result.text);
    result
}

async fn error(surface: &Surface, args: Value) -> String {
    let result = surface.call("debug", args.clone()).await.unwrap();
    assert!(result.is_error, "{args}: {}", result.text);
    result.text
}

#[tokio::test]
async fn debug_is_exec_tier_and_not_parallel_safe() {
    let setup = setup();
    let read = surface(&setup, Tier::Read);
    assert!(read.list().iter().all(|spec| spec.name != "debug"));
    let refused = read.call("debug", json!({ "op": "adapters" })).await.unwrap();
    assert!(refused.is_error && refused.text.contains("exec tier"), "{}", refused.text);
    let exec = surface(&setup, Tier::Exec);
    assert_eq!(exec.registry().parallel_safe("debug"), Some(false));
}

#[tokio::test]
async fn a_session_through_the_tool() {
    let setup = setup();
    let debug = surface(&setup, Tier::Exec);

    let adapters = ok(&debug, json!({ "op": "adapters" })).await;
    let dart = adapters.text.lines().find(|l| l.starts_with("dart: ")).unwrap();
    assert!(dart.starts_with("dart: usable: pubspec.yaml at the root, "), "{dart}");
    assert_eq!(adapters.structured.unwrap()["adapters"][0]["usable"], true);

    assert_eq!(ok(&debug, json!({ "op": "status" })).await.text, "no debug session in this conversation");
    let early = ok(&debug, json!({ "op": "breakpoints", "file": "main.dart", "lines": [5] })).await;
    assert_eq!(early.text, "breakpoints in main.dart at lines 5; sent to the adapter at launch");
    let outside = error(&debug, json!({ "op": "breakpoints", "file": "../elsewhere.dart", "lines": [1] })).await;
    assert!(outside.contains("../elsewhere.dart"), "{outside}");

    let launched = ok(&debug, json!({ "op": "launch", "program": "main.dart" })).await;
    assert_eq!(
        launched.text,
        "launched main.dart under dart\nbreakpoints in main.dart: 5 set\nstopped (breakpoint) at main.dart:5 in greet, thread 1"
    );
    assert_eq!(launched.structured.unwrap()["outcome"]["state"], "stopped");

    let stack = ok(&debug, json!({ "op": "stack" })).await;
    assert_eq!(stack.text, "#0 main.dart:5 in greet (frame_id 1001)\n#1 main.dart:4 in main (frame_id 1000)");
    let scopes = ok(&debug, json!({ "op": "scopes", "frame_id": 1000 })).await;
    assert_eq!(scopes.text, "Locals (reference 1)");
    let variables = ok(&debug, json!({ "op": "variables", "reference": 1 })).await;
    assert_eq!(variables.text, "count: int = 41\nname: str = fixture");

    let stepped = ok(&debug, json!({ "op": "step_over" })).await;
    assert_eq!(stepped.text, "stopped (step) at main.dart:6 in greet, thread 1");
    let stale = error(&debug, json!({ "op": "variables", "reference": 1 })).await;
    assert_eq!(
        stale,
        "variables reference 1 is stale: it came from stop 1 and the program has resumed since (now at stop 2); ask for the stack or scopes again"
    );
    assert_eq!(ok(&debug, json!({ "op": "evaluate", "expression": "greeting" })).await.text, "greeting = hi");
    // Pausing a stopped program says so, and where it is.
    let paused = ok(&debug, json!({ "op": "pause" })).await;
    assert_eq!(paused.text, "already stopped, nothing to pause: stopped (step) at main.dart:6 in greet, thread 1");
    assert_eq!(paused.structured.unwrap()["state"], "stopped");

    let again = error(&debug, json!({ "op": "launch", "program": "main.dart" })).await;
    assert_eq!(
        again,
        "a debug session is already running (dart launched main.dart); terminate it before starting another"
    );
    assert_eq!(error(&debug, json!({ "op": "scopes" })).await, "scopes needs `frame_id`");
    assert_eq!(
        error(&debug, json!({ "op": "launch", "program": "-m" })).await,
        "launch: `-m` needs a module name (`-m pytest`)"
    );
    assert_eq!(
        error(&debug, json!({ "op": "attach", "port": 9, "adapter": "gdb" })).await,
        "unknown adapter \"gdb\": use one of dart, debugpy, lldb, delve"
    );
    assert!(error(&debug, json!({ "op": "stack", "frame": 1 })).await.contains("unknown field `frame`"));

    let status = ok(&debug, json!({ "op": "status" })).await;
    assert!(
        status
            .text
            .starts_with("dart session (launched main.dart): stopped (step) at main.dart:6 in greet, thread 1; "),
        "{}",
        status.text
    );
    assert!(
        status.text.ends_with("min left before the session is ended\nbreakpoints:\n  main.dart: 5"),
        "{}",
        status.text
    );

    let ended = ok(&debug, json!({ "op": "continue" })).await;
    assert_eq!(ended.text, "ended: the program finished (exit code 0); op output shows what it printed");
    let output = ok(&debug, json!({ "op": "output" })).await;
    // Each stream's run under its label, in order; the structured value has them as chunks.
    assert_eq!(output.text, "[stdout]\nhello from the fixture\nin greet\n[stderr]\nwarning on stderr\n");
    assert_eq!(
        output.structured.as_ref().unwrap()["chunks"],
        json!([
            { "stream": "stdout", "text": "hello from the fixture\nin greet\n" },
            { "stream": "stderr", "text": "warning on stderr\n" },
        ])
    );
    // A terminate after the end is a clean-up, and says how the session had ended.
    assert_eq!(
        ok(&debug, json!({ "op": "terminate" })).await.text,
        "already ended: the program finished (exit code 0); nothing was left to terminate"
    );
    let cleared = ok(&debug, json!({ "op": "breakpoints", "file": "main.dart", "lines": [] })).await;
    assert_eq!(cleared.text, "cleared the breakpoints in main.dart");

    // A new session once the last one has ended; terminate ends it.
    let relaunched = ok(&debug, json!({ "op": "launch", "program": "main.dart", "adapter": "dart" })).await;
    assert!(relaunched.text.ends_with("ended: the program finished (exit code 0); op output shows what it printed"));
}

#[tokio::test]
async fn a_launch_asks_with_the_program_and_its_arguments() {
    let setup = setup();
    let (port, mut questions) = channel(ChannelConfig::default());
    let wiring = DebugWiring::new(Arc::clone(&setup.supervisor), setup.workspace.clone(), "c");
    let registry = Registry::builder()
        .with_debug(wiring)
        .with_approval(ApprovalWiring { policy: ApprovalPolicy::default(), port: Arc::new(port) })
        .build()
        .unwrap();
    let surface = Arc::new(registry).surface(Tier::Exec);
    let args = json!({ "op": "launch", "program": "main.dart", "args": ["--fast", "x"] });
    let (result, card) = tokio::join!(surface.call("debug", args), async {
        let mut question = questions.recv().await.unwrap();
        let card = question.card().clone();
        question.answer(Answer::choose([ALLOW_ONCE.to_owned()])).unwrap();
        card
    });
    assert!(!result.unwrap().is_error);
    assert_eq!(card.question, "Allow debug (exec tier) to run?");
    assert_eq!(card.context.as_deref(), Some("run `main.dart --fast x` in the debugger\npaths: main.dart"));
}

/// A `continue` into a loop reports "running" with the program's last
/// output; cancelled (its future dropped), it returns and the session stays
/// usable: `pause` stops the program, `status` and `terminate` work.
#[tokio::test]
async fn a_cancelled_continue_returns_and_the_session_stays_usable() {
    let setup = setup();
    std::fs::write(
        setup.workspace.root().join("spin.dart"),
        "print before the loop\nprint spinning now\nspin\nexit 0\n",
    )
    .unwrap();
    let pacing = agent_tools::Pacing {
        first_after: Duration::from_millis(100),
        min_interval: Duration::from_millis(50),
        heartbeat: Duration::from_millis(200),
    };
    let debug = surface(&setup, Tier::Exec).with_pacing(pacing);
    ok(&debug, json!({ "op": "breakpoints", "file": "spin.dart", "lines": [1] })).await;
    let launched = ok(&debug, json!({ "op": "launch", "program": "spin.dart" })).await;
    assert!(launched.text.ends_with("stopped (breakpoint) at spin.dart:1 in main, thread 1"), "{}", launched.text);

    let seen = Arc::new(tokio::sync::Notify::new());
    let messages: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let sink = {
        let (seen, messages) = (seen.clone(), messages.clone());
        agent_tools::ProgressSink::new(move |p| {
            if p.message.contains("last output: spinning now") {
                seen.notify_one();
            }
            messages.lock().unwrap().push(p.message);
        })
    };
    tokio::select! {
        result = debug.call_with_progress("debug", json!({ "op": "continue" }), Some(sink)) => {
            panic!("continue returned by itself: {:?}", result.map(|r| r.text))
        }
        () = seen.notified() => {}
    }
    assert!(messages.lock().unwrap().iter().all(|m| m.contains("running")), "{:?}", messages.lock().unwrap());

    let paused = ok(&debug, json!({ "op": "pause" })).await;
    assert!(paused.text.starts_with("stopped (pause) at spin.dart:3"), "{}", paused.text);
    let status = ok(&debug, json!({ "op": "status" })).await;
    assert!(status.text.contains("stopped (pause) at spin.dart:3"), "{}", status.text);
    let terminated = ok(&debug, json!({ "op": "terminate" })).await;
    assert!(terminated.text.starts_with("terminated"), "{}", terminated.text);
}

/// A `launch` cancelled while it waits for the program's first stop leaves
/// no session behind: the half-open one goes with its adapter, and the next
/// launch starts afresh.
#[tokio::test]
async fn a_cancelled_launch_leaves_no_session_behind() {
    let setup = setup();
    std::fs::write(setup.workspace.root().join("spin.dart"), "print spinning now\nspin\nexit 0\n").unwrap();
    let pacing = agent_tools::Pacing {
        first_after: Duration::from_millis(300),
        min_interval: Duration::from_millis(50),
        heartbeat: Duration::from_millis(200),
    };
    let debug = surface(&setup, Tier::Exec).with_pacing(pacing);
    let heard = Arc::new(tokio::sync::Notify::new());
    let sink = {
        let heard = heard.clone();
        agent_tools::ProgressSink::new(move |p| {
            if p.message.contains("starting the program under the debugger") {
                heard.notify_one();
            }
        })
    };
    tokio::select! {
        result = debug.call_with_progress("debug", json!({ "op": "launch", "program": "spin.dart" }), Some(sink)) => {
            panic!("launch returned by itself: {:?}", result.map(|r| r.text))
        }
        () = heard.notified() => {}
    }
    assert_eq!(ok(&debug, json!({ "op": "status" })).await.text, "no debug session in this conversation");
    ok(&debug, json!({ "op": "breakpoints", "file": "spin.dart", "lines": [1] })).await;
    let launched = ok(&debug, json!({ "op": "launch", "program": "spin.dart" })).await;
    assert!(launched.text.ends_with("stopped (breakpoint) at spin.dart:1 in main, thread 1"), "{}", launched.text);
    ok(&debug, json!({ "op": "terminate" })).await;
}

/// A launch of a program that never stops, with a TTL far shorter than the run's wait,
/// returns when the TTL ends the session and says so; a terminate after it says the same.
#[tokio::test]
async fn a_launch_ended_by_the_ttl_says_so_and_terminate_after_it_succeeds() {
    let setup = setup();
    std::fs::write(setup.workspace.root().join("spin.dart"), "print spinning now\nspin\n").unwrap();
    let mut config = setup.supervisor.config().clone();
    config.ttl = Duration::from_secs(1);
    config.limits.run_timeout = Duration::from_secs(120);
    let supervisor = Arc::new(DebugSupervisor::new(config));
    let wiring = DebugWiring::new(supervisor, setup.workspace.clone(), "conversation-1");
    let debug = Arc::new(Registry::builder().with_debug(wiring).build().unwrap()).surface(Tier::Exec);
    let launched =
        tokio::time::timeout(Duration::from_secs(60), ok(&debug, json!({ "op": "launch", "program": "spin.dart" })))
            .await
            .expect("launch hung");
    assert_eq!(
        launched.text,
        "launched spin.dart under dart\nended: its lifetime of 1 s (TTL) ran out; op output shows what it printed"
    );
    assert_eq!(launched.structured.unwrap()["outcome"]["state"], "exited");
    let terminated = ok(&debug, json!({ "op": "terminate" })).await;
    assert_eq!(terminated.text, "already ended: its lifetime of 1 s (TTL) ran out; nothing was left to terminate");
    assert_eq!(terminated.structured.unwrap()["was"]["state"], "ended");
}

/// Every op's text and structured value over the fixture adapter, as the golden transcript
/// (but `adapters`, whose other rows are this machine's).
#[tokio::test]
async fn transcript() {
    let setup = setup();
    let debug = surface(&setup, Tier::Exec);
    let mut transcript = crate::golden::Transcript::new(&[setup.workspace.root()]);
    let calls = [
        json!({ "op": "status" }),
        json!({ "op": "breakpoints", "file": "main.dart", "lines": [5] }),
        json!({ "op": "breakpoints", "file": "../elsewhere.dart", "lines": [1] }),
        json!({ "op": "launch", "program": "main.dart" }),
        json!({ "op": "threads" }),
        json!({ "op": "stack" }),
        json!({ "op": "scopes", "frame_id": 1000 }),
        json!({ "op": "variables", "reference": 1 }),
        json!({ "op": "step_over" }),
        json!({ "op": "variables", "reference": 1 }),
        json!({ "op": "evaluate", "expression": "greeting" }),
        json!({ "op": "pause" }),
        json!({ "op": "launch", "program": "main.dart" }),
        json!({ "op": "scopes" }),
        json!({ "op": "attach", "port": 9, "adapter": "gdb" }),
        json!({ "op": "continue" }),
        json!({ "op": "output" }),
        json!({ "op": "terminate" }),
        json!({ "op": "status" }),
    ];
    for args in calls {
        let result = debug.call("debug", args.clone()).await.unwrap();
        transcript.record("debug", &args, &result);
    }
    insta::assert_snapshot!(transcript.finish());
}
