//! The fault suite's kernel rows: the `eval` tool on the real Python kernel
//! (the project's `.tools/venv` interpreter when there is one, else the
//! `kernel` crate's discovery), with a short inactivity timeout and grace.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{KernelWiring, Registry, Surface, Tier, ToolResult};
use anyhow::{Context as _, Result, bail};
use kernel::{KernelConfig, Kernels, Language};
use serde_json::json;

use crate::fault_row::{Ctx, Report, Row, Verdict, Watched, expect_text, peak_kb};

pub fn rows() -> Vec<Row> {
    vec![
        Row {
            system: "kernel",
            fault: "crash mid-cell (os._exit)",
            call: "eval",
            expected: "error: the kernel crashed, state lost",
            run: |ctx| Box::pin(run(ctx, CRASH)),
        },
        Row {
            system: "kernel",
            fault: "infinite loop",
            call: "eval",
            expected: "error: interrupted, state kept",
            run: |ctx| Box::pin(run(ctx, LOOP)),
        },
        Row {
            system: "kernel",
            fault: "infinite loop that catches KeyboardInterrupt",
            call: "eval",
            expected: "error: killed, state lost",
            run: |ctx| Box::pin(run(ctx, STUBBORN_LOOP)),
        },
        Row {
            system: "kernel",
            fault: "a 1 GB print",
            call: "eval",
            expected: "output cut, memory bounded",
            run: |ctx| Box::pin(run(ctx, HUGE_PRINT)),
        },
        Row {
            system: "kernel",
            fault: "a 1 GB print without a newline",
            call: "eval",
            expected: "output cut, state kept, memory bounded",
            run: |ctx| Box::pin(run(ctx, HUGE_LINE)),
        },
        Row {
            system: "kernel",
            fault: "a 1 GB line into the frame pipe (fd 4)",
            call: "eval",
            expected: "frame skipped unread, state kept, memory bounded",
            run: |ctx| Box::pin(run(ctx, FRAME_PIPE_LINE)),
        },
        Row {
            system: "kernel",
            fault: "fork bomb: 300 children ignoring SIGINT/SIGTERM",
            call: "eval",
            expected: "error: killed, every child gone",
            run: |ctx| Box::pin(run(ctx, FORK_BOMB)),
        },
    ]
}

/// No output for this long interrupts a cell.
const INACTIVITY: Duration = Duration::from_secs(2);
/// After the interrupt, this long before the kill.
const GRACE: Duration = Duration::from_secs(1);

struct Case {
    code: &'static str,
    /// The call's budget (on top of the kernel's start).
    budget: Duration,
    error: bool,
    needles: &'static [&'static str],
    /// Whether the kernel survives the fault (its state kept).
    survives: bool,
    /// What the next cell must print.
    next: &'static str,
    next_needles: &'static [&'static str],
    /// The most this process's peak memory may grow during the call, in MB.
    memory_mb: Option<u64>,
}

const CRASH: Case = Case {
    code: "x = 41\nimport os\nprint('about to die', flush=True)\nos._exit(7)",
    budget: Duration::from_secs(2),
    error: true,
    needles: &["about to die", "kernel crashed (exit status 7)", "state was lost"],
    survives: false,
    next: "print('fresh', 'x' in globals())",
    next_needles: &["started a new python kernel", "fresh False"],
    memory_mb: None,
};

const LOOP: Case = Case {
    code: "x = 41\nwhile True:\n    pass",
    budget: INACTIVITY,
    needles: &["the cell was interrupted", "state is kept"],
    survives: true,
    next: "print(x + 1)",
    next_needles: &["42"],
    ..CRASH
};

const STUBBORN_LOOP: Case = Case {
    code: "x = 41\nwhile True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass",
    budget: Duration::from_secs(3),
    needles: &["ignored the interrupt and the kernel was killed", "state was lost"],
    survives: false,
    next_needles: &["started a new python kernel", "fresh False"],
    ..CRASH
};

const HUGE_PRINT: Case = Case {
    code: "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\nprint('\\nprinted 1 GB')",
    budget: Duration::from_secs(30),
    error: false,
    needles: &["printed 1 GB", "cut"],
    survives: true,
    next: "print(6 * 7)",
    next_needles: &["42"],
    memory_mb: Some(256),
};

/// A gigabyte on stdout and never a newline: the cell ends, its text is cut at the stream
/// cap (40 000 characters) with the rest counted, and `x` is still there.
const HUGE_LINE: Case = Case {
    code: "x = 41\nimport sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)",
    budget: Duration::from_secs(30),
    error: false,
    needles: &["[… 1073701824 characters of output cut; the last 2000 follow …]"],
    survives: true,
    next: "print(x + 1)",
    next_needles: &["42"],
    memory_mb: Some(128),
};

/// A gigabyte written into the driver's frame pipe as one line: the host skips it as it
/// arrives (frames are cut at 16 MiB), says so, and reads the driver's next frame.
const FRAME_PIPE_LINE: Case = Case {
    code: "x = 41\nimport os\nchunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    view = memoryview(chunk)\n    \
           while view:\n        view = view[os.write(4, view):]\nprint('wrote 1 GB')",
    needles: &[
        "wrote 1 GB",
        "[output cut at 16777216 bytes: a kernel frame of 1073741824 bytes, over the frame limit, was skipped unread]",
    ],
    ..HUGE_LINE
};

