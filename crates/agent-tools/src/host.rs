//! A host of agent runs: what its runs share, and the one way a run is opened.
//!
//! A run is one agent's tools on one working directory at one cap, with everything
//! those tools hold (staged edits, the diagnostics ledger, kernels, the debug session,
//! workers, approvals). Runs on one machine share what cannot leak between them:
//! - the language servers, in an [`lsp_supervisor::ServerPool`]: runs on one checkout
//!   use one server process, and runs on git worktrees of one repository use one
//!   process with a workspace folder each, where the server takes folder changes;
//! - the structural tools' parse trees, in one [`astmatch::ParseCache`] under one cap
//!   (a tree is reused only while its file's size and modification time hold).
//!
//! [`Host::open_run`] wires a [`Run`] from a [`RunSpec`] on those shared parts;
//! [`Run::close`] ends the run's own processes and lets go of the shared ones.
//! `agent-tools serve` (stdio: a host with one run; `--http`: many), the Python
//! module's `Host` and `Run` all open their runs here.

use std::sync::Arc;
#[cfg(feature = "lsp")]
use std::time::Duration;

#[cfg(feature = "search")]
use astmatch::ParseCache;
#[cfg(feature = "debug")]
use dap_session::DebugSupervisor;
#[cfg(feature = "eval")]
use kernel::Kernels;
#[cfg(feature = "lsp")]
use lsp_supervisor::{ServerPool, Supervisor, SupervisorConfig};
#[cfg(feature = "vibe")]
use vibe_roster::Roster;

use crate::gate::ApprovalWiring;
use crate::registry::Registry;
use crate::surface::Surface;
use crate::tier::Tier;
use crate::workspace::Workspace;

/// How a [`Host`] keeps what its runs share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostConfig {
    /// How long a language server no run uses is kept running, so that the next run
    /// on its checkout finds it warm. Zero stops it when its last run closes.
    /// Default [`ServerPool::DEFAULT_IDLE`] (600 s), as `lsp.idle_s`.
    #[cfg(feature = "lsp")]
    pub lsp_idle: Duration,
    /// The resident memory, in bytes, the language servers may take together (each
    /// process with its children) before servers no run uses are stopped early, least
    /// recently used first; a server a run uses is never stopped for it.
    /// `None` (the default): no budget. As `host.lsp_memory_mb`.
    #[cfg(feature = "lsp")]
    pub lsp_memory_budget: Option<u64>,
    /// The cap, in bytes, of the parse trees all runs keep together; `0` keeps none.
    /// Default [`astmatch::DEFAULT_CACHE_BYTES`] (256 MiB).
    #[cfg(feature = "search")]
    pub parse_cache_bytes: usize,
    /// Where parse trees are kept on disk for later processes and other hosts
    /// ([`astmatch::TreeStore`]): a file parsed once is loaded, not parsed, while its
    /// bytes are the same. `None` (the default): no store. As `search.tree_store`.
    #[cfg(feature = "search")]
    pub tree_store_dir: Option<std::path::PathBuf>,
    /// The cap of that store, in bytes. Default [`astmatch::DEFAULT_STORE_BYTES`]
    /// (1 GiB). As `search.tree_store_mb`.
    #[cfg(feature = "search")]
    pub tree_store_bytes: u64,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            #[cfg(feature = "lsp")]
            lsp_idle: ServerPool::DEFAULT_IDLE,
            #[cfg(feature = "lsp")]
            lsp_memory_budget: None,
            #[cfg(feature = "search")]
            parse_cache_bytes: astmatch::DEFAULT_CACHE_BYTES,
            #[cfg(feature = "search")]
            tree_store_dir: None,
            #[cfg(feature = "search")]
            tree_store_bytes: astmatch::DEFAULT_STORE_BYTES,
        }
    }
}

impl HostConfig {
    /// A host of one run, which keeps nothing after it: its language servers stop
    /// when the run closes (what stdio `serve`, one `call`, and a Python `Run` opened
    /// without a host are).
    pub fn one_run() -> HostConfig {
        HostConfig {
            #[cfg(feature = "lsp")]
            lsp_idle: Duration::ZERO,
            ..HostConfig::default()
        }
    }
}

/// What the runs of one process share. Cheap to clone; clones are the same host.
#[derive(Debug, Clone)]
pub struct Host {
    #[cfg(feature = "lsp")]
    pool: Arc<ServerPool>,
    #[cfg(feature = "search")]
    parse_cache: Arc<ParseCache>,
}

