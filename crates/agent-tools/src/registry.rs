//! The registry: the tools of one run, each registered with its spec and
//! handler together, and present only when its resource is wired.
//!
//! Each leaf crate plugs in through one `with_*` method here, taking the
//! resources its tools need (`with_astmatch`, `with_lsp`, `with_file_tools`,
//! `with_debug`, `with_kernels`, `with_question_port`, `with_vibe_roster`).
//! The registry also holds the per-run lock of each tool that is not parallel-safe.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::gate::{ApprovalWiring, Gate};
use crate::schema::OutputCheck;
use crate::surface::Surface;
use crate::tier::Tier;
use crate::tool::{DynTool, Tool, ToolSpec};
use crate::tools::ask_user::QuestionWiring;
use crate::tools::astmatch::AstmatchWiring;

/// One registered tool.
pub(crate) struct Entry {
    pub(crate) spec: ToolSpec,
    pub(crate) tool: Box<dyn DynTool>,
    /// Held for the whole call when the tool is not parallel-safe.
    pub(crate) lock: Option<tokio::sync::Mutex<()>>,
    /// The output schema, compiled; `None` when the tool declares none.
    pub(crate) output: Option<OutputCheck>,
}

/// The tools of one run. Build it with [`Registry::builder`], then show it to a
/// model through a [`Surface`].
pub struct Registry {
    entries: Vec<Entry>,
    gate: Option<Gate>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| e.spec.name)).finish()
    }
}

impl Registry {
    /// An empty builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Every registered tool's spec, in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|e| &e.spec)
    }

    /// The spec of one tool.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).map(|e| &e.spec)
    }

    /// Whether a tool's calls may run at once; `None` for an unknown tool.
    pub fn parallel_safe(&self, name: &str) -> Option<bool> {
        self.entry(name).map(|e| e.spec.parallel_safe)
    }

    /// A surface of this registry capped at `cap`.
    pub fn surface(self: &Arc<Self>, cap: Tier) -> Surface {
        Surface::new(Arc::clone(self), cap)
    }

    /// The "allow for this session" answers given so far; `None` without an approval gate.
    pub fn session_grants(&self) -> Option<crate::approval::SessionGrants> {
        self.gate.as_ref().map(Gate::grants)
    }

    pub(crate) fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.spec.name == name)
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }
}

/// Collects tools; [`RegistryBuilder::build`] checks that no name is used twice.
#[derive(Default)]
pub struct RegistryBuilder {
    entries: Vec<Entry>,
    duplicate: Option<&'static str>,
    approval: Option<ApprovalWiring>,
}

impl RegistryBuilder {
    /// Registers a tool: its spec (name, description, schema, tier,
    /// parallel-safety) is derived from the type, so spec and handler cannot drift.
    pub fn register<T: Tool>(mut self, tool: T) -> RegistryBuilder {
        if self.entries.iter().any(|e| e.spec.name == T::NAME) {
            self.duplicate.get_or_insert(T::NAME);
        }
        let lock = (!T::PARALLEL_SAFE).then(|| tokio::sync::Mutex::new(()));
        let spec = ToolSpec::of::<T>();
        let output = spec.output_schema.as_ref().map(OutputCheck::new);
        self.entries.push(Entry { spec, tool: Box::new(tool), lock, output });
        self
    }

    /// Wires structural search and staged rewrite: registers `ast_grep`,
    /// `ast_edit` and `resolve`, which share one edit store for the run.
    pub fn with_astmatch(self, wiring: AstmatchWiring) -> RegistryBuilder {
        crate::tools::astmatch::register(self, wiring)
    }

    /// Wires a language-server supervisor and the working directory:
    /// registers `lsp` and `lsp_rename`.
    pub fn with_lsp(self, wiring: crate::tools::lsp::LspWiring) -> RegistryBuilder {
        crate::tools::lsp::register(self, wiring)
    }

    /// Registers the plain `write`, `edit` and `apply_patch` file tools for
    /// hosts that have none, wrapped with diagnostics on write when
    /// `diagnostics` is given.
    pub fn with_file_tools(
        self,
        workspace: crate::workspace::Workspace,
        diagnostics: Option<std::sync::Arc<crate::tools::diagnostics::DiagnosticsOnWrite>>,
    ) -> RegistryBuilder {
        use crate::tools::diagnostics::WithDiagnostics;
        use crate::tools::files::{ApplyPatch, EditFile, WriteFile};
        match diagnostics {
            Some(d) => self
                .register(WithDiagnostics::new(WriteFile(workspace.clone()), std::sync::Arc::clone(&d)))
                .register(WithDiagnostics::new(EditFile(workspace.clone()), std::sync::Arc::clone(&d)))
                .register(WithDiagnostics::new(ApplyPatch(workspace), d)),
            None => self
                .register(WriteFile(workspace.clone()))
                .register(EditFile(workspace.clone()))
                .register(ApplyPatch(workspace)),
        }
    }

    /// Wires a debug supervisor, the working directory and the conversation
    /// whose session it drives: registers `debug`.
    pub fn with_debug(self, wiring: crate::tools::debug::DebugWiring) -> RegistryBuilder {
        crate::tools::debug::register(self, wiring)
    }

    /// Wires a run's kernels: registers `eval`.
    pub fn with_kernels(self, wiring: crate::tools::kernel::KernelWiring) -> RegistryBuilder {
        crate::tools::kernel::register(self, wiring)
    }

    /// Wires a question port and the target space its cards are shown in:
    /// registers `ask_user`.
    pub fn with_question_port(self, wiring: QuestionWiring) -> RegistryBuilder {
        crate::tools::ask_user::register(self, wiring)
    }

    /// Turns vibe mode on with this roster of background workers: registers
    /// `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill` and `vibe_list`.
    pub fn with_vibe_roster(self, roster: vibe_roster::Roster) -> RegistryBuilder {
        crate::tools::vibe::register(self, roster)
    }

    /// Turns the approval gate on: every call past the tier cap, by any route
    /// (a model's call, the command line, MCP, a cell's `tool()`), is decided
    /// by `wiring.policy`, and asked through `wiring.port` when the policy says
    /// ask. Without this, every call within the cap runs.
    pub fn with_approval(mut self, wiring: ApprovalWiring) -> RegistryBuilder {
        self.approval = Some(wiring);
        self
    }

    /// The registry. Errors: [`Error::DuplicateTool`].
    pub fn build(self) -> Result<Registry> {
        match self.duplicate {
            Some(name) => Err(Error::DuplicateTool { name }),
            None => Ok(Registry { entries: self.entries, gate: self.approval.map(Gate::new) }),
        }
    }
}
