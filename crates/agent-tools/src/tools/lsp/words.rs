//! The text the model reads of each action's result, worded from its value.

use std::fmt::Write as _;
use std::path::Path;

use lsp_supervisor::Supervisor;

use crate::tool::{CallContext, Words};
use crate::workspace::Workspace;

use super::input::LspAction;
use super::output::*;

impl Words for LspOutput {
    fn words(&self) -> String {
        let text = match self {
            LspOutput::Navigation(nav) => nav.words(),
            LspOutput::Hover(hover) => return hover.words(),
            LspOutput::CodeActions(offered) => offered.words(),
            LspOutput::Diagnostics(report) => report.words(),
            LspOutput::Checkers(runs) => runs.words(),
            LspOutput::Symbols(symbols) => symbols.words(),
            LspOutput::Status(status) => status.words(),
            LspOutput::Reload(reload) => return reload.words(),
        };
        text.trim_end().to_owned()
    }
}

impl CursorOutput {
    /// `path:line:column` and the symbol, with how the place was picked when not plainly.
    pub(super) fn note(&self) -> String {
        let mut note = format!("{}:{}:{} `{}`", self.path.display(), self.line, self.column, self.symbol);
        match (self.occurrences, self.whole) {
            (1, true) => {}
            (_, true) => {
                note.push_str(&format!(", the first whole-identifier occurrence of {} on the line", self.occurrences))
            }
            (_, false) => note.push_str(", inside a longer identifier (no whole-identifier occurrence on the line)"),
        }
        note
    }
}

impl NavigationOutput {
    fn words(&self) -> String {
        let what = self.action.replace('_', " ");
        let mut text = format!("{what} of {}", self.cursor.note());
        if self.locations.is_empty() {
            let _ = writeln!(text, ": none ({} has no {what} for it)", self.server);
        } else {
            let _ = writeln!(text, ": {}{}", self.total, capped_note(self.locations.len(), self.total));
            for l in &self.locations {
                let _ = writeln!(text, "{}  {}", l.at(), l.text);
            }
        }
        if let Some(warning) = &self.warning {
            let _ = writeln!(text, "note: {warning}; the list may be incomplete");
        }
        text
    }
}

impl HoverOutput {
    fn words(&self) -> String {
        match &self.hover {
            Some(text) => format!("hover at {}:\n{text}", self.cursor.note()),
            None => format!("no hover information at {}", self.cursor.note()),
        }
    }
}

impl CodeActionsOutput {
    fn words(&self) -> String {
        let mut text =
            format!("code actions on line {} of {}: {}\n", self.line, self.path.display(), self.actions.len());
        for a in &self.actions {
            let kind = a.kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default();
            let preferred = if a.preferred { " (preferred)" } else { "" };
            let disabled = a.disabled.as_deref().map(|d| format!(" (disabled: {d})")).unwrap_or_default();
            let _ = writeln!(text, "- {}{kind}{preferred}{disabled} ({})", a.title, a.server);
        }
        for failure in &self.helpers_failed {
            let _ = writeln!(text, "{} did not answer, so its actions are missing: {}", failure.server, failure.why);
        }
        text
    }
}

impl FileDiagnosticsOutput {
    fn words(&self) -> String {
        let servers = std::iter::once(self.server).chain(self.helpers.iter().copied()).collect::<Vec<_>>();
        let mut text = format!(
            "{}: {} ({})",
            self.path.display(),
            count(self.diagnostics.len(), "diagnostic"),
            servers.join(" + ")
        );
        if !self.complete && self.helpers_failed.is_empty() {
            text.push_str(&format!(
                ", pending: {} had not published for the current text when the wait ran out; this list may be incomplete",
                servers.join(" or ")
            ));
        }
        text.push('\n');
        for failure in &self.helpers_failed {
            let _ =
                writeln!(text, "{} did not answer, so its diagnostics are missing: {}", failure.server, failure.why);
        }
        for d in &self.diagnostics {
            let _ = writeln!(text, "{}", d.line_named(!self.helpers.is_empty()));
        }
        text
    }
}

