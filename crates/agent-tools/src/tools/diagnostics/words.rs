//! What a write did to diagnostics: the structured value made from the
//! ledger's outcomes, and the text the model reads, worded from that value.

use std::fmt::Write as _;
use std::path::Path;

use lsp_supervisor::{Language, OtherFiles};

use crate::tools::lsp::{DiagnosticOutput, count};
use crate::workspace::Workspace;

use super::OTHER_LISTED;
use super::ledger::OtherFilesOutcome;
use super::output::{OtherFileOutput, OtherFilesOutput, OutsideOutput, WriteDiagnosticsOutput, WrittenFileOutput};

/// At most this many of one other file's new diagnostics are in the structured result (all are counted).
pub(super) const OTHER_JSON_PER_FILE: usize = 100;

/// The structured value of one server's other-files outcome.
pub(super) fn other_value(ws: &Workspace, o: &OtherFilesOutcome) -> OtherFilesOutput {
    let rel = |p: &Path| ws.relative(p).display().to_string();
    let total: usize = o.files.iter().map(|f| f.new.len()).sum();
    let status = if o.error.is_some() {
        "failed"
    } else if o.way == OtherFiles::WrittenOnly {
        "not checked"
    } else if o.way == OtherFiles::Importers && o.importers == 0 {
        "none"
    } else if !o.complete {
        "pending"
    } else if total > 0 {
        "new"
    } else {
        "no new"
    };
    let importers = o.way == OtherFiles::Importers;
    OtherFilesOutput {
        server: o.server,
        way: o.way.into(),
        status,
        written: o.written.iter().map(|p| rel(p)).collect(),
        new_total: total,
        fixed: o.fixed,
        looked_at: o.looked_at,
        importers: importers.then_some(o.importers),
        checked: importers.then_some(o.checked),
        outside_configuration: o
            .outside
            .iter()
            .map(|(p, why)| OutsideOutput { path: rel(p), why: why.clone() })
            .collect(),
        pending: o.pending.iter().map(|p| rel(p)).collect(),
        error: o.error.clone(),
        files: o
            .files
            .iter()
            .map(|f| OtherFileOutput {
                path: rel(&f.path),
                new_count: f.new.len(),
                fixed: f.fixed,
                baseline_known: f.baseline_known,
                new: f.new.iter().take(OTHER_JSON_PER_FILE).map(|d| DiagnosticOutput::new(ws, d)).collect(),
            })
            .collect(),
    }
}

impl WriteDiagnosticsOutput {
    /// The lines appended to a write's text: each written file's, then each
    /// server's on other files, listing at most [`OTHER_LISTED`] of their
    /// diagnostics in all.
    pub(crate) fn words(&self) -> String {
        let mut text = String::new();
        for file in &self.diagnostics {
            written_words(&mut text, file);
        }
        let mut budget = OTHER_LISTED;
        for other in &self.other_files {
            let _ = writeln!(text, "{}", other_words(other, &mut budget));
        }
        text.trim_end().to_string()
    }
}

fn written_words(text: &mut String, file: &WrittenFileOutput) {
    match file {
        WrittenFileOutput::Checked { path, server, helpers, helpers_failed, status, fixed, new } => {
            // The servers that answered: the primary, then its helpers.
            let servers = std::iter::once(*server).chain(helpers.iter().copied()).collect::<Vec<_>>();
            let shown = servers.join(" + ");
            let fixed =
                if *fixed > 0 { format!("; {} gone", count(*fixed, "earlier diagnostic")) } else { String::new() };
            match *status {
                "pending" if !helpers_failed.is_empty() => {
                    let missing: Vec<String> =
                        helpers_failed.iter().map(|f| format!("{} did not answer ({})", f.server, f.why)).collect();
                    let so_far = if new.is_empty() { String::new() } else { format!("; so far, from {shown}:") };
                    let _ = writeln!(text, "diagnostics pending for {path}: {}{so_far}", missing.join("; "));
                }
                "pending" => {
                    let _ = writeln!(
                        text,
                        "diagnostics pending for {path}: {} had not published for the written text when the wait ran out{}",
                        servers.join(" or "),
                        if new.is_empty() { "" } else { "; so far:" }
                    );
                }
                "no new" => {
                    let _ = writeln!(text, "no new diagnostics in {path} ({shown}){fixed}");
                }
                "unknown baseline" => {
                    let _ = writeln!(
                        text,
                        "diagnostics in {path} ({shown}); what it had before this write could not be read, so some may be older:"
                    );
                }
                _ => {
                    let _ = writeln!(text, "new diagnostics in {path} ({shown}){fixed}:");
                }
            }
            let mixed = !helpers.is_empty();
            for d in new {
                let _ = writeln!(text, "{}", d.line_named(mixed));
            }
        }
        WrittenFileOutput::Unchecked { path, status, language, why, error, said_before } => match *status {
            "unavailable" if !said_before => {
                let language = language.as_ref().map(|l| format!("{l} ")).unwrap_or_default();
                let why = why.as_deref().unwrap_or_default();
                let _ =
                    writeln!(text, "no diagnostics for {path}: no {language}language server is usable here ({why})");
            }
            "failed" => {
                let _ = writeln!(text, "diagnostics unavailable for {path}: {}", error.as_deref().unwrap_or(""));
            }
            _ => {}
        },
    }
}

