//! The fault suite's debug-adapter rows: the `debug` tool against the fixture
//! debug adapter, run as `dart` through a wrapper script that sets the row's
//! marker and, in the first adapter started only, the fault's
//! `FIXTURE_DAP_*` knobs (the `--version` probe passes straight through).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{DebugWiring, Registry, Surface, Tier, ToolResult, Workspace};
use anyhow::{Context as _, Result};
use dap_session::{DebugConfig, DebugSupervisor};
use serde_json::{Value, json};

use crate::fault_row::{Ctx, Report, Row, Verdict, Watched, expect_text};

pub fn rows() -> Vec<Row> {
    vec![
        Row {
            system: "debug adapter",
            fault: "death mid-step (SIGKILL)",
            call: "debug step_over",
            expected: "error: the adapter died",
            run: |ctx| Box::pin(death_mid_step(ctx)),
        },
        Row {
            system: "debug adapter",
            fault: "a hang on launch",
            call: "debug launch",
            expected: "error: no answer within the timeout",
            run: |ctx| Box::pin(hang_on_launch(ctx)),
        },
        Row {
            system: "debug adapter",
            fault: "an unknown reverse request",
            call: "debug launch",
            expected: "stopped at the breakpoint after it",
            run: |ctx| Box::pin(unknown_reverse_request(ctx)),
        },
        Row {
            system: "debug adapter",
            fault: "a debuggee that forks and exits",
            call: "debug launch",
            expected: "ended (exit code 0), its child gone",
            run: |ctx| Box::pin(debuggee_forks_and_exits(ctx)),
        },
    ]
}

/// A healthy program for the next call: it prints and exits.
const HEALTHY: &str = "print healthy\nexit 0\n";

struct Setup {
    _root: tempfile::TempDir,
    _bin: tempfile::TempDir,
    root: std::path::PathBuf,
    supervisor: Arc<DebugSupervisor>,
    surface: Surface,
}

