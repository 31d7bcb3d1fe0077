//! `cargo xtask bench scale`: our structural search against the ast-grep CLI on
//! trees of 25k, 50k and 100k real source files, time and peak memory.
//!
//! The trees are made of sources already on this machine, never copied into the
//! repository: the cargo registry's unpacked crates, Python's standard library and
//! setup's venv `site-packages`, Go's standard library (when `go` is installed), and
//! setup's `node_modules`. Their Rust, Python, Go and JavaScript files (hidden ones
//! and symlinks left out) are shuffled once with a fixed seed and hard-linked (copied
//! only where linking fails) under `<temp>/agent-tools-bench-scale/N/copy-K/…`, the
//! whole list again under each further `copy-K` until the tree holds N files. A tree
//! built before is reused (`N.done` beside it says it is whole); delete the directory
//! to rebuild it.
//!
//! Per size, every file is read once (so both tools find it in the page cache), then
//! for each pattern `agent-tools call ast_grep … --json` and `ast-grep run --pattern P
//! --lang L --json=stream DIR` run alternately as whole processes. Each is wrapped in a
//! fresh Python process, which times it and reads its peak resident memory
//! (`getrusage(RUSAGE_CHILDREN)`: the largest process of the tree it waited for). The table has both times and their ratio, both peaks and their ratio, and
//! both match counts (ours is `total`; ast-grep's, its lines of output). Ours runs
//! with the tree store off, so each run parses every file it reads.
//! Last per size, `agent-tools call ast_edit` stages `$X.unwrap()` → `$X.expect("")`
//! over the Rust files (staged only: a one-shot call never accepts), with its peak
//! memory per staged replacement. Timing is printed, never asserted.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use astmatch::Lang;

use crate::bench::{cargo, median, target_dir};
use crate::setup::{ast_grep_path, registry_src_dirs};
use crate::{run_quiet, tools_dir};

/// The four questions, one per language, with our `max_results`.
const PATTERNS: &[(Lang, &str)] = &[
    (Lang::Python, "isinstance($A, $B)"),
    (Lang::Rust, "$X.unwrap()"),
    (Lang::JavaScript, "require($M)"),
    (Lang::Go, "fmt.Errorf($$$A)"),
];

/// What an agent asks for; the rest is counted.
const MAX_RESULTS: usize = 50;

const EDIT: (&str, &str) = ("$X.unwrap()", "$X.expect(\"\")");

pub(crate) struct Options {
    sizes: Vec<usize>,
    /// Measured runs per tool, pattern and size.
    runs: usize,
    /// An `agent-tools` binary to measure instead of a release build of this checkout.
    binary: Option<PathBuf>,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { sizes: vec![25_000, 50_000, 100_000], runs: 1, binary: None };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match *arg {
                "--sizes" => {
                    let list = args.next().context("--sizes needs a list such as 25000,50000")?;
                    options.sizes = list
                        .split(',')
                        .map(|n| n.trim().parse::<usize>().with_context(|| format!("--sizes {list}")))
                        .collect::<Result<_>>()?;
                    if options.sizes.contains(&0) {
                        bail!("--sizes must be at least 1 each");
                    }
                }
                "--runs" => {
                    let n = args.next().context("--runs needs a number")?;
                    options.runs = n.parse().with_context(|| format!("--runs {n}"))?;
                    if options.runs == 0 {
                        bail!("--runs must be at least 1");
                    }
                }
                "--binary" => options.binary = Some(PathBuf::from(args.next().context("--binary needs a path")?)),
                other => {
                    bail!("bench scale: unknown argument `{other}` (known: --sizes N,N --runs N --binary PATH)")
                }
            }
        }
        Ok(options)
    }
}

