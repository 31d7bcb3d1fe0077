//! Diagnostics: pulled, asked of tsserver, or waited for as publications,
//! until the list is final or the wait runs out.
//!
//! After a write, also the diagnostics of the files the write did not touch
//! ([`Supervisor::other_files_before_write`], then
//! [`Supervisor::other_files_after_write`]), each server's way
//! ([`OtherFiles`]):
//! - **published** (gopls, rust-analyzer): the server publishes every file a
//!   change affects. Before the write it is let settle (idle, then quiet for
//!   [`crate::SupervisorConfig::settle_empty`]) and what it has published is
//!   kept; after the write it is let settle again, and every publication newer
//!   than the write, for a file under the root that was not written, is taken,
//!   with the kept one as what the file had before (none kept: nothing). gopls
//!   is started with `diagnosticsDelay` 0, so the packages that depend on a
//!   changed one come in the same round; rust-analyzer's come from the `cargo
//!   check` the save starts (a crate whose dependency fails to compile is not
//!   checked, so its files lose their diagnostics until that is fixed).
//! - **importers** (pyright in `openFilesOnly` mode, clangd, tsserver): the
//!   server reports open files only. The files that import the written one
//!   (`import`/`from`, `#include` through headers, relative module specifiers,
//!   each re-export followed to the files that import through it: a text scan
//!   of the root, nearest first) are opened before the write, at
//!   most [`MAX_IMPORTERS`], and their diagnostics read then as the baseline;
//!   after the write each one's are read again: pulled (pyright answers
//!   `textDocument/diagnostic` against the texts it has now), asked of tsserver
//!   (typescript-language-server; `semanticDiagnosticsSync` and the others
//!   answer only for files a project holds, "No Project" otherwise, hence the
//!   opening), or a publication newer than the write (clangd reparses its open
//!   files on a save).
//! - **written only** (pylsp, ruff): nothing is known of other files, and the
//!   report says so.
//!
//! Only findings for the text after the write count: a file whose answer has
//! not come when the wait runs out is pending, never clean.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::request::{self as req, Request};
use lsp_types::{
    Diagnostic as Item, DiagnosticSeverity, DocumentDiagnosticReport, DocumentDiagnosticReportResult, NumberOrString,
    Position, Range, TextDocumentIdentifier,
};
use serde::Serialize;
use serde_json::Value;

use crate::encoding::{PositionEncoding, lines};
use crate::error::{Error, Result};
use crate::navigation::range_to_location;
use crate::results::{Diagnostic, FileDiagnostics, HelperFailure, Severity};
use crate::server::Server;
use crate::spec::{Language, OtherFiles};
use crate::supervisor::Supervisor;
use crate::uri::file_uri;

/// How close together two lists of one turn of rust-analyzer's arrive at most, for
/// the later-sent one to be taken as the later (see `pulled_and_checked`).
const SWAPPED_WITHIN: Duration = Duration::from_millis(50);

/// At most this many files that import a written one are opened and read per write.
pub const MAX_IMPORTERS: usize = 20;

/// How long the check a save starts (rust-analyzer's `cargo check`) may take
/// to begin. Usually well under a second; a loaded machine takes longer, and a
/// check that never showed is reported as not final rather than waited out.
const CHECK_START: Duration = Duration::from_secs(5);

impl Supervisor {
    /// `after_write`: the file is saved whatever the server. Otherwise it is saved
    /// only for a server whose compiler findings come from a check on save
    /// (rust-analyzer), which would else report only what it sees itself.
    async fn file_diagnostics(&self, path: &Path, after_write: bool) -> Result<FileDiagnostics> {
        let (server, language) = self.server_for(path).await?;
        let helpers = async {
            let started = self.helpers_for(path, language, server.spec.id).await;
            let asked = started.into_iter().map(|helper| async move {
                let helper = helper?;
                self.server_diagnostics(&helper, path, after_write)
                    .await
                    .map_err(|e| HelperFailure { server: helper.spec.id.to_owned(), why: e.to_string() })
            });
            futures_util::future::join_all(asked).await
        };
        let (primary, helpers) = tokio::join!(self.server_diagnostics(&server, path, after_write), helpers);
        let mut report = primary?;
        for answer in helpers {
            match answer {
                Ok(more) => {
                    report.helpers.push(more.server);
                    report.diagnostics.extend(more.diagnostics);
                    report.complete &= more.complete;
                    report.published_at = report.published_at.max(more.published_at);
                }
                Err(failure) => {
                    report.complete = false;
                    report.helpers_failed.push(failure);
                }
            }
        }
        // Stable: at one place, the primary's come before the helpers'.
        report.diagnostics.sort_by_key(|d| (d.location.line, d.location.column));
        Ok(report)
    }

