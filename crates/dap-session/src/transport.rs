//! A DAP client over any byte stream: stdio pipes of a child, or a TCP
//! connection. Requests are matched to responses by `seq`; events go to one
//! callback; requests from the adapter (reverse requests) are answered here,
//! at once, so they never stall the session.
//!
//! This client never spawns or kills anything: process handling is
//! `process.rs`'s, the meaning of events is `state.rs`'s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::protocol::{Event, FrameError, Message, Request, Response, read_message, write_message};

/// Called with every event, on the reader task; must return quickly.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// How the link to the adapter ended, filled in by whoever owns the process.
#[derive(Debug, Default)]
pub struct Diagnostics {
    /// The adapter's exit status, once known (`exit status: 1`, `signal: 9`).
    pub status: Mutex<Option<String>>,
    /// The last lines the adapter wrote on stderr.
    pub stderr_tail: Mutex<String>,
    /// Set when this crate started the adapter's process, whose exit status
    /// `status` will then get: the end of the connection waits (briefly) for it.
    pub has_process: std::sync::atomic::AtomicBool,
    /// What came from the adapter so far, for an error that says what a silent or strange peer sent.
    pub received: Mutex<Received>,
}

/// What came over a connection: bytes read, and the first messages by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Received {
    /// Bytes read from the adapter, framing included.
    pub bytes: u64,
    /// How many whole messages were read.
    pub messages: usize,
    /// The first [`Received::KEPT`] messages, each as `output event`, `initialize response`, `runInTerminal request`.
    pub first: Vec<String>,
}

impl Received {
    /// Messages named in `first`.
    pub const KEPT: usize = 12;

    fn note(&mut self, kind: String) {
        self.messages += 1;
        if self.first.len() < Received::KEPT {
            self.first.push(kind);
        }
    }
}

impl Diagnostics {
    fn gone(&self, reason: &str) -> Error {
        let status = self.status.lock().ok().and_then(|s| s.clone()).unwrap_or_else(|| reason.to_owned());
        let tail = self.stderr_tail.lock().map(|t| t.trim().to_owned()).unwrap_or_default();
        let stderr_tail = if tail.is_empty() { String::new() } else { format!("; its stderr ends with:\n{tail}") };
        Error::AdapterGone { status, stderr_tail }
    }
}

struct Pending {
    waiting: HashMap<u64, oneshot::Sender<Response>>,
    /// Why the reader stopped; set once, after which every request fails at once.
    closed: Option<String>,
}

struct Inner {
    writer: tokio::sync::Mutex<Writer>,
    seq: AtomicU64,
    pending: Mutex<Pending>,
    diagnostics: Arc<Diagnostics>,
}

/// One DAP connection. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// A request that has been sent and whose response has not been awaited yet
/// (`launch`, which debugpy answers only after `configurationDone`).
pub struct PendingReply {
    command: String,
    receiver: oneshot::Receiver<Response>,
    inner: Arc<Inner>,
}

/// The answer to a reverse request this client does not serve.
pub fn refusal(command: &str) -> String {
    use dap_types::requests::{Request as _, RunInTerminal, StartDebugging};
    match command {
        RunInTerminal::COMMAND => {
            "runInTerminal is not supported: this client has no terminal; launch the program from the adapter (console: internalConsole)".to_owned()
        }
        StartDebugging::COMMAND => {
            "startDebugging is not supported: this client runs one debug session per conversation".to_owned()
        }
        other => format!("{other} is not supported by this client"),
    }
}

