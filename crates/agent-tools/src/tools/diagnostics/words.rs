//! The text the model reads of what a write did to other files' diagnostics, beside its
//! structured value.

use std::fmt::Write as _;
use std::path::Path;

use lsp_supervisor::{Language, OtherFiles};

use crate::tools::lsp::{DiagnosticOutput, OtherFileOutput, OtherFilesOutput, OutsideOutput, diagnostic_line};
use crate::workspace::Workspace;

use super::ledger::OtherFilesOutcome;

/// At most this many of one other file's new diagnostics are in the structured result (all are counted).
pub(super) const OTHER_JSON_PER_FILE: usize = 100;

/// The text and structured value of one server's other-files outcome;
/// `budget` is how many more diagnostics may be listed (shared by the servers of one write).
pub(super) fn render_other(ws: &Workspace, o: &OtherFilesOutcome, budget: &mut usize) -> (String, OtherFilesOutput) {
    use crate::tools::lsp::count;
    let rel = |p: &Path| ws.relative(p).display().to_string();
    let total: usize = o.files.iter().map(|f| f.new.len()).sum();
    let c_like = o.written.iter().any(|w| matches!(Language::from_path(w), Some(Language::C | Language::Cpp)));
    let (import, imports) = if c_like { ("include", "includes") } else { ("import", "imports") };
    let target = match o.written.as_slice() {
        [one] => rel(one),
        _ => "the written files".to_string(),
    };
    let mut text = String::new();
    // Which files were looked at: all the server published, or the importers read.
    let scope = match o.way {
        OtherFiles::Importers => {
            let verb = if o.importers == 1 { imports } else { import };
            let read = if o.checked < o.importers {
                format!(", the nearest {} read, {} not", o.checked, o.importers - o.checked)
            } else {
                String::new()
            };
            let outside = match o.outside.first() {
                Some((_, why)) => format!(
                    "; not in its project: {} ({why}), so what {} says of {} may not see this write",
                    o.outside.iter().map(|(p, _)| rel(p)).collect::<Vec<_>>().join(", "),
                    o.server,
                    if o.outside.len() == 1 { "it" } else { "them" }
                ),
                None => String::new(),
            };
            format!("{}; {} {verb} {target}{read}{outside}", o.server, count(o.importers, "file"))
        }
        _ => o.server.to_string(),
    };
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
    let fixed = if o.fixed > 0 { format!("; {} gone", count(o.fixed, "earlier diagnostic")) } else { String::new() };
    let listing = o.files.iter().map(|f| format!("{} ({})", rel(&f.path), f.new.len())).collect::<Vec<_>>().join(", ");
    let new_in_files = format!("new diagnostics in {} ({scope}): {listing}", count(o.files.len(), "other file"));
    match status {
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
                let names: Vec<String> = o.pending.iter().map(|p| rel(p)).collect();
                format!("{} had not answered for {} when the wait ran out", o.server, names.join(", "))
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
            let _ = writeln!(
                text,
                "(what {} had before this write could not be read, so some may be older)",
                rel(&file.path)
            );
        }
        for d in &file.new {
            if *budget == 0 {
                break;
            }
            let _ = writeln!(text, "{}", diagnostic_line(ws, d));
            *budget -= 1;
            listed += 1;
        }
    }
    if listed < total {
        let _ = writeln!(text, "… {} more in other files ({total} in all)", total - listed);
    }
    let importers = o.way == OtherFiles::Importers;
    let value = OtherFilesOutput {
        server: o.server,
        way: o.way,
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
    };
    (text.trim_end().to_string(), value)
}
