//! The shell around an adapter process: spawn it as the leader of its own
//! process group, connect a [`Client`] over its stdio or over the TCP port it
//! prints, keep the tail of its stderr, record its exit status, and kill the
//! whole group on demand or on drop.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::sync::watch;

use crate::adapter::{AdapterCommand, Transport};
use crate::error::{Error, Result};
use crate::transport::{Client, Diagnostics, EventSink};

/// Lines of adapter stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// A running adapter process (the leader of its own process group).
pub struct AdapterProcess {
    pid: u32,
    exited: watch::Receiver<bool>,
}

impl AdapterProcess {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGKILL to the whole group, then waits up to `grace` for the leader's exit to be recorded.
    pub async fn kill(&mut self, grace: Duration) {
        kill_group(self.pid);
        let _ = tokio::time::timeout(grace, self.exited.wait_for(|exited| *exited)).await;
    }
}

impl Drop for AdapterProcess {
    fn drop(&mut self) {
        // Members of the group may outlive its leader; the group goes either way.
        kill_group(self.pid);
    }
}

fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// SIGKILL to what is left of the process group a launched debuggee led, once
/// the debuggee itself is gone (it forked and exited, say). While a group has
/// members, no new process is given its id, so the group is the debuggee's.
pub fn kill_group_of_gone(pid: u32) {
    if std::fs::metadata(format!("/proc/{pid}")).is_err() {
        kill_group(pid);
    }
}

/// SIGKILL to one process (a launched debuggee that left the adapter's group).
pub fn kill_pid(pid: u32) {
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        let pid = Pid::from_raw(pid);
        // A debuggee that leads a process group of its own (debugpy's launcher starts it in
        // a new session) takes its children with it: a multiprocessing pool's workers.
        let leads_its_group = nix::unistd::getpgid(Some(pid)).is_ok_and(|group| group == pid)
            && nix::unistd::getpgid(None).is_ok_and(|ours| ours != pid);
        if leads_its_group {
            let _ = killpg(pid, Signal::SIGKILL);
        }
        let _ = kill(pid, Signal::SIGKILL);
    }
}

/// Whether a process is alive: it exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// How to start an adapter.
pub struct Spawn<'a> {
    pub name: &'a str,
    pub command: &'a AdapterCommand,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// `PATH` for the adapter, when set.
    pub path: Option<&'a std::ffi::OsStr>,
    /// How long a TCP adapter may take to print its port.
    pub start_timeout: Duration,
    /// Where the adapter runs (and the program it starts); `None` is the host.
    pub enclosure: Option<&'a enclosure::Enclosure>,
    /// The longest line of the adapter's stdout or stderr kept, in bytes (the session's
    /// output limit); the rest of a longer line is skipped as it arrives.
    pub line_limit: usize,
}

