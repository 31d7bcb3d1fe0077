//! Workers in real containers: podman under runc and under runsc (gVisor),
//! through `podman exec -i NAME` as the `command` enclosure. A worker runs on
//! the container's own `PATH` in the shared root; a killed worker leaves none
//! of its processes, neither inside the container (where killing the prefix's
//! client does not reach) nor on the host.

use std::sync::Arc;
use std::time::Duration;

use enclosure::engine::{Container, INSIDE_BIN, Runtime};
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig, Spawn, Status, Tier};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn roster(container: &Container, script: &str) -> Roster {
    let mut spec = CommandSpec::shell(script);
    spec.cwd = Some(container.root.clone());
    let mut command = CommandConfig::same(spec);
    command.grace = Duration::from_millis(300);
    command.enclosure = Some(container.enclosure());
    let config = RosterConfig {
        stop_deadline: Duration::from_secs(10),
        max_wait: Duration::from_secs(30),
        ..RosterConfig::default()
    };
    Roster::new(Arc::new(CommandRunner::new(command)), config)
}

fn spawn(roster: &Roster, brief: &str) -> Result<String, vibe_roster::Error> {
    Ok(roster.spawn(Spawn { brief: brief.to_owned(), label: "contained".to_owned(), tier: Tier::Fast })?.id)
}

async fn a_worker_runs_inside(runtime: Runtime) -> TestResult {
    let root = tempfile::tempdir()?;
    let Some(container) = Container::for_test(runtime, root.path()) else { return Ok(()) };
    let roster = roster(&container, "read brief; echo \"$brief\" > note.txt; command -v python3; echo \"did: $brief\"");
    let id = spawn(&roster, "tidy up")?;
    let waited = roster.wait(&id, None).await?;
    assert_eq!(waited.worker.status, Status::Done, "{:?}", waited.worker.last_error);
    assert_eq!(waited.worker.last_result, Some(format!("{INSIDE_BIN}/python3\ndid: tidy up\n")));
    assert_eq!(std::fs::read_to_string(root.path().join("note.txt"))?, "tidy up\n");
    Ok(())
}

async fn a_killed_worker_leaves_nothing_inside(runtime: Runtime) -> TestResult {
    let root = tempfile::tempdir()?;
    let Some(container) = Container::for_test(runtime, root.path()) else { return Ok(()) };
    // Sleeps of this runtime's own, so that the host check does not see the other
    // runtime's test, which runs beside this one (under runc the container's
    // processes are the host's too).
    let (a, b) = match runtime {
        Runtime::Runc => (301, 302),
        _ => (311, 312),
    };
    let roster = roster(&container, &format!("sleep {a} & sleep {b} & echo started > started; wait"));
    let id = spawn(&roster, "go")?;
    for _ in 0..500 {
        if root.path().join("started").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (sleep_a, sleep_b) = (format!("sleep {a}"), format!("sleep {b}"));
    let before = container.processes();
    assert!(before.contains(&sleep_a) && before.contains(&sleep_b), "{before:?}");
    let killed = roster.kill(&id).await?;
    assert_eq!(killed.status, Status::Killed, "{:?}", killed.last_error);
    let after = container.processes();
    assert!(after.iter().all(|p| *p != sleep_a && *p != sleep_b), "left inside: {after:?} (before: {before:?})");
    // Nor on the host.
    let host = std::process::Command::new("pgrep").args(["-f", &format!("^sleep ({a}|{b})$")]).output()?;
    assert_eq!(String::from_utf8_lossy(&host.stdout), "", "left on the host");
    Ok(())
}

#[tokio::test]
async fn a_worker_runs_in_a_runc_container() -> TestResult {
    a_worker_runs_inside(Runtime::Runc).await
}

#[tokio::test]
async fn a_worker_runs_in_a_gvisor_container() -> TestResult {
    a_worker_runs_inside(Runtime::Runsc).await
}

#[tokio::test]
async fn a_killed_worker_leaves_nothing_in_a_runc_container() -> TestResult {
    a_killed_worker_leaves_nothing_inside(Runtime::Runc).await
}

#[tokio::test]
async fn a_killed_worker_leaves_nothing_in_a_gvisor_container() -> TestResult {
    a_killed_worker_leaves_nothing_inside(Runtime::Runsc).await
}
