//! The callback a cell's `tool(name, args)` reaches.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future, as returned by [`ToolBridge::call`].
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Answers `tool(name, args)` calls made from inside a cell.
///
/// `Ok(value)` is returned to the cell as the call's result; `Err(message)`
/// is raised in the cell as a `ToolError` with that message (a refusal by the
/// host's gate is such an error). While a call is outstanding the cell's
/// inactivity timeout is suspended.
pub trait ToolBridge: Send + Sync {
    /// Calls the tool `name` with the JSON `args` the cell passed; the result
    /// or error message goes back to the cell.
    fn call(&self, name: String, args: serde_json::Value) -> BoxFuture<Result<serde_json::Value, String>>;
}

impl<F> ToolBridge for F
where
    F: Fn(String, serde_json::Value) -> BoxFuture<Result<serde_json::Value, String>> + Send + Sync,
{
    fn call(&self, name: String, args: serde_json::Value) -> BoxFuture<Result<serde_json::Value, String>> {
        self(name, args)
    }
}
