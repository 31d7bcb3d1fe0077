//! The fault suite's container rows: the `eval` tool on a kernel inside a
//! real container (podman under runc and under runsc, gVisor) reached as the
//! `command` enclosure `podman exec -i NAME`, with the image's own Python.
//! The container is killed (`podman kill`) or frozen (`podman pause`) while a
//! cell runs: the call ends with a clear error within its budget, nothing of
//! it is left on the host, and once the container is back (a new one of the
//! same name, or unpaused) the next cell runs in a fresh kernel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{KernelWiring, Registry, Surface, Tier};
use anyhow::{Context as _, Result, anyhow, bail};
use enclosure::engine::{self, Container, Runtime};
use kernel::{KernelConfig, Kernels};

use crate::fault_row::{Ctx, Report, Row, Verdict, Watched, expect_text};
use crate::faults_kernel::{eval, kernel_pid};

pub fn rows() -> Vec<Row> {
    vec![
        Row {
            system: "container (runc)",
            fault: "podman kill mid-cell",
            call: "eval",
            expected: "error: the kernel ended, state lost",
            run: |ctx| Box::pin(run(ctx, Runtime::Runc, Fault::Kill)),
        },
        Row {
            system: "container (runc)",
            fault: "podman pause mid-cell",
            call: "eval",
            expected: "error: killed at the grace, state lost",
            run: |ctx| Box::pin(run(ctx, Runtime::Runc, Fault::Pause)),
        },
        Row {
            system: "container (gVisor)",
            fault: "podman kill mid-cell",
            call: "eval",
            expected: "error: the kernel ended, state lost",
            run: |ctx| Box::pin(run(ctx, Runtime::Runsc, Fault::Kill)),
        },
        Row {
            system: "container (gVisor)",
            fault: "podman pause mid-cell",
            call: "eval",
            expected: "error: killed at the grace, state lost",
            run: |ctx| Box::pin(run(ctx, Runtime::Runsc, Fault::Pause)),
        },
    ]
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Kill,
    Pause,
}

/// No output for this long interrupts a cell.
const INACTIVITY: Duration = Duration::from_secs(2);
/// After the interrupt, this long before the kill.
const GRACE: Duration = Duration::from_secs(1);
/// The fault comes this long into the cell.
const INTO_THE_CELL: Duration = Duration::from_millis(700);

/// Prints a dot every 100 ms, so only the fault stops its output.
const CELL: &str = "x = 41\nimport time\nwhile True:\n    print('.', end='', flush=True)\n    time.sleep(0.1)";

fn surface(ctx: &Ctx, container: &Container) -> Result<(Surface, Arc<Kernels>)> {
    // No interpreter configured: the container's own is found through the prefix.
    let mut config = KernelConfig::new(&container.root);
    config.inactivity_timeout = INACTIVITY;
    config.interrupt_grace = GRACE;
    config.env.push(ctx.marker_env());
    let kernels = Arc::new(Kernels::with_spawner(config, Arc::new(container.enclosure())));
    let registry = Registry::builder().with_kernels(KernelWiring::new(Arc::clone(&kernels))).build()?;
    Ok((Arc::new(registry).surface(Tier::Exec), kernels))
}

async fn run(ctx: Ctx, runtime: Runtime, fault: Fault) -> Result<Report> {
    if let Err(why) = engine::available(runtime) {
        bail!("{why}");
    }
    let (_dir, root) = crate::fault_row::project(&[])?;
    let container = Container::start(runtime, &root).map_err(|why| anyhow!(why))?;
    let (surface, kernels) = surface(&ctx, &container)?;
    let mut report = Report::default();
    let mut watched = Watched::default();
    let warm = eval(&surface, "print('warm')").await?;
    expect_text(warm.is_error, &warm.text, false, &["warm"]).map_err(anyhow::Error::msg).context("warm-up")?;
    // The kernel's process on the host is the prefix's client.
    let first = kernel_pid(&kernels).await.context("no kernel after the warm-up")?;
    watched.add(first);
    let (budget, needles): (Duration, &[&str]) = match fault {
        // The client ends with the container: the kernel is gone at once.
        Fault::Kill => (INTO_THE_CELL + Duration::from_secs(2), &["kernel crashed", "state was lost"]),
        // A frozen kernel answers no interrupt: killed after the inactivity and the grace.
        Fault::Pause => {
            (INTO_THE_CELL + INACTIVITY + GRACE, &["ignored the interrupt and the kernel was killed", "state was lost"])
        }
    };
    let name = container.name.clone();
    let inject = tokio::spawn(async move {
        tokio::time::sleep(INTO_THE_CELL).await;
        let verb = match fault {
            Fault::Kill => "kill",
            Fault::Pause => "pause",
        };
        engine::podman(&[verb, &name]).output()
    });
    let started = Instant::now();
    let result = eval(&surface, CELL).await?;
    report.ended(&ctx, started, budget, expect_text(result.is_error, &result.text, true, needles));
    let injected = inject.await?.context("podman")?;
    if !injected.status.success() {
        bail!("podman could not inject the fault: {}", String::from_utf8_lossy(&injected.stderr).trim());
    }
    // The container comes back: a new one in the killed one's place, or the frozen one thawed
    // (its old kernel then reads the end of its stdin and exits).
    match fault {
        Fault::Kill => container.start_again().map_err(|why| anyhow!(why))?,
        Fault::Pause => {
            let out = container.pause(false);
            if !out.status.success() {
                bail!("podman unpause: {}", String::from_utf8_lossy(&out.stderr).trim());
            }
        }
    }
    report.leftovers_after_call(&ctx, &watched, &[]).await;
    let lost = kernel_pid(&kernels).await;
    let status: Verdict = match lost {
        None => Ok(()),
        Some(pid) => Err(format!("kernel {pid} shown as running after it was lost")),
    };
    let next = eval(&surface, "print('fresh', 'x' in globals())").await?;
    report.next_works =
        Some(expect_text(next.is_error, &next.text, false, &["started a new python kernel", "fresh False"]));
    let after = kernel_pid(&kernels).await;
    report.status = Some(status.and_then(|()| match after {
        Some(pid) if crate::fault_row::running(pid) && pid != first => Ok(()),
        other => Err(format!("after the next cell the kernel shown is {other:?} (the first was {first})")),
    }));
    if let Some(pid) = after {
        watched.add(pid);
    }
    kernels.shutdown().await;
    drop(surface);
    report.leftovers_after_shutdown(&ctx, &watched).await;
    // Inside too: nothing but the container's own `sleep infinity` is left.
    let inside = container.processes();
    if !inside.is_empty() && report.no_leftovers.as_ref().is_some_and(Result::is_ok) {
        report.no_leftovers = Some(Err(format!("left inside the container: {inside:?}")));
    }
    Ok(report)
}