    /// One server's diagnostics of the file, saved as [`Supervisor::file_diagnostics`] says.
    async fn server_diagnostics(&self, server: &Server, path: &Path, after_write: bool) -> Result<FileDiagnostics> {
        let saved = after_write || server.spec.checks();
        let deadline = tokio::time::Instant::now() + self.config.diagnostics_timeout;
        let (raw, complete) = self.collect_diagnostics(server, path, saved, deadline).await?;
        let pulled_at = std::time::Instant::now();
        let text = crate::encoding::read_text(path).await.unwrap_or_default();
        let file_lines: Vec<String> = lines(&text).into_iter().map(str::to_string).collect();
        let mut diagnostics = Vec::new();
        for item in &raw {
            if let Some(d) = convert_diagnostic(item, path, &file_lines, server.encoding, server.spec.id) {
                diagnostics.push(d);
            }
        }
        diagnostics.sort_by_key(|d| (d.location.line, d.location.column));
        let published_at = if server.pulls_diagnostics() || server.tsserver_request().is_some() {
            Some(pulled_at)
        } else {
            server.published(path).map(|p| p.at)
        };
        Ok(FileDiagnostics {
            server: server.spec.id,
            path: path.to_path_buf(),
            diagnostics,
            complete,
            helpers: Vec::new(),
            helpers_failed: Vec::new(),
            published_at,
        })
    }

    pub(crate) async fn file_diagnostics_raw(&self, server: &Server, path: &Path, saved: bool) -> Result<Vec<Item>> {
        let deadline = tokio::time::Instant::now() + self.config.diagnostics_timeout.min(Duration::from_secs(5));
        Ok(self.collect_diagnostics(server, path, saved, deadline).await?.0)
    }

    /// The file's diagnostics for its text now, and whether they are final.
    /// A text is "changed" until its diagnostics were once read to the end,
    /// whoever sent it to the server (this sync, another request's, or the
    /// root's watcher, which syncs a written file before this runs).
    pub(crate) async fn collect_diagnostics(
        &self,
        server: &Server,
        path: &Path,
        saved: bool,
        deadline: tokio::time::Instant,
    ) -> Result<(Vec<Item>, bool)> {
        let language = Language::from_path(path).ok_or_else(|| Error::UnknownLanguage(path.to_path_buf()))?;
        let (_, sent) = server.sync(path, language).await?;
        let (version, read_version, sent_after) = server.doc_sync(path).unwrap_or((0, -1, server.publish_seq()));
        let changed = sent || version != read_version;
        let collected = self.collect_synced(server, path, saved, changed, sent_after, deadline).await?;
        if collected.1 {
            server.mark_read(path, version);
        }
        Ok(collected)
    }

