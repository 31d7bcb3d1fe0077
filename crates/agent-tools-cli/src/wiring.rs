//! The resources the command wires beyond the working directory: a question
//! port for `ask_user` (the terminal for `call`, MCP elicitation for `serve`),
//! the kernels for `eval` (the project's own interpreters, started on first
//! use), a debug supervisor for `debug` (one session per run), and, in vibe
//! mode, a roster of background workers running the configured commands;
//! each from the run's typed settings (`config/settings.rs`).

use std::sync::Arc;

use agent_tools::{
    ApprovalPolicy, ApprovalWiring, AstmatchWiring, DebugWiring, HostConfig, KernelWiring, LspCaps, QuestionWiring,
    Rule, RunLsp, RunSpec, Tier, Workspace,
};
use anyhow::bail;
use astmatch::TreeStore;
use dap_session::{DebugConfig, DebugSupervisor};
use enclosure::{Enclosure, Mode};
use kernel::{KernelConfig, Kernels};
use lsp_supervisor::{Language, SupervisorConfig};
use question_port::TerminalPort;
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig};

use crate::config::{EnclosureMode, Flags, Settings, VibeSettings, server_set, server_specs};
use crate::elicit::ElicitationPort;

/// What to wire besides the structural tools.
#[derive(Default)]
pub struct Wiring {
    /// Registers `ask_user`.
    pub question: Option<QuestionWiring>,
    /// Registers the five `vibe_*` tools.
    pub vibe: Option<Roster>,
    /// Registers `eval`.
    pub kernels: Option<KernelWiring>,
    /// Turns the approval gate on.
    pub approval: Option<ApprovalWiring>,
    /// Where the project's code runs (debug adapters, project checkers, language servers;
    /// kernels and workers get it when they are wired); the host when `None`.
    pub enclosure: Option<Enclosure>,
}

impl Wiring {
    /// The run at `workspace` capped at `cap`: the structural tools, the language servers
    /// with the checked file tools, the debugger, and what this wiring adds.
    pub fn spec(self, workspace: Workspace, settings: &Settings, cap: Tier) -> RunSpec {
        let enclosure = self.enclosure.unwrap_or_else(|| Enclosure::host(workspace.root()));
        let mut spec = RunSpec::new(workspace.clone(), cap);
        spec.search = Some(astmatch(&workspace, settings));
        spec.lsp = Some(lsp(&workspace, settings, &enclosure));
        spec.file_tools = true;
        spec.debug = Some(debug(&workspace, settings, &enclosure));
        spec.kernels = self.kernels;
        spec.question = self.question;
        spec.approval = self.approval;
        spec.workers = self.vibe;
        spec
    }
}

/// The structural tools in `workspace`: every shipped grammar, the default parse cache,
/// and `search.max_file_bytes`.
pub fn astmatch(workspace: &Workspace, settings: &Settings) -> AstmatchWiring {
    AstmatchWiring {
        max_file_bytes: u64::try_from(*settings.search.max_file_bytes).unwrap_or(u64::MAX),
        ..AstmatchWiring::new(workspace.clone())
    }
}

/// The host's parse cache with the tree store of `search.tree_store` and
/// `search.tree_store_mb` (none when that is 0).
pub fn with_tree_store(config: HostConfig, settings: &Settings) -> HostConfig {
    let mb = (*settings.search.tree_store_mb).map_or(0, |mb| u64::try_from(mb).unwrap_or(u64::MAX));
    let dir = (mb > 0).then(|| {
        settings.search.tree_store.value.as_ref().map_or_else(TreeStore::default_dir, |d| d.path().to_path_buf())
    });
    HostConfig { tree_store_dir: dir, tree_store_bytes: mb.saturating_mul(1 << 20), ..config }
}

/// The supervisor's configuration for the workspace: the servers, the chosen
/// server per language (`lsp.servers.LANG`, `--lsp`) and the timeouts.
pub fn lsp_config(workspace: &Workspace, settings: &Settings) -> SupervisorConfig {
    let mut lsp = SupervisorConfig::new(workspace.root());
    lsp.servers = server_specs(&settings.lsp.server);
    for (id, server) in settings.lsp.servers.iter() {
        if let (Some(language), Some(server)) = (Language::from_id(id), &server.value) {
            // `pyright+ruff`: the primary, then its helpers; one server alone takes no helper.
            let mut named = server_set(server).into_iter().map(str::to_owned);
            if let Some(primary) = named.next() {
                lsp.preferred.insert(language, primary);
            }
            let helpers: Vec<String> = named.collect();
            if !helpers.is_empty() {
                lsp.helpers.insert(language, helpers);
            }
        }
    }
    lsp.request_timeout = settings.lsp.request_timeout_s.duration();
    lsp.init_timeout = settings.lsp.init_timeout_s.duration();
    lsp.diagnostics_timeout = settings.lsp.diagnostics_timeout_s.duration();
    lsp
}