/// Starts the adapter and connects a client to it.
pub async fn start(spawn: Spawn<'_>, events: EventSink) -> Result<(AdapterProcess, Client)> {
    let spawn_error = |detail: String| Error::Spawn { adapter: spawn.name.to_owned(), detail };
    let mut plain = std::process::Command::new(&spawn.command.program);
    plain.args(&spawn.command.args).current_dir(spawn.cwd);
    if let Some(path) = spawn.path {
        plain.env("PATH", path);
    }
    for (key, value) in spawn.env {
        plain.env(key, value);
    }
    if let Some(enclosure) = spawn.enclosure {
        // A TCP adapter listens inside; a sandbox without network keeps us out.
        if spawn.command.transport == Transport::Tcp && enclosure.mode == enclosure::Mode::Bwrap && !enclosure.network {
            return Err(spawn_error(format!(
                "it is reached over TCP, which a bwrap sandbox without network shuts out ({}); set enclosure.network = true to debug with it",
                enclosure.describe()
            )));
        }
        if spawn.command.transport == Transport::Tcp && enclosure.looks_inside() {
            return Err(spawn_error(format!(
                "it is reached over TCP at an address inside the container, which the host cannot reach through {}; use a stdio adapter there",
                enclosure.describe()
            )));
        }
        plain = enclosure.enclose(&plain).map_err(|e| spawn_error(e.to_string()))?;
    }
    let mut command = tokio::process::Command::from(plain);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| spawn_error(format!("{}: {e}", spawn.command.program.display())))?;
    let pid = child.id().unwrap_or(0);
    let diagnostics = Arc::new(Diagnostics::default());
    diagnostics.has_process.store(true, std::sync::atomic::Ordering::Relaxed);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    if let Some(stderr) = stderr {
        // A TCP adapter (delve) runs the program with its own stdio: what the
        // program writes to stderr arrives here, and is output as well.
        let forward = (spawn.command.transport == Transport::Tcp).then(|| Arc::clone(&events));
        tokio::spawn(keep_tail(CappedLines::new(stderr, spawn.line_limit), Arc::clone(&diagnostics), forward));
    }
    let (exited_tx, exited) = watch::channel(false);
    let waiter_diagnostics = Arc::clone(&diagnostics);
    tokio::spawn(async move {
        let status = child.wait().await;
        let text = match status {
            Ok(status) => status.to_string(),
            Err(e) => format!("cannot wait for it: {e}"),
        };
        tracing::debug!(pid, status = %text, "debug adapter exited");
        if let Ok(mut slot) = waiter_diagnostics.status.lock() {
            *slot = Some(text);
        }
        // What it left in its group (a debuggee it started) may hold its pipes open, and the
        // session would never hear that it is gone: the group goes with its leader.
        kill_group(pid);
        let _ = exited_tx.send(true);
    });
    let mut process = AdapterProcess { pid, exited };
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        return Err(spawn_error("no stdio pipes".into()));
    };
    let client = match spawn.command.transport {
        Transport::Stdio => Client::start(stdout, stdin, events, diagnostics),
        Transport::Tcp => {
            let mut lines = CappedLines::new(stdout, spawn.line_limit);
            let address = tokio::time::timeout(spawn.start_timeout, async {
                while let Some(line) = lines.next().await {
                    tracing::debug!(%line, "adapter stdout");
                    if let Some(address) = listening_address(&line) {
                        return Some(address);
                    }
                }
                None
            })
            .await;
            let address = match address {
                Ok(Some(address)) => address,
                Ok(None) => {
                    process.kill(Duration::from_millis(500)).await;
                    let gone = diagnostics_text(&diagnostics);
                    return Err(spawn_error(format!("it exited before printing its address{gone}")));
                }
                Err(_) => {
                    process.kill(Duration::from_millis(500)).await;
                    return Err(spawn_error(format!(
                        "it printed no listening address within {} ms",
                        spawn.start_timeout.as_millis()
                    )));
                }
            };
            // What it prints from now on is the debuggee's stdout (delve before 1.21 has no
            // `outputMode: remote`): pass it on as output, and never let the pipe fill up.
            let forward = Arc::clone(&events);
            tokio::spawn(async move {
                while let Some(line) = lines.next().await {
                    let body = serde_json::json!({ "category": "stdout", "output": format!("{line}\n") });
                    forward(crate::protocol::Event { seq: 0, event: "output".to_owned(), body });
                }
            });
            drop(stdin);
            let stream = tokio::net::TcpStream::connect(&address)
                .await
                .map_err(|e| spawn_error(format!("cannot connect to {address}: {e}")))?;
            let _ = stream.set_nodelay(true);
            let (read, write) = stream.into_split();
            Client::start(read, write, events, diagnostics)
        }
    };
    Ok((process, client))
}

/// Connects to a DAP server already listening at `address` (a headless delve, a debuggee's own server).
pub async fn connect(address: &str, events: EventSink, timeout: Duration) -> Result<Client> {
    let stream = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(address))
        .await
        .map_err(|_| Error::Spawn { adapter: address.to_owned(), detail: "connection timed out".into() })?
        .map_err(|e| Error::Spawn { adapter: address.to_owned(), detail: format!("cannot connect: {e}") })?;
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    Ok(Client::start(read, write, events, Arc::default()))
}

fn diagnostics_text(diagnostics: &Diagnostics) -> String {
    let status = diagnostics.status.lock().ok().and_then(|s| s.clone()).unwrap_or_default();
    let tail = diagnostics.stderr_tail.lock().map(|t| t.trim().to_owned()).unwrap_or_default();
    let mut text = String::new();
    if !status.is_empty() {
        text.push_str(&format!(" ({status})"));
    }
    if !tail.is_empty() {
        text.push_str(&format!("; stderr: {tail}"));
    }
    text
}

/// The address a TCP adapter says it listens on: delve's `DAP server
/// listening at: 127.0.0.1:PORT` (the fixture adapter copies it), or, for an
/// adapter of the host's own, the first word of the line that is a socket
/// address (`127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`).
pub fn listening_address(line: &str) -> Option<String> {
    if let Some((_, rest)) = line.split_once("listening at:") {
        let address = rest.trim();
        return address.rsplit_once(':').filter(|(_, port)| port.parse::<u16>().is_ok()).map(|_| address.to_owned());
    }
    line.split_whitespace()
        .map(|word| word.trim_matches(|c: char| matches!(c, ',' | ';' | '"' | '\'' | '(' | ')' | '<' | '>')))
        .map(|word| word.strip_suffix('.').unwrap_or(word))
        .find(|word| {
            word.parse::<std::net::SocketAddr>().is_ok()
                || word.strip_prefix("localhost:").is_some_and(|port| port.parse::<u16>().is_ok())
        })
        .map(str::to_owned)
}

/// A child's pipe read a line at a time, each line at most `max` bytes. A longer line is
/// handed on at once, cut, ending with `[line cut at MAX bytes]`, and the rest of it is
/// skipped as it arrives, so a writer that never ends its line costs `max` bytes here.
pub(crate) struct CappedLines<R> {
    reader: BufReader<R>,
    max: usize,
    /// Inside a cut line: what comes up to its newline is skipped.
    skipping: bool,
}