    /// [`Supervisor::collect_diagnostics`] once the file is synced: `changed`
    /// since its diagnostics were last read, its text sent after publication `before`.
    async fn collect_synced(
        &self,
        server: &Server,
        path: &Path,
        saved: bool,
        changed: bool,
        before: u64,
        deadline: tokio::time::Instant,
    ) -> Result<(Vec<Item>, bool)> {
        let mark = server.progress_begins();
        // Whether the file had findings of the server's check (those it pushes, not its own)
        // before this save, whose check clears and republishes them.
        let had_checked = server.spec.pulled_source.is_some_and(|own| has_pushed_beside(server, path, own));
        if saved {
            server.saved(path);
        }
        let mut checked = false;
        if saved && changed && server.spec.checks() {
            // The save starts a check (rust-analyzer's `cargo check`); its findings come after it ends.
            // Only the check's own progress says it began: other work the change
            // started (a reload, indexing) may begin and end before it.
            // Before the server's first check has ended, that check, which it
            // runs once loaded, is the one that covers this text.
            let first_pending = !server.spec.background_progress.is_empty() && !server.background_ended();
            let until = (tokio::time::Instant::now() + CHECK_START).min(deadline);
            while !first_pending && !server.check_began_since(mark) && server.next_change(until).await {}
            checked = first_pending || server.check_began_since(mark);
        }
        if let Some(command) = server.tsserver_request() {
            // tsserver answers once it has loaded the project: no load to wait out first.
            return tsserver_diagnostics(server, command, path, deadline).await;
        }
        // Diagnostics from a server still loading are not final.
        if server.initial_load(server.spec.load_grace, deadline).await.is_some() {
            let items = server.published(path).filter(|p| p.seq > before).map(|p| p.items).unwrap_or_default();
            return Ok((items, false));
        }
        if let Some(own) = server.spec.pulled_source
            && server.supports::<req::DocumentDiagnosticRequest>()
        {
            let (items, complete) = self.pulled_and_checked(server, path, own, checked, had_checked, deadline).await?;
            // The save's check never began: its findings are not in this answer.
            let check_missing = saved && changed && server.spec.checks() && !checked;
            return Ok((items, complete && !check_missing));
        }
        if server.pulls_diagnostics() {
            let Some(answer) = pull(server, path, deadline).await? else { return Ok((Vec::new(), false)) };
            // A "full" report has items; "unchanged" means the last pushed/pulled list stands.
            let items = match answer {
                DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(full)) => {
                    full.full_document_diagnostic_report.items
                }
                _ => server.published(path).map(|p| p.items).unwrap_or_default(),
            };
            return Ok((items, true));
        }
        let settle_empty = if server.spec.publishes_in_rounds { self.config.settle_empty } else { self.config.settle };
        // Unchanged text and an earlier publication: that publication is current.
        let after = if !changed { server.published(path).map(|p| p.seq - 1).unwrap_or(before) } else { before };
        // A server that does not publish a list again when it is unchanged: once
        // its check after the save has ended (or, without one, after a longer
        // quiet), silence means the last list stands.
        let stands = (!server.spec.publishes_unchanged).then_some(if checked {
            self.config.settle
        } else {
            self.config.settle_empty
        });
        let waits = Waits { settle: self.config.settle, settle_empty, stands };
        wait_published(server, path, after, deadline, waits).await
    }

    /// For a server that answers a pull with its own findings only and pushes
    /// a check's ([`ServerSpec::pulled_source`]: rust-analyzer and `cargo
    /// check`): its own are pulled, exact for the text just sent (a push may be
    /// a list it is still computing); the check's are the last pushed ones,
    /// once a check this save started (`checked`) has ended and its findings
    /// have had their time to be published.
    async fn pulled_and_checked(
        &self,
        server: &Server,
        path: &Path,
        own: &str,
        checked: bool,
        had_checked: bool,
        deadline: tokio::time::Instant,
    ) -> Result<(Vec<Item>, bool)> {
        // The server checks the workspace once it has loaded, and that check's
        // progress may begin a while after the load ends: until the first check
        // has ended, the check's findings are missing, whatever the pull said.
        let checks = server.spec.checks() && !server.spec.background_progress.is_empty();
        let first_check = checks && !server.background_ended();
        while first_check && !server.background_ended() && server.next_change(deadline).await {}
        // A check (this save's, or one still running from before) ends with its
        // progress; one that begins before the answer is had (a save's check
        // restarted, or the check of an earlier save) is waited for as well.
        let mut waited = checked || first_check;
        loop {
            waited |= server.busy().is_some();
            while server.busy().is_some() && server.next_change(deadline).await {}
            let ended = server.publish_seq();
            // Pulled once the check has ended: the answer comes after all the
            // server sent before it read the request, so after a publication it
            // made as the check ended.
            let Some(answer) = pull(server, path, deadline).await? else { return Ok((Vec::new(), false)) };
            // No `previousResultId` is sent, so the report is a full one with its items.
            let DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(full)) = answer else {
                return Err(Error::Protocol {
                    server: server.spec.id,
                    method: req::DocumentDiagnosticRequest::METHOD,
                    why: "a report without items, when no result id was sent".to_string(),
                });
            };
            if waited {
                // rust-analyzer clears a file's check findings while the check
                // runs and publishes them again once its own analysis of the text
                // is done, which can come after the check's end and the pull's
                // answer. A publication since the end is let settle; without one,
                // the wait is the longer quiet an empty answer gets.
                let fresh = server.published(path).is_some_and(|p| p.seq > ended);
                let quiet = if fresh { self.config.settle } else { self.config.settle_empty };
                let until = (tokio::time::Instant::now() + quiet).min(deadline);
                while server.next_change(until).await {}
                // The file had the check's findings before the save, and what was published since
                // has none: either the save removed them, or a list cleared while the check ran came
                // late and the findings follow it. The longer quiet is given for them to come.
                if checked && had_checked && !has_pushed_beside(server, path, own) {
                    let seq = server.publish_seq();
                    let came = || server.published(path).is_some_and(|p| p.seq > seq);
                    let until = (tokio::time::Instant::now() + self.config.settle_empty).min(deadline);
                    while !came() && server.next_change(until).await {}
                    if came() {
                        // Something came: let it settle as any publication after the check.
                        let until = (tokio::time::Instant::now() + self.config.settle).min(deadline);
                        while server.next_change(until).await {}
                    }
                }
            }
            let idle = server.busy().is_none();
            if idle || tokio::time::Instant::now() >= deadline {
                let in_time = !waited || tokio::time::Instant::now() < deadline;
                let complete = idle && in_time && (!checks || server.background_ended());
                let mut items = full.full_document_diagnostic_report.items;
                let last = server.published(path);
                let last_at = last.as_ref().map(|p| p.at);
                let mut pushed = last.map(|p| p.items).unwrap_or_default();
                // rust-analyzer publishes a file's list from tasks of its own: the list
                // it clears as a check's first findings come and the list with them are
                // made in one turn and can arrive in either order, a fraction of a ms
                // apart. A list with findings that came just before the last one, which
                // has none, is the later of the two. (A list with the earlier check's
                // findings, published while this check runs, comes long before the
                // list its end clears: a check takes far more than that window.)
                if waited
                    && !pushed.iter().any(|d| d.source.as_deref() != Some(own))
                    && let Some(checked) = server.published_by_this_check(path)
                    && last_at.is_some_and(|at| at.saturating_duration_since(checked.at) <= SWAPPED_WITHIN)
                {
                    pushed = checked.items;
                }
                items.extend(pushed.into_iter().filter(|d| d.source.as_deref() != Some(own)));
                return Ok((items, complete));
            }
        }
    }
}

