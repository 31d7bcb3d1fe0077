//! One row of the fault suite and what checks it: the context a row runs in
//! (its marker), its report of the four checks, and the helpers the rows share
//! to find what a fault left running (by pid, process group and marker).
//! `faults.rs` runs the table; each `faults_*.rs` holds its system's rows.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::{Duration, Instant};

use anyhow::Result;

/// One check's verdict: `Err` says what was wrong.
pub type Verdict = std::result::Result<(), String>;

/// What a row's run has to go by.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The row's own marker value (`AGENT_TOOLS_FAULT_ROW=<value>`).
    pub marker: String,
    /// Added to a call's budget before check 1 fails it.
    pub margin: Duration,
    /// Where the fixture binaries are.
    pub bin_dir: PathBuf,
}

/// The environment variable that marks every process a row starts.
pub const MARKER_VAR: &str = "AGENT_TOOLS_FAULT_ROW";

impl Ctx {
    /// `AGENT_TOOLS_FAULT_ROW=<marker>`, for a shell line or an env list.
    pub fn marker_env(&self) -> (String, String) {
        (MARKER_VAR.to_string(), self.marker.clone())
    }
}

pub type RowFuture = Pin<Box<dyn Future<Output = Result<Report>> + Send>>;

/// One row of the table.
pub struct Row {
    /// `language server`, `debug adapter`, `kernel`, `worker`.
    pub system: &'static str,
    pub fault: &'static str,
    /// The tool call that meets the fault.
    pub call: &'static str,
    /// What must come back.
    pub expected: &'static str,
    pub run: fn(Ctx) -> RowFuture,
}

/// What a row found.
#[derive(Debug, Default)]
pub struct Report {
    /// How long the faulty call took.
    pub elapsed: Duration,
    /// The call's budget (its timeout), to which the margin is added.
    pub budget: Duration,
    pub ends: Option<Verdict>,
    pub no_leftovers: Option<Verdict>,
    pub next_works: Option<Verdict>,
    pub status: Option<Verdict>,
    /// Processes of the fault found running (after the margin for them to go).
    pub leaked: BTreeSet<u32>,
}

impl Report {
    pub fn verdicts(&self) -> [&Option<Verdict>; 4] {
        [&self.ends, &self.no_leftovers, &self.next_works, &self.status]
    }

    pub fn passed(&self) -> bool {
        self.verdicts().iter().all(|v| matches!(v, Some(Ok(()))))
    }

    /// Check 1 from the call's time and what it returned.
    pub fn ended(&mut self, ctx: &Ctx, started: Instant, budget: Duration, what: Verdict) {
        self.elapsed = started.elapsed();
        self.budget = budget;
        let limit = budget + ctx.margin;
        self.ends = Some(if self.elapsed > limit {
            Err(format!("took {} ms, over its budget {} ms + margin", self.elapsed.as_millis(), budget.as_millis()))
        } else {
            what
        });
    }

    /// Check 2, after the call: `watched` processes (and their groups) and
    /// every process carrying the marker must be gone, except `healthy` ones.
    pub async fn leftovers_after_call(&mut self, ctx: &Ctx, watched: &Watched, healthy: &[u32]) {
        let found = settle(ctx, watched, healthy).await;
        self.record(found, "after the call");
    }

    /// Check 2 again once the row's resources are shut down: nothing left at all.
    pub async fn leftovers_after_shutdown(&mut self, ctx: &Ctx, watched: &Watched) {
        let found = settle(ctx, watched, &[]).await;
        self.record(found, "after shutdown");
    }

    fn record(&mut self, found: Vec<Leftover>, when: &str) {
        let verdict = if found.is_empty() {
            Ok(())
        } else {
            self.leaked.extend(found.iter().map(|l| l.pid));
            let shown: Vec<String> = found.iter().take(8).map(Leftover::describe).collect();
            let more = if found.len() > 8 { format!(" and {} more", found.len() - 8) } else { String::new() };
            Err(format!("{when}: {}{more}", shown.join(", ")))
        };
        self.no_leftovers = Some(match (self.no_leftovers.take(), verdict) {
            (Some(Err(first)), Err(second)) => Err(format!("{first}; {second}")),
            (Some(Err(first)), Ok(())) => Err(first),
            (_, verdict) => verdict,
        });
    }
}