pub(crate) fn run(options: &Options) -> Result<()> {
    let ast_grep = ast_grep_path();
    if !ast_grep.is_file() {
        bail!("{} is missing; run `cargo xtask setup`", ast_grep.display());
    }
    let ours = match &options.binary {
        Some(binary) => binary.clone(),
        None => {
            println!("building agent-tools-cli in release …");
            run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "agent-tools-cli"]))?;
            target_dir().join("release").join("agent-tools")
        }
    };
    let (sources, go) = sources()?;
    let files = distinct_files(&sources)?;
    let root = std::env::temp_dir().join("agent-tools-bench-scale");
    println!("ours:     {} call ast_grep … --json (max_results {MAX_RESULTS})", ours.display());
    println!("ast-grep: {} run --pattern P --lang L --json=stream DIR", ast_grep.display());
    println!("runs:     {} measured per tool, pattern and size, alternating; medians", options.runs);
    println!("peak RSS: getrusage(RUSAGE_CHILDREN) in a fresh python3 wrapper per run (its largest child)");
    println!("sources:  {} distinct files from", files.len());
    for source in &sources {
        println!("          {:<16} {}", source.name, source.dir.display());
    }
    if let Err(reason) = &go {
        println!("go rows:  skipped, {reason}");
    }
    println!("trees:    {}", root.display());

    let mut rows = Vec::new();
    for &size in &options.sizes {
        let tree = build_tree(&root, &files, size)?;
        warm(&tree)?;
        for &(lang, pattern) in PATTERNS {
            if lang == Lang::Go && go.is_err() {
                continue;
            }
            let (mut ours_runs, mut theirs_runs) = (Vec::new(), Vec::new());
            for run in 0..options.runs {
                let our = || measure(our_search(&ours, lang, pattern, &tree), Count::Total);
                let their = || measure(their_search(&ast_grep, lang, pattern, &tree), Count::Lines);
                // Alternate which goes first, so neither always follows the other.
                if run % 2 == 0 {
                    ours_runs.push(our()?);
                    theirs_runs.push(their()?);
                } else {
                    theirs_runs.push(their()?);
                    ours_runs.push(our()?);
                }
            }
            rows.push(Row { size, what: format!("{} {pattern}", lang.id()), ours: ours_runs, theirs: theirs_runs });
        }
        print_table(rows.iter().filter(|r| r.size == size));
        let edit = measure(our_edit(&ours, &tree), Count::Replacements)?;
        let search = rows.iter().find(|r| r.size == size && r.what == format!("rust {}", EDIT.0));
        let search_kib = search.map_or(0, |r| median_u64(r.ours.iter().map(|m| m.peak_kib)));
        let per = (edit.peak_kib.saturating_sub(search_kib) * 1024) as f64 / edit.count.max(1) as f64;
        println!(
            "{size:>7} ast_edit `{}` -> `{}` (staged only): {:.1} s, peak {:.0} MiB, {} replacements; \
             {:.1} KB per replacement above the search's peak",
            EDIT.0,
            EDIT.1,
            edit.wall.as_secs_f64(),
            edit.peak_kib as f64 / 1024.0,
            edit.count,
            per / 1000.0
        );
    }
    if options.sizes.len() > 1 {
        print_table(rows.iter());
    }
    Ok(())
}

/// A directory of sources, named in the tree by `name`.
struct Source {
    name: String,
    dir: PathBuf,
}

