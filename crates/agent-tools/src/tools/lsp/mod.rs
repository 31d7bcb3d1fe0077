//! `lsp` and `lsp_rename` over the `lsp-supervisor` crate.
//!
//! Registered when a run wires a supervisor and a working directory
//! ([`LspWiring`]). Whether a server can answer for a file is found at call
//! time; `status` says why not. Paths in results are relative to the working
//! directory; lines and columns are 1-indexed (columns in characters).

use std::sync::Arc;

use lsp_supervisor::Supervisor;

use crate::error::Result;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, Reply, Tool};
use crate::workspace::Workspace;

mod input;
mod ops;
mod output;
mod rename;
mod status;
mod words;

pub use input::*;
pub use output::*;
pub use rename::*;
pub use status::*;
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
    /// The run's language servers.
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
