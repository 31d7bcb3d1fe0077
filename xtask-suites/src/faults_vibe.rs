//! The fault suite's worker rows: the `vibe_*` tools over a roster of
//! `sh -c` workers. The fast tier runs the fault; the good tier is `cat`
//! (the brief echoed), the healthy worker of the next call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{Registry, Surface, Tier, ToolResult};
use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig};

use crate::fault_row::{Ctx, Report, Row, Verdict, Watched, expect_text};

pub fn rows() -> Vec<Row> {
    vec![
        Row {
            system: "worker",
            fault: "a hang",
            call: "vibe_wait, vibe_kill",
            expected: "still running; then stopped",
            run: |ctx| Box::pin(run(ctx, HANG)),
        },
        Row {
            system: "worker",
            fault: "output with no newline, then a hang",
            call: "vibe_wait, vibe_kill",
            expected: "still running; then stopped, output kept",
            run: |ctx| Box::pin(run(ctx, NO_NEWLINE)),
        },
        Row {
            system: "worker",
            fault: "endless output without a newline",
            call: "vibe_wait, vibe_kill",
            expected: "running; then stopped, cut, memory bounded",
            run: |ctx| Box::pin(run(ctx, ENDLESS)),
        },
        Row {
            system: "worker",
            fault: "a grandchild that ignores SIGTERM",
            call: "vibe_wait, vibe_kill",
            expected: "still running; then stopped",
            run: |ctx| Box::pin(run(ctx, IGNORES_TERM)),
        },
        Row {
            system: "worker",
            fault: "a grandchild that leaves the group (setsid)",
            call: "vibe_wait, vibe_kill",
            expected: "still running; then stopped",
            run: |ctx| Box::pin(run(ctx, SETSID)),
        },
    ]
}

/// How long a stopped group has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(500);
/// How long `vibe_wait` waits before it says "still running".
const WAIT: Duration = Duration::from_secs(1);

struct Case {
    /// The worker's command line (`sh -c`).
    command: &'static str,
    /// What the kill's text (or the worker's result) must hold beyond "stopped".
    kept: &'static [&'static str],
    /// The most this process's peak memory may grow from the spawn to the kill, in MB.
    memory_mb: Option<u64>,
}

const HANG: Case = Case { command: "sleep 300", kept: &[], memory_mb: None };
const NO_NEWLINE: Case = Case { command: "printf 'half a line'; sleep 300", kept: &["half a line"], memory_mb: None };
/// `x` without end, as fast as a pipe takes it (a gigabyte or more before the kill): the
/// result keeps the first 1 MiB (the runner's output limit) and says how much was dropped.
const ENDLESS: Case =
    Case { command: "yes x | tr -d '\\n'", kept: &["xxxx", "\n[output cut at 1048576 bytes: "], memory_mb: Some(64) };
const IGNORES_TERM: Case =
    Case { command: "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & sleep 300", kept: &[], memory_mb: None };
const SETSID: Case = Case { command: "setsid sh -c 'sleep 300' & sleep 300", kept: &[], memory_mb: None };

fn surface(ctx: &Ctx, command: &str) -> Result<(Surface, Roster)> {
    let mut fast = CommandSpec::shell(command);
    fast.env.push(ctx.marker_env());
    let mut good = CommandSpec::shell("cat");
    good.env.push(ctx.marker_env());
    let mut config = CommandConfig::new(fast, good);
    config.grace = GRACE;
    let roster = Roster::new(Arc::new(CommandRunner::new(config)), RosterConfig::default());
    let surface = Arc::new(Registry::builder().with_vibe_roster(roster.clone()).build()?).surface(Tier::Read);
    Ok((surface, roster))
}

async fn call(surface: &Surface, tool: &str, args: Value) -> Result<ToolResult> {
    Ok(surface.call(tool, args).await?)
}

/// The processes of the worker's run now: the `sh` leading its group and the group's members.
fn group_members(leader: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&pid| crate::fault_row::read_process(pid).is_some_and(|p| p.pgid == leader))
        .collect()
}

/// The bytes the processes of the worker's group have written so far (`wchar` of `/proc/PID/io`).
fn written(leader: u32) -> u64 {
    group_members(leader)
        .into_iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/io")).ok())
        .filter_map(|io| io.lines().find_map(|l| l.strip_prefix("wchar: ").and_then(|n| n.trim().parse::<u64>().ok())))
        .sum()
}

/// The pid of the worker's `sh`: the process carrying the marker whose group it leads.
fn worker_leader(ctx: &Ctx) -> Option<u32> {
    crate::fault_row::leftovers(ctx, &Watched::default(), &[])
        .into_iter()
        .map(|l| l.pid)
        .find(|&pid| crate::fault_row::read_process(pid).is_some_and(|p| p.pgid == pid))
}