/// Whether the file's last publication has items of a source other than `own`: for a
/// server that pulls its own and pushes a check's ([`ServerSpec::pulled_source`]), the check's.
fn has_pushed_beside(server: &Server, path: &Path, own: &str) -> bool {
    server.published(path).is_some_and(|p| p.items.iter().any(|d| d.source.as_deref() != Some(own)))
}

/// What the files a write does not touch had before it, per server: taken by
/// [`Supervisor::other_files_before_write`], handed to
/// [`Supervisor::other_files_after_write`].
#[derive(Debug, Default)]
pub struct OtherFilesBefore {
    servers: Vec<ServerBefore>,
}

#[derive(Debug)]
struct ServerBefore {
    server: Arc<Server>,
    /// The written files this server serves, with their text before the write (`None`: absent).
    written: Vec<(PathBuf, Option<String>)>,
    /// The last publication's sequence number when the write was about to happen.
    seq: u64,
    /// [`OtherFiles::Published`]: every file's published items then.
    published: HashMap<PathBuf, Vec<Item>>,
    /// [`OtherFiles::Published`]: whether the server had settled, so that a
    /// file it had not published had nothing.
    settled: bool,
    /// [`OtherFiles::Importers`]: each file opened with its diagnostics then
    /// (`None`: not had in time).
    importers: Vec<(PathBuf, Option<Vec<Diagnostic>>)>,
    /// [`OtherFiles::Importers`]: how many files import the written ones in all.
    found: usize,
}

impl OtherFilesBefore {
    /// Takes each server's publication count (and, for a server that publishes
    /// other files itself, what it has published) once more, right before the
    /// write: what it publishes from here on is taken as the write's.
    pub fn mark_write(&mut self) {
        for s in &mut self.servers {
            s.seq = s.server.publish_seq();
            if s.server.spec.other_files == OtherFiles::Published {
                s.published = s.server.publications().into_iter().map(|(p, x)| (p, x.items)).collect();
            }
        }
    }
}

