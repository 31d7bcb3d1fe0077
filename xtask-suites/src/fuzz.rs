//! `cargo xtask fuzz`: runs the libFuzzer targets in `fuzz/` (`cargo fuzz`, nightly).
//!
//! Before each run the target's corpus (`fuzz/corpus/TARGET`, ignored by git) gets
//! seed inputs made from real code on this machine (the Python standard library,
//! the cargo registry, TypeScript's lib, Go's standard library, the Python headers,
//! the JavaScript under `.tools/node`) and from well-formed protocol streams; the
//! fuzzer mutates from there. Each run prints one line: runs, coverage, corpus size,
//! and the crash if there was one. A crash's input is copied to
//! `fixtures/fuzz/TARGET/`, where the regression test replays it on every `cargo test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use fuzz_checks::TARGETS;

use crate::workspace_root;

pub struct Options {
    targets: Vec<&'static str>,
    run_for: Duration,
    /// Seeds only (a fresh corpus), a fixed random seed: the short run CI makes.
    smoke: bool,
}

impl Options {
    pub fn parse(args: &[&str]) -> Result<Options> {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        let mut targets = Vec::new();
        let mut run_for = None;
        let mut smoke = false;
        let mut args = args.iter();
        while let Some(&arg) = args.next() {
            let mut number = |flag: &str| -> Result<u64> {
                let value = args.next().with_context(|| format!("{flag} needs a number"))?;
                value.parse().with_context(|| format!("{flag} needs a whole number, not `{value}`"))
            };
            match arg {
                "--all" => targets = names.clone(),
                "--smoke" => smoke = true,
                "--minutes" => run_for = Some(Duration::from_secs(number("--minutes")? * 60)),
                "--seconds" => run_for = Some(Duration::from_secs(number("--seconds")?)),
                name if names.contains(&name) => {
                    targets.push(TARGETS.iter().find(|t| t.name == name).map_or("", |t| t.name))
                }
                other => bail!(
                    "unknown target or option `{other}`; targets: {}; options: --all, --minutes N, --seconds N, --smoke",
                    names.join(", ")
                ),
            }
        }
        if targets.is_empty() {
            bail!("name a target ({}) or give --all", names.join(", "));
        }
        let run_for = match (run_for, smoke) {
            (Some(run_for), _) => run_for,
            (None, true) => Duration::from_secs(5),
            (None, false) => bail!("give --minutes N (or --seconds N) per target"),
        };
        Ok(Options { targets, run_for, smoke })
    }
}

/// One target's run, as libFuzzer reported it.
struct Outcome {
    runs: u64,
    coverage: u64,
    features: u64,
    corpus: u64,
    peak_rss_mb: u64,
    crash: Option<String>,
}

pub fn run(options: &Options) -> Result<()> {
    check_toolchain()?;
    let root = workspace_root();
    let fuzz_dir = root.join("fuzz");
    println!("== building the fuzz targets (nightly, {})", profile_name(options));
    let status = xtask::setup::fuzz_build(options.smoke).status().context("running cargo fuzz build")?;
    if !status.success() {
        bail!("cargo fuzz build failed ({status})");
    }
    // libFuzzer runs one thread, so the targets run one per core at a time; each line is
    // printed as its target ends.
    let jobs = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(options.targets.len()).max(1);
    let next = AtomicUsize::new(0);
    let ended: Mutex<Vec<(&'static str, Result<bool>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while let Some(&target) = options.targets.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let crashed = run_one(&root, &fuzz_dir, target, options);
                    ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((target, crashed));
                }
            });
        }
    });
    // Every target has run: a run that could not be made, and a crash in another, are both told.
    let mut failed = Vec::new();
    let mut errors = Vec::new();
    for (target, crashed) in ended.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        match crashed {
            Ok(true) => failed.push(target),
            Ok(false) => {}
            Err(error) => errors.push(format!("{target}: {error:#}")),
        }
    }
    let crashes = (!failed.is_empty()).then(|| {
        format!(
            "crashes in {}; each input is under fixtures/fuzz/ and `cargo test -p fuzz-checks` replays it",
            failed.join(", ")
        )
    });
    if !errors.is_empty() {
        bail!(
            "fuzz runs that could not be made:\n{}{}",
            errors.join("\n"),
            crashes.map(|c| format!("\n{c}")).unwrap_or_default()
        );
    }
    if let Some(crashes) = crashes {
        bail!(crashes);
    }
    Ok(())
}

/// One target's run from its seeds, and its line of figures; `Ok(true)` when it crashed.
fn run_one(root: &Path, fuzz_dir: &Path, target: &'static str, options: &Options) -> Result<bool> {
    let fresh = tempfile::tempdir()?;
    let corpus = if options.smoke { fresh.path().to_path_buf() } else { fuzz_dir.join("corpus").join(target) };
    std::fs::create_dir_all(&corpus)?;
    let seeds = write_seeds(target, &corpus)?;
    let started = Instant::now();
    let outcome = run_target(root, fuzz_dir, target, &corpus, options)?;
    let took = started.elapsed().as_secs_f64();
    let crash = match &outcome.crash {
        None => "0 crashes".to_owned(),
        Some(artifact) => format!("CRASH, input kept as {artifact}"),
    };
    println!(
        "{target:<14} {:>10} runs in {took:>5.0} s  cov {:>5}  ft {:>6}  corpus {:>5} (seeds {seeds:>3})  rss {:>4} MB  {crash}",
        outcome.runs, outcome.coverage, outcome.features, outcome.corpus, outcome.peak_rss_mb
    );
    Ok(outcome.crash.is_some())
}

