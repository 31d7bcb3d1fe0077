//! The fault suite's language-server rows: the `lsp` tool against the fixture
//! language server, each fault set by its `FIXTURE_LSP_*` knobs and, with
//! `FIXTURE_LSP_FAULT_ONCE`, only in the first server started, so that the
//! restarted one must serve the next call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{LspWiring, Registry, Surface, Tier, Workspace};
use anyhow::{Context as _, Result};
use lsp_supervisor::{Supervisor, SupervisorConfig};
use serde_json::json;

use crate::fault_row::{Ctx, Report, Row, Watched, expect_text};

/// How one language-server row goes.
struct Case {
    /// The fixture server's knobs (the fault fires in its first process only).
    knobs: &'static [(&'static str, &'static str)],
    /// The supervisor's request timeout: the faulty call's budget.
    timeout: Duration,
    /// A call that must answer before the fault (the server is up then).
    warm_up: bool,
    /// Before the faulty call, wait until the first server has exited by itself.
    wait_for_exit: bool,
    /// The faulty call's action (at `alpha`, line 2 of `a.fix`).
    action: &'static str,
    /// Whether the faulty call must be an error, and what its text must hold.
    error: bool,
    needles: &'static [&'static str],
    /// Whether the server was replaced (a restart, with the last exit naming `exit`).
    restarted: bool,
    exit: &'static str,
}

const A_FIX: &str = "def alpha\nalpha\n";

pub fn rows() -> Vec<Row> {
    vec![
        Row {
            system: "language server",
            fault: "crash at initialize",
            call: "lsp definition",
            expected: "error: crashed, with its stderr",
            run: |ctx| Box::pin(run(ctx, INIT_CRASH)),
        },
        Row {
            system: "language server",
            fault: "crash during a request",
            call: "lsp hover",
            expected: "error: crashed, with its stderr",
            run: |ctx| Box::pin(run(ctx, REQUEST_CRASH)),
        },
        Row {
            system: "language server",
            fault: "crash between requests",
            call: "lsp hover",
            expected: "answer from a restarted server",
            run: |ctx| Box::pin(run(ctx, IDLE_CRASH)),
        },
        Row {
            system: "language server",
            fault: "hang (the whole process stopped)",
            call: "lsp hover",
            expected: "error: timed out",
            run: |ctx| Box::pin(run(ctx, FREEZE)),
        },
        Row {
            system: "language server",
            fault: "garbage framing",
            call: "lsp hover",
            expected: "error: malformed frame",
            run: |ctx| Box::pin(run(ctx, GARBAGE)),
        },
        Row {
            system: "language server",
            fault: "a 100 MB message",
            call: "lsp hover",
            expected: "error: message over the size limit",
            run: |ctx| Box::pin(run(ctx, HUGE)),
        },
        Row {
            system: "language server",
            fault: "slow indexing (past the timeout)",
            call: "lsp definition",
            expected: "error: not ready, naming the progress",
            run: |ctx| Box::pin(run(ctx, SLOW_INDEX)),
        },
        Row {
            system: "language server",
            fault: "a dropped response",
            call: "lsp references",
            expected: "error: timed out",
            run: |ctx| Box::pin(run(ctx, DROPPED)),
        },
        Row {
            system: "language server",
            fault: "a storm of 5,000 server-to-client requests",
            call: "lsp definition",
            expected: "the answer, every request answered",
            run: |ctx| Box::pin(run(ctx, STORM)),
        },
    ]
}

const SECOND: Duration = Duration::from_secs(1);

const INIT_CRASH: Case = Case {
    knobs: &[("FIXTURE_LSP_CRASH_ON", "initialize")],
    timeout: Duration::from_secs(3),
    warm_up: false,
    wait_for_exit: false,
    action: "definition",
    error: true,
    needles: &["exited with status 3", "fixture: crashing on initialize"],
    restarted: true,
    exit: "fixture: crashing on initialize",
};

