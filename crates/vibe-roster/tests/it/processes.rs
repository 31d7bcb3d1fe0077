//! The roster with the default runner and real child processes: results,
//! failures, waits that stop at their deadline, re-runs, and kills that leave
//! no process of the tree behind (checked by pid).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Error, Roster, RosterConfig, Spawn, Status, Tier};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A roster whose workers run `script` under `sh -c`, with `$DIR` set to `dir`.
fn roster(dir: &Path, script: &str, config: RosterConfig) -> Roster {
    let mut spec = CommandSpec::shell(script);
    spec.env.push(("DIR".to_owned(), dir.display().to_string()));
    let mut command = CommandConfig::same(spec);
    command.grace = Duration::from_millis(300);
    command.stderr_tail = 64;
    Roster::new(Arc::new(CommandRunner::new(command)), config)
}

fn quick() -> RosterConfig {
    RosterConfig { stop_deadline: Duration::from_secs(5), max_wait: Duration::from_secs(30), ..RosterConfig::default() }
}

fn spawn(roster: &Roster, brief: &str) -> Result<String, Error> {
    Ok(roster.spawn(Spawn { brief: brief.to_owned(), label: "test".to_owned(), tier: Tier::Fast })?.id)
}

/// Whether a process is running: it exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
    }
}

/// The pids a script wrote to `file`, once it has written `count` of them.
/// Readiness polling only; the verdicts are on what comes after.
async fn pids(file: &Path, count: usize) -> Result<Vec<i32>, Box<dyn std::error::Error>> {
    for _ in 0..500 {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if pids.len() >= count {
            return Ok(pids);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(format!("{} never listed {count} pids", file.display()).into())
}

fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

#[tokio::test]
async fn spawn_returns_at_once_and_wait_sees_the_result() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), "tr a-z A-Z", quick());
    let worker = roster.spawn(Spawn { brief: "hello worker".into(), label: "upper".into(), tier: Tier::Good })?;
    assert!(matches!(worker.status, Status::Queued | Status::Running));
    assert_eq!((worker.id.as_str(), worker.label.as_str(), worker.tier, worker.runs), ("w1", "upper", Tier::Good, 1));

    let waited = roster.wait(&worker.id, None).await?;
    assert!(waited.settled);
    assert_eq!(waited.worker.status, Status::Done);
    assert_eq!(waited.worker.last_result.as_deref(), Some("HELLO WORKER"));
    assert_eq!(waited.worker.last_error, None);
    assert!(waited.worker.finished_at.is_some() && waited.worker.started_at.is_some());

    let list = roster.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].status, Status::Done);
    assert_eq!(list[0].brief, "hello worker");
    Ok(())
}

