//! `lsp_rename`: a project-wide rename, its value made from the supervisor's
//! outcome and worded from it.

use std::fmt::Write as _;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool, Words};
use crate::workspace::relative_text;

use super::output::{CursorOutput, LocationOutput};
use super::words::{count, reporting_servers};
use super::{LspRenameInput, LspWiring};

pub(super) struct LspRename(pub(super) LspWiring);

impl Tool for LspRename {
    type Input = LspRenameInput;
    type Output = RenameOutput;
    const NAME: &'static str = "lsp_rename";
    const TIER: Tier = Tier::Write;
    const PARALLEL_SAFE: bool = false;

    fn preview(&self, input: &LspRenameInput) -> CallPreview {
        CallPreview {
            summary: Some(format!(
                "rename `{}` (line {} of {}) to `{}` across the project",
                input.symbol, input.line, input.file, input.new_name
            )),
            // Every file may change: the whole tree is in scope.
            paths: vec![PathBuf::from(".")],
        }
    }

    async fn call(&self, input: LspRenameInput, cx: &CallContext) -> Result<Reply<RenameOutput>> {
        let ws = &self.0.workspace;
        let path = match ws.resolve(&input.file) {
            Ok(path) => path,
            Err(e) => return Ok(Err(e.to_string())),
        };
        if input.new_name.trim().is_empty() {
            return Ok(Err("new_name must not be empty".to_owned()));
        }
        let renamed = self.0.supervisor.rename(&path, input.line, &input.symbol, &input.new_name);
        let outcome = match reporting_servers(&self.0.supervisor, cx, renamed).await {
            Ok(outcome) => outcome,
            Err(e) => return Ok(Err(relative_text(ws, &e.to_string()))),
        };
        let leftover = |l: &lsp_supervisor::Leftover| LeftoverOutput {
            location: LocationOutput::new(ws, &l.location),
            excluded: l.excluded.clone(),
            unasked: l.unasked.clone(),
        };
        Ok(Ok(RenameOutput {
            server: outcome.server,
            old_name: outcome.old_name.clone(),
            asked_at: outcome.asked_at.as_ref().map(|l| LocationOutput::new(ws, l)),
            edits: outcome.edits,
            files: outcome
                .files
                .iter()
                .map(|f| RenamedFileOutput { path: ws.relative(&f.path).to_path_buf(), change: f.change })
                .collect(),
            not_covered: outcome.not_covered.iter().map(leftover).collect(),
            unresolved: outcome.unresolved.iter().map(leftover).collect(),
            other_symbols: outcome.other_symbols,
            unchecked: outcome.unchecked,
            kept_aliases: outcome.kept_aliases.iter().map(|l| LocationOutput::new(ws, l)).collect(),
            new_name: input.new_name,
            cursor: CursorOutput::new(ws, &outcome.cursor),
            symbol: input.symbol,
        }))
    }
}

/// `lsp_rename`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameOutput {
    /// The server that renamed.
    pub server: &'static str,
    /// The whole identifier renamed (the symbol given may be part of it).
    pub old_name: String,
    /// Where the rename was asked, when not at the place given (a declaration).
    pub asked_at: Option<LocationOutput>,
    /// Text edits written.
    pub edits: usize,
    /// Every file written, created or deleted.
    pub files: Vec<RenamedFileOutput>,
    /// Uses of the old name in files the server's configuration leaves out.
    pub not_covered: Vec<LeftoverOutput>,
    /// Occurrences the server could not resolve (comments, strings, docs).
    pub unresolved: Vec<LeftoverOutput>,
    /// Occurrences that are other symbols of the same name.
    pub other_symbols: usize,
    /// Occurrences not asked about (past the cap).
    pub unchecked: usize,
    /// Where the edit kept the old name as an alias (`export { new as old }`).
    pub kept_aliases: Vec<LocationOutput>,
    /// The new name; for the words.
    #[serde(skip)]
    pub new_name: String,
    /// The place asked about; for the words.
    #[serde(skip)]
    pub cursor: CursorOutput,
    /// The symbol as given; for the words.
    #[serde(skip)]
    pub symbol: String,
}

