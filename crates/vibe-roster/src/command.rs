//! The default runner: a configured command per tier, one process group per run.
//!
//! Each run starts the tier's command as the leader of a new process group,
//! writes the brief to its stdin and closes it, and collects stdout (the
//! result) and the tail of stderr. Exit status 0 is done; anything else is
//! failed, described with the status and the stderr tail. When the leader
//! exits, anything it left running in its group is sent SIGKILL, so a run
//! never leaves processes behind.
//!
//! Stopping signals the whole group: SIGTERM, then SIGKILL once the grace has
//! passed if any member is still there. A child that ignores SIGTERM, and
//! grandchildren that stayed in the group, all end. A process that moved
//! itself to another group or session (`setsid`, a daemon) is found by the
//! run's token, an environment variable (`VIBE_RUN_TOKEN`) every descendant
//! inherits, and killed too (checked in `/proc`); one that cleared its
//! environment is out of reach, and a stop that leaves any process of the run
//! running says so with their pids instead of "stopped".

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use enclosure::Enclosure;
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::runner::{Activity, BoxFuture, RunControl, RunOutcome, RunRequest, Runner};
use crate::worker::Tier;

/// A program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandSpec {
    /// The program, looked up on `PATH` when it has no slash.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory; the current one when `None`.
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl CommandSpec {
    /// A program with arguments.
    pub fn new<I, S>(program: impl Into<String>, args: I) -> CommandSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CommandSpec {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            ..CommandSpec::default()
        }
    }

    /// A command line run by `sh -c`.
    pub fn shell(command_line: impl Into<String>) -> CommandSpec {
        CommandSpec::new("sh", ["-c".to_owned(), command_line.into()])
    }

    fn display(&self) -> String {
        std::iter::once(self.program.as_str()).chain(self.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    }
}

/// The default runner's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandConfig {
    /// The command for `fast` workers.
    pub fast: CommandSpec,
    /// The command for `good` workers.
    pub good: CommandSpec,
    /// How long a stopped group has between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// How much of stderr (bytes, from the end) a failure keeps.
    pub stderr_tail: usize,
    /// How much of stdout (bytes, from the start) a result keeps.
    pub output_limit: usize,
    /// Where each run's command runs; `None` is the host. An enclosure that
    /// is not available here fails the run (nothing runs unenclosed).
    pub enclosure: Option<Enclosure>,
}

impl CommandConfig {
    /// One command for both tiers, with default limits.
    pub fn same(spec: CommandSpec) -> CommandConfig {
        CommandConfig::new(spec.clone(), spec)
    }

    /// A command per tier, with default limits (grace 2 s, stderr tail 2 KiB,
    /// output 1 MiB).
    pub fn new(fast: CommandSpec, good: CommandSpec) -> CommandConfig {
        CommandConfig {
            fast,
            good,
            grace: Duration::from_secs(2),
            stderr_tail: 2048,
            output_limit: 1 << 20,
            enclosure: None,
        }
    }
}

/// Runs each worker as the tier's command in its own process group.
///
/// The command also sees `VIBE_WORKER_ID`, `VIBE_WORKER_LABEL`, `VIBE_TIER`
/// and `VIBE_RUN` in its environment.
#[derive(Debug, Clone)]
pub struct CommandRunner {
    config: CommandConfig,
}

impl CommandRunner {
    /// A runner with this configuration.
    pub fn new(config: CommandConfig) -> CommandRunner {
        CommandRunner { config }
    }

    /// Its configuration.
    pub fn config(&self) -> &CommandConfig {
        &self.config
    }
}

impl Runner for CommandRunner {
    fn run(&self, request: RunRequest, control: RunControl) -> BoxFuture<'static, RunOutcome> {
        let config = self.config.clone();
        Box::pin(run_command(config, request, control))
    }
}

