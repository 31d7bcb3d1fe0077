//! The text the model reads of each op's result, worded from its value.

use std::fmt::Write as _;
use std::path::Path;

use crate::tool::Words;

use super::{
    BreakpointsOutput, CappedOutput, DebugOutput, Debugged, LocationOutput, PhaseOutput, ProgramOutput, RunOutput,
    Said, StartOutput, StartedOutput, StatusOutput, StopOutput, ValueOutput,
};

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(super) fn clip(text: &str, max: usize) -> String {
    let mut shown: String = text.chars().take(max).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

impl Words for Debugged {
    fn words(&self) -> String {
        let view = View { root: &self.root };
        match (&self.value, &self.said) {
            (DebugOutput::Adapters { adapters }, _) => {
                adapters.iter().map(|a| format!("{}: {}", a.id, a.detail)).collect::<Vec<_>>().join("\n")
            }
            (DebugOutput::Status(status), _) => view.status_text(status),
            (DebugOutput::Breakpoints(set), _) => view.breakpoints_text(set),
            (DebugOutput::Started(started), Said::Launched(head)) => view.started_text(head, started, false),
            (DebugOutput::Started(started), Said::Attached(head)) => view.started_text(head, started, true),
            (DebugOutput::Started(started), _) => view.started_text("started", started, false),
            (DebugOutput::Run(RunOutput::Stopped(stop)), Said::AlreadyStopped) => {
                format!("already stopped, nothing to pause: {}", view.stop_text(stop))
            }
            (DebugOutput::Run(RunOutput::StillRunning { waited_ms }), Said::PauseSent) => format!(
                "the pause was sent, but the program did not stop within {} s (a process held elsewhere — a forked Python child at a breakpoint, a blocked system call — can do that): read status later, or terminate",
                waited_ms / 1000
            ),
            (DebugOutput::Run(outcome), _) => view.outcome_text(outcome),
            (DebugOutput::Threads { threads }, _) if threads.is_empty() => {
                // delve lists only a placeholder while the program runs (left out): pause it to see them.
                "the adapter listed no threads (some list them only while the program is stopped: pause it first)"
                    .to_owned()
            }
            (DebugOutput::Threads { threads }, _) => {
                threads.iter().map(|t| format!("thread {}: {}", t.id, t.name)).collect::<Vec<_>>().join("\n")
            }
            (DebugOutput::Stack(stack), _) => {
                let mut text = stack
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| format!("#{i} {} (frame_id {})", view.location_text(&f.location), f.id))
                    .collect::<Vec<_>>()
                    .join("\n");
                text.push_str(&capped_note(stack, "frames"));
                text
            }
            (DebugOutput::Scopes { scopes }, said) => {
                let mut text = scopes
                    .iter()
                    .map(|s| {
                        let expensive = if s.expensive { ", expensive" } else { "" };
                        format!("{} (reference {}{expensive})", s.name, s.reference)
                    })
                    .collect::<Vec<_>>();
                if let Said::Note(note) = said {
                    text.push(format!("note: {note}"));
                }
                text.join("\n")
            }
            (DebugOutput::Variables(variables), _) => {
                let mut text = variables.items.iter().map(value_text).collect::<Vec<_>>().join("\n");
                if variables.items.is_empty() {
                    text.push_str("(no variables)");
                }
                text.push_str(&capped_note(variables, "variables"));
                text
            }
            (DebugOutput::Evaluated(value), _) => value_text(value),
            (DebugOutput::Output(output), _) => {
                let text = output_text(output);
                if output.dropped_chars > 0 {
                    format!("(the first {} characters were dropped)\n{text}", output.dropped_chars)
                } else {
                    text
                }
            }
            (DebugOutput::Terminated(terminated), _) => match &terminated.was {
                // A clean-up that comes after the end is no error: it says how the session had ended.
                PhaseOutput::Ended { reason, exit_code } => {
                    format!("already {}; nothing was left to terminate", ended_text(reason, *exit_code))
                }
                _ if terminated.debuggee_ended => {
                    format!("terminated: the program and the {} adapter are gone", terminated.adapter)
                }
                _ => {
                    format!("detached: the attached program keeps running; the {} session is over", terminated.adapter)
                }
            },
        }
    }

    /// A run that ended because the adapter went away (crashed, killed) is an
    /// error for the caller, where the program ending is not.
    fn is_error(&self) -> bool {
        match &self.value {
            DebugOutput::Started(started) => adapter_died(&started.outcome),
            DebugOutput::Run(outcome) => adapter_died(outcome),
            _ => false,
        }
    }
}

/// How paths read: relative to the working directory.
struct View<'a> {
    root: &'a Path,
}

