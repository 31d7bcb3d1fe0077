//! `cargo xtask bench host`: the memory of N runs on one checkout, served by one
//! `agent-tools serve --http` host (its runs share the checkout's language server)
//! against N separate `agent-tools serve` processes over stdio (one server each),
//! side by side in one run, with the ratios.
//!
//! Two real projects, copied into a temporary directory (never into the repository):
//! regex-syntax 0.8 from the cargo registry (rust-analyzer), and nine packages of the
//! Python standard library under a `pyproject.toml` (pyright). The client is the
//! official MCP Python SDK (`bench/host_client.py`): the first run asks for one
//! `lsp definition` alone, then the others at once, and all are held open while the
//! proportional set size (PSS, `/proc/PID/smaps_rollup`) of every process of the
//! servers' trees is summed: the host and everything under it, or every stdio
//! process and everything under it. The client's own process is not counted.
//!
//! Printed per project and N: both totals, each over one run of its own kind, the
//! host's over the separate processes, and each side's first answers (the first
//! run's, and the slowest of the rest: a run joining a warm server against one
//! starting its own). Figures are printed, never asserted.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::bench::{cargo, target_dir};
use crate::{run_quiet, tools_dir, workspace_root};

const TOKEN: &str = "bench-host-token-0123456789abcdef0123456789abcdef";

/// How the benchmark runs.
pub(crate) struct Options {
    runs: Vec<usize>,
    /// Separate processes are measured up to this many runs (each holds a whole server).
    separate_max: usize,
    project: Option<String>,
    /// Each run on its own git worktree of the project, instead of all on one checkout.
    worktrees: bool,
    /// Also N stdio processes that forward their runs to one host (`serve --host URL`).
    forward: bool,
    /// Instead of the memory table: this many runs opened, asked and closed in turn on one host.
    churn: Option<usize>,
    /// Instead of the memory table: this many runs searching and hovering at once, against one alone.
    load: Option<usize>,
    /// How long the load runs, in seconds.
    seconds: f64,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options {
            runs: vec![1, 4, 16, 32],
            separate_max: 16,
            project: None,
            worktrees: false,
            forward: false,
            churn: None,
            load: None,
            seconds: 60.0,
        };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            if arg == "--worktrees" {
                options.worktrees = true;
                continue;
            }
            if arg == "--forward" {
                options.forward = true;
                continue;
            }
            let value = it.next().with_context(|| format!("{arg} takes a value"))?;
            match arg {
                "--runs" => {
                    options.runs = value.split(',').map(str::parse).collect::<Result<_, _>>()?;
                    options.runs.retain(|n| *n > 0);
                }
                "--separate-max" => options.separate_max = value.parse()?,
                "--churn" => options.churn = Some(value.parse()?),
                "--load" => options.load = Some(value.parse()?),
                "--seconds" => options.seconds = value.parse()?,
                "--project" if ["rust", "python"].contains(value) => options.project = Some((*value).to_owned()),
                _ => bail!(
                    "unknown option `{arg} {value}` (use --runs 1,4,16,32, --separate-max N, --project rust|python, --worktrees, --forward, --churn N, --load N [--seconds S])"
                ),
            }
        }
        if options.runs.is_empty() {
            bail!("--runs needs at least one positive count");
        }
        Ok(options)
    }
}

/// A project and the definition every run asks for.
struct Project {
    name: &'static str,
    server: &'static str,
    root: PathBuf,
    file: &'static str,
    line: usize,
    symbol: &'static str,
    _dir: tempfile::TempDir,
}

/// regex-syntax 0.8 from the cargo registry, copied; the definition of `escape_into` from `escape`.
fn rust_project() -> Result<Project> {
    let source = crate::setup::registry_src_dirs()
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("regex-syntax-0.8.")))
        .max()
        .context("regex-syntax 0.8 is not in the cargo registry (`cargo fetch` in this workspace puts it there)")?;
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("regex-syntax");
    copy_dir(&source, &root)?;
    let line = line_of(&root.join("src/lib.rs"), "escape_into(text, &mut quoted)")?;
    Ok(Project {
        name: "regex-syntax 0.8",
        server: "rust=rust-analyzer",
        root,
        file: "src/lib.rs",
        line,
        symbol: "escape_into",
        _dir: dir,
    })
}