async fn run_command(config: CommandConfig, request: RunRequest, control: RunControl) -> RunOutcome {
    let RunControl { mut stop, activity } = control;
    let spec = match request.tier {
        Tier::Fast => &config.fast,
        Tier::Good => &config.good,
    };
    let token = run_token();
    let mut plain = std::process::Command::new(&spec.program);
    plain
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env("VIBE_WORKER_ID", &request.worker_id)
        .env("VIBE_WORKER_LABEL", &request.label)
        .env("VIBE_TIER", request.tier.as_str())
        .env("VIBE_RUN", request.run.to_string())
        .env(TOKEN_VAR, &token);
    if let Some(cwd) = &spec.cwd {
        plain.current_dir(cwd);
    }
    // The token travels as one of the command's own variables, so a bwrap
    // sandbox (which clears the environment) and a prefix pass it on.
    let plain = match &config.enclosure {
        None => plain,
        Some(enclosure) => match enclosure.enclose(&plain) {
            Ok(enclosed) => enclosed,
            Err(e) => {
                return RunOutcome::Failed {
                    output: String::new(),
                    error: format!("cannot start `{}`: {e}", spec.display()),
                };
            }
        },
    };
    let mut command = Command::from(plain);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return RunOutcome::Failed {
                output: String::new(),
                error: format!("cannot start `{}`: {e}", spec.display()),
            };
        }
    };
    let Some(group) = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw) else {
        return RunOutcome::Failed {
            output: String::new(),
            error: "the command exited before it could be tracked".to_owned(),
        };
    };
    // From here on, dropping this future (the roster's stop deadline, or
    // shutdown) still ends the whole group.
    let mut guard = GroupGuard { group: Some(group) };

    if let Some(mut stdin) = child.stdin.take() {
        let brief = request.brief.into_bytes();
        // A command that never reads its stdin must not block the run.
        tokio::spawn(async move {
            let _ = stdin.write_all(&brief).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child.stdout.take().map(|s| tokio::spawn(read_head(s, config.output_limit, activity.clone())));
    let stderr = child.stderr.take().map(|s| tokio::spawn(read_tail(s, config.stderr_tail, activity.clone())));

    let exited = tokio::select! {
        status = child.wait() => status.ok(),
        () = stop.stopped() => None,
    };
    match exited {
        Some(_) => {
            // The leader is gone; end whatever it left in its group.
            let _ = killpg(group, Signal::SIGKILL);
            wait_group_gone(group, Duration::from_secs(2)).await;
        }
        None => terminate_group(group, &mut child, config.grace).await,
    }
    guard.group = None;
    // Processes of the run that left its group (`setsid`) still carry its token.
    let survivors = kill_by_token(&token).await;
    // Inside a prefix's container, what the run started outlives the prefix's client killed
    // here (under gVisor it is not even in this host's process table): ended inside.
    let inside = match config.enclosure.clone().filter(Enclosure::looks_inside) {
        None => None,
        Some(enclosure) => {
            let token = token.clone();
            let ended = tokio::task::spawn_blocking(move || enclosure.end_inside(TOKEN_VAR, &token)).await;
            match ended {
                Ok(Ok(0)) => None,
                Ok(Ok(left)) => Some(format!("{left} of its processes inside the enclosure could not be stopped")),
                Ok(Err(error)) => Some(format!("its processes inside the enclosure may still run: {error}")),
                Err(error) => Some(format!("its processes inside the enclosure may still run: {error}")),
            }
        }
    };
    let output = collect(stdout).await;
    let stderr = collect(stderr).await;
    let left = |what: String| {
        let what = match survivors.as_slice() {
            [] => what,
            pids => format!(
                "{what}; {} of the run could not be stopped and may still run: pid {}",
                if pids.len() == 1 { "1 process".to_owned() } else { format!("{} processes", pids.len()) },
                pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        match &inside {
            Some(inside) => format!("{what}; {inside}"),
            None => what,
        }
    };
    match exited {
        Some(status) if status.success() && survivors.is_empty() && inside.is_none() => RunOutcome::Done { output },
        Some(status) if status.success() => RunOutcome::Failed { output, error: left("done".to_owned()) },
        Some(status) => RunOutcome::Failed { output, error: left(describe_failure(status, &stderr)) },
        None => RunOutcome::Failed { output, error: left("stopped".to_owned()) },
    }
}

/// The variable that marks every process of one run (inherited by descendants).
pub const TOKEN_VAR: &str = "VIBE_RUN_TOKEN";

/// A token unique to one run in this host process.
fn run_token() -> String {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// The running processes (zombies aside) whose environment holds `TOKEN_VAR=token`.
fn carrying(token: &str) -> Vec<i32> {
    let wanted = format!("{TOKEN_VAR}={token}");
    let Ok(processes) = std::fs::read_dir("/proc") else { return Vec::new() };
    processes
        .flatten()
        .filter_map(|p| p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|entry| entry == wanted.as_bytes()))
        })
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        })
        .collect()
}

