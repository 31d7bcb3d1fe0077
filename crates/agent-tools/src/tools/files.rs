//! `write`, `edit` and `apply_patch`: plain file tools for hosts that have
//! none (the `agent-tools` command's MCP clients), write tier, each naming the
//! files it touches in its preview so diagnostics on write can wrap it.
//!
//! `apply_patch` parses with `patch.rs`, runs the sections in order over its
//! own view of the files they name (so a later section sees an earlier one),
//! and writes the outcome with astmatch's `write_files`, the writer `resolve`
//! uses: checked against what was read, atomic per file, all or nothing.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::registry::RegistryBuilder;
use crate::result::ToolResult;
use crate::schema::output_schema;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::tools::patch::{self, Section};

impl RegistryBuilder {
    /// Registers the plain `write`, `edit` and `apply_patch` file tools, for hosts
    /// that have none. [`RegistryBuilder::with_checked_file_tools`] (feature `lsp`)
    /// registers them with diagnostics on write instead.
    pub fn with_file_tools(self, workspace: crate::workspace::Workspace) -> RegistryBuilder {
        self.register(WriteFile(workspace.clone()))
            .register(EditFile(workspace.clone()))
            .register(ApplyPatch(workspace))
    }
}
use crate::workspace::Workspace;

/// Write a whole file (created with its directories if missing, replaced if present). Paths are relative to the working directory and must stay inside it. When a language server covers the file, the result ends with the diagnostics this write introduced.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file, relative to the working directory.
    pub path: String,
    /// The complete new content.
    pub content: String,
}

/// Replace text in a file: `old_string` must occur exactly once (give more context to make it unique) unless `replace_all` is true. In a file with CRLF line endings, `\n` in `old_string` and `new_string` stands for the file's `\r\n` when the text does not occur as given, and the result says so. A line break in `new_string` takes the ending of the text it replaces (CRLF in a CRLF line), and the result says so when it was rewritten. When a language server covers the file, the result ends with the diagnostics this edit introduced.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The file, relative to the working directory.
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// What to put instead.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// The `write` tool.
pub struct WriteFile(pub Workspace);
/// The `edit` tool.
pub struct EditFile(pub Workspace);

/// A path for writing: inside the root (lexically and through any existing
/// symlinked ancestor); the file itself may not exist yet.
fn resolve_for_write(ws: &Workspace, given: &str) -> std::result::Result<PathBuf, String> {
    if given.trim().is_empty() {
        return Err("path must not be empty".into());
    }
    let path = ws.resolve_for_write(given).map_err(|e| e.to_string())?;
    if path == ws.root() || path.is_dir() {
        return Err(format!("'{given}' is a directory"));
    }
    Ok(path)
}

fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let tmp = path
        .with_file_name(format!(".{}.agent-tools-tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("file")));
    std::fs::write(&tmp, content)?;
    if let Some(p) = permissions {
        std::fs::set_permissions(&tmp, p)?;
    }
    std::fs::rename(&tmp, path)
}

impl Tool for WriteFile {
    type Input = WriteInput;
    const NAME: &'static str = "write";
    const TIER: Tier = Tier::Write;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<WriteOutput>())
    }

    fn preview(&self, input: &WriteInput) -> CallPreview {
        let lines = input.content.lines().count();
        CallPreview {
            summary: Some(format!("write {} ({lines} lines)", input.path)),
            paths: vec![PathBuf::from(&input.path)],
        }
    }

    async fn call(&self, input: WriteInput, _cx: &CallContext) -> Result<ToolResult> {
        let path = match resolve_for_write(&self.0, &input.path) {
            Ok(p) => p,
            Err(e) => return Ok(ToolResult::error(e)),
        };
        let existed = path.exists();
        if let Err(e) = write_atomic(&path, &input.content) {
            return Ok(ToolResult::error(format!("could not write {}: {e}", input.path)));
        }
        let verb = if existed { "replaced" } else { "created" };
        Ok(ToolResult::text(format!("{verb} {} ({} bytes)", self.0.relative(&path).display(), input.content.len()))
            .with_output(&WriteOutput {
                path: self.0.relative(&path).to_path_buf(),
                bytes: input.content.len(),
                created: !existed,
            }))
    }
}