const REQUEST_CRASH: Case = Case {
    knobs: &[("FIXTURE_LSP_CRASH_ON", "textDocument/hover")],
    action: "hover",
    needles: &["exited with status 3", "fixture: crashing on textDocument/hover"],
    exit: "fixture: crashing on textDocument/hover",
    warm_up: true,
    ..INIT_CRASH
};

const IDLE_CRASH: Case = Case {
    knobs: &[("FIXTURE_LSP_EXIT_AFTER_MS", "1500")],
    wait_for_exit: true,
    error: false,
    needles: &["def alpha (line 1)"],
    exit: "fixture: crashing on a timer",
    ..REQUEST_CRASH
};

const FREEZE: Case = Case {
    knobs: &[("FIXTURE_LSP_FREEZE_ON", "textDocument/hover")],
    timeout: Duration::from_secs(2),
    needles: &["timed out"],
    exit: "stopped answering: a request timed out, then a probe got no answer",
    ..REQUEST_CRASH
};

const GARBAGE: Case = Case {
    knobs: &[("FIXTURE_LSP_GARBAGE_ON", "textDocument/hover")],
    needles: &["malformed frame (bad Content-Length \"abc\")"],
    exit: "malformed frame",
    ..REQUEST_CRASH
};

const HUGE: Case = Case {
    knobs: &[("FIXTURE_LSP_HUGE_ON", "textDocument/hover")],
    timeout: Duration::from_secs(10),
    needles: &["MB", "limit"],
    exit: "limit",
    ..REQUEST_CRASH
};

const SLOW_INDEX: Case = Case {
    knobs: &[("FIXTURE_LSP_INDEX_MS", "2500")],
    timeout: Duration::from_millis(1500),
    warm_up: false,
    wait_for_exit: false,
    action: "definition",
    error: true,
    needles: &["not ready", "Indexing"],
    restarted: false,
    exit: "",
};

const DROPPED: Case = Case {
    knobs: &[("FIXTURE_LSP_HANG_ON", "textDocument/references")],
    timeout: Duration::from_secs(2),
    warm_up: true,
    action: "references",
    needles: &["timed out"],
    ..SLOW_INDEX
};

const STORM: Case = Case {
    knobs: &[("FIXTURE_LSP_STORM", "5000")],
    timeout: Duration::from_secs(10),
    warm_up: false,
    action: "definition",
    error: false,
    needles: &["a.fix:1"],
    ..SLOW_INDEX
};

fn surface(ctx: &Ctx, root: &std::path::Path, case: &Case) -> Result<(Surface, Arc<Supervisor>)> {
    let mut config = SupervisorConfig::new(root);
    config.extra_path = vec![ctx.bin_dir.clone()];
    config.request_timeout = case.timeout;
    config.init_timeout = case.timeout;
    let once = root.join(".fault-fired");
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.env = case.knobs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            spec.env.push(("FIXTURE_LSP_FAULT_ONCE".into(), once.display().to_string()));
            spec.env.push(ctx.marker_env());
            // The fixture server reads the disk for every request: no load to wait for, unless
            // the row makes it index (then its first seconds are waited out as for any server).
            if !case.knobs.iter().any(|(knob, _)| *knob == "FIXTURE_LSP_INDEX_MS") {
                spec.load_grace = Duration::ZERO;
            }
        }
    }
    let supervisor = Arc::new(Supervisor::new(config));
    let workspace = Workspace::new(root)?;
    let registry = Registry::builder().with_lsp(LspWiring::new(Arc::clone(&supervisor), workspace)).build()?;
    Ok((Arc::new(registry).surface(Tier::Read), supervisor))
}

async fn call(surface: &Surface, action: &str) -> Result<agent_tools::ToolResult> {
    let args = json!({ "action": action, "file": "a.fix", "line": 2, "symbol": "alpha" });
    Ok(surface.call("lsp", args).await?)
}

