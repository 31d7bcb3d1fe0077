//! Wiring a run: the one way every door (`serve` over stdio and HTTP, `call`, `tools`, the
//! Python module) opens a run on a `Host`, and the working directory and runtime they share.

use std::path::PathBuf;
use std::sync::Arc;

use agent_tools::question_port::QuestionPort;
use agent_tools::{ApprovalWiring, Host, HostConfig, QuestionWiring, Run, Tier, Workspace};
use anyhow::Context as _;

use crate::{config, wiring};

/// Where a run's questions go: `ask_user`'s cards, and with an approval port the
/// permission cards of the configured policy (`[approval]`, as `serve --ask` asks).
pub struct RunPorts {
    /// Registers `ask_user`, asking through its port.
    pub question: QuestionWiring,
    /// Turns the approval gate on, with permission cards through this port.
    pub approval: Option<Arc<dyn QuestionPort>>,
}

/// Which `vibe_*` workers a run has.
#[derive(Debug, Clone, Copy)]
pub enum Workers<'a> {
    /// None: no `vibe_*` tools.
    None,
    /// `serve --vibe`: each worker runs the configured command.
    Configured(&'a wiring::VibeArgs),
    /// Listed only (`tools --vibe`): a worker's start is refused.
    Listed,
}

/// Wires a run at `workspace` with `settings` (loaded with
/// [`config::Config::load`]) on `host`: structural search and rewrite on the host's parse
/// trees, the language servers (the host's, shared with its other runs) with diagnostics
/// on write, the debugger, the kernels in the run's enclosure (whose root is read-only at
/// cap `read`), `ask_user` and the approval gate through `ports`, and `workers`. Every
/// door wires its runs here: `serve` (stdio and HTTP), `call`, `tools` and the Python module;
/// what differs between them (the host, the ports, the workers) is given.
/// Errors: a vibe mode without a worker command; a tool name registered twice.
pub fn wire_run(
    workspace: Workspace,
    settings: &config::Settings,
    cap: Tier,
    ports: RunPorts,
    workers: Workers<'_>,
    host: &Host,
) -> anyhow::Result<Run> {
    let enclosure = wiring::enclosure(&workspace, settings, cap);
    let kernels = wiring::kernels(&workspace, settings, &enclosure);
    let approval = ports.approval.map(|port| ApprovalWiring { policy: wiring::approval_policy(settings), port });
    let vibe = match workers {
        Workers::None => None,
        Workers::Configured(vibe) => vibe.roster(settings, workspace.root(), &enclosure)?,
        Workers::Listed => Some(wiring::listing_roster()),
    };
    let wiring = wiring::Wiring {
        question: Some(ports.question),
        vibe,
        kernels: Some(kernels),
        approval,
        enclosure: Some(enclosure),
    };
    Ok(host.open_run(wiring.spec(workspace, settings, cap))?)
}

/// The host of a command that serves one call or lists the tools: its run keeps no
/// parse tree in memory (nothing would reuse one) but writes them to the tree store,
/// for the next process, and its servers stop with it.
pub(crate) fn one_shot_host(settings: &config::Settings) -> Host {
    Host::new(wiring::with_tree_store(HostConfig { parse_cache_bytes: 0, ..HostConfig::one_run() }, settings))
}

/// The working directory `root`, or the current one. Errors: it cannot be read, or is
/// not a directory.
pub fn workspace(root: Option<PathBuf>) -> anyhow::Result<Workspace> {
    let root = match root {
        Some(root) => root,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Workspace::new(root)?)
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}