/// What a write did to the diagnostics of files it did not touch, as one server tells.
#[derive(Debug, Clone, Serialize)]
pub struct OtherFilesReport {
    /// The server's id.
    pub server: &'static str,
    /// How it gives other files' diagnostics.
    pub way: OtherFiles,
    /// The written files of this server.
    pub written: Vec<PathBuf>,
    /// The other files whose diagnostics after the write are known:
    /// [`OtherFiles::Published`], those the server published anew;
    /// [`OtherFiles::Importers`], the importers read.
    pub files: Vec<OtherFile>,
    /// Importers whose diagnostics for the text after the write had not come when the wait ran out.
    pub pending: Vec<PathBuf>,
    /// [`OtherFiles::Importers`]: how many files import the written ones in all.
    pub importers: usize,
    /// [`OtherFiles::Importers`]: how many of them were opened and read (at most [`MAX_IMPORTERS`]).
    pub checked: usize,
    /// [`OtherFiles::Importers`]: the importers read that the server's own
    /// configuration leaves out, with why ([`crate::coverage`]): what it says
    /// of them may not see the write (their imports can resolve elsewhere,
    /// to a stub or an installed copy).
    pub outside: Vec<(PathBuf, String)>,
    /// False when the wait ran out (or a written file's own diagnostics were
    /// pending): more may come than `files` holds.
    pub complete: bool,
    /// Why nothing could be read, when so (the server crashed).
    pub error: Option<String>,
}

/// One other file's diagnostics before and after a write.
#[derive(Debug, Clone, Serialize)]
pub struct OtherFile {
    /// The file, absolute.
    pub path: PathBuf,
    /// What it had before the write (positions as in its text now); `None` when that was not had.
    pub before: Option<Vec<Diagnostic>>,
    /// What it has after the write.
    pub now: Vec<Diagnostic>,
}

impl Supervisor {}

/// An importer's diagnostics for the text after a write (`seq`: the
/// publication count right before it); `None` when they had not come by `deadline`.
async fn importer_after_write(
    supervisor: &Supervisor,
    server: &Server,
    path: &Path,
    seq: u64,
    unchanged: bool,
    deadline: tokio::time::Instant,
) -> Option<Vec<Item>> {
    let language = Language::from_path(path)?;
    let (_, sent) = server.sync(path, language).await.ok()?;
    // Asked (pulled, or of tsserver), the answer is for the texts the server has now;
    // and with nothing changed, what it last said stands.
    if server.tsserver_request().is_some() || server.pulls_diagnostics() || (unchanged && !sent) {
        return supervisor.collect_diagnostics(server, path, false, deadline).await.ok().filter(|c| c.1).map(|c| c.0);
    }
    let config = &supervisor.config;
    let settle_empty = if server.spec.publishes_in_rounds { config.settle_empty } else { config.settle };
    let after = if sent { server.doc_sync(path).map_or(seq, |d| d.2) } else { seq };
    let waits = Waits { settle: config.settle, settle_empty, stands: None };
    match wait_published(server, path, after, deadline, waits).await {
        Ok((items, true)) => Some(items),
        _ => None,
    }
}

/// Waits until the server is idle and has been quiet (no publication, no
/// progress) for `quiet`; false when `deadline` or its death comes first.
/// `recent`: a server idle whose last publication is older than `quiet` counts
/// as settled at once.
async fn settled(server: &Server, quiet: Duration, deadline: tokio::time::Instant, recent: bool) -> bool {
    if recent && server.busy().is_none() && server.publications().iter().all(|(_, p)| p.at.elapsed() >= quiet) {
        return true;
    }
    loop {
        if server.death().is_some() || !server.wait_idle(deadline).await {
            return false;
        }
        let until = tokio::time::Instant::now() + quiet;
        if until > deadline {
            return false;
        }
        if !server.next_change(until).await && server.busy().is_none() {
            return true;
        }
    }
}

/// Raw diagnostics converted against the file's text now.
async fn convert_all(items: &[Item], path: &Path, encoding: PositionEncoding, server: &'static str) -> Vec<Diagnostic> {
    let text = crate::encoding::read_text(path).await.unwrap_or_default();
    let file_lines: Vec<String> = lines(&text).into_iter().map(str::to_string).collect();
    let mut out: Vec<Diagnostic> =
        items.iter().filter_map(|item| convert_diagnostic(item, path, &file_lines, encoding, server)).collect();
    out.sort_by_key(|d| (d.location.line, d.location.column));
    out
}

