//! The DAP wire format: `Content-Length` framing and the message envelope.
//!
//! `dap-types` gives the bodies of every request, response and event, but its
//! envelope has no `message` field (the error text of a failed response), so
//! the envelope is ours; bodies stay `serde_json::Value` until a caller asks
//! for a typed one.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// Largest frame accepted from an adapter: 64 MiB (67 108 864 bytes). The largest real
/// messages (a `variables` answer of a huge collection, an `output` event of a long
/// write) take a few MB; a `Content-Length` over this is refused before anything is
/// allocated, and the connection ends with that error, so one message cannot take this
/// process's memory.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// Longest header line accepted from an adapter, in bytes.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

/// One protocol message, as the DAP specification's `ProtocolMessage` defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Message {
    /// `"type": "request"`.
    Request(Request),
    /// `"type": "response"`.
    Response(Response),
    /// `"type": "event"`.
    Event(Event),
}

/// A request, from either side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The sender's sequence number for this message.
    pub seq: u64,
    /// The request's name, such as `launch` or `runInTerminal`.
    pub command: String,
    /// The arguments object; `null` when the request has none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub arguments: Value,
}

/// A response; `message` carries the error text when `success` is false.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The sender's sequence number for this message.
    pub seq: u64,
    /// The `seq` of the request it answers.
    pub request_seq: u64,
    /// Whether the request succeeded.
    pub success: bool,
    /// The command of the request it answers.
    pub command: String,
    /// The short error text of a failed response (the DAP specification's
    /// `cancelled`, `notStopped`, or the adapter's own words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The result, or an `error` object of a failed response; `null` when absent.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub body: Value,
}

impl Response {
    /// The error text of a failed response: the body's `error.format` when the
    /// adapter gives one (with `{name}` variables filled in), else `message`.
    pub fn error_text(&self) -> String {
        let formatted = self.body.get("error").and_then(|error| {
            let mut text = error.get("format")?.as_str()?.to_owned();
            if let Some(variables) = error.get("variables").and_then(Value::as_object) {
                for (name, value) in variables {
                    text = text.replace(&format!("{{{name}}}"), value.as_str().unwrap_or_default());
                }
            }
            Some(text)
        });
        formatted.or_else(|| self.message.clone()).unwrap_or_else(|| "failed without a message".to_owned())
    }
}

/// An event from the adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The sender's sequence number for this message.
    pub seq: u64,
    /// The event's name, such as `stopped` or `output`.
    pub event: String,
    /// The event's data; `null` when it has none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub body: Value,
}

/// A framing failure.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended before a frame began, or in the middle of its body.
    #[error("the stream ended")]
    Eof,
    /// A header line over [`MAX_HEADER_LINE`] bytes (the text says so), or a
    /// `Content-Length` that is no number (the text is the line).
    #[error("bad frame header: {0}")]
    Header(String),
    /// A `Content-Length` over [`MAX_FRAME`]; the length, in bytes.
    #[error("a frame of {0} bytes refused unread: over the limit of {max} bytes", max = MAX_FRAME)]
    TooLarge(usize),
    /// The body is not a DAP message in JSON, or a message could not be encoded.
    #[error("unreadable message: {0}")]
    Json(#[from] serde_json::Error),
    /// Reading or writing the stream failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads one framed message body (headers, blank line, `Content-Length` bytes).
///
/// A header line is at most [`MAX_HEADER_LINE`] bytes and a body at most [`MAX_FRAME`]
/// bytes; the body is read as it arrives, so a length that lies costs only the bytes sent.
pub async fn read_frame<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, FrameError> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut *reader).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await?;
        if read == 0 {
            return Err(FrameError::Eof);
        }
        if read == MAX_HEADER_LINE && line.last() != Some(&b'\n') {
            return Err(FrameError::Header(format!("a header line over {MAX_HEADER_LINE} bytes")));
        }
        let header = String::from_utf8_lossy(&line);
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            // Stray blank lines between frames are tolerated.
            continue;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            let value = value.trim();
            length = Some(value.parse().map_err(|_| FrameError::Header(header.to_owned()))?);
        }
    }
    let length = length.unwrap_or_default();
    if length > MAX_FRAME {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = Vec::with_capacity(length.min(1 << 20));
    (&mut *reader).take(length as u64).read_to_end(&mut body).await?;
    if body.len() < length {
        return Err(FrameError::Eof);
    }
    Ok(body)
}

/// Reads and decodes one message.
pub async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Message, FrameError> {
    let body = read_frame(reader).await?;
    Ok(serde_json::from_slice(&body)?)
}

/// Writes one message with its `Content-Length` header and flushes.
pub async fn write_message<W: AsyncWrite + Unpin>(writer: &mut W, message: &Message) -> Result<(), FrameError> {
    let body = serde_json::to_vec(message)?;
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    writer.write_all(&frame).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_error_responses_keep_their_message() {
        let (mut a, b) = tokio::io::duplex(4096);
        let mut b = tokio::io::BufReader::new(b);
        let sent = Message::Response(Response {
            seq: 3,
            request_seq: 2,
            success: false,
            command: "evaluate".into(),
            message: Some("name 'y' is not defined".into()),
            body: Value::Null,
        });
        write_message(&mut a, &sent).await.unwrap();
        let got = read_message(&mut b).await.unwrap();
        assert_eq!(got, sent);
        let Message::Response(response) = got else { panic!() };
        assert_eq!(response.error_text(), "name 'y' is not defined");
    }

    #[tokio::test]
    async fn error_format_variables_are_filled_in() {
        let response = Response {
            seq: 1,
            request_seq: 1,
            success: false,
            command: "launch".into(),
            message: Some("launch failed".into()),
            body: json!({ "error": { "id": 1, "format": "no file {path}", "variables": { "path": "/x.py" } } }),
        };
        assert_eq!(response.error_text(), "no file /x.py");
    }

    #[tokio::test]
    async fn extra_headers_and_events_without_body_are_read() {
        let raw = b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: 39\r\n\r\n{\"seq\":1,\"type\":\"event\",\"event\":\"odd!\"}\n";
        let mut reader = tokio::io::BufReader::new(&raw[..]);
        let message = read_message(&mut reader).await.unwrap();
        assert_eq!(message, Message::Event(Event { seq: 1, event: "odd!".into(), body: Value::Null }));
        assert!(matches!(read_message(&mut reader).await, Err(FrameError::Eof)));
    }

    #[tokio::test]
    async fn a_lying_length_or_an_endless_header_is_refused_without_allocating_it() {
        let huge = format!("Content-Length: {}\r\n\r\n{{}}", MAX_FRAME + 1);
        let mut reader = tokio::io::BufReader::new(huge.as_bytes());
        assert!(matches!(read_frame(&mut reader).await, Err(FrameError::TooLarge(n)) if n == MAX_FRAME + 1));

        let short = b"Content-Length: 60000000\r\n\r\n{}";
        let mut reader = tokio::io::BufReader::new(&short[..]);
        assert!(matches!(read_frame(&mut reader).await, Err(FrameError::Eof)));

        let endless = vec![b'x'; MAX_HEADER_LINE * 3];
        let mut reader = tokio::io::BufReader::new(&endless[..]);
        let error = read_frame(&mut reader).await.unwrap_err();
        assert_eq!(error.to_string(), "bad frame header: a header line over 8192 bytes");
    }
}
