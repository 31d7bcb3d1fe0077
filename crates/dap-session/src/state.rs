//! The session state machine, as plain data: events in, phase and bookkeeping
//! out. No process, pipe or timer here.
//!
//! Stops are numbered. Every frame id and variables reference handed out is
//! recorded with the stop it came from, and is valid only while the program
//! is stopped at that same stop: once it resumes, the adapter may reuse the
//! numbers for other things (DAP, "Lifetime of Object References").

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::{Output, OutputChunk, Phase, Stop};

/// How an ended session's reason begins when the adapter went away on its own
/// (crashed, killed) rather than the program ending: a failure, not an end.
pub const ADAPTER_EXITED: &str = "the debug adapter exited";

/// A bounded buffer of the debuggee's output keeping the most recent
/// characters, in arrival order, each piece with the stream that printed it.
#[derive(Debug, Clone, Default)]
pub struct OutputBuffer {
    /// Consecutive pieces of one stream are one chunk.
    chunks: std::collections::VecDeque<OutputChunk>,
    chars: usize,
    limit: usize,
    dropped: usize,
}

impl OutputBuffer {
    /// A buffer keeping at most `limit` characters.
    pub fn new(limit: usize) -> OutputBuffer {
        OutputBuffer { limit, ..OutputBuffer::default() }
    }

    /// Appends `text` printed on `stream` (a DAP `output` category: `stdout`, `stderr`, `console`, `important`).
    pub fn push(&mut self, stream: &str, text: &str) {
        match self.chunks.back_mut() {
            Some(last) if last.stream == stream => last.text.push_str(text),
            _ => self.chunks.push_back(OutputChunk { stream: stream.to_owned(), text: text.to_owned() }),
        }
        self.chars += text.chars().count();
        while self.chars > self.limit {
            let excess = self.chars - self.limit;
            let Some(first) = self.chunks.front_mut() else { break };
            let first_chars = first.text.chars().count();
            if first_chars <= excess {
                self.chunks.pop_front();
                self.chars -= first_chars;
                self.dropped += first_chars;
            } else {
                let byte = first.text.char_indices().nth(excess).map(|(i, _)| i).unwrap_or(first.text.len());
                first.text.drain(..byte);
                self.chars -= excess;
                self.dropped += excess;
            }
        }
    }

    /// The text kept so far, and how many characters were dropped from its front.
    pub fn snapshot(&self) -> Output {
        Output {
            text: self.chunks.iter().map(|c| c.text.as_str()).collect(),
            dropped_chars: self.dropped,
            chunks: self.chunks.iter().cloned().collect(),
        }
    }
}

/// The status in delve's "Process 1234 has exited with status 1".
fn exit_status_in(text: &str) -> Option<i64> {
    let (_, rest) = text.split_once(" has exited with status ")?;
    rest.split_whitespace().next()?.trim_end_matches('.').parse().ok()
}

/// What kind of id is being checked, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// A `frameId` from `stack`.
    Frame,
    /// A `variablesReference` from `scopes`, `variables` or `evaluate`.
    Reference,
}

impl IdKind {
    fn what(self) -> &'static str {
        match self {
            IdKind::Frame => "frame id",
            IdKind::Reference => "variables reference",
        }
    }
}

/// The state of one session.
#[derive(Debug, Clone)]
pub struct State {
    /// Where the session stands.
    pub phase: Phase,
    /// The adapter has sent `initialized`.
    pub initialized: bool,
    /// Stops seen so far; the number of the current stop while stopped.
    pub stops: u64,
    /// The last exit code reported (`exited` event).
    pub exit_code: Option<i64>,
    /// From the `process` event.
    pub debuggee_pid: Option<u32>,
    /// Bumped on every change, for waiters.
    pub version: u64,
    /// The debuggee's output, bounded to the session's output limit.
    pub output: OutputBuffer,
    /// The note that frames show no locals was given (once a session).
    pub said_no_locals: bool,
    frames: HashMap<u64, u64>,
    references: HashMap<u64, u64>,
}

impl State {
    /// A session just started, keeping at most `output_limit` characters of output.
    pub fn new(output_limit: usize) -> State {
        State {
            phase: Phase::Starting,
            initialized: false,
            stops: 0,
            exit_code: None,
            debuggee_pid: None,
            version: 0,
            output: OutputBuffer::new(output_limit),
            said_no_locals: false,
            frames: HashMap::new(),
            references: HashMap::new(),
        }
    }