/// The run's language servers (found on the project's `node_modules/.bin`, `.venv/bin`,
/// `venv/bin`, then `PATH`; started on first use, in the host's pool) and the `lsp` tool's
/// caps; a run with them has diagnostics on write for `write`, `edit` and `apply_patch`.
/// The project checkers run in the run's enclosure, the servers too with `enclosure.language_servers`.
pub fn lsp(workspace: &Workspace, settings: &Settings, enclosure: &Enclosure) -> RunLsp {
    let mut lsp = lsp_config(workspace, settings);
    lsp.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
    lsp.enclose_servers = *settings.enclosure.language_servers;
    for server in &settings.lsp.server {
        if let Some(enclosed) = server.enclosed {
            lsp.enclosed_servers.insert(server.name.clone(), enclosed);
        }
    }
    RunLsp { config: lsp, caps: lsp_caps(settings) }
}

/// The `lsp` tool's result caps of `[lsp]`.
pub fn lsp_caps(settings: &Settings) -> LspCaps {
    LspCaps {
        references: *settings.lsp.references_cap,
        workspace_symbols: *settings.lsp.symbols_cap,
        document_symbols: *settings.lsp.outline_cap,
    }
}

/// A debug supervisor for `debug`: adapters are detected at the root on each
/// launch or attach; one session per process (the conversation is the run),
/// kept across calls in `serve` and ended with the process.
/// The adapter, and so the program it starts, runs in the run's enclosure.
pub fn debug(workspace: &Workspace, settings: &Settings, enclosure: &Enclosure) -> DebugWiring {
    let mut debug = debug_config(settings);
    debug.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
    // In a prefix's container, adapters and Pythons are the container's own.
    debug.detection.inside = enclosure.looks_inside().then(|| enclosure.clone());
    let supervisor = Arc::new(DebugSupervisor::new(debug));
    DebugWiring::new(supervisor, workspace.clone(), format!("run-{}", std::process::id()))
}

/// The debug supervisor's configuration: the lifetime, timeouts, caps and
/// debugpy's Python of `[debug]`, and the `[[debug.adapter]]` entries (new
/// adapters, and changes to built-in ones).
pub fn debug_config(settings: &Settings) -> DebugConfig {
    let s = &settings.debug;
    let mut debug = DebugConfig::default();
    if let Some(python) = &s.python.value {
        debug.detection.python = Some(python.clone());
    }
    debug.detection.adapters = s.adapter.iter().map(|a| a.spec.clone()).collect();
    debug.ttl = s.ttl_s.duration();
    debug.limits.run_timeout = s.run_timeout_s.duration();
    debug.limits.request_timeout = s.request_timeout_s.duration();
    debug.limits.start_timeout = s.start_timeout_s.duration();
    debug.limits.output_limit = *s.output_chars;
    debug.limits.stack_cap = *s.stack_cap;
    debug.limits.variables_cap = *s.variables_cap;
    debug
}

/// Kernels rooted at the workspace, started through the run's enclosure; an interpreter starts
/// on a cell's first use and lives as long as this process.
pub fn kernels(workspace: &Workspace, settings: &Settings, enclosure: &Enclosure) -> KernelWiring {
    let spawner: Arc<dyn kernel::Spawner> = Arc::new(enclosure.clone());
    KernelWiring::new(Arc::new(Kernels::with_spawner(kernel_config(workspace, settings), spawner)))
}

/// The run's enclosure from `[enclosure]` (or `--enclosure`): where kernels and workers run.
/// The root is read-only inside a bwrap sandbox when the surface's cap is `read`.
pub fn enclosure(workspace: &Workspace, settings: &Settings, cap: Tier) -> Enclosure {
    let s = &settings.enclosure;
    let mode = match *s.mode {
        EnclosureMode::None => Mode::Host,
        EnclosureMode::Bwrap => Mode::Bwrap,
        EnclosureMode::Command => Mode::Command { prefix: s.prefix.value.clone() },
    };
    let mut enclosure = Enclosure::with_mode(mode, workspace.root());
    enclosure.root_writable = cap > Tier::Read;
    enclosure.network = *s.network;
    enclosure.ro_paths = s.ro_paths.value.clone();
    enclosure.rw_paths = s.rw_paths.value.clone();
    enclosure.env = s.env.value.clone();
    enclosure
}

/// The kernels' configuration: the inactivity budget, interpreters and output caps of `[eval]`.
pub fn kernel_config(workspace: &Workspace, settings: &Settings) -> KernelConfig {
    let s = &settings.eval;
    let mut kernel = KernelConfig::new(workspace.root());
    kernel.inactivity_timeout = s.timeout_s.duration();
    kernel.interrupt_grace = s.interrupt_grace_s.duration();
    kernel.start_timeout = s.start_timeout_s.duration();
    kernel.python = s.python.value.clone();
    kernel.node = s.node.value.clone();
    kernel.limits.max_stream_chars = *s.max_output_chars;
    kernel.limits.max_rich_outputs = *s.max_rich_outputs;
    kernel
}