impl Client {
    /// Starts the reader task on `reader`; `events` receives every event.
    pub fn start<R, W>(reader: R, writer: W, events: EventSink, diagnostics: Arc<Diagnostics>) -> Client
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let inner = Arc::new(Inner {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            seq: AtomicU64::new(1),
            pending: Mutex::new(Pending { waiting: HashMap::new(), closed: None }),
            diagnostics,
        });
        let reader = Counted { inner: reader, diagnostics: Arc::clone(&inner.diagnostics) };
        tokio::spawn(read_loop(BufReader::new(reader), Arc::clone(&inner), events));
        Client { inner }
    }

    /// What has come from the adapter so far.
    pub fn received(&self) -> Received {
        self.inner.diagnostics.received.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Whether the connection has ended, and why.
    pub fn closed(&self) -> Option<String> {
        self.inner.pending.lock().ok().and_then(|p| p.closed.clone())
    }

    /// Sends a request without waiting for its response.
    pub async fn send(&self, command: &str, arguments: Value) -> Result<PendingReply> {
        let seq = self.inner.seq.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        {
            let mut pending = self.inner.pending.lock().map_err(|_| Error::Invalid("client lock poisoned".into()))?;
            if let Some(reason) = &pending.closed {
                return Err(self.inner.diagnostics.gone(reason));
            }
            pending.waiting.insert(seq, sender);
        }
        let message = Message::Request(Request { seq, command: command.to_owned(), arguments });
        tracing::trace!(seq, command, "dap request");
        let written = write_message(&mut *self.inner.writer.lock().await, &message).await;
        if let Err(error) = written {
            if let Ok(mut pending) = self.inner.pending.lock() {
                pending.waiting.remove(&seq);
            }
            return Err(self.inner.diagnostics.gone(&format!("write failed: {error}")));
        }
        Ok(PendingReply { command: command.to_owned(), receiver, inner: Arc::clone(&self.inner) })
    }

    /// Sends a request and waits up to `timeout` for its response body.
    pub async fn request(&self, command: &str, arguments: Value, timeout: Duration) -> Result<Value> {
        self.send(command, arguments).await?.wait(timeout).await
    }

    /// A request typed by `dap-types`: arguments in, response body out.
    pub async fn typed<R: dap_types::requests::Request>(
        &self,
        arguments: &R::Arguments,
        timeout: Duration,
    ) -> Result<R::Response> {
        let body = self.typed_body::<R>(arguments, timeout).await?;
        decode::<R::Response>(R::COMMAND, body)
    }

    /// A request with typed arguments whose response body is read by hand, for the
    /// answers real adapters give that `dap-types` refuses (delve's thread id -1 while
    /// the program runs; capabilities whose filters lack a `label`).
    pub async fn typed_body<R: dap_types::requests::Request>(
        &self,
        arguments: &R::Arguments,
        timeout: Duration,
    ) -> Result<Value> {
        self.request(R::COMMAND, to_value(arguments)?, timeout).await
    }

    /// [`Client::send`] with typed arguments, the reply awaited later.
    pub async fn send_typed<R: dap_types::requests::Request>(&self, arguments: &R::Arguments) -> Result<PendingReply> {
        self.send(R::COMMAND, to_value(arguments)?).await
    }
}

