//! `agent-tools status`: what this checkout can use. For now, the shipped
//! grammars (the structural tools' resource), their extensions, and how many
//! files of each language the root holds (gitignore-aware walk). It starts no
//! server and reads no file contents.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use agent_tools::Workspace;
use astmatch::Lang;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Status {
    root: PathBuf,
    tools: Vec<&'static str>,
    languages: Vec<LanguageStatus>,
}

#[derive(Debug, Serialize)]
struct LanguageStatus {
    id: &'static str,
    extensions: Vec<String>,
    files: usize,
}

impl Status {
    /// Walks the root (honouring .gitignore, skipping hidden files) and counts files per language.
    pub fn gather(workspace: &Workspace, tools: Vec<&'static str>) -> Status {
        let mut counts: BTreeMap<Lang, usize> = BTreeMap::new();
        for entry in ignore::WalkBuilder::new(workspace.root()).build().flatten() {
            if entry.file_type().is_some_and(|t| t.is_file())
                && let Some(lang) = Lang::from_path(entry.path())
            {
                *counts.entry(lang).or_default() += 1;
            }
        }
        let languages = Lang::ALL
            .iter()
            .map(|&lang| LanguageStatus {
                id: lang.id(),
                extensions: lang.extensions().iter().map(|e| format!(".{e}")).collect(),
                files: counts.get(&lang).copied().unwrap_or(0),
            })
            .collect();
        Status { root: workspace.root().to_path_buf(), tools, languages }
    }

    /// Plain text for a terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "root: {}", self.root.display());
        let _ = writeln!(
            out,
            "structural search and rewrite ({}): available, {} tree-sitter grammars",
            self.tools.join(", "),
            self.languages.len()
        );
        let _ = writeln!(out);
        let _ = writeln!(out, "{:<12} {:>6}  extensions", "language", "files");
        for lang in &self.languages {
            let _ = writeln!(out, "{:<12} {:>6}  {}", lang.id, lang.files, lang.extensions.join(" "));
        }
        out
    }
}
