//! The protocol readers and the debug session's state machine, on any bytes.

use std::collections::HashMap;

use dap_session::protocol::{FrameError, Message, read_message, write_message};
use dap_session::{Error as DapError, IdKind, Phase, State};
use kernel::OutputLimits;
use kernel::fuzzing::{read_frames, scan};
use lsp_supervisor::fuzzing::{Routed, read_and_route};
use serde_json::{Value, json};

use crate::block_on;
use crate::chunked::{Chunked, split};

/// Input: chunk sizes, then a language server's output stream.
///
/// Reading it whole and in chunks routes the same messages and ends the same way; each
/// pending request is answered at most once, and only pending ones are.
pub fn lsp_frames(data: &[u8]) {
    let (sizes, stream) = split(data);
    let whole = block_on(read_and_route(stream, 3));
    let chunked = block_on(read_and_route(Chunked::new(stream, &sizes), 3));
    assert_eq!(whole, chunked, "the split points changed what was read");
    let mut answered = Vec::new();
    for routed in &whole.0 {
        if let Routed::Response { id, .. } = routed {
            assert!((1..=3).contains(id), "an answer to request {id}, which was never sent");
            assert!(!answered.contains(id), "request {id} answered twice");
            answered.push(*id);
        }
    }
}

/// Every message of a DAP stream, then how it ended.
async fn dap_messages<R: tokio::io::AsyncBufRead + Unpin>(mut reader: R) -> (Vec<Message>, String) {
    let mut messages = Vec::new();
    loop {
        match read_message(&mut reader).await {
            Ok(message) => messages.push(message),
            Err(FrameError::Eof) => return (messages, "end".to_owned()),
            Err(error) => return (messages, error.to_string()),
        }
    }
}

/// Input: chunk sizes, then a debug adapter's output stream.
///
/// Reading it whole and in chunks gives the same messages and the same end, and every
/// message read is written and read back unchanged.
pub fn dap_frames(data: &[u8]) {
    let (sizes, stream) = split(data);
    let whole = block_on(dap_messages(stream));
    let chunked = block_on(dap_messages(tokio::io::BufReader::new(Chunked::new(stream, &sizes))));
    assert_eq!(whole, chunked, "the split points changed what was read");
    for message in whole.0 {
        let mut wire = Vec::new();
        block_on(write_message(&mut wire, &message)).unwrap_or_else(|error| panic!("writing {message:?}: {error}"));
        let again = block_on(read_message(&mut &wire[..])).unwrap_or_else(|error| panic!("reading back: {error}"));
        assert_eq!(again, message, "a message changed on its way back");
    }
}

/// What the session state must be, kept by hand beside the real one.
#[derive(Default)]
struct Model {
    ended: bool,
    stopped: bool,
    stops: u64,
    exit_code: Option<i64>,
    frames: HashMap<u64, u64>,
    references: HashMap<u64, u64>,
    pushed_chars: usize,
}

/// Input: one operation per byte pair (what, argument): adapter events (`stopped`,
/// `continued`, `exited`, `terminated`, `output`, the adapter's exit), resume, end,
/// ids handed out, ids checked.
///
/// After every operation the state agrees with a model: a stop is numbered one more than
/// the last, an ended session stays ended, an id is valid only at the stop it was handed
/// out at (and the error says which of ended, running, unknown or stale), and the output
/// buffer keeps at most its limit and counts what it dropped.
pub fn dap_state(data: &[u8]) {
    const OUTPUT_LIMIT: usize = 64;
    let mut state = State::new(OUTPUT_LIMIT);
    let mut model = Model::default();
    for pair in data.chunks(2) {
        let (what, arg) = (pair[0], pair.get(1).copied().unwrap_or(0));
        let id = u64::from(arg % 8);
        let before = state.version;
        match what % 11 {
            0 => {
                state.on_event("stopped", &json!({ "reason": "step", "threadId": arg }));
                if !model.ended {
                    model.stops += 1;
                    model.stopped = true;
                }
            }
            1 => {
                state.on_event("continued", &json!({ "threadId": arg }));
                model.stopped = false;
            }
            2 => {
                state.on_event("exited", &json!({ "exitCode": i64::from(arg) - 128 }));
                model.exit_code = Some(i64::from(arg) - 128);
            }
            3 => {
                state.on_event("terminated", &Value::Null);
                model.ended = true;
            }
            4 | 5 => {
                let category =
                    ["stdout", "stderr", "console", "important", "telemetry", "другое"][usize::from(arg % 6)];
                let text = "é".repeat(usize::from(arg % 40));
                state.on_event("output", &json!({ "category": category, "output": text }));
                if arg % 6 < 4 {
                    model.pushed_chars += usize::from(arg % 40);
                }
            }
            6 => {
                state.on_event("$closed", &Value::Null);
                model.ended = true;
            }
            7 => {
                state.resume();
                model.stopped = false;
            }
            8 => {
                state.end("ended by the check");
                model.ended = true;
            }
            9 => {
                let kind = if arg & 0x80 == 0 { IdKind::Frame } else { IdKind::Reference };
                state.issue(kind, [id, id + 1]);
                let map = if kind == IdKind::Frame { &mut model.frames } else { &mut model.references };
                for issued in [id, id + 1].into_iter().filter(|&n| n != 0) {
                    map.insert(issued, model.stops);
                }
            }
            _ => {
                let kind = if arg & 0x80 == 0 { IdKind::Frame } else { IdKind::Reference };
                let map = if kind == IdKind::Frame { &model.frames } else { &model.references };
                let got = state.check(kind, id);
                match (model.ended, model.stopped, map.get(&id)) {
                    (true, _, _) => assert!(matches!(got, Err(DapError::Ended(_))), "ended, yet {got:?}"),
                    (false, false, _) => assert!(matches!(got, Err(DapError::NotStopped)), "running, yet {got:?}"),
                    (false, true, None) => {
                        assert!(matches!(got, Err(DapError::Unknown { .. })), "never issued: {got:?}")
                    }
                    (false, true, Some(&at)) if at == model.stops => assert!(got.is_ok(), "issued now, yet {got:?}"),
                    (false, true, Some(&at)) => assert!(
                        matches!(got, Err(DapError::Stale { issued, current, .. }) if issued == at && current == model.stops),
                        "issued at stop {at}, now {}: {got:?}",
                        model.stops
                    ),
                }
            }
        }
        if what % 11 < 9 {
            assert!(state.version > before, "operation {} left the version at {before}", what % 11);
        }
        if model.ended {
            model.stopped = false;
        }
        assert_eq!(state.ended(), model.ended, "ended after operation {}", what % 11);
        assert_eq!(state.stops, model.stops, "stop count");
        match &state.phase {
            Phase::Stopped(stop) => {
                assert!(model.stopped, "stopped, the model says not");
                assert_eq!(stop.number, model.stops, "the stop's number");
            }
            Phase::Ended { .. } => {}
            Phase::Starting | Phase::Running => assert!(!model.stopped, "running, the model says stopped"),
        }
        let output = state.output.snapshot();
        let kept = output.text.chars().count();
        assert!(kept <= OUTPUT_LIMIT, "{kept} characters kept, over the limit {OUTPUT_LIMIT}");
        assert_eq!(kept + output.dropped_chars, model.pushed_chars, "kept and dropped do not add up");
        assert_eq!(output.chunks.iter().map(|c| c.text.as_str()).collect::<String>(), output.text);
    }
}

