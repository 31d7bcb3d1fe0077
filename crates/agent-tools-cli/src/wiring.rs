//! The resources the command wires beyond the working directory: a question
//! port for `ask_user` (the terminal for `call`, MCP elicitation for `serve`),
//! the kernels for `eval` (the project's own interpreters, started on first
//! use), a debug supervisor for `debug` (one session per run), and, in vibe
//! mode, a roster of background workers running the configured commands;
//! each from the run's configuration (`config.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use agent_tools::{
    ApprovalPolicy, ApprovalWiring, DebugWiring, DiagnosticsOnWrite, KernelWiring, LspCaps, LspWiring, QuestionWiring,
    RegistryBuilder, Rule, Tier, Workspace,
};
use anyhow::bail;
use dap_session::{DebugConfig, DebugSupervisor};
use enclosure::{Enclosure, Mode};
use kernel::{KernelConfig, Kernels};
use lsp_supervisor::{Language, ServerSpec, Supervisor, SupervisorConfig};
use question_port::TerminalPort;
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig};

use crate::config::{Config, Flags};
use crate::elicit::{ElicitationPort, PeerSlot};

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
    pub fn apply(self, mut builder: RegistryBuilder) -> RegistryBuilder {
        if let Some(question) = self.question {
            builder = builder.with_question_port(question);
        }
        if let Some(roster) = self.vibe {
            builder = builder.with_vibe_roster(roster);
        }
        if let Some(kernels) = self.kernels {
            builder = builder.with_kernels(kernels);
        }
        if let Some(approval) = self.approval {
            builder = builder.with_approval(approval);
        }
        builder
    }
}

/// The language servers known: the built-in table with the configuration's
/// `[[lsp.server]]` entries applied. An entry named like a built-in server
/// changes the fields it gives; a new one goes first, so it is preferred for
/// its languages over the built-in ones (and over the new ones after it).
pub fn server_specs(config: &Config) -> Vec<ServerSpec> {
    // `ServerSpec` holds ids and markers as `&'static str` (its table is
    // static); a custom entry's live as long as the process, read once at start.
    fn leak(s: &str) -> &'static str {
        Box::leak(s.to_owned().into_boxed_str())
    }
    let mut specs = ServerSpec::builtin();
    // New servers go first, in the file's order among themselves.
    let mut new = 0;
    for custom in &config.lsp_servers {
        let index = match specs.iter().position(|s| s.id == custom.name) {
            Some(index) => index,
            None => {
                let spec = ServerSpec::custom(leak(&custom.name), &custom.languages, "", &[], &[]);
                specs.insert(new, spec);
                new += 1;
                new - 1
            }
        };
        let spec = &mut specs[index];
        if let Some(command) = &custom.command {
            spec.programs = vec![command.clone()];
        }
        if let Some(args) = &custom.args {
            spec.args = args.clone();
        }
        if !custom.languages.is_empty() {
            spec.languages = custom.languages.clone();
        }
        if let Some(markers) = &custom.root_markers {
            spec.root_markers = markers.iter().map(|m| leak(m)).collect();
        }
        if let Some(probe) = &custom.probe_args {
            spec.probe_args = probe.clone();
        }
        if let Some(options) = &custom.initialization_options {
            spec.initialization_options = options.clone();
        }
        if let Some(settings) = &custom.settings {
            spec.settings = settings.clone();
        }
        spec.env.extend(custom.env.iter().cloned());
    }
    specs
}

/// The supervisor's configuration for the workspace: the servers, the chosen
/// server per language (`lsp.servers.LANG`, `--lsp`) and the timeouts.
pub fn lsp_config(workspace: &Workspace, config: &Config) -> SupervisorConfig {
    let mut lsp = SupervisorConfig::new(workspace.root());
    lsp.servers = server_specs(config);
    for language in Language::all() {
        if let Some(server) = config.text(&format!("lsp.servers.{}", language.id())) {
            lsp.preferred.insert(language, server.to_owned());
        }
    }
    set(&mut lsp.request_timeout, config.duration("lsp.request_timeout_s"));
    set(&mut lsp.init_timeout, config.duration("lsp.init_timeout_s"));
    set(&mut lsp.diagnostics_timeout, config.duration("lsp.diagnostics_timeout_s"));
    lsp
}

/// Overwrites `slot` with a configured value (every setting has one; the
/// default is the leaf crate's own).
fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *slot = value;
    }
}