/// Questions on this process's terminal; unavailable when stdin is not one.
pub fn terminal() -> QuestionWiring {
    QuestionWiring { port: Arc::new(TerminalPort::default()), target_space: "the terminal".to_owned() }
}

/// Questions as MCP elicitation forms in the client whose call asks.
pub fn elicitation() -> QuestionWiring {
    QuestionWiring { port: Arc::new(ElicitationPort::new(None)), target_space: "the MCP client".to_owned() }
}

/// The configured approval policy: a rule per tier that `approval.read`,
/// `approval.write`, `approval.exec` set (by default read allowed, the rest
/// undecided, so asked), and the `[[approval.rule]]` entries.
pub fn approval_policy(settings: &Settings) -> ApprovalPolicy {
    let s = &settings.approval;
    let mut policy = ApprovalPolicy::empty();
    for (tier, action) in [(Tier::Read, &s.read), (Tier::Write, &s.write), (Tier::Exec, &s.exec)] {
        if let Some(action) = action.value {
            policy = policy.with(Rule::tier(tier, action));
        }
    }
    for entry in &s.rule {
        policy = policy.with(entry.rule.clone());
    }
    policy
}

/// `serve --ask`: the configured policy (by default read allowed, write and
/// exec asked), with permission cards as elicitation forms in the connected
/// client; a client without elicitation is nobody, so asked calls are denied at once.
pub fn elicited_approval(settings: &Settings) -> ApprovalWiring {
    ApprovalWiring { policy: approval_policy(settings), port: Arc::new(ElicitationPort::new(None)) }
}

/// `call --ask`: the configured policy, with permission cards on this process's terminal.
pub fn terminal_approval(settings: &Settings) -> ApprovalWiring {
    ApprovalWiring { policy: approval_policy(settings), port: Arc::new(TerminalPort::default()) }
}

/// Vibe mode: background workers, each run as a configured command.
#[derive(Debug, Clone, clap::Args)]
pub struct VibeArgs {
    /// Turn vibe mode on: register vibe_spawn, vibe_send, vibe_wait, vibe_kill and vibe_list.
    #[arg(long)]
    vibe: bool,
    /// The command line (run by sh -c) for fast workers; the brief arrives on stdin, stdout is the result.
    #[arg(long, value_name = "CMD", requires = "vibe")]
    vibe_fast_cmd: Option<String>,
    /// The command line (run by sh -c) for good workers; the brief arrives on stdin, stdout is the result.
    #[arg(long, value_name = "CMD", requires = "vibe")]
    vibe_good_cmd: Option<String>,
}

/// A roster for listing the `vibe_*` schemas (`tools --vibe`): its command
/// refuses to run, and nothing starts a worker in a listing.
pub fn listing_roster() -> Roster {
    let refuse = CommandSpec::shell("echo 'agent-tools tools lists schemas; it runs no worker' >&2; exit 2");
    Roster::new(Arc::new(CommandRunner::new(CommandConfig::new(refuse.clone(), refuse))), RosterConfig::default())
}

impl VibeArgs {
    /// The command flags as the flag layer of `vibe.fast_cmd` and `vibe.good_cmd`.
    pub fn flags(&self, flags: &mut Flags) {
        if let Some(cmd) = &self.vibe_fast_cmd {
            flags.flag(VibeSettings::fast_cmd, cmd, "--vibe-fast-cmd");
        }
        if let Some(cmd) = &self.vibe_good_cmd {
            flags.flag(VibeSettings::good_cmd, cmd, "--vibe-good-cmd");
        }
    }

    /// The roster, in vibe mode, its workers started in `root`. A tier without its own command uses the other's.
    pub fn roster(
        &self,
        settings: &Settings,
        root: &std::path::Path,
        enclosure: &Enclosure,
    ) -> anyhow::Result<Option<Roster>> {
        if !self.vibe {
            return Ok(None);
        }
        let s = &settings.vibe;
        let (fast, good) = match (s.fast_cmd.as_deref(), s.good_cmd.as_deref()) {
            (Some(fast), Some(good)) => (fast, good),
            (Some(one), None) | (None, Some(one)) => (one, one),
            (None, None) => bail!(
                "--vibe needs a worker command: give --vibe-fast-cmd and/or --vibe-good-cmd \
                 (or vibe.fast_cmd / vibe.good_cmd in agent-tools.toml)"
            ),
        };
        // A worker works on the run's checkout: it starts in the run's root, whatever the host's directory.
        let in_root = |cmd: &str| CommandSpec { cwd: Some(root.to_path_buf()), ..CommandSpec::shell(cmd) };
        let mut command = CommandConfig::new(in_root(fast), in_root(good));
        command.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
        let runner = CommandRunner::new(command);
        let roster = RosterConfig {
            run_timeout: s.run_timeout_s.map(|limit| limit.duration()),
            max_running: *s.max_running,
            default_wait: s.default_wait_s.duration(),
            max_wait: s.max_wait_s.duration(),
            ..RosterConfig::default()
        };
        Ok(Some(Roster::new(Arc::new(runner), roster)))
    }
}