/// A file's diagnostics asked of tsserver through typescript-language-server's
/// `command` (`typescript.tsserverRequest`): the three kinds it publishes, in
/// its order, each converted as the server converts what it publishes
/// (tsserver's 1-based `line`/`offset` in UTF-16 units become a 0-based LSP
/// range; category `error`/`warning`/`suggestion` becomes severity 1/2/4).
/// Running out of time is "not final", with what came so far.
async fn tsserver_diagnostics(
    server: &Server,
    command: &str,
    path: &Path,
    deadline: tokio::time::Instant,
) -> Result<(Vec<Item>, bool)> {
    let uri = file_uri(path);
    let method = req::ExecuteCommand::METHOD;
    let mut items = Vec::new();
    for request in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"] {
        // tsserver's own request and response, which lsp-types does not type: JSON.
        let params = lsp_types::ExecuteCommandParams {
            command: command.to_string(),
            arguments: vec![Value::from(request), serde_json::json!({ "file": uri.as_str() })],
            work_done_progress_params: Default::default(),
        };
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        let answer = match server.request_with::<req::ExecuteCommand>(params, remaining).await {
            Ok(answer) => answer.unwrap_or(Value::Null),
            Err(Error::Timeout { .. }) => return Ok((items, false)),
            Err(e) => return Err(e),
        };
        // The command answers with tsserver's whole response: `{ success, body, message }`.
        if answer.get("success").and_then(Value::as_bool) == Some(false) {
            let message = answer.get("message").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(Error::Response {
                server: server.spec.id,
                method,
                code: 0,
                message: format!("tsserver {request} failed: {message}"),
            });
        }
        // An answer without its list is not an empty list.
        let Some(body) = answer.get("body").and_then(Value::as_array) else {
            return Err(Error::Response {
                server: server.spec.id,
                method,
                code: 0,
                message: format!("tsserver {request} answered without a list of diagnostics: {answer}"),
            });
        };
        items.extend(body.iter().filter_map(tsserver_to_lsp));
    }
    Ok((items, true))
}

/// One tsserver `protocol.Diagnostic` as the LSP `Diagnostic` typescript-language-server publishes for it.
fn tsserver_to_lsp(diagnostic: &Value) -> Option<Item> {
    let position = |location: &Value| -> Option<Position> {
        let line = location.get("line")?.as_u64()?.checked_sub(1)?;
        let character = location.get("offset")?.as_u64()?.checked_sub(1)?;
        Some(Position { line: u32::try_from(line).ok()?, character: u32::try_from(character).ok()? })
    };
    let severity = match diagnostic.get("category").and_then(Value::as_str) {
        Some("warning") => DiagnosticSeverity::WARNING,
        Some("suggestion") => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::ERROR,
    };
    let code = match diagnostic.get("code") {
        Some(Value::String(s)) => Some(NumberOrString::String(s.clone())),
        Some(Value::Number(n)) => Some(match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) => NumberOrString::Number(n),
            None => NumberOrString::String(n.to_string()),
        }),
        _ => None,
    };
    Some(Item {
        range: Range { start: position(diagnostic.get("start")?)?, end: position(diagnostic.get("end")?)? },
        message: diagnostic.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
        severity: Some(severity),
        code,
        source: Some(diagnostic.get("source").and_then(Value::as_str).unwrap_or("typescript").to_string()),
        ..Default::default()
    })
}

