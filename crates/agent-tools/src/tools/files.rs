//! `write` and `edit`: plain file tools for hosts that have none (the
//! `agent-tools` command's MCP clients), write tier, each naming the one file
//! it touches in its preview so diagnostics on write can wrap it.

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::error::Result;
use crate::result::ToolResult;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
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

/// Replace text in a file: `old_string` must occur exactly once (give more context to make it unique) unless `replace_all` is true. When a language server covers the file, the result ends with the diagnostics this edit introduced.
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
    let joined = if Path::new(given).is_absolute() { PathBuf::from(given) } else { ws.root().join(given) };
    let mut normal = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    if !normal.starts_with(ws.root()) || normal == ws.root() {
        return Err(format!("refused: path '{given}' is outside the working directory {}", ws.root().display()));
    }
    let mut existing = normal.clone();
    while !existing.exists() {
        existing = match existing.parent() {
            Some(p) => p.to_path_buf(),
            None => break,
        };
    }
    let real = existing.canonicalize().map_err(|e| format!("{}: {e}", existing.display()))?;
    if !real.starts_with(ws.root()) {
        return Err(format!(
            "refused: path '{given}' goes through a symlink to {}, outside the working directory",
            real.display()
        ));
    }
    if normal.is_dir() {
        return Err(format!("'{given}' is a directory"));
    }
    Ok(normal)
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
            .with_structured(
                json!({ "path": self.0.relative(&path), "bytes": input.content.len(), "created": !existed }),
            ))
    }
}

impl Tool for EditFile {
    type Input = EditInput;
    const NAME: &'static str = "edit";
    const TIER: Tier = Tier::Write;

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
        let count = text.matches(&input.old_string).count();
        let updated = match (count, input.replace_all) {
            (0, _) => {
                return Ok(ToolResult::error(format!(
                    "old_string does not occur in {}; nothing was changed",
                    input.path
                )));
            }
            (1, _) | (_, true) => text.replace(&input.old_string, &input.new_string),
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
        Ok(ToolResult::text(format!(
            "replaced {count} occurrence{} in {}",
            if count == 1 { "" } else { "s" },
            self.0.relative(&path).display()
        ))
        .with_structured(json!({ "path": self.0.relative(&path), "replacements": count })))
    }
}
