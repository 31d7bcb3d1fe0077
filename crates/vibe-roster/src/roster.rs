//! The roster: the workers of one run, their runs, and the waits on them.
//!
//! Each run is a tokio task that waits for a slot (status queued), calls the
//! [`Runner`] (running), and records how it settled. Runs are numbered by a
//! per-worker generation; a task only ever writes to its worker while its
//! generation is current, so a superseded run cannot overwrite the new one.
//! Dropping the roster stops every run.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, SystemTime};

use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::runner::{Activity, RunControl, RunOutcome, RunRequest, Runner};
use crate::worker::{Spawn, Status, Worker};

/// Limits of a roster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterConfig {
    /// How many runs may be running at once; the rest are queued.
    pub max_running: usize,
    /// A run still going after this long is stopped and marked timed out.
    pub run_timeout: Option<Duration>,
    /// The wait used when a caller gives none.
    pub default_wait: Duration,
    /// The hard deadline of every wait: a longer timeout is cut to this.
    pub max_wait: Duration,
    /// How long a stopped run has to confirm it ended before its future is
    /// dropped (the default runner then sends SIGKILL to its group).
    pub stop_deadline: Duration,
}

impl Default for RosterConfig {
    /// 4 running, no run timeout, waits of 5 minutes by default and 10 at
    /// most, a 10 second stop deadline.
    fn default() -> RosterConfig {
        RosterConfig {
            max_running: 4,
            run_timeout: None,
            default_wait: Duration::from_secs(300),
            max_wait: Duration::from_secs(600),
            stop_deadline: Duration::from_secs(10),
        }
    }
}

/// What a wait saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waited {
    /// The worker when the wait ended.
    pub worker: Worker,
    /// Whether it had settled; `false` means the timeout passed first.
    pub settled: bool,
    /// How long the wait was allowed (the requested timeout, cut to the hard deadline).
    pub waited_up_to: Duration,
}

/// The workers of one run. Cheap to clone; clones share the workers.
#[derive(Clone)]
pub struct Roster {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Roster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roster").field("config", &self.inner.config).field("workers", &self.list().len()).finish()
    }
}

struct Inner {
    runner: Arc<dyn Runner>,
    config: RosterConfig,
    slots: Arc<Semaphore>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    entries: Vec<Entry>,
}

struct Entry {
    worker: Worker,
    /// When the current or last run left the queue, and when it settled.
    started: Option<Instant>,
    finished: Option<Instant>,
    generation: u64,
    run: Option<RunHandle>,
    status: watch::Sender<Status>,
}

struct RunHandle {
    stop: Option<oneshot::Sender<StopReason>>,
    task: JoinHandle<()>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Kill,
    Supersede,
}

impl Roster {
    /// A roster whose runs are done by `runner`.
    pub fn new(runner: Arc<dyn Runner>, config: RosterConfig) -> Roster {
        let slots = Arc::new(Semaphore::new(config.max_running.max(1)));
        Roster { inner: Arc::new(Inner { runner, config, slots, state: Mutex::new(State::default()) }) }
    }

    /// Its limits.
    pub fn config(&self) -> &RosterConfig {
        &self.inner.config
    }