/// Nine packages of the Python standard library under one `pyproject.toml`; the
/// definition of `JSONDecoder.decode` from `json.loads`.
fn python_project() -> Result<Project> {
    let python = tools_dir().join("venv/bin/python");
    let out = run_quiet(
        Command::new(&python).args(["-c", "import json, os; print(os.path.dirname(os.path.dirname(json.__file__)))"]),
    )?;
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("stdlib");
    for package in ["json", "email", "http", "urllib", "xml", "logging", "concurrent", "importlib", "unittest"] {
        copy_dir(&stdlib.join(package), &root.join(package))?;
    }
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"stdlib-copy\"\nversion = \"0\"\n")?;
    let line = line_of(&root.join("json/__init__.py"), "return _default_decoder.decode(s)")?;
    Ok(Project {
        name: "Python stdlib, 9 packages",
        server: "python=pyright",
        root,
        file: "json/__init__.py",
        line,
        symbol: "decode",
        _dir: dir,
    })
}

/// The 1-indexed line of `file` holding `text`.
fn line_of(file: &Path, text: &str) -> Result<usize> {
    let source = std::fs::read_to_string(file)?;
    source
        .lines()
        .position(|l| l.contains(text))
        .map(|i| i + 1)
        .with_context(|| format!("{} has no line with `{text}`", file.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "target" || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            copy_dir(&path, &to.join(&name))?;
        } else if entry.file_type()?.is_file() {
            std::fs::copy(&path, to.join(&name))?;
        }
    }
    Ok(())
}

/// Every process's parent, from `/proc`.
fn parents() -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`: the comm may hold spaces and parentheses.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
        if let Some(ppid) = ppid {
            out.insert(pid, ppid);
        }
    }
    out
}

/// `pid` and every process under it.
fn tree(pid: u32, parents: &HashMap<u32, u32>) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(parents.iter().filter(|(_, p)| **p == parent).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// The `key:` line of `/proc/PID/FILE`, a size in kB, as bytes (0 once the process is gone).
fn proc_bytes(pid: u32, file: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// A process's PSS in bytes (0 once it is gone).
fn pss(pid: u32) -> u64 {
    proc_bytes(pid, "smaps_rollup", "Pss:")
}

/// What one side measured for N runs.
struct Measured {
    bytes: u64,
    /// Of `bytes`, the `agent-tools` processes' own (the rest is the language servers').
    ours: u64,
    first_ms: Vec<u64>,
    processes: usize,
}

/// Runs the client, waits for its answers, and measures the trees of `roots_of` (given
/// the client's pid and the process table) while it holds its runs open.
fn measure(client: &mut Command, roots_of: impl Fn(u32, &HashMap<u32, u32>) -> Vec<u32>) -> Result<Measured> {
    let mut child = client.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
    let report: Value = serde_json::from_str(&line).with_context(|| format!("the client said: {line:?}"))?;
    let errors = report["errors"].as_array().cloned().unwrap_or_default();
    if !errors.is_empty() {
        let _ = child.kill();
        bail!("{} runs failed their definition; the first: {}", errors.len(), errors[0]);
    }
    let roots = roots_of(child.id(), &parents());
    at_rest(&roots);
    let parents = parents();
    let pids: Vec<u32> = roots.iter().flat_map(|r| tree(*r, &parents)).collect();
    let bytes = pids.iter().map(|p| pss(*p)).sum();
    let ours = roots.iter().map(|p| pss(*p)).sum();
    let first_ms = report["first_ms"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"");
    }
    let _ = child.wait();
    Ok(Measured { bytes, ours, first_ms, processes: pids.len() })
}

/// The project as a git repository with `n - 1` more worktrees (made once, kept for larger `n`).
fn worktrees(project: &Project, n: usize) -> Result<Vec<PathBuf>> {
    let git = |args: &[&str]| -> Result<()> {
        let mut cmd = Command::new("git");
        cmd.current_dir(&project.root).args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"]).args(args);
        run_quiet(&mut cmd).map(drop)
    };
    if !project.root.join(".git").exists() {
        git(&["init", "-q"])?;
        git(&["add", "-A"])?;
        git(&["commit", "-q", "-m", "the project"])?;
    }
    let name = project.root.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let mut roots = vec![project.root.clone()];
    for i in 1..n {
        let tree = project.root.with_file_name(format!("{name}-wt{i}"));
        if !tree.exists() {
            git(&["worktree", "add", "-q", "--detach", &tree.to_string_lossy()])?;
        }
        roots.push(tree);
    }
    Ok(roots)
}

/// The runs' roots: `n` times the checkout, or `n` worktrees of it.
fn roots(project: &Project, n: usize, worktrees_on: bool) -> Result<Vec<PathBuf>> {
    if worktrees_on { worktrees(project, n) } else { Ok(vec![project.root.clone(); n]) }
}

/// Waits (up to 3 minutes) until the servers are at rest: no build runs under `roots`'
/// trees (rust-analyzer's `cargo check` after its load), and their total PSS has
/// moved less than 1 % over the last 3 s (a server still loading in the background
/// after its first answer grows), so both sides are measured alike.
fn at_rest(roots: &[u32]) {
    let building = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| {
            ["cargo", "rustc", "build-script-bu", "build_script_build"].iter().any(|b| c.trim().starts_with(b))
        })
    };
    let mut totals: Vec<u64> = Vec::new();
    for _ in 0..180 {
        let parents = parents();
        let pids: Vec<u32> = roots.iter().flat_map(|r| tree(*r, &parents)).collect();
        totals.push(pids.iter().map(|p| pss(*p)).sum());
        let steady = totals.len() >= 4 && {
            let last = &totals[totals.len() - 4..];
            let (lo, hi) = (last.iter().min().copied().unwrap_or(0), last.iter().max().copied().unwrap_or(0));
            hi - lo <= hi / 100
        };
        if steady && !pids.iter().any(building) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// N stdio processes, each its own run and servers.
fn separate(cli: &Path, project: &Project, roots: &[PathBuf]) -> Result<Measured> {
    let mut client = python_client();
    client.args(["stdio".as_ref(), cli.as_os_str(), project.server.as_ref()]).args(definition(project));
    client.args(roots);
    // Every process under the client is one of the stdio servers' trees.
    measure(&mut client, |client, parents| parents.iter().filter(|(_, p)| **p == client).map(|(c, _)| *c).collect())
}

/// A host serving `project`'s root, and its base URL, once it has said where its run is.
fn start_host(cli: &Path, project: &Project) -> Result<(std::process::Child, String)> {
    let mut host = Command::new(cli)
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(&project.root)
        .args(["--lsp", project.server])
        .env("AGENT_TOOLS_HOST_TOKEN", TOKEN)
        .env("AGENT_TOOLS_LOG", "warn")
        .env("PATH", tools_path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(host.stderr.take().context("no stderr")?).lines();
    let base = loop {
        let Some(line) = lines.next() else {
            let _ = host.kill();
            bail!("the host ended before it served");
        };
        if let Some((_, url)) = line?.split_once("` at ") {
            break url.trim_end_matches("/runs/default/mcp").to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    Ok((host, base))
}