impl View<'_> {
    fn show(&self, path: &Path) -> String {
        let shown = path.strip_prefix(self.root).unwrap_or(path).display().to_string();
        // The working directory itself (a Go package launched as `.`).
        if shown.is_empty() { ".".to_owned() } else { shown }
    }

    fn status_text(&self, status: &StatusOutput) -> String {
        let mut text = match &status.session {
            None => "no debug session in this conversation".to_owned(),
            Some(info) => {
                let what = match &info.start {
                    StartOutput::Launch { module: Some(module), .. } => format!("launched -m {module}"),
                    StartOutput::Launch { program, .. } => format!("launched {}", self.show(program)),
                    StartOutput::Attach { pid: Some(pid), .. } => format!("attached to process {pid}"),
                    StartOutput::Attach { host, port, .. } => format!("attached to {host}:{port}"),
                };
                let phase = match &info.phase {
                    PhaseOutput::Starting => "starting".to_owned(),
                    PhaseOutput::Running => "running".to_owned(),
                    PhaseOutput::Stopped(stop) => self.stop_text(stop),
                    PhaseOutput::Ended { reason, exit_code } => ended_text(reason, *exit_code),
                };
                let left = if matches!(info.phase, PhaseOutput::Ended { .. }) {
                    String::new()
                } else {
                    format!(
                        "; {} left before the session is ended",
                        time_left_text(std::time::Duration::from_millis(info.ttl_left_ms))
                    )
                };
                format!("{} session ({what}): {phase}{left}", info.adapter)
            }
        };
        if !status.breakpoints.is_empty() {
            text.push_str("\nbreakpoints:");
            for file in &status.breakpoints {
                let _ = write!(text, "\n  {}: {}", self.show(&file.file), join(&file.lines));
            }
        }
        text
    }

    fn started_text(&self, head: &str, started: &StartedOutput, attached: bool) -> String {
        let mut text = head.to_owned();
        for file in &started.breakpoints {
            let _ = write!(text, "\n{}", self.breakpoints_text(file));
        }
        if let (true, RunOutput::StillRunning { waited_ms }) = (attached, &started.outcome) {
            // Ready once configured: an attached program (a server, a loop) runs on.
            let _ = write!(
                text,
                "\nattached; running (no stop within {} s): set breakpoints, pause it, or read status; terminate detaches and leaves it running",
                waited_ms / 1000
            );
            return text;
        }
        let _ = write!(text, "\n{}", self.outcome_text(&started.outcome));
        text
    }

    fn outcome_text(&self, outcome: &RunOutput) -> String {
        match outcome {
            RunOutput::Stopped(stop) => self.stop_text(stop),
            RunOutput::Exited { exit_code, reason } => {
                format!("{}; op output shows what it printed", ended_text(reason, *exit_code))
            }
            RunOutput::StillRunning { waited_ms } => format!(
                "still running after {} s with no stop: pause it, read status later (it says where the program stopped, if it did), or terminate",
                waited_ms / 1000
            ),
        }
    }

    fn stop_text(&self, stop: &StopOutput) -> String {
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

    fn location_text(&self, location: &LocationOutput) -> String {
        let file = location.file.as_deref().map(|f| self.show(f)).unwrap_or_else(|| "<no source>".into());
        format!("{file}:{} in {}", location.line, location.function)
    }

    fn breakpoints_text(&self, set: &BreakpointsOutput) -> String {
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
fn adapter_died(outcome: &RunOutput) -> bool {
    matches!(outcome, RunOutput::Exited { reason, .. } if reason.starts_with(dap_session::ADAPTER_EXITED))
}

/// The TTL's time left, rounded up (`0.4 s` is `1 s`, `61 s` is `2 min`): "0 s" only
/// once none is left, when the TTL is ending the session.
fn time_left_text(left: std::time::Duration) -> String {
    match left.as_millis().div_ceil(1000) {
        secs @ 0..60 => format!("{secs} s"),
        secs => format!("{} min", secs.div_ceil(60)),
    }
}

fn ended_text(reason: &str, exit_code: Option<i64>) -> String {
    match exit_code {
        Some(code) => format!("ended: {reason} (exit code {code})"),
        None => format!("ended: {reason}"),
    }
}

fn value_text(value: &ValueOutput) -> String {
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

fn capped_note<T>(list: &CappedOutput<T>, what: &str) -> String {
    if list.total > list.items.len() {
        format!("\n({} of {} {what} shown)", list.items.len(), list.total)
    } else {
        String::new()
    }
}

/// The program's output for a person: as printed when it all came on
/// stdout; else each run of one stream under a `[stream]` line.
fn output_text(output: &ProgramOutput) -> String {
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

fn join(lines: &[u64]) -> String {
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