#[tokio::test]
async fn the_table_lists_workers_in_spawn_order_with_their_tiers() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), "cat", quick());
    for (brief, tier) in [("one", Tier::Fast), ("two", Tier::Good), ("three", Tier::Fast)] {
        roster.spawn(Spawn { brief: brief.into(), label: String::new(), tier })?;
    }
    for id in ["w1", "w2", "w3"] {
        assert!(roster.wait(id, None).await?.settled);
    }
    let table: Vec<_> = roster.list().into_iter().map(|w| (w.id, w.label, w.tier, w.status, w.last_result)).collect();
    assert_eq!(
        table,
        vec![
            ("w1".into(), "w1".into(), Tier::Fast, Status::Done, Some("one".into())),
            ("w2".into(), "w2".into(), Tier::Good, Status::Done, Some("two".into())),
            ("w3".into(), "w3".into(), Tier::Fast, Status::Done, Some("three".into())),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn the_tier_picks_the_command() -> TestResult {
    let config = CommandConfig::new(
        CommandSpec::shell("echo fast:$VIBE_TIER"),
        CommandSpec::new("sh", ["-c", "echo good:$VIBE_TIER"]),
    );
    let roster = Roster::new(Arc::new(CommandRunner::new(config)), quick());
    let fast = roster.spawn(Spawn { brief: "x".into(), label: "a".into(), tier: Tier::Fast })?.id;
    let good = roster.spawn(Spawn { brief: "x".into(), label: "b".into(), tier: Tier::Good })?.id;
    assert_eq!(roster.wait(&fast, None).await?.worker.last_result.as_deref(), Some("fast:fast\n"));
    assert_eq!(roster.wait(&good, None).await?.worker.last_result.as_deref(), Some("good:good\n"));
    Ok(())
}

#[tokio::test]
async fn non_zero_exit_is_failed_with_the_stderr_tail() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = r#"echo partial; i=0; while [ $i -lt 50 ]; do echo "noise line $i" >&2; i=$((i+1)); done; echo "fatal: it broke" >&2; exit 3"#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "do it")?;
    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!(worker.status, Status::Failed);
    assert_eq!(worker.last_result.as_deref(), Some("partial\n"));
    let error = worker.last_error.unwrap_or_default();
    assert!(error.starts_with("exit status 3; stderr tail:\n"), "{error}");
    assert!(error.ends_with("fatal: it broke"), "{error}");
    // Only the tail (64 bytes here) is kept.
    assert!(!error.contains("noise line 0\n"), "{error}");
    Ok(())
}

#[tokio::test]
async fn a_command_that_cannot_start_is_failed() -> TestResult {
    let config = CommandConfig::same(CommandSpec::new("/nonexistent/agent-cli", ["-p"]));
    let roster = Roster::new(Arc::new(CommandRunner::new(config)), quick());
    let id = roster.spawn(Spawn { brief: "x".into(), label: "x".into(), tier: Tier::Fast })?.id;
    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!(worker.status, Status::Failed);
    let error = worker.last_error.unwrap_or_default();
    assert!(error.starts_with("cannot start `/nonexistent/agent-cli -p`"), "{error}");
    Ok(())
}

#[tokio::test]
async fn wait_returns_unsettled_at_its_timeout_and_the_worker_runs_on() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), r#"echo $$ > "$DIR/pid"; exec sleep 1000"#, quick());
    let id = spawn(&roster, "sleep")?;
    let waited = roster.wait(&id, Some(Duration::from_millis(200))).await?;
    assert!(!waited.settled);
    assert_eq!(waited.waited_up_to, Duration::from_millis(200));
    assert_eq!(waited.worker.status, Status::Running);
    let pid = pids(&path(dir.path(), "pid"), 1).await?[0];
    assert!(alive(pid), "the wait timing out does not stop the worker");
    assert_eq!(roster.kill(&id).await?.status, Status::Killed);
    assert!(!alive(pid));
    Ok(())
}

#[tokio::test]
async fn wait_is_cut_to_the_hard_deadline() -> TestResult {
    let dir = tempfile::tempdir()?;
    let config = RosterConfig { max_wait: Duration::from_millis(300), ..quick() };
    let roster = roster(dir.path(), "exec sleep 1000", config);
    let id = spawn(&roster, "sleep")?;
    // An hour is asked for; the hard deadline answers instead.
    let waited = roster.wait(&id, Some(Duration::from_secs(3600))).await?;
    assert!(!waited.settled);
    assert_eq!(waited.waited_up_to, Duration::from_millis(300));
    assert_eq!(waited.worker.status, Status::Running);
    roster.kill(&id).await?;
    Ok(())
}

#[tokio::test]
async fn kill_ends_a_tree_that_ignores_sigterm() -> TestResult {
    let dir = tempfile::tempdir()?;
    // The worker ignores SIGTERM, and so do its children (ignored signals are
    // inherited): a child shell with a sleeping grandchild, and a sleeping child.
    let script = r#"
        trap "" TERM
        echo $$ >> "$DIR/pids"
        sh -c 'echo $$ >> "$DIR/pids"; sleep 1000 & echo $! >> "$DIR/pids"; wait' &
        sleep 1000 &
        echo $! >> "$DIR/pids"
        wait
    "#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "stubborn")?;
    let pids = pids(&path(dir.path(), "pids"), 4).await?;
    assert!(pids.iter().all(|&pid| alive(pid)), "the tree is up: {pids:?}");

    let worker = roster.kill(&id).await?;
    assert_eq!(worker.status, Status::Killed);
    assert_eq!(worker.last_error.as_deref(), Some("killed"));
    let left: Vec<i32> = pids.into_iter().filter(|&pid| alive(pid)).collect();
    assert_eq!(left, Vec::<i32>::new(), "no process of the tree is left");
    assert!(roster.wait(&id, None).await?.settled);
    Ok(())
}

#[tokio::test]
async fn kill_ends_a_polite_worker_and_its_grandchildren() -> TestResult {
    let dir = tempfile::tempdir()?;
    // The leader exits on SIGTERM at once; its grandchild would linger if only
    // the leader were signalled, and it ignores SIGTERM itself.
    let script = r#"
        echo $$ >> "$DIR/pids"
        sh -c 'trap "" TERM; echo $$ >> "$DIR/pids"; while :; do sleep 1; done' &
        wait
    "#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "polite")?;
    let pids = pids(&path(dir.path(), "pids"), 2).await?;
    assert_eq!(roster.kill(&id).await?.status, Status::Killed);
    let left: Vec<i32> = pids.into_iter().filter(|&pid| alive(pid)).collect();
    assert_eq!(left, Vec::<i32>::new());
    Ok(())
}

