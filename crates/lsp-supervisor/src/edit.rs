//! Applying a server's `WorkspaceEdit` all or nothing (LSP "WorkspaceEdit",
//! `failureHandling: abort` semantics, done by us): every operation is first
//! applied to an in-memory view of the files, every path is checked to lie
//! inside the workspace root, then the files are written; if one write fails,
//! the ones already written are put back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::change::FileChange;
use crate::encoding::{PositionEncoding, from_lsp_column, line_starts};
use crate::error::{Error, Result};
use crate::results::{Cursor, Location};
use crate::uri::uri_path;

/// What a rename changed, and the uses of the old name it left.
#[derive(Debug, Clone, Serialize)]
pub struct RenameOutcome {
    /// The id of the server that renamed.
    pub server: &'static str,
    /// Where the rename was asked.
    pub cursor: Cursor,
    /// The whole identifier renamed (the symbol given may be part of it).
    pub old_name: String,
    /// Where the server was asked, when not at the cursor: the declaration in
    /// another file, for a server that asked at a use would rename only locally.
    pub asked_at: Option<Location>,
    /// Every file written, created or deleted, with what happened to it.
    pub files: Vec<ChangedFile>,
    /// How many text edits were applied.
    pub edits: usize,
    /// Uses of the renamed symbol in files the server's configuration leaves
    /// out: not renamed.
    pub not_covered: Vec<Leftover>,
    /// Whole-identifier uses of the old name the server could not resolve (a
    /// comment, a string, code it does not see): not renamed.
    pub unresolved: Vec<Leftover>,
    /// Uses of the old name that are other symbols of that name.
    pub other_symbols: usize,
    /// Uses of the old name outside the edit that were not asked about (over the cap).
    pub unchecked: usize,
    /// Where the edit keeps the old name as an alias (typescript-language-server
    /// writes `export { bar as foo }` so importers of `foo` go on working):
    /// 1-indexed line and character columns of the edited range; `text` is the new text.
    pub kept_aliases: Vec<Location>,
}

/// A use of the old name that a rename did not change.
#[derive(Debug, Clone, Serialize)]
pub struct Leftover {
    /// The use: 1-indexed line and character columns; `text` is its line.
    pub location: Location,
    /// Why its file is outside the server's project, when its configuration says so.
    pub excluded: Option<String>,
    /// Why the server could not be asked where it is defined (the file could
    /// not be opened, the question failed or timed out): then nothing is known of it.
    pub unasked: Option<String>,
}

/// A file a rename wrote, created or deleted.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedFile {
    /// The file, absolute.
    pub path: PathBuf,
    /// `changed`, `created` or `deleted`.
    pub change: &'static str,
}

/// The files a `WorkspaceEdit` (JSON) touches, for showing a code action; none when it is not one.
pub fn edited_files(edit: &Value) -> Vec<PathBuf> {
    crate::protocol::decode::<lsp_types::WorkspaceEdit>(edit).map(|e| files_of(&e)).unwrap_or_default()
}

/// The files a `WorkspaceEdit` touches.
pub(crate) fn files_of(edit: &lsp_types::WorkspaceEdit) -> Vec<PathBuf> {
    use lsp_types::{DocumentChangeOperation, DocumentChanges, ResourceOp};
    let mut uris: Vec<&lsp_types::Uri> = edit.changes.iter().flat_map(|c| c.keys()).collect();
    match &edit.document_changes {
        None => {}
        Some(DocumentChanges::Edits(edits)) => uris.extend(edits.iter().map(|e| &e.text_document.uri)),
        Some(DocumentChanges::Operations(operations)) => {
            for operation in operations {
                match operation {
                    DocumentChangeOperation::Edit(e) => uris.push(&e.text_document.uri),
                    DocumentChangeOperation::Op(ResourceOp::Create(c)) => uris.push(&c.uri),
                    DocumentChangeOperation::Op(ResourceOp::Rename(r)) => uris.extend([&r.old_uri, &r.new_uri]),
                    DocumentChangeOperation::Op(ResourceOp::Delete(d)) => uris.push(&d.uri),
                }
            }
        }
    }
    let mut out: Vec<PathBuf> = uris.into_iter().filter_map(uri_path).collect();
    out.sort();
    out.dedup();
    out
}

/// The path of a `file:` URI; any other scheme refuses the edit.
fn file_path(uri: &lsp_types::Uri) -> Result<PathBuf> {
    uri_path(uri).ok_or_else(|| Error::EditRefused(format!("a non-file URI {}", uri.as_str())))
}