/// The peak memory grew by less than `limit_mb` since `before`, while the worker wrote
/// more than that: the bytes its cut result says were dropped.
fn memory_bounded(text: &str, limit_mb: u64, before: Option<u64>) -> Verdict {
    let (Some(before), Some(after)) = (before, crate::fault_row::peak_kb()) else {
        return Err("no VmHWM in /proc/self/status".to_string());
    };
    let dropped: Option<u64> = text
        .rsplit_once("[output cut at ")
        .and_then(|(_, note)| note.split_once(" bytes: "))
        .and_then(|(_, rest)| rest.split_once(' '))
        .and_then(|(figure, _)| figure.parse().ok());
    let grown_mb = after.saturating_sub(before) / 1024;
    match dropped {
        None => Err("no figure of the bytes dropped".to_string()),
        Some(bytes) if bytes >> 20 <= limit_mb => {
            Err(format!("only {bytes} bytes dropped: too few to show a bound of {limit_mb} MB"))
        }
        Some(_) if grown_mb > limit_mb => Err(format!("this process's peak memory grew by {grown_mb} MB")),
        Some(_) => Ok(()),
    }
}

async fn run(ctx: Ctx, case: Case) -> Result<Report> {
    let (surface, roster) = surface(&ctx, case.command)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    let peak_before = crate::fault_row::peak_kb();
    let spawned = call(&surface, "vibe_spawn", json!({ "brief": "do the faulty thing", "label": "faulty" })).await?;
    expect_text(spawned.is_error, &spawned.text, false, &["spawned w1"])
        .map_err(anyhow::Error::msg)
        .context("spawn")?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let leader = loop {
        match worker_leader(&ctx) {
            Some(leader) => break leader,
            None if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
            None => anyhow::bail!("no worker process after 5 s"),
        }
    };
    // Let the command start its children (the grandchild, the setsid one).
    tokio::time::sleep(Duration::from_millis(300)).await;
    for pid in group_members(leader) {
        watched.add(pid);
    }
    for leftover in crate::fault_row::leftovers(&ctx, &Watched::default(), &[]) {
        watched.add(leftover.pid);
    }
    // A worker whose output must outgrow the memory bound has written more than it before the
    // wait begins (bounded: on a loaded machine a second of `yes` may write less than the bound).
    // The group's count covers `yes` (two bytes an `x`) and `tr` (one): four times the bound
    // counted is over the bound reaching the runner.
    if let Some(limit_mb) = case.memory_mb {
        let enough = 4 * ((limit_mb + 16) << 20);
        let deadline = Instant::now() + Duration::from_secs(20);
        while written(leader) < enough && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // 1: the wait ends at its timeout saying "still running", and the kill ends the run.
    let started = Instant::now();
    let waited =
        call(&surface, "vibe_wait", json!({ "worker_id": "w1", "timeout_seconds": WAIT.as_secs_f64() })).await?;
    let mut verdict = expect_text(waited.is_error, &waited.text, false, &["w1 is still running after waiting 1"]);
    let killed = call(&surface, "vibe_kill", json!({ "worker_id": "w1" })).await?;
    if verdict.is_ok() {
        verdict = expect_text(killed.is_error, &killed.text, false, &["w1 killed: its processes are stopped"]);
    }
    if verdict.is_ok() && !case.kept.is_empty() {
        let shown = call(&surface, "vibe_wait", json!({ "worker_id": "w1", "timeout_seconds": 0 })).await?;
        verdict = expect_text(false, &shown.text, false, case.kept);
        if let Some(limit) = case.memory_mb
            && verdict.is_ok()
        {
            verdict = memory_bounded(&shown.text, limit, peak_before);
        }
    }
    // The wait's second, then the stop: the grace and the deadline to confirm it.
    report.ended(&ctx, started, WAIT + GRACE + Duration::from_secs(2), verdict);
    report.leftovers_after_call(&ctx, &watched, &[]).await;

    // 4: the roster shows it killed.
    let list = call(&surface, "vibe_list", json!({})).await?;
    let row = list.text.lines().find(|l| l.starts_with("w1 ")).unwrap_or_default().to_string();
    report.status = Some(if row.split_whitespace().nth(3) == Some("killed") {
        Ok(())
    } else {
        Err(format!("vibe_list shows w1 as: {row:?}"))
    });

    // 3: a healthy worker runs to its result.
    call(&surface, "vibe_spawn", json!({ "brief": "echo me", "label": "healthy", "tier": "good" })).await?;
    let next = call(&surface, "vibe_wait", json!({ "worker_id": "w2", "timeout_seconds": 10 })).await?;
    let next_verdict: Verdict = expect_text(next.is_error, &next.text, false, &["result:\necho me"]);
    report.next_works = Some(next_verdict);

    drop(surface);
    drop(roster);
    report.leftovers_after_shutdown(&ctx, &watched).await;
    Ok(report)
}