/// One file a rename changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenamedFileOutput {
    /// The file, relative to the working directory.
    pub path: PathBuf,
    /// `changed`, `created` or `deleted`.
    pub change: &'static str,
}

/// A use of the old name the rename left.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeftoverOutput {
    /// Where the use is; `text` is its line.
    pub location: LocationOutput,
    /// Why the server's configuration leaves its file out.
    pub excluded: Option<String>,
    /// Why the server could not be asked about it.
    pub unasked: Option<String>,
}

impl Words for RenameOutput {
    fn words(&self) -> String {
        let mut text = format!(
            "renamed `{}` to `{}` ({}; {} in {}):\n",
            self.symbol,
            self.new_name,
            self.cursor.note(),
            count(self.edits, "edit"),
            count(self.files.len(), "file")
        );
        for file in &self.files {
            let _ = writeln!(text, "{} {}", file.change, file.path.display());
        }
        if let Some(at) = &self.asked_at {
            let _ = writeln!(
                text,
                "asked at the declaration {} ({} renames an imported name only locally when asked at a use)",
                at.at(),
                self.server
            );
        }
        for alias in &self.kept_aliases {
            let _ = writeln!(
                text,
                "kept `{}` as an alias at {} (`{}`), so code that imports `{}` goes on working; rename it too if that name should go",
                self.old_name,
                alias.at(),
                alias.text,
                self.old_name
            );
        }
        text.push_str(&self.leftover_text());
        text.trim_end().to_owned()
    }
}

impl RenameOutput {
    /// The uses of the old name a rename left, as lines: the ones in files the
    /// server's configuration leaves out (grouped by why), the ones it could not
    /// resolve, and counts of other symbols and of uses not asked about.
    fn leftover_text(&self) -> String {
        const SHOWN: usize = 10;
        let mut text = String::new();
        let old = &self.old_name;
        let mut reasons: Vec<&str> = self.not_covered.iter().filter_map(|l| l.excluded.as_deref()).collect();
        reasons.dedup();
        for why in reasons {
            let uses: Vec<&LeftoverOutput> =
                self.not_covered.iter().filter(|l| l.excluded.as_deref() == Some(why)).collect();
            let mut files: Vec<String> = uses.iter().map(|l| l.location.path.display().to_string()).collect();
            files.dedup();
            let _ = writeln!(
                text,
                "{} of `{old}` in {} not renamed, because {why}:",
                count(uses.len(), "more use"),
                files.join(", ")
            );
            for l in uses.iter().take(SHOWN) {
                let _ = writeln!(text, "  {}: {}", l.location.at(), l.location.text);
            }
        }
        if !self.unresolved.is_empty() {
            let _ = writeln!(
                text,
                "{} of `{old}` that {} does not resolve (a comment, a string, or code it does not see) or could not be asked about, not renamed:",
                count(self.unresolved.len(), "more occurrence"),
                self.server
            );
            for l in self.unresolved.iter().take(SHOWN) {
                let unasked = l.unasked.as_ref().map(|e| format!("  (not asked: {e})")).unwrap_or_default();
                let _ = writeln!(text, "  {}: {}{unasked}", l.location.at(), l.location.text);
            }
            if self.unresolved.len() > SHOWN {
                let _ = writeln!(text, "  … {} more", self.unresolved.len() - SHOWN);
            }
        }
        if self.other_symbols > 0 || self.unchecked > 0 {
            let mut parts = Vec::new();
            if self.other_symbols > 0 {
                parts.push(format!(
                    "{} of other symbols named `{old}` left as they are",
                    count(self.other_symbols, "use")
                ));
            }
            if self.unchecked > 0 {
                parts.push(format!("{} more occurrences of `{old}` not checked", self.unchecked));
            }
            let _ = writeln!(text, "{}", parts.join("; "));
        }
        text
    }
}