#[tokio::test]
async fn kill_reaches_processes_that_left_the_group_with_setsid() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Two processes leave the group and the session (`setsid`), one of them a
    // grandchild; both keep the run's environment, which marks them as the run's.
    let script = r#"
        setsid sh -c 'echo $$ >> "$DIR/pids"; exec sleep 1000' &
        sh -c 'setsid sh -c "echo \$\$ >> $DIR/pids; exec sleep 1000" & wait' &
        echo $$ >> "$DIR/pids"
        wait
    "#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "daemons")?;
    let pids = pids(&path(dir.path(), "pids"), 3).await?;
    assert!(pids.iter().all(|&pid| alive(pid)), "the tree is up: {pids:?}");
    let worker = roster.kill(&id).await?;
    assert_eq!(worker.status, Status::Killed);
    assert_eq!(worker.last_error.as_deref(), Some("killed"));
    let left: Vec<i32> = pids.into_iter().filter(|&pid| alive(pid)).collect();
    assert_eq!(left, Vec::<i32>::new(), "no process of the run is left, in the group or out of it");
    Ok(())
}

#[tokio::test]
async fn a_daemon_left_by_a_finished_run_is_ended_too() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = r#"
        setsid sh -c 'echo $$ > "$DIR/pid"; exec sleep 1000' &
        while [ ! -s "$DIR/pid" ]; do sleep 0.01; done
        echo finished
    "#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "leave a daemon")?;
    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!(worker.status, Status::Done);
    let pid = pids(&path(dir.path(), "pid"), 1).await?[0];
    assert!(!alive(pid), "the daemon did not outlive the run");
    Ok(())
}

#[tokio::test]
async fn processes_left_behind_by_a_finished_run_are_ended() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = r#"sleep 1000 & echo $! > "$DIR/pid"; echo finished"#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "leave a child")?;
    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!(worker.status, Status::Done);
    assert_eq!(worker.last_result.as_deref(), Some("finished\n"));
    let pid = pids(&path(dir.path(), "pid"), 1).await?[0];
    assert!(!alive(pid), "the background child did not outlive the run");
    Ok(())
}

#[tokio::test]
async fn send_to_a_running_worker_stops_it_and_reruns_with_the_appended_brief() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Run 1 records its brief and pid, then hangs; run 2 answers with its brief.
    let script = r#"
        cat > "$DIR/brief.$VIBE_RUN"
        echo $$ > "$DIR/pid.$VIBE_RUN"
        if [ "$VIBE_RUN" = 1 ]; then trap "" TERM; sleep 1000; fi
        cat "$DIR/brief.$VIBE_RUN"
    "#;
    let roster = roster(dir.path(), script, quick());
    let id = spawn(&roster, "write the parser")?;
    let first = pids(&path(dir.path(), "pid.1"), 1).await?[0];
    assert_eq!(roster.get(&id)?.status, Status::Running);

    let worker = roster.send(&id, "and the tests").await?;
    assert_eq!(worker.runs, 2);
    assert!(matches!(worker.status, Status::Queued | Status::Running));
    assert!(!alive(first), "the first run was stopped before the re-run");

    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!(worker.status, Status::Done);
    assert_eq!(worker.brief, "write the parser\n\nand the tests");
    assert_eq!(worker.last_result.as_deref(), Some("write the parser\n\nand the tests"));
    assert_eq!(std::fs::read_to_string(path(dir.path(), "brief.1"))?, "write the parser");
    Ok(())
}

#[tokio::test]
async fn send_to_a_settled_worker_reruns_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), r#"cat; echo; echo "run $VIBE_RUN""#, quick());
    let id = spawn(&roster, "first")?;
    assert_eq!(roster.wait(&id, None).await?.worker.last_result.as_deref(), Some("first\nrun 1\n"));
    roster.send(&id, "second\n").await?;
    let worker = roster.wait(&id, None).await?.worker;
    assert_eq!((worker.status, worker.runs), (Status::Done, 2));
    assert_eq!(worker.last_result.as_deref(), Some("first\n\nsecond\n\nrun 2\n"));
    Ok(())
}

