//! Diagnostics on write: a wrapper for the host's write/edit/apply_patch
//! tools. After the wrapped tool writes, each file it names (its
//! [`CallPreview::paths`]) is synced with its language server (change, then
//! save) and only the diagnostics the write introduced are appended to the result.
//!
//! The ledger (one per run) keys a diagnostic by (file, severity, code,
//! message) — position excluded, so a diagnostic that only moved is not new —
//! and counts them as a multiset, so a second identical error is new. A
//! file's first sync (before its first wrapped write) is its baseline. After
//! each complete report the file's entry becomes exactly what the server
//! published, so a diagnostic that disappears and comes back is new again.
//! When the server has not published for the written text in time the result
//! says "pending", never "clean", and the ledger is left as it was.
//!
//! Other files: the write's new diagnostics in files it did not touch (a
//! caller broken by a changed signature) follow in a section of their own,
//! per server, as [`lsp_supervisor::OtherFiles`] says that server gives them
//! (published by the server; read from the importers opened; or not known,
//! which the result says). The same ledger keys them; an other file's
//! baseline is what it had right before the write, so what was broken before
//! is never new. At most [`OTHER_LISTED`] of their diagnostics are listed,
//! with the count in all; a file whose diagnostics had not come when the wait
//! ran out is named as pending.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lsp_supervisor::{
    Diagnostic, Error as LspError, Language, OtherFiles, OtherFilesBefore, OtherFilesReport, Supervisor,
};
use serde_json::{Map, Value};

use crate::error::Result;
use crate::result::ToolResult;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::tools::lsp::{
    DiagnosticOutput, OtherFileOutput, OtherFilesOutput, OutsideOutput, WriteDiagnosticsOutput, WrittenFileOutput,
};
use crate::tools::lsp::{diagnostic_line, diagnostic_line_named, reporting_servers};
use crate::workspace::Workspace;

/// (server, severity, code, message); the file is the map key. The server is in
/// it so that one server's report (other files are the primary's alone) is
/// compared with what that server reported before, not with its helpers'.
type Key = (String, String, String, String);
type Ledger = HashMap<PathBuf, Option<HashMap<Key, usize>>>;

/// At most this many diagnostics of other files are listed in a write's text (all are counted).
pub const OTHER_LISTED: usize = 20;
/// At most this many of one other file's new diagnostics are in the structured result (all are counted).
const OTHER_JSON_PER_FILE: usize = 100;

/// The per-run ledger and the supervisor it asks.
#[derive(Debug)]
pub struct DiagnosticsOnWrite {
    supervisor: Arc<Supervisor>,
    workspace: Workspace,
    /// Per file: what it has as far as reported; `None` when its baseline could
    /// not be read (no answer in time, server failing), so nothing is known to be old.
    ledger: Mutex<Ledger>,
    /// Languages already said to have no usable server (said once per run).
    unusable_said: Mutex<HashSet<String>>,
}

/// What a write's sync found.
#[derive(Debug, Clone)]
pub struct WriteReport {
    pub path: PathBuf,
    /// The language's primary server.
    pub server: &'static str,
    /// The helpers that answered too.
    pub helpers: Vec<&'static str>,
    /// The helpers that did not answer: their findings are missing.
    pub helpers_failed: Vec<lsp_supervisor::HelperFailure>,
    /// Diagnostics the write introduced.
    pub new: Vec<Diagnostic>,
    /// False when the server had not published for the written text in time.
    pub complete: bool,
    /// How many diagnostics the file had before the write and no longer has.
    pub fixed: usize,
    /// False when the file's diagnostics before its first write could not be
    /// read: then every diagnostic it has is listed, and some may be older.
    pub baseline_known: bool,
}

fn key(d: &Diagnostic) -> Key {
    (
        d.server.unwrap_or_default().to_string(),
        d.severity.as_str().to_string(),
        d.code.clone().unwrap_or_default(),
        d.message.clone(),
    )
}

fn multiset(diagnostics: &[Diagnostic]) -> HashMap<Key, usize> {
    let mut out = HashMap::new();
    for d in diagnostics {
        *out.entry(key(d)).or_default() += 1;
    }
    out
}