/// A text edit on a file's text as it was: byte range replaced, and the new text.
pub(crate) type Span = (usize, usize, String);

/// The in-memory view: a path's planned content (`None` = deleted).
pub(crate) struct Plan {
    root: PathBuf,
    files: BTreeMap<PathBuf, Option<String>>,
    originals: BTreeMap<PathBuf, Option<Vec<u8>>>,
    /// Per file edited as it is on disk: its text then, and the byte ranges
    /// its text edits replace with the text each puts there.
    pub edited: BTreeMap<PathBuf, (String, Vec<Span>)>,
    /// Files that start with a byte order mark: edited without it (as the server saw them), written back with it.
    bom: std::collections::BTreeSet<PathBuf>,
    pub edits: usize,
}

impl Plan {
    fn check_inside(&self, path: &Path) -> Result<()> {
        // The file may not exist yet: check its nearest existing ancestor, symlinks resolved.
        let mut existing = path.to_path_buf();
        while !existing.exists() {
            match existing.parent() {
                Some(p) => existing = p.to_path_buf(),
                None => break,
            }
        }
        let real = existing.canonicalize().unwrap_or(existing);
        let root = self.root.canonicalize().unwrap_or_else(|_| self.root.clone());
        if !path.starts_with(&self.root) || !real.starts_with(&root) {
            return Err(Error::EditRefused(format!(
                "it touches {}, outside the workspace root {}",
                path.display(),
                self.root.display()
            )));
        }
        Ok(())
    }