/// Kills every process still carrying the run's token, and returns those
/// that are still running afterwards (normally none).
async fn kill_by_token(token: &str) -> Vec<i32> {
    let found = carrying(token);
    if found.is_empty() {
        return found;
    }
    for &pid in &found {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = carrying(token);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// SIGTERM to the group; SIGKILL once `grace` has passed with any member left.
async fn terminate_group(group: Pid, child: &mut Child, grace: Duration) {
    let _ = killpg(group, Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    loop {
        // Reap the leader if it exited, so its zombie does not count as a member.
        let _ = child.try_wait();
        if !group_running(group) {
            return;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = killpg(group, Signal::SIGKILL);
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    wait_group_gone(group, Duration::from_secs(2)).await;
}

/// Waits (at most `bound`) until no member of the group is running, so that
/// a caller told "stopped" can rely on it. SIGKILL is delivered
/// asynchronously, so this is normally one or two polls.
async fn wait_group_gone(group: Pid, bound: Duration) {
    let deadline = Instant::now() + bound;
    while group_running(group) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether any member of the group is still running. A dead member stays a
/// zombie until its parent reaps it (for orphans, init, which need not reap
/// promptly), and signals still reach zombies, so where `/proc` is readable
/// the members' states decide; elsewhere any member counts as running.
fn group_running(group: Pid) -> bool {
    if killpg(group, None) == Err(Errno::ESRCH) {
        return false;
    }
    let Ok(processes) = std::fs::read_dir("/proc") else { return true };
    processes.flatten().any(|process| {
        let Ok(stat) = std::fs::read_to_string(process.path().join("stat")) else { return false };
        // After the command name in parentheses: state, ppid, pgrp, …
        let mut fields = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("").split_whitespace();
        let (state, pgrp) = (fields.next(), fields.nth(1));
        pgrp.and_then(|p| p.parse::<i32>().ok()) == Some(group.as_raw()) && !matches!(state, Some("Z" | "X") | None)
    })
}

/// Sends SIGKILL to the group when dropped armed.
struct GroupGuard {
    group: Option<Pid>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

/// The first `limit` bytes of a stream, read to its end in 8 KiB chunks: the rest is
/// counted and dropped as it arrives, so a worker that writes without end costs `limit`
/// bytes. A cut result ends with `[output cut at LIMIT bytes: N more bytes dropped]`.
async fn read_head<R: AsyncRead + Unpin>(mut stream: R, limit: usize, activity: Activity) -> String {
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        activity.touch();
        let room = limit.saturating_sub(kept.len()).min(n);
        kept.extend_from_slice(&buf[..room]);
        dropped += (n - room) as u64;
    }
    if dropped == 0 {
        return String::from_utf8_lossy(&kept).into_owned();
    }
    // A character the cut split in two is left out whole.
    if let Err(error) = std::str::from_utf8(&kept)
        && error.error_len().is_none()
    {
        dropped += (kept.len() - error.valid_up_to()) as u64;
        kept.truncate(error.valid_up_to());
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    text.push_str(&format!("\n[output cut at {} bytes: {dropped} more bytes dropped]", kept.len()));
    text
}

/// The last `limit` bytes of a stream, read to its end.
async fn read_tail<R: AsyncRead + Unpin>(mut stream: R, limit: usize, activity: Activity) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        activity.touch();
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > limit {
            kept.drain(..kept.len() - limit);
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// A reader's text; the group is dead by now, so its pipes close promptly,
/// but a process that escaped the group could hold one open: bounded.
async fn collect(reader: Option<JoinHandle<String>>) -> String {
    let Some(mut reader) = reader else { return String::new() };
    match tokio::time::timeout(Duration::from_secs(2), &mut reader).await {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => String::new(),
        Err(_) => {
            reader.abort();
            String::new()
        }
    }
}

fn describe_failure(status: ExitStatus, stderr: &str) -> String {
    let how = match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => status.to_string(),
    };
    let tail = stderr.trim_end();
    if tail.is_empty() { format!("{how} (stderr empty)") } else { format!("{how}; stderr tail:\n{tail}") }
}
