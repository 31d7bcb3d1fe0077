//! Rust futures as Python awaitables, resolved from a task the runtime counts.
//!
//! `pyo3_async_runtimes::tokio::future_into_py` resolves its awaitable from a
//! blocking-pool thread that no task waits for, so the runtime's task count
//! can be zero while that thread still holds, or still wants, the GIL; the
//! interpreter finalizing then aborts the process (`PyGILState_Release: thread
//! state … must be current when releasing`). Here the task that runs the
//! future also awaits the thread that resolves it, so
//! `RuntimeMetrics::num_alive_tasks` counts every awaitable until its last use
//! of the GIL has ended, and the interpreter's exit ([`crate::settle`]) waits
//! for exactly what is outstanding.
//!
//! As with pyo3-async-runtimes: the future runs inside the caller's task
//! locals (event loop and `contextvars`), cancelling the awaitable drops the
//! future, a result for an awaitable cancelled meanwhile is dropped, and a
//! future that panics raises `HostError`.

use std::future::Future;
use std::sync::{Mutex, PoisonError};

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;
use tokio::sync::oneshot;

/// An awaitable on the event loop of `locals` that resolves with `future`'s output.
///
/// # Errors
/// When the loop cannot make a future or take a done callback.
pub fn awaitable<F, T>(py: Python<'_>, locals: TaskLocals, future: F) -> PyResult<Bound<'_, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    let event_loop = locals.event_loop(py);
    let target = event_loop.call_method0(pyo3::intern!(py, "create_future"))?;
    let (cancel, cancelled) = oneshot::channel();
    target.call_method1(pyo3::intern!(py, "add_done_callback"), (OnDone { cancel: Mutex::new(Some(cancel)) },))?;
    let resolved = target.clone().unbind();
    let event_loop = event_loop.unbind();
    let runtime = pyo3_async_runtimes::tokio::get_runtime();
    runtime.spawn(async move {
        // A task of its own, so that a panic in the future still resolves the awaitable.
        let mut task = tokio::spawn(pyo3_async_runtimes::tokio::scope(locals, future));
        let output = tokio::select! {
            joined = &mut task => joined.unwrap_or_else(|error| {
                let how = if error.is_panic() { "panicked" } else { "was lost" };
                Err(crate::HostError::new_err(format!("the call's task {how}")))
            }),
            // The awaitable was cancelled: the future is dropped, and nothing is left to resolve.
            _ = cancelled => {
                task.abort();
                return;
            }
        };
        // The GIL is taken on a blocking thread, not on a runtime worker, and this task
        // waits for it: the task count covers the resolution until the GIL is released.
        let resolve = move || {
            Python::attach(|py| {
                let (method, value) = match output.and_then(|value| value.into_py_any(py)) {
                    Ok(value) => ("set_result", value),
                    Err(error) => ("set_exception", error.into_value(py).into_any()),
                };
                // A loop closed meanwhile has nobody left to resolve for.
                let _ = event_loop
                    .bind(py)
                    .call_method1(pyo3::intern!(py, "call_soon_threadsafe"), (Complete, resolved, method, value));
            });
        };
        let _ = tokio::task::spawn_blocking(resolve).await;
    });
    Ok(target)
}

/// The awaitable's done callback: a cancelled awaitable cancels its future.
#[pyclass(frozen)]
struct OnDone {
    cancel: Mutex<Option<oneshot::Sender<()>>>,
}

#[pymethods]
impl OnDone {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0(pyo3::intern!(future.py(), "cancelled"))?.is_truthy()?
            && let Some(cancel) = self.cancel.lock().unwrap_or_else(PoisonError::into_inner).take()
        {
            let _ = cancel.send(());
        }
        Ok(())
    }
}

/// Sets the awaitable's result or exception on its loop, unless it is done already
/// (cancelled between the future's end and this call).
#[pyclass(frozen)]
struct Complete;

#[pymethods]
impl Complete {
    fn __call__(&self, future: &Bound<'_, PyAny>, method: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0(pyo3::intern!(future.py(), "done"))?.is_truthy()? {
            return Ok(());
        }
        future.call_method1(method, (value,))?;
        Ok(())
    }
}
