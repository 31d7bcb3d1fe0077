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
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;

use agent_tools::question_port::QuestionPort;
use agent_tools::{
    ApprovalWiring, Host, HostConfig, ProgressSink, QuestionWiring, Registry, Run, Tier, ToolResult, WAITING_FOR_USER,
    Workspace,
};
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};

use crate::{config, eprint, serve, status, wiring};

/// The exit status of a command that did what it was asked.
const SUCCESS: u8 = 0;
/// The exit status of a call whose tool reported an error.
const TOOL_ERROR: u8 = 1;
/// The exit status of a refused or misused command.
const MISUSE: u8 = 2;
/// The exit status of a call cancelled by Ctrl-C.
const CANCELLED: u8 = 130;

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

/// What `call` adds to an `ast_edit` preview: its `resolve` hint cannot be followed.
const ONE_SHOT_STAGED: &str = "\n(this command ends here, and the staged change with it: \
     nothing was written; run it again with --accept to write it, or use `agent-tools serve`, \
     where a later resolve can reach it)";

/// What `call` adds to a result that points to a later call the one-shot
/// process cannot serve: a debug session that ends with it.
fn one_shot_note(tool: &str, op: Option<&str>) -> Option<&'static str> {
    match tool {
        "debug" if matches!(op, Some("launch" | "attach")) => Some(
            "\n(this command ends here, and the debug session with it: a launched program is ended; \
             use `agent-tools serve` for a session across calls)",
        ),
        _ => None,
    }
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
            if accept && tool != "ast_edit" {
                eprint("agent-tools: --accept is for ast_edit, whose staged change it writes in the same command");
                return Ok(MISUSE);
            }
            let args: serde_json::Value = serde_json::from_str(&args).context("the arguments are not valid JSON")?;
            let op = args.get("op").and_then(|o| o.as_str()).map(str::to_string);
            let workspace = workspace(root)?;
            let config = config::Config::load(workspace.root(), &flags)?;
            let settings = &config.settings;
            let ports = RunPorts {
                question: wiring::terminal(),
                approval: ask.then(|| wiring::terminal_approval(settings).port),
            };
            let run = wire_run(workspace, settings, cap, ports, Workers::None, &one_shot_host())?;
            let runtime = runtime()?;
            let surface = run.surface();
            let progress = std::io::stderr().is_terminal().then(terminal_progress);
            // Ctrl-C cancels the call as a client's cancellation does: its
            // future is dropped, which stops its work (an eval's kernel is
            // killed before the process exits). Blocking work already under way gets 3 s to
            // end: enough for `resolve`'s all-or-nothing write, and short, as
            // a terminal prompt (`ask_user`, `--ask`) blocks on stdin until then.
            let outcome = runtime.block_on(async {
                tokio::select! {
                    outcome = surface.try_call_with_progress(&tool, args, progress.clone()) => Some(outcome),
                    Ok(()) = tokio::signal::ctrl_c() => None,
                }
            });
            if progress.is_some() {
                clear_progress_line();
            }
            let Some(outcome) = outcome else {
                eprint(&format!("agent-tools: {tool} cancelled (Ctrl-C)"));
                // The cancelled cell's interrupt → grace → kill runs on a task of its own; the
                // process must not exit before its kernel is gone, however loaded the machine.
                runtime.block_on(async {
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), run.close()).await;
                });
                runtime.shutdown_timeout(std::time::Duration::from_secs(3));
                return Ok(CANCELLED);
            };
            match outcome? {
                Err(refusal) => {
                    eprint(&refusal.to_string());
                    Ok(MISUSE)
                }
                Ok(mut result) if !result.is_error && tool == "ast_edit" => {
                    let edit_id = result.structured.as_ref().and_then(|s| s["edit_id"].as_str()).map(str::to_string);
                    match edit_id {
                        Some(edit_id) if accept => {
                            print_result(&result, json)?;
                            let resolve = serde_json::json!({ "edit_id": edit_id, "action": "accept" });
                            let accepted = runtime.block_on(surface.call_with_progress("resolve", resolve, None))?;
                            print_result(&accepted, json)?;
                            Ok(if accepted.is_error { TOOL_ERROR } else { SUCCESS })
                        }
                        Some(_) => {
                            // The staged change lives in this process: no later resolve can reach it.
                            result.text.push_str(ONE_SHOT_STAGED);
                            print_result(&result, json)?;
                            Ok(SUCCESS)
                        }
                        None => {
                            print_result(&result, json)?;
                            Ok(SUCCESS)
                        }
                    }
                }
                Ok(mut result) => {
                    if !result.is_error
                        && let Some(note) = one_shot_note(&tool, op.as_deref())
                    {
                        result.text.push_str(note);
                    }
                    print_result(&result, json)?;
                    Ok(if result.is_error { TOOL_ERROR } else { SUCCESS })
                }
            }
        }
        Command::Tools { cap, vibe } => {
            let workspace = workspace(None)?;
            let settings = config::Config::load(workspace.root(), &flags)?.settings;
            // Only listed: no worker is ever started by `tools`.
            let workers = if vibe { Workers::Listed } else { Workers::None };
            let ports = RunPorts { question: wiring::terminal(), approval: None };
            let run = wire_run(workspace, &settings, cap, ports, workers, &one_shot_host())?;
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
            let host = Host::new(HostConfig { lsp_idle: idle, lsp_memory_budget, ..HostConfig::default() });
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
/// parse tree (nothing would reuse one) and its servers stop with it.
fn one_shot_host() -> Host {
    Host::new(HostConfig { parse_cache_bytes: 0, ..HostConfig::one_run() })
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AGENT_TOOLS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

/// Progress on a terminal's stderr: one line, rewritten in place. Reports
/// while the user is asked are left out: the question is on this terminal.
fn terminal_progress() -> ProgressSink {
    ProgressSink::new(|report| {
        if !report.message.contains(WAITING_FOR_USER) {
            eprint_raw(&format!("\r\x1b[2K{}", report.message));
        }
    })
}

fn clear_progress_line() {
    eprint_raw("\r\x1b[2K");
}

fn print_result(result: &ToolResult, json: bool) -> anyhow::Result<()> {
    if json {
        let value = match (&result.structured, result.is_error) {
            (Some(value), _) => value.clone(),
            (None, true) => serde_json::json!({ "error": result.text }),
            (None, false) => serde_json::json!({ "text": result.text }),
        };
        print(&serde_json::to_string_pretty(&value)?);
    } else {
        let mut text = result.text.clone();
        for image in &result.images {
            text.push_str(&format!("\n[image {}, {} bytes base64]", image.mime, image.data_base64.len()));
        }
        print(&text);
    }
    Ok(())
}

/// The one place the command writes to stdout.
#[allow(clippy::print_stdout)]
fn print(text: &str) {
    use std::io::Write as _;
    // A closed pipe (`| head`) is the reader's choice, not an error to panic on.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Writes to stderr without a newline (the progress line).
fn eprint_raw(text: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