/// One host, N runs opened through its admin API.
fn hosted(cli: &Path, project: &Project, roots: &[PathBuf]) -> Result<Measured> {
    let (mut host, base) = start_host(cli, project)?;
    let mut client = python_client();
    client.args(["http", &base, TOKEN]).args(definition(project)).args(roots);
    let host_pid = host.id();
    let result = measure(&mut client, |_, _| vec![host_pid]);
    let _ = host.kill();
    let _ = host.wait();
    result
}

/// One host, N stdio processes (`serve --host BASE`, as a client that starts only stdio
/// servers runs it), each forwarding its run to the host: the host's tree and theirs.
fn forwarded(cli: &Path, project: &Project, roots: &[PathBuf]) -> Result<Measured> {
    let (mut host, base) = start_host(cli, project)?;
    let mut client = python_client();
    client
        .arg("forward")
        .arg(cli)
        .arg(&base)
        .args(definition(project))
        .args(roots)
        .env("AGENT_TOOLS_HOST_TOKEN", TOKEN);
    let host_pid = host.id();
    let result = measure(&mut client, |client, parents| {
        let mut roots = vec![host_pid];
        roots.extend(parents.iter().filter(|(_, p)| **p == client).map(|(c, _)| *c));
        roots
    });
    let _ = host.kill();
    let _ = host.wait();
    result
}

/// A process's resident set in bytes (`VmRSS`).
fn rss(pid: u32) -> u64 {
    proc_bytes(pid, "status", "VmRSS:")
}