    /// Whether the session is over.
    pub fn ended(&self) -> bool {
        matches!(self.phase, Phase::Ended { .. })
    }

    #[cfg(test)]
    /// The current stop, while stopped.
    pub fn stop(&self) -> Option<&Stop> {
        match &self.phase {
            Phase::Stopped(stop) => Some(stop),
            _ => None,
        }
    }

    /// Applies one adapter event.
    pub fn on_event(&mut self, event: &str, body: &Value) {
        self.version += 1;
        match event {
            "initialized" => self.initialized = true,
            "stopped" => {
                if self.ended() {
                    return;
                }
                self.stops += 1;
                let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
                self.phase = Phase::Stopped(Stop {
                    number: self.stops,
                    reason: text("reason").unwrap_or_else(|| "unknown".to_owned()),
                    description: text("description"),
                    text: text("text"),
                    thread_id: body.get("threadId").and_then(Value::as_u64),
                    location: None,
                });
            }
            "continued" => {
                if matches!(self.phase, Phase::Stopped(_)) {
                    self.phase = Phase::Running;
                }
            }
            "exited" => self.exit_code = body.get("exitCode").and_then(Value::as_i64),
            "terminated" => self.end("the program finished"),
            "process" => {
                self.debuggee_pid =
                    body.get("systemProcessId").and_then(Value::as_u64).and_then(|pid| u32::try_from(pid).ok());
            }
            "output" => {
                // DAP: an absent category is `console`; `telemetry` is not for people.
                let category = body.get("category").and_then(Value::as_str).unwrap_or("console");
                if matches!(category, "stdout" | "stderr" | "console" | "important")
                    && let Some(text) = body.get("output").and_then(Value::as_str)
                {
                    self.output.push(category, text);
                    // delve sends no `exited` event; its console says how the process ended.
                    if category == "console" && self.exit_code.is_none() {
                        self.exit_code = exit_status_in(text);
                        if let Phase::Ended { exit_code, .. } = &mut self.phase
                            && exit_code.is_none()
                        {
                            *exit_code = self.exit_code;
                        }
                    }
                }
            }
            crate::transport::CLOSED_EVENT => match body.get("status").and_then(Value::as_str) {
                Some(status) => self.end(&format!("{ADAPTER_EXITED} ({status})")),
                None => self.end(ADAPTER_EXITED),
            },
            _ => {}
        }
    }

    /// Ends the session for `reason`, unless it has ended already.
    pub fn end(&mut self, reason: &str) {
        self.version += 1;
        if !self.ended() {
            self.phase = Phase::Ended { reason: reason.to_owned(), exit_code: self.exit_code };
        }
    }

    /// The program is about to resume: every id handed out so far goes stale.
    pub fn resume(&mut self) {
        self.version += 1;
        if !self.ended() {
            self.phase = Phase::Running;
        }
    }

    /// Records ids handed out at the current stop.
    pub fn issue(&mut self, kind: IdKind, ids: impl IntoIterator<Item = u64>) {
        let map = match kind {
            IdKind::Frame => &mut self.frames,
            IdKind::Reference => &mut self.references,
        };
        for id in ids.into_iter().filter(|&id| id != 0) {
            map.insert(id, self.stops);
        }
    }

    /// Checks that the program is stopped and `id` was handed out at this stop.
    pub fn check(&self, kind: IdKind, id: u64) -> Result<()> {
        self.require_stopped()?;
        let map = match kind {
            IdKind::Frame => &self.frames,
            IdKind::Reference => &self.references,
        };
        match map.get(&id) {
            None => Err(Error::Unknown { what: kind.what(), id }),
            Some(&issued) if issued == self.stops => Ok(()),
            Some(&issued) => Err(Error::Stale { what: kind.what(), id, issued, current: self.stops }),
        }
    }