/// A project with `main.dart` (the row's program) and `healthy.dart`, and a
/// `dart` that is the fixture adapter with `knobs` in its first start.
fn setup(ctx: &Ctx, program: &str, knobs: &[(&str, &str)], timeout: Duration) -> Result<Setup> {
    let (root_dir, root) = crate::fault_row::project(&[
        ("pubspec.yaml", "name: fixture\n"),
        ("main.dart", program),
        ("healthy.dart", HEALTHY),
    ])?;
    let bin = tempfile::tempdir()?;
    let once = bin.path().join("fault-fired");
    let exports: String = knobs.iter().map(|(k, v)| format!("  export {k}={}\n", shell_quote(v))).collect();
    let adapter = ctx.bin_dir.join("fixture-dap-adapter");
    crate::fault_row::script(
        &bin.path().join("dart"),
        &format!(
            "#!/bin/sh\nexport {}={}\nexport FIXTURE_DAP_LOG={}\nif [ \"$1\" != --version ] && [ ! -e {} ]; then\n  : > {}\n{exports}fi\nexec {} \"$@\"\n",
            crate::fault_row::MARKER_VAR,
            ctx.marker,
            shell_quote(&root.join("adapter.log").display().to_string()),
            shell_quote(&once.display().to_string()),
            shell_quote(&once.display().to_string()),
            shell_quote(&adapter.display().to_string()),
        ),
    )?;
    let mut config = DebugConfig::default();
    let mut dirs = vec![bin.path().to_path_buf()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    config.detection.search_path = Some(std::env::join_paths(dirs)?);
    config.limits.run_timeout = timeout;
    config.limits.start_timeout = timeout;
    config.limits.request_timeout = timeout;
    let supervisor = Arc::new(DebugSupervisor::new(config));
    let workspace = Workspace::new(&root)?;
    let wiring = DebugWiring::new(Arc::clone(&supervisor), workspace, "faults");
    let surface = Arc::new(Registry::builder().with_debug(wiring).build()?).surface(Tier::Exec);
    Ok(Setup { _root: root_dir, _bin: bin, root, supervisor, surface })
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

async fn debug(setup: &Setup, args: Value) -> Result<ToolResult> {
    Ok(setup.surface.call("debug", args).await?)
}

/// The session's adapter and debuggee pids, from `debug status`.
async fn pids(setup: &Setup) -> Result<(Option<u32>, Option<u32>, ToolResult)> {
    let status = debug(setup, json!({ "op": "status" })).await?;
    let session = status.structured.as_ref().map(|s| s["session"].clone()).unwrap_or(Value::Null);
    let pid = |key: &str| session[key].as_u64().and_then(|p| u32::try_from(p).ok());
    Ok((pid("adapter_pid"), pid("debuggee_pid"), status))
}

fn watch(watched: &mut Watched, pids: (Option<u32>, Option<u32>)) {
    for pid in [pids.0, pids.1].into_iter().flatten() {
        watched.add(pid);
    }
}

/// Check 3: a new session of a healthy program runs to its end.
async fn next_launch_works(setup: &Setup) -> Result<Verdict> {
    // Whatever is left of the faulty session is ended first (an error when it already has).
    debug(setup, json!({ "op": "terminate" })).await?;
    let next = debug(setup, json!({ "op": "launch", "program": "healthy.dart" })).await?;
    Ok(expect_text(next.is_error, &next.text, false, &["ended: the program finished (exit code 0)"]))
}

/// Check 4: `debug status` says the session ended, and why.
fn status_says(status: &ToolResult, needles: &[&str]) -> Verdict {
    expect_text(status.is_error, &status.text, false, needles)
}

async fn finish(setup: Setup, ctx: &Ctx, report: &mut Report, watched: &mut Watched) -> Result<()> {
    let (adapter, debuggee, _) = pids(&setup).await?;
    watch(watched, (adapter, debuggee));
    let _ = debug(&setup, json!({ "op": "terminate" })).await?;
    drop(setup.surface);
    drop(setup.supervisor);
    report.leftovers_after_shutdown(ctx, watched).await;
    Ok(())
}

async fn death_mid_step(ctx: Ctx) -> Result<Report> {
    let timeout = Duration::from_secs(3);
    let setup = setup(&ctx, "print start\nlet x = 1\ndie\nprint never\n", &[], timeout)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    debug(&setup, json!({ "op": "breakpoints", "file": "main.dart", "lines": [3] })).await?;
    let launched = debug(&setup, json!({ "op": "launch", "program": "main.dart" })).await?;
    expect_text(launched.is_error, &launched.text, false, &["stopped (breakpoint) at main.dart:3"])
        .map_err(anyhow::Error::msg)
        .context("launch")?;
    let (adapter, debuggee, _) = pids(&setup).await?;
    watch(&mut watched, (adapter, debuggee));
    let started = Instant::now();
    let stepped = debug(&setup, json!({ "op": "step_over" })).await?;
    report.ended(
        &ctx,
        started,
        timeout,
        expect_text(stepped.is_error, &stepped.text, true, &["the debug adapter exited (signal: 9"]),
    );
    report.leftovers_after_call(&ctx, &watched, &[]).await;
    let (_, _, status) = pids(&setup).await?;
    report.status = Some(status_says(&status, &["ended", "the debug adapter exited (signal: 9"]));
    report.next_works = Some(next_launch_works(&setup).await?);
    finish(setup, &ctx, &mut report, &mut watched).await?;
    Ok(report)
}

async fn hang_on_launch(ctx: Ctx) -> Result<Report> {
    let timeout = Duration::from_secs(2);
    let setup = setup(&ctx, "print start\nexit 0\n", &[("FIXTURE_DAP_HANG_ON", "launch")], timeout)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    // The adapter's pid, while the launch hangs.
    let spy = tokio::spawn({
        let supervisor = Arc::clone(&setup.supervisor);
        async move {
            let mut seen = Vec::new();
            for _ in 0..60 {
                if let Some(info) = supervisor.status("faults").await.session {
                    seen.extend(info.adapter_pid);
                    seen.extend(info.debuggee_pid);
                }
                if !seen.is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            seen
        }
    });
    let started = Instant::now();
    let launched = debug(&setup, json!({ "op": "launch", "program": "main.dart" })).await?;
    report.ended(
        &ctx,
        started,
        timeout,
        expect_text(launched.is_error, &launched.text, true, &["got no answer from the adapter within 2000 ms"]),
    );
    for pid in spy.await.unwrap_or_default() {
        watched.add(pid);
    }
    let (adapter, debuggee, status) = pids(&setup).await?;
    watch(&mut watched, (adapter, debuggee));
    report.leftovers_after_call(&ctx, &watched, &[]).await;
    report.status = Some(if status.text.contains("running") || status.text.contains("stopped") {
        Err(format!("status shows a live session: {}", crate::fault_row::cut(&status.text)))
    } else {
        Ok(())
    });
    report.next_works = Some(next_launch_works(&setup).await?);
    finish(setup, &ctx, &mut report, &mut watched).await?;
    Ok(report)
}

async fn unknown_reverse_request(ctx: Ctx) -> Result<Report> {
    let timeout = Duration::from_secs(3);
    let program = "print start\nreverse fixtureUnknownReverse\nprint after\nlet x = 1\nexit 0\n";
    let setup = setup(&ctx, program, &[], timeout)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    debug(&setup, json!({ "op": "breakpoints", "file": "main.dart", "lines": [4] })).await?;
    let started = Instant::now();
    let launched = debug(&setup, json!({ "op": "launch", "program": "main.dart" })).await?;
    let mut verdict = expect_text(launched.is_error, &launched.text, false, &["stopped (breakpoint) at main.dart:4"]);
    // The adapter heard an answer: a refusal.
    let log = std::fs::read_to_string(setup.root.join("adapter.log")).unwrap_or_default();
    let refused = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|m| m["type"] == "response" && m["command"] == "fixtureUnknownReverse" && m["success"] == false);
    if verdict.is_ok() && !refused {
        verdict = Err("the adapter's reverse request got no refusal".to_string());
    }
    report.ended(&ctx, started, timeout, verdict);
    let (adapter, debuggee, _) = pids(&setup).await?;
    watch(&mut watched, (adapter, debuggee));
    // Nothing of the fault to be gone: the session lives on.
    let healthy: Vec<u32> = [adapter, debuggee].into_iter().flatten().collect();
    report.leftovers_after_call(&ctx, &Watched::default(), &healthy).await;
    let stepped = debug(&setup, json!({ "op": "step_over" })).await?;
    report.next_works = Some(expect_text(stepped.is_error, &stepped.text, false, &["stopped (step) at main.dart:5"]));
    let (_, _, status) = pids(&setup).await?;
    report.status = Some(status_says(&status, &["stopped (step) at main.dart:5"]));
    finish(setup, &ctx, &mut report, &mut watched).await?;
    Ok(report)
}

async fn debuggee_forks_and_exits(ctx: Ctx) -> Result<Report> {
    let timeout = Duration::from_secs(3);
    let program = "print forking\nsleep 300\nexit 0\n";
    let setup = setup(&ctx, program, &[("FIXTURE_DAP_DEBUGGEE", "sleep 3600 & exit 0")], timeout)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    let started = Instant::now();
    let launched = debug(&setup, json!({ "op": "launch", "program": "main.dart" })).await?;
    report.ended(
        &ctx,
        started,
        timeout,
        expect_text(launched.is_error, &launched.text, false, &["ended: the program finished (exit code 0)"]),
    );
    let (adapter, debuggee, status) = pids(&setup).await?;
    watch(&mut watched, (adapter, debuggee));
    if let Some(pid) = debuggee {
        // The debuggee led its own group; its child stays in it.
        watched.groups.insert(pid);
    }
    report.leftovers_after_call(&ctx, &watched, &[]).await;
    report.status = Some(status_says(&status, &["ended: the program finished (exit code 0)"]));
    report.next_works = Some(next_launch_works(&setup).await?);
    finish(setup, &ctx, &mut report, &mut watched).await?;
    Ok(report)
}