/// The diagnostics of `now` beyond what `known` counts, in order.
fn new_in(now: &[Diagnostic], known: &HashMap<Key, usize>) -> Vec<Diagnostic> {
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let mut new = Vec::new();
    for d in now {
        let k = key(d);
        let n = seen.entry(k.clone()).or_default();
        *n += 1;
        if *n > known.get(&k).copied().unwrap_or(0) {
            new.push(d.clone());
        }
    }
    new
}

/// The entries of `known` that `server` reported.
fn only_of(known: HashMap<Key, usize>, server: &str) -> HashMap<Key, usize> {
    known.into_iter().filter(|(k, _)| k.0 == server).collect()
}

/// How many of `known` are no longer in `current`.
fn gone(known: &HashMap<Key, usize>, current: &HashMap<Key, usize>) -> usize {
    known.iter().map(|(k, n)| n.saturating_sub(current.get(k).copied().unwrap_or(0))).sum()
}

/// What a write did to one other file.
#[derive(Debug, Clone, PartialEq)]
pub struct OtherFileReport {
    pub path: PathBuf,
    /// Diagnostics the write introduced.
    pub new: Vec<Diagnostic>,
    /// How many it had before and no longer has.
    pub fixed: usize,
    /// False when what it had before is unknown: every diagnostic it has is listed.
    pub baseline_known: bool,
}

/// What a write did to the other files one server tells of.
#[derive(Debug, Clone)]
pub struct OtherFilesOutcome {
    pub server: &'static str,
    pub way: OtherFiles,
    pub written: Vec<PathBuf>,
    /// The other files with new diagnostics, those with none left out.
    pub files: Vec<OtherFileReport>,
    /// How many other files were looked at (published anew, or importers read).
    pub looked_at: usize,
    pub fixed: usize,
    pub pending: Vec<PathBuf>,
    pub importers: usize,
    pub checked: usize,
    /// Importers read that the server's configuration leaves out, with why.
    pub outside: Vec<(PathBuf, String)>,
    pub complete: bool,
    pub error: Option<String>,
}

/// Folds one server's report on other files into the ledger: each file's
/// baseline is what it had right before the write (when that is known; else
/// the ledger's entry, else unknown); a complete report leaves each file's
/// entry as it is now.
fn fold_other(ledger: &mut Ledger, report: OtherFilesReport) -> OtherFilesOutcome {
    let mut files = Vec::new();
    let mut fixed = 0;
    let looked_at = report.files.len();
    for file in report.files {
        let current = multiset(&file.now);
        let entry = ledger.get(&file.path).cloned().flatten();
        let baseline = match &file.before {
            Some(before) => Some(multiset(before)),
            None => entry.clone().map(|known| only_of(known, report.server)),
        };
        let known = baseline.clone().unwrap_or_default();
        let new = new_in(&file.now, &known);
        let file_fixed = gone(&known, &current);
        fixed += file_fixed;
        if report.complete {
            // The helpers' findings in the file stay as the ledger had them.
            let mut kept = current;
            for (k, n) in entry.unwrap_or_default() {
                if k.0 != report.server {
                    *kept.entry(k).or_default() += n;
                }
            }
            ledger.insert(file.path.clone(), Some(kept));
        }
        if !new.is_empty() {
            files.push(OtherFileReport { path: file.path, new, fixed: file_fixed, baseline_known: baseline.is_some() });
        }
    }
    OtherFilesOutcome {
        server: report.server,
        way: report.way,
        written: report.written,
        files,
        looked_at,
        fixed,
        pending: report.pending,
        importers: report.importers,
        checked: report.checked,
        outside: report.outside,
        complete: report.complete,
        error: report.error,
    }
}

