//! `apply_patch`: a patch in the `*** Begin Patch` format (`tools::patch`) applied to the
//! working directory all or nothing.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool, Words};
use crate::tools::patch::{self, Section};
use crate::workspace::Workspace;

use super::resolve_for_write;

/// Apply a patch in the `*** Begin Patch` format: add, delete, update and move files, several at once, all or nothing. Paths are relative to the working directory and must stay inside it.
///
/// ```text
/// *** Begin Patch
/// *** Add File: src/util.py
/// +def double(x):
/// +    return 2 * x
/// *** Update File: src/app.py
/// *** Move to: src/main.py
/// @@ def greet(name):
///      """Say hello."""
/// -    print("Hi")
/// +    print(f"Hello, {name}")
///      return None
/// *** Delete File: src/old.py
/// *** End Patch
/// ```
///
/// `*** Add File: PATH` creates a file: every line after it starts with `+`. `*** Delete File: PATH` removes one. `*** Update File: PATH` changes one, optionally renamed by a following `*** Move to: NEWPATH`, through hunks: a hunk starts with `@@` (or `@@ LINE`), then lines starting with ` ` (context, kept), `-` (removed) or `+` (added). Give about 3 context lines before and after each change. `*** End of File` after a hunk's lines means the hunk ends at the file's last line.
///
/// Where a hunk applies: its context and removed lines, in order, are looked for after the previous hunk of the same file — exactly first, then ignoring trailing whitespace, then ignoring leading and trailing whitespace, then also reading typographic dashes, quotes and non-breaking spaces in the file as `-`, `'`, `"` and space (the result names each loose match). `@@ LINE` names a line above the change, such as the enclosing function or class header: that line is found first (after the previous hunk), and the hunk from there on. The first place that matches is used; when the lines also occur further down, the result says so — add context or an `@@ LINE` so each hunk is unambiguous. A hunk of only `+` lines goes right after its `@@ LINE`, or at the end of the file without one (the next hunk is still looked for after the one before). Context lines keep the file's own text; every line keeps its own line ending (LF, CRLF or CR), an added line that replaces a removed one (the first `+` line of a change for its first `-` line, and so on) keeps that line's ending, other added lines take the file's commonest one, and the file keeps its final newline or lack of one.
///
/// Sections run in order, each seeing the ones before. Any of these refuses the whole patch and writes nothing: a hunk that does not match (the error names the file, the hunk and its first lines), Add File on an existing file, Update or Delete File on a missing one, Move to onto an existing file, a path outside the working directory. The result has one line per section (`updated a.py (+3 −1)`, `added`, `deleted`, `moved a.py → b.py`); when a language server covers a file, it ends with the diagnostics the patch introduced.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub patch: String,
}

/// The `apply_patch` tool.
pub struct ApplyPatch(pub Workspace);

/// A file as the patch's sections see it while they run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Now {
    Absent,
    Text(String),
    /// Present but not UTF-8: it can be deleted, not patched.
    Bytes,
}

/// One file the patch touches: what is on disk and what the sections made of it.
struct Touched {
    path: PathBuf,
    shown: PathBuf,
    disk: Option<Vec<u8>>,
    now: Now,
    /// Deleted or moved away by an earlier section.
    gone: bool,
}

/// What one section did, for the result.
/// One file `apply_patch` changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Done {
    /// `added`, `deleted`, `updated` or `moved`.
    action: &'static str,
    /// Relative to the working directory (for a move, where it is now).
    path: PathBuf,
    /// For a move: where it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<PathBuf>,
    /// Lines added.
    added: usize,
    /// Lines removed (for a deletion, when the file was text).
    #[serde(skip_serializing_if = "Option::is_none")]
    removed: Option<usize>,
}

/// `apply_patch`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchOutput {
    /// The files changed, in the patch's order.
    pub files: Vec<Done>,
    /// What was kept or assumed (line endings, a final newline, a BOM, a fuzzy hunk placement).
    pub notes: Vec<String>,
}

impl Done {
    fn line(&self) -> String {
        let counts = match (self.action, self.removed) {
            ("added", _) => format!(" (+{})", self.added),
            ("deleted", Some(removed)) => format!(" (\u{2212}{removed})"),
            ("deleted", None) => String::new(),
            ("moved", Some(0)) if self.added == 0 => String::new(),
            (_, removed) => format!(" (+{} \u{2212}{})", self.added, removed.unwrap_or(0)),
        };
        match &self.from {
            Some(from) => format!("{} {} \u{2192} {}{counts}", self.action, from.display(), self.path.display()),
            None => format!("{} {}{counts}", self.action, self.path.display()),
        }
    }
}

