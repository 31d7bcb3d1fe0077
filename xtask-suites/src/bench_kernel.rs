//! `cargo xtask bench kernel`: our Python kernel against ipykernel driven by
//! jupyter_client, in one run, alternating.
//!
//! Two figures each: kernel start to the first result of a `1+1` cell, and the
//! median round trip of a `1+1` cell (sent, result back, kernel idle) over many
//! cells. `--enclosure bwrap` runs our kernel in the bubblewrap sandbox
//! (`enclosure` crate) while ipykernel stays on the host. Both sides run the same interpreter (`.tools/venv/bin/python`, where
//! setup installed ipykernel and jupyter_client). Ours runs in a release-built
//! `xtask-suites kernel-once`, so neither side pays for a debug build. Timing is
//! printed, never asserted.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::bench::{cargo, median, target_dir};
use crate::run_quiet;
use crate::setup::venv_bin;

/// How the benchmark runs.
pub(crate) struct Options {
    /// Rounds, each running ours then ipykernel (default 3).
    rounds: usize,
    /// `1+1` cells per round after the first result (default 200).
    cells: usize,
    /// Where our kernel runs: `none` (the host, default) or `bwrap`.
    enclosure: String,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { rounds: 3, cells: 200, enclosure: "none".to_owned() };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            let value = it.next().with_context(|| format!("{arg} takes a value"))?;
            let number = || -> Result<usize> { value.parse().with_context(|| format!("{arg} takes a number")) };
            match arg {
                "--rounds" => options.rounds = number()?.max(1),
                "--cells" => options.cells = number()?.max(1),
                "--enclosure" if ["none", "bwrap"].contains(value) => options.enclosure = (*value).to_owned(),
                _ => bail!("unknown option `{arg} {value}` (use --rounds N, --cells N, --enclosure none|bwrap)"),
            }
        }
        Ok(options)
    }
}

/// The ipykernel side: start a kernel with jupyter_client, time the first `1+1`, then `cells` more.
const IPYKERNEL_SCRIPT: &str = r#"
import json, sys, time
from jupyter_client.manager import start_new_kernel
n = int(sys.argv[1])
t0 = time.perf_counter()
km, kc = start_new_kernel(kernel_name="python3")
def run(code):
    reply = kc.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
    if reply["content"]["status"] != "ok":
        raise SystemExit("cell failed: %r" % (reply["content"],))
run("1+1")
start = (time.perf_counter() - t0) * 1000
cells = []
for _ in range(n):
    s = time.perf_counter()
    run("1+1")
    cells.append((time.perf_counter() - s) * 1000)
kc.stop_channels()
km.shutdown_kernel(now=True)
print(json.dumps({"start_ms": start, "cells_ms": cells}))
"#;

struct Sample {
    start: Duration,
    cell: Duration,
}

fn parse_sample(stdout: &[u8]) -> Result<Sample> {
    let text = String::from_utf8_lossy(stdout);
    let line = text.lines().last().context("no output")?;
    let value: serde_json::Value = serde_json::from_str(line).with_context(|| format!("not JSON: {line}"))?;
    let start = value["start_ms"].as_f64().context("no start_ms")?;
    let cells: Vec<Duration> = value["cells_ms"]
        .as_array()
        .context("no cells_ms")?
        .iter()
        .filter_map(|v| v.as_f64())
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect();
    Ok(Sample {
        start: Duration::from_secs_f64(start / 1000.0),
        cell: Duration::from_secs_f64(median(&cells) / 1000.0),
    })
}