    fn current(&mut self, path: &Path) -> Result<Option<String>> {
        self.check_inside(path)?;
        if let Some(content) = self.files.get(path) {
            return Ok(content.clone());
        }
        let original = std::fs::read(path).ok();
        self.originals.entry(path.to_path_buf()).or_insert_with(|| original.clone());
        let text = match original {
            Some(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| Error::EditRefused(format!("{} is not UTF-8", path.display())))?;
                match crate::encoding::strip_bom(&text) {
                    (rest, true) => {
                        self.bom.insert(path.to_path_buf());
                        Some(rest.to_string())
                    }
                    (_, false) => Some(text),
                }
            }
            None => None,
        };
        self.files.insert(path.to_path_buf(), text.clone());
        Ok(text)
    }

    fn set(&mut self, path: &Path, content: Option<String>) -> Result<()> {
        self.current(path)?;
        self.files.insert(path.to_path_buf(), content);
        Ok(())
    }

    fn text_edits(&mut self, path: &Path, edits: &[lsp_types::TextEdit], encoding: PositionEncoding) -> Result<()> {
        let Some(text) = self.current(path)? else {
            return Err(Error::EditRefused(format!("it edits {}, which does not exist", path.display())));
        };
        let starts = line_starts(&text);
        let offset = |pos: lsp_types::Position| -> usize {
            let line = pos.line as usize;
            let Some(&start) = starts.get(line) else { return text.len() };
            let end = starts.get(line + 1).copied().unwrap_or(text.len());
            let line_text = text[start..end].trim_end_matches(['\n', '\r']);
            start + from_lsp_column(line_text, pos.character, encoding)
        };
        let mut spans: Vec<(usize, usize, String)> = edits
            .iter()
            .map(|e| {
                let start = offset(e.range.start);
                let end = offset(e.range.end).max(start);
                (start, end, e.new_text.clone())
            })
            .collect();
        spans.sort_by_key(|s| (s.0, s.1));
        for pair in spans.windows(2) {
            if pair[1].0 < pair[0].1 {
                return Err(Error::EditRefused(format!("two of its edits overlap in {}", path.display())));
            }
        }
        // A file edited as it is on disk (not one this edit created or moved first).
        if !self.edited.contains_key(path) && self.originals.get(path).is_some_and(Option::is_some) {
            self.edited.insert(path.to_path_buf(), (text.clone(), spans.clone()));
        }
        let mut out = text.clone();
        for (start, end, new) in spans.iter().rev() {
            out.replace_range(*start..*end, new);
        }
        self.edits += spans.len();
        self.files.insert(path.to_path_buf(), Some(out));
        Ok(())
    }

    fn document_edit(&mut self, edit: lsp_types::TextDocumentEdit, encoding: PositionEncoding) -> Result<()> {
        let path = file_path(&edit.text_document.uri)?;
        // An annotated edit is applied like a plain one: nobody is asked to confirm it.
        let edits: Vec<lsp_types::TextEdit> = edit
            .edits
            .into_iter()
            .map(|e| match e {
                lsp_types::OneOf::Left(plain) => plain,
                lsp_types::OneOf::Right(annotated) => annotated.text_edit,
            })
            .collect();
        self.text_edits(&path, &edits, encoding)
    }

    fn operation(&mut self, op: lsp_types::ResourceOp) -> Result<()> {
        use lsp_types::ResourceOp;
        let flag = |value: Option<bool>| value.unwrap_or(false);
        match op {
            ResourceOp::Create(create) => {
                let path = file_path(&create.uri)?;
                let (overwrite, ignore) =
                    create.options.map_or((false, false), |o| (flag(o.overwrite), flag(o.ignore_if_exists)));
                match self.current(&path)? {
                    Some(_) if ignore && !overwrite => Ok(()),
                    Some(_) if !overwrite => {
                        Err(Error::EditRefused(format!("it creates {}, which exists", path.display())))
                    }
                    _ => self.set(&path, Some(String::new())),
                }
            }
            ResourceOp::Rename(rename) => {
                let (old, new) = (file_path(&rename.old_uri)?, file_path(&rename.new_uri)?);
                let (overwrite, ignore) =
                    rename.options.map_or((false, false), |o| (flag(o.overwrite), flag(o.ignore_if_exists)));
                let content = self
                    .current(&old)?
                    .ok_or_else(|| Error::EditRefused(format!("it renames {}, which does not exist", old.display())))?;
                if self.current(&new)?.is_some() {
                    if ignore && !overwrite {
                        return Ok(());
                    }
                    if !overwrite {
                        return Err(Error::EditRefused(format!("it renames onto {}, which exists", new.display())));
                    }
                }
                self.set(&old, None)?;
                self.set(&new, Some(content))
            }
            ResourceOp::Delete(delete) => {
                let path = file_path(&delete.uri)?;
                if path.is_dir() {
                    return Err(Error::EditRefused(format!("it deletes the directory {}", path.display())));
                }
                let ignore = flag(delete.options.and_then(|o| o.ignore_if_not_exists));
                match self.current(&path)? {
                    None if ignore => Ok(()),
                    None => Err(Error::EditRefused(format!("it deletes {}, which does not exist", path.display()))),
                    Some(_) => self.set(&path, None),
                }
            }
        }
    }

    /// The first text edit whose range, on the file as it is on disk, does not
    /// hold `old` (the name being renamed): the file's line (1-indexed) and what
    /// the range holds. An empty range must touch `old`.
    pub fn stale_edit(&self, old: &str) -> Option<(PathBuf, usize, String)> {
        let bare = |s: &str| -> String { s.trim_start_matches("r#").trim_start_matches('\'').to_string() };
        for (path, (text, spans)) in &self.edited {
            for &(start, end, _) in spans {
                let held = &text[start..end];
                let fits = if start == end {
                    text[..start].ends_with(old) || text[start..].starts_with(old)
                } else {
                    held == old || bare(held) == bare(old)
                };
                if !fits {
                    let line = text[..start].matches('\n').count() + 1;
                    return Some((path.clone(), line, held.to_string()));
                }
            }
        }
        None
    }

    /// Writes every changed file through `write_set::write_files`: each is
    /// first checked against what the plan read (a file changed since, while
    /// the server was asked about leftovers, refuses the edit: `EditRefused`),
    /// all are prepared beside their files and then renamed into place, and a
    /// failure puts back what was changed (`EditFailed`).
    pub fn commit(self) -> Result<Vec<(PathBuf, FileChange)>> {
        let mut changes = Vec::new();
        let mut writes = Vec::new();
        for (path, content) in &self.files {
            let original = self.originals.get(path).cloned().flatten();
            let content: Option<Vec<u8>> = content.as_ref().map(|c| {
                if self.bom.contains(path) { format!("\u{feff}{c}").into_bytes() } else { c.clone().into_bytes() }
            });
            let change = match (&original, &content) {
                (None, None) => continue,
                (Some(old), Some(new)) if old == new => continue,
                (None, Some(_)) => FileChange::Created,
                (Some(_), Some(_)) => FileChange::Changed,
                (Some(_), None) => FileChange::Deleted,
            };
            changes.push((path.clone(), change));
            let shown = path.strip_prefix(&self.root).unwrap_or(path).to_path_buf();
            writes.push(write_set::FileWrite { path: path.clone(), shown, before: original, after: content });
        }
        write_set::write_files(&writes).map_err(|e| match e {
            write_set::Error::Conflict { files } => Error::EditRefused(format!(
                "{} changed on disk while the rename was planned",
                files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
            )),
            failed @ write_set::Error::WriteFailed { .. } => Error::EditFailed(failed.to_string()),
        })?;
        Ok(changes)
    }
}