    /// Adds a worker and starts its first run; returns at once with the worker
    /// queued or running. Errors: an empty brief; no tokio runtime.
    pub fn spawn(&self, spawn: Spawn) -> Result<Worker> {
        if spawn.brief.trim().is_empty() {
            return Err(Error::Empty { what: "brief" });
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let mut state = self.inner.lock();
        state.next_id += 1;
        let id = format!("w{}", state.next_id);
        let now = SystemTime::now();
        let label = if spawn.label.trim().is_empty() { id.clone() } else { spawn.label.trim().to_owned() };
        let worker = Worker {
            id,
            label,
            tier: spawn.tier,
            brief: spawn.brief,
            status: Status::Queued,
            runs: 0,
            created_at: now,
            started_at: None,
            finished_at: None,
            elapsed: Duration::ZERO,
            last_activity: now,
            last_result: None,
            last_error: None,
        };
        let (status, _) = watch::channel(Status::Queued);
        state.entries.push(Entry { worker, started: None, finished: None, generation: 0, run: None, status });
        let index = state.entries.len() - 1;
        let entry = &mut state.entries[index];
        self.start_run(&runtime, entry);
        Ok(snapshot(entry))
    }

    /// Appends `message` to the worker's brief and runs it again, stopping its
    /// current run first if there is one. Returns the worker queued or running.
    /// Errors: unknown worker; empty message; no tokio runtime.
    pub async fn send(&self, id: &str, message: &str) -> Result<Worker> {
        if message.trim().is_empty() {
            return Err(Error::Empty { what: "message" });
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let run = self.inner.lock().entry(id)?.run.take();
        let stopped = match run {
            Some(run) => self.stop_run(id, run, StopReason::Supersede).await,
            None => Ok(()),
        };
        let mut state = self.inner.lock();
        let entry = state.entry(id)?;
        let brief = &mut entry.worker.brief;
        if !brief.ends_with('\n') {
            brief.push('\n');
        }
        brief.push('\n');
        brief.push_str(message);
        self.start_run(&runtime, entry);
        let worker = snapshot(entry);
        stopped.map(|()| worker)
    }

    /// Waits until the worker settles or `timeout` passes (default
    /// [`RosterConfig::default_wait`]), and never longer than
    /// [`RosterConfig::max_wait`]. The worker keeps running when the wait
    /// times out. Errors: unknown worker.
    pub async fn wait(&self, id: &str, timeout: Option<Duration>) -> Result<Waited> {
        let limit = timeout.unwrap_or(self.inner.config.default_wait).min(self.inner.config.max_wait);
        let mut status = self.inner.lock().entry(id)?.status.subscribe();
        let settled = tokio::time::timeout(limit, status.wait_for(|s| s.is_settled())).await.is_ok_and(|r| r.is_ok());
        let worker = self.get(id)?;
        Ok(Waited { settled: settled || worker.status.is_settled(), worker, waited_up_to: limit })
    }

    /// Stops the worker's run and its whole process tree, marking it killed.
    /// A settled worker is returned as it is. Errors: unknown worker; the run
    /// did not end within the hard deadline ([`Error::StopDeadline`]; it is
    /// marked killed all the same).
    pub async fn kill(&self, id: &str) -> Result<Worker> {
        let run = self.inner.lock().entry(id)?.run.take();
        if let Some(run) = run {
            self.stop_run(id, run, StopReason::Kill).await?;
        }
        self.get(id)
    }

    /// Kills every worker still queued or running, each within the hard deadline, and
    /// returns once their runs have ended: what a host does when it closes the run
    /// these workers belong to. Settled workers stay listed as they are.
    pub async fn shutdown(&self) {
        let runs: Vec<(String, RunHandle)> = {
            let mut state = self.inner.lock();
            state.entries.iter_mut().filter_map(|e| Some((e.worker.id.clone(), e.run.take()?))).collect()
        };
        let mut stops = tokio::task::JoinSet::new();
        for (id, run) in runs {
            let roster = self.clone();
            // Past the deadline the task is aborted, whose guards end the processes.
            stops.spawn(async move { roster.stop_run(&id, run, StopReason::Kill).await });
        }
        while stops.join_next().await.is_some() {}
    }

    /// One worker. Errors: unknown worker.
    pub fn get(&self, id: &str) -> Result<Worker> {
        Ok(snapshot(self.inner.lock().entry(id)?))
    }

    /// Every worker, in spawn order.
    pub fn list(&self) -> Vec<Worker> {
        self.inner.lock().entries.iter_mut().map(snapshot).collect()
    }

    /// Begins a new run of `entry`: a new generation, queued.
    fn start_run(&self, runtime: &tokio::runtime::Handle, entry: &mut Entry) {
        entry.generation += 1;
        entry.worker.runs += 1;
        entry.worker.status = Status::Queued;
        entry.worker.finished_at = None;
        entry.worker.last_activity = SystemTime::now();
        entry.finished = None;
        entry.status.send_replace(Status::Queued);
        let request = RunRequest {
            worker_id: entry.worker.id.clone(),
            label: entry.worker.label.clone(),
            tier: entry.worker.tier,
            brief: entry.worker.brief.clone(),
            run: entry.worker.runs,
        };
        let (stop, stop_rx) = oneshot::channel();
        let task = runtime.spawn(run_task(Arc::downgrade(&self.inner), entry.generation, request, stop_rx));
        entry.run = Some(RunHandle { stop: Some(stop), task });
    }

    /// Tells a run to stop and waits for its task, under the hard deadline.
    async fn stop_run(&self, id: &str, mut run: RunHandle, reason: StopReason) -> Result<()> {
        if let Some(stop) = run.stop.take() {
            let _ = stop.send(reason);
        }
        // The task itself gives the runner `stop_deadline`; this bounds the task.
        let deadline = self.inner.config.stop_deadline + Duration::from_secs(1);
        if tokio::time::timeout(deadline, &mut run.task).await.is_ok() {
            return Ok(());
        }
        // Aborting drops the runner's future, whose guards end its processes.
        run.task.abort();
        if reason == StopReason::Kill {
            let mut state = self.inner.lock();
            if let Ok(entry) = state.entry(id) {
                settle(entry, Status::Killed, None, Some("killed (the run did not confirm it stopped)".to_owned()));
            }
        }
        Err(Error::StopDeadline { id: id.to_owned(), deadline })
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for entry in &mut state.entries {
            if let Some(mut run) = entry.run.take()
                && let Some(stop) = run.stop.take()
            {
                let _ = stop.send(StopReason::Kill);
            }
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `f` to the worker if `generation` is still its current run.
    fn update(&self, id: &str, generation: u64, f: impl FnOnce(&mut Entry)) {
        let mut state = self.lock();
        if let Ok(entry) = state.entry(id)
            && entry.generation == generation
        {
            f(entry);
        }
    }
}

impl State {
    fn entry(&mut self, id: &str) -> Result<&mut Entry> {
        if let Some(i) = self.entries.iter().position(|e| e.worker.id == id) {
            return Ok(&mut self.entries[i]);
        }
        let known = self.entries.iter().map(|e| e.worker.id.as_str()).collect::<Vec<_>>();
        let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
        Err(Error::UnknownWorker { id: id.to_owned(), known })
    }
}

/// One run: queue, run, settle. Holds the roster only weakly, so a dropped
/// roster's runs are told to stop rather than kept alive.
async fn run_task(inner: Weak<Inner>, generation: u64, request: RunRequest, mut stop: oneshot::Receiver<StopReason>) {
    let id = request.worker_id.clone();
    let Some(slots) = inner.upgrade().map(|i| Arc::clone(&i.slots)) else { return };
    // Biased: a stop requested before the slot was granted wins.
    let permit = tokio::select! {
        biased;
        reason = &mut stop => {
            if reason.unwrap_or(StopReason::Kill) == StopReason::Kill
                && let Some(inner) = inner.upgrade()
            {
                inner.update(&id, generation, |e| settle(e, Status::Killed, None, Some("killed while queued".to_owned())));
            }
            return;
        }
        permit = slots.acquire_owned() => permit.ok(),
    };
    let (runner, config) = {
        let Some(strong) = inner.upgrade() else { return };
        strong.update(&id, generation, |e| {
            e.started = Some(Instant::now());
            e.worker.started_at = Some(SystemTime::now());
            e.worker.last_activity = SystemTime::now();
            e.worker.status = Status::Running;
            e.status.send_replace(Status::Running);
        });
        (Arc::clone(&strong.runner), strong.config.clone())
    };
    let activity = {
        let inner = inner.clone();
        let id = id.clone();
        Activity::new(move || {
            if let Some(inner) = inner.upgrade() {
                inner.update(&id, generation, |e| e.worker.last_activity = SystemTime::now());
            }
        })
    };
    let (control, trigger) = RunControl::new(activity);
    // Boxed, so dropping it below (past the stop deadline) really drops it.
    let mut run = runner.run(request, control);
    let timed_out = async {
        match config.run_timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let why = tokio::select! {
        outcome = &mut run => {
            drop(permit);
            if let Some(inner) = inner.upgrade() {
                inner.update(&id, generation, |e| match outcome {
                    RunOutcome::Done { output } => settle(e, Status::Done, Some(output), None),
                    RunOutcome::Failed { output, error } => settle(e, Status::Failed, Some(output), Some(error)),
                });
            }
            return;
        }
        reason = &mut stop => match reason.unwrap_or(StopReason::Kill) {
            StopReason::Kill => Some(Status::Killed),
            StopReason::Supersede => None,
        },
        () = timed_out => Some(Status::TimedOut),
    };
    trigger.stop();
    let stopped = tokio::time::timeout(config.stop_deadline, &mut run).await.ok();
    drop(run);
    drop(permit);
    let Some(status) = why else { return };
    let error = match (status, config.run_timeout) {
        (Status::TimedOut, Some(limit)) => format!("timed out after {} s", limit.as_secs_f64()),
        _ => "killed".to_owned(),
    };
    let error = match &stopped {
        None => format!("{error} (the run did not confirm it stopped; forced)"),
        // The runner says what it could not stop (processes that left the run's group and survived).
        Some(RunOutcome::Failed { error: run_error, .. }) if run_error.starts_with("stopped; ") => {
            format!("{error}{}", &run_error["stopped".len()..])
        }
        Some(_) => error,
    };
    if let Some(inner) = inner.upgrade() {
        inner.update(&id, generation, |e| settle(e, status, stopped.map(|o| o.output().to_owned()), Some(error)));
    }
}

/// Records how a run settled and wakes its waiters.
fn settle(entry: &mut Entry, status: Status, output: Option<String>, error: Option<String>) {
    let now = SystemTime::now();
    entry.finished = Some(Instant::now());
    entry.worker.status = status;
    entry.worker.finished_at = Some(now);
    entry.worker.last_activity = now;
    entry.worker.last_result = output.filter(|o| !o.is_empty());
    entry.worker.last_error = error;
    entry.status.send_replace(status);
}

fn snapshot(entry: &mut Entry) -> Worker {
    let mut worker = entry.worker.clone();
    worker.elapsed = match (entry.started, entry.finished) {
        (Some(started), Some(finished)) => finished.saturating_duration_since(started),
        (Some(started), None) => started.elapsed(),
        (None, _) => Duration::ZERO,
    };
    worker
}
