//! The resources the command wires beyond the working directory: a question
//! port for `ask_user` (the terminal for `call`, MCP elicitation for `serve`),
//! the kernels for `eval` (the project's own interpreters, started on first
//! use), a debug supervisor for `debug` (one session per run), and, in vibe
//! mode, a roster of background workers running the configured commands.

use std::sync::Arc;

use agent_tools::{
    ApprovalPolicy, ApprovalWiring, DebugWiring, DiagnosticsOnWrite, KernelWiring, LspWiring, QuestionWiring,
    RegistryBuilder, Workspace,
};
use anyhow::bail;
use dap_session::{DebugConfig, DebugSupervisor};
use kernel::{KernelConfig, Kernels};
use lsp_supervisor::{Supervisor, SupervisorConfig};
use question_port::TerminalPort;
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig};

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

/// The servers chosen with `--lsp LANG=SERVER`, set once at start.
static LSP_CHOICES: std::sync::OnceLock<Vec<(lsp_supervisor::Language, String)>> = std::sync::OnceLock::new();

/// Parses and keeps the `--lsp LANG=SERVER` choices (e.g. `python=pylsp`).
pub fn choose_lsp_servers(choices: &[String]) -> anyhow::Result<()> {
    let known = lsp_supervisor::ServerSpec::builtin();
    let mut parsed = Vec::new();
    for choice in choices {
        let Some((language, server)) = choice.split_once('=') else {
            bail!("--lsp takes LANG=SERVER (e.g. python=pylsp), not {choice:?}");
        };
        let language = lsp_supervisor::Language::from_id(language.trim()).ok_or_else(|| {
            anyhow::anyhow!("--lsp: unknown language {language:?} (rust, python, typescript, javascript, c, cpp, go)")
        })?;
        let serving: Vec<&str> = known.iter().filter(|s| s.languages.contains(&language)).map(|s| s.id).collect();
        if !serving.contains(&server.trim()) {
            bail!("--lsp: no server {server:?} for {language}; known: {}", serving.join(", "));
        }
        parsed.push((language, server.trim().to_string()));
    }
    let _ = LSP_CHOICES.set(parsed);
    Ok(())
}

/// The supervisor's configuration for the workspace, with the `--lsp` choices.
pub fn lsp_config(workspace: &Workspace) -> SupervisorConfig {
    let mut config = SupervisorConfig::new(workspace.root());
    for (language, server) in LSP_CHOICES.get().into_iter().flatten() {
        config.preferred.insert(*language, server.clone());
    }
    config
}

/// Language servers for the workspace (found on the project's `node_modules/.bin`,
/// `.venv/bin`, `venv/bin`, then `PATH`; started on first use, stopped with the
/// process), and diagnostics on write for the `write`, `edit` and `apply_patch` tools.
pub fn lsp(workspace: &Workspace) -> (LspWiring, Arc<DiagnosticsOnWrite>) {
    let supervisor = Arc::new(Supervisor::new(lsp_config(workspace)));
    let diagnostics = Arc::new(DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
    (LspWiring { supervisor, workspace: workspace.clone() }, diagnostics)
}

/// A debug supervisor for `debug`: adapters are detected at the root on each
/// launch or attach; one session per process (the conversation is the run),
/// kept across calls in `serve` and ended with the process.
pub fn debug(workspace: &Workspace) -> DebugWiring {
    let supervisor = Arc::new(DebugSupervisor::new(DebugConfig::default()));
    DebugWiring::new(supervisor, workspace.clone(), format!("run-{}", std::process::id()))
}

/// Kernels on the host, rooted at the workspace; an interpreter starts on a cell's first use
/// and lives as long as this process.
pub fn kernels(workspace: &Workspace) -> KernelWiring {
    KernelWiring::new(Arc::new(Kernels::new(KernelConfig::new(workspace.root()))))
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

/// `serve --ask`: the default policy (read allowed, write and exec asked), with
/// permission cards as elicitation forms in the connected client; a client
/// without elicitation is nobody, so asked calls are denied at once.
pub fn elicited_approval(peer: &PeerSlot) -> ApprovalWiring {
    ApprovalWiring { policy: ApprovalPolicy::default(), port: Arc::new(ElicitationPort::new(peer.clone(), None)) }
}

/// `call --ask`: the default policy, with permission cards on this process's terminal.
pub fn terminal_approval() -> ApprovalWiring {
    ApprovalWiring { policy: ApprovalPolicy::default(), port: Arc::new(TerminalPort::default()) }
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

impl VibeArgs {
    /// The roster, in vibe mode. A tier without its own command uses the other's.
    pub fn roster(&self) -> anyhow::Result<Option<Roster>> {
        if !self.vibe {
            return Ok(None);
        }
        let (fast, good) = match (&self.vibe_fast_cmd, &self.vibe_good_cmd) {
            (Some(fast), Some(good)) => (fast, good),
            (Some(one), None) | (None, Some(one)) => (one, one),
            (None, None) => bail!("--vibe needs a worker command: give --vibe-fast-cmd and/or --vibe-good-cmd"),
        };
        let runner = CommandRunner::new(CommandConfig::new(CommandSpec::shell(fast), CommandSpec::shell(good)));
        Ok(Some(Roster::new(Arc::new(runner), RosterConfig::default())))
    }
}
