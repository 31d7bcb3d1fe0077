//! One running kernel process: its pipes, its reader tasks, and one cell's
//! run with the inactivity timer, the tool bridge and the interrupt/kill
//! ladder.

use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use command_fds::{CommandFdExt as _, FdMapping};
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStderr, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until, timeout};

use crate::output::{Collector, OutputObserver};
use crate::protocol::{
    HostFrame, KernelFrame, NODE_BOOTSTRAP, NODE_DRIVER, PYTHON_BOOTSTRAP, PYTHON_DRIVER, STDIO_SHIM,
};
use crate::scanner::{Piece, SyncScanner};
use crate::spawn::Launch;
use crate::{Error, Interpreter, KernelConfig, Language, Result, Spawner, StreamName, ToolBridge};

const STDERR_TAIL_BYTES: usize = 2_000;

pub(crate) enum Event {
    Frame(KernelFrame),
    BadFrame(String),
    /// A line of the frame pipe over [`MAX_FRAME_BYTES`], skipped unread: its bytes so
    /// far, and whether it has ended (the last report of that line).
    FrameSkipped {
        bytes: u64,
        ended: bool,
    },
    FramesClosed,
    Raw(StreamName, String),
    Sync(StreamName),
}

/// The kernel a cell ran in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// The kernel's language.
    pub language: Language,
    /// Interpreter version, e.g. `3.11.7` or `20.20.2`.
    pub version: String,
    /// The interpreter's executable as the kernel reported it when ready, else
    /// the program it was started with.
    pub executable: PathBuf,
    /// The pid of the process started on the host, the leader of the kernel's
    /// process group: the interpreter, or the enclosure's wrapper around it
    /// (bwrap, a prefix's client); 0 if unknown.
    pub pid: u32,
}

/// How a cell's run ended, before it is turned into a public result.
pub(crate) enum RunEnd {
    /// The driver reported the cell done: `ok`, `error` or `interrupted`.
    Done { status: String, interrupted: bool },
    /// The inactivity budget ran out and the kernel was killed.
    Killed,
    /// The kernel died on its own.
    Crashed { exit: String },
}

pub(crate) struct Process {
    pub(crate) info: KernelInfo,
    child: Child,
    pgid: Pid,
    writer: Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
    /// The frames travel on stdin and stdout (a command prefix); else on fds 3 and 4.
    over_stdio: bool,
    events: mpsc::Receiver<Event>,
    marker: String,
    next_id: u64,
    pub(crate) count: u32,
    syncs: [u64; 2],
    stderr_tail: String,
}

