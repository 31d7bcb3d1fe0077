//! `agent_tools._native`, the Rust half of the `agent-tools` Python package.
//!
//! It holds the facade in process: a [`run::NativeRun`] is one run wired as
//! `agent-tools serve` wires one (through `agent_tools_cli::command::wire_run`,
//! with the same configuration loading), and its calls run on the one tokio
//! runtime this module owns ([`pyo3_async_runtimes::tokio::get_runtime`]).
//! [`cli_main`] is the `agent-tools` command itself, for the console script.
//!
//! The Python half (`python/agent_tools/__init__.py`) is the public API: typed
//! objects, `async with`, the sync twin. This module converts values and
//! routes questions; it knows no tool, and prints nothing.
//!
//! All of it is behind the `extension` feature, which maturin turns on
//! (`pyproject.toml`). Without it the library is empty, so `cargo test`, which
//! builds the library for `tests/it`, compiles no pyo3 and builds no second
//! extension beside maturin's (whose pyo3 configuration differs).
#![warn(missing_docs)]
#![cfg(feature = "extension")]

use pyo3::prelude::*;

mod ask;
mod awaitable;
mod run;

pyo3::create_exception!(
    agent_tools,
    Error,
    pyo3::exceptions::PyException,
    "A host failure: the run cannot do what was asked (tool errors are results, not exceptions)."
);
pyo3::create_exception!(
    agent_tools,
    ConfigError,
    Error,
    "The run cannot be wired: its root, cap, configuration file or a `set` value is wrong."
);
pyo3::create_exception!(
    agent_tools,
    ClosedError,
    Error,
    "The run is closed: its processes are ended and it takes no calls."
);
pyo3::create_exception!(
    agent_tools,
    HostError,
    Error,
    "A call failed in the host, not in the tool: a tool's task panicked or was lost."
);

/// Runs the `agent-tools` command with `argv` (the program's name first, as
/// `sys.argv`) and returns its exit status, as the Rust binary would exit with it.
/// It writes to the process's stdout and stderr itself.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| agent_tools_cli::command::main(argv))
}

/// Waits, with the GIL released, until the module's runtime runs no task, or `timeout_s`
/// has passed; returns whether the tasks settled. The interpreter's exit calls it (after
/// closing the open runs): a runtime thread that is resolving an awaitable may still hold
/// or want the GIL, and the interpreter finalizing under it aborts the process
/// (`PyGILState_Release: thread state … must be current when releasing`). Every awaitable
/// is resolved inside a task of the runtime that lives until its thread has let go of the
/// GIL ([`awaitable::awaitable`]), so no task left means no such thread left.
#[pyfunction]
fn settle(py: Python<'_>, timeout_s: f64) -> bool {
    py.detach(|| {
        let metrics = pyo3_async_runtimes::tokio::get_runtime().metrics();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout_s.max(0.0));
        loop {
            if metrics.num_alive_tasks() == 0 {
                break true;
            }
            if std::time::Instant::now() >= deadline {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    m.add("HostError", py.get_type::<HostError>())?;
    m.add("ALLOW_ONCE", agent_tools::ALLOW_ONCE)?;
    m.add("ALLOW_SESSION", agent_tools::ALLOW_SESSION)?;
    m.add("DENY", agent_tools::DENY)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(settle, m)?)?;
    m.add_class::<run::NativeRun>()?;
    m.add_class::<run::NativeHost>()?;
    m.add_class::<ask::Reply>()?;
    Ok(())
}
