//! The values of the `vibe_*` tools (MCP `structuredContent`), made from the
//! roster's snapshots, and their words.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Serialize;
use vibe_roster::Worker;

use crate::tool::Words;

/// A worker as `vibe_spawn`, `vibe_send`, `vibe_wait` and `vibe_kill` return
/// it. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerOutput {
    /// `w1`, `w2`, …
    pub id: String,
    /// The label given at spawn, trimmed; the id when none was given.
    pub label: String,
    /// The worker grade: `fast` or `good`.
    pub tier: &'static str,
    /// `queued`, `running`, `done`, `failed`, `killed`, `timed_out`.
    pub status: &'static str,
    /// How many runs it has had (a `vibe_send` starts another).
    pub runs: u32,
    /// The brief, with what `vibe_send` appended.
    pub brief: String,
    /// When it was spawned.
    pub created_at: f64,
    /// When its current or last run left the queue; `null` until its first run does.
    pub started_at: Option<f64>,
    /// When its last run settled; `null` while a run is queued or running.
    pub finished_at: Option<f64>,
    /// How long the current or last run has taken, in seconds.
    pub elapsed_seconds: f64,
    /// Its last sign of life: output from the run, or a change of status.
    pub last_activity: f64,
    /// The last run's output.
    pub last_result: Option<String>,
    /// Why the last settled run failed or was stopped.
    pub last_error: Option<String>,
    /// `vibe_wait` only: whether the worker settled within the wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// `elapsed_seconds` exactly; for the words.
    #[serde(skip)]
    pub elapsed: Duration,
}

/// `vibe_list`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkersOutput {
    /// Every worker of the run, in spawn order.
    pub workers: Vec<WorkerOutput>,
}

/// The worker `vibe_spawn` started, queued or running. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Spawned(pub WorkerOutput);

/// The worker `vibe_send` runs again with the appended brief. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Sent(pub WorkerOutput);

/// The worker `vibe_wait` waited for, with `settled` set. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Waited {
    /// The worker as the wait left it.
    pub worker: WorkerOutput,
    /// How long the call waited; for the words.
    #[serde(skip)]
    pub waited_up_to: Duration,
}

/// The worker `vibe_kill` stopped. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Killed {
    /// The worker after the kill.
    pub worker: WorkerOutput,
    /// Whether it had settled before the call, so nothing was stopped; for the words.
    #[serde(skip)]
    pub already_settled: bool,
}

impl Words for Spawned {
    fn words(&self) -> String {
        let w = &self.0;
        format!(
            "spawned {} ({}, {}): {}; it runs on in the background — vibe_wait with worker_id \"{}\" collects its result",
            w.id, w.label, w.tier, w.status, w.id
        )
    }
}

impl Words for Sent {
    fn words(&self) -> String {
        let w = &self.0;
        format!("sent to {}: run {} {} with the appended brief", w.id, w.runs, w.status)
    }
}

impl Words for Waited {
    fn words(&self) -> String {
        let w = &self.worker;
        if w.settled != Some(true) {
            return format!(
                "{} is still {} after waiting {} ({} so far); wait again, or vibe_kill it",
                w.id,
                w.status,
                seconds(self.waited_up_to),
                seconds(w.elapsed)
            );
        }
        let mut text = format!("{} {} after {}", w.id, w.status, seconds(w.elapsed));
        if let Some(error) = &w.last_error {
            text.push_str(&format!("\nerror: {}", error.trim_end()));
        }
        match &w.last_result {
            Some(result) => {
                text.push_str("\nresult:\n");
                text.push_str(result.trim_end());
            }
            None => text.push_str("\n(no output)"),
        }
        text
    }
}

impl Words for Killed {
    fn words(&self) -> String {
        let w = &self.worker;
        if self.already_settled {
            return format!("{} had already settled ({}); nothing to stop", w.id, w.status);
        }
        // The roster checks: a process of the run it could not stop is named in the error.
        match w.last_error.as_deref().and_then(|e| e.split_once("; ")) {
            Some((_, left)) if left.contains("could not be stopped") => format!("{} {}, but {left}", w.id, w.status),
            _ => format!(
                "{} {}: its processes are stopped (its process group, and any process that left it but kept the run's environment)",
                w.id, w.status
            ),
        }
    }
}

impl Words for WorkersOutput {
    fn words(&self) -> String {
        if self.workers.is_empty() { "no workers".to_owned() } else { table(&self.workers) }
    }
}

/// The workers as an aligned text table.
fn table(workers: &[WorkerOutput]) -> String {
    let header = ["id", "label", "tier", "status", "runs", "elapsed", "last result"].map(str::to_owned);
    let rows: Vec<[String; 7]> = workers
        .iter()
        .map(|w| {
            let settled = !matches!(w.status, "queued" | "running");
            let last = match (&w.last_result, &w.last_error) {
                (_, Some(error)) if settled && w.status != "done" => first_line(error, 60),
                (Some(result), _) => first_line(result, 60),
                _ => "-".to_owned(),
            };
            [
                w.id.clone(),
                w.label.clone(),
                w.tier.to_owned(),
                w.status.to_owned(),
                w.runs.to_string(),
                seconds(w.elapsed),
                last,
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(rows.iter())
        .map(|row| {
            let cells: Vec<String> = row.iter().zip(widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn worker_value(worker: &Worker) -> WorkerOutput {
    WorkerOutput {
        id: worker.id.clone(),
        label: worker.label.clone(),
        tier: worker.tier.as_str(),
        status: worker.status.as_str(),
        runs: worker.runs,
        brief: worker.brief.clone(),
        created_at: unix_seconds(worker.created_at),
        started_at: worker.started_at.map(unix_seconds),
        finished_at: worker.finished_at.map(unix_seconds),
        elapsed_seconds: worker.elapsed.as_secs_f64(),
        last_activity: unix_seconds(worker.last_activity),
        last_result: worker.last_result.clone(),
        last_error: worker.last_error.clone(),
        settled: None,
        elapsed: worker.elapsed,
    }
}

fn unix_seconds(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

pub(super) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        format!("{}m{:02}s", duration.as_secs() / 60, duration.as_secs() % 60)
    }
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max - 1).collect::<String>())
    } else if text.trim().lines().nth(1).is_some() {
        format!("{line} …")
    } else {
        line.to_owned()
    }
}
