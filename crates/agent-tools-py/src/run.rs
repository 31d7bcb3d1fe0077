//! One run in process: [`NativeRun`] wires the facade's registry as
//! `agent-tools serve` does for a root, and runs its surfaces' calls on the
//! module's tokio runtime as Python awaitables.
//!
//! A call's awaitable resolves to a dict (`text`, `structured`, `is_error`,
//! `refused`, `images`). Cancelling it drops the call's future, which is how
//! every tool stops (as MCP cancellation does in `serve`). Closing the run
//! cancels the calls in flight (they raise `ClosedError`), then ends the run's
//! kernels, language servers and debug session, and refuses later calls.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_tools::question_port::QuestionPort;
use agent_tools::{Progress, ProgressSink, QuestionWiring, Surface, Tier, ToolResult, ToolSpec};
use agent_tools_cli::command::{self, RunPorts, Workers};
use agent_tools_cli::{config, wiring};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use serde::Serialize;
use tokio::sync::watch;

use crate::ask::{CallScope, Kind, PyPort};
use crate::{ClosedError, ConfigError, HostError};

/// Where `ask_user` says its card would have gone, when a call has no `ask`.
const TARGET_SPACE: &str = "this Python call has no `ask` callable";

/// A host's tree store cap by default, in MiB: `search.tree_store_mb`'s default.
const DEFAULT_STORE_MB: u64 = agent_tools::astmatch::DEFAULT_STORE_BYTES >> 20;

/// A run wired at a root, capped at a tier, until it is closed.
/// The language servers shared by the runs wired with it: runs on one checkout, or on git
/// worktrees of one repository, use one server process (`serve --http`'s pool, in process).
#[pyclass(frozen, module = "agent_tools._native")]
pub struct NativeHost {
    host: agent_tools::Host,
}

#[pymethods]
impl NativeHost {
    /// A host that keeps a language server no run uses for `lsp_idle_s` seconds, and with
    /// `lsp_memory_mb` stops such servers sooner while the servers take more than that.
    /// Its runs' parse trees are kept on disk in `tree_store` (the default directory when
    /// `None`), up to `tree_store_mb` MiB; `0` keeps none.
    #[new]
    #[pyo3(signature = (lsp_idle_s=600.0, lsp_memory_mb=None, tree_store=None, tree_store_mb=DEFAULT_STORE_MB))]
    fn new(
        lsp_idle_s: f64,
        lsp_memory_mb: Option<u64>,
        tree_store: Option<PathBuf>,
        tree_store_mb: u64,
    ) -> PyResult<NativeHost> {
        let idle = std::time::Duration::try_from_secs_f64(lsp_idle_s).map_err(|_| {
            ConfigError::new_err(format!("lsp_idle_s must be a number of seconds ≥ 0, not {lsp_idle_s}"))
        })?;
        let lsp_memory_budget = lsp_memory_mb.map(|mb| mb.saturating_mul(1 << 20));
        let tree_store_dir =
            (tree_store_mb > 0).then(|| tree_store.unwrap_or_else(agent_tools::astmatch::TreeStore::default_dir));
        let host = agent_tools::Host::new(agent_tools::HostConfig {
            lsp_idle: idle,
            lsp_memory_budget,
            tree_store_dir,
            tree_store_bytes: tree_store_mb.saturating_mul(1 << 20),
            ..agent_tools::HostConfig::default()
        });
        Ok(NativeHost { host })
    }

    /// The language servers running: `(server, root, pid, runs using it)` each.
    fn servers(&self, py: Python<'_>) -> Vec<(String, String, Option<u32>, usize)> {
        let pool = Arc::clone(self.host.server_pool());
        py.detach(|| {
            pyo3_async_runtimes::tokio::get_runtime().block_on(async move {
                pool.running()
                    .await
                    .into_iter()
                    .map(|(server, root, pid, runs)| (server.to_owned(), root.display().to_string(), pid, runs))
                    .collect()
            })
        })
    }
}

#[pyclass(frozen, module = "agent_tools._native")]
pub struct NativeRun {
    /// `None` once closed.
    run: Mutex<Option<Arc<agent_tools::Run>>>,
    cap: Tier,
    /// Turns `true` on close, which cancels the calls in flight.
    closed: watch::Sender<bool>,
}