/// A `textDocument/diagnostic` answer for the file's text now; `None` when
/// the deadline passed first. A request the server cancelled (LSP
/// `ServerCancelled` -32802, `ContentModified` -32801: rust-analyzer cancels
/// pulls while it reloads the workspace, as after the first `cargo check`
/// writes `Cargo.lock`) is asked again after its next change or 100 ms.
async fn pull(
    server: &Server,
    path: &Path,
    deadline: tokio::time::Instant,
) -> Result<Option<DocumentDiagnosticReportResult>> {
    loop {
        let params = crate::protocol::DocumentDiagnosticParams(lsp_types::DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier { uri: file_uri(path) },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        });
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        match server.request_with::<crate::protocol::DocumentDiagnostic>(params, remaining).await {
            Ok(answer) => return Ok(Some(answer)),
            Err(Error::Timeout { .. }) => return Ok(None),
            Err(Error::Response { code: -32802 | -32801, .. }) => {
                let until = (tokio::time::Instant::now() + Duration::from_millis(100)).min(deadline);
                server.next_change(until).await;
                if tokio::time::Instant::now() >= deadline {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// How long [`wait_published`] waits in quiet before it takes a list as final.
struct Waits {
    /// After a publication with items.
    settle: Duration,
    /// After an empty publication.
    settle_empty: Duration,
    /// Without any publication since the change, from a server that does not
    /// publish an unchanged list again; `None`: such silence is never final.
    stands: Option<Duration>,
}

/// Waits for a publication for `path` newer than `after`, then for the server
/// to settle (no progress, quiet for a moment). Returns the items and whether
/// they are final.
async fn wait_published(
    server: &Server,
    path: &Path,
    after: u64,
    deadline: tokio::time::Instant,
    waits: Waits,
) -> Result<(Vec<Item>, bool)> {
    let Waits { settle, settle_empty, stands } = waits;
    loop {
        if let Some(death) = server.death() {
            return Err(Error::Crashed { server: server.spec.id, what: death.what, stderr_tail: death.stderr_tail });
        }
        let latest = server.published(path).filter(|p| p.seq > after);
        if let Some(published) = &latest
            && server.busy().is_none()
        {
            let quiet = if published.items.is_empty() { settle_empty } else { settle };
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            if !server.next_change(until).await {
                let still = server.published(path).map(|p| p.seq) == Some(published.seq) && server.busy().is_none();
                if still {
                    return Ok((published.items.clone(), true));
                }
                if tokio::time::Instant::now() >= deadline {
                    return Ok((published.items.clone(), false));
                }
            }
            continue;
        }
        if latest.is_none()
            && let Some(quiet) = stands
            && server.busy().is_none()
        {
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            if !server.next_change(until).await {
                let fresh = server.published(path).is_some_and(|p| p.seq > after);
                if !fresh && server.busy().is_none() && tokio::time::Instant::now() < deadline {
                    return Ok((server.published(path).map(|p| p.items).unwrap_or_default(), true));
                }
                if tokio::time::Instant::now() >= deadline {
                    return Ok((Vec::new(), false));
                }
            }
            continue;
        }
        if !server.next_change(deadline).await {
            let items = latest.map(|p| p.items).unwrap_or_default();
            return Ok((items, false));
        }
    }
}

fn convert_diagnostic(
    item: &Item,
    path: &Path,
    file_lines: &[String],
    encoding: PositionEncoding,
    server: &'static str,
) -> Option<Diagnostic> {
    let code = item.code.as_ref().map(|code| match code {
        NumberOrString::String(s) => s.clone(),
        NumberOrString::Number(n) => n.to_string(),
    });
    Some(Diagnostic {
        server: Some(server),
        location: range_to_location(path, &item.range, file_lines, encoding),
        severity: Severity::from_lsp(item.severity),
        code,
        source: item.source.clone(),
        message: item.message.clone(),
    })
}

/// [`Supervisor::diagnostics`].
pub(crate) async fn diagnostics(sup: &Supervisor, path: &Path) -> Result<FileDiagnostics> {
    sup.file_diagnostics(path, false).await
}

/// [`Supervisor::diagnostics_after_write`].
pub(crate) async fn diagnostics_after_write(sup: &Supervisor, path: &Path) -> Result<FileDiagnostics> {
    sup.file_diagnostics(path, true).await
}

/// [`Supervisor::other_files_before_write`].
pub(crate) async fn other_files_before_write(sup: &Supervisor, paths: &[PathBuf]) -> OtherFilesBefore {
    let deadline = tokio::time::Instant::now() + sup.config.diagnostics_timeout;
    let mut servers: Vec<ServerBefore> = Vec::new();
    for path in paths {
        let Ok((server, _)) = sup.server_for(path).await else { continue };
        let text = crate::encoding::read_text(path).await.ok();
        match servers.iter_mut().find(|s| Arc::ptr_eq(&s.server, &server)) {
            Some(s) => s.written.push((path.clone(), text)),
            None => servers.push(ServerBefore {
                server,
                written: vec![(path.clone(), text)],
                seq: 0,
                published: HashMap::new(),
                settled: false,
                importers: Vec::new(),
                found: 0,
            }),
        }
    }
    for s in &mut servers {
        let server = Arc::clone(&s.server);
        match server.spec.other_files {
            OtherFiles::Published => {
                // Its first load and what it is still working on end first, so
                // that nothing it publishes for the text before the write is
                // taken for the write's.
                server.initial_load(server.spec.load_grace, deadline).await;
                s.settled = settled(&server, sup.config.settle_empty, deadline, true).await;
            }
            OtherFiles::Importers => {
                let written: Vec<PathBuf> = s.written.iter().map(|(p, _)| p.clone()).collect();
                let root = server.root.clone();
                let all = paths.to_vec();
                let found = tokio::task::spawn_blocking(move || {
                    let mut found: Vec<PathBuf> = Vec::new();
                    for w in &written {
                        for i in crate::importers::importers(&root, w, &all) {
                            if !found.contains(&i) {
                                found.push(i);
                            }
                        }
                    }
                    found
                })
                .await
                .unwrap_or_default();
                s.found = found.len();
                let opened: Vec<PathBuf> = found.into_iter().take(MAX_IMPORTERS).collect();
                // Opened all at once, so the server works on them together.
                for path in &opened {
                    if let Some(language) = Language::from_path(path) {
                        let _ = server.sync(path, language).await;
                    }
                }
                for path in opened {
                    let before = match sup.collect_diagnostics(&server, &path, false, deadline).await {
                        Ok((items, true)) => Some(convert_all(&items, &path, server.encoding, server.spec.id).await),
                        _ => None,
                    };
                    s.importers.push((path, before));
                }
            }
            OtherFiles::WrittenOnly => {}
        }
    }
    let mut before = OtherFilesBefore { servers };
    before.mark_write();
    before
}

/// [`Supervisor::other_files_after_write`].
pub(crate) async fn other_files_after_write(
    sup: &Supervisor,
    before: OtherFilesBefore,
    pending: &[PathBuf],
    started: std::time::Instant,
) -> Vec<OtherFilesReport> {
    let deadline = tokio::time::Instant::from_std(started) + sup.config.diagnostics_timeout;
    // What the write did on disk reaches the servers first: a file it
    // deleted is closed, so the servers stop answering from its old text.
    sup.catch_up().await;
    let mut out = Vec::new();
    for s in before.servers {
        let server = &s.server;
        let written: Vec<PathBuf> = s.written.iter().map(|(p, _)| p.clone()).collect();
        let mut report = OtherFilesReport {
            server: server.spec.id,
            way: server.spec.other_files,
            written: written.clone(),
            files: Vec::new(),
            pending: Vec::new(),
            importers: s.found,
            checked: s.importers.len(),
            outside: s
                .importers
                .iter()
                .filter_map(|(p, _)| {
                    crate::coverage::excluded(server.spec.id, &server.root, p).map(|why| (p.clone(), why))
                })
                .collect(),
            complete: true,
            error: None,
        };
        if let Some(death) = server.death() {
            report.complete = false;
            report.error = Some(format!("{} stopped: {}", server.spec.id, death.what));
            out.push(report);
            continue;
        }
        let written_pending = written.iter().any(|w| pending.contains(w));
        match server.spec.other_files {
            OtherFiles::WrittenOnly => {}
            OtherFiles::Published => {
                report.complete = !written_pending && settled(server, sup.config.settle_empty, deadline, false).await;
                let mut fresh: Vec<(PathBuf, Vec<Item>)> = server
                    .publications()
                    .into_iter()
                    .filter(|(p, x)| x.seq > s.seq && !written.contains(p) && p.starts_with(&sup.config.root))
                    .map(|(p, x)| (p, x.items))
                    .collect();
                fresh.sort_by(|a, b| a.0.cmp(&b.0));
                for (path, items) in fresh {
                    let before = match s.published.get(&path) {
                        Some(old) => Some(convert_all(old, &path, server.encoding, server.spec.id).await),
                        None => s.settled.then(Vec::new),
                    };
                    let now = convert_all(&items, &path, server.encoding, server.spec.id).await;
                    report.files.push(OtherFile { path, before, now });
                }
            }
            OtherFiles::Importers => {
                // A write that left the server's text as it was changes nothing it reports.
                let mut unchanged = true;
                for (path, text) in &s.written {
                    unchanged &= crate::encoding::read_text(path).await.ok() == *text;
                }
                for (path, before) in s.importers {
                    let now = if written_pending {
                        None
                    } else {
                        importer_after_write(sup, server, &path, s.seq, unchanged, deadline).await
                    };
                    match now {
                        Some(items) => {
                            let now = convert_all(&items, &path, server.encoding, server.spec.id).await;
                            report.files.push(OtherFile { path, before, now });
                        }
                        None => report.pending.push(path),
                    }
                }
                report.complete = report.pending.is_empty();
            }
        }
        out.push(report);
    }
    out
}