impl PendingReply {
    /// Waits up to `timeout` for the response; a failed response is
    /// [`Error::Request`] with the adapter's message.
    pub async fn wait(self, timeout: Duration) -> Result<Value> {
        match tokio::time::timeout(timeout, self.receiver).await {
            Err(_) => Err(Error::Timeout { command: self.command, after: timeout }),
            Ok(Err(_)) => {
                let reason = self.inner.pending.lock().ok().and_then(|p| p.closed.clone()).unwrap_or_default();
                // The exit status usually lands a moment after the pipe closes.
                for _ in 0..10 {
                    if self.inner.diagnostics.status.lock().map(|s| s.is_some()).unwrap_or(true) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
                Err(self.inner.diagnostics.gone(&reason))
            }
            Ok(Ok(response)) if response.success => Ok(response.body),
            Ok(Ok(response)) => Err(Error::Request { command: self.command, message: response.error_text() }),
        }
    }
}

/// Typed arguments as JSON. `dap-types` writes an unset optional field as `null`; the
/// specification says such a field is left out, and some adapters refuse a `null` where
/// they read a number or a string, so every `null` inside an object is dropped.
fn to_value<T: Serialize>(value: &T) -> Result<Value> {
    let mut value = serde_json::to_value(value).map_err(|e| Error::Invalid(format!("cannot encode arguments: {e}")))?;
    drop_nulls(&mut value);
    Ok(value)
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Decodes a response body; a unit response tolerates any body.
pub fn decode<T: DeserializeOwned>(command: &str, body: Value) -> Result<T> {
    match serde_json::from_value::<T>(body) {
        Ok(value) => Ok(value),
        Err(error) => serde_json::from_value::<T>(Value::Null)
            .map_err(|_| Error::Unreadable { command: command.to_owned(), detail: error.to_string() }),
    }
}

/// A reader that adds the bytes it reads to [`Diagnostics::received`].
struct Counted<R> {
    inner: R,
    diagnostics: Arc<Diagnostics>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Counted<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len().saturating_sub(before) as u64;
        if read > 0
            && let Ok(mut received) = self.diagnostics.received.lock()
        {
            received.bytes += read;
        }
        polled
    }
}

/// A message's kind as [`Received::first`] names it.
fn kind(message: &Message) -> String {
    match message {
        Message::Response(response) => format!("{} response", response.command),
        Message::Event(event) => format!("{} event", event.event),
        Message::Request(request) => format!("{} request", request.command),
    }
}

async fn read_loop<R: AsyncRead + Unpin>(mut reader: BufReader<R>, inner: Arc<Inner>, events: EventSink) {
    let reason = loop {
        let message = read_message(&mut reader).await;
        if let (Ok(message), Ok(mut received)) = (&message, inner.diagnostics.received.lock()) {
            received.note(kind(message));
        }
        match message {
            Ok(Message::Response(response)) => {
                let sender = inner.pending.lock().ok().and_then(|mut p| p.waiting.remove(&response.request_seq));
                match sender {
                    Some(sender) => {
                        let _ = sender.send(response);
                    }
                    None => tracing::debug!(seq = response.request_seq, "response to no pending request"),
                }
            }
            Ok(Message::Event(event)) => {
                tracing::trace!(event = %event.event, "dap event");
                events(event);
            }
            Ok(Message::Request(request)) => {
                tracing::debug!(command = %request.command, "refusing reverse request");
                let seq = inner.seq.fetch_add(1, Ordering::Relaxed);
                let answer = Message::Response(Response {
                    seq,
                    request_seq: request.seq,
                    success: false,
                    message: Some(refusal(&request.command)),
                    command: request.command,
                    body: Value::Null,
                });
                if let Err(error) = write_message(&mut *inner.writer.lock().await, &answer).await {
                    break format!("write failed: {error}");
                }
            }
            Err(FrameError::Json(error)) => {
                // One unreadable message must not end the session.
                tracing::warn!(%error, "unreadable DAP message skipped");
            }
            Err(FrameError::Eof) => break "the adapter closed the connection".to_owned(),
            Err(error) => break error.to_string(),
        }
    };
    tracing::debug!(%reason, "dap reader stopped");
    // The exit status of the adapter's process, which its waiter records as it exits (before
    // it kills what is left of the group, whose end may be what closed the connection), so
    // that the failed requests and the session's end both say how it ended.
    let status = || inner.diagnostics.status.lock().ok().and_then(|s| s.clone());
    if inner.diagnostics.has_process.load(Ordering::Relaxed) {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
        while status().is_none() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let status = status();
    // The session's end is told before the waiting requests fail, so a caller that sees the
    // failure finds the session ended.
    let body = status.map_or(Value::Null, |status| serde_json::json!({ "status": status }));
    events(Event { seq: 0, event: CLOSED_EVENT.to_owned(), body });
    if let Ok(mut pending) = inner.pending.lock() {
        pending.closed = Some(reason);
        // Dropping the senders fails every waiting request at once.
        pending.waiting.clear();
    }
}

/// The pseudo-event delivered once when the connection ends.
pub const CLOSED_EVENT: &str = "$closed";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::type_complexity)]
    use serde_json::json;
    use tokio::io::{AsyncWriteExt as _, BufReader as TokioBufReader};

    use super::*;

    /// A client on one end of a duplex pipe and the "adapter" end as reader/writer.
    fn pair() -> (
        Client,
        TokioBufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
        Arc<Mutex<Vec<String>>>,
    ) {
        let (client_end, adapter_end) = tokio::io::duplex(1 << 16);
        let (client_read, client_write) = tokio::io::split(client_end);
        let (adapter_read, adapter_write) = tokio::io::split(adapter_end);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = Arc::clone(&seen);
        let sink: EventSink = Arc::new(move |event: Event| sink_seen.lock().unwrap().push(event.event));
        let client = Client::start(client_read, client_write, sink, Arc::default());
        (client, TokioBufReader::new(adapter_read), adapter_write, seen)
    }

    #[tokio::test]
    async fn reverse_requests_are_refused_and_responses_still_match() {
        let (client, mut from_client, mut to_client, seen) = pair();
        let reply = client.send("threads", Value::Null).await.unwrap();
        let Message::Request(request) = read_message(&mut from_client).await.unwrap() else { panic!() };
        assert_eq!(request.command, "threads");
        // Before answering: a reverse request and an unknown event.
        let reverse = Message::Request(Request { seq: 50, command: "runInTerminal".into(), arguments: json!({}) });
        write_message(&mut to_client, &reverse).await.unwrap();
        let odd = Message::Event(Event { seq: 51, event: "fixtureNoise".into(), body: json!({"x": 1}) });
        write_message(&mut to_client, &odd).await.unwrap();
        let Message::Response(refused) = read_message(&mut from_client).await.unwrap() else { panic!() };
        assert_eq!((refused.request_seq, refused.success), (50, false));
        assert!(refused.message.unwrap().contains("runInTerminal is not supported"));
        let answer = Message::Response(Response {
            seq: 52,
            request_seq: request.seq,
            success: true,
            command: "threads".into(),
            message: None,
            body: json!({"threads": [{"id": 1, "name": "main"}]}),
        });
        write_message(&mut to_client, &answer).await.unwrap();
        let body = reply.wait(Duration::from_secs(5)).await.unwrap();
        assert_eq!(body["threads"][0]["name"], "main");
        assert_eq!(seen.lock().unwrap().as_slice(), ["fixtureNoise"]);
    }

    #[tokio::test]
    async fn a_closed_connection_fails_waiting_and_later_requests() {
        let (client, from_client, mut to_client, seen) = pair();
        let reply = client.send("next", json!({"threadId": 1})).await.unwrap();
        to_client.shutdown().await.unwrap();
        drop(to_client);
        drop(from_client);
        let error = reply.wait(Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(error, Error::AdapterGone { .. }), "{error}");
        assert!(error.to_string().contains("closed the connection"), "{error}");
        assert!(client.send("threads", Value::Null).await.is_err());
        assert_eq!(seen.lock().unwrap().as_slice(), [CLOSED_EVENT]);
    }

    #[tokio::test]
    async fn no_answer_is_a_timeout_naming_the_command() {
        let (client, _from_client, _to_client, _seen) = pair();
        let error = client.request("stackTrace", json!({"threadId": 1}), Duration::from_millis(50)).await.unwrap_err();
        assert_eq!(error.to_string(), "stackTrace got no answer from the adapter within 50 ms");
    }
}
