//! The runner trait: what one run of a worker is, and how it is stopped.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::watch;

use crate::worker::Tier;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs workers. The roster calls [`Runner::run`] once per run and drives the
/// future on its own task.
///
/// Contract: when `control.stop` fires, the run must end everything it started
/// and return promptly (the roster drops the future after its stop deadline,
/// so whatever the run owns must also clean up on drop). The outcome of a
/// stopped run is kept only for its partial output.
pub trait Runner: Send + Sync + 'static {
    /// Starts one run.
    fn run(&self, request: RunRequest, control: RunControl) -> BoxFuture<'static, RunOutcome>;
}

/// One run's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    /// The worker's id.
    pub worker_id: String,
    /// The worker's label.
    pub label: String,
    /// Which runner command does the work.
    pub tier: Tier,
    /// The whole brief, with every message sent so far.
    pub brief: String,
    /// Which run this is, from 1.
    pub run: u32,
}

/// How a run ended by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Success, with the run's output (the default runner: stdout).
    Done {
        /// What the run produced (the default runner: its stdout).
        output: String,
    },
    /// Failure, with any output and a description (the default runner: the
    /// exit status and the tail of stderr).
    Failed {
        /// What the run produced before it failed, possibly empty.
        output: String,
        /// What went wrong, in words.
        error: String,
    },
}

impl RunOutcome {
    /// The run's output.
    pub fn output(&self) -> &str {
        match self {
            RunOutcome::Done { output } | RunOutcome::Failed { output, .. } => output,
        }
    }
}

/// What the roster gives a run besides its request.
#[derive(Debug, Clone)]
pub struct RunControl {
    /// Fires when the run must stop.
    pub stop: StopSignal,
    /// Reports signs of life.
    pub activity: Activity,
}

impl RunControl {
    /// A control for driving a runner directly, with the trigger that stops it.
    pub fn new(activity: Activity) -> (RunControl, StopTrigger) {
        let (tx, rx) = watch::channel(false);
        (RunControl { stop: StopSignal { rx }, activity }, StopTrigger { tx })
    }
}

/// Fires when the run must stop (or when nobody can stop it any more).
#[derive(Debug, Clone)]
pub struct StopSignal {
    rx: watch::Receiver<bool>,
}

impl StopSignal {
    /// Resolves once stop is requested, or once the trigger is dropped.
    pub async fn stopped(&mut self) {
        let _ = self.rx.wait_for(|stop| *stop).await;
    }

    /// Whether stop has been requested.
    pub fn is_stopped(&self) -> bool {
        *self.rx.borrow()
    }
}

/// Stops the run whose [`StopSignal`] it was made with.
#[derive(Debug)]
pub struct StopTrigger {
    tx: watch::Sender<bool>,
}

impl StopTrigger {
    /// Requests the stop.
    pub fn stop(&self) {
        let _ = self.tx.send(true);
    }
}

/// A callback for signs of life (output, progress); the roster records the
/// time as the worker's last activity.
#[derive(Clone)]
pub struct Activity(Option<Arc<dyn Fn() + Send + Sync>>);

impl Activity {
    /// Calls `f` on every sign of life.
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> Activity {
        Activity(Some(Arc::new(f)))
    }

    /// Records nothing.
    pub fn none() -> Activity {
        Activity(None)
    }

    /// Reports a sign of life.
    pub fn touch(&self) {
        if let Some(f) = &self.0 {
            f();
        }
    }
}

impl fmt::Debug for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Activity(..)" } else { "Activity(none)" })
    }
}
