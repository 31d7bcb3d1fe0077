//! The roster's state machine with a scripted runner: no processes, the runner
//! does what each brief says.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use vibe_roster::{
    BoxFuture, Error, Roster, RosterConfig, RunControl, RunOutcome, RunRequest, Runner, Spawn, Status, Tier,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Reads its brief's last line as an instruction:
/// `ok TEXT` is done with TEXT; `fail TEXT` fails with TEXT;
/// `hang` runs until stopped; `deaf` ignores stop; `chatty` reports activity, then waits for `go`.
struct Scripted {
    go: Arc<Notify>,
}

impl Runner for Scripted {
    fn run(&self, request: RunRequest, control: RunControl) -> BoxFuture<'static, RunOutcome> {
        let go = Arc::clone(&self.go);
        Box::pin(async move {
            let RunControl { mut stop, activity } = control;
            let last = request.brief.lines().last().unwrap_or("").to_owned();
            let (verb, rest) = last.split_once(' ').unwrap_or((last.as_str(), ""));
            match verb {
                "ok" => RunOutcome::Done { output: format!("{rest} (run {})", request.run) },
                "fail" => RunOutcome::Failed { output: String::new(), error: rest.to_owned() },
                "hang" => {
                    stop.stopped().await;
                    RunOutcome::Failed { output: "partial".into(), error: "stopped".into() }
                }
                "deaf" => std::future::pending().await,
                "chatty" => {
                    activity.touch();
                    go.notified().await;
                    RunOutcome::Done { output: "talked".into() }
                }
                _ => RunOutcome::Failed { output: String::new(), error: format!("no script for {last:?}") },
            }
        })
    }
}

fn roster(config: RosterConfig) -> (Roster, Arc<Notify>) {
    let go = Arc::new(Notify::new());
    (Roster::new(Arc::new(Scripted { go: Arc::clone(&go) }), config), go)
}

fn spawn(roster: &Roster, brief: &str) -> Result<String, Error> {
    Ok(roster.spawn(Spawn { brief: brief.into(), label: "s".into(), tier: Tier::Fast })?.id)
}

/// Waits (bounded) until the worker has left the queue.
async fn running(roster: &Roster, id: &str) -> TestResult {
    for _ in 0..1000 {
        if roster.get(id)?.status != Status::Queued {
            return Ok(());
        }
        tokio::task::yield_now().await;
    }
    Err(format!("{id} never left the queue").into())
}

#[tokio::test]
async fn outcomes_become_statuses() -> TestResult {
    let (roster, _) = roster(RosterConfig::default());
    let ok = spawn(&roster, "ok all good")?;
    let fail = spawn(&roster, "fail no luck")?;
    let done = roster.wait(&ok, None).await?.worker;
    assert_eq!(
        (done.status, done.last_result.as_deref(), done.last_error.as_deref()),
        (Status::Done, Some("all good (run 1)"), None)
    );
    let failed = roster.wait(&fail, None).await?.worker;
    assert_eq!(
        (failed.status, failed.last_result.as_deref(), failed.last_error.as_deref()),
        (Status::Failed, None, Some("no luck"))
    );
    Ok(())
}

#[tokio::test]
async fn kill_keeps_partial_output_and_send_reruns_with_the_appended_brief() -> TestResult {
    let (roster, _) = roster(RosterConfig::default());
    let id = spawn(&roster, "hang")?;
    running(&roster, &id).await?;
    let killed = roster.kill(&id).await?;
    assert_eq!((killed.status, killed.last_result.as_deref()), (Status::Killed, Some("partial")));

    let sent = roster.send(&id, "ok better").await?;
    assert_eq!((sent.runs, sent.brief.as_str()), (2, "hang\n\nok better"));
    let done = roster.wait(&id, None).await?.worker;
    assert_eq!(
        (done.status, done.last_result.as_deref(), done.last_error),
        (Status::Done, Some("better (run 2)"), None)
    );
    Ok(())
}

#[tokio::test]
async fn a_run_that_ignores_stop_is_dropped_at_the_stop_deadline() -> TestResult {
    let (roster, _) = roster(RosterConfig { stop_deadline: Duration::from_millis(100), ..RosterConfig::default() });
    let id = spawn(&roster, "deaf")?;
    running(&roster, &id).await?;
    let killed = roster.kill(&id).await?;
    assert_eq!(killed.status, Status::Killed);
    assert_eq!(killed.last_error.as_deref(), Some("killed (the run did not confirm it stopped; forced)"));
    Ok(())
}

#[tokio::test]
async fn timed_out_runs_are_stopped() -> TestResult {
    let (roster, _) = roster(RosterConfig { run_timeout: Some(Duration::from_millis(50)), ..RosterConfig::default() });
    let id = spawn(&roster, "hang")?;
    let waited = roster.wait(&id, None).await?;
    assert!(waited.settled);
    assert_eq!(waited.worker.status, Status::TimedOut);
    Ok(())
}

#[tokio::test]
async fn activity_and_times_are_recorded() -> TestResult {
    let (roster, go) = roster(RosterConfig::default());
    let before = SystemTime::now();
    let id = spawn(&roster, "chatty")?;
    let waited = roster.wait(&id, Some(Duration::from_millis(50))).await?;
    assert!(!waited.settled);
    assert_eq!(waited.worker.status, Status::Running);
    assert!(waited.worker.last_activity >= before);
    assert!(waited.worker.started_at.is_some_and(|t| t >= before));
    assert_eq!(waited.worker.finished_at, None);
    go.notify_one();
    let done = roster.wait(&id, None).await?.worker;
    assert_eq!(done.status, Status::Done);
    assert!(done.finished_at >= done.started_at);
    Ok(())
}

#[tokio::test]
async fn runs_beyond_the_limit_are_queued_until_a_slot_frees() -> TestResult {
    let (roster, go) = roster(RosterConfig { max_running: 1, ..RosterConfig::default() });
    let first = spawn(&roster, "chatty")?;
    let second = spawn(&roster, "ok next")?;
    let waited = roster.wait(&second, Some(Duration::from_millis(50))).await?;
    assert_eq!((waited.settled, waited.worker.status), (false, Status::Queued));
    assert_eq!(roster.get(&first)?.status, Status::Running);
    go.notify_one();
    assert_eq!(roster.wait(&second, None).await?.worker.status, Status::Done);
    Ok(())
}

#[test]
fn tiers_and_statuses_have_their_names() {
    assert_eq!("good".parse::<Tier>(), Ok(Tier::Good));
    assert_eq!("fast".parse::<Tier>(), Ok(Tier::Fast));
    assert_eq!("best".parse::<Tier>(), Err(Error::UnknownTier { given: "best".into() }));
    let names: Vec<_> =
        [Status::Queued, Status::Running, Status::Done, Status::Failed, Status::Killed, Status::TimedOut]
            .iter()
            .map(|s| (s.as_str(), s.is_settled()))
            .collect();
    assert_eq!(
        names,
        [
            ("queued", false),
            ("running", false),
            ("done", true),
            ("failed", true),
            ("killed", true),
            ("timed out", true)
        ]
    );
}