/// Checks that `text` has every one of `needles`, and is an error or not as `error` says.
pub fn expect_text(is_error: bool, text: &str, error: bool, needles: &[&str]) -> Verdict {
    if text.trim().is_empty() {
        return Err("an empty answer".to_string());
    }
    if is_error != error {
        return Err(format!(
            "{} where {} was expected: {}",
            if is_error { "an error" } else { "a success" },
            if error { "an error" } else { "an answer" },
            cut(text)
        ));
    }
    match needles.iter().find(|n| !text.contains(**n)) {
        Some(missing) => Err(format!("no {missing:?} in: {}", cut(text))),
        None => Ok(()),
    }
}

/// Characters of a call's text quoted in a failed check.
const CUT: usize = 300;

/// The first [`CUT`] characters of a text, on one line.
pub fn cut(text: &str) -> String {
    let one: String = text.chars().take(CUT).collect::<String>().replace('\n', " ⏎ ");
    if text.chars().count() > CUT { format!("{one}…") } else { one }
}

/// The processes and process groups a row has seen.
#[derive(Debug, Default, Clone)]
pub struct Watched {
    pub pids: BTreeSet<u32>,
    pub groups: BTreeSet<u32>,
}

impl Watched {
    /// Watches a process and its process group (read now, while it runs).
    pub fn add(&mut self, pid: u32) {
        self.pids.insert(pid);
        if let Some(process) = read_process(pid) {
            self.groups.insert(process.pgid);
        }
    }
}

/// A process of the fault still running.
#[derive(Debug, Clone)]
pub struct Leftover {
    pub pid: u32,
    pub why: &'static str,
    pub comm: String,
}

impl Leftover {
    fn describe(&self) -> String {
        format!("pid {} ({}, {})", self.pid, self.comm, self.why)
    }
}

/// One process as `/proc` shows it.
#[derive(Debug, Clone)]
pub struct Process {
    pub pgid: u32,
    pub state: char,
    pub comm: String,
}

/// `/proc/<pid>/stat`: state and process group (zombies included).
pub fn read_process(pid: u32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(').map(|(_, c)| c.to_string()).unwrap_or_default();
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgid = fields.nth(1)?.parse().ok()?;
    Some(Process { pgid, state, comm })
}

/// This process's peak resident memory (`VmHWM`), in kB: a row that reads it before and
/// after its call bounds what the call made this process hold.
pub fn peak_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Whether a process runs (exists and is not a zombie).
pub fn running(pid: u32) -> bool {
    read_process(pid).is_some_and(|p| !matches!(p.state, 'Z' | 'X'))
}

fn carries(pid: u32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry))
}

/// The running processes of the fault now: watched pids, members of watched
/// groups, and carriers of the marker; `healthy` ones and this process excepted.
pub fn leftovers(ctx: &Ctx, watched: &Watched, healthy: &[u32]) -> Vec<Leftover> {
    let entry = format!("{MARKER_VAR}={}", ctx.marker).into_bytes();
    let me = std::process::id();
    let healthy_groups: BTreeSet<u32> = healthy.iter().filter_map(|&p| read_process(p)).map(|p| p.pgid).collect();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry_name in dir.flatten() {
        let Some(pid) = entry_name.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me || healthy.contains(&pid) {
            continue;
        }
        let Some(process) = read_process(pid) else { continue };
        if matches!(process.state, 'Z' | 'X') || healthy_groups.contains(&process.pgid) {
            continue;
        }
        let why = if watched.pids.contains(&pid) {
            "its pid"
        } else if watched.groups.contains(&process.pgid) {
            "its process group"
        } else if carries(pid, &entry) {
            "its marker"
        } else {
            continue;
        };
        found.push(Leftover { pid, why, comm: process.comm });
    }
    found
}

/// How long processes of a fault have to go once its call returned or its
/// resources were shut down (a SIGKILL is delivered asynchronously).
const SETTLE: Duration = Duration::from_secs(3);

/// Leftovers that are still there after [`SETTLE`].
async fn settle(ctx: &Ctx, watched: &Watched, healthy: &[u32]) -> Vec<Leftover> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let found = leftovers(ctx, watched, healthy);
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (at most `bound`) until `pid` no longer runs.
pub async fn wait_gone(pid: u32, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    while running(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// A temporary project directory, canonical.
pub fn project(files: &[(&str, &str)]) -> Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    for (name, text) in files {
        let path = root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok((dir, root))
}

/// Writes an executable shell script.
pub fn script(path: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}