impl Host {
    /// A host configured by `config`. It starts nothing: a language server starts on a
    /// run's first use of it.
    #[cfg_attr(not(any(feature = "lsp", feature = "search")), allow(unused_variables))]
    pub fn new(config: HostConfig) -> Host {
        #[cfg(feature = "lsp")]
        let pool = {
            let pool = ServerPool::new(config.lsp_idle);
            Arc::new(match config.lsp_memory_budget {
                Some(bytes) => pool.with_memory_budget(bytes),
                None => pool,
            })
        };
        Host {
            #[cfg(feature = "lsp")]
            pool,
            #[cfg(feature = "search")]
            parse_cache: Arc::new(match config.tree_store_dir {
                Some(dir) => ParseCache::new(config.parse_cache_bytes)
                    .with_store(astmatch::TreeStore::new(dir, config.tree_store_bytes)),
                None => ParseCache::new(config.parse_cache_bytes),
            }),
        }
    }

    /// The language servers, shared by the runs this host opens.
    #[cfg(feature = "lsp")]
    pub fn server_pool(&self) -> &Arc<ServerPool> {
        &self.pool
    }

    /// The parse trees, shared by the runs this host opens.
    #[cfg(feature = "search")]
    pub fn parse_cache(&self) -> &Arc<ParseCache> {
        &self.parse_cache
    }

    /// A language-server supervisor for one run with `config`, on the host's servers:
    /// it starts a server only where no running one has the same server, root and launch
    /// (or, for a worktree, the same repository and launch, where the server takes
    /// folders). [`Host::open_run`] makes one for a [`RunSpec`] with `lsp`.
    #[cfg(feature = "lsp")]
    pub fn supervisor(&self, config: SupervisorConfig) -> Supervisor {
        Supervisor::with_pool(config, Arc::clone(&self.pool))
    }

    /// Wires a run: the tools of every resource `spec` gives, on this host's shared
    /// language servers and parse trees. Nothing starts until a call needs it.
    /// Errors: a tool name registered twice ([`crate::Error::DuplicateTool`]).
    pub fn open_run(&self, spec: RunSpec) -> crate::Result<Run> {
        let RunSpec {
            workspace,
            cap,
            #[cfg(feature = "search")]
            search,
            #[cfg(feature = "lsp")]
            lsp,
            file_tools,
            #[cfg(feature = "debug")]
            debug,
            #[cfg(feature = "eval")]
            kernels,
            #[cfg(feature = "ask")]
            question,
            approval,
            #[cfg(feature = "vibe")]
            workers,
        } = spec;
        let mut builder = Registry::builder();
        #[cfg(feature = "search")]
        if let Some(search) = search {
            builder = builder
                .with_astmatch(crate::AstmatchWiring { shared_cache: Some(Arc::clone(&self.parse_cache)), ..search });
        }
        #[cfg(feature = "lsp")]
        let (servers, diagnostics) = match lsp {
            Some(RunLsp { config, caps }) => {
                let supervisor = Arc::new(self.supervisor(config));
                builder = builder.with_lsp(crate::LspWiring {
                    supervisor: Arc::clone(&supervisor),
                    workspace: workspace.clone(),
                    caps,
                });
                let diagnostics = Arc::new(crate::DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
                (Some(supervisor), Some(diagnostics))
            }
            None => (None, None),
        };
        if file_tools {
            #[cfg(feature = "lsp")]
            {
                builder = match diagnostics {
                    Some(diagnostics) => builder.with_checked_file_tools(workspace.clone(), diagnostics),
                    None => builder.with_file_tools(workspace.clone()),
                };
            }
            #[cfg(not(feature = "lsp"))]
            {
                builder = builder.with_file_tools(workspace.clone());
            }
        }
        #[cfg(feature = "debug")]
        let debug_session = debug.as_ref().map(|d| (Arc::clone(&d.supervisor), d.conversation_id.clone()));
        #[cfg(feature = "debug")]
        if let Some(debug) = debug {
            builder = builder.with_debug(debug);
        }
        #[cfg(feature = "ask")]
        if let Some(question) = question {
            builder = builder.with_question_port(question);
        }
        #[cfg(feature = "vibe")]
        if let Some(workers) = &workers {
            builder = builder.with_vibe_roster(workers.clone());
        }
        #[cfg(feature = "eval")]
        let kernel_set = kernels.as_ref().map(|k| Arc::clone(&k.kernels));
        #[cfg(feature = "eval")]
        if let Some(kernels) = kernels {
            builder = builder.with_kernels(kernels);
        }
        if let Some(approval) = approval {
            builder = builder.with_approval(approval);
        }
        Ok(Run {
            registry: Arc::new(builder.build()?),
            cap,
            #[cfg(feature = "lsp")]
            servers,
            #[cfg(feature = "eval")]
            kernels: kernel_set,
            #[cfg(feature = "debug")]
            debug: debug_session,
            #[cfg(feature = "vibe")]
            workers,
        })
    }
}

/// The language servers of a [`RunSpec`]: the supervisor's configuration (its root is
/// the run's working directory) and the `lsp` tool's result caps.
#[cfg(feature = "lsp")]
#[derive(Debug, Clone)]
pub struct RunLsp {
    /// Which servers, how they are started, and the timeouts.
    pub config: SupervisorConfig,
    /// The `lsp` tool's result caps.
    pub caps: crate::LspCaps,
}

/// What a run is made of: its working directory, its cap, and each resource whose tools
/// it has; a resource left `None` is a toolset the run does not have.
/// [`RunSpec::new`] gives none, then set the fields.
#[non_exhaustive]
pub struct RunSpec {
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// The highest tier the run's surface shows ([`Run::surface`]).
    pub cap: Tier,
    /// `ast_grep`, `ast_edit`, `resolve`, with the host's parse trees (the wiring's own
    /// `parse_cache_bytes` is not used).
    #[cfg(feature = "search")]
    pub search: Option<crate::AstmatchWiring>,
    /// `lsp`, `lsp_rename`, and diagnostics on write for the file tools.
    #[cfg(feature = "lsp")]
    pub lsp: Option<RunLsp>,
    /// `write`, `edit` and `apply_patch`, checked by the language servers when `lsp` is given.
    pub file_tools: bool,
    /// `debug`: the run's debug supervisor and its conversation.
    #[cfg(feature = "debug")]
    pub debug: Option<crate::DebugWiring>,
    /// `eval`.
    #[cfg(feature = "eval")]
    pub kernels: Option<crate::KernelWiring>,
    /// `ask_user`.
    #[cfg(feature = "ask")]
    pub question: Option<crate::QuestionWiring>,
    /// The approval gate: calls its policy says to ask about are asked of a human first.
    pub approval: Option<ApprovalWiring>,
    /// The five `vibe_*` tools.
    #[cfg(feature = "vibe")]
    pub workers: Option<Roster>,
}

impl RunSpec {
    /// A run at `workspace` capped at `cap`, with no toolset yet.
    pub fn new(workspace: Workspace, cap: Tier) -> RunSpec {
        RunSpec {
            workspace,
            cap,
            #[cfg(feature = "search")]
            search: None,
            #[cfg(feature = "lsp")]
            lsp: None,
            file_tools: false,
            #[cfg(feature = "debug")]
            debug: None,
            #[cfg(feature = "eval")]
            kernels: None,
            #[cfg(feature = "ask")]
            question: None,
            approval: None,
            #[cfg(feature = "vibe")]
            workers: None,
        }
    }
}

/// One run opened on a [`Host`]: its tools, and the handles that end what it started.
/// Closing it ([`Run::close`]) is what a host does when the run ends; dropping it
/// without closing ends the processes too, but without waiting for them.
pub struct Run {
    registry: Arc<Registry>,
    cap: Tier,
    #[cfg(feature = "lsp")]
    servers: Option<Arc<Supervisor>>,
    #[cfg(feature = "eval")]
    kernels: Option<Arc<Kernels>>,
    #[cfg(feature = "debug")]
    debug: Option<(Arc<DebugSupervisor>, String)>,
    #[cfg(feature = "vibe")]
    workers: Option<Roster>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("cap", &self.cap)
            .field("tools", &self.registry.specs().count())
            .finish_non_exhaustive()
    }
}