impl Tool for EditFile {
    type Input = EditInput;
    const NAME: &'static str = "edit";
    const TIER: Tier = Tier::Write;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<EditOutput>())
    }

    fn preview(&self, input: &EditInput) -> CallPreview {
        CallPreview { summary: Some(format!("edit {}", input.path)), paths: vec![PathBuf::from(&input.path)] }
    }

    async fn call(&self, input: EditInput, _cx: &CallContext) -> Result<ToolResult> {
        let path = match self.0.resolve(&input.path) {
            Ok(p) => p,
            Err(e) => return Ok(ToolResult::error(e.to_string())),
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => return Ok(ToolResult::error(format!("could not read {}: {e}", input.path))),
        };
        if input.old_string.is_empty() {
            return Ok(ToolResult::error("old_string must not be empty (use write to create or replace a whole file)"));
        }
        // Models write `\n`; in a CRLF file, when the text does not occur as
        // given, read each `\n` as the file's `\r\n` (as Claude Code's Edit
        // does) and write `new_string` the same way, so the file stays CRLF.
        let mut old = Cow::Borrowed(input.old_string.as_str());
        let mut new = Cow::Borrowed(input.new_string.as_str());
        let mut note = None;
        if !text.contains(old.as_ref()) && text.contains("\r\n") && old.contains('\n') {
            let crlf = |s: &str| s.replace("\r\n", "\n").replace('\n', "\r\n");
            let translated = crlf(&old);
            if text.contains(&translated) {
                old = Cow::Owned(translated);
                new = Cow::Owned(crlf(&new));
                note = Some("matched with the file's CRLF line endings".to_string());
            }
        }
        let count = text.matches(old.as_ref()).count();
        let updated = match (count, input.replace_all) {
            (0, _) => {
                return Ok(ToolResult::error(format!(
                    "old_string does not occur in {}; nothing was changed",
                    input.path
                )));
            }
            (1, _) | (_, true) => {
                let (updated, rewritten) = replace_keeping_endings(&text, &old, &new);
                if note.is_none() {
                    note = rewritten.map(|ending| {
                        format!("new_string's line breaks written as {ending}, as the text it replaces ends")
                    });
                }
                updated
            }
            (n, false) => {
                return Ok(ToolResult::error(format!(
                    "old_string occurs {n} times in {}; give more surrounding text to make it unique, or set replace_all; nothing was changed",
                    input.path
                )));
            }
        };
        if let Err(e) = write_atomic(&path, &updated) {
            return Ok(ToolResult::error(format!("could not write {}: {e}", input.path)));
        }
        let noted = note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        Ok(ToolResult::text(format!(
            "replaced {count} occurrence{} in {}{noted}",
            if count == 1 { "" } else { "s" },
            self.0.relative(&path).display()
        ))
        .with_output(&EditOutput { path: self.0.relative(&path).to_path_buf(), replacements: count, note }))
    }
}

/// `text` with every occurrence of `old` replaced by `new`, whose bare `\n`
/// line breaks take, at each occurrence, the ending of the text replaced there:
/// the first line ending in `old`, or else the one ending the line the
/// occurrence is on, or else (on a last line without one) the file's
/// commonest. A model writes `\n`; a CRLF or CR line it edits stays so. The
/// second value names the ending when `new` was rewritten (`CRLF` or `CR`).
fn replace_keeping_endings(text: &str, old: &str, new: &str) -> (String, Option<&'static str>) {
    let mut out = String::with_capacity(text.len() + new.len());
    let mut rewritten = None;
    let mut last = 0;
    for (at, _) in text.match_indices(old) {
        out.push_str(&text[last..at]);
        let ending = first_ending(old)
            .or_else(|| first_ending(&text[at + old.len()..]))
            .unwrap_or_else(|| patch::commonest_ending(text));
        match ending {
            "\n" => out.push_str(new),
            _ => {
                let piece = with_line_breaks(new, ending);
                if piece != new {
                    rewritten.get_or_insert(if ending == "\r\n" { "CRLF" } else { "CR" });
                }
                out.push_str(&piece);
            }
        }
        last = at + old.len();
    }
    out.push_str(&text[last..]);
    (out, rewritten)
}

/// The first line ending in `s` (`\n`, `\r\n` or a lone `\r`), if any.
fn first_ending(s: &str) -> Option<&'static str> {
    let n = s.find(['\n', '\r'])?;
    Some(match &s[n..] {
        rest if rest.starts_with("\r\n") => "\r\n",
        rest if rest.starts_with('\r') => "\r",
        _ => "\n",
    })
}

/// `s` with each `\n` not already part of a `\r\n` written as `ending`.
fn with_line_breaks(s: &str, ending: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    let mut previous = None;
    for c in s.chars() {
        if c == '\n' && previous != Some('\r') {
            out.push_str(ending);
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

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

/// `write`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteOutput {
    /// Relative to the working directory.
    pub path: PathBuf,
    /// Bytes written.
    pub bytes: usize,
    /// Whether the file is new.
    pub created: bool,
}

/// `edit`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditOutput {
    /// Relative to the working directory.
    pub path: PathBuf,
    /// Occurrences replaced.
    pub replacements: usize,
    /// How the text was matched or written when not as given (`\n` read as the file's CRLF, or `new_string`'s line breaks written as CRLF or CR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    const NAME: &'static str = "apply_patch";
    const TIER: Tier = Tier::Write;

    /// Every path the patch names, a move's destination included; the summary
    /// has one line per section. Parses only: nothing is read.
    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<PatchOutput>())
    }

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

    async fn call(&self, input: ApplyPatchInput, _cx: &CallContext) -> Result<ToolResult> {
        let patch = match patch::parse(&input.patch) {
            Ok(patch) => patch,
            Err(e) => {
                return Ok(ToolResult::error(format!("refused: the patch does not parse: {e}; nothing was written")));
            }
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
                    return Ok(ToolResult::error(format!("refused: {why}{sep}nothing was written")));
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
                return Ok(ToolResult::error(format!(
                    "refused: {files} changed while the patch was being applied; nothing was written — read the file(s) again and make a new patch"
                )));
            }
            Err(e) => return Ok(ToolResult::error(e.to_string())),
        }
        let mut text: Vec<String> = done.iter().map(Done::line).collect();
        text.extend(notes.iter().map(|n| format!("note: {n}")));
        Ok(ToolResult::text(text.join("\n")).with_output(&PatchOutput { files: done, notes }))
    }
}