impl CheckersOutput {
    fn words(&self) -> String {
        let mut text = String::new();
        for run in &self.checkers {
            let _ = writeln!(text, "`{}` in {}: {}", run.command, run.root, count(run.diagnostics.len(), "diagnostic"));
            for d in &run.diagnostics {
                let _ = writeln!(text, "{}", d.line());
            }
            if let Some(failure) = &run.failure {
                let _ = writeln!(text, "{failure}");
            }
            if let Some(cut) = &run.cut {
                let _ = writeln!(text, "{cut}");
            }
        }
        text
    }
}

impl SymbolsOutput {
    fn words(&self) -> String {
        let mut text = format!("{}: {}{}\n", self.title, self.total, capped_note(self.symbols.len(), self.total));
        for s in &self.symbols {
            let indent = "  ".repeat(s.depth.unwrap_or(0));
            let container = s.container.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
            let outside = if s.dependency == Some(true) { " (dependency)" } else { "" };
            let _ = writeln!(text, "{indent}{} {}{container}  {}{outside}", s.kind, s.name, s.location.at());
        }
        if let Some(outside) = self.outside.filter(|&n| n > 0) {
            let _ = writeln!(
                text,
                "{} outside the working directory left out (dependencies: true lists them)",
                count(outside, "hit")
            );
        }
        for failure in self.failures.iter().flatten() {
            let _ = writeln!(text, "{} for {} could not answer: {}", failure.server, failure.root, failure.error);
        }
        for note in self.notes.iter().flatten() {
            let _ = writeln!(text, "note: {note}");
        }
        text
    }
}

impl ReloadOutput {
    fn words(&self) -> String {
        if self.stopped.is_empty() {
            "no server was running; detection runs again, and servers start on next use".to_string()
        } else {
            format!("stopped {}; detection runs again, and each starts on next use", self.stopped.join(", "))
        }
    }
}

/// Runs `work` and, while it runs, reports what the language servers are busy
/// with, as their own `$/progress` says it (`rust-analyzer: Indexing: 40/120
/// (33%)`, with `progress`/`total` from the percentage), checked once a
/// second; the surface paces the reports. Nothing is gathered without a listener.
pub(crate) async fn reporting_servers<T>(
    supervisor: &Supervisor,
    cx: &CallContext,
    work: impl std::future::Future<Output = T>,
) -> T {
    if !cx.wants_progress() {
        return work.await;
    }
    tokio::pin!(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            out = &mut work => return out,
            _ = tick.tick() => {
                if let Some(busy) = supervisor.activity().into_iter().next() {
                    cx.progress(crate::progress::Progress {
                        message: format!("{}: {}", busy.server, busy.what),
                        progress: busy.percentage.map(f64::from),
                        total: busy.percentage.map(|_| 100.0),
                    });
                }
            }
        }
    }
}

fn capped_note(shown: usize, total: usize) -> String {
    if total > shown { format!(" (showing {shown} of {total})") } else { String::new() }
}

/// A probe's version line, with the program's name when the line lacks it (`typescript-language-server 5.3.0`).
pub(crate) fn version_text(program: &Path, version: &str) -> String {
    let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if version.contains(name) { version.to_string() } else { format!("{name} {version}") }
}

/// `850 ms`, `12 s`, `3 min 5 s`.
pub(super) fn duration_text(ms: u128) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{} s", ms / 1_000),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
    }
}

/// Continuation lines indented under a status entry.
pub(super) fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n      ")
}

/// "1 diagnostic", "2 diagnostics".
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

pub(super) fn display_root(ws: &Workspace, root: &Path) -> String {
    let rel = ws.relative(root);
    if rel.as_os_str().is_empty() { ".".to_string() } else { rel.display().to_string() }
}

pub(super) fn action_name(action: LspAction) -> &'static str {
    match action {
        LspAction::Diagnostics => "diagnostics",
        LspAction::Definition => "definition",
        LspAction::TypeDefinition => "type_definition",
        LspAction::Implementation => "implementation",
        LspAction::References => "references",
        LspAction::Hover => "hover",
        LspAction::Symbols => "symbols",
        LspAction::CodeActions => "code_actions",
        LspAction::Status => "status",
        LspAction::Reload => "reload",
    }
}