#[tokio::test]
async fn a_run_past_the_run_timeout_is_timed_out() -> TestResult {
    let dir = tempfile::tempdir()?;
    let config = RosterConfig { run_timeout: Some(Duration::from_millis(200)), ..quick() };
    let roster = roster(dir.path(), r#"echo $$ > "$DIR/pid"; echo started; exec sleep 1000"#, config);
    let id = spawn(&roster, "slow")?;
    let waited = roster.wait(&id, None).await?;
    assert!(waited.settled);
    assert_eq!(waited.worker.status, Status::TimedOut);
    assert_eq!(waited.worker.last_error.as_deref(), Some("timed out after 0.2 s"));
    assert_eq!(waited.worker.last_result.as_deref(), Some("started\n"));
    let pid = pids(&path(dir.path(), "pid"), 1).await?[0];
    assert!(!alive(pid));
    Ok(())
}

#[tokio::test]
async fn a_queued_worker_waits_for_a_slot_and_can_be_killed_before_it_starts() -> TestResult {
    let dir = tempfile::tempdir()?;
    let config = RosterConfig { max_running: 1, ..quick() };
    let roster = roster(dir.path(), r#"touch "$DIR/started.$VIBE_WORKER_ID"; exec sleep 1000"#, config);
    let first = spawn(&roster, "one")?;
    let second = spawn(&roster, "two")?;
    assert_eq!(roster.get(&second)?.status, Status::Queued);
    let killed = roster.kill(&second).await?;
    assert_eq!(killed.status, Status::Killed);
    assert_eq!(killed.last_error.as_deref(), Some("killed while queued"));
    roster.kill(&first).await?;
    assert!(!path(dir.path(), "started.w2").exists(), "the queued worker never started");
    Ok(())
}

#[tokio::test]
async fn kill_of_a_settled_worker_changes_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), "cat", quick());
    let id = spawn(&roster, "done soon")?;
    let done = roster.wait(&id, None).await?.worker;
    assert_eq!(roster.kill(&id).await?, done);
    Ok(())
}

#[tokio::test]
async fn unknown_workers_and_empty_briefs_are_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), "cat", quick());
    assert_eq!(roster.get("w9"), Err(Error::UnknownWorker { id: "w9".into(), known: "none".into() }));
    assert_eq!(spawn(&roster, "  "), Err(Error::Empty { what: "brief" }));
    let id = spawn(&roster, "x")?;
    assert_eq!(roster.kill("w7").await, Err(Error::UnknownWorker { id: "w7".into(), known: "w1".into() }));
    assert_eq!(roster.wait("w7", None).await.err(), Some(Error::UnknownWorker { id: "w7".into(), known: "w1".into() }));
    assert_eq!(roster.send(&id, " ").await, Err(Error::Empty { what: "message" }));
    Ok(())
}

#[tokio::test]
async fn dropping_the_roster_ends_its_workers() -> TestResult {
    let dir = tempfile::tempdir()?;
    let roster = roster(dir.path(), r#"trap "" TERM; echo $$ > "$DIR/pid"; sleep 1000"#, quick());
    spawn(&roster, "orphan?")?;
    let pid = pids(&path(dir.path(), "pid"), 1).await?[0];
    drop(roster);
    for _ in 0..250 {
        if !alive(pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid));
    Ok(())
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    let roster = roster(Path::new("/tmp"), "cat", quick());
    assert_eq!(spawn(&roster, "x"), Err(Error::NoRuntime));
}

/// What a host does when it closes the run these workers belong to: every running
/// worker's tree is gone when `shutdown` returns, and a settled worker is left as it was.
#[tokio::test]
async fn shutdown_ends_every_running_worker_before_it_returns() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = r#"
        read -r brief
        case "$brief" in
          done*) echo finished ;;
          *) trap "" TERM; echo $$ >> "$DIR/pids"; sleep 1000 & echo $! >> "$DIR/pids"; wait ;;
        esac
    "#;
    let roster = roster(dir.path(), script, quick());
    let finished = spawn(&roster, "done")?;
    assert!(roster.wait(&finished, None).await?.settled);
    let running = [spawn(&roster, "one")?, spawn(&roster, "two")?];
    let pids = pids(&path(dir.path(), "pids"), 4).await?;
    assert!(pids.iter().all(|&pid| alive(pid)), "both trees are up: {pids:?}");

    roster.shutdown().await;
    let left: Vec<i32> = pids.into_iter().filter(|&pid| alive(pid)).collect();
    assert_eq!(left, Vec::<i32>::new(), "no process of either tree is left");
    for id in &running {
        assert_eq!(roster.get(id)?.status, Status::Killed, "{id}");
    }
    assert_eq!(roster.get(&finished)?.status, Status::Done);
    Ok(())
}