pub(crate) fn run(options: &Options) -> Result<()> {
    let python = venv_bin("python");
    let probe = Command::new(&python).args(["-c", "import ipykernel, jupyter_client"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        bail!("ipykernel and jupyter_client are missing from {}: run `cargo xtask setup`", python.display());
    }
    println!("building xtask-suites in release …");
    run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "xtask-suites"]))?;
    let xtask = target_dir().join("release").join("xtask-suites");
    println!(
        "ours:      {} kernel-once N {} (kernel crate, {}; enclosure {})",
        xtask.display(),
        options.enclosure,
        python.display(),
        options.enclosure
    );
    println!("ipykernel: {} -c <jupyter_client script> N", python.display());
    println!(
        "rounds:    {}, alternating; {} cells of `1+1` per round after the first result\n",
        options.rounds, options.cells
    );

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 1..=options.rounds {
        let mut cmd = Command::new(&xtask);
        cmd.arg("kernel-once").arg(options.cells.to_string()).arg(&options.enclosure).stdin(Stdio::null());
        let out = run_quiet(&mut cmd)?;
        let a = parse_sample(&out.stdout)?;
        let mut cmd = Command::new(&python);
        cmd.arg("-c").arg(IPYKERNEL_SCRIPT).arg(options.cells.to_string()).stdin(Stdio::null());
        let out = run_quiet(&mut cmd)?;
        let b = parse_sample(&out.stdout)?;
        println!(
            "round {round}: start ours {:8.1} ms  ipykernel {:8.1} ms   cell ours {:6.3} ms  ipykernel {:6.3} ms",
            ms(a.start),
            ms(b.start),
            ms(a.cell),
            ms(b.cell)
        );
        ours.push(a);
        theirs.push(b);
    }
    let med = |v: &[Sample], f: fn(&Sample) -> Duration| median(&v.iter().map(f).collect::<Vec<_>>());
    let (start_a, start_b) = (med(&ours, |s| s.start), med(&theirs, |s| s.start));
    let (cell_a, cell_b) = (med(&ours, |s| s.cell), med(&theirs, |s| s.cell));
    println!();
    println!(
        "start to first result: ours {start_a:.1} ms, ipykernel {start_b:.1} ms, ratio {:.2} (goal ≤ 0.33)",
        start_a / start_b
    );
    println!(
        "median cell round trip: ours {cell_a:.3} ms, ipykernel {cell_b:.3} ms, ratio {:.2} (goal ≤ 0.2)",
        cell_a / cell_b
    );
    println!("ratio ours/ipykernel: start {:.2}, cell {:.2}", start_a / start_b, cell_a / cell_b);
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One measured run of our kernel, as JSON on stdout (called by `run` from a release build).
pub(crate) fn once_command(cells: &str, enclosure: &str) -> Result<()> {
    let cells: usize = cells.parse().context("kernel-once takes a cell count")?;
    let python = venv_bin("python");
    let scratch = tempfile_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut config = kernel::KernelConfig::new(&scratch);
        config.python = Some(python);
        let t0 = Instant::now();
        let kernels = match enclosure {
            "bwrap" => {
                let spawner = std::sync::Arc::new(enclosure::Enclosure::bwrap(&scratch));
                kernel::Kernels::with_spawner(config, spawner)
            }
            _ => kernel::Kernels::new(config),
        };
        let first = kernels.execute(kernel::Cell::new(kernel::Language::Python, "1+1")).await?;
        // A kernel in an enclosure says so on its first cell's first line.
        if first.is_error() || first.text().trim().lines().last() != Some("2") {
            bail!("first cell did not answer 2: {}", first.text());
        }
        let start = t0.elapsed();
        let mut times = Vec::with_capacity(cells);
        for _ in 0..cells {
            let t = Instant::now();
            let result = kernels.execute(kernel::Cell::new(kernel::Language::Python, "1+1")).await?;
            times.push(t.elapsed());
            if result.is_error() || result.text().trim() != "2" {
                bail!("cell did not answer 2: {}", result.text());
            }
        }
        kernels.shutdown().await;
        let cells_ms: Vec<f64> = times.iter().map(|d| ms(*d)).collect();
        println!("{}", serde_json::json!({ "start_ms": ms(start), "cells_ms": cells_ms }));
        Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("xtask-kernel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
