//! `cargo xtask bench engines`: what a call costs through a real container
//! engine, against the same call on the host, side by side in one run.
//!
//! Three places: the host (no enclosure), and a container of the test image
//! reached as the `command` enclosure `podman exec -i NAME`, under runc and
//! under runsc (gVisor). In each, the same two calls:
//! - `eval`: a Python kernel's start to the first `1+1` result, then the median
//!   round trip of a `1+1` cell;
//! - `debug`: the median step (`next` → the stop → where it stopped) of
//!   debugpy through a loop, from a breakpoint.
//!
//! The host runs `.tools/venv/bin/python` with its debugpy; the containers run
//! the image's own Python with Debian's debugpy. Rounds alternate the places.
//! It prints each median, and each container's ratio to the host. Timing is
//! printed, never asserted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use dap_session::{DebugConfig, DebugSupervisor, LaunchSpec, Resume, RunOutcome};
use enclosure::Enclosure;
use enclosure::engine::{self, Container, Runtime};
use kernel::{Cell, KernelConfig, Kernels, Language};

use crate::bench::median;
use crate::setup::venv_bin;

/// How the benchmark runs.
pub(crate) struct Options {
    /// Rounds, each over every place (default 3).
    rounds: usize,
    /// `1+1` cells timed per round (default 100).
    cells: usize,
    /// Steps timed per round (default 50).
    steps: usize,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { rounds: 3, cells: 100, steps: 50 };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            let value = it.next().with_context(|| format!("{arg} takes a value"))?;
            let number: usize = value.parse().with_context(|| format!("{arg} takes a number"))?;
            match arg {
                "--rounds" => options.rounds = number.max(1),
                "--cells" => options.cells = number.max(1),
                "--steps" => options.steps = number.max(1),
                _ => bail!("unknown option `{arg}` (use --rounds N, --cells N, --steps N)"),
            }
        }
        Ok(options)
    }
}

const PROGRAM: &str = "total = 0\nfor i in range(10000000):\n    total += i\n    total -= 1\nprint(total)\n";

/// Where the calls run.
#[derive(Clone, Copy)]
enum Place {
    Host,
    Engine(Runtime),
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Engine(Runtime::Runc) => "podman exec, runc",
            Place::Engine(Runtime::Runsc) => "podman exec, gVisor",
        }
    }
}

#[derive(Default)]
struct Figures {
    start: Vec<Duration>,
    cells: Vec<Duration>,
    steps: Vec<Duration>,
    /// The kernel's Python and its debugpy, as the kernel reports them.
    versions: String,
}

pub(crate) fn run(options: &Options) -> Result<()> {
    for runtime in Runtime::ALL {
        engine::available(runtime).map_err(|why| anyhow!(why))?;
    }
    let places = [Place::Host, Place::Engine(Runtime::Runc), Place::Engine(Runtime::Runsc)];
    let mut figures: Vec<Figures> = places.iter().map(|_| Figures::default()).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    for round in 0..options.rounds {
        for (place, figures) in places.iter().zip(figures.iter_mut()) {
            let root = tempfile::tempdir()?;
            let root_path = root.path().canonicalize()?;
            std::fs::write(root_path.join("loop.py"), PROGRAM)?;
            std::fs::write(root_path.join("requirements.txt"), "")?;
            let container = match place {
                Place::Host => None,
                Place::Engine(runtime) => Some(Container::start(*runtime, &root_path).map_err(|why| anyhow!(why))?),
            };
            let enclosure = container.as_ref().map(Container::enclosure);
            runtime.block_on(async {
                eval_round(&root_path, enclosure.as_ref(), options.cells, figures).await?;
                debug_round(&root_path, enclosure.as_ref(), options.steps, figures).await
            })?;
            println!("round {} of {}: {} done", round + 1, options.rounds, place.name());
        }
    }
    println!();
    for (place, figures) in places.iter().zip(&figures) {
        println!("{:<22} {}", place.name(), figures.versions);
    }
    println!();
    println!("{:<22} {:>14} {:>12} {:>12}", "", "kernel start", "1+1 cell", "debug step");
    let ms = |times: &[Duration]| median(times);
    let host = &figures[0];
    for (place, figures) in places.iter().zip(&figures) {
        println!(
            "{:<22} {:>11.1} ms {:>9.2} ms {:>9.2} ms",
            place.name(),
            ms(&figures.start),
            ms(&figures.cells),
            ms(&figures.steps)
        );
    }
    for (place, figures) in places.iter().zip(&figures).skip(1) {
        println!(
            "ratio {}/host: start {:.2}x, cell {:.2}x, step {:.2}x",
            place.name(),
            ms(&figures.start) / ms(&host.start),
            ms(&figures.cells) / ms(&host.cells),
            ms(&figures.steps) / ms(&host.steps)
        );
    }
    Ok(())
}

async fn eval_round(root: &Path, enclosure: Option<&Enclosure>, cells: usize, figures: &mut Figures) -> Result<()> {
    let mut config = KernelConfig::new(root);
    let kernels = match enclosure {
        None => {
            config.python = Some(venv_bin("python"));
            Kernels::new(config)
        }
        Some(enclosure) => Kernels::with_spawner(config, Arc::new(enclosure.clone())),
    };
    let t0 = Instant::now();
    let first = kernels.execute(Cell::new(Language::Python, "1+1")).await?;
    if first.is_error() || first.text().trim().lines().last() != Some("2") {
        bail!("the first cell did not answer 2: {}", first.text());
    }
    figures.start.push(t0.elapsed());
    let code = "import sys, debugpy\nprint('Python', sys.version.split()[0], 'debugpy', debugpy.__version__)";
    let versions = kernels.execute(Cell::new(Language::Python, code)).await?;
    figures.versions = versions.text().trim().lines().last().unwrap_or("").to_owned();
    for _ in 0..cells {
        let t = Instant::now();
        let result = kernels.execute(Cell::new(Language::Python, "1+1")).await?;
        figures.cells.push(t.elapsed());
        if result.is_error() || result.text().trim() != "2" {
            bail!("a cell did not answer 2: {}", result.text());
        }
    }
    kernels.shutdown().await;
    Ok(())
}

async fn debug_round(root: &Path, enclosure: Option<&Enclosure>, steps: usize, figures: &mut Figures) -> Result<()> {
    let mut config = DebugConfig::default();
    match enclosure {
        None => config.detection.python = Some(venv_bin("python")),
        Some(enclosure) => {
            config.enclosure = Some(enclosure.clone());
            config.detection.inside = Some(enclosure.clone());
        }
    }
    let debug = DebugSupervisor::new(config);
    let program: PathBuf = root.join("loop.py");
    debug.set_breakpoints("bench", &program, &[3]).await?;
    let started = debug.launch("bench", LaunchSpec::new(root.to_path_buf(), program)).await?;
    if !matches!(started.outcome, RunOutcome::Stopped(_)) {
        bail!("the launch did not stop at the breakpoint: {:?}", started.outcome);
    }
    debug.set_breakpoints("bench", &root.join("loop.py"), &[]).await?;
    for _ in 0..steps {
        let t = Instant::now();
        let outcome = debug.resume("bench", Resume::StepOver, None).await?;
        figures.steps.push(t.elapsed());
        if !matches!(outcome, RunOutcome::Stopped(_)) {
            bail!("a step did not stop: {outcome:?}");
        }
    }
    debug.terminate("bench").await?;
    Ok(())
}
