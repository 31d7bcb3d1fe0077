//! `cargo xtask bench astmatch`: our structural search against the ast-grep CLI.
//!
//! The same patterns run through our release-built `agent-tools call ast_grep …
//! --json` and through `ast-grep run --pattern P --lang L --json=compact DIR`,
//! alternating, after one unmeasured warm-up each (so both read from the page
//! cache). Each time is a whole process, start to exit, as a user would see it.
//! Ours runs twice a round: as installed, with the tree store (in a directory of the
//! bench's own, emptied at the start, which the warm-ups fill), and with the store
//! off, parsing every file as a first search does. Per pattern it prints the medians,
//! the warm-up's time (its files' trees written to the store), both match counts (which
//! must be equal), the ratios, and the store-less time against the parse floor of that
//! corpus (every file parsed in parallel by tree-sitter, no matching; see `floor.rs`).
//!
//! Then a session of eight different searches in one `serve` run (the parse cache at
//! work, the store off) against eight `ast-grep run` calls, and the staging of a
//! rewrite (store on) against `ast-grep run -r … -U`. The last lines are
//! `ratio ours/ast-grep: median M, worst W` over the per-pattern ratios, and the same
//! without the store. Timing is printed, never asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use astmatch::Lang;

use crate::corpus::{self, Corpus};
use crate::setup::ast_grep_path;
use crate::{run_quiet, workspace_root};

/// Patterns chosen as questions an agent asks, where ast-grep and we mean the same
/// thing (the differential test in `crates/astmatch/tests/it/differential.rs` checks
/// these and more location by location). The first of each language are where the
/// pre-filter rules out most files; the rest are everyday patterns whose words are in
/// most files, so every file is parsed and matched.
const PATTERNS: &[(Lang, &str)] = &[
    (Lang::Rust, "$X.unwrap()"),
    (Lang::Rust, "Box::new($X)"),
    (Lang::Rust, "unsafe impl $T for $U { $$$B }"),
    (Lang::Rust, "Some($X)"),
    (Lang::Rust, "$A.len()"),
    (Lang::Rust, "let $P = $E;"),
    (Lang::Python, "isinstance($A, $B)"),
    (Lang::Python, "raise $E from $C"),
    (Lang::Python, "self.$A = $B"),
    (Lang::Python, "return $X"),
    (Lang::Python, "$A.append($B)"),
    (Lang::Python, "len($X)"),
    (Lang::TypeScript, "interface $I extends $$$B { $$$M }"),
    (Lang::TypeScript, "type $N = $T;"),
];

/// A session of everyday searches over the Python corpus, as an agent makes them: eight
/// different patterns, one after another, in one `serve` run (whose parse cache keeps the
/// trees between them) against eight `ast-grep run` calls.
const SESSION: &[&str] = &[
    "self.$A = $B",
    "return $X",
    "if $A: $$$B",
    "for $X in $Y: $$$B",
    "$A.append($B)",
    "def $F(self): $$$B",
    "len($X)",
    "raise $E",
];

pub(crate) struct Options {
    /// Measured runs per tool and pattern.
    runs: usize,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { runs: 5 };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match *arg {
                "--runs" => {
                    let n = args.next().context("--runs needs a number")?;
                    options.runs = n.parse().with_context(|| format!("--runs {n}"))?;
                    if options.runs == 0 {
                        bail!("--runs must be at least 1");
                    }
                }
                other => bail!("bench astmatch: unknown argument `{other}` (known: --runs N)"),
            }
        }
        Ok(options)
    }
}

/// How our search is run.
enum Ours {
    /// `agent-tools call ast_grep JSON --root DIR --json`.
    Cli(PathBuf),
    /// Until the command has the tool: `xtask-suites search-once`, release-built, calling `astmatch::search`.
    Library(PathBuf),
}

/// Where our runs keep parse trees between processes.
#[derive(Clone, Copy)]
enum Store<'a> {
    /// The tree store in this directory (`search.tree_store`).
    At(&'a Path),
    /// None (`search.tree_store_mb=0`).
    Off,
}

impl Store<'_> {
    fn args(self) -> Vec<String> {
        match self {
            Store::At(dir) => vec!["--set".into(), format!("search.tree_store={}", dir.display())],
            Store::Off => vec!["--set".into(), "search.tree_store_mb=0".into()],
        }
    }
}

/// The bench's tree store, emptied: `target/bench-tree-store`.
fn fresh_store() -> Result<PathBuf> {
    let dir = target_dir().join("bench-tree-store");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    Ok(dir)
}

