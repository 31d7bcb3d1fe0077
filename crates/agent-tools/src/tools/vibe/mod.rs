//! `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill`, `vibe_list`: directing
//! background workers over the `vibe-roster` crate.
//!
//! Registered only while vibe mode is on, that is when a run wires a
//! [`vibe_roster::Roster`]. All five are read tier: the gate belongs on the
//! workers' own tools, where edits happen. This module converts arguments and
//! words the roster's snapshots for the model; processes, waits and kills are
//! the roster's.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use vibe_roster::{Roster, Spawn};

use crate::error::Result;
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, Reply, Tool};

mod output;

pub use output::*;
use output::{seconds, worker_value};

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
#[allow(missing_docs)]
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