impl Process {
    pub(crate) async fn start(
        interpreter: &Interpreter,
        config: &KernelConfig,
        spawner: &dyn Spawner,
    ) -> Result<Process> {
        let language = interpreter.language;
        let (bootstrap, driver) = match language {
            Language::Python => (PYTHON_BOOTSTRAP, PYTHON_DRIVER),
            Language::JavaScript => (NODE_BOOTSTRAP, NODE_DRIVER),
        };
        let flag = match language {
            Language::Python => "-c",
            Language::JavaScript => "-e",
        };
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
            ("MPLBACKEND".into(), "Agg".into()),
            ("PYTHONIOENCODING".into(), "utf-8".into()),
            ("PYTHONUNBUFFERED".into(), "1".into()),
            ("NO_COLOR".into(), "1".into()),
        ];
        env.extend(config.env.iter().map(|(key, value)| (key.into(), value.into())));
        let over_stdio = spawner.frames_over_stdio();
        let launch = if over_stdio {
            env.push(("AGENT_TOOLS_KERNEL_FRAMES".into(), "stdio".into()));
            Launch {
                program: "sh".into(),
                args: vec![
                    "-c".into(),
                    STDIO_SHIM.into(),
                    interpreter.program.clone().into(),
                    flag.into(),
                    bootstrap.into(),
                ],
                cwd: config.root.clone(),
                env,
            }
        } else {
            Launch {
                program: interpreter.program.clone(),
                args: vec![flag.into(), bootstrap.into()],
                cwd: config.root.clone(),
                env,
            }
        };
        let mut command = spawner.command(&launch)?;
        let mut pipes = None;
        if over_stdio {
            command.stdin(Stdio::piped());
        } else {
            let (host_read, kernel_write) = std::io::pipe()?;
            let (kernel_read, host_write) = std::io::pipe()?;
            command
                .fd_mappings(vec![
                    FdMapping { parent_fd: OwnedFd::from(kernel_read), child_fd: 3 },
                    FdMapping { parent_fd: OwnedFd::from(kernel_write), child_fd: 4 },
                ])
                .map_err(|error| Error::Spawner(error.to_string()))?;
            command.stdin(Stdio::null());
            pipes = Some((host_read, host_write));
        }
        command.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut command = tokio::process::Command::from(command);
        command.kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            language,
            program: interpreter.program.clone(),
            source,
        })?;
        // The child holds its own copies of the pipe ends now; drop ours.
        drop(command);
        let pid = child.id().unwrap_or(0);
        let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or(0));
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let marker = format!("\u{1}kernel-sync-{pid}-{nanos:x}\u{1}\n");
        // Bounded: a cell that prints faster than its output is collected (a 1 GB print) waits
        // on its pipe, instead of this process holding what it printed.
        let (sender, events) = mpsc::channel(EVENTS_QUEUED);
        let mut writer: Box<dyn tokio::io::AsyncWrite + Send + Unpin> = match pipes {
            Some((host_read, host_write)) => {
                spawn_frame_reader(pipe::Receiver::from_owned_fd(OwnedFd::from(host_read))?, sender.clone());
                if let Some(stdout) = child.stdout.take() {
                    spawn_raw_reader(RawPipe::Out(stdout), StreamName::Stdout, &marker, sender.clone());
                }
                Box::new(pipe::Sender::from_owned_fd(OwnedFd::from(host_write))?)
            }
            None => {
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(Error::Spawner("the kernel's stdin or stdout was not piped".to_owned()));
                };
                spawn_frame_reader(stdout, sender.clone());
                Box::new(stdin)
            }
        };
        if let Some(stderr) = child.stderr.take() {
            spawn_raw_reader(RawPipe::Err(stderr), StreamName::Stderr, &marker, sender);
        }
        let mut line = serde_json::Value::String(driver.to_owned()).to_string();
        line.push('\n');
        writer.write_all(line.as_bytes()).await?;
        let mut process = Process {
            info: KernelInfo { language, version: String::new(), executable: interpreter.program.clone(), pid },
            child,
            pgid,
            writer,
            over_stdio,
            events,
            marker,
            next_id: 0,
            count: 0,
            syncs: [0, 0],
            stderr_tail: String::new(),
        };
        let deadline = Instant::now() + config.start_timeout;
        loop {
            let event = match timeout(deadline.saturating_duration_since(Instant::now()), process.events.recv()).await {
                Ok(event) => event,
                Err(_) => {
                    process.kill().await;
                    return Err(Error::StartTimeout { language, seconds: config.start_timeout.as_secs() });
                }
            };
            match event {
                Some(Event::Frame(KernelFrame::Ready { version, executable, .. })) => {
                    process.info.version = version;
                    if !executable.is_empty() {
                        process.info.executable = executable.into();
                    }
                    return Ok(process);
                }
                Some(Event::Raw(StreamName::Stderr, text)) => process.note_stderr(&text),
                Some(Event::FramesClosed) | None => {
                    let status = process.reap().await;
                    let mut tail = process.drain_stderr().await;
                    if !tail.is_empty() {
                        tail.insert_str(0, ": ");
                    }
                    return Err(Error::StartFailed { language, status, stderr_tail: tail });
                }
                Some(_) => {}
            }
        }
    }

    fn note_stderr(&mut self, text: &str) {
        self.stderr_tail.push_str(text);
        if self.stderr_tail.len() > STDERR_TAIL_BYTES * 2 {
            let mut cut = self.stderr_tail.len() - STDERR_TAIL_BYTES;
            while !self.stderr_tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.stderr_tail.drain(..cut);
        }
    }

    /// Stderr seen so far plus what arrives shortly after an exit.
    async fn drain_stderr(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(300);
        while let Ok(Some(event)) = timeout(until.saturating_duration_since(Instant::now()), self.events.recv()).await {
            if let Event::Raw(StreamName::Stderr, text) = event {
                self.note_stderr(&text);
            }
        }
        self.stderr_tail.trim().to_owned()
    }

    /// SIGINT to the process group; over stdio an `interrupt` frame instead:
    /// the process group there is the prefix's client (`docker exec`,
    /// `podman exec`), which drops the signal or, as podman's does, ends the
    /// exec session with it (a Go program catches SIGINT even when started with
    /// it ignored), taking the kernel down.
    async fn interrupt(&mut self) {
        if self.over_stdio {
            let _ = self.send(&HostFrame::Interrupt).await;
        } else {
            let _ = killpg(self.pgid, Signal::SIGINT);
        }
    }

    async fn send(&mut self, frame: &HostFrame<'_>) -> std::io::Result<()> {
        let mut line = serde_json::to_string(frame).map_err(std::io::Error::other)?;
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await
    }

    /// Runs one cell. Returns how it ended, and whether it was cancelled;
    /// the collector holds its outputs.
    ///
    /// `cancel` resolving (its sender dropped: the caller went away) starts
    /// the same interrupt → grace → kill ladder as the inactivity budget, at
    /// once; bridged calls still outstanding are aborted.
    pub(crate) async fn run(
        &mut self,
        code: &str,
        bridge: Option<&Arc<dyn ToolBridge>>,
        config: &KernelConfig,
        collector: &mut Collector,
        observer: Option<&OutputObserver>,
        cancel: &mut oneshot::Receiver<()>,
    ) -> (RunEnd, bool) {
        let mut cancelled = false;
        let end = self.run_cell(code, bridge, config, collector, observer, cancel, &mut cancelled).await;
        (end, cancelled)
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_cell(
        &mut self,
        code: &str,
        bridge: Option<&Arc<dyn ToolBridge>>,
        config: &KernelConfig,
        collector: &mut Collector,
        observer: Option<&OutputObserver>,
        cancel: &mut oneshot::Receiver<()>,
        cancelled: &mut bool,
    ) -> RunEnd {
        let observe = |name: StreamName, text: &str| {
            if let Some(observer) = observer {
                observer(name, text);
            }
        };
        self.next_id += 1;
        self.count += 1;
        let id = self.next_id;
        let marker = self.marker.clone();
        let frame = HostFrame::Exec { id, count: self.count, code, sync: &marker };
        if self.send(&frame).await.is_err() {
            return self.crashed(collector).await;
        }
        let target = self.next_id;
        let mut deadline = Instant::now() + config.inactivity_timeout;
        let mut interrupting = false;
        let mut done: Option<String> = None;
        let mut calls: FuturesUnordered<tokio::task::JoinHandle<(u64, Result<serde_json::Value, String>)>> =
            FuturesUnordered::new();
        loop {
            // Over stdio, fd 1 is fd 2: only stderr carries the marker.
            let [stdout_synced, stderr_synced] = self.syncs.map(|seen| seen >= target);
            if done.is_some() && (stdout_synced || self.over_stdio) && stderr_synced {
                break;
            }
            let wait_until =
                if calls.is_empty() || *cancelled { deadline } else { Instant::now() + Duration::from_secs(86_400) };
            tokio::select! {
                event = self.events.recv() => {
                    let Some(event) = event else { return self.crashed(collector).await };
                    if !interrupting {
                        deadline = Instant::now() + config.inactivity_timeout;
                    }
                    match event {
                        Event::Frame(frame) => match frame {
                            KernelFrame::Stream { name, text } => {
                                let name = if name == "stderr" { StreamName::Stderr } else { StreamName::Stdout };
                                observe(name, &text);
                                collector.stream(name, &text);
                            }
                            KernelFrame::Display { data } => collector.display(data, false),
                            KernelFrame::Result { data } => collector.display(data, true),
                            KernelFrame::Error { ename, evalue, traceback } => collector.error(ename, evalue, traceback),
                            KernelFrame::Tool { id: call_id, name, args } => match bridge {
                                Some(bridge) => {
                                    let future = bridge.call(name, args);
                                    calls.push(tokio::spawn(async move { (call_id, future.await) }));
                                }
                                None => {
                                    let reply = HostFrame::ToolReply {
                                        id: call_id,
                                        ok: false,
                                        value: None,
                                        error: Some("tool calls are not available in this kernel: no bridge is wired".to_owned()),
                                    };
                                    if self.send(&reply).await.is_err() {
                                        return self.crashed(collector).await;
                                    }
                                }
                            },
                            KernelFrame::Done { id: done_id, status } if done_id == id => done = Some(status),
                            KernelFrame::Done { .. } | KernelFrame::Ready { .. } => {}
                        },
                        Event::BadFrame(reason) => collector.stream(StreamName::Stderr, &format!("[kernel: unreadable frame dropped: {reason}]\n")),
                        Event::FrameSkipped { bytes, ended: true } => collector.frame_skipped(bytes, MAX_FRAME_BYTES),
                        Event::FrameSkipped { ended: false, .. } => {}
                        Event::FramesClosed => return self.crashed(collector).await,
                        Event::Raw(name, text) => {
                            if name == StreamName::Stderr {
                                self.note_stderr(&text);
                            }
                            observe(name, &text);
                            collector.stream(name, &text);
                        }
                        Event::Sync(name) => {
                            let slot = match name { StreamName::Stdout => 0, StreamName::Stderr => 1 };
                            self.syncs[slot] += 1;
                        }
                    }
                }
                _ = &mut *cancel, if !*cancelled => {
                    *cancelled = true;
                    for call in calls.iter() {
                        call.abort();
                    }
                    if !interrupting {
                        interrupting = true;
                        self.interrupt().await;
                        deadline = Instant::now() + config.interrupt_grace;
                    }
                }
                Some(joined) = calls.next(), if !calls.is_empty() => {
                    if !interrupting {
                        deadline = Instant::now() + config.inactivity_timeout;
                    }
                    let (call_id, outcome) = match joined {
                        Ok(pair) => pair,
                        Err(error) => (0, Err(format!("tool call failed: {error}"))),
                    };
                    let reply = match outcome {
                        Ok(value) => HostFrame::ToolReply { id: call_id, ok: true, value: Some(value), error: None },
                        Err(error) => HostFrame::ToolReply { id: call_id, ok: false, value: None, error: Some(error) },
                    };
                    if self.send(&reply).await.is_err() {
                        return self.crashed(collector).await;
                    }
                }
                () = sleep_until(wait_until) => {
                    if done.is_some() {
                        // The cell finished but a raw pipe never showed its
                        // marker (a cell closed fd 1, say): stop waiting.
                        break;
                    }
                    if interrupting {
                        self.kill().await;
                        return RunEnd::Killed;
                    }
                    interrupting = true;
                    self.interrupt().await;
                    deadline = Instant::now() + config.interrupt_grace;
                }
            }
        }
        let status = done.unwrap_or_default();
        RunEnd::Done { interrupted: interrupting || status == "interrupted", status }
    }

    async fn crashed(&mut self, collector: &mut Collector) -> RunEnd {
        let status = self.reap().await;
        let until = Instant::now() + Duration::from_millis(300);
        while let Ok(Some(event)) = timeout(until.saturating_duration_since(Instant::now()), self.events.recv()).await {
            match event {
                Event::Raw(name, text) => {
                    if name == StreamName::Stderr {
                        self.note_stderr(&text);
                    }
                    collector.stream(name, &text);
                }
                Event::Frame(KernelFrame::Stream { name, text }) => {
                    collector.stream(if name == "stderr" { StreamName::Stderr } else { StreamName::Stdout }, &text);
                }
                Event::FrameSkipped { bytes, ended: true } => collector.frame_skipped(bytes, MAX_FRAME_BYTES),
                _ => {}
            }
        }
        RunEnd::Crashed { exit: status }
    }

    /// Waits briefly for the process to exit, killing it if it lingers, and
    /// describes how it ended.
    async fn reap(&mut self) -> String {
        let status = match timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => {
                self.kill().await;
                None
            }
        };
        // The rest of the group (children the cell started) goes too.
        let _ = killpg(self.pgid, Signal::SIGKILL);
        status.map_or_else(|| "did not exit; killed".to_owned(), describe_exit)
    }

    /// Kills the whole process group and waits for the kernel to go.
    pub(crate) async fn kill(&mut self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
        let _ = self.child.start_kill();
        let _ = timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

pub(crate) fn describe_exit(status: ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned());
        return format!("killed by {name}");
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "unknown exit".to_owned(),
    }
}