/// The sections run over the files they name.
struct Plan<'w> {
    ws: &'w Workspace,
    files: Vec<Touched>,
}

impl Plan<'_> {
    /// The file at `given` (a header's path), read from disk the first time; an
    /// error is the refusal's reason.
    fn file(&mut self, given: &str) -> std::result::Result<usize, String> {
        let path = resolve_for_write(self.ws, given).map_err(|e| e.trim_start_matches("refused: ").to_string())?;
        if let Some(k) = self.files.iter().position(|f| f.path == path) {
            return Ok(k);
        }
        let (disk, now) = match std::fs::read(&path) {
            Ok(bytes) => {
                let now = String::from_utf8(bytes.clone()).map_or(Now::Bytes, Now::Text);
                (Some(bytes), now)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, Now::Absent),
            Err(e) => return Err(format!("cannot read it: {e}")),
        };
        let shown = self.ws.relative(&path).to_path_buf();
        self.files.push(Touched { path, shown, disk, now, gone: false });
        Ok(self.files.len() - 1)
    }

    /// Paths resolve through symlinks, which is right for changing a file's
    /// content but would delete or move the link's target instead of the link.
    fn not_a_link(&self, given: &str) -> std::result::Result<(), String> {
        let lexical = self.ws.root().join(given);
        match std::fs::symlink_metadata(&lexical) {
            Ok(meta) if meta.file_type().is_symlink() => {
                Err(format!("'{given}' is a symbolic link; apply_patch deletes and moves files, not links"))
            }
            _ => Ok(()),
        }
    }

    /// Runs one section, or says why the patch is refused.
    fn run(&mut self, section: &Section) -> std::result::Result<(Done, Vec<String>), String> {
        let header = |marker: &str, path: &str| format!("{marker} {path}");
        match section {
            Section::Add { path, lines, .. } => {
                let k = self.file(path).map_err(|e| format!("{}: {e}", header("Add File:", path)))?;
                let file = &mut self.files[k];
                if file.now != Now::Absent {
                    return Err(format!(
                        "{}: {} already exists; use Update File to change it, or Delete File first",
                        header("Add File:", path),
                        file.shown.display()
                    ));
                }
                let mut text = lines.join("\n");
                if !lines.is_empty() {
                    text.push('\n');
                }
                file.now = Now::Text(text);
                let done =
                    Done { action: "added", path: file.shown.clone(), from: None, added: lines.len(), removed: None };
                Ok((done, Vec::new()))
            }
            Section::Delete { path, .. } => {
                self.not_a_link(path).map_err(|e| format!("{}: {e}", header("Delete File:", path)))?;
                let k = self.file(path).map_err(|e| format!("{}: {e}", header("Delete File:", path)))?;
                let file = &mut self.files[k];
                let removed = match &file.now {
                    Now::Absent => {
                        return Err(format!("{}: {}", header("Delete File:", path), missing(file)));
                    }
                    Now::Text(text) => Some(text.lines().count()),
                    Now::Bytes => None,
                };
                file.now = Now::Absent;
                file.gone = true;
                Ok((Done { action: "deleted", path: file.shown.clone(), from: None, added: 0, removed }, Vec::new()))
            }
            Section::Update { path, move_to, hunks, .. } => {
                if move_to.is_some() {
                    self.not_a_link(path).map_err(|e| format!("{}: {e}", header("Update File:", path)))?;
                }
                let k = self.file(path).map_err(|e| format!("{}: {e}", header("Update File:", path)))?;
                let file = &self.files[k];
                let text = match &file.now {
                    Now::Text(text) => text,
                    Now::Absent => {
                        return Err(format!(
                            "{}: {}; use Add File to create it",
                            header("Update File:", path),
                            missing(file)
                        ));
                    }
                    Now::Bytes => {
                        return Err(format!("{}: the file is not UTF-8 text", header("Update File:", path)));
                    }
                };
                let shown = file.shown.clone();
                let applied = patch::apply_hunks(text, hunks).map_err(|e| {
                    let first = hunks[e.hunk - 1]
                        .first_lines(4)
                        .iter()
                        .map(|l| format!("    {l}"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    format!(
                        "hunk {} of {} (patch line {}) does not match: {}. The hunk begins:\n{first}\n",
                        e.hunk,
                        shown.display(),
                        hunks[e.hunk - 1].at,
                        e.message
                    )
                })?;
                let notes = applied.notes.iter().map(|n| format!("{}: {n}", shown.display())).collect();
                let removed = Some(applied.removed);
                let target = match move_to {
                    Some(to) => {
                        let t = self.file(to).map_err(|e| format!("{}: {e}", header("Move to:", to)))?;
                        if t != k && self.files[t].now != Now::Absent {
                            return Err(format!(
                                "{}: {} already exists; a move does not replace a file (Delete File it first)",
                                header("Move to:", to),
                                self.files[t].shown.display()
                            ));
                        }
                        t
                    }
                    None => k,
                };
                if target == k {
                    self.files[k].now = Now::Text(applied.text);
                    let done = Done { action: "updated", path: shown, from: None, added: applied.added, removed };
                    return Ok((done, notes));
                }
                self.files[k].now = Now::Absent;
                self.files[k].gone = true;
                self.files[target].now = Now::Text(applied.text);
                let to = self.files[target].shown.clone();
                Ok((Done { action: "moved", path: to, from: Some(shown), added: applied.added, removed }, notes))
            }
        }
    }
}

fn missing(file: &Touched) -> String {
    if file.gone {
        format!("{} was deleted or moved away earlier in this patch", file.shown.display())
    } else {
        format!("{} does not exist", file.shown.display())
    }
}

impl Tool for ApplyPatch {
    type Input = ApplyPatchInput;
    type Output = PatchOutput;
    const NAME: &'static str = "apply_patch";
    const TIER: Tier = Tier::Write;

    /// Every path the patch names, a move's destination included; the summary
    /// has one line per section. Parses only: nothing is read.
    fn preview(&self, input: &ApplyPatchInput) -> CallPreview {
        let patch = match patch::parse(&input.patch) {
            Ok(patch) => patch,
            Err(e) => {
                return CallPreview {
                    summary: Some(format!("apply_patch: the patch does not parse ({e})")),
                    paths: Vec::new(),
                };
            }
        };
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut summary = Vec::new();
        for section in &patch.sections {
            let mut push = |p: &str| {
                let p = PathBuf::from(p);
                if !paths.contains(&p) {
                    paths.push(p);
                }
            };
            push(section.path());
            match section {
                Section::Add { path, lines, .. } => summary.push(format!("add {path} (+{})", lines.len())),
                Section::Delete { path, .. } => summary.push(format!("delete {path}")),
                Section::Update { path, move_to, hunks, .. } => {
                    let (added, removed) =
                        hunks.iter().map(patch::Hunk::counts).fold((0, 0), |(a, r), (x, y)| (a + x, r + y));
                    let counts = format!("(+{added} \u{2212}{removed})");
                    match move_to {
                        Some(to) => {
                            push(to);
                            summary.push(format!("move {path} \u{2192} {to} {counts}"));
                        }
                        None => summary.push(format!("update {path} {counts}")),
                    }
                }
            }
        }
        CallPreview { summary: Some(summary.join("\n")), paths }
    }

    async fn call(&self, input: ApplyPatchInput, _cx: &CallContext) -> Result<Reply<PatchOutput>> {
        let patch = match patch::parse(&input.patch) {
            Ok(patch) => patch,
            Err(e) => return Ok(Err(format!("refused: the patch does not parse: {e}; nothing was written"))),
        };
        let mut plan = Plan { ws: &self.0, files: Vec::new() };
        let mut done = Vec::new();
        let mut notes = Vec::new();
        for section in &patch.sections {
            match plan.run(section) {
                Ok((d, n)) => {
                    done.push(d);
                    notes.extend(n);
                }
                Err(why) => {
                    let why = why.trim_end();
                    let sep = if why.contains('\n') { "\n" } else { "; " };
                    return Ok(Err(format!("refused: {why}{sep}nothing was written")));
                }
            }
        }
        let writes: Vec<write_set::FileWrite> = plan
            .files
            .into_iter()
            .filter_map(|f| {
                let after = match f.now {
                    Now::Absent => None,
                    Now::Text(text) => Some(text.into_bytes()),
                    Now::Bytes => f.disk.clone(),
                };
                (after != f.disk).then_some(write_set::FileWrite {
                    path: f.path,
                    shown: f.shown,
                    before: f.disk,
                    after,
                })
            })
            .collect();
        match write_set::write_files(&writes) {
            Ok(()) => {}
            Err(write_set::Error::Conflict { files }) => {
                let files = files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
                return Ok(Err(format!(
                    "refused: {files} changed while the patch was being applied; nothing was written — read the file(s) again and make a new patch"
                )));
            }
            Err(e) => return Ok(Err(e.to_string())),
        }
        Ok(Ok(PatchOutput { files: done, notes }))
    }
}

impl Words for PatchOutput {
    fn words(&self) -> String {
        let mut text: Vec<String> = self.files.iter().map(Done::line).collect();
        text.extend(self.notes.iter().map(|n| format!("note: {n}")));
        text.join("\n")
    }
}
