//! For the fuzz targets only (the `fuzzing` feature): the connection's reader
//! (framing and routing) run over any byte stream, with no process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::transport::{Incoming, Pending, RequestError, read_frame, route};

/// What a connection made of a stream, in the order it was routed.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// The answer to one of the pending requests: its result, or the error's code and message.
    Response {
        id: i64,
        result: Result<Value, (i64, String)>,
    },
    Notification {
        method: String,
        params: Value,
    },
    Request {
        id: Value,
        method: String,
        params: Value,
    },
}

/// Reads frames until the end of `stream` or the first unreadable frame, routing each as a
/// live connection does while requests `1..=pending` wait for their answers. Returns what
/// was routed, and how the stream ended: `Ok(())` at a clean end, else the framing error.
pub async fn read_and_route<R: AsyncRead + Unpin>(stream: R, pending: i64) -> (Vec<Routed>, Result<(), String>) {
    let table: Pending = Arc::new(Mutex::new(HashMap::new()));
    let mut answers = Vec::new();
    for id in 1..=pending {
        let (tx, rx) = oneshot::channel();
        table.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, tx);
        answers.push((id, rx));
    }
    let (incoming_tx, mut incoming_rx) = mpsc::unbounded_channel();
    let mut reader = BufReader::new(stream);
    let mut routed = Vec::new();
    let end = loop {
        match read_frame(&mut reader).await {
            Ok(Some(message)) => {
                route(message, &incoming_tx, &table);
                while let Ok(incoming) = incoming_rx.try_recv() {
                    routed.push(match incoming {
                        Incoming::Notification { method, params } => Routed::Notification { method, params },
                        Incoming::Request { id, method, params } => Routed::Request { id, method, params },
                    });
                }
                for (id, rx) in &mut answers {
                    if let Ok(answer) = rx.try_recv() {
                        let result = answer.map_err(|error| match error {
                            RequestError::Response { code, message } => (code, message),
                            other => (i64::MIN, format!("{other:?}")),
                        });
                        routed.push(Routed::Response { id: *id, result });
                    }
                }
            }
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        }
    };
    (routed, end)
}