/// The pid `lsp status` shows for the running server, if any.
async fn running_pid(supervisor: &Supervisor) -> Option<u32> {
    supervisor.status().await.iter().find_map(|s| s.pid)
}

async fn run(ctx: Ctx, case: Case) -> Result<Report> {
    let (_dir, root) = crate::fault_row::project(&[("fixture.toml", ""), ("a.fix", A_FIX)])?;
    let (surface, supervisor) = surface(&ctx, &root, &case)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    if case.warm_up {
        let warm = call(&surface, "definition").await?;
        expect_text(warm.is_error, &warm.text, false, &["a.fix:1"]).map_err(anyhow::Error::msg).context("warm-up")?;
    }
    let first = running_pid(&supervisor).await;
    if let Some(pid) = first {
        watched.add(pid);
    }
    if case.wait_for_exit {
        let pid = first.context("no server before the crash between requests")?;
        anyhow::ensure!(crate::fault_row::wait_gone(pid, 5 * SECOND).await, "the server did not exit by itself");
    }
    // The slow-indexing server and the one crashing at initialize show up during the call.
    let started = Instant::now();
    let pids_during = tokio::spawn({
        let supervisor = Arc::clone(&supervisor);
        async move {
            let mut seen = Vec::new();
            for _ in 0..40 {
                if let Some(pid) = running_pid(&supervisor).await
                    && !seen.contains(&pid)
                {
                    seen.push(pid);
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            seen
        }
    });
    let result = call(&surface, case.action).await?;
    report.ended(&ctx, started, case.timeout, expect_text(result.is_error, &result.text, case.error, case.needles));
    for pid in pids_during.await.unwrap_or_default() {
        watched.add(pid);
    }
    // A server running now is the fault's only if it is the first one (hung, say); a
    // restarted one is healthy, and so is the first one where the fault should not take it.
    let faulty = running_pid(&supervisor).await;
    let healthy: Vec<u32> = faulty.filter(|pid| !case.restarted || Some(*pid) != first).into_iter().collect();
    report.leftovers_after_call(&ctx, &watched, &healthy).await;

    // 3: the next call answers (from a restarted server where the fault took the first one).
    let next = call(&surface, "definition").await?;
    report.next_works = Some(expect_text(next.is_error, &next.text, false, &["a.fix:1"]));

    // 4: status names the running server, its restarts and how the first one ended.
    let status = surface.call("lsp", json!({ "action": "status" })).await?;
    report.status = Some(check_status(&status.text, &supervisor, &case, first.or(faulty)).await);

    supervisor.shutdown().await;
    if let Some(pid) = running_pid(&supervisor).await {
        watched.add(pid);
    }
    report.leftovers_after_shutdown(&ctx, &watched).await;
    Ok(report)
}

async fn check_status(text: &str, supervisor: &Supervisor, case: &Case, faulty: Option<u32>) -> Result<(), String> {
    let pid = running_pid(supervisor)
        .await
        .ok_or_else(|| format!("no running server in: {}", crate::fault_row::cut(text)))?;
    if !crate::fault_row::running(pid) {
        return Err(format!("status shows pid {pid}, which does not run"));
    }
    let mut needles = vec![format!("running, pid {pid}")];
    if case.restarted {
        if faulty == Some(pid) {
            return Err(format!("status shows the faulty server's pid {pid} still"));
        }
        needles.push("1 restart,".to_string());
        needles.push("last exit: ".to_string());
        needles.push(case.exit.to_string());
    } else {
        needles.push("0 restarts".to_string());
        if faulty.is_some_and(|f| f != pid) {
            return Err(format!("the server was replaced ({faulty:?} → {pid}) where it should have gone on"));
        }
    }
    match needles.iter().find(|n| !text.contains(n.as_str())) {
        Some(missing) => Err(format!("no {missing:?} in: {}", crate::fault_row::cut(text))),
        None => Ok(()),
    }
}