/// Language servers for the workspace (found on the project's `node_modules/.bin`,
/// `.venv/bin`, `venv/bin`, then `PATH`; started on first use, stopped with the
/// process), and diagnostics on write for the `write`, `edit` and `apply_patch` tools.
/// The project checkers run in the run's enclosure, the servers too with `enclosure.language_servers`.
pub fn lsp(workspace: &Workspace, config: &Config, enclosure: &Enclosure) -> (LspWiring, Arc<DiagnosticsOnWrite>) {
    let mut lsp = lsp_config(workspace, config);
    lsp.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
    lsp.enclose_servers = config.flag("enclosure.language_servers");
    for server in &config.lsp_servers {
        if let Some(enclosed) = server.enclosed {
            lsp.enclosed_servers.insert(server.name.clone(), enclosed);
        }
    }
    let supervisor = Arc::new(Supervisor::new(lsp));
    let diagnostics = Arc::new(DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
    (LspWiring { supervisor, workspace: workspace.clone(), caps: lsp_caps(config) }, diagnostics)
}

/// The `lsp` tool's result caps of `[lsp]`.
pub fn lsp_caps(config: &Config) -> LspCaps {
    let mut caps = LspCaps::default();
    set(&mut caps.references, config.count("lsp.references_cap"));
    set(&mut caps.workspace_symbols, config.count("lsp.symbols_cap"));
    set(&mut caps.document_symbols, config.count("lsp.outline_cap"));
    caps
}

/// A debug supervisor for `debug`: adapters are detected at the root on each
/// launch or attach; one session per process (the conversation is the run),
/// kept across calls in `serve` and ended with the process.
/// The adapter, and so the program it starts, runs in the run's enclosure.
pub fn debug(workspace: &Workspace, config: &Config, enclosure: &Enclosure) -> DebugWiring {
    let mut debug = debug_config(config);
    debug.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
    let supervisor = Arc::new(DebugSupervisor::new(debug));
    DebugWiring::new(supervisor, workspace.clone(), format!("run-{}", std::process::id()))
}

/// The debug supervisor's configuration: the lifetime, timeouts, caps and
/// debugpy's Python of `[debug]`, and the `[[debug.adapter]]` entries (new
/// adapters, and changes to built-in ones).
pub fn debug_config(config: &Config) -> DebugConfig {
    let mut debug = DebugConfig::default();
    if let Some(python) = config.text("debug.python") {
        debug.detection.python = Some(PathBuf::from(python));
    }
    debug.detection.adapters = config.debug_adapters.iter().map(|a| a.spec.clone()).collect();
    set(&mut debug.ttl, config.duration("debug.ttl_s"));
    set(&mut debug.limits.run_timeout, config.duration("debug.run_timeout_s"));
    set(&mut debug.limits.request_timeout, config.duration("debug.request_timeout_s"));
    set(&mut debug.limits.start_timeout, config.duration("debug.start_timeout_s"));
    set(&mut debug.limits.output_limit, config.count("debug.output_chars"));
    set(&mut debug.limits.stack_cap, config.count("debug.stack_cap"));
    set(&mut debug.limits.variables_cap, config.count("debug.variables_cap"));
    debug
}

/// Kernels rooted at the workspace, started through the run's enclosure; an interpreter starts
/// on a cell's first use and lives as long as this process.
pub fn kernels(workspace: &Workspace, config: &Config, enclosure: &Enclosure) -> KernelWiring {
    let spawner: Arc<dyn kernel::Spawner> = Arc::new(enclosure.clone());
    KernelWiring::new(Arc::new(Kernels::with_spawner(kernel_config(workspace, config), spawner)))
}

/// The run's enclosure from `[enclosure]` (or `--enclosure`): where kernels and workers run.
/// The root is read-only inside a bwrap sandbox when the surface's cap is `read`.
pub fn enclosure(workspace: &Workspace, config: &Config, cap: Tier) -> Enclosure {
    let mode = match config.text("enclosure.mode") {
        Some("bwrap") => Mode::Bwrap,
        Some("command") => Mode::Command { prefix: config.list("enclosure.prefix").to_vec() },
        _ => Mode::Host,
    };
    let mut enclosure = Enclosure::with_mode(mode, workspace.root());
    enclosure.root_writable = cap > Tier::Read;
    enclosure.network = config.flag("enclosure.network");
    enclosure.ro_paths = config.list("enclosure.ro_paths").iter().map(PathBuf::from).collect();
    enclosure.rw_paths = config.list("enclosure.rw_paths").iter().map(PathBuf::from).collect();
    enclosure.env = config
        .list("enclosure.env")
        .iter()
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    enclosure
}

/// The kernels' configuration: the inactivity budget, interpreters and output caps of `[eval]`.
pub fn kernel_config(workspace: &Workspace, config: &Config) -> KernelConfig {
    let mut kernel = KernelConfig::new(workspace.root());
    set(&mut kernel.inactivity_timeout, config.duration("eval.timeout_s"));
    set(&mut kernel.interrupt_grace, config.duration("eval.interrupt_grace_s"));
    set(&mut kernel.start_timeout, config.duration("eval.start_timeout_s"));
    kernel.python = config.text("eval.python").map(PathBuf::from);
    kernel.node = config.text("eval.node").map(PathBuf::from);
    set(&mut kernel.limits.max_stream_chars, config.count("eval.max_output_chars"));
    set(&mut kernel.limits.max_rich_outputs, config.count("eval.max_rich_outputs"));
    kernel
}

/// Questions on this process's terminal; unavailable when stdin is not one.
pub fn terminal() -> QuestionWiring {
    QuestionWiring { port: Arc::new(TerminalPort::default()), target_space: "the terminal".to_owned() }
}

/// Questions as MCP elicitation forms in the connected client.
pub fn elicitation(peer: &PeerSlot) -> QuestionWiring {
    QuestionWiring {
        port: Arc::new(ElicitationPort::new(peer.clone(), None)),
        target_space: "the MCP client".to_owned(),
    }
}

/// The configured approval policy: a rule per tier that `approval.read`,
/// `approval.write`, `approval.exec` set (by default read allowed, the rest
/// undecided, so asked), and the `[[approval.rule]]` entries.
pub fn approval_policy(config: &Config) -> ApprovalPolicy {
    let mut policy = ApprovalPolicy::empty();
    for tier in Tier::ALL {
        if let Some(action) = config.action(&format!("approval.{tier}")) {
            policy = policy.with(Rule::tier(tier, action));
        }
    }
    for entry in &config.approval_rules {
        policy = policy.with(entry.rule.clone());
    }
    policy
}

/// `serve --ask`: the configured policy (by default read allowed, write and
/// exec asked), with permission cards as elicitation forms in the connected
/// client; a client without elicitation is nobody, so asked calls are denied at once.
pub fn elicited_approval(peer: &PeerSlot, config: &Config) -> ApprovalWiring {
    ApprovalWiring { policy: approval_policy(config), port: Arc::new(ElicitationPort::new(peer.clone(), None)) }
}

/// `call --ask`: the configured policy, with permission cards on this process's terminal.
pub fn terminal_approval(config: &Config) -> ApprovalWiring {
    ApprovalWiring { policy: approval_policy(config), port: Arc::new(TerminalPort::default()) }
}

/// Vibe mode: background workers, each run as a configured command.
#[derive(Debug, clap::Args)]
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
            flags.flag("vibe.fast_cmd", cmd, "--vibe-fast-cmd");
        }
        if let Some(cmd) = &self.vibe_good_cmd {
            flags.flag("vibe.good_cmd", cmd, "--vibe-good-cmd");
        }
    }

    /// The roster, in vibe mode. A tier without its own command uses the other's.
    pub fn roster(&self, config: &Config, enclosure: &Enclosure) -> anyhow::Result<Option<Roster>> {
        if !self.vibe {
            return Ok(None);
        }
        let (fast, good) = match (config.text("vibe.fast_cmd"), config.text("vibe.good_cmd")) {
            (Some(fast), Some(good)) => (fast, good),
            (Some(one), None) | (None, Some(one)) => (one, one),
            (None, None) => bail!(
                "--vibe needs a worker command: give --vibe-fast-cmd and/or --vibe-good-cmd \
                 (or vibe.fast_cmd / vibe.good_cmd in agent-tools.toml)"
            ),
        };
        let mut command = CommandConfig::new(CommandSpec::shell(fast), CommandSpec::shell(good));
        command.enclosure = (!enclosure.is_host()).then(|| enclosure.clone());
        let runner = CommandRunner::new(command);
        let mut roster = RosterConfig { run_timeout: config.duration("vibe.run_timeout_s"), ..RosterConfig::default() };
        set(&mut roster.max_running, config.count("vibe.max_running"));
        set(&mut roster.default_wait, config.duration("vibe.default_wait_s"));
        set(&mut roster.max_wait, config.duration("vibe.max_wait_s"));
        Ok(Some(Roster::new(Arc::new(runner), roster)))
    }
}