fn config_error(error: anyhow::Error) -> PyErr {
    ConfigError::new_err(format!("{error:#}"))
}

fn parse_cap(cap: &str) -> PyResult<Tier> {
    cap.parse::<Tier>()
        .map_err(|_| ConfigError::new_err(format!("cap must be \"read\", \"write\" or \"exec\", not {cap:?}")))
}

/// A tool's spec as the Python half reads it.
#[derive(Serialize)]
struct SpecView<'a> {
    name: &'a str,
    description: &'a str,
    tier: &'a str,
    parallel_safe: bool,
    destructive: bool,
    input_schema: &'a serde_json::Map<String, serde_json::Value>,
    output_schema: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

impl<'a> SpecView<'a> {
    fn of(spec: &'a ToolSpec) -> SpecView<'a> {
        SpecView {
            name: spec.name,
            description: &spec.description,
            tier: spec.tier.as_str(),
            parallel_safe: spec.parallel_safe,
            destructive: spec.destructive,
            input_schema: &spec.input_schema,
            output_schema: spec.output_schema.as_ref(),
        }
    }
}

/// A call's outcome as the Python half reads it.
#[derive(Serialize)]
struct ResultView {
    text: String,
    structured: Option<serde_json::Value>,
    is_error: bool,
    /// The call did not reach its tool (unknown, above the cap, bad arguments, denied).
    refused: bool,
    images: Vec<agent_tools::Image>,
}

impl ResultView {
    fn of(outcome: Result<ToolResult, agent_tools::Refusal>) -> ResultView {
        match outcome {
            Ok(result) => ResultView {
                text: result.text,
                structured: result.structured,
                is_error: result.is_error,
                refused: false,
                images: result.images,
            },
            Err(refusal) => ResultView {
                text: refusal.to_string(),
                structured: None,
                is_error: true,
                refused: true,
                images: Vec::new(),
            },
        }
    }
}

impl NativeRun {
    /// The surface capped at `cap`, or why not: the run is closed, or `cap` is above the run's.
    fn surface(&self, cap: &str) -> PyResult<Surface> {
        let cap = parse_cap(cap)?;
        if cap > self.cap {
            return Err(ConfigError::new_err(format!(
                "a surface of this run is capped at {} at most, not {cap}",
                self.cap
            )));
        }
        let run = self.run.lock().unwrap_or_else(PoisonError::into_inner);
        match run.as_ref() {
            // A cell's `tool()` calls take the outer call's `ask` with them.
            Some(run) => Ok(run.registry().surface(cap).with_task_scope(Arc::new(crate::ask::AskScope))),
            None => Err(ClosedError::new_err("the run is closed")),
        }
    }
}

#[pymethods]
impl NativeRun {
    /// Wires the run at `root`: the configuration is `config` (a file), else the root's
    /// `agent-tools.toml` unless `no_config`, under the environment's `AGENT_TOOLS_*` and
    /// the `sets` (`"section.key=value"`); with `approval`, write and exec calls are asked
    /// through the call's `ask` as `serve --ask` asks. Starts no process.
    #[new]
    #[pyo3(signature = (root, cap, config=None, no_config=false, sets=Vec::new(), approval=false, host=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one by one.
    fn new(
        py: Python<'_>,
        root: PathBuf,
        cap: &str,
        config: Option<PathBuf>,
        no_config: bool,
        sets: Vec<String>,
        approval: bool,
        host: Option<PyRef<'_, NativeHost>>,
    ) -> PyResult<NativeRun> {
        let host = host.map(|h| h.host.clone());
        let cap = parse_cap(cap)?;
        let run = py.detach(|| -> anyhow::Result<agent_tools::Run> {
            // The supervisors' constructors may start tasks: inside the module's runtime.
            let _entered = pyo3_async_runtimes::tokio::get_runtime().enter();
            let workspace = command::workspace(Some(root))?;
            let mut flags = config::Flags { file: config, no_config, sets: Vec::new() };
            for assignment in &sets {
                flags.set(assignment)?;
            }
            let settings = config::Config::load(workspace.root(), &flags)?.settings;
            let ports = RunPorts {
                question: QuestionWiring {
                    port: Arc::new(PyPort::new(Kind::Question)),
                    target_space: TARGET_SPACE.to_owned(),
                },
                approval: approval.then(|| Arc::new(PyPort::new(Kind::Approval)) as Arc<dyn QuestionPort>),
            };
            // Without a host, the run is its host's only run: its servers stop with it, and
            // its tree store is the one its settings name.
            let host = host.unwrap_or_else(|| {
                agent_tools::Host::new(wiring::with_tree_store(agent_tools::HostConfig::one_run(), &settings))
            });
            command::wire_run(workspace, &settings, cap, ports, Workers::None, &host)
        });
        let run = run.map_err(config_error)?;
        Ok(NativeRun { run: Mutex::new(Some(Arc::new(run))), cap, closed: watch::Sender::new(false) })
    }

