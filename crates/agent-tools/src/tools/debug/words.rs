//! The text the model reads of each op's result, worded beside its structured value.

use std::fmt::Write as _;

use dap_session::{Capped, FileBreakpoints, Location, RunOutcome, Started, Stop};

use crate::result::ToolResult;

use super::{Debug, DebugOutput};

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(super) fn clip(text: &str, max: usize) -> String {
    let mut shown: String = text.chars().take(max).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

impl Debug {
    pub(super) fn started(&self, head: String, started: &Started) -> ToolResult {
        let mut text = head;
        for file in &started.breakpoints {
            let _ = write!(text, "\n{}", self.breakpoints_text(file));
        }
        let _ = write!(text, "\n{}", self.outcome_text(&started.outcome));
        let mut result = ToolResult::text(text).with_output(&DebugOutput::Started(started.clone()));
        result.is_error = adapter_died(&started.outcome);
        result
    }

    pub(super) fn outcome(&self, outcome: &RunOutcome) -> ToolResult {
        let mut result = ToolResult::text(self.outcome_text(outcome)).with_output(&DebugOutput::Run(outcome.clone()));
        result.is_error = adapter_died(outcome);
        result
    }

    pub(super) fn outcome_text(&self, outcome: &RunOutcome) -> String {
        match outcome {
            RunOutcome::Stopped(stop) => self.stop_text(stop),
            RunOutcome::Exited { exit_code, reason } => {
                format!("{}; op output shows what it printed", ended_text(reason, *exit_code))
            }
            RunOutcome::StillRunning { waited } => format!(
                "still running after {} s with no stop: pause it, read status later (it says where the program stopped, if it did), or terminate",
                waited.as_secs()
            ),
        }
    }

    pub(super) fn stop_text(&self, stop: &Stop) -> String {
        let mut text = format!("stopped ({})", stop.reason);
        if let Some(location) = &stop.location {
            let _ = write!(text, " at {}", self.location_text(location));
        }
        if let Some(thread) = stop.thread_id {
            let _ = write!(text, ", thread {thread}");
        }
        if let Some(detail) = stop.text.as_ref().or(stop.description.as_ref()) {
            let _ = write!(text, ": {detail}");
        }
        text
    }

    pub(super) fn location_text(&self, location: &Location) -> String {
        let file = location.file.as_deref().map(|f| self.show(f)).unwrap_or_else(|| "<no source>".into());
        format!("{file}:{} in {}", location.line, location.function)
    }

    pub(super) fn breakpoints_text(&self, set: &FileBreakpoints) -> String {
        let file = self.show(&set.file);
        if set.lines.is_empty() {
            return format!("cleared the breakpoints in {file}");
        }
        match &set.placed {
            None => format!("breakpoints in {file} at lines {}; sent to the adapter at launch", join(&set.lines)),
            Some(placed) => {
                let each = placed
                    .iter()
                    .map(|p| {
                        let moved = p.line.filter(|&l| l != p.requested_line).map(|l| format!(" → {l}"));
                        let state = if p.verified { "set" } else { "not verified" };
                        let message = p.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default();
                        format!("{}{} {state}{message}", p.requested_line, moved.unwrap_or_default())
                    })
                    .collect::<Vec<_>>();
                format!("breakpoints in {file}: {}", each.join(", "))
            }
        }
    }
}

/// Whether a run ended because the adapter went away (crashed, killed): an
/// error for the caller, where the program ending is not.
pub(super) fn adapter_died(outcome: &RunOutcome) -> bool {
    matches!(outcome, RunOutcome::Exited { reason, .. } if reason.starts_with(dap_session::ADAPTER_EXITED))
}

/// The TTL's time left, rounded up (`0.4 s` is `1 s`, `61 s` is `2 min`): "0 s" only
/// once none is left, when the TTL is ending the session.
pub(super) fn time_left_text(left: std::time::Duration) -> String {
    match left.as_millis().div_ceil(1000) {
        secs @ 0..60 => format!("{secs} s"),
        secs => format!("{} min", secs.div_ceil(60)),
    }
}

pub(super) fn ended_text(reason: &str, exit_code: Option<i64>) -> String {
    match exit_code {
        Some(code) => format!("ended: {reason} (exit code {code})"),
        None => format!("ended: {reason}"),
    }
}

pub(super) fn value_text(value: &dap_session::Value) -> String {
    let mut text = value.name.clone();
    if let Some(type_name) = value.type_name.as_deref().filter(|t| !t.is_empty()) {
        let _ = write!(text, ": {type_name}");
    }
    let _ = write!(text, " = {}", value.value);
    if let Some(chars) = value.cut_from {
        let _ = write!(text, "… (cut, {chars} characters in all)");
    }
    if value.reference != 0 {
        let _ = write!(text, " (reference {})", value.reference);
    }
    text
}

pub(super) fn capped_note<T>(list: &Capped<T>, what: &str) -> String {
    if list.total > list.items.len() {
        format!("\n({} of {} {what} shown)", list.items.len(), list.total)
    } else {
        String::new()
    }
}

/// The program's output for a person: as printed when it all came on
/// stdout; else each run of one stream under a `[stream]` line.
pub(super) fn output_text(output: &dap_session::Output) -> String {
    if output.text.is_empty() {
        return "(no output yet)".to_owned();
    }
    if output.chunks.iter().all(|c| c.stream == "stdout") {
        return output.text.clone();
    }
    let mut text = String::new();
    for chunk in &output.chunks {
        let _ = writeln!(text, "[{}]", chunk.stream);
        text.push_str(&chunk.text);
        if !chunk.text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

pub(super) fn join(lines: &[u64]) -> String {
    lines.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::time_left_text;

    #[test]
    fn the_time_left_is_rounded_up() {
        let cases = [(0, "0 s"), (1, "1 s"), (400, "1 s"), (1000, "1 s"), (1001, "2 s"), (59_000, "59 s")];
        for (ms, text) in cases {
            assert_eq!(time_left_text(Duration::from_millis(ms)), text, "{ms} ms");
        }
        let cases = [(59_001, "1 min"), (60_000, "1 min"), (61_000, "2 min"), (1_800_000, "30 min")];
        for (ms, text) in cases {
            assert_eq!(time_left_text(Duration::from_millis(ms)), text, "{ms} ms");
        }
    }
}