const FORK_BOMB: Case = Case {
    code: "import os, signal, time
kids = []
for i in range(300):
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
        os._exit(0)
    kids.append(pid)
    if i % 10 == 0:
        print(f'{i} forked', flush=True)
print(f'forked {len(kids)}', flush=True)
while True:
    try:
        time.sleep(600)
    except KeyboardInterrupt:
        pass",
    // Forking takes a second or two; then the inactivity timeout and the grace.
    budget: Duration::from_secs(6),
    error: true,
    needles: &["forked 300", "ignored the interrupt and the kernel was killed"],
    survives: false,
    next: "print('fresh', 'kids' in globals())",
    next_needles: &["started a new python kernel", "fresh False"],
    memory_mb: None,
};

fn python(root: &std::path::Path) -> Result<Option<std::path::PathBuf>> {
    let venv = crate::workspace_root().join(".tools/venv/bin/python");
    if venv.exists() {
        return Ok(Some(venv));
    }
    if kernel::find_interpreter(Language::Python, &KernelConfig::new(root)).is_err() {
        if std::env::var("CI").as_deref() == Ok("true") {
            bail!("no Python interpreter (CI=true): run `cargo xtask setup`");
        }
        bail!("no Python interpreter for the kernel rows");
    }
    Ok(None)
}

fn surface(ctx: &Ctx, root: &std::path::Path) -> Result<(Surface, Arc<Kernels>)> {
    let mut config = KernelConfig::new(root);
    config.python = python(root)?;
    config.inactivity_timeout = INACTIVITY;
    config.interrupt_grace = GRACE;
    config.env.push(ctx.marker_env());
    let kernels = Arc::new(Kernels::new(config));
    let registry = Registry::builder().with_kernels(KernelWiring::new(Arc::clone(&kernels))).build()?;
    Ok((Arc::new(registry).surface(Tier::Exec), kernels))
}

pub(crate) async fn eval(surface: &Surface, code: &str) -> Result<ToolResult> {
    Ok(surface.call("eval", json!({ "code": code, "description": "a cell of the fault suite" })).await?)
}

pub(crate) async fn kernel_pid(kernels: &Kernels) -> Option<u32> {
    kernels.running().await.iter().find(|k| k.language == Language::Python).map(|k| k.pid)
}

async fn run(ctx: Ctx, case: Case) -> Result<Report> {
    let (_dir, root) = crate::fault_row::project(&[])?;
    let (surface, kernels) = surface(&ctx, &root)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    // The kernel is started first, so the budget is the cell's alone.
    let warm = eval(&surface, "print('warm')").await?;
    expect_text(warm.is_error, &warm.text, false, &["warm"]).map_err(anyhow::Error::msg).context("warm-up")?;
    let first = kernel_pid(&kernels).await.context("no kernel after the warm-up")?;
    watched.add(first);
    let peak_before = peak_kb();
    let started = Instant::now();
    let result = eval(&surface, case.code).await?;
    let mut verdict = expect_text(result.is_error, &result.text, case.error, case.needles);
    if let (Some(limit), Some(before), Some(after)) = (case.memory_mb, peak_before, peak_kb())
        && verdict.is_ok()
        && after.saturating_sub(before) > limit * 1024
    {
        verdict = Err(format!("this process's peak memory grew by {} MB", (after - before) / 1024));
    }
    if verdict.is_ok() && result.text.len() > 1 << 20 {
        verdict = Err(format!("a result of {} bytes", result.text.len()));
    }
    report.ended(&ctx, started, case.budget, verdict);
    let now = kernel_pid(&kernels).await;
    let healthy: Vec<u32> = if case.survives { now.into_iter().collect() } else { Vec::new() };
    report.leftovers_after_call(&ctx, &watched, &healthy).await;
    // 4, before the next cell: a kernel that died is not shown as running; one that survived is the same.
    let status: Verdict = match (case.survives, now) {
        (true, Some(pid)) if pid == first && crate::fault_row::running(pid) => Ok(()),
        (true, other) => Err(format!("the kernel {first} should have survived; running: {other:?}")),
        (false, None) => Ok(()),
        (false, Some(pid)) => Err(format!("kernel {pid} shown as running after it was lost")),
    };
    let next = eval(&surface, case.next).await?;
    report.next_works = Some(expect_text(next.is_error, &next.text, false, case.next_needles));
    let after = kernel_pid(&kernels).await;
    report.status = Some(status.and_then(|()| match after {
        Some(pid) if crate::fault_row::running(pid) && (case.survives == (pid == first)) => Ok(()),
        other => Err(format!("after the next cell the kernel shown is {other:?} (the first was {first})")),
    }));
    if let Some(pid) = after {
        watched.add(pid);
    }
    kernels.shutdown().await;
    drop(surface);
    report.leftovers_after_shutdown(&ctx, &watched).await;
    Ok(report)
}
