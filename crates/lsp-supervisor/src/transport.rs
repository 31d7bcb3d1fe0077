//! JSON-RPC 2.0 over a language server's stdio, framed with `Content-Length`
//! headers (LSP "Base Protocol").
//!
//! One [`Connection`] per server process. A writer task owns stdin, a reader
//! task owns stdout and routes responses to their waiting request and
//! everything else (notifications, server-to-client requests) to the owner's
//! channel; a third task keeps the tail of stderr. When the process exits or
//! sends a frame that cannot be read, the connection dies: every pending
//! request fails at once with the exit status and the stderr tail, and so does
//! every later one.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};

/// Bytes of stderr kept for crash reports.
const STDERR_TAIL: usize = 4096;
/// Longest header line read from a server, in bytes (LSP headers are a few dozen).
pub(crate) const MAX_HEADER_LINE: usize = 8 * 1024;
/// The largest message read from a server: 64 MiB (67 108 864 bytes); the largest real
/// answers (a workspace's symbols, a big file's semantic tokens) take a few MB. Larger
/// ones are not read: the server is cut off as for a malformed frame (and restarted on
/// next use), so one answer cannot take this process's memory.
pub const MAX_MESSAGE: usize = 64 << 20;
/// The longest a server silent since a timeout has to answer a probe before
/// it counts as hung (the request's timeout when that is shorter).
pub const HUNG_PROBE: Duration = Duration::from_secs(3);
/// How long to wait for the exit status after stdout closed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Why a connection is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Death {
    /// What happened: "exited with status 3", "sent a malformed frame: …".
    pub what: String,
    /// The last lines the server wrote to stderr.
    pub stderr_tail: String,
}

/// A failed request.
#[derive(Debug, Clone)]
pub enum RequestError {
    /// No response within the timeout; a `$/cancelRequest` was sent.
    Timeout(Duration),
    /// The server is gone.
    Dead(Death),
    /// The server answered with an error object.
    Response { code: i64, message: String },
}

/// Something the server sent that is not a response.
#[derive(Debug)]
pub enum Incoming {
    Notification {
        method: String,
        params: Value,
    },
    /// A server-to-client request; answer it with [`Connection::respond`].
    Request {
        id: Value,
        method: String,
        params: Value,
    },
}

pub(crate) type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RequestError>>>>>;

/// The client end of one server process; clones share it.
#[derive(Debug, Clone)]
pub struct Connection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
    death: watch::Receiver<Option<Death>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Frames read from the server so far: any sign of life.
    heard: Arc<AtomicU64>,
    /// `heard` when a request last timed out (`u64::MAX`: none has).
    heard_at_timeout: Arc<AtomicU64>,
    /// Why the connection was cut from our side, for the death's report.
    cut_because: Arc<Mutex<Option<String>>>,
    /// The server's process, which leads its process group.
    pid: Option<u32>,
}

/// A request sent and not yet answered: dropped while armed, it is withdrawn
/// from the pending table and the server is sent `$/cancelRequest`
/// (LSP 3.17 "Cancellation Support"), so it can stop the work.
struct InFlight<'a> {
    conn: &'a Connection,
    id: i64,
    armed: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.armed {
            lock(&self.conn.pending).remove(&self.id);
            // Ids count up from 1: one past `i32::MAX` is never reached.
            let id = i32::try_from(self.id).map_or_else(
                |_| lsp_types::NumberOrString::String(self.id.to_string()),
                lsp_types::NumberOrString::Number,
            );
            self.conn.notify::<lsp_types::notification::Cancel>(lsp_types::CancelParams { id });
        }
    }
}

