//! The text the model reads of each action's result, worded beside its structured value.

use std::fmt::Write as _;
use std::path::Path;

use lsp_supervisor::{Capped, Cursor, Diagnostic, Location, Supervisor, Symbol};

use crate::result::ToolResult;
use crate::tool::CallContext;
use crate::workspace::Workspace;

use super::input::LspAction;
use super::output::*;

/// The uses of the old name a rename left, as lines: the ones in files the
/// server's configuration leaves out (grouped by why), the ones it could not
/// resolve, and counts of other symbols and of uses not asked about.
pub(super) fn leftover_text(ws: &Workspace, outcome: &lsp_supervisor::RenameOutcome) -> String {
    const SHOWN: usize = 10;
    let mut text = String::new();
    let old = &outcome.old_name;
    let mut reasons: Vec<&str> = outcome.not_covered.iter().filter_map(|l| l.excluded.as_deref()).collect();
    reasons.dedup();
    for why in reasons {
        let uses: Vec<&lsp_supervisor::Leftover> =
            outcome.not_covered.iter().filter(|l| l.excluded.as_deref() == Some(why)).collect();
        let mut files: Vec<String> = uses.iter().map(|l| ws.relative(&l.location.path).display().to_string()).collect();
        files.dedup();
        let _ = writeln!(
            text,
            "{} of `{old}` in {} not renamed, because {why}:",
            count(uses.len(), "more use"),
            files.join(", ")
        );
        for l in uses.iter().take(SHOWN) {
            let _ = writeln!(text, "  {}: {}", loc(ws, &l.location), l.location.text);
        }
    }
    if !outcome.unresolved.is_empty() {
        let _ = writeln!(
            text,
            "{} of `{old}` that {} does not resolve (a comment, a string, or code it does not see) or could not be asked about, not renamed:",
            count(outcome.unresolved.len(), "more occurrence"),
            outcome.server
        );
        for l in outcome.unresolved.iter().take(SHOWN) {
            let unasked = l.unasked.as_ref().map(|e| format!("  (not asked: {e})")).unwrap_or_default();
            let _ = writeln!(text, "  {}: {}{unasked}", loc(ws, &l.location), l.location.text);
        }
        if outcome.unresolved.len() > SHOWN {
            let _ = writeln!(text, "  … {} more", outcome.unresolved.len() - SHOWN);
        }
    }
    if outcome.other_symbols > 0 || outcome.unchecked > 0 {
        let mut parts = Vec::new();
        if outcome.other_symbols > 0 {
            parts.push(format!(
                "{} of other symbols named `{old}` left as they are",
                count(outcome.other_symbols, "use")
            ));
        }
        if outcome.unchecked > 0 {
            parts.push(format!("{} more occurrences of `{old}` not checked", outcome.unchecked));
        }
        let _ = writeln!(text, "{}", parts.join("; "));
    }
    text
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

pub(super) fn cursor_note(ws: &Workspace, cursor: &Cursor) -> String {
    let mut note =
        format!("{}:{}:{} `{}`", ws.relative(&cursor.path).display(), cursor.line, cursor.column, cursor.symbol);
    match (cursor.occurrences, cursor.whole) {
        (1, true) => {}
        (_, true) => {
            note.push_str(&format!(", the first whole-identifier occurrence of {} on the line", cursor.occurrences))
        }
        (_, false) => note.push_str(", inside a longer identifier (no whole-identifier occurrence on the line)"),
    }
    note
}

pub(super) fn loc(ws: &Workspace, l: &Location) -> String {
    format!("{}:{}:{}", ws.relative(&l.path).display(), l.line, l.column)
}

/// One diagnostic as a line: `path:line:col severity[code] message (source)`.
pub(crate) fn diagnostic_line(ws: &Workspace, d: &Diagnostic) -> String {
    let code = d.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
    let source = d.source.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
    format!("{} {}{code}: {}{source}", loc(ws, &d.location), d.severity.as_str(), d.message)
}

/// [`diagnostic_line`] in a list that mixes servers (a primary and its helpers): it names its server.
pub(crate) fn diagnostic_line_named(ws: &Workspace, d: &Diagnostic, mixed: bool) -> String {
    if !mixed {
        return diagnostic_line(ws, d);
    }
    let code = d.code.as_ref().map(|c| format!("[{c}]")).unwrap_or_default();
    let source = match (&d.source, d.server) {
        (Some(source), Some(server)) => format!(" ({source}, from {server})"),
        (Some(source), None) => format!(" ({source})"),
        (None, Some(server)) => format!(" (from {server})"),
        (None, None) => String::new(),
    };
    format!("{} {}{code}: {}{source}", loc(ws, &d.location), d.severity.as_str(), d.message)
}

pub(super) fn capped_note<T>(list: &Capped<T>) -> String {
    if list.total > list.items.len() {
        format!(" (showing {} of {})", list.items.len(), list.total)
    } else {
        String::new()
    }
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

pub(super) fn symbols_result(ws: &Workspace, title: &str, symbols: &Capped<Symbol>) -> ToolResult {
    let mut text = format!("{title}: {}{}\n", symbols.total, capped_note(symbols));
    for s in &symbols.items {
        let indent = "  ".repeat(s.depth);
        let container = s.container.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
        let _ = writeln!(text, "{indent}{} {}{container}  {}", s.kind, s.name, loc(ws, &s.location));
    }
    let items = symbols
        .items
        .iter()
        .map(|s| SymbolOutput {
            name: s.name.clone(),
            kind: s.kind,
            container: s.container.clone(),
            depth: Some(s.depth),
            location: LocationOutput::new(ws, &s.location),
            dependency: None,
        })
        .collect();
    ToolResult::text(text.trim_end()).with_output(&LspOutput::Symbols(SymbolsOutput {
        symbols: items,
        total: symbols.total,
        servers: None,
        outside: None,
        failures: None,
        notes: None,
    }))
}
