//! `agent-tools status`: what this checkout can use: the shipped grammars (the
//! structural tools' resource), their extensions and how many files of each
//! language the root holds (gitignore-aware walk), and which interpreter each
//! `eval` kernel would run, or why there is none. It starts no server or
//! kernel and reads no file contents.

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
    kernels: Vec<KernelStatus>,
}

#[derive(Debug, Serialize)]
struct KernelStatus {
    language: String,
    /// The interpreter `eval` would start, if one was found.
    interpreter: Option<PathBuf>,
    /// Where it was found (`configured`, `project venv …`, `PATH`), or why none was.
    detail: String,
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
        let kernels = kernel::interpreter_reports(&kernel::KernelConfig::new(workspace.root()))
            .into_iter()
            .map(|report| match report.found {
                Ok(found) => KernelStatus {
                    language: report.language.to_string(),
                    interpreter: Some(found.program),
                    detail: match found.source {
                        kernel::InterpreterSource::Configured => "configured".to_string(),
                        kernel::InterpreterSource::ProjectVenv(venv) => format!("the project's {venv}"),
                        kernel::InterpreterSource::Path => "on PATH".to_string(),
                    },
                },
                Err(why) => KernelStatus { language: report.language.to_string(), interpreter: None, detail: why },
            })
            .collect();
        Status { root: workspace.root().to_path_buf(), tools, languages, kernels }
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
        let _ = writeln!(out);
        let _ = writeln!(out, "eval kernels (started on first use):");
        for k in &self.kernels {
            match &k.interpreter {
                Some(program) => {
                    let _ = writeln!(out, "{:<12} {} ({})", k.language, program.display(), k.detail);
                }
                None => {
                    let _ = writeln!(out, "{:<12} unavailable: {}", k.language, k.detail);
                }
            }
        }
        out
    }
}