impl Connection {
    /// Takes over a spawned server's pipes. Notifications and server requests arrive on the returned receiver.
    pub fn start(child: &mut Child) -> Option<(Connection, mpsc::UnboundedReceiver<Incoming>)> {
        let stdin = child.stdin.take()?;
        let stdout = child.stdout.take()?;
        let stderr = child.stderr.take()?;
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let (death_tx, death_rx) = watch::channel(None);
        let pending: Pending = Arc::default();
        let tail: Arc<Mutex<VecDeque<u8>>> = Arc::default();
        let heard = Arc::new(AtomicU64::new(0));
        let cut_because: Arc<Mutex<Option<String>>> = Arc::default();
        tokio::spawn(write_loop(stdin, out_rx));
        let stderr_done = tokio::spawn(stderr_loop(stderr, Arc::clone(&tail)));
        let reader = Reader {
            incoming: in_tx,
            pending: Arc::clone(&pending),
            death: death_tx,
            tail: Arc::clone(&tail),
            stderr_done,
            pid: child.id(),
            heard: Arc::clone(&heard),
            cut_because: Arc::clone(&cut_because),
        };
        tokio::spawn(read_loop(stdout, reader));
        let connection = Connection {
            out: out_tx,
            pending,
            next_id: Arc::new(AtomicI64::new(1)),
            death: death_rx,
            stderr: tail,
            heard,
            heard_at_timeout: Arc::new(AtomicU64::new(u64::MAX)),
            cut_because,
            pid: child.id(),
        };
        Some((connection, in_rx))
    }

    /// Why the connection is gone, once it is.
    pub fn death(&self) -> Option<Death> {
        self.death.borrow().clone()
    }

    /// [`Connection::death`], waiting for it when the process has already exited (a
    /// zombie, or reaped) but the reader has not yet recorded why: a server that died
    /// between requests is then restarted, not sent the next request.
    pub async fn settled_death(&self) -> Option<Death> {
        if let Some(death) = self.death() {
            return Some(death);
        }
        let exited = self.pid.is_some_and(|pid| exit_status_of(pid).is_some());
        if !exited {
            return None;
        }
        let mut death = self.death.clone();
        // The reader records it within its grace for the exit status, once it reads the end of output.
        let _ = tokio::time::timeout(EXIT_GRACE * 4, death.wait_for(Option::is_some)).await;
        self.death()
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }

    /// Sends a request (its method and JSON params: the typed requests are
    /// [`crate::server::call`]'s) and waits for its response, at most `timeout`. One that
    /// times out sets off a probe in the background ([`Connection::kill_if_hung`]).
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RequestError> {
        let result = self.request_once(method, params, timeout).await;
        if let Err(RequestError::Timeout(_)) = &result {
            let conn = self.clone();
            tokio::spawn(async move { conn.kill_if_hung(timeout.min(HUNG_PROBE)).await });
        }
        result
    }

    async fn request_once(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RequestError> {
        if let Some(death) = self.death() {
            return Err(RequestError::Dead(death));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        // From here on, a request given up — timed out, or its future dropped
        // because the caller cancelled — is withdrawn: `$/cancelRequest`.
        let mut in_flight = InFlight { conn: self, id, armed: true };
        // The reader may have died between the check above and the insert.
        if let Some(death) = self.death() {
            in_flight.armed = false;
            lock(&self.pending).remove(&id);
            return Err(RequestError::Dead(death));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => {
                in_flight.armed = false;
                result
            }
            Ok(Err(_)) => {
                in_flight.armed = false;
                Err(RequestError::Dead(
                    self.death()
                        .unwrap_or_else(|| Death { what: "connection closed".into(), stderr_tail: self.stderr_tail() }),
                ))
            }
            Err(_) => {
                self.heard_at_timeout.store(self.heard.load(Ordering::SeqCst), Ordering::SeqCst);
                Err(RequestError::Timeout(timeout))
            }
        }
    }

    /// A server that let a request time out and has sent nothing at all
    /// since (no answer, notification or request) may be hung: it is asked a
    /// method no server has (JSON-RPC 2.0 says an unknown method is answered
    /// at once with "method not found"; not a `$/` one, whose answer
    /// tower-lsp-based servers drop). With no answer within `bound` either,
    /// its process group is killed, and the death says why. True when it was.
    pub async fn kill_if_hung(&self, bound: Duration) -> bool {
        let silent = || self.heard_at_timeout.load(Ordering::SeqCst) == self.heard.load(Ordering::SeqCst);
        if self.death().is_some() || !silent() {
            return false;
        }
        let answered = match self.request_once("agentTools/probe", Value::Null, bound).await {
            Ok(_) | Err(RequestError::Response { .. }) => true,
            Err(RequestError::Timeout(_) | RequestError::Dead(_)) => false,
        };
        if answered || self.death().is_some() {
            return false;
        }
        *lock(&self.cut_because) = Some(format!(
            "stopped answering: a request timed out, then a probe got no answer in {} ms, so it was killed",
            bound.as_millis()
        ));
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        let mut death = self.death.clone();
        let _ = tokio::time::timeout(Duration::from_secs(2), death.wait_for(Option::is_some)).await;
        true
    }

    /// Sends a notification of the protocol (nothing comes back).
    pub fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        match serde_json::to_value(params) {
            Ok(params) => self.send(&json!({ "jsonrpc": "2.0", "method": N::METHOD, "params": params })),
            // lsp-types' params always serialize (their maps are keyed by strings); said, not sent.
            Err(e) => tracing::error!(method = N::METHOD, error = %e, "a notification could not be written"),
        }
    }

    /// Answers a server-to-client request.
    pub fn respond(&self, id: Value, result: Result<Value, (i64, String)>) {
        let message = match result {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        };
        self.send(&message);
    }

    fn send(&self, message: &Value) {
        let body = message.to_string();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body.as_bytes());
        // A closed channel means the writer is gone with the process; the death is reported on read.
        let _ = self.out.send(frame);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let bytes: Vec<u8> = lock(tail).iter().copied().collect();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // Start at a line boundary when the buffer was cut.
    match (bytes.len() >= STDERR_TAIL, text.find('\n')) {
        (true, Some(at)) => text[at + 1..].trim_end().to_string(),
        _ => text.trim_end().to_string(),
    }
}

async fn write_loop(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(frame) = rx.recv().await {
        if stdin.write_all(&frame).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

async fn stderr_loop(stderr: ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut stderr = stderr;
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut tail = lock(&tail);
                tail.extend(&buf[..n]);
                while tail.len() > STDERR_TAIL {
                    tail.pop_front();
                }
            }
        }
    }
}