/// The sources on this machine, and whether Go's standard library is among them (or why not).
fn sources() -> Result<(Vec<Source>, Result<(), String>)> {
    let mut sources = Vec::new();
    for dir in registry_src_dirs() {
        let name = format!("cargo-{}", dir.file_name().map_or("registry".into(), |n| n.to_string_lossy()));
        sources.push(Source { name, dir });
    }
    let out =
        run_quiet(Command::new("python3").args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]))?;
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    sources.push(Source { name: "python-stdlib".into(), dir: stdlib });
    let venv_lib = tools_dir().join("venv").join("lib");
    for entry in
        std::fs::read_dir(&venv_lib).with_context(|| format!("{}; run `cargo xtask setup`", venv_lib.display()))?
    {
        let site = entry?.path().join("site-packages");
        if site.is_dir() {
            sources.push(Source { name: "site-packages".into(), dir: site });
        }
    }
    let go = match Command::new("go").args(["env", "GOROOT"]).stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => {
            let src = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("src");
            if src.is_dir() {
                sources.push(Source { name: "go-src".into(), dir: src });
                Ok(())
            } else {
                Err(format!("{} is not a directory", src.display()))
            }
        }
        Ok(out) => Err(format!("`go env GOROOT` failed: {}", String::from_utf8_lossy(&out.stderr).trim())),
        Err(e) => Err(format!("go is not installed ({e})")),
    };
    let node = tools_dir().join("node").join("node_modules");
    if node.is_dir() {
        sources.push(Source { name: "node_modules".into(), dir: node });
    } else {
        println!("note: {} is missing (run `cargo xtask setup`); no JavaScript from it", node.display());
    }
    sources.retain(|s| s.dir.is_dir());
    if sources.is_empty() {
        bail!("no sources found on this machine");
    }
    Ok((sources, go))
}

/// A file to link: where it is, and where it goes under a `copy-K` directory.
struct SourceFile {
    from: PathBuf,
    to: PathBuf,
}

/// Every Rust, Python, Go and JavaScript file of the sources, shuffled with a fixed seed
/// (so a tree smaller than the list still holds every language).
fn distinct_files(sources: &[Source]) -> Result<Vec<SourceFile>> {
    let langs = [Lang::Rust, Lang::Python, Lang::Go, Lang::JavaScript];
    let mut files = Vec::new();
    for source in sources {
        let mut stack = vec![source.dir.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut entries: Vec<_> = entries.flatten().collect();
            entries.sort_by_key(|e| e.file_name());
            for entry in entries {
                let name = entry.file_name();
                if name.to_string_lossy().starts_with('.') {
                    continue;
                }
                let Ok(kind) = entry.file_type() else { continue };
                let path = entry.path();
                // Python's standard library may hold the interpreter's site-packages; those are their own source.
                if kind.is_dir() && !(source.name == "python-stdlib" && name == "site-packages") {
                    stack.push(path);
                } else if kind.is_file() && Lang::from_path(&path).is_some_and(|l| langs.contains(&l)) {
                    let relative = path.strip_prefix(&source.dir).unwrap_or(&path);
                    files.push(SourceFile { to: Path::new(&source.name).join(relative), from: path });
                }
            }
        }
    }
    files.sort_by(|a, b| a.to.cmp(&b.to));
    fastrand::Rng::with_seed(39).shuffle(&mut files);
    Ok(files)
}

/// `root/N`, holding N files; reused when `root/N.done` says it was finished.
fn build_tree(root: &Path, files: &[SourceFile], size: usize) -> Result<PathBuf> {
    let tree = root.join(size.to_string());
    let done = root.join(format!("{size}.done"));
    if tree.is_dir() && std::fs::read_to_string(&done).is_ok_and(|s| s.trim() == size.to_string()) {
        println!("\n{size:>7} files: reusing {}", tree.display());
        return Ok(tree);
    }
    if files.is_empty() {
        bail!("no source files to build a tree from");
    }
    let _ = std::fs::remove_file(&done);
    if tree.exists() {
        std::fs::remove_dir_all(&tree).with_context(|| format!("cannot remove the unfinished {}", tree.display()))?;
    }
    let (mut linked, mut copied) = (0, 0);
    let mut made = HashSet::new();
    for i in 0..size {
        let file = &files[i % files.len()];
        let to = tree.join(format!("copy-{}", i / files.len())).join(&file.to);
        if let Some(parent) = to.parent()
            && made.insert(parent.to_path_buf())
        {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        if std::fs::hard_link(&file.from, &to).is_ok() {
            linked += 1;
        } else {
            std::fs::copy(&file.from, &to)
                .with_context(|| format!("cannot link or copy {} to {}", file.from.display(), to.display()))?;
            copied += 1;
        }
    }
    std::fs::write(&done, size.to_string())?;
    println!("\n{size:>7} files: built {} ({linked} hard links, {copied} copies)", tree.display());
    Ok(tree)
}

/// Reads every file of the tree once, so the first tool measured finds it in the page cache too.
fn warm(tree: &Path) -> Result<()> {
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut buffer = Vec::new();
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)?.flatten() {
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                buffer.clear();
                if std::fs::File::open(entry.path()).and_then(|mut f| f.read_to_end(&mut buffer)).is_ok() {
                    files += 1;
                    bytes += buffer.len() as u64;
                }
            }
        }
    }
    println!("{files:>7} files, {:.0} MB read once to warm the page cache", bytes as f64 / 1e6);
    Ok(())
}