impl Ours {
    fn command(&self, lang: Lang, pattern: &str, dir: &Path, store: Store<'_>) -> Command {
        match self {
            Ours::Cli(bin) => {
                let args =
                    serde_json::json!({ "pattern": pattern, "path": ".", "language": lang.id(), "max_results": 50 });
                let mut cmd = Command::new(bin);
                cmd.arg("call").arg("ast_grep").arg(args.to_string()).arg("--root").arg(dir).arg("--json");
                cmd.args(store.args());
                cmd
            }
            Ours::Library(bin) => {
                let mut cmd = Command::new(bin);
                cmd.arg("search-once").arg(lang.id()).arg(pattern).arg(dir);
                cmd
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Ours::Cli(bin) => format!("{} call ast_grep … --json", bin.display()),
            Ours::Library(bin) => format!(
                "{} search-once (astmatch::search; `agent-tools call ast_grep` not available yet)",
                bin.display()
            ),
        }
    }

    /// The total from our JSON output.
    fn count(&self, stdout: &[u8]) -> Result<usize> {
        let value: serde_json::Value = serde_json::from_slice(stdout).context("our output is not JSON")?;
        find_total(&value).with_context(|| format!("no `total` in our output: {}", String::from_utf8_lossy(stdout)))
    }
}

/// The first `total` number in a JSON value, searched breadth-first.
fn find_total(value: &serde_json::Value) -> Option<usize> {
    let mut queue = std::collections::VecDeque::from([value]);
    while let Some(v) = queue.pop_front() {
        if let Some(map) = v.as_object() {
            if let Some(total) = map.get("total").and_then(|t| t.as_u64()) {
                return Some(total as usize);
            }
            queue.extend(map.values());
        }
    }
    None
}

pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

/// Builds our binaries in release and picks how to run our search.
fn build() -> Result<(Ours, PathBuf)> {
    println!("building xtask-suites and agent-tools-cli in release …");
    run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "xtask-suites"]))?;
    let xtask = target_dir().join("release").join("xtask-suites");
    let built =
        cargo().args(["build", "--quiet", "--release", "-p", "agent-tools-cli"]).stdin(Stdio::null()).status()?;
    let cli = target_dir().join("release").join("agent-tools");
    if built.success() && cli.is_file() {
        let probe = Ours::Cli(cli.clone());
        let scratch = std::env::temp_dir().join(format!("xtask-bench-probe-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)?;
        std::fs::write(scratch.join("probe.rs"), "fn main() { x.unwrap(); }\n")?;
        let out = probe.command(Lang::Rust, "$X.unwrap()", &scratch, Store::Off).stdin(Stdio::null()).output()?;
        let _ = std::fs::remove_dir_all(&scratch);
        match probe.count(&out.stdout) {
            Ok(1) if out.status.success() => return Ok((probe, xtask)),
            _ => println!(
                "note: `agent-tools call ast_grep` did not work yet ({}); using astmatch::search directly",
                String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("no total in its output")
            ),
        }
    } else {
        println!("note: agent-tools-cli did not build; using astmatch::search directly");
    }
    Ok((Ours::Library(xtask.clone()), xtask))
}

/// Runs a command once, returning its wall time and stdout; exit codes in `ok` count as success.
fn timed(cmd: Command, ok: &[i32]) -> Result<(Duration, Vec<u8>)> {
    timed_output(cmd, ok).map(|(t, out)| (t, out.stdout))
}

/// [`timed`], returning stderr instead of stdout.
fn timed_with_stderr(cmd: Command, ok: &[i32]) -> Result<(Duration, Vec<u8>)> {
    timed_output(cmd, ok).map(|(t, out)| (t, out.stderr))
}

fn timed_output(mut cmd: Command, ok: &[i32]) -> Result<(Duration, std::process::Output)> {
    let shown = format!("{cmd:?}");
    let start = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().with_context(|| format!("could not start {shown}"))?;
    let elapsed = start.elapsed();
    if !out.status.code().is_some_and(|c| ok.contains(&c)) {
        bail!("{shown} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    Ok((elapsed, out))
}

pub(crate) fn median(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    if n % 2 == 1 { ms[n / 2] } else { (ms[n / 2 - 1] + ms[n / 2]) / 2.0 }
}

fn ast_grep_command(ast_grep: &Path, lang: Lang, pattern: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(ast_grep);
    cmd.args(["run", "--pattern", pattern, "--lang", lang.id(), "--json=compact"]).arg(dir);
    cmd
}

fn ast_grep_count(stdout: &[u8]) -> Result<usize> {
    let value: serde_json::Value = serde_json::from_slice(stdout).context("ast-grep's output is not JSON")?;
    value.as_array().map(Vec::len).context("ast-grep's output is not a JSON array")
}

pub(crate) fn run(options: &Options) -> Result<()> {
    let ast_grep = ast_grep_path();
    if !ast_grep.is_file() {
        bail!("{} is missing; run `cargo xtask setup`", ast_grep.display());
    }
    let (ours, xtask) = build()?;
    let corpora = corpus::prepare()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(12);
    println!("ours:     {}", ours.describe());
    println!("ast-grep: {} run --pattern P --lang L --json=compact DIR", ast_grep.display());
    let store = fresh_store()?;
    println!("runs:     {} measured per tool and pattern, alternating, after one warm-up each", options.runs);
    println!("store:    ours with the tree store at {} (emptied now; the warm-ups fill it)", store.display());
    println!("          and `nostore` (ns) with it off, parsing every file as a first search does;");
    println!("          `1st` is the warm-up with the store, which writes the trees it lacks");
    println!("threads:  {threads} (the `ignore` walker's default, as in astmatch::search and the floor)");

    println!();
    let mut floors = Vec::new();
    for corpus in &corpora {
        let floor = floor_ms(&xtask, corpus, options.runs)?;
        println!(
            "corpus {:<10} {:>6} files {:>7.1} MB  parse floor {:>8.1} ms  ({}: {})",
            corpus.lang.id(),
            corpus.files,
            corpus.bytes as f64 / 1e6,
            floor,
            corpus.what,
            corpus.dir.display()
        );
        floors.push((corpus.lang, floor));
    }

    println!();
    println!(
        "{:<10} {:<36} {:>8} {:>8} {:>9} {:>9} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "lang", "pattern", "ours ms", "1st ms", "nostore", "ast-grep", "ours n", "ag n", "ours/ag", "ns/ag", "ns/floor"
    );
    let (mut ratios, mut plain_ratios) = (Vec::new(), Vec::new());
    let mut mismatches = 0;
    for &(lang, pattern) in PATTERNS {
        let corpus = corpora.iter().find(|c| c.lang == lang).context("no corpus for the pattern's language")?;
        let (mut our_times, mut plain_times, mut their_times) = (Vec::new(), Vec::new(), Vec::new());
        let (mut our_counts, mut their_counts) = (Vec::new(), Vec::new());
        let mut first = Duration::ZERO;
        for run in 0..=options.runs {
            let (t, out) = timed(ours.command(lang, pattern, &corpus.dir, Store::At(&store)), &[0])?;
            our_counts.push(ours.count(&out)?);
            let (p, out) = timed(ours.command(lang, pattern, &corpus.dir, Store::Off), &[0])?;
            our_counts.push(ours.count(&out)?);
            // ast-grep exits 1 when nothing matched.
            let (u, out) = timed(ast_grep_command(&ast_grep, lang, pattern, &corpus.dir), &[0, 1])?;
            their_counts.push(ast_grep_count(&out)?);
            if run > 0 {
                our_times.push(t);
                plain_times.push(p);
                their_times.push(u);
            } else {
                first = t;
            }
        }
        let (ours_ms, plain_ms, theirs_ms) = (median(&our_times), median(&plain_times), median(&their_times));
        let ratio = ours_ms / theirs_ms;
        ratios.push(ratio);
        plain_ratios.push(plain_ms / theirs_ms);
        let floor = floors.iter().find(|(l, _)| *l == lang).map_or(f64::NAN, |(_, f)| *f);
        let (n, m) = (our_counts[0], their_counts[0]);
        println!(
            "{:<10} {:<36} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>7} {:>7} {:>7.2} {:>8.2} {:>8.2}",
            lang.id(),
            pattern,
            ours_ms,
            first.as_secs_f64() * 1e3,
            plain_ms,
            theirs_ms,
            n,
            m,
            ratio,
            plain_ms / theirs_ms,
            plain_ms / floor
        );
        if our_counts.iter().any(|c| *c != n) || their_counts.iter().any(|c| *c != m) {
            println!("    UNSTABLE COUNTS across runs: ours {our_counts:?}, ast-grep {their_counts:?}");
        }
        if n != m {
            mismatches += 1;
            println!(
                "    !!! MISMATCH: ours found {n}, ast-grep found {m} (see `cargo test -p astmatch --test it differential::`)"
            );
        }
    }
    println!();
    if mismatches > 0 {
        println!("!!! MISMATCH in {mismatches} of {} patterns: the match counts differ", PATTERNS.len());
    }
    let python = corpora.iter().find(|c| c.lang == Lang::Python).context("no Python corpus")?;
    if let Ours::Cli(cli) = &ours {
        session(cli, &ast_grep, &python.dir, options.runs.min(3))?;
    }
    let rust = corpora.iter().find(|c| c.lang == Lang::Rust).context("no Rust corpus")?;
    if let Ours::Cli(cli) = &ours {
        rewrite(cli, &ast_grep, &rust.dir, options.runs.min(3), &store)?;
    }
    let (plain_median, plain_worst) = median_and_worst(plain_ratios);
    println!("without the tree store, ratio ours/ast-grep: median {plain_median:.2}, worst {plain_worst:.2}");
    let (median_ratio, worst) = median_and_worst(ratios);
    println!("ratio ours/ast-grep: median {median_ratio:.2}, worst {worst:.2}");
    Ok(())
}

fn median_and_worst(mut ratios: Vec<f64>) -> (f64, f64) {
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    let median = if n % 2 == 1 { ratios[n / 2] } else { (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0 };
    (median, ratios.last().copied().unwrap_or(f64::NAN))
}

/// One `serve` run making the [`SESSION`]'s searches in turn, against as many `ast-grep run` calls.
fn session(cli: &Path, ast_grep: &Path, dir: &Path, runs: usize) -> Result<()> {
    println!();
    println!(
        "session: {} searches over {} in one `agent-tools serve` run (the tree store off), against {} `ast-grep run` calls",
        SESSION.len(),
        dir.display(),
        SESSION.len()
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for run in 0..=runs {
        let (t, our_counts) = serve_session(cli, dir)?;
        let start = Instant::now();
        let mut their_counts = Vec::new();
        for pattern in SESSION {
            let (_, out) = timed(ast_grep_command(ast_grep, Lang::Python, pattern, dir), &[0, 1])?;
            their_counts.push(ast_grep_count(&out)?);
        }
        let u = start.elapsed();
        if run == 0 {
            for ((pattern, n), m) in SESSION.iter().zip(&our_counts).zip(&their_counts) {
                let note = if n == m { "" } else { "  (counts differ: see docs/patterns.md)" };
                println!("  {pattern:<24} ours {n:>6}  ast-grep {m:>6}{note}");
            }
        } else {
            ours.push(t);
            theirs.push(u);
        }
    }
    let (o, a) = (median(&ours), median(&theirs));
    println!("  session ours {o:.1} ms, ast-grep {a:.1} ms");
    println!("repeat search ratio ours/ast-grep: {:.2}", o / a);
    Ok(())
}

/// Starts `serve`, initializes, makes the session's calls; returns the time from start to the
/// last answer and each call's total.
fn serve_session(cli: &Path, dir: &Path) -> Result<(Duration, Vec<usize>)> {
    use std::io::{BufRead, BufReader, Write};
    let start = Instant::now();
    let mut child = Command::new(cli)
        .arg("serve")
        .arg("--root")
        .arg(dir)
        .args(Store::Off.args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("could not start agent-tools serve")?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut send = |value: serde_json::Value| -> Result<()> {
        writeln!(stdin, "{value}")?;
        stdin.flush()?;
        Ok(())
    };
    let mut answer = |id: u64| -> Result<serde_json::Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("serve ended before answering request {id}");
            }
            let value: serde_json::Value = serde_json::from_str(line.trim())?;
            if value["id"] == id {
                return Ok(value);
            }
        }
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "xtask-bench", "version": "0"}}}))?;
    answer(0)?;
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    let mut counts = Vec::new();
    let mut last_cache = serde_json::Value::Null;
    for (i, pattern) in SESSION.iter().enumerate() {
        let id = i as u64 + 1;
        send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "ast_grep", "arguments": {"pattern": pattern, "language": "python", "max_results": 50}}}))?;
        let reply = answer(id)?;
        let total = reply["result"]["structuredContent"]["total"]
            .as_u64()
            .with_context(|| format!("no total in serve's answer to `{pattern}`: {reply}"))?;
        counts.push(total as usize);
        last_cache = reply["result"]["structuredContent"]["parse_cache"].clone();
    }
    let elapsed = start.elapsed();
    // What the parse cache costs: the process's peak memory, and the cache's own count.
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let peak =
        status.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.trim_start_matches("VmHWM:").trim().to_string());
    if let Some(peak) = peak {
        println!("  serve peak memory {peak}; parse cache after the session: {}", cache_line(&last_cache));
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    Ok((elapsed, counts))
}

