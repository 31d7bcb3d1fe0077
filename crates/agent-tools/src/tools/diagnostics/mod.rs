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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lsp_supervisor::{Diagnostic, Error as LspError, OtherFilesBefore, Supervisor};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool, Words};
use crate::tools::lsp::DiagnosticOutput;
use crate::tools::lsp::reporting_servers;
use crate::workspace::Workspace;

mod ledger;
mod output;
mod words;

pub use output::*;

use ledger::{Ledger, OtherFilesOutcome, fold_other, gone, multiset, new_in};
use words::other_value;

/// At most this many diagnostics of other files are listed in a write's text (all are counted).
pub const OTHER_LISTED: usize = 20;

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
    /// The file written, as given to [`DiagnosticsOnWrite::after_write`].
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl DiagnosticsOnWrite {
    /// Diagnostics on write through `supervisor`'s servers, with an empty ledger.
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

    /// What diagnostics on write adds to a write's value for `paths` (the
    /// written files' entries, and per server its other files'); `None` when
    /// no path is a file a language server is known for.
    pub async fn check(&self, paths: &[PathBuf], others: OtherFilesBefore) -> Option<WriteDiagnosticsOutput> {
        let started = std::time::Instant::now();
        let mut items = Vec::new();
        let mut pending = Vec::new();
        for path in paths {
            let rel = self.workspace.relative(path).display().to_string();
            let unchecked = |status, language, why, error, said_before| WrittenFileOutput::Unchecked {
                path: rel.clone(),
                status,
                language,
                why,
                error,
                said_before,
            };
            if !path.exists() {
                // Deleted by the write: its importers may say what that broke.
                items.push(unchecked("deleted", None, None, None, false));
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
                    let said_before = !lock(&self.unusable_said).insert(language.id().to_string());
                    items.push(unchecked("unavailable", Some(language.id().to_owned()), Some(why), None, said_before));
                }
                Err(e) => items.push(unchecked("failed", None, None, Some(e.to_string()), false)),
            }
        }
        let outcomes = self.after_write_others(others, &pending, started).await;
        let other_files = outcomes.iter().map(|o| other_value(&self.workspace, o)).collect();
        (!items.is_empty()).then_some(WriteDiagnosticsOutput { diagnostics: items, other_files })
    }
}

/// A host write tool with diagnostics on write: same name, schema, tier and
/// preview; after a successful call the files its preview names are checked.
pub struct WithDiagnostics<T> {
    inner: T,
    diagnostics: Arc<DiagnosticsOnWrite>,
}

impl<T> WithDiagnostics<T> {
    /// `inner` with the diagnostics of its writes added, through `diagnostics`.
    pub fn new(inner: T, diagnostics: Arc<DiagnosticsOnWrite>) -> WithDiagnostics<T> {
        WithDiagnostics { inner, diagnostics }
    }
}

impl<T: Tool> Tool for WithDiagnostics<T> {
    type Input = T::Input;
    type Output = Checked<T::Output>;
    const NAME: &'static str = T::NAME;
    const TIER: Tier = T::TIER;
    const PARALLEL_SAFE: bool = T::PARALLEL_SAFE;
    const DESTRUCTIVE: bool = T::DESTRUCTIVE;

    fn preview(&self, input: &Self::Input) -> CallPreview {
        self.inner.preview(input)
    }

    async fn call(&self, input: Self::Input, cx: &CallContext) -> Result<Reply<Checked<T::Output>>> {
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
        let written = match self.inner.call(input, cx).await? {
            Ok(written) if !written.is_error() => written,
            failed => return Ok(failed.map(|written| Checked { written, diagnostics: None })),
        };
        let diagnostics = reporting_servers(supervisor, cx, self.diagnostics.check(&paths, others)).await;
        Ok(Ok(Checked { written, diagnostics }))
    }
}

/// A write tool's value with what diagnostics on write found: the wrapped
/// tool's fields, and `diagnostics` and `other_files` beside them when a file
/// of the write has a language. Its schema is the wrapped tool's, with those
/// two as optional properties.
#[derive(Debug, Clone, Serialize)]
pub struct Checked<O> {
    /// The wrapped tool's value.
    #[serde(flatten)]
    pub written: O,
    /// What the write did to diagnostics; `None` when no file of the write has a language.
    #[serde(flatten)]
    pub diagnostics: Option<WriteDiagnosticsOutput>,
}

impl<O: JsonSchema> JsonSchema for Checked<O> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Checked_{}", O::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = O::json_schema(generator);
        let added = WriteDiagnosticsOutput::json_schema(generator);
        if let (Some(properties), Some(more)) = (
            schema.get_mut("properties").and_then(serde_json::Value::as_object_mut),
            added.get("properties").and_then(serde_json::Value::as_object),
        ) {
            properties.extend(more.clone());
        }
        schema
    }
}

impl<O: Words> Words for Checked<O> {
    const STRUCTURED: bool = O::STRUCTURED;

    fn words(&self) -> String {
        let written = self.written.words();
        match self.diagnostics.as_ref().map(WriteDiagnosticsOutput::words) {
            Some(checked) if !checked.is_empty() => format!("{written}\n\n{checked}"),
            _ => written,
        }
    }

    fn is_error(&self) -> bool {
        self.written.is_error()
    }

    fn take_images(&mut self) -> Vec<crate::result::Image> {
        self.written.take_images()
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