/// Why `name` cannot be an identifier in any of the languages served, if it
/// cannot: some servers (typescript-language-server) write whatever they are
/// given. Letters, digits, `_` and `$`, not first a digit; Rust's raw `r#` and
/// a lifetime's leading `'` are let through.
pub(crate) fn not_an_identifier(name: &str) -> Option<&'static str> {
    let bare = name.strip_prefix("r#").or_else(|| name.strip_prefix('\'')).unwrap_or(name);
    let Some(first) = bare.chars().next() else { return Some("it is empty") };
    if first.is_ascii_digit() {
        return Some("it starts with a digit");
    }
    if bare.chars().any(char::is_whitespace) {
        return Some("it contains white space");
    }
    if !bare.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Some("only letters, digits, `_` and `$` make a name");
    }
    None
}

/// Applies a `WorkspaceEdit` (either `changes` or `documentChanges`) all or nothing.
#[cfg(test)]
pub(crate) fn apply_workspace_edit(
    root: &Path,
    edit: &Value,
    encoding: PositionEncoding,
) -> Result<(Vec<(PathBuf, FileChange)>, usize)> {
    let plan = plan_json(root, edit, encoding)?;
    let edits = plan.edits;
    Ok((plan.commit()?, edits))
}

/// [`plan_workspace_edit`] of a `WorkspaceEdit` written as JSON (the trials', the tests').
#[cfg(any(test, feature = "fault-injection"))]
pub(crate) fn plan_json(root: &Path, edit: &Value, encoding: PositionEncoding) -> Result<Plan> {
    let edit = crate::protocol::decode(edit)
        .map_err(|e| Error::EditRefused(format!("the server's answer is not a WorkspaceEdit of the protocol ({e})")))?;
    plan_workspace_edit(root, edit, encoding)
}

