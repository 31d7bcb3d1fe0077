//! Progress of a running call: what a tool reports through its
//! [`CallContext`](crate::CallContext), and the pacing that turns those
//! reports into what a host is shown.
//!
//! A tool calls [`CallContext::progress`](crate::CallContext::progress)
//! whenever it has something a person would want to read (the last line a
//! cell printed, "waiting for the user's answer"); that is a no-op when the
//! caller gave no sink. The surface paces the reports for the host's
//! [`ProgressSink`] ([`Pacing`]): nothing in a call's first seconds, then the
//! latest report (or a plain heartbeat, "running, 12 s") at least every 2 s
//! and never more often than twice a second, and nothing once the
//! call's future has returned. This module knows nothing of MCP; `serve`
//! turns paced reports into `notifications/progress`.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

/// What a report says while a human is asked (`ask_user`, the permission
/// card); a host that shows the question on the same terminal can leave
/// these reports out rather than write over its prompt.
pub const WAITING_FOR_USER: &str = "waiting for the user's answer";

/// One progress report.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// What a person should read: "waiting for the user's answer".
    pub message: String,
    /// Work done so far, in the unit of `total` (files, percent), when known.
    pub progress: Option<f64>,
    /// The whole of the work, when known.
    pub total: Option<f64>,
}

impl Progress {
    /// A report with a message and no numbers.
    pub fn message(message: impl Into<String>) -> Progress {
        Progress { message: message.into(), progress: None, total: None }
    }
}

/// Where progress reports go: a callback, called on the task that runs the
/// call. It must not block (queue the report if sending it takes time).
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `report` with every report.
    pub fn new(report: impl Fn(Progress) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(Arc::new(report))
    }

    /// Hands one report to the sink.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress);
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// How the surface paces a call's reports for its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Nothing is reported before the call has run this long (default 2 s).
    pub first_after: Duration,
    /// At most one report per this interval (default 500 ms).
    pub min_interval: Duration,
    /// Without a new report from the tool, the latest one (or a heartbeat)
    /// is repeated with the time updated after this long (default 2 s, so a
    /// client whose request timeout is reset by progress stays alive even
    /// with a timeout of a few seconds; MCP hosts want one every 10 s at most).
    pub heartbeat: Duration,
}

impl Default for Pacing {
    fn default() -> Pacing {
        Pacing {
            first_after: Duration::from_secs(2),
            min_interval: Duration::from_millis(500),
            heartbeat: Duration::from_secs(2),
        }
    }
}

#[derive(Default)]
struct Latest {
    report: Option<Progress>,
    fresh: bool,
}

/// The tool-side end of one paced call.
pub(crate) struct Pacer {
    latest: Arc<Mutex<Latest>>,
    notify: Arc<Notify>,
}

impl Pacer {
    pub(crate) fn new() -> Pacer {
        Pacer { latest: Arc::default(), notify: Arc::new(Notify::new()) }
    }

    /// The sink a tool's [`CallContext`](crate::CallContext) gets: it keeps
    /// the latest report and wakes the pacing loop.
    pub(crate) fn tool_sink(&self) -> ProgressSink {
        let latest = self.latest.clone();
        let notify = self.notify.clone();
        ProgressSink::new(move |report| {
            let mut latest = latest.lock().unwrap_or_else(PoisonError::into_inner);
            latest.report = Some(report);
            latest.fresh = true;
            notify.notify_one();
        })
    }

    /// Runs `future` to its end, reporting to `host` as [`Pacing`] says.
    /// Nothing is reported once `future` has returned: the loop ends with it.
    pub(crate) async fn run<F: Future>(self, future: F, host: &ProgressSink, pacing: Pacing) -> F::Output {
        let start = Instant::now();
        let mut last: Option<Instant> = None;
        let mut future = std::pin::pin!(future);
        loop {
            let fresh = self.latest.lock().unwrap_or_else(PoisonError::into_inner).fresh;
            let next = match last {
                None => start + pacing.first_after,
                Some(at) if fresh => at + pacing.min_interval,
                Some(at) => at + pacing.heartbeat,
            };
            tokio::select! {
                biased;
                output = &mut future => return output,
                () = sleep_until(next) => {
                    let report = {
                        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
                        latest.fresh = false;
                        latest.report.clone()
                    };
                    host.report(compose(report, start.elapsed()));
                    last = Some(Instant::now());
                }
                () = self.notify.notified(), if !fresh => {}
            }
        }
    }
}

/// A report as the host sees it: the tool's message after the time the call
/// has run ("12 s: waiting for the user's answer"), or "running, 12 s".
fn compose(report: Option<Progress>, elapsed: Duration) -> Progress {
    let seconds = elapsed.as_secs();
    match report {
        None => Progress::message(format!("running, {seconds} s")),
        Some(report) => Progress { message: format!("{seconds} s: {}", report.message), ..report },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pacing() -> Pacing {
        Pacing {
            first_after: Duration::from_millis(200),
            min_interval: Duration::from_millis(100),
            heartbeat: Duration::from_millis(300),
        }
    }

    /// What a host saw, with when (since the test began).
    type Seen = Arc<Mutex<Vec<(Duration, Progress)>>>;

    fn collecting() -> (ProgressSink, Seen) {
        let seen: Seen = Arc::default();
        let start = Instant::now();
        let sink = {
            let seen = seen.clone();
            ProgressSink::new(move |p| seen.lock().unwrap().push((start.elapsed(), p)))
        };
        (sink, seen)
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_call_reports_nothing() {
        let (host, seen) = collecting();
        let pacer = Pacer::new();
        let tool = pacer.tool_sink();
        let out = pacer
            .run(
                async move {
                    tool.report(Progress::message("busy"));
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    7
                },
                &host,
                pacing(),
            )
            .await;
        assert_eq!(out, 7);
        assert!(seen.lock().unwrap().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_call_hears_heartbeats_then_the_tools_reports_rate_limited() {
        let (host, seen) = collecting();
        let pacer = Pacer::new();
        let tool = pacer.tool_sink();
        pacer
            .run(
                async move {
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    // A burst: only the last of these reaches the host, then
                    // again with each heartbeat (at 200, 500, 700, 1000, 1300, 1600 ms).
                    for i in 0..50 {
                        tool.report(Progress::message(format!("line {i}")));
                    }
                    tokio::time::sleep(Duration::from_millis(1000)).await;
                },
                &host,
                pacing(),
            )
            .await;
        let seen = seen.lock().unwrap();
        let messages: Vec<&str> = seen.iter().map(|(_, p)| p.message.as_str()).collect();
        assert_eq!(
            messages,
            ["running, 0 s", "running, 0 s", "0 s: line 49", "1 s: line 49", "1 s: line 49", "1 s: line 49"]
        );
        for pair in seen.windows(2) {
            assert!(pair[1].0 - pair[0].0 >= Duration::from_millis(100), "{seen:?}");
        }
        assert!(seen.iter().all(|(at, _)| *at <= Duration::from_millis(1700)));
    }
}
