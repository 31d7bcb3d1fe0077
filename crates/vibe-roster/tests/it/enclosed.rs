//! Workers inside an enclosure: a worker's command runs in the real
//! bubblewrap (its writes outside the root fail), a kill leaves none of its
//! processes behind, a missing bwrap fails the run closed, and a prefix runs
//! every command.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use enclosure::Enclosure;
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig, Spawn, Status, Tier};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Whether bwrap works here; fails under `CI=true` when it does not.
fn bwrap_ready() -> bool {
    match Enclosure::bwrap("/").check() {
        Ok(()) => true,
        Err(error) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
            #[allow(clippy::print_stderr)]
            {
                eprintln!("SKIPPED: {error}");
            }
            false
        }
    }
}

fn roster(root: &Path, script: &str, enclosure: Enclosure, marker: &str) -> Roster {
    let mut spec = CommandSpec::shell(script);
    spec.cwd = Some(root.to_path_buf());
    spec.env.push(("ENCLOSURE_TEST_MARKER".to_owned(), marker.to_owned()));
    let mut command = CommandConfig::same(spec);
    command.grace = Duration::from_millis(300);
    command.enclosure = Some(enclosure);
    let config = RosterConfig {
        stop_deadline: Duration::from_secs(5),
        max_wait: Duration::from_secs(30),
        ..RosterConfig::default()
    };
    Roster::new(Arc::new(CommandRunner::new(command)), config)
}

fn spawn(roster: &Roster, brief: &str) -> Result<String, vibe_roster::Error> {
    Ok(roster.spawn(Spawn { brief: brief.to_owned(), label: "enclosed".to_owned(), tier: Tier::Fast })?.id)
}

fn canary(name: &str) -> Result<PathBuf, std::io::Error> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vibe-enclosure-canaries");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, "untouched")?;
    Ok(path)
}

/// Host pids of the processes whose environment holds `marker`.
fn carrying(marker: &str) -> Vec<i32> {
    let needle = format!("ENCLOSURE_TEST_MARKER={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = matches!(stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()), Some("Z" | "X"));
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            !zombie && environ.split(|b| *b == 0).any(|var| var == needle.as_bytes())
        })
        .collect()
}

#[tokio::test]
async fn a_worker_runs_in_bwrap_and_cannot_write_outside_the_root() -> TestResult {
    if !bwrap_ready() {
        return Ok(());
    }
    let root = tempfile::tempdir()?;
    let canary = canary("worker")?;
    let script = format!(
        "read brief; echo \"$brief\" > note.txt; echo changed > '{}' 2>/dev/null && echo escaped || echo refused; echo \"did: $brief\"",
        canary.display()
    );
    let roster = roster(root.path(), &script, Enclosure::bwrap(root.path()), "write");
    let id = spawn(&roster, "tidy up")?;
    let waited = roster.wait(&id, None).await?;
    assert_eq!(waited.worker.status, Status::Done, "{:?}", waited.worker.last_error);
    assert_eq!(waited.worker.last_result.as_deref(), Some("refused\ndid: tidy up\n"));
    assert_eq!(std::fs::read_to_string(root.path().join("note.txt"))?, "tidy up\n");
    assert_eq!(std::fs::read_to_string(&canary)?, "untouched");
    Ok(())
}

#[tokio::test]
async fn killing_an_enclosed_worker_leaves_none_of_its_processes() -> TestResult {
    if !bwrap_ready() {
        return Ok(());
    }
    let root = tempfile::tempdir()?;
    let marker = format!("kill-{}", std::process::id());
    let script = "sleep 300 & sleep 300 & echo started > started; wait";
    let roster = roster(root.path(), script, Enclosure::bwrap(root.path()), &marker);
    let id = spawn(&roster, "go")?;
    for _ in 0..500 {
        if root.path().join("started").exists() && carrying(&marker).len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = carrying(&marker);
    assert!(before.len() >= 3, "sh and two sleeps inside: {before:?}");
    let killed = roster.kill(&id).await?;
    assert_eq!(killed.status, Status::Killed, "{:?}", killed.last_error);
    assert_eq!(carrying(&marker), Vec::<i32>::new(), "before: {before:?}");
    Ok(())
}

#[tokio::test]
async fn a_missing_bwrap_fails_the_run_and_runs_nothing() -> TestResult {
    let root = tempfile::tempdir()?;
    let enclosure = Enclosure { bwrap: "/nonexistent/bwrap".into(), ..Enclosure::bwrap(root.path()) };
    let roster = roster(root.path(), "echo ran > ran.txt", enclosure, "missing");
    let id = spawn(&roster, "go")?;
    let waited = roster.wait(&id, None).await?;
    assert_eq!(waited.worker.status, Status::Failed);
    let error = waited.worker.last_error.unwrap_or_default();
    assert!(error.contains("the bwrap enclosure is not available here, so nothing was run"), "{error}");
    assert!(!root.path().join("ran.txt").exists());
    Ok(())
}

#[tokio::test]
async fn a_worker_runs_through_a_command_prefix() -> TestResult {
    let root = tempfile::tempdir()?;
    let wrapper = root.path().join("enter.sh");
    std::fs::write(&wrapper, "#!/bin/sh\nexport ENTERED=yes\nexec \"$@\"\n")?;
    std::process::Command::new("chmod").arg("+x").arg(&wrapper).status()?;
    let enclosure = Enclosure::command(root.path(), vec![wrapper.display().to_string()]);
    let roster = roster(root.path(), "read brief; echo \"$ENTERED $brief $VIBE_TIER\"", enclosure, "prefix");
    let id = spawn(&roster, "hello")?;
    let waited = roster.wait(&id, None).await?;
    assert_eq!(waited.worker.status, Status::Done, "{:?}", waited.worker.last_error);
    assert_eq!(waited.worker.last_result.as_deref(), Some("yes hello fast\n"));
    Ok(())
}