/// The text of one server's other-files outcome; `budget` is how many more
/// diagnostics may be listed (shared by the servers of one write).
pub(super) fn other_words(o: &OtherFilesOutput, budget: &mut usize) -> String {
    let c_like =
        o.written.iter().any(|w| matches!(Language::from_path(Path::new(w)), Some(Language::C | Language::Cpp)));
    let (import, imports) = if c_like { ("include", "includes") } else { ("import", "imports") };
    let target = match o.written.as_slice() {
        [one] => one.clone(),
        _ => "the written files".to_string(),
    };
    let mut text = String::new();
    // Which files were looked at: all the server published, or the importers read.
    let scope = match (o.importers, o.checked) {
        (Some(importers), Some(checked)) => {
            let verb = if importers == 1 { imports } else { import };
            let read = if checked < importers {
                format!(", the nearest {checked} read, {} not", importers - checked)
            } else {
                String::new()
            };
            let outside = match o.outside_configuration.first() {
                Some(first) => format!(
                    "; not in its project: {} ({}), so what {} says of {} may not see this write",
                    o.outside_configuration.iter().map(|p| p.path.as_str()).collect::<Vec<_>>().join(", "),
                    first.why,
                    o.server,
                    if o.outside_configuration.len() == 1 { "it" } else { "them" }
                ),
                None => String::new(),
            };
            format!("{}; {} {verb} {target}{read}{outside}", o.server, count(importers, "file"))
        }
        _ => o.server.to_string(),
    };
    let total = o.new_total;
    let fixed = if o.fixed > 0 { format!("; {} gone", count(o.fixed, "earlier diagnostic")) } else { String::new() };
    let listing = o.files.iter().map(|f| format!("{} ({})", f.path, f.new_count)).collect::<Vec<_>>().join(", ");
    let new_in_files = format!("new diagnostics in {} ({scope}): {listing}", count(o.files.len(), "other file"));
    match o.status {
        "failed" => {
            let why = o.error.as_deref().unwrap_or("");
            let _ = writeln!(text, "diagnostics of other files unavailable ({}): {why}", o.server);
        }
        "not checked" => {
            let _ = writeln!(text, "other files not checked: {} reports only the written file", o.server);
        }
        "none" => {
            let _ = writeln!(text, "no other file {imports} {target} ({})", o.server);
        }
        "pending" => {
            let waiting = if o.pending.is_empty() {
                format!("{} had not settled when the wait ran out", o.server)
            } else {
                format!("{} had not answered for {} when the wait ran out", o.server, o.pending.join(", "))
            };
            let _ = writeln!(text, "diagnostics of other files pending: {waiting}");
            if total > 0 {
                let _ = writeln!(text, "so far, {new_in_files}:");
            }
        }
        "new" => {
            let _ = writeln!(text, "{new_in_files}{fixed}:");
        }
        _ => {
            let _ = writeln!(text, "no new diagnostics in other files ({scope}){fixed}");
        }
    }
    let mut listed = 0;
    for file in &o.files {
        if !file.baseline_known {
            let _ =
                writeln!(text, "(what {} had before this write could not be read, so some may be older)", file.path);
        }
        for d in &file.new {
            if *budget == 0 {
                break;
            }
            let _ = writeln!(text, "{}", d.line());
            *budget -= 1;
            listed += 1;
        }
    }
    if listed < total {
        let _ = writeln!(text, "… {} more in other files ({total} in all)", total - listed);
    }
    text.trim_end().to_string()
}