/// `N files, M MB (cap C MB), H hits, P parsed` from a result's `parse_cache` value.
fn cache_line(cache: &serde_json::Value) -> String {
    let n = |k: &str| cache[k].as_u64().unwrap_or(0);
    format!(
        "{} files, {:.0} MB estimated (cap {:.0} MB), {} hits, {} parsed",
        n("files"),
        n("bytes") as f64 / 1e6,
        n("cap_bytes") as f64 / 1e6,
        n("hits"),
        n("misses")
    )
}

/// Staging a rewrite of every `$X.unwrap()` over the Rust corpus (rewrite, diff, re-parse;
/// nothing written), against `ast-grep run -r … -U` writing into a fresh copy.
fn rewrite(cli: &Path, ast_grep: &Path, dir: &Path, runs: usize, store: &Path) -> Result<()> {
    let (pattern, template) = ("$X.unwrap()", "$X.expect(\"checked\")");
    println!();
    println!("rewrite: `{pattern}` -> `{template}` over {} (ours with the tree store)", dir.display());
    let copy = std::env::temp_dir().join(format!("xtask-bench-rewrite-{}", std::process::id()));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut replacements = (0, 0);
    for run in 0..=runs {
        let args = serde_json::json!({ "pattern": pattern, "rewrite": template, "path": ".", "language": "rust" });
        let mut cmd = Command::new(cli);
        cmd.arg("call").arg("ast_edit").arg(args.to_string()).arg("--root").arg(dir).arg("--json");
        cmd.args(Store::At(store).args());
        let (t, out) = timed(cmd, &[0])?;
        let value: serde_json::Value = serde_json::from_slice(&out).context("our output is not JSON")?;
        replacements.0 = value["replacements"].as_u64().unwrap_or(0);
        let _ = std::fs::remove_dir_all(&copy);
        run_quiet(Command::new("cp").arg("-r").arg(dir).arg(&copy))?;
        // `-U` prints `Applied N changes`; the count is read from it.
        let mut plain = Command::new(ast_grep);
        plain.args(["run", "--pattern", pattern, "--rewrite", template, "--lang", "rust", "-U"]).arg(&copy);
        let (u, out) = timed_with_stderr(plain, &[0, 1])?;
        let text = String::from_utf8_lossy(&out);
        replacements.1 = text
            .split_whitespace()
            .zip(text.split_whitespace().skip(1))
            .find(|(_, w)| w.starts_with("change"))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or(0);
        if run > 0 {
            ours.push(t);
            theirs.push(u);
        }
    }
    let _ = std::fs::remove_dir_all(&copy);
    let (o, a) = (median(&ours), median(&theirs));
    println!(
        "  ours (stage, re-parse, diff) {o:.1} ms for {} replacements; ast-grep -U {a:.1} ms for {} changes",
        replacements.0, replacements.1
    );
    println!("rewrite ratio ours/ast-grep: {:.2}", o / a);
    Ok(())
}