/// What the reader task holds.
struct Reader {
    incoming: mpsc::UnboundedSender<Incoming>,
    pending: Pending,
    death: watch::Sender<Option<Death>>,
    tail: Arc<Mutex<VecDeque<u8>>>,
    /// The stderr task, which ends when the server's stderr does.
    stderr_done: tokio::task::JoinHandle<()>,
    pid: Option<u32>,
    heard: Arc<AtomicU64>,
    cut_because: Arc<Mutex<Option<String>>>,
}

async fn read_loop(stdout: ChildStdout, reader: Reader) {
    let Reader { incoming, pending, death, tail, stderr_done, pid, heard, cut_because } = reader;
    let mut reader = BufReader::new(stdout);
    let what = loop {
        match read_frame(&mut reader).await {
            Ok(Some(message)) => {
                heard.fetch_add(1, Ordering::SeqCst);
                route(message, &incoming, &pending);
            }
            Ok(None) => break None,
            Err(malformed) => break Some(format!("sent a malformed frame ({malformed})")),
        }
    };
    let what = match what {
        Some(malformed) => {
            // A server we can no longer read is of no use; stop it so a restart is clean.
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            malformed
        }
        None => {
            // Give the process a moment to be reaped so the status can be reported.
            let status = match pid {
                Some(pid) => wait_status(pid).await,
                None => None,
            };
            let status = status.unwrap_or_else(|| "closed its output".to_string());
            // What it wrote to stderr before it went is read to the end (bounded: a child
            // it left behind may hold the pipe open), so the report carries its last words.
            let _ = tokio::time::timeout(EXIT_GRACE, stderr_done).await;
            match lock(&cut_because).take() {
                Some(why) => format!("{why} ({status})"),
                None => status,
            }
        }
    };
    let _ = death.send(Some(Death { what: what.clone(), stderr_tail: tail_text(&tail) }));
    let waiting: Vec<_> = lock(&pending).drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(RequestError::Dead(Death { what: what.clone(), stderr_tail: tail_text(&tail) })));
    }
}