fn our_search(ours: &Path, lang: Lang, pattern: &str, tree: &Path) -> Command {
    let args =
        serde_json::json!({ "pattern": pattern, "path": ".", "language": lang.id(), "max_results": MAX_RESULTS });
    let mut cmd = Command::new(ours);
    cmd.arg("call").arg("ast_grep").arg(args.to_string()).arg("--root").arg(tree).arg("--json").args(NO_STORE);
    cmd
}

fn our_edit(ours: &Path, tree: &Path) -> Command {
    let args = serde_json::json!({ "pattern": EDIT.0, "rewrite": EDIT.1, "path": ".", "language": "rust" });
    let mut cmd = Command::new(ours);
    cmd.arg("call").arg("ast_edit").arg(args.to_string()).arg("--root").arg(tree).arg("--json").args(NO_STORE);
    cmd
}

/// Ours parses every file it reads, as a first search does: the tree store (which would
/// hold a part of trees this size under its cap) is off.
const NO_STORE: [&str; 2] = ["--set", "search.tree_store_mb=0"];

fn their_search(ast_grep: &Path, lang: Lang, pattern: &str, tree: &Path) -> Command {
    let mut cmd = Command::new(ast_grep);
    cmd.args(["run", "--pattern", pattern, "--lang", lang.id(), "--json=stream"]).arg(tree);
    cmd
}

/// How a run's output gives its count.
#[derive(Clone, Copy)]
enum Count {
    /// Our JSON's `total`.
    Total,
    /// Our JSON's `replacements`.
    Replacements,
    /// ast-grep's `--json=stream`: one line per match.
    Lines,
}

/// The first number under `key` in a JSON value, searched breadth-first (as `bench astmatch` finds `total`).
fn find_number(value: &serde_json::Value, key: &str) -> Option<usize> {
    let mut queue = std::collections::VecDeque::from([value]);
    while let Some(v) = queue.pop_front() {
        if let Some(map) = v.as_object() {
            if let Some(n) = map.get(key).and_then(serde_json::Value::as_u64) {
                return Some(n as usize);
            }
            queue.extend(map.values());
        }
    }
    None
}

/// One measured process.
struct Measured {
    wall: Duration,
    peak_kib: u64,
    count: usize,
}

/// Runs a command with this process's stdio, then prints to stderr `peak-rss: kib=K
/// micros=T exit=C`: the peak resident memory of the largest process it waited for (the
/// command, as this process is fresh per measurement; Linux gives KiB), the wall time
/// and the exit code (256 for a signal). Python, which the trees need anyway, so the
/// measurement needs neither unsafe code nor another build of the workspace.
const PEAK_RSS: &str = "import resource, subprocess, sys, time
start = time.monotonic()
code = subprocess.call(sys.argv[1:])
micros = int((time.monotonic() - start) * 1e6)
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f'peak-rss: kib={kib} micros={micros} exit={code if code >= 0 else 256}', file=sys.stderr)
";

