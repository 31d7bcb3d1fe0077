//! The `agent-tools` command: one-shot tool calls (`call`), the schemas a
//! surface shows (`tools`), what this checkout can use (`status`), and a
//! per-run MCP server over stdio (`serve`).
//!
//! It wires the facade's registry from the command line and prints; it holds no
//! tool logic and never writes logs or progress to stdout (stdout carries only
//! results, or MCP messages under `serve`). [`main`] is the whole command, for
//! the binary and for the Python package's console script, which run the same
//! flags, exit codes and output; [`wire_run`] wires a run as `serve` does, for
//! a host in process (the Python module).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use agent_tools::{Host, HostConfig, Registry, Run, Tier, Workspace};
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};

use crate::terminal::{MISUSE, SUCCESS, print};
pub use crate::wire::{RunPorts, Workers, wire_run, workspace};
use crate::wire::{one_shot_host, runtime};
use crate::{config, eprint, serve, status, wiring};

/// Server-bound tools for one agent run, each with a tier (read < write < exec): language servers
/// (lsp, lsp_rename, diagnostics on write), structural search and staged rewrite (ast_grep,
/// ast_edit, resolve), file tools (write, edit, apply_patch), a debugger (debug), persistent
/// Python and JavaScript kernels (eval), questions to the human (ask_user) and, with --vibe,
/// background workers (vibe_*).
#[derive(Debug, Parser)]
#[command(name = "agent-tools", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The language server for a language that has several, as LANG=SERVER (repeatable), e.g.
    /// python=pylsp or python=ruff; by default the first usable of the built-in order.
    #[arg(long = "lsp", value_name = "LANG=SERVER", global = true)]
    lsp: Vec<String>,
    /// The configuration file (default: agent-tools.toml at the run's root, if there is one).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Ignore the root's agent-tools.toml.
    #[arg(long, global = true, conflicts_with = "config")]
    no_config: bool,
    /// Set one configuration value, as SECTION.KEY=VALUE (repeatable), e.g. eval.timeout_s=60; it wins
    /// over the environment (AGENT_TOOLS_<SECTION>_<KEY>) and the file. `agent-tools config` lists the keys.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE", global = true)]
    set: Vec<String>,
    /// Where the project's code runs (eval kernels, vibe workers, debug adapters and debuggees,
    /// project checkers; language servers with enclosure.language_servers): none (on the host), bwrap (a
    /// sandbox: read-only host, writable root, private /tmp, no network, cleared environment) or
    /// command (through enclosure.prefix, e.g. docker exec -i CONTAINER); as --set enclosure.mode=MODE.
    #[arg(long, value_name = "MODE", global = true)]
    enclosure: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Call one tool once and print its result (exit 0 ok, 1 the tool reported an error, 2 refused or misused,
    /// 130 cancelled by Ctrl-C). On a terminal, progress shows on stderr.
    Call {
        /// The tool's name, e.g. ast_grep.
        tool: String,
        /// The arguments as a JSON object, e.g. '{"pattern": "foo($X)", "language": "python"}'.
        #[arg(default_value = "{}")]
        args: String,
        /// The run's working directory; every path argument resolves inside it.
        #[arg(long)]
        root: Option<PathBuf>,
        /// The surface's tier cap: read, write or exec.
        #[arg(long, default_value = "exec")]
        cap: Tier,
        /// Print the structured value as JSON instead of the text.
        #[arg(long)]
        json: bool,
        /// Ask on the terminal before a write or exec call (denied at once when stdin is not a terminal).
        #[arg(long)]
        ask: bool,
        /// For `ast_edit`: accept the staged change in the same command (the
        /// preview and diff, then the files written), as `ast-grep -U` does;
        /// without it, the staged change ends with the command.
        #[arg(long, visible_alias = "yes")]
        accept: bool,
    },
    /// Print the schemas a surface with this cap shows, as a JSON array.
    Tools {
        /// The surface's tier cap: read, write or exec.
        #[arg(long, default_value = "exec")]
        cap: Tier,
        /// List the vibe_* tools too, as `serve --vibe` registers them.
        #[arg(long)]
        vibe: bool,
    },
    /// Serve the tools over MCP: on stdio, one process is one run; with --http, one
    /// process serves each run at its own streamable HTTP endpoint.
    Serve {
        /// The run's working directory; every path argument resolves inside it.
        #[arg(long)]
        root: Option<PathBuf>,
        /// The surface's tier cap: read, write or exec (default exec; with --host, the host's cap).
        #[arg(long)]
        cap: Option<Tier>,
        #[command(flatten)]
        vibe: wiring::VibeArgs,
        /// Ask the user before write and exec calls, over MCP elicitation (denied at once where the
        /// client has no elicitation); without it the client is the approval surface.
        #[arg(long)]
        ask: bool,
        #[command(flatten)]
        http: crate::http::HttpArgs,
    },
    /// Print the effective configuration: every setting, its value and where it came from
    /// (default, file:line, env VAR, flag).
    Config {
        /// The run's root, whose agent-tools.toml is read.
        #[arg(long)]
        root: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Say what this checkout can use: languages, grammars and file counts.
    Status {
        /// The directory to look at.
        #[arg(long)]
        root: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command line `args` (the program's name first, as `std::env::args_os` gives it)
/// and returns the exit status: 0 success, 1 a tool reported an error, 2 refused or misused
/// (a usage error prints clap's message and exits 2; `--help` and `--version` print and exit 0),
/// 130 cancelled by Ctrl-C. It prints results to stdout and everything else to stderr, as the
/// `agent-tools` binary does.
pub fn main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap's own message, on stdout for --help and --version, else on stderr.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(MISUSE);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprint(&format!("agent-tools: {e:#}"));
            MISUSE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    let mut flags = config::Flags { file: cli.config.clone(), no_config: cli.no_config, sets: Vec::new() };
    for choice in &cli.lsp {
        flags.lsp(choice)?;
    }
    for assignment in &cli.set {
        flags.set(assignment)?;
    }
    if let Some(mode) = &cli.enclosure {
        flags.flag(config::EnclosureSettings::mode, mode, "--enclosure");
    }
    // Any configuration given on the command line (none reaches a forwarded run).
    let configured =
        cli.config.is_some() || cli.no_config || !cli.lsp.is_empty() || !cli.set.is_empty() || cli.enclosure.is_some();
    match cli.command {
        Command::Call { tool, args, root, cap, json, ask, accept } => {
            crate::call::call(crate::call::Call { tool, args, root, cap, json, ask, accept }, &flags)
        }
        Command::Tools { cap, vibe } => {
            let workspace = workspace(None)?;
            let settings = config::Config::load(workspace.root(), &flags)?.settings;
            // Only listed: no worker is ever started by `tools`.
            let workers = if vibe { Workers::Listed } else { Workers::None };
            let ports = RunPorts { question: wiring::terminal(), approval: None };
            let run = wire_run(workspace, &settings, cap, ports, workers, &one_shot_host(&settings))?;
            let surface = run.surface();
            print(&serde_json::to_string_pretty(&surface.list())?);
            Ok(SUCCESS)
        }
        Command::Serve { root, cap, vibe, ask, http } => {
            init_logging();
            if let Some(host) = &http.host {
                if configured {
                    bail!(
                        "serve --host: the host's configuration applies to its runs; give --config, --no-config, \
                         --set, --lsp and --enclosure to the host's command, or put them in the root's agent-tools.toml"
                    );
                }
                let root = workspace(root)?.root().to_path_buf();
                let token = http.token()?;
                runtime()?.block_on(crate::forward::forward(host, &root, cap, token))?;
                return Ok(SUCCESS);
            }
            if http.token_file.is_some() && http.http.is_none() {
                bail!("--token-file is the token of a host: give it with --http ADDR or --host URL");
            }
            let cap = cap.unwrap_or(Tier::Exec);
            vibe.flags(&mut flags);
            let mut served = Vec::new();
            let roots = match http.run.is_empty() {
                true => vec![(crate::http::DEFAULT_RUN.to_owned(), workspace(root)?)],
                false => http
                    .run
                    .iter()
                    .map(|run| Ok((run.name.clone(), workspace(Some(run.root.clone()))?)))
                    .collect::<anyhow::Result<_>>()?,
            };
            // The runs of a host share its language servers: one process per server, root and
            // launch, kept `lsp.idle_s` (the host's setting) after its last run let go of it.
            // A stdio run is the host's only one: its servers stop with it.
            // The host's own settings: those of its first run's root.
            let here = roots.first().map_or_else(|| workspace(None), |(_, w)| Ok(w.clone()))?;
            let host_settings = config::Config::load(here.root(), &flags)?.settings;
            let idle = match http.http {
                Some(_) => host_settings.lsp.idle_s.duration(),
                None => std::time::Duration::ZERO,
            };
            let allowed_hosts = host_settings.host.allowed_hosts.value.clone();
            let run_idle = host_settings.host.run_idle_s.map(|s| s.duration()).filter(|d| !d.is_zero());
            let lsp_memory_budget = match http.http {
                Some(_) => (*host_settings.host.lsp_memory_mb)
                    .map(|mb| (u64::try_from(mb).unwrap_or(u64::MAX)).saturating_mul(1 << 20)),
                None => None,
            };
            let host = Host::new(wiring::with_tree_store(
                HostConfig { lsp_idle: idle, lsp_memory_budget, ..HostConfig::default() },
                &host_settings,
            ));
            // Every run of this command is wired the same way, whether at start or opened later (POST /runs).
            let open = move |workspace: Workspace, cap: Tier| -> anyhow::Result<(serve::Server, Run)> {
                let settings = config::Config::load(workspace.root(), &flags)?.settings;
                let ports = RunPorts {
                    question: wiring::elicitation(),
                    approval: ask.then(|| wiring::elicited_approval(&settings).port),
                };
                let run = wire_run(workspace, &settings, cap, ports, Workers::Configured(&vibe), &host)?;
                let server = serve::Server::new(run.surface(), settings.ask.timeout_s.duration())?;
                Ok((server, run))
            };
            for (name, workspace) in roots {
                let (server, run) = open(workspace, cap)?;
                served.push(crate::http::Served { name, server, run });
            }
            let runtime = runtime()?;
            match http.http {
                None => {
                    let crate::http::Served { server, run: _run, .. } = served.pop().context("no run to serve")?;
                    runtime.block_on(serve::serve(server))?;
                }
                Some(addr) => {
                    let token = http.token()?;
                    let opener: crate::http::Opener =
                        Arc::new(move |root: &std::path::Path, cap| open(Workspace::new(root)?, cap));
                    runtime.block_on(crate::http::serve(
                        served,
                        crate::http::Options { addr, token, run_idle, allowed_hosts },
                        opener,
                        cap,
                    ))?;
                }
            }
            Ok(SUCCESS)
        }
        Command::Config { root, json } => {
            let workspace = workspace(root)?;
            let config = config::Config::load(workspace.root(), &flags)?;
            if json {
                print(&serde_json::to_string_pretty(&config)?);
            } else {
                print(config.render().trim_end());
            }
            Ok(SUCCESS)
        }
        Command::Status { root, json } => {
            let workspace = workspace(root)?;
            let config = config::Config::load(workspace.root(), &flags)?;
            let registry =
                Arc::new(Registry::builder().with_astmatch(wiring::astmatch(&workspace, &config.settings)).build()?);
            // The structural tools, whose resource is the grammars listed below.
            let tools = registry.specs().map(|s| s.name).collect();
            let settings = &config.settings;
            let enclosure = wiring::enclosure(&workspace, settings, Tier::Exec);
            let mut report =
                status::Status::gather(&workspace, tools, &wiring::kernel_config(&workspace, settings), &enclosure);
            report.enclosure = status::enclosure(&enclosure, *settings.enclosure.language_servers);
            report.configuration = config.file.to_string();
            let runtime = runtime()?;
            report.language_servers = runtime.block_on(status::language_servers(&workspace, settings));
            report.debug_adapters = runtime.block_on(status::debug_adapters(&workspace, settings, &enclosure));
            if json {
                print(&serde_json::to_string_pretty(&report)?);
            } else {
                print(report.render().trim_end());
            }
            Ok(SUCCESS)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AGENT_TOOLS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}