/// The median wall time (ms) of `xtask-suites parse-floor` over the corpus, after a warm-up.
fn floor_ms(xtask: &Path, corpus: &Corpus, runs: usize) -> Result<f64> {
    let mut times = Vec::new();
    for run in 0..=runs {
        let mut cmd = Command::new(xtask);
        cmd.arg("parse-floor").arg(corpus.lang.id()).arg(&corpus.dir);
        let (t, _) = timed(cmd, &[0])?;
        if run > 0 {
            times.push(t);
        }
    }
    Ok(median(&times))
}

/// `xtask-suites parse-floor LANG DIR`: parses every file, prints what it parsed.
pub(crate) fn parse_floor_command(lang: &str, dir: &str) -> Result<()> {
    let lang = Lang::from_id(lang).with_context(|| format!("unknown language `{lang}`"))?;
    let parsed = crate::floor::parse_all(lang, Path::new(dir))?;
    println!("{} files, {} bytes parsed", parsed.files, parsed.bytes);
    Ok(())
}

/// `xtask-suites search-once LANG PATTERN DIR`: one `astmatch::search`, printed as `{"total": N}`.
pub(crate) fn search_once_command(lang: &str, pattern: &str, dir: &str) -> Result<()> {
    let lang = Lang::from_id(lang).with_context(|| format!("unknown language `{lang}`"))?;
    let dir = Path::new(dir);
    let options = astmatch::SearchOptions { lang: Some(lang), max_results: 50, ..Default::default() };
    let report = astmatch::search(dir, dir, pattern, &options)?;
    println!("{}", serde_json::json!({ "total": report.total, "returned": report.matches.len() }));
    Ok(())
}