    /// `Ok` while stopped; otherwise why not.
    pub fn require_stopped(&self) -> Result<&Stop> {
        match &self.phase {
            Phase::Stopped(stop) => Ok(stop),
            Phase::Ended { reason, .. } => Err(Error::Ended(reason.clone())),
            Phase::Starting | Phase::Running => Err(Error::NotStopped),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn stopped(state: &mut State, thread: u64) {
        state.on_event("stopped", &json!({ "reason": "breakpoint", "threadId": thread }));
    }

    #[test]
    fn references_are_valid_for_one_stop_only() {
        let mut state = State::new(100);
        stopped(&mut state, 1);
        state.issue(IdKind::Reference, [7, 8]);
        state.issue(IdKind::Frame, [1000]);
        assert!(state.check(IdKind::Reference, 7).is_ok());
        assert!(state.check(IdKind::Frame, 1000).is_ok());
        assert_eq!(
            state.check(IdKind::Reference, 9).unwrap_err().to_string(),
            "unknown variables reference 9: use one from the latest stack, scopes or variables"
        );
        state.resume();
        assert!(matches!(state.check(IdKind::Reference, 7), Err(Error::NotStopped)));
        stopped(&mut state, 1);
        // The adapter reuses 7 at the new stop; 8 was not handed out again.
        state.issue(IdKind::Reference, [7]);
        assert!(state.check(IdKind::Reference, 7).is_ok());
        assert_eq!(
            state.check(IdKind::Reference, 8).unwrap_err().to_string(),
            "variables reference 8 is stale: it came from stop 1 and the program has resumed since (now at stop 2); ask for the stack or scopes again"
        );
        assert!(matches!(state.check(IdKind::Frame, 1000), Err(Error::Stale { issued: 1, current: 2, .. })));
    }

    #[test]
    fn events_drive_the_phase() {
        let mut state = State::new(100);
        assert_eq!(state.phase, Phase::Starting);
        state.on_event("initialized", &Value::Null);
        assert!(state.initialized);
        state.on_event("process", &json!({ "name": "x", "systemProcessId": 4242 }));
        assert_eq!(state.debuggee_pid, Some(4242));
        state.on_event("fixtureUnknown", &json!({ "anything": true }));
        stopped(&mut state, 3);
        let stop = state.stop().unwrap();
        assert_eq!((stop.number, stop.reason.as_str(), stop.thread_id), (1, "breakpoint", Some(3)));
        state.on_event("continued", &json!({ "threadId": 3 }));
        assert_eq!(state.phase, Phase::Running);
        state.on_event("exited", &json!({ "exitCode": -1 }));
        state.on_event("terminated", &Value::Null);
        assert_eq!(state.phase, Phase::Ended { reason: "the program finished".into(), exit_code: Some(-1) });
        // Nothing revives an ended session.
        stopped(&mut state, 3);
        state.on_event(crate::transport::CLOSED_EVENT, &Value::Null);
        assert_eq!(state.phase, Phase::Ended { reason: "the program finished".into(), exit_code: Some(-1) });
        assert_eq!(
            state.require_stopped().unwrap_err().to_string(),
            "the debug session has ended: the program finished"
        );
    }

    #[test]
    fn delves_console_line_gives_the_exit_code() {
        let mut state = State::new(100);
        state.on_event(
            "output",
            &json!({ "category": "console", "output": "Process 18676 has exited with status 1\n" }),
        );
        state.on_event("terminated", &Value::Null);
        assert_eq!(state.phase, Phase::Ended { reason: "the program finished".into(), exit_code: Some(1) });
    }

    fn chunk(stream: &str, text: &str) -> OutputChunk {
        OutputChunk { stream: stream.into(), text: text.into() }
    }

    #[test]
    fn output_keeps_the_tail_by_stream_and_counts_what_it_dropped() {
        let mut state = State::new(10);
        state.on_event("output", &json!({ "category": "stdout", "output": "hello\n" }));
        state.on_event("output", &json!({ "category": "stderr", "output": "wö" }));
        state.on_event("output", &json!({ "category": "stderr", "output": "rld!\n" }));
        state.on_event("output", &json!({ "category": "telemetry", "output": "x" }));
        assert_eq!(
            state.output.snapshot(),
            Output {
                text: "lo\nwörld!\n".into(),
                dropped_chars: 3,
                chunks: vec![chunk("stdout", "lo\n"), chunk("stderr", "wörld!\n")]
            }
        );
        // A whole chunk goes when the limit passes it; the adapter's own categories are kept, labelled.
        state.on_event("output", &json!({ "output": "note\n" }));
        state.on_event("output", &json!({ "category": "important", "output": "!\n" }));
        assert_eq!(
            state.output.snapshot(),
            Output {
                text: "d!\nnote\n!\n".into(),
                dropped_chars: 10,
                chunks: vec![chunk("stderr", "d!\n"), chunk("console", "note\n"), chunk("important", "!\n")]
            }
        );
    }
}