/// "exited with status N" / "was killed by signal S", read from /proc while the
/// child is a zombie (its owner reaps it); `None` when it cannot be told in time.
async fn wait_status(pid: u32) -> Option<String> {
    let deadline = tokio::time::Instant::now() + EXIT_GRACE;
    loop {
        match exit_status_of(pid) {
            Some(status) => return Some(status),
            None if tokio::time::Instant::now() >= deadline => return None,
            None => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

fn exit_status_of(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    match stat {
        // Gone entirely: someone reaped it already.
        None => Some("exited".to_string()),
        Some(stat) => {
            let after = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = after.split_whitespace().collect();
            if fields.first() != Some(&"Z") {
                return None;
            }
            // Field 52 (exit_code), counted after the comm field: index 49.
            let code: i32 = fields.get(49)?.parse().ok()?;
            let signal = code & 0x7f;
            Some(if signal != 0 {
                format!("was killed by signal {signal}")
            } else {
                format!("exited with status {}", (code >> 8) & 0xff)
            })
        }
    }
}

pub(crate) fn route(message: Value, incoming: &mpsc::UnboundedSender<Incoming>, pending: &Pending) {
    let method = message.get("method").and_then(Value::as_str).map(str::to_string);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(method), Some(id)) if !id.is_null() => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let _ = incoming.send(Incoming::Request { id, method, params });
        }
        (Some(method), _) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let _ = incoming.send(Incoming::Notification { method, params });
        }
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(tx) = lock(pending).remove(&id) else { return };
            let result = match message.get("error") {
                Some(error) if !error.is_null() => Err(RequestError::Response {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error.get("message").and_then(Value::as_str).unwrap_or("").to_string(),
                }),
                _ => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(result);
        }
        (None, None) => tracing::debug!(%message, "ignoring a message with neither method nor id"),
    }
}

/// One frame's JSON body; `Ok(None)` at a clean end of stream.
///
/// A header line is at most [`MAX_HEADER_LINE`] bytes and a body at most [`MAX_MESSAGE`]
/// bytes; the body is read as it arrives, so a `Content-Length` that lies costs only the
/// bytes actually sent.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Result<Option<Value>, String> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    let mut saw_header = false;
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return if saw_header { Err("stream ended inside a header".into()) } else { Ok(None) };
        }
        if n == MAX_HEADER_LINE && line.last() != Some(&b'\n') {
            return Err(format!("a header line over {MAX_HEADER_LINE} bytes"));
        }
        saw_header = true;
        let header = String::from_utf8_lossy(&line);
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(format!("not a header: {:?}", cut(header)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse().map_err(|_| format!("bad Content-Length {:?}", cut(value.trim())))?);
        }
    }
    let length = length.ok_or("a header without Content-Length")?;
    if length > MAX_MESSAGE {
        return Err(format!(
            "a message of {} MB, over the limit of {} MB",
            length.div_ceil(1 << 20),
            MAX_MESSAGE >> 20
        ));
    }
    // Read as it arrives: a length that lies costs only the bytes actually sent.
    let mut body = Vec::with_capacity(length.min(1 << 20));
    (&mut *reader).take(length as u64).read_to_end(&mut body).await.map_err(|e| format!("reading a body: {e}"))?;
    if body.len() < length {
        return Err(format!("stream ended inside a body ({} of {length} bytes)", body.len()));
    }
    serde_json::from_slice(&body).map(Some).map_err(|e| format!("body is not JSON: {e}"))
}

fn cut(text: &str) -> String {
    text.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_read_and_garbage_is_an_error() {
        let input = b"Content-Length: 2\r\n\r\n{}Content-Length: abc\r\n\r\n".to_vec();
        let mut reader = BufReader::new(&input[..]);
        assert_eq!(read_frame(&mut reader).await, Ok(Some(json!({}))));
        assert_eq!(read_frame(&mut reader).await, Err("bad Content-Length \"abc\"".to_string()));
        let mut empty = BufReader::new(&b""[..]);
        assert_eq!(read_frame(&mut empty).await, Ok(None));
    }

    #[tokio::test]
    async fn a_message_over_the_limit_is_refused_before_it_is_read() {
        let input = format!("Content-Length: {}\r\n\r\n{{", 100 << 20).into_bytes();
        let mut reader = BufReader::new(&input[..]);
        assert_eq!(read_frame(&mut reader).await, Err("a message of 100 MB, over the limit of 64 MB".to_string()));
    }

    #[tokio::test]
    async fn a_lying_length_or_an_endless_header_is_refused_without_allocating_it() {
        let short = b"Content-Length: 40000000\r\n\r\n{}".to_vec();
        let mut reader = BufReader::new(&short[..]);
        assert_eq!(read_frame(&mut reader).await, Err("stream ended inside a body (2 of 40000000 bytes)".to_string()));

        let endless = vec![b'x'; MAX_HEADER_LINE * 3];
        let mut reader = BufReader::new(&endless[..]);
        assert_eq!(read_frame(&mut reader).await, Err("a header line over 8192 bytes".to_string()));
    }
}