/// The processes under `pid` (itself left out), by name.
fn children(pid: u32) -> Vec<String> {
    let parents = parents();
    let mut names: Vec<String> = tree(pid, &parents)[1..]
        .iter()
        .map(|p| format!("{} ({p})", std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default().trim()))
        .collect();
    names.sort();
    names
}

/// `count` runs opened, asked one `lsp definition` and closed, one after another, on one
/// host: its RSS and the processes under it after a warm-up and at the end.
fn churn(cli: &Path, project: &Project, count: usize) -> Result<()> {
    let warmup = (count / 10).clamp(1, 100);
    let (mut host, base) = start_host(cli, project)?;
    let pid = host.id();
    let result = (|| {
        let mut client = python_client()
            .args(["churn", &base, TOKEN])
            .args(definition(project))
            .arg(&project.root)
            .args([count.to_string(), warmup.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut stdin = client.stdin.take().context("no stdin")?;
        let mut out = BufReader::new(client.stdout.take().context("no stdout")?);
        let mut line = String::new();
        out.read_line(&mut line)?;
        let (warm_rss, warm_children) = (rss(pid), children(pid));
        stdin.write_all(b"go\n")?;
        line.clear();
        out.read_line(&mut line)?;
        let report: Value = serde_json::from_str(&line).with_context(|| format!("the client said: {line:?}"))?;
        let (end_rss, end_children) = (rss(pid), children(pid));
        drop(stdin);
        let _ = client.wait();
        let runs = count - warmup;
        let ms = report["ms"].as_u64().unwrap_or(0);
        println!(
            "  {runs} runs after {warmup} to warm up: {} errors{}, {:.1} ms a run (open, initialize, definition, close)",
            report["errors"],
            report["first_error"].as_str().map(|e| format!(" (first: {e})")).unwrap_or_default(),
            ms as f64 / runs.max(1) as f64,
        );
        println!(
            "  host RSS {} after the warm-up, {} at the end ({:+.1} %)",
            mib(warm_rss),
            mib(end_rss),
            (end_rss as f64 - warm_rss as f64) * 100.0 / warm_rss.max(1) as f64
        );
        let leaked: Vec<&String> = end_children.iter().filter(|c| !warm_children.contains(c)).collect();
        println!(
            "  processes under the host: {warm_children:?} after the warm-up, {end_children:?} at the end; {} new",
            leaked.len()
        );
        Ok(())
    })();
    let _ = host.kill();
    let _ = host.wait();
    result
}

fn definition(project: &Project) -> [String; 3] {
    [project.file.to_owned(), project.line.to_string(), project.symbol.to_owned()]
}

fn python_client() -> Command {
    let mut cmd = Command::new(tools_dir().join("venv/bin/python"));
    cmd.arg(workspace_root().join("xtask-suites/bench/host_client.py")).env("PATH", tools_path());
    cmd
}

/// `PATH` with setup's tools first (pyright), then the user's (rust-analyzer through rustup).
fn tools_path() -> std::ffi::OsString {
    let tools = tools_dir();
    let dirs = [tools.join("node/node_modules/.bin"), tools.join("venv/bin")];
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(dirs.into_iter().chain(std::env::split_paths(&rest))).unwrap_or(rest)
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / f64::from(1 << 20))
}

fn answers(m: &Measured) -> String {
    let first = m.first_ms.first().copied().unwrap_or(0);
    match m.first_ms[1..].iter().max() {
        Some(rest) => format!("first {first} ms, others ≤ {rest} ms"),
        None => format!("first {first} ms"),
    }
}

pub(crate) fn run(options: &Options) -> Result<()> {
    println!("building agent-tools-cli in release …");
    run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "agent-tools-cli"]))?;
    let cli = target_dir().join("release/agent-tools");
    let mut projects = Vec::new();
    if options.project.as_deref() != Some("python") {
        projects.push(rust_project()?);
    }
    if options.project.as_deref() != Some("rust") {
        projects.push(python_project()?);
    }
    if let Some(runs) = options.load {
        for project in &projects {
            println!(
                "\n{} ({}): {runs} runs at once for {} s, against one alone",
                project.name, project.server, options.seconds
            );
            let alone = load(&cli, project, 1, options.seconds)?;
            let many = load(&cli, project, runs, options.seconds)?;
            for (tool, alone_ms) in &alone.0 {
                let many_ms = &many.0[tool];
                let (a50, a95) = (percentile(alone_ms, 50.0), percentile(alone_ms, 95.0));
                let (m50, m95) = (percentile(many_ms, 50.0), percentile(many_ms, 95.0));
                println!(
                    "  {tool:<10} alone: {} calls, p50 {a50:.1} ms, p95 {a95:.1} ms; {runs} at once: {} calls, p50 {m50:.1} ms, p95 {m95:.1} ms ({:.2}× alone's p95)",
                    alone_ms.len(),
                    many_ms.len(),
                    m95 / a95.max(0.001)
                );
            }
            println!(
                "  errors: {} alone, {} at once{}",
                alone.1,
                many.1,
                many.2.as_deref().map(|e| format!(" (first: {e})")).unwrap_or_default()
            );
        }
        return Ok(());
    }
    if let Some(count) = options.churn {
        for project in &projects {
            println!("\n{} ({}): {count} runs in turn on one host", project.name, project.server);
            churn(&cli, project, count)?;
        }
        return Ok(());
    }
    for project in &projects {
        let on = if options.worktrees { "each run on its own git worktree" } else { "every run on one checkout" };
        println!(
            "\n{} ({}), {}:{} `{}`, {on}",
            project.name, project.server, project.file, project.line, project.symbol
        );
        let mut one: Option<(u64, u64)> = None;
        for &n in &options.runs {
            let roots = roots(project, n, options.worktrees)?;
            let host = hosted(&cli, project, &roots)?;
            let apart = (n <= options.separate_max).then(|| separate(&cli, project, &roots)).transpose()?;
            let through = options.forward.then(|| forwarded(&cli, project, &roots)).transpose()?;
            let (host_one, apart_one) = *one.get_or_insert((host.bytes, apart.as_ref().map_or(0, |a| a.bytes)));
            let mut row = format!(
                "  {n:>3} runs  host {} ({} processes, agent-tools {}, {:.2}× one run; {})",
                mib(host.bytes),
                host.processes,
                mib(host.ours),
                host.bytes as f64 / host_one as f64,
                answers(&host)
            );
            match &apart {
                Some(apart) => row.push_str(&format!(
                    "\n            stdio {} ({} processes, agent-tools {}, {:.2}× one run; {})  host/stdio {:.2}",
                    mib(apart.bytes),
                    apart.processes,
                    mib(apart.ours),
                    apart.bytes as f64 / apart_one.max(1) as f64,
                    answers(apart),
                    host.bytes as f64 / apart.bytes as f64
                )),
                None => {
                    row.push_str(&format!("\n            stdio not run (over --separate-max {})", options.separate_max))
                }
            }
            if let Some(through) = &through {
                row.push_str(&format!(
                    "\n            serve --host {} ({} processes, agent-tools {}, {:.2}× one hosted run; {})",
                    mib(through.bytes),
                    through.processes,
                    mib(through.ours),
                    through.bytes as f64 / host_one as f64,
                    answers(through)
                ));
            }
            println!("{row}");
        }
    }
    Ok(())
}