impl Run {
    /// Every tool the run has, whatever its tier.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The run's cap.
    pub fn cap(&self) -> Tier {
        self.cap
    }

    /// The tools a model of this run sees: the registry capped at the run's cap.
    pub fn surface(&self) -> Surface {
        self.registry.surface(self.cap)
    }

    /// The run's language servers (the host's, as this run has claimed them).
    #[cfg(feature = "lsp")]
    pub fn servers(&self) -> Option<&Arc<Supervisor>> {
        self.servers.as_ref()
    }

    /// The run's kernels.
    #[cfg(feature = "eval")]
    pub fn kernels(&self) -> Option<&Arc<Kernels>> {
        self.kernels.as_ref()
    }

    /// Ends what the run started and returns once it has ended: its kernels, its debug
    /// session (the adapter, and a program it launched), its workers; and lets go of the
    /// language servers it used, which the host stops when no run uses them (after its
    /// `lsp_idle`). Staged edits and pending questions go with the run's registry.
    /// A later call through the run starts its processes again.
    pub async fn close(&self) {
        #[cfg(feature = "eval")]
        if let Some(kernels) = &self.kernels {
            kernels.shutdown().await;
        }
        #[cfg(feature = "lsp")]
        if let Some(servers) = &self.servers {
            servers.shutdown().await;
        }
        #[cfg(feature = "debug")]
        if let Some((debug, conversation)) = &self.debug {
            // No session is not a failure: there is nothing to end.
            let _ = debug.terminate(conversation).await;
        }
        #[cfg(feature = "vibe")]
        if let Some(workers) = &self.workers {
            workers.shutdown().await;
        }
    }
}
