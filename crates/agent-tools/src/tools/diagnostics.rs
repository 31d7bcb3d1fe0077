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

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lsp_supervisor::{Diagnostic, Error as LspError, Supervisor};
use serde_json::{Value, json};

use crate::error::Result;
use crate::result::ToolResult;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::tools::lsp::{diagnostic_json, diagnostic_line};
use crate::workspace::Workspace;

type Key = (String, String, String); // (severity, code, message); the file is the map key.

/// The per-run ledger and the supervisor it asks.
#[derive(Debug)]
pub struct DiagnosticsOnWrite {
    supervisor: Arc<Supervisor>,
    workspace: Workspace,
    /// Per file: what it has as far as reported; `None` when its baseline could
    /// not be read (no answer in time, server failing), so nothing is known to be old.
    ledger: Mutex<HashMap<PathBuf, Option<HashMap<Key, usize>>>>,
    /// Languages already said to have no usable server (said once per run).
    unusable_said: Mutex<HashSet<String>>,
}

/// What a write's sync found.
#[derive(Debug, Clone)]
pub struct WriteReport {
    pub path: PathBuf,
    pub server: &'static str,
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
    (d.severity.as_str().to_string(), d.code.clone().unwrap_or_default(), d.message.clone())
}

fn multiset(diagnostics: &[Diagnostic]) -> HashMap<Key, usize> {
    let mut out = HashMap::new();
    for d in diagnostics {
        *out.entry(key(d)).or_default() += 1;
    }
    out
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
        let mut seen: HashMap<Key, usize> = HashMap::new();
        let mut new = Vec::new();
        for d in &report.diagnostics {
            let k = key(d);
            let n = seen.entry(k.clone()).or_default();
            *n += 1;
            if *n > known.get(&k).copied().unwrap_or(0) {
                new.push(d.clone());
            }
        }
        let mut fixed = 0;
        if report.complete {
            fixed = known.iter().map(|(k, n)| n.saturating_sub(current.get(k).copied().unwrap_or(0))).sum();
            *entry = Some(current);
        }
        Ok(WriteReport {
            path: path.to_path_buf(),
            server: report.server,
            new,
            complete: report.complete,
            fixed,
            baseline_known,
        })
    }

    /// The text and JSON appended to a write's result for `paths`; `None` when
    /// no path is a file a language server is known for.
    pub async fn check(&self, paths: &[PathBuf]) -> Option<(String, Value)> {
        let mut text = String::new();
        let mut items = Vec::new();
        for path in paths {
            let rel = self.workspace.relative(path).display().to_string();
            match self.after_write(path).await {
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
                    let fixed = if report.fixed > 0 {
                        format!("; {} gone", crate::tools::lsp::count(report.fixed, "earlier diagnostic"))
                    } else {
                        String::new()
                    };
                    match status {
                        "pending" => {
                            let _ = writeln!(
                                text,
                                "diagnostics pending for {rel}: {} had not published for the written text when the wait ran out{}",
                                report.server,
                                if report.new.is_empty() { String::new() } else { "; so far:".to_string() }
                            );
                        }
                        "no new" => {
                            let _ = writeln!(text, "no new diagnostics in {rel} ({}){fixed}", report.server);
                        }
                        "unknown baseline" => {
                            let _ = writeln!(
                                text,
                                "diagnostics in {rel} ({}); what it had before this write could not be read, so some may be older:",
                                report.server
                            );
                        }
                        _ => {
                            let _ = writeln!(text, "new diagnostics in {rel} ({}){fixed}:", report.server);
                        }
                    }
                    for d in &report.new {
                        let _ = writeln!(text, "{}", diagnostic_line(&self.workspace, d));
                    }
                    items.push(json!({
                        "path": rel, "server": report.server, "status": status, "fixed": report.fixed,
                        "new": report.new.iter().map(|d| diagnostic_json(&self.workspace, d)).collect::<Vec<_>>(),
                    }));
                }
                Err(LspError::UnknownLanguage(_)) => {}
                Err(LspError::NoServer { language, why }) => {
                    if lock(&self.unusable_said).insert(language.id().to_string()) {
                        let _ = writeln!(
                            text,
                            "no diagnostics for {rel}: no {language} language server is usable here ({why})"
                        );
                    }
                    items.push(json!({ "path": rel, "status": "unavailable", "why": why }));
                }
                Err(e) => {
                    let _ = writeln!(text, "diagnostics unavailable for {rel}: {e}");
                    items.push(json!({ "path": rel, "status": "failed", "error": e.to_string() }));
                }
            }
        }
        (!items.is_empty()).then(|| (text.trim_end().to_string(), Value::Array(items)))
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
        for path in &paths {
            // A baseline that cannot be taken (no server) is reported after the write.
            let _ = self.diagnostics.before_write(path).await;
        }
        let mut result = self.inner.call(input, cx).await?;
        if result.is_error {
            return Ok(result);
        }
        if let Some((text, value)) = self.diagnostics.check(&paths).await {
            if !text.is_empty() {
                result.text = format!("{}\n\n{text}", result.text);
            }
            let mut structured = match result.structured.take() {
                Some(Value::Object(map)) => Value::Object(map),
                Some(other) => json!({ "result": other }),
                None => json!({}),
            };
            structured["diagnostics"] = value;
            result.structured = Some(structured);
        }
        Ok(result)
    }
}