/// The `p`th percentile of `ms` (nearest rank); 0 for none.
fn percentile(ms: &[f64], p: f64) -> f64 {
    let mut sorted = ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// What a load run measured: each tool's call times (ms), the errors, and the first.
type Load = (std::collections::BTreeMap<String, Vec<f64>>, u64, Option<String>);

/// `runs` runs on one host, each calling `ast_grep` and `lsp hover` in turn for `seconds`.
fn load(cli: &Path, project: &Project, runs: usize, seconds: f64) -> Result<Load> {
    let (mut host, base) = start_host(cli, project)?;
    let result = (|| {
        let out = python_client()
            .args(["load", &base, TOKEN])
            .args(definition(project))
            .arg(&project.root)
            .args([runs.to_string(), seconds.to_string()])
            .stderr(Stdio::inherit())
            .output()?;
        let line = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::from_str(line.trim()).with_context(|| format!("the client said: {line:?}"))?;
        let calls = report["calls"]
            .as_object()
            .context("no calls")?
            .iter()
            .map(|(tool, ms)| (tool.clone(), ms.as_array().into_iter().flatten().filter_map(Value::as_f64).collect()))
            .collect();
        Ok((calls, report["errors"].as_u64().unwrap_or(0), report["first_error"].as_str().map(str::to_owned)))
    })();
    let _ = host.kill();
    let _ = host.wait();
    result
}