/// Events (frames, or up to 64 KiB of raw output each) queued before the readers wait.
pub(crate) const EVENTS_QUEUED: usize = 64;

/// The longest frame read from a kernel: 16 MiB (16 777 216 bytes). The drivers send
/// stream text in pieces of at most 256 Ki characters (1.5 MiB even with every character
/// escaped), so only a display bundle's images come near it, and an image that large is
/// of no use to a model. A longer line is not read into memory: it is skipped as it
/// arrives, up to its newline, and the cell is told (a cell that writes to the frame pipe
/// itself, say), so this process never holds more of it than the limit.
pub(crate) const MAX_FRAME_BYTES: usize = 16 << 20;

/// Bytes read from the frame pipe at a time.
const FRAME_CHUNK: usize = 64 << 10;

/// One line of the frame pipe.
enum FrameLine {
    /// A line within [`MAX_FRAME_BYTES`], its newline left out.
    Line,
    /// A line over the limit, skipped: its length in bytes so far, and whether its
    /// newline (or the end of the pipe) has come.
    Skipped {
        bytes: u64,
        ended: bool,
    },
    End,
}

/// Reads one line into `line` (cleared first), a chunk at a time. A line over `max` bytes
/// is dropped from `line` and skipped to its newline; every `max` bytes skipped are
/// reported on the way (`ended: false`), so a writer that never ends its line still shows
/// signs of life, and the last report is `ended: true` with the line's whole length.
async fn read_frame_line<R>(reader: &mut R, line: &mut Vec<u8>, skipped: &mut Option<u64>, max: usize) -> FrameLine
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    if skipped.is_none() {
        line.clear();
    }
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(_) => &[],
        };
        if chunk.is_empty() {
            return match skipped.take() {
                Some(bytes) => FrameLine::Skipped { bytes, ended: true },
                None if line.is_empty() => FrameLine::End,
                None => FrameLine::Line,
            };
        }
        let (take, newline) = match memchr::memchr(b'\n', chunk) {
            Some(at) => (at, true),
            None => (chunk.len(), false),
        };
        if let Some(bytes) = skipped {
            let before = *bytes / max as u64;
            *bytes += take as u64;
            reader.consume(take + usize::from(newline));
            if newline {
                let bytes = *bytes;
                *skipped = None;
                return FrameLine::Skipped { bytes, ended: true };
            }
            if *bytes / max as u64 > before {
                return FrameLine::Skipped { bytes: *bytes, ended: false };
            }
            continue;
        }
        if line.len() + take > max {
            let bytes = (line.len() + take) as u64;
            line.clear();
            line.shrink_to(FRAME_CHUNK);
            reader.consume(take + usize::from(newline));
            if newline {
                return FrameLine::Skipped { bytes, ended: true };
            }
            *skipped = Some(bytes);
            return FrameLine::Skipped { bytes, ended: false };
        }
        line.extend_from_slice(&chunk[..take]);
        reader.consume(take + usize::from(newline));
        if newline {
            return FrameLine::Line;
        }
    }
}

