//! Bounded reads from real `sh` workers: a worker that writes a gigabyte without a
//! newline, or writes without end, has its result cut at the output limit with the figures
//! in it, and costs this process a bounded amount of memory (its peak resident size,
//! `VmHWM`, read before and after).

use std::sync::Arc;
use std::time::Duration;

use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig, Spawn, Status, Tier};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One gigabyte (1 GiB), in bytes.
const GIB: u64 = 1 << 30;

/// The most this process's peak resident memory may grow while a worker writes: far
/// under what it writes.
const GROWTH_KB: u64 = 64 * 1024;

/// The tests here measure one process's peak memory, so they run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// This process's peak resident memory (`VmHWM` in `/proc/self/status`), in kB.
fn peak_kb() -> Result<u64, Box<dyn std::error::Error>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("no VmHWM figure")?.parse()?)
}

fn roster(script: &str) -> Roster {
    let mut command = CommandConfig::same(CommandSpec::shell(script));
    command.grace = Duration::from_millis(300);
    let config = RosterConfig { max_wait: Duration::from_secs(120), ..RosterConfig::default() };
    Roster::new(Arc::new(CommandRunner::new(command)), config)
}

fn spawn(roster: &Roster) -> Result<String, vibe_roster::Error> {
    Ok(roster.spawn(Spawn { brief: "write".to_owned(), label: "writer".to_owned(), tier: Tier::Fast })?.id)
}

/// The `[output cut at N bytes: M more bytes dropped]` figures at the end of a result.
fn cut_figures(result: &str) -> Option<(u64, u64)> {
    let note = result.rsplit_once("\n[output cut at ")?.1;
    let (kept, rest) = note.split_once(" bytes: ")?;
    let dropped = rest.strip_suffix(" more bytes dropped]")?;
    Some((kept.parse().ok()?, dropped.parse().ok()?))
}

#[tokio::test]
async fn a_gigabyte_without_a_newline_is_cut_at_the_output_limit() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().await;
    let roster = roster("head -c 1073741824 /dev/zero | tr '\\0' x");
    let before = peak_kb()?;
    let id = spawn(&roster)?;
    let waited = roster.wait(&id, Some(Duration::from_secs(120))).await?;
    let grown = peak_kb()?.saturating_sub(before);
    assert_eq!(waited.worker.status, Status::Done, "{:?}", waited.worker.last_error);
    let result = waited.worker.last_result.unwrap_or_default();
    let limit = 1 << 20;
    assert_eq!(cut_figures(&result), Some((limit, GIB - limit)), "{}", &result[result.len().saturating_sub(80)..]);
    assert!(result.starts_with("xxxx") && result.len() < (1 << 20) + 100, "{} bytes", result.len());
    assert!(grown < GROWTH_KB, "peak memory grew by {grown} kB while the worker wrote 1 GiB");
    Ok(())
}

#[tokio::test]
async fn a_worker_that_writes_without_end_is_cut_and_killed() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().await;
    let roster = roster("yes x | tr -d '\\n'");
    let before = peak_kb()?;
    let id = spawn(&roster)?;
    let waited = roster.wait(&id, Some(Duration::from_secs(2))).await?;
    assert!(!waited.settled, "it writes on: {:?}", waited.worker.status);
    let killed = roster.kill(&id).await?;
    let grown = peak_kb()?.saturating_sub(before);
    assert_eq!(killed.status, Status::Killed);
    let result = killed.last_result.unwrap_or_default();
    let (kept, dropped) =
        cut_figures(&result).ok_or_else(|| format!("no cut note: …{}", &result[result.len() - 80..]))?;
    assert_eq!(kept, 1 << 20);
    assert!(dropped > 0, "{dropped} bytes dropped");
    assert!(grown < GROWTH_KB, "peak memory grew by {grown} kB while the worker wrote {} bytes", kept + dropped);
    Ok(())
}
