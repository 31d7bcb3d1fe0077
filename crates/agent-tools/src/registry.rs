//! The registry: the tools of one run, each registered with its spec and
//! handler together, and present only when its resource is wired.
//!
//! The registry knows no tool: it holds [`RegistryBuilder::register`], and each
//! toolset wires itself from its own module, with a `with_*` method on the builder
//! that takes the resources its tools need (`with_astmatch` in `tools/astmatch.rs`,
//! `with_lsp`, `with_file_tools`, `with_debug`, `with_kernels`,
//! `with_question_port`, `with_vibe_roster`). The registry also holds the per-run
//! lock of each tool that is not parallel-safe.

use crate::error::{Error, Result};
use crate::gate::{ApprovalWiring, Gate};
use crate::schema::OutputCheck;
use crate::tool::{DynTool, Tool, ToolSpec};

/// One registered tool.
pub(crate) struct Entry {
    /// The tool type's spec, made once per process and shared by every registry that has it.
    pub(crate) spec: std::sync::Arc<ToolSpec>,
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
        self.entries.iter().map(|e| &*e.spec)
    }

    /// The spec of one tool.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).map(|e| &*e.spec)
    }

    /// Whether a tool's calls may run at once; `None` for an unknown tool.
    pub fn parallel_safe(&self, name: &str) -> Option<bool> {
        self.entry(name).map(|e| e.spec.parallel_safe)
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

/// `T`'s spec, derived from the type once per process: a host's runs each have a
/// registry, and a spec's schemas take hundreds of KB.
fn shared_spec<T: Tool>() -> std::sync::Arc<ToolSpec> {
    type Specs = std::collections::HashMap<std::any::TypeId, std::sync::Arc<ToolSpec>>;
    static SPECS: std::sync::Mutex<Option<Specs>> = std::sync::Mutex::new(None);
    let mut specs = SPECS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let spec = specs.get_or_insert_with(Specs::new).entry(std::any::TypeId::of::<T>());
    std::sync::Arc::clone(spec.or_insert_with(|| std::sync::Arc::new(ToolSpec::of::<T>())))
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
        let spec = shared_spec::<T>();
        let output = spec.output_schema.as_ref().map(OutputCheck::new);
        self.entries.push(Entry { spec, tool: Box::new(tool), lock, output });
        self
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
