//! `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill`, `vibe_list`: directing
//! background workers over the `vibe-roster` crate.
//!
//! Registered only while vibe mode is on, that is when a run wires a
//! [`vibe_roster::Roster`]. All five are read tier: the gate belongs on the
//! workers' own tools, where edits happen. This module converts arguments and
//! words the roster's snapshots for the model; processes, waits and kills are
//! the roster's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use vibe_roster::{Roster, Spawn, Worker};

use crate::error::Result;
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, Reply, Tool, Words};

/// A worker as `vibe_spawn`, `vibe_send`, `vibe_wait` and `vibe_kill` return
/// it. Times are seconds since the Unix epoch; `elapsed_seconds` is the
/// current or last run's duration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerOutput {
    /// `w1`, `w2`, …
    pub id: String,
    pub label: String,
    /// The worker grade: `fast` or `good`.
    pub tier: &'static str,
    /// `queued`, `running`, `done`, `failed`, `killed`, `timed_out`.
    pub status: &'static str,
    /// How many runs it has had (a `vibe_send` starts another).
    pub runs: u32,
    /// The brief, with what `vibe_send` appended.
    pub brief: String,
    pub created_at: f64,
    pub started_at: Option<f64>,
    pub finished_at: Option<f64>,
    pub elapsed_seconds: f64,
    pub last_activity: f64,
    /// The last run's output.
    pub last_result: Option<String>,
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
    pub workers: Vec<WorkerOutput>,
}

impl RegistryBuilder {
    /// Turns vibe mode on with this roster of background workers: registers
    /// `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill` and `vibe_list`.
    pub fn with_vibe_roster(self, roster: Roster) -> RegistryBuilder {
        self.register(VibeSpawn(roster.clone()))
            .register(VibeSend(roster.clone()))
            .register(VibeWait(roster.clone()))
            .register(VibeKill(roster.clone()))
            .register(VibeList(roster))
    }
}

/// A worker's tier.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkerTier {
    #[default]
    Fast,
    Good,
}

impl WorkerTier {
    fn tier(self) -> vibe_roster::Tier {
        match self {
            WorkerTier::Fast => vibe_roster::Tier::Fast,
            WorkerTier::Good => vibe_roster::Tier::Good,
        }
    }
}

/// Starts a background worker on a brief and returns at once with its `worker_id`; the worker runs on while you do other things. Use `vibe_wait` to collect its result, `vibe_send` to add to its brief, `vibe_kill` to stop it, `vibe_list` to see all workers. Tier `fast` is for mechanical work with a clear specification; `good` for design, judgment, or reviewing a fast worker's output.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VibeSpawnInput {
    /// The whole task, self-contained: the worker sees nothing else of this conversation.
    pub brief: String,
    /// A short name for the worker, shown in `vibe_list`.
    pub label: String,
    /// `fast` (default) or `good`.
    #[serde(default)]
    pub tier: Option<WorkerTier>,
}

/// Appends a message to a worker's brief and runs it again with the whole brief; a worker still running is stopped first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VibeSendInput {
    /// The worker's id, from `vibe_spawn` or `vibe_list`.
    pub worker_id: String,
    /// What to add to the brief.
    pub message: String,
}

/// Blocks until a worker settles (done, failed, killed or timed out) or the timeout passes, and returns its status and result. A timeout leaves the worker running; wait again or kill it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VibeWaitInput {
    /// The worker's id.
    pub worker_id: String,
    /// How long to wait, in seconds; the server's default when omitted, and never past its hard limit.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub timeout_seconds: Option<f64>,
}

/// Stops a worker and every process it started.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VibeKillInput {
    /// The worker's id.
    pub worker_id: String,
}

/// The table of background workers: id, label, tier, status, runs, elapsed time and the start of the last result.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VibeListInput {}

struct VibeSpawn(Roster);
struct VibeSend(Roster);
struct VibeWait(Roster);
struct VibeKill(Roster);
struct VibeList(Roster);

impl Tool for VibeSpawn {
    type Input = VibeSpawnInput;
    type Output = Spawned;
    const NAME: &'static str = "vibe_spawn";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: VibeSpawnInput, _cx: &CallContext) -> Result<Reply<Spawned>> {
        let spawn = Spawn { brief: input.brief, label: input.label, tier: input.tier.unwrap_or_default().tier() };
        Ok(self.0.spawn(spawn).map(|w| Spawned(worker_value(&w))).map_err(|e| e.to_string()))
    }
}

impl Tool for VibeSend {
    type Input = VibeSendInput;
    type Output = Sent;
    const NAME: &'static str = "vibe_send";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: VibeSendInput, _cx: &CallContext) -> Result<Reply<Sent>> {
        let sent = self.0.send(input.worker_id.trim(), &input.message).await;
        Ok(sent.map(|w| Sent(worker_value(&w))).map_err(|e| e.to_string()))
    }
}

impl Tool for VibeWait {
    type Input = VibeWaitInput;
    type Output = Waited;
    const NAME: &'static str = "vibe_wait";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: VibeWaitInput, cx: &CallContext) -> Result<Reply<Waited>> {
        let timeout = match input.timeout_seconds {
            None => None,
            Some(s) if s.is_finite() && s >= 0.0 => Some(Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)),
            Some(s) => return Ok(Err(format!("timeout_seconds must be a number of seconds ≥ 0, not {s}"))),
        };
        let id = input.worker_id.trim();
        // The roster's wait is a watch on the worker's status: dropping it
        // (cancellation) returns at once and leaves the worker running.
        let waiting = self.0.wait(id, timeout);
        let waited = if cx.wants_progress() {
            let mut waiting = std::pin::pin!(waiting);
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    waited = &mut waiting => break waited,
                    _ = tick.tick() => {
                        if let Ok(worker) = self.0.get(id) {
                            cx.progress(Progress::message(format!(
                                "waiting for {}: {} for {}",
                                worker.id,
                                worker.status,
                                seconds(worker.elapsed)
                            )));
                        }
                    }
                }
            }
        } else {
            waiting.await
        };
        Ok(waited
            .map(|waited| Waited {
                worker: WorkerOutput { settled: Some(waited.settled), ..worker_value(&waited.worker) },
                waited_up_to: waited.waited_up_to,
            })
            .map_err(|e| e.to_string()))
    }
}

impl Tool for VibeKill {
    type Input = VibeKillInput;
    type Output = Killed;
    const NAME: &'static str = "vibe_kill";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: VibeKillInput, _cx: &CallContext) -> Result<Reply<Killed>> {
        let id = input.worker_id.trim();
        let before = self.0.get(id).map(|w| w.status);
        Ok(self
            .0
            .kill(id)
            .await
            .map(|worker| Killed {
                worker: worker_value(&worker),
                already_settled: before.is_ok_and(|s| s.is_settled()),
            })
            .map_err(|e| e.to_string()))
    }
}

impl Tool for VibeList {
    type Input = VibeListInput;
    type Output = WorkersOutput;
    const NAME: &'static str = "vibe_list";
    const TIER: Tier = Tier::Read;

    async fn call(&self, _input: VibeListInput, _cx: &CallContext) -> Result<Reply<WorkersOutput>> {
        Ok(Ok(WorkersOutput { workers: self.0.list().iter().map(worker_value).collect() }))
    }
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

fn worker_value(worker: &Worker) -> WorkerOutput {
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

fn seconds(duration: Duration) -> String {
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
