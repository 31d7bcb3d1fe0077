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
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool, Words};
use crate::tools::patch;

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

mod apply_patch;

pub use apply_patch::{ApplyPatch, ApplyPatchInput, Done, PatchOutput};

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
    type Output = WriteOutput;
    const NAME: &'static str = "write";
    const TIER: Tier = Tier::Write;

    fn preview(&self, input: &WriteInput) -> CallPreview {
        let lines = input.content.lines().count();
        CallPreview {
            summary: Some(format!("write {} ({lines} lines)", input.path)),
            paths: vec![PathBuf::from(&input.path)],
        }
    }

    async fn call(&self, input: WriteInput, _cx: &CallContext) -> Result<Reply<WriteOutput>> {
        let path = match resolve_for_write(&self.0, &input.path) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let existed = path.exists();
        if let Err(e) = write_atomic(&path, &input.content) {
            return Ok(Err(format!("could not write {}: {e}", input.path)));
        }
        Ok(Ok(WriteOutput {
            path: self.0.relative(&path).to_path_buf(),
            bytes: input.content.len(),
            created: !existed,
        }))
    }
}

impl Tool for EditFile {
    type Input = EditInput;
    type Output = EditOutput;
    const NAME: &'static str = "edit";
    const TIER: Tier = Tier::Write;

    fn preview(&self, input: &EditInput) -> CallPreview {
        CallPreview { summary: Some(format!("edit {}", input.path)), paths: vec![PathBuf::from(&input.path)] }
    }

    async fn call(&self, input: EditInput, _cx: &CallContext) -> Result<Reply<EditOutput>> {
        let path = match self.0.resolve(&input.path) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e.to_string())),
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => return Ok(Err(format!("could not read {}: {e}", input.path))),
        };
        if input.old_string.is_empty() {
            return Ok(Err("old_string must not be empty (use write to create or replace a whole file)".to_owned()));
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
            (0, _) => return Ok(Err(format!("old_string does not occur in {}; nothing was changed", input.path))),
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
                return Ok(Err(format!(
                    "old_string occurs {n} times in {}; give more surrounding text to make it unique, or set replace_all; nothing was changed",
                    input.path
                )));
            }
        };
        if let Err(e) = write_atomic(&path, &updated) {
            return Ok(Err(format!("could not write {}: {e}", input.path)));
        }
        Ok(Ok(EditOutput { path: self.0.relative(&path).to_path_buf(), replacements: count, note }))
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

impl Words for WriteOutput {
    fn words(&self) -> String {
        let verb = if self.created { "created" } else { "replaced" };
        format!("{verb} {} ({} bytes)", self.path.display(), self.bytes)
    }
}

impl Words for EditOutput {
    fn words(&self) -> String {
        let noted = self.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        let plural = if self.replacements == 1 { "" } else { "s" };
        format!("replaced {} occurrence{plural} in {}{noted}", self.replacements, self.path.display())
    }
}