/// A `WorkspaceEdit` (either `changes` or `documentChanges`) applied to an
/// in-memory view of the files: nothing is written until [`Plan::commit`].
pub(crate) fn plan_workspace_edit(
    root: &Path,
    edit: lsp_types::WorkspaceEdit,
    encoding: PositionEncoding,
) -> Result<Plan> {
    let mut plan = Plan {
        root: root.to_path_buf(),
        files: BTreeMap::new(),
        originals: BTreeMap::new(),
        edited: BTreeMap::new(),
        bom: Default::default(),
        edits: 0,
    };
    match (edit.document_changes, edit.changes) {
        (Some(lsp_types::DocumentChanges::Edits(edits)), _) => {
            for e in edits {
                plan.document_edit(e, encoding)?;
            }
        }
        (Some(lsp_types::DocumentChanges::Operations(operations)), _) => {
            for operation in operations {
                match operation {
                    lsp_types::DocumentChangeOperation::Edit(e) => plan.document_edit(e, encoding)?,
                    lsp_types::DocumentChangeOperation::Op(op) => plan.operation(op)?,
                }
            }
        }
        // `documentChanges` wins over `changes` when a server sends both (LSP 3.17 "WorkspaceEdit").
        (None, Some(changes)) => {
            let mut changes: Vec<_> = changes.into_iter().collect();
            changes.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            for (uri, edits) in changes {
                plan.text_edits(&file_path(&uri)?, &edits, encoding)?;
            }
        }
        (None, None) => {}
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::uri::path_to_uri;

    #[test]
    fn a_new_name_must_be_an_identifier() {
        for ok in ["sum_of_areas", "sumOfAreas", "$el", "_", "größe", "r#type", "'long", "x2"] {
            assert_eq!(not_an_identifier(ok), None, "{ok}");
        }
        assert_eq!(not_an_identifier("1bad"), Some("it starts with a digit"));
        assert_eq!(not_an_identifier("not valid"), Some("it contains white space"));
        assert_eq!(not_an_identifier("a-b"), Some("only letters, digits, `_` and `$` make a name"));
        assert_eq!(not_an_identifier("a.b"), Some("only letters, digits, `_` and `$` make a name"));
        assert_eq!(not_an_identifier(""), Some("it is empty"));
    }

    #[test]
    fn edits_apply_all_or_nothing_and_stay_inside_the_root() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::write(root.join("a.txt"), "héllo wörld\r\nsecond\n")?;
        std::fs::write(root.join("b.txt"), "keep")?;
        let uri = |name: &str| path_to_uri(&root.join(name));
        // UTF-16 columns: "wörld" starts at 6.
        let edit = json!({ "documentChanges": [
            { "textDocument": { "uri": uri("a.txt"), "version": 1 }, "edits": [
                { "range": { "start": { "line": 0, "character": 6 }, "end": { "line": 0, "character": 11 } }, "newText": "earth" },
                { "range": { "start": { "line": 1, "character": 0 }, "end": { "line": 1, "character": 6 } }, "newText": "2nd" }
            ] },
            { "kind": "rename", "oldUri": uri("b.txt"), "newUri": uri("c.txt") }
        ] });
        let (changes, edits) = apply_workspace_edit(&root, &edit, PositionEncoding::Utf16)?;
        assert_eq!(edits, 2);
        assert_eq!(changes.len(), 3);
        assert_eq!(std::fs::read_to_string(root.join("a.txt"))?, "héllo earth\r\n2nd\n");
        assert!(!root.join("b.txt").exists());
        assert_eq!(std::fs::read_to_string(root.join("c.txt"))?, "keep");

        // One edit outside the root: nothing is written.
        let outside = json!({ "changes": {
            uri("a.txt"): [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } }, "newText": "H" }],
            "file:///etc/hostname": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "newText": "x" }]
        } });
        let error = apply_workspace_edit(&root, &outside, PositionEncoding::Utf16)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("outside the workspace root"), "{error}");
        assert_eq!(std::fs::read_to_string(root.join("a.txt"))?, "héllo earth\r\n2nd\n");
        Ok(())
    }

    #[test]
    fn a_server_edit_that_reaches_outside_the_root_is_refused_whichever_way() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let root = base.join("work");
        std::fs::create_dir(&root)?;
        std::fs::write(root.join("a.txt"), "inside\n")?;
        std::fs::write(base.join("canary.txt"), "canary\n")?;
        std::os::unix::fs::symlink(base.join("canary.txt"), root.join("link.txt"))?;
        let text_edit = json!([{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "newText": "x" }]);
        let dotted = format!("file://{}/../canary.txt", root.display());
        let attempts = [
            // A `file://` URI with `..` in it.
            json!({ "changes": { dotted.clone(): text_edit.clone() } }),
            // Through a symlink inside the root.
            json!({ "changes": { path_to_uri(&root.join("link.txt")): text_edit.clone() } }),
            // A rename whose target is outside.
            json!({ "documentChanges": [{ "kind": "rename", "oldUri": path_to_uri(&root.join("a.txt")), "newUri": format!("file://{}/../moved.txt", root.display()) }] }),
            // A file created outside, then a delete of the canary.
            json!({ "documentChanges": [{ "kind": "create", "uri": path_to_uri(&base.join("new.txt")) }] }),
            json!({ "documentChanges": [{ "kind": "delete", "uri": dotted }] }),
        ];
        for attempt in attempts {
            let error = apply_workspace_edit(&root, &attempt, PositionEncoding::Utf16)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains("outside the workspace root"), "{attempt}: {error}");
        }
        assert_eq!(std::fs::read_to_string(base.join("canary.txt"))?, "canary\n");
        assert_eq!(std::fs::read_to_string(root.join("a.txt"))?, "inside\n");
        assert!(!base.join("moved.txt").exists() && !base.join("new.txt").exists());
        Ok(())
    }

    #[test]
    fn a_range_that_does_not_hold_the_old_name_on_disk_is_a_stale_edit() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        // The server saw `def to_key(v):` on line 2; the disk now has another line there.
        std::fs::write(root.join("u.py"), "import os\nVALUE = 1\ndef to_key(v):\n    return v\n")?;
        let edit = |line: u32, start: u32, end: u32, new: &str| {
            json!({ "changes": { path_to_uri(&root.join("u.py")): [
                { "range": { "start": { "line": line, "character": start }, "end": { "line": line, "character": end } }, "newText": new }
            ] } })
        };
        let stale = plan_json(&root, &edit(1, 4, 10, "as_key"), PositionEncoding::Utf16)?;
        assert_eq!(stale.stale_edit("to_key"), Some((root.join("u.py"), 2, "E = 1".to_string())));
        let current = plan_json(&root, &edit(2, 4, 10, "as_key"), PositionEncoding::Utf16)?;
        assert_eq!(current.stale_edit("to_key"), None);
        // Prefix and suffix text keep the old name in the new text; the range still holds it.
        let shorthand = plan_json(&root, &edit(2, 4, 10, "to_key: as_key"), PositionEncoding::Utf16)?;
        assert_eq!(shorthand.stale_edit("to_key"), None);
        // Nothing is written by planning.
        assert_eq!(std::fs::read_to_string(root.join("u.py"))?, "import os\nVALUE = 1\ndef to_key(v):\n    return v\n");
        Ok(())
    }

    /// Every file under `root` with its content, hidden ones too.
    fn tree(root: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                if path.is_dir() {
                    out.push((format!("{name}/"), String::new()));
                    stack.push(path);
                } else {
                    out.push((name, std::fs::read_to_string(&path).unwrap_or_default()));
                }
            }
        }
        out.sort();
        out
    }

    /// A rename's edit with a text edit, a file renamed, one created in a new
    /// directory and one deleted, over a fresh root.
    fn mixed_edit() -> anyhow::Result<(tempfile::TempDir, PathBuf, Value)> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::write(root.join("a.fix"), "def old\nuse old\n")?;
        std::fs::write(root.join("b.fix"), "use old\n")?;
        std::fs::write(root.join("gone.fix"), "x\n")?;
        let uri = |name: &str| path_to_uri(&root.join(name));
        let range =
            |line: u32| json!({ "start": { "line": line, "character": 4 }, "end": { "line": line, "character": 7 } });
        let edit = json!({ "documentChanges": [
            { "textDocument": { "uri": uri("a.fix"), "version": 1 }, "edits": [
                { "range": range(0), "newText": "new" }, { "range": range(1), "newText": "new" }
            ] },
            { "kind": "rename", "oldUri": uri("b.fix"), "newUri": uri("c.fix") },
            { "kind": "create", "uri": uri("sub/d.fix") },
            { "kind": "delete", "uri": uri("gone.fix") }
        ] });
        Ok((dir, root, edit))
    }

    /// The writer is shared with astmatch (`write-set`): a failure at any step
    /// of a rename's write leaves every file as it was.
    #[test]
    fn a_failing_step_leaves_every_file_as_it_was() -> anyhow::Result<()> {
        use write_set::fault::{self, Fault, Op};
        let steps = {
            let (_dir, root, edit) = mixed_edit()?;
            let counted = fault::count();
            plan_json(&root, &edit, PositionEncoding::Utf16)?.commit()?;
            counted.steps()
        };
        // a.fix written, kept and renamed (3), c.fix and sub/d.fix written and renamed (4),
        // b.fix and gone.fix kept and removed (4).
        assert_eq!(steps, 11);
        for at in 1..=steps {
            let (_dir, root, edit) = mixed_edit()?;
            let before = tree(&root);
            let plan = plan_json(&root, &edit, PositionEncoding::Utf16)?;
            let injected = fault::inject(Fault::FailStep { at, errno: fault::EACCES });
            let result = plan.commit();
            let hit = injected.fired().map(|h| h.op);
            drop(injected);
            if hit == Some(Op::Link) {
                // A failed link is gone around with a copy: the edit applies.
                assert_eq!(result?.len(), 5, "step {at}");
                continue;
            }
            let error = result.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.starts_with("writing the edit failed: write failed on "), "step {at}: {error}");
            assert!(error.contains("Permission denied") && error.contains("nothing changed"), "step {at}: {error}");
            assert_eq!(tree(&root), before, "step {at}");
        }
        Ok(())
    }

    /// Found while sharing the writer: a file changed on disk after the plan
    /// read it (while the servers were asked about leftovers) was overwritten
    /// with the plan's text. Now the edit is refused and nothing is written.
    #[test]
    fn a_file_changed_after_planning_refuses_the_edit() -> anyhow::Result<()> {
        let (_dir, root, edit) = mixed_edit()?;
        let plan = plan_json(&root, &edit, PositionEncoding::Utf16)?;
        std::fs::write(root.join("a.fix"), "def old\nuse old\nuse old\n")?;
        let before = tree(&root);
        let error = plan.commit().err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            error,
            "the server's edit was refused, nothing was written: a.fix changed on disk while the rename was planned"
        );
        assert_eq!(tree(&root), before);
        Ok(())
    }
}