/// Reads the driver's frames (one JSON object per line) from `reader` until it closes.
/// A line over [`MAX_FRAME_BYTES`] is skipped unread (see there) and reported as
/// [`Event::FrameSkipped`].
pub(crate) fn spawn_frame_reader<R>(reader: R, sender: mpsc::Sender<Event>)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(FRAME_CHUNK, reader);
        let mut line = Vec::new();
        let mut skipped = None;
        loop {
            let event = match read_frame_line(&mut lines, &mut line, &mut skipped, MAX_FRAME_BYTES).await {
                FrameLine::End => break,
                FrameLine::Skipped { bytes, ended } => Event::FrameSkipped { bytes, ended },
                FrameLine::Line => {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim();
                    if text.is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<KernelFrame>(text) {
                        Ok(frame) => Event::Frame(frame),
                        Err(error) => Event::BadFrame(error.to_string()),
                    }
                }
            };
            if sender.send(event).await.is_err() {
                return;
            }
        }
        let _ = sender.send(Event::FramesClosed).await;
    });
}

enum RawPipe {
    Out(ChildStdout),
    Err(ChildStderr),
}

fn spawn_raw_reader(mut pipe: RawPipe, name: StreamName, marker: &str, sender: mpsc::Sender<Event>) {
    let mut scanner = SyncScanner::new(marker);
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 65_536];
        loop {
            let read = match &mut pipe {
                RawPipe::Out(out) => out.read(&mut buffer).await,
                RawPipe::Err(err) => err.read(&mut buffer).await,
            };
            let count = match read {
                Ok(0) | Err(_) => break,
                Ok(count) => count,
            };
            for piece in scanner.push(&buffer[..count]) {
                let event = match piece {
                    Piece::Text(text) => Event::Raw(name, text),
                    Piece::Sync => Event::Sync(name),
                };
                if sender.send(event).await.is_err() {
                    return;
                }
            }
        }
        if let Some(rest) = scanner.finish() {
            let _ = sender.send(Event::Raw(name, rest)).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` read with a limit of `max` bytes, through a buffer of `chunk`
    /// bytes; a report on the way through a skipped line ends with `…`.
    async fn lines(input: &[u8], max: usize, chunk: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(chunk, input);
        let (mut line, mut skipped, mut out) = (Vec::new(), None, Vec::new());
        loop {
            match read_frame_line(&mut reader, &mut line, &mut skipped, max).await {
                FrameLine::End => return out,
                FrameLine::Line => out.push(String::from_utf8_lossy(&line).into_owned()),
                FrameLine::Skipped { bytes, ended } => {
                    out.push(format!("skipped {bytes}{}", if ended { "" } else { "…" }))
                }
            }
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_skipped_to_its_newline_and_the_next_is_read() {
        for chunk in [1, 3, 64] {
            let read = lines(b"ab\n0123456789\ncd", 8, chunk).await;
            let ended: Vec<&String> = read.iter().filter(|line| !line.ends_with('…')).collect();
            assert_eq!(ended, ["ab", "skipped 10", "cd"], "chunk {chunk}");
            assert_eq!(lines(b"12345678\n", 8, chunk).await, ["12345678"], "chunk {chunk}");
        }
        // Skipping reports every `max` bytes on the way, then the line's whole length.
        assert_eq!(lines(&[b'x'; 20], 8, 4).await, ["skipped 12…", "skipped 16…", "skipped 20"]);
        assert_eq!(lines(b"0123456789abcdefghij\n{}\n", 8, 64).await, ["skipped 20", "{}"]);
    }

    /// The reader's memory stays near its limit while a line goes on without end.
    #[tokio::test]
    async fn an_endless_line_is_skipped_in_chunks() {
        let (mut writer, reader) = tokio::io::duplex(1 << 16);
        let (sender, mut events) = mpsc::channel(EVENTS_QUEUED);
        spawn_frame_reader(reader, sender);
        let total: u64 = 40 * MAX_FRAME_BYTES as u64;
        let feed = tokio::spawn(async move {
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..total / chunk.len() as u64 {
                writer.write_all(&chunk).await?;
            }
            writer.write_all(b"\n{\"t\":\"done\",\"id\":1,\"status\":\"ok\"}\n").await?;
            std::io::Result::Ok(())
        });
        let mut reports = 0;
        let skipped = loop {
            match events.recv().await {
                Some(Event::FrameSkipped { ended: false, .. }) => reports += 1,
                Some(Event::FrameSkipped { bytes, ended: true }) => break bytes,
                Some(_) => panic!("an event before the skip ended"),
                None => panic!("the reader ended early"),
            }
        };
        assert!(feed.await.is_ok_and(|written| written.is_ok()));
        assert_eq!(skipped, total);
        assert_eq!(reports, 40);
        assert!(matches!(events.recv().await, Some(Event::Frame(KernelFrame::Done { id: 1, .. }))));
    }
}