/// The text and structured value of one server's other-files outcome;
/// `budget` is how many more diagnostics may be listed (shared by the servers of one write).
fn render_other(ws: &Workspace, o: &OtherFilesOutcome, budget: &mut usize) -> (String, OtherFilesOutput) {
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl DiagnosticsOnWrite {
    pub fn new(supervisor: Arc<Supervisor>, workspace: Workspace) -> DiagnosticsOnWrite {
        DiagnosticsOnWrite { supervisor, workspace, ledger: Mutex::default(), unusable_said: Mutex::default() }
    }

    /// Records the file's baseline on its first sync: what it has before the
    /// first wrapped write (nothing, for a file that does not exist yet).
    pub async fn before_write(&self, path: &Path) -> std::result::Result<(), LspError> {
        if lock(&self.ledger).contains_key(path) {
            return Ok(());
        }
        let baseline = if path.is_file() {
            match self.supervisor.diagnostics(path).await {
                Ok(report) if report.complete => Some(multiset(&report.diagnostics)),
                // Not published in time: what the file had is unknown, not empty.
                Ok(_) => None,
                Err(e) => {
                    lock(&self.ledger).entry(path.to_path_buf()).or_insert(None);
                    return Err(e);
                }
            }
        } else {
            Some(HashMap::new())
        };
        lock(&self.ledger).entry(path.to_path_buf()).or_insert(baseline);
        Ok(())
    }

    /// Syncs the written file and returns what the write introduced.
    pub async fn after_write(&self, path: &Path) -> std::result::Result<WriteReport, LspError> {
        let report = self.supervisor.diagnostics_after_write(path).await?;
        let current = multiset(&report.diagnostics);
        let mut ledger = lock(&self.ledger);
        let entry = ledger.entry(path.to_path_buf()).or_insert(None);
        let baseline_known = entry.is_some();
        let known = entry.clone().unwrap_or_default();
        let new = new_in(&report.diagnostics, &known);
        let mut fixed = 0;
        if report.complete {
            fixed = gone(&known, &current);
            *entry = Some(current);
        }
        Ok(WriteReport {
            path: path.to_path_buf(),
            server: report.server,
            helpers: report.helpers,
            helpers_failed: report.helpers_failed,
            new,
            complete: report.complete,
            fixed,
            baseline_known,
        })
    }

    /// What the files `paths` do not name have before the write of `paths`
    /// (see [`Supervisor::other_files_before_write`]); called after
    /// [`DiagnosticsOnWrite::before_write`] of each, right before the write.
    pub async fn before_write_others(&self, paths: &[PathBuf]) -> OtherFilesBefore {
        let mut before = self.supervisor.other_files_before_write(paths).await;
        before.mark_write();
        before
    }

    /// Folds what the servers tell of other files after the write into the
    /// ledger. `pending`: written files whose own diagnostics were not had.
    pub async fn after_write_others(
        &self,
        before: OtherFilesBefore,
        pending: &[PathBuf],
        started: std::time::Instant,
    ) -> Vec<OtherFilesOutcome> {
        let reports = self.supervisor.other_files_after_write(before, pending, started).await;
        let mut ledger = lock(&self.ledger);
        reports.into_iter().map(|r| fold_other(&mut ledger, r)).collect()
    }

    /// The text and JSON appended to a write's result for `paths` (the
    /// written files' entries, and per server its other files'); `None` when
    /// no path is a file a language server is known for.
    pub async fn check(&self, paths: &[PathBuf], others: OtherFilesBefore) -> Option<(String, WriteDiagnosticsOutput)> {
        let started = std::time::Instant::now();
        let mut text = String::new();
        let mut items = Vec::new();
        let mut pending = Vec::new();
        for path in paths {
            let rel = self.workspace.relative(path).display().to_string();
            if !path.exists() {
                // Deleted by the write: its importers may say what that broke.
                items.push(WrittenFileOutput::Unchecked { path: rel, status: "deleted", why: None, error: None });
                continue;
            }
            let report = self.after_write(path).await;
            if !report.as_ref().is_ok_and(|r| r.complete) {
                pending.push(path.clone());
            }
            match report {
                Ok(report) => {
                    let status = if !report.complete {
                        "pending"
                    } else if report.new.is_empty() {
                        "no new"
                    } else if !report.baseline_known {
                        "unknown baseline"
                    } else {
                        "new"
                    };
                    // The servers that answered: the primary, then its helpers.
                    let servers =
                        std::iter::once(report.server).chain(report.helpers.iter().copied()).collect::<Vec<_>>();
                    let shown = servers.join(" + ");
                    let fixed = if report.fixed > 0 {
                        format!("; {} gone", crate::tools::lsp::count(report.fixed, "earlier diagnostic"))
                    } else {
                        String::new()
                    };
                    match status {
                        "pending" if !report.helpers_failed.is_empty() => {
                            let missing: Vec<String> = report
                                .helpers_failed
                                .iter()
                                .map(|f| format!("{} did not answer ({})", f.server, f.why))
                                .collect();
                            let _ = writeln!(
                                text,
                                "diagnostics pending for {rel}: {}{}",
                                missing.join("; "),
                                if report.new.is_empty() { String::new() } else { format!("; so far, from {shown}:") }
                            );
                        }
                        "pending" => {
                            let _ = writeln!(
                                text,
                                "diagnostics pending for {rel}: {} had not published for the written text when the wait ran out{}",
                                servers.join(" or "),
                                if report.new.is_empty() { String::new() } else { "; so far:".to_string() }
                            );
                        }
                        "no new" => {
                            let _ = writeln!(text, "no new diagnostics in {rel} ({shown}){fixed}");
                        }
                        "unknown baseline" => {
                            let _ = writeln!(
                                text,
                                "diagnostics in {rel} ({shown}); what it had before this write could not be read, so some may be older:"
                            );
                        }
                        _ => {
                            let _ = writeln!(text, "new diagnostics in {rel} ({shown}){fixed}:");
                        }
                    }
                    for d in &report.new {
                        let mixed = !report.helpers.is_empty();
                        let _ = writeln!(text, "{}", diagnostic_line_named(&self.workspace, d, mixed));
                    }
                    items.push(WrittenFileOutput::Checked {
                        path: rel,
                        server: report.server,
                        helpers: report.helpers.clone(),
                        helpers_failed: crate::tools::lsp::helper_failures(&report.helpers_failed),
                        status,
                        fixed: report.fixed,
                        new: report.new.iter().map(|d| DiagnosticOutput::new(&self.workspace, d)).collect(),
                    });
                }
                Err(LspError::UnknownLanguage(_)) => {}
                Err(LspError::NoServer { language, why }) => {
                    if lock(&self.unusable_said).insert(language.id().to_string()) {
                        let _ = writeln!(
                            text,
                            "no diagnostics for {rel}: no {language} language server is usable here ({why})"
                        );
                    }
                    items.push(WrittenFileOutput::Unchecked {
                        path: rel,
                        status: "unavailable",
                        why: Some(why),
                        error: None,
                    });
                }
                Err(e) => {
                    let _ = writeln!(text, "diagnostics unavailable for {rel}: {e}");
                    items.push(WrittenFileOutput::Unchecked {
                        path: rel,
                        status: "failed",
                        why: None,
                        error: Some(e.to_string()),
                    });
                }
            }
        }
        let mut other_items = Vec::new();
        let mut budget = OTHER_LISTED;
        for outcome in self.after_write_others(others, &pending, started).await {
            let (other_text, value) = render_other(&self.workspace, &outcome, &mut budget);
            let _ = writeln!(text, "{other_text}");
            other_items.push(value);
        }
        (!items.is_empty()).then(|| {
            (text.trim_end().to_string(), WriteDiagnosticsOutput { diagnostics: items, other_files: other_items })
        })
    }
}

/// A host write tool with diagnostics on write: same name, schema, tier and
/// preview; after a successful call the files its preview names are checked.
pub struct WithDiagnostics<T> {
    inner: T,
    diagnostics: Arc<DiagnosticsOnWrite>,
}

impl<T> WithDiagnostics<T> {
    pub fn new(inner: T, diagnostics: Arc<DiagnosticsOnWrite>) -> WithDiagnostics<T> {
        WithDiagnostics { inner, diagnostics }
    }
}

impl<T: Tool> Tool for WithDiagnostics<T> {
    type Input = T::Input;
    const NAME: &'static str = T::NAME;
    const TIER: Tier = T::TIER;
    const PARALLEL_SAFE: bool = T::PARALLEL_SAFE;
    const DESTRUCTIVE: bool = T::DESTRUCTIVE;

    fn preview(&self, input: &Self::Input) -> CallPreview {
        self.inner.preview(input)
    }

    /// The wrapped tool's schema, with `diagnostics` and `other_files` as
    /// optional properties (present when a file of the write has a language).
    fn output_schema() -> Option<Map<String, Value>> {
        let mut schema = T::output_schema()?;
        let added = crate::schema::output_schema::<WriteDiagnosticsOutput>();
        if let (Some(Value::Object(properties)), Some(Value::Object(more))) =
            (schema.get_mut("properties"), added.get("properties"))
        {
            properties.extend(more.clone());
        }
        Some(schema)
    }

    async fn call(&self, input: Self::Input, cx: &CallContext) -> Result<ToolResult> {
        let root = self.diagnostics.workspace.root().to_path_buf();
        let paths: Vec<PathBuf> = self
            .inner
            .preview(&input)
            .paths
            .into_iter()
            .map(|p| if p.is_absolute() { p } else { root.join(p) })
            .filter(|p| p != &root && lsp_supervisor::Language::from_path(p).is_some())
            .collect();
        let supervisor = &self.diagnostics.supervisor;
        let baselines = async {
            for path in &paths {
                // A baseline that cannot be taken (no server) is reported after the write.
                let _ = self.diagnostics.before_write(path).await;
            }
            self.diagnostics.before_write_others(&paths).await
        };
        let others = reporting_servers(supervisor, cx, baselines).await;
        let mut result = self.inner.call(input, cx).await?;
        if result.is_error {
            return Ok(result);
        }
        let checked = reporting_servers(supervisor, cx, self.diagnostics.check(&paths, others)).await;
        if let Some((text, added)) = checked {
            if !text.is_empty() {
                result.text = format!("{}\n\n{text}", result.text);
            }
            // The wrapped tool's value is an object (MCP's structuredContent is one); the two fields join it.
            if let (Some(Value::Object(structured)), Ok(Value::Object(added))) =
                (&mut result.structured, serde_json::to_value(added))
            {
                structured.extend(added);
            }
        }
        Ok(result)
    }
}

impl crate::registry::RegistryBuilder {
    /// Registers the plain `write`, `edit` and `apply_patch` file tools, each wrapped
    /// with diagnostics on write ([`WithDiagnostics`]).
    pub fn with_checked_file_tools(
        self,
        workspace: crate::workspace::Workspace,
        diagnostics: Arc<DiagnosticsOnWrite>,
    ) -> crate::registry::RegistryBuilder {
        use crate::tools::files::{ApplyPatch, EditFile, WriteFile};
        self.register(WithDiagnostics::new(WriteFile(workspace.clone()), Arc::clone(&diagnostics)))
            .register(WithDiagnostics::new(EditFile(workspace.clone()), Arc::clone(&diagnostics)))
            .register(WithDiagnostics::new(ApplyPatch(workspace), diagnostics))
    }
}

#[cfg(test)]
mod tests {
    use lsp_supervisor::{Location, OtherFile, Severity};

    use super::*;

    fn d(path: &str, line: u32, code: &str, message: &str) -> Diagnostic {
        let location =
            Location { path: PathBuf::from(path), line, column: 1, end_line: line, end_column: 2, text: String::new() };
        Diagnostic {
            server: Some("srv"),
            location,
            severity: Severity::Error,
            code: Some(code.into()),
            source: None,
            message: message.into(),
        }
    }

    fn report(way: OtherFiles, files: Vec<OtherFile>) -> OtherFilesReport {
        OtherFilesReport {
            server: "srv",
            way,
            written: vec![PathBuf::from("/r/lib.py")],
            files,
            pending: Vec::new(),
            importers: 2,
            checked: 2,
            outside: Vec::new(),
            complete: true,
            error: None,
        }
    }

    fn file(path: &str, before: Option<Vec<Diagnostic>>, now: Vec<Diagnostic>) -> OtherFile {
        OtherFile { path: PathBuf::from(path), before, now }
    }

    /// `(text, status)` of one report folded into `ledger`.
    fn check(ledger: &mut Ledger, r: OtherFilesReport) -> (String, String) {
        let ws = Workspace::new("/").unwrap_or_else(|e| panic!("{e}"));
        let outcome = fold_other(ledger, r);
        let mut budget = 3;
        let (text, value) = render_other(&ws, &outcome, &mut budget);
        (text, value.status.to_string())
    }

    #[test]
    fn what_another_file_had_right_before_the_write_is_never_new() {
        let mut ledger = Ledger::new();
        let old = d("/r/a.py", 3, "E1", "old");
        let broken = d("/r/a.py", 9, "E2", "missing argument");
        // The old error moved; one identical to it is new, as is the broken call.
        let r = report(
            OtherFiles::Importers,
            vec![
                file(
                    "/r/a.py",
                    Some(vec![old.clone()]),
                    vec![old.clone(), d("/r/a.py", 4, "E1", "old"), broken.clone()],
                ),
                file("/r/b.py", Some(vec![old.clone()]), vec![]),
            ],
        );
        let (text, status) = check(&mut ledger, r);
        assert_eq!(status, "new");
        assert_eq!(
            text,
            "new diagnostics in 1 other file (srv; 2 files import r/lib.py): r/a.py (2); 1 earlier diagnostic gone:\n\
             r/a.py:4:1 error[E1]: old\nr/a.py:9:1 error[E2]: missing argument"
        );
        // The ledger now holds what each file has.
        assert_eq!(ledger[Path::new("/r/b.py")], Some(HashMap::new()));
        // Unknown before: the ledger's entry is the baseline.
        let r = report(OtherFiles::Published, vec![file("/r/a.py", None, vec![broken.clone(), old.clone()])]);
        let (text, status) = check(&mut ledger, r);
        assert_eq!(
            (text.as_str(), status.as_str()),
            ("no new diagnostics in other files (srv); 1 earlier diagnostic gone", "no new")
        );
        // Neither known: all listed, and said to be possibly older.
        let r = report(OtherFiles::Published, vec![file("/r/c.py", None, vec![broken])]);
        let (text, _) = check(&mut ledger, r);
        assert!(text.contains("(what r/c.py had before this write could not be read, so some may be older)"), "{text}");
    }

    #[test]
    fn listing_is_capped_with_the_count_in_all_and_pending_is_never_clean() {
        let mut ledger = Ledger::new();
        let now: Vec<Diagnostic> = (1..=5).map(|i| d("/r/a.go", i, "WrongArgCount", "not enough arguments")).collect();
        let (text, _) = check(&mut ledger, report(OtherFiles::Published, vec![file("/r/a.go", Some(vec![]), now)]));
        assert!(text.starts_with("new diagnostics in 1 other file (srv): r/a.go (5):\n"), "{text}");
        assert!(
            text.ends_with("r/a.go:3:1 error[WrongArgCount]: not enough arguments\n… 2 more in other files (5 in all)"),
            "{text}"
        );
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.complete, r.pending) = (false, vec![PathBuf::from("/r/b.py")]);
        let (text, status) = check(&mut ledger, r);
        assert_eq!(status, "pending");
        assert_eq!(text, "diagnostics of other files pending: srv had not answered for r/b.py when the wait ran out");
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.importers, r.checked) = (34, 20);
        assert_eq!(
            check(&mut ledger, r).0,
            "no new diagnostics in other files (srv; 34 files import r/lib.py, the nearest 20 read, 14 not)"
        );
        // An importer the server's configuration leaves out is named: what it says of it may not see the write.
        let mut r = report(OtherFiles::Importers, vec![]);
        r.outside = vec![(PathBuf::from("/r/tests/test_lib.py"), "pyright's configuration includes only src".into())];
        assert_eq!(
            check(&mut ledger, r).0,
            "no new diagnostics in other files (srv; 2 files import r/lib.py; not in its project: r/tests/test_lib.py \
             (pyright's configuration includes only src), so what srv says of it may not see this write)"
        );
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.importers, r.checked) = (0, 0);
        assert_eq!(check(&mut ledger, r), ("no other file imports r/lib.py (srv)".to_string(), "none".to_string()));
        let r = report(OtherFiles::WrittenOnly, vec![]);
        assert_eq!(check(&mut ledger, r).0, "other files not checked: srv reports only the written file");
    }
}