/// Input: chunk sizes, then the driver's frame stream (one JSON object per line) and,
/// after a NUL, a raw stdout stream.
///
/// The frame reader reads the same frames whole and in chunks, and the collector keeps
/// stream text within its cap (plus the cut note and the tail). The raw scanner finds the
/// same text and markers whole and in chunks, one sync per marker in the stream.
pub fn kernel_frames(data: &[u8]) {
    const MARKER: &str = "\u{1}kernel-sync-1-ab\u{1}\n";
    let (sizes, stream) = split(data);
    let (frames, raw) = match stream.iter().position(|&b| b == 0) {
        Some(at) => (&stream[..at], &stream[at + 1..]),
        None => (stream, &[][..]),
    };
    let limits = OutputLimits { max_stream_chars: 64, tail_chars: 16, max_mime_chars: 32, max_rich_outputs: 3 };
    let whole = block_on(read_frames(std::io::Cursor::new(frames.to_vec()), limits));
    let chunked = block_on(read_frames(Chunked::new(frames, &sizes), limits));
    assert_eq!(format!("{whole:?}"), format!("{chunked:?}"), "the split points changed the frames");
    let (_, outputs, cut) = &whole;
    let kept: usize = outputs
        .iter()
        .map(|output| match output {
            kernel::Output::Stream { text, .. } if !text.starts_with("\n[… ") => text.chars().count(),
            _ => 0,
        })
        .sum();
    assert!(kept <= limits.max_stream_chars + limits.tail_chars, "{kept} stream characters kept");
    assert!(
        outputs.iter().filter(|o| matches!(o, kernel::Output::Display { .. } | kernel::Output::Result { .. })).count()
            <= 3
    );
    assert!(
        cut.stream_chars == 0
            || outputs
                .iter()
                .any(|o| matches!(o, kernel::Output::Stream { text, .. } if text.contains("characters of output cut")))
    );

    let merged = |pieces: Vec<Option<String>>| {
        let mut merged: Vec<Option<String>> = Vec::new();
        for piece in pieces {
            match (merged.last_mut(), piece) {
                (Some(Some(previous)), Some(text)) => previous.push_str(&text),
                (_, piece) => merged.push(piece),
            }
        }
        merged
    };
    let whole = merged(scan(MARKER, &[raw]));
    let chunks = Chunked::chunks(raw, &sizes);
    let chunk_refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    let chunked = merged(scan(MARKER, &chunk_refs));
    assert_eq!(whole, chunked, "the split points changed the raw stream");
    let markers = memchr_count(raw, MARKER.as_bytes());
    assert_eq!(whole.iter().filter(|p| p.is_none()).count(), markers, "syncs against markers in the stream");
}

/// Non-overlapping occurrences of `needle`, left to right.
fn memchr_count(haystack: &[u8], needle: &[u8]) -> usize {
    let mut count = 0;
    let mut at = 0;
    while let Some(found) = haystack[at..].windows(needle.len()).position(|w| w == needle) {
        count += 1;
        at += found + needle.len();
    }
    count
}
