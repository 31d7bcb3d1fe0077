//! `lsp` and `lsp_rename` over the `lsp-supervisor` crate.
//!
//! Registered when a run wires a supervisor and a working directory
//! ([`LspWiring`]). Whether a server can answer for a file is found at call
//! time; `status` says why not. Paths in results are relative to the working
//! directory; lines and columns are 1-indexed (columns in characters).

use std::path::PathBuf;
use std::sync::Arc;

use lsp_supervisor::Supervisor;

use crate::error::Result;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool};
use crate::workspace::Workspace;
use crate::workspace::relative_text;

mod input;
mod ops;
mod output;
mod words;

pub use input::*;
pub use output::*;
pub(crate) use words::{count, reporting_servers};

/// References shown at most, by default ([`LspCaps`]).
pub const REFERENCES_CAP: usize = 50;

/// Workspace symbols shown at most, by default ([`LspCaps`]).
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;

/// Document symbols shown at most, by default ([`LspCaps`]).
pub const DOCUMENT_SYMBOLS_CAP: usize = 200;

/// How many results `lsp` shows at most; a capped list says how many there were in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LspCaps {
    /// `references`. Default [`REFERENCES_CAP`].
    pub references: usize,
    /// `symbols` with a `query` (a workspace search). Default [`WORKSPACE_SYMBOLS_CAP`].
    pub workspace_symbols: usize,
    /// `symbols` with only a `file` (its outline). Default [`DOCUMENT_SYMBOLS_CAP`].
    pub document_symbols: usize,
}

impl Default for LspCaps {
    fn default() -> LspCaps {
        LspCaps {
            references: REFERENCES_CAP,
            workspace_symbols: WORKSPACE_SYMBOLS_CAP,
            document_symbols: DOCUMENT_SYMBOLS_CAP,
        }
    }
}

/// The resources behind `lsp` and `lsp_rename`.
#[derive(Debug, Clone)]
pub struct LspWiring {
    pub supervisor: Arc<Supervisor>,
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// The result caps.
    pub caps: LspCaps,
}

impl LspWiring {
    /// The wiring with the default caps.
    pub fn new(supervisor: Arc<Supervisor>, workspace: Workspace) -> LspWiring {
        LspWiring { supervisor, workspace, caps: LspCaps::default() }
    }
}

impl RegistryBuilder {
    /// Wires a language-server supervisor and the working directory:
    /// registers `lsp` and `lsp_rename`.
    pub fn with_lsp(self, wiring: LspWiring) -> RegistryBuilder {
        self.register(Lsp(wiring.clone())).register(LspRename(wiring))
    }
}

struct Lsp(LspWiring);

impl Tool for Lsp {
    type Input = LspInput;
    type Output = LspOutput;
    const NAME: &'static str = "lsp";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: LspInput, cx: &CallContext) -> Result<Reply<LspOutput>> {
        Ok(reporting_servers(&self.0.supervisor, cx, self.run(input)).await)
    }
}

struct LspRename(LspWiring);

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