/// Runs `cmd` under a fresh [`PEAK_RSS`] process, counting its output as it comes.
fn measure(cmd: Command, count: Count) -> Result<Measured> {
    let shown = format!("{cmd:?}");
    let mut wrapped = Command::new("python3");
    wrapped.arg("-c").arg(PEAK_RSS).arg(cmd.get_program()).args(cmd.get_args());
    let mut child = wrapped
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start {shown}"))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let reader = std::thread::spawn(move || -> Result<usize> {
        let mut stdout = BufReader::new(stdout);
        match count {
            Count::Lines => {
                Ok(stdout.split(b'\n').map_while(Result::ok).filter(|l| !l.trim_ascii().is_empty()).count())
            }
            Count::Total | Count::Replacements => {
                let mut text = Vec::new();
                stdout.read_to_end(&mut text)?;
                let value: serde_json::Value = serde_json::from_slice(&text).context("our output is not JSON")?;
                let key = if matches!(count, Count::Total) { "total" } else { "replacements" };
                find_number(&value, key).with_context(|| {
                    format!(
                        "no `{key}` in our output: {}",
                        String::from_utf8_lossy(&text).chars().take(400).collect::<String>()
                    )
                })
            }
        }
    });
    let mut stderr = String::new();
    child.stderr.take().context("no stderr")?.read_to_string(&mut stderr)?;
    let status = child.wait()?;
    let counted = reader.join().map_err(|_| anyhow::anyhow!("the output reader panicked"))?;
    let last = stderr.lines().rev().find(|l| l.starts_with("peak-rss:")).unwrap_or("");
    let field =
        |name: &str| last.split_whitespace().find_map(|w| w.strip_prefix(name)).and_then(|v| v.parse::<u64>().ok());
    let (Some(kib), Some(micros), Some(code)) = (field("kib="), field("micros="), field("exit=")) else {
        bail!("{shown} was not measured ({status}): {stderr}");
    };
    // ast-grep exits 1 when nothing matched; ours, when the tool failed.
    if code > u64::from(matches!(count, Count::Lines)) {
        bail!("{shown} failed (exit {code}): {stderr}");
    }
    Ok(Measured { wall: Duration::from_micros(micros), peak_kib: kib, count: counted? })
}

/// One size and pattern, every run of both tools.
struct Row {
    size: usize,
    what: String,
    ours: Vec<Measured>,
    theirs: Vec<Measured>,
}

fn median_u64(values: impl Iterator<Item = u64>) -> u64 {
    let mut values: Vec<u64> = values.collect();
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

fn print_table<'a>(rows: impl Iterator<Item = &'a Row>) {
    println!();
    println!(
        "{:>7} {:<30} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>8} {:>8}",
        "files", "pattern", "ours s", "ag s", "time×", "ours MiB", "ag MiB", "RSS×", "ours n", "ag n"
    );
    for row in rows {
        let secs = |runs: &[Measured]| median(&runs.iter().map(|m| m.wall).collect::<Vec<_>>()) / 1000.0;
        let mb = |runs: &[Measured]| median_u64(runs.iter().map(|m| m.peak_kib)) as f64 / 1024.0;
        let (o, a) = (secs(&row.ours), secs(&row.theirs));
        let (om, am) = (mb(&row.ours), mb(&row.theirs));
        let (n, m) = (row.ours[0].count, row.theirs[0].count);
        let unstable = row.ours.iter().any(|r| r.count != n) || row.theirs.iter().any(|r| r.count != m);
        println!(
            "{:>7} {:<30} {:>8.2} {:>8.2} {:>6.2} {:>8.0} {:>8.0} {:>6.2} {:>8} {:>8}{}{}",
            row.size,
            row.what,
            o,
            a,
            o / a,
            om,
            am,
            om / am,
            n,
            m,
            if n == m { "" } else { "  (counts differ)" },
            if unstable { "  (UNSTABLE counts across runs)" } else { "" },
        );
    }
}