/// `cargo fuzz`'s profile, as setup's build of the smoke run's targets uses it.
fn profile_flag(options: &Options) -> &'static str {
    xtask::setup::fuzz_profile(options.smoke)
}

fn profile_name(options: &Options) -> &'static str {
    if options.smoke { "unoptimized, for the smoke run" } else { "release with debug assertions" }
}

/// Whether `cargo +nightly` runs.
fn nightly_installed() -> bool {
    let nightly = Command::new("cargo").args(["+nightly", "--version"]).stdin(Stdio::null()).output();
    nightly.is_ok_and(|out| out.status.success())
}

/// Nightly must be installed (rustup), and `cargo fuzz` is installed from crates.io when missing.
fn check_toolchain() -> Result<()> {
    if !nightly_installed() {
        bail!("the nightly toolchain is missing; install it with `rustup toolchain install nightly --profile minimal`");
    }
    let fuzz = Command::new("cargo").args(["fuzz", "--version"]).stdin(Stdio::null()).output();
    if !fuzz.is_ok_and(|out| out.status.success()) {
        println!("== installing cargo-fuzz (cargo install cargo-fuzz --locked)");
        let status = Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]).stdin(Stdio::null()).status()?;
        if !status.success() {
            bail!("installing cargo-fuzz failed ({status})");
        }
    }
    Ok(())
}

fn run_target(root: &Path, fuzz_dir: &Path, target: &str, corpus: &Path, options: &Options) -> Result<Outcome> {
    let artifacts = fuzz_dir.join("artifacts").join(target);
    std::fs::create_dir_all(&artifacts)?;
    let out = Command::new("cargo")
        .current_dir(root)
        .args(["+nightly", "fuzz", "run", profile_flag(options), "--fuzz-dir"])
        .arg(fuzz_dir)
        .arg(target)
        .arg(corpus)
        .arg("--")
        .arg(format!("-max_total_time={}", options.run_for.as_secs().max(1)))
        .args(if options.smoke { &["-seed=1"][..] } else { &[] })
        .args(["-timeout=10", "-rss_limit_mb=2048", "-malloc_limit_mb=2048", "-max_len=8192", "-print_final_stats=1"])
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .stdin(Stdio::null())
        .output()
        .context("running cargo fuzz run")?;
    let log = String::from_utf8_lossy(&out.stderr);
    let stat = |name: &str| -> u64 {
        log.lines()
            .filter_map(|line| line.strip_prefix(&format!("stat::{name}:")))
            .find_map(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    // The last status line: "#123 DONE cov: 456 ft: 789 corp: 12/3456b …".
    let after = |line: &str, key: &str| -> Option<u64> {
        let rest = line.split(key).nth(1)?;
        rest.split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty())?.parse().ok()
    };
    let status_line = log.lines().rev().find(|l| l.starts_with('#') && l.contains("cov: ")).unwrap_or("");
    let crash = if out.status.success() {
        None
    } else {
        let written = log.lines().find_map(|l| l.split("Test unit written to ").nth(1)).map(str::trim);
        let Some(written) = written else {
            bail!("cargo fuzz run {target} failed ({}) without a crash input:\n{}", out.status, tail(&log, 40));
        };
        let kind = log.lines().find(|l| l.contains("==ERROR: libFuzzer:") || l.starts_with("SUMMARY:")).unwrap_or("");
        eprintln!("{}", tail(&log, 60));
        let kept = keep_crash(target, Path::new(written))?;
        Some(format!("{} ({})", kept.display(), kind.trim()))
    };
    Ok(Outcome {
        runs: stat("number_of_executed_units"),
        coverage: after(status_line, "cov: ").unwrap_or(0),
        features: after(status_line, "ft: ").unwrap_or(0),
        corpus: after(status_line, "corp: ").unwrap_or(0),
        peak_rss_mb: stat("peak_rss_mb"),
        crash,
    })
}

fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Copies a crash input to `fixtures/fuzz/TARGET/`, named by libFuzzer's hash.
fn keep_crash(target: &str, artifact: &Path) -> Result<PathBuf> {
    let dir = workspace_root().join("fixtures").join("fuzz").join(target);
    std::fs::create_dir_all(&dir)?;
    let name = artifact.file_name().context("a crash input without a file name")?;
    let kept = dir.join(name);
    std::fs::copy(artifact, &kept).with_context(|| format!("copying {}", artifact.display()))?;
    Ok(kept.strip_prefix(workspace_root()).unwrap_or(&kept).to_path_buf())
}

/// Writes the target's seed inputs into `corpus`; returns how many.
fn write_seeds(target: &str, corpus: &Path) -> Result<usize> {
    let seeds = fuzz_checks::seeds(target);
    for (n, seed) in seeds.iter().enumerate() {
        std::fs::write(corpus.join(format!("seed-{n:04}")), seed)?;
    }
    Ok(seeds.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI's smoke run, as `cargo xtask fuzz --all --smoke` makes it: every target 5 s from its
    /// seeds with a fixed random seed, and no crash. The build comes first, at the lowest CPU
    /// priority (`setup::fuzz_build`): on a fresh clone it takes the CPU the tests beside it
    /// leave idle, rather than a turn of its own in setup before any test starts.
    /// Nightly missing, it fails under `CI=true` and is skipped otherwise, as a missing server is.
    #[test]
    fn every_fuzz_target_survives_its_smoke_run() -> Result<()> {
        if !nightly_installed() {
            let message = "the nightly toolchain is missing: `cargo xtask setup` installs it";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
            eprintln!("SKIPPED: {message}");
            return Ok(());
        }
        run(&Options::parse(&["--all", "--smoke"])?)
    }
}