    /// The run's cap: `"read"`, `"write"` or `"exec"`.
    #[getter]
    fn cap(&self) -> &'static str {
        self.cap.as_str()
    }

    /// Whether the run is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.run.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// The specs of the tools a surface capped at `cap` lists, in registration order:
    /// dicts of `name`, `description`, `tier`, `parallel_safe`, `destructive`,
    /// `input_schema` and `output_schema` (JSON Schema draft-07 objects, or `None`).
    fn specs<'py>(&self, py: Python<'py>, cap: &str) -> PyResult<Bound<'py, PyAny>> {
        let surface = self.surface(cap)?;
        let specs: Vec<SpecView<'_>> = surface.list().into_iter().map(SpecView::of).collect();
        pythonize::pythonize(py, &specs).map_err(|e| HostError::new_err(e.to_string()))
    }

    /// Calls tool `name` with `args` (a JSON-like value) through the surface capped at
    /// `cap`, as an awaitable of the result dict. `progress(message, progress, total)` is
    /// called from a runtime thread with each paced report; `ask` is the question bridge
    /// (see `ask.rs`). Raises `TypeError` for arguments that are not JSON, `ClosedError`
    /// when the run is or gets closed, `HostError` for a host failure, and what `ask` raised.
    #[pyo3(signature = (cap, name, args, progress=None, ask=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        cap: &str,
        name: String,
        args: Bound<'py, PyAny>,
        progress: Option<Py<PyAny>>,
        ask: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let surface = self.surface(cap)?;
        let args: serde_json::Value = pythonize::depythonize(&args)
            .map_err(|e| PyTypeError::new_err(format!("the arguments of {name} are not a JSON value: {e}")))?;
        let mut closed = self.closed.subscribe();
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
        crate::awaitable::awaitable(py, locals, async move {
            let sink = progress.map(|report| {
                ProgressSink::new(move |p: Progress| {
                    Python::attach(|py| {
                        // The Python half only schedules it on the loop; a closed loop drops it.
                        let _ = report.call1(py, (p.message, p.progress, p.total));
                    });
                })
            });
            let scope = CallScope::new(ask);
            let call = scope.run(surface.try_call_with_progress(&name, args, sink));
            let outcome = tokio::select! {
                outcome = call => outcome,
                error = scope.failed() => return Err(error),
                _ = closed.wait_for(|closed| *closed) => {
                    return Err(ClosedError::new_err(format!("the run was closed while {name} ran; the call was cancelled")));
                }
            };
            let view = match outcome {
                Ok(outcome) => ResultView::of(outcome),
                Err(error) => return Err(HostError::new_err(error.to_string())),
            };
            Python::attach(|py| {
                pythonize::pythonize(py, &view).map(Bound::unbind).map_err(|e| HostError::new_err(e.to_string()))
            })
        })
    }

    /// Closes the run, as an awaitable: the calls in flight are cancelled, then the
    /// run's kernels, language servers and debug session are ended. Closing a closed
    /// run does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let run = self.take();
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
        crate::awaitable::awaitable(py, locals, async move {
            if let Some(run) = run {
                run.close().await;
            }
            Ok(())
        })
    }

    /// [`NativeRun::close`], blocking this thread until the processes are ended.
    fn close_blocking(&self, py: Python<'_>) {
        if let Some(run) = self.take() {
            py.detach(|| pyo3_async_runtimes::tokio::get_runtime().block_on(run.close()));
        }
    }
}

impl NativeRun {
    /// Marks the run closed (cancelling its calls) and gives its resources to end.
    fn take(&self) -> Option<Arc<agent_tools::Run>> {
        let run = self.run.lock().unwrap_or_else(PoisonError::into_inner).take();
        self.closed.send_replace(true);
        run
    }
}
