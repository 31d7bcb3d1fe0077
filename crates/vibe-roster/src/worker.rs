//! Workers as data: tiers, statuses, the spawn request and the snapshot the
//! roster hands out.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use crate::error::Error;

/// A worker's grade: which configured runner command does its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tier {
    /// Mechanical work with a clear specification.
    #[default]
    Fast,
    /// Design, judgment, or reviewing a fast worker's output.
    Good,
}

impl Tier {
    /// `fast` or `good`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Fast => "fast",
            Tier::Good => "good",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = Error;

    fn from_str(s: &str) -> Result<Tier, Error> {
        match s {
            "fast" => Ok(Tier::Fast),
            "good" => Ok(Tier::Good),
            _ => Err(Error::UnknownTier { given: s.to_owned() }),
        }
    }
}

/// Where a worker is in its life. `Queued` and `Running` are unsettled; the
/// rest are settled until the next [`crate::Roster::send`] re-runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Waiting for a free slot.
    Queued,
    /// Its run is in progress.
    Running,
    /// The run finished successfully; `last_result` is its output.
    Done,
    /// The run finished unsuccessfully; `last_error` says how.
    Failed,
    /// Stopped by [`crate::Roster::kill`].
    Killed,
    /// Stopped because the run outlived the roster's run timeout.
    TimedOut,
}

impl Status {
    /// Whether the worker has stopped running (until re-run).
    pub fn is_settled(self) -> bool {
        !matches!(self, Status::Queued | Status::Running)
    }

    /// `queued`, `running`, `done`, `failed`, `killed` or `timed out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Killed => "killed",
            Status::TimedOut => "timed out",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`crate::Roster::spawn`] needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spawn {
    /// The task, given to the runner (the default runner writes it to stdin).
    pub brief: String,
    /// A short human name for the table; the id is used when blank.
    pub label: String,
    /// Which runner command does the work.
    pub tier: Tier,
}

/// A snapshot of one worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    /// The roster's id for it: `w1`, `w2`, … in spawn order.
    pub id: String,
    /// Its label.
    pub label: String,
    /// Its tier.
    pub tier: Tier,
    /// The brief so far, including every message sent to it.
    pub brief: String,
    /// Where it is.
    pub status: Status,
    /// How many runs it has been given (1 after spawn, +1 per send).
    pub runs: u32,
    /// When it was spawned.
    pub created_at: SystemTime,
    /// When its current or last run left the queue.
    pub started_at: Option<SystemTime>,
    /// When its last run settled; `None` while unsettled.
    pub finished_at: Option<SystemTime>,
    /// How long the current run has taken so far, or the last run took.
    pub elapsed: Duration,
    /// The last sign of life: output from the run, or a change of status.
    pub last_activity: SystemTime,
    /// The last settled run's output (for killed or timed-out runs, what they
    /// had written by then); `None` when there was none.
    pub last_result: Option<String>,
    /// Why the last settled run failed or was stopped.
    pub last_error: Option<String>,
}