impl<R: AsyncRead + Unpin> CappedLines<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        CappedLines { reader: BufReader::new(reader), max: max.max(1), skipping: false }
    }

    /// The next line without its line ending; `None` at the end of the pipe (or an error).
    pub(crate) async fn next(&mut self) -> Option<String> {
        let mut line = Vec::new();
        loop {
            let chunk = self.reader.fill_buf().await.unwrap_or_default();
            if chunk.is_empty() {
                self.skipping = false;
                return (!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned());
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(chunk.len());
            let through = take + usize::from(newline.is_some());
            if self.skipping {
                self.reader.consume(through);
                self.skipping = newline.is_none();
                continue;
            }
            let room = self.max - line.len();
            if take > room {
                line.extend_from_slice(&chunk[..room]);
                self.reader.consume(room);
                self.skipping = true;
                let mut text = String::from_utf8_lossy(&line).into_owned();
                text.push_str(&format!(" [line cut at {} bytes]", self.max));
                return Some(text);
            }
            line.extend_from_slice(&chunk[..take]);
            self.reader.consume(through);
            if newline.is_some() {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Some(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }
}

async fn keep_tail<R: AsyncRead + Unpin>(
    mut lines: CappedLines<R>,
    diagnostics: Arc<Diagnostics>,
    forward: Option<EventSink>,
) {
    let mut kept: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    while let Some(line) = lines.next().await {
        tracing::debug!(%line, "adapter stderr");
        if let Some(forward) = &forward {
            let body = serde_json::json!({ "category": "stderr", "output": format!("{line}\n") });
            forward(crate::protocol::Event { seq: 0, event: "output".to_owned(), body });
        }
        kept.push_back(line);
        if kept.len() > STDERR_LINES {
            kept.pop_front();
        }
        if let Ok(mut tail) = diagnostics.stderr_tail.lock() {
            *tail = kept.iter().map(String::as_str).collect::<Vec<_>>().join("\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_address_is_read_from_delves_banner() {
        assert_eq!(listening_address("DAP server listening at: 127.0.0.1:40123"), Some("127.0.0.1:40123".into()));
        assert_eq!(listening_address("DAP server listening at: [::1]:5"), Some("[::1]:5".into()));
        assert_eq!(listening_address("API server listening"), None);
        // Other adapters' wordings: the first word that is a socket address.
        assert_eq!(listening_address("Debug server listening at 127.0.0.1:8123"), Some("127.0.0.1:8123".into()));
        assert_eq!(listening_address("listening on [::1]:9000."), Some("[::1]:9000".into()));
        assert_eq!(listening_address("ready (localhost:4711)"), Some("localhost:4711".into()));
        assert_eq!(listening_address("version 1.2:3 at 12:30"), None);
    }

    async fn capped(input: &[u8], max: usize) -> Vec<String> {
        let mut lines = CappedLines::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next().await {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_cut_and_the_rest_of_it_skipped() {
        assert_eq!(capped(b"ab\r\n0123456789\ncd", 4).await, ["ab", "0123 [line cut at 4 bytes]", "cd"]);
        assert_eq!(capped(b"1234\n12345", 4).await, ["1234", "1234 [line cut at 4 bytes]"]);
        assert_eq!(capped(b"", 4).await, Vec::<String>::new());
    }

    /// A real child writes a gigabyte to stderr without a newline: the tail keeps the line's
    /// first bytes with the cut note, and this process's peak memory stays far under it.
    #[tokio::test]
    async fn an_adapter_writing_a_gigabyte_line_to_stderr_costs_its_line_limit() {
        let peak = || -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default().to_owned();
            line.split_whitespace().nth(1).and_then(|kb| kb.parse().ok()).unwrap_or(0)
        };
        let before = peak();
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "head -c 1073741824 /dev/zero | tr '\\0' x >&2; printf '\\ndone\\n' >&2"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("sh: {e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let diagnostics = Arc::new(Diagnostics::default());
        keep_tail(CappedLines::new(stderr, 64 * 1024), Arc::clone(&diagnostics), None).await;
        let _ = child.wait().await;
        let grown = peak().saturating_sub(before);
        let tail = diagnostics.stderr_tail.lock().map(|t| t.clone()).unwrap_or_default();
        let (line, done) = tail.split_once('\n').unwrap_or_default();
        assert_eq!(line.len(), 64 * 1024 + " [line cut at 65536 bytes]".len());
        assert!(line.ends_with("x [line cut at 65536 bytes]"), "{}", &line[line.len() - 40..]);
        assert_eq!(done, "done");
        assert!(grown < 64 * 1024, "peak memory grew by {grown} kB");
    }

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        assert!(alive(std::process::id()));
        assert!(!alive(u32::MAX - 1));
    }
}
