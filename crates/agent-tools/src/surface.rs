//! A surface: the registry as one caller sees it, capped at a tier.
//!
//! A tool above the cap is absent from [`Surface::list`], and a call to it by
//! name is refused (defence in depth). Calls of a tool that is not
//! parallel-safe run one at a time, through the registry's per-tool lock.
//! Past the cap, when the registry has an approval gate
//! ([`crate::RegistryBuilder::with_approval`]), the gate decides allow, ask or
//! deny before anything of the tool runs; without one, every call within the
//! cap runs.
//!
//! A host that wants progress passes a [`ProgressSink`]
//! ([`Surface::call_with_progress`]); the tool's reports reach it paced
//! ([`Pacing`]), and nothing reaches it once the call has returned.
//! Cancelling a call is dropping its future: the gate's question is dropped
//! with it, the per-tool lock is released, and the tool's own future is
//! dropped (each tool stops its work on drop).

use std::sync::Arc;

use serde_json::Value;

use crate::error::Result;
use crate::progress::{Pacer, Pacing, Progress, ProgressSink, WAITING_FOR_USER};
use crate::refusal::Refusal;
use crate::registry::{Entry, Registry};
use crate::result::ToolResult;
use crate::schema::OutputCheck;
use crate::scope::{CapturedScope, TaskScope};
use crate::tier::Tier;
use crate::tool::{CallContext, CallerFuture, ToolCaller, ToolSpec};

/// The registry seen through a tier cap. Cheap to clone; clones share the
/// registry, its resources and its locks.
#[derive(Debug, Clone)]
pub struct Surface {
    registry: Arc<Registry>,
    cap: Tier,
    pacing: Pacing,
    scope: Option<Arc<dyn TaskScope>>,
}

/// The result, once its structured value is checked against the tool's
/// output schema ([`check_output`]). Debug builds (the test suite) stop at a
/// value that does not validate, so no test passes over one.
fn checked_output(entry: &Entry, result: ToolResult) -> ToolResult {
    let (result, problem) = check_output(entry.spec.name, entry.output.as_ref(), result);
    debug_assert!(problem.is_none(), "{}: structured value vs output schema: {problem:?}", entry.spec.name);
    result
}

/// Checks a result's structured value against the tool's output schema: a
/// value that does not validate, or a success without one, is a defect of the
/// tool. The value is then withheld (a client that validates would refuse the
/// whole result), and the result is marked an error that keeps the tool's
/// text and says what was wrong; the problem is returned too.
fn check_output(name: &str, check: Option<&OutputCheck>, mut result: ToolResult) -> (ToolResult, Option<String>) {
    let Some(check) = check else { return (result, None) };
    let problem = match &result.structured {
        Some(value) => check.check(value).err(),
        None if result.is_error => None,
        None => Some("the result has no structured value".to_owned()),
    };
    if let Some(problem) = &problem {
        result.structured = None;
        result.is_error = true;
        result.text.push_str(&format!(
            "\n\n(internal error: {name}'s structured value does not match its declared output schema, so it was withheld: {problem}; the text above is the tool's own)"
        ));
    }
    (result, problem)
}

impl Surface {
    /// A surface of `registry` capped at `cap`.
    pub fn new(registry: Arc<Registry>, cap: Tier) -> Surface {
        Surface { registry, cap, pacing: Pacing::default(), scope: None }
    }

    /// The same surface, carrying the host's `scope` from each call into the
    /// calls its tool makes (a cell's `tool()`), so their questions reach the
    /// human the outer call's questions reach ([`TaskScope`]).
    pub fn with_task_scope(mut self, scope: Arc<dyn TaskScope>) -> Surface {
        self.scope = Some(scope);
        self
    }

    /// The same surface with other pacing of progress reports.
    pub fn with_pacing(mut self, pacing: Pacing) -> Surface {
        self.pacing = pacing;
        self
    }

    /// The cap.
    pub fn cap(&self) -> Tier {
        self.cap
    }

    /// The registry behind the surface.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The specs of the tools at or below the cap, in registration order.
    pub fn list(&self) -> Vec<&ToolSpec> {
        self.registry.specs().filter(|s| s.tier <= self.cap).collect()
    }

    /// The spec of a tool this surface may call, or why not.
    pub fn get(&self, name: &str) -> Result<&ToolSpec, Refusal> {
        self.gate(name).map(|e| &*e.spec)
    }

    /// Calls a tool; a refusal (unknown tool, above the cap, bad arguments)
    /// becomes an error result. `Err` only for host failures.
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolResult> {
        self.call_with_progress(name, args, None).await
    }

    /// [`Surface::call`], with the call's progress reported to `progress`
    /// (paced as the surface's [`Pacing`] says); `None` asks for none.
    pub async fn call_with_progress(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressSink>,
    ) -> Result<ToolResult> {
        Ok(match self.try_call_with_progress(name, args, progress).await? {
            Ok(result) => result,
            Err(refusal) => ToolResult::error(refusal.to_string()),
        })
    }

    /// Calls a tool, keeping a refusal apart from the tool's own result (the
    /// command line gives them different exit statuses).
    pub async fn try_call(&self, name: &str, args: Value) -> Result<Result<ToolResult, Refusal>> {
        self.try_call_with_progress(name, args, None).await
    }

    /// [`Surface::try_call`], with the call's progress reported to `progress`.
    pub async fn try_call_with_progress(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressSink>,
    ) -> Result<Result<ToolResult, Refusal>> {
        match progress {
            None => self.run_call(name, args, None).await,
            Some(host) => {
                let pacer = Pacer::new();
                let sink = pacer.tool_sink();
                pacer.run(self.run_call(name, args, Some(sink)), &host, self.pacing).await
            }
        }
    }

    async fn run_call(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressSink>,
    ) -> Result<Result<ToolResult, Refusal>> {
        let entry = match self.gate(name) {
            Ok(entry) => entry,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let gate = self.registry.gate();
        let checked = gate.map(|_| (args.clone(), entry.tool.preview_json(&args).unwrap_or_default()));
        let mut cx = CallContext::new(self.cap);
        let scope = self.scope.as_ref().and_then(|scope| scope.capture());
        cx.caller = Some(Arc::new(NestedCaller { surface: self.clone(), scope }));
        cx.progress = progress;
        // The future is not polled until the gate has said yes: nothing of the tool runs before.
        let future = match entry.tool.call_json(args, &cx) {
            Ok(future) => future,
            Err(message) => return Ok(Err(Refusal::BadArguments { tool: entry.spec.name, message })),
        };
        if let (Some(gate), Some((args, preview))) = (gate, checked) {
            cx.progress(Progress::message(format!("{WAITING_FOR_USER} to the permission card")));
            if let Err(refusal) = gate.check(&entry.spec, &args, &preview).await {
                return Ok(Err(refusal));
            }
        }
        let _guard = match &entry.lock {
            Some(lock) => Some(match lock.try_lock() {
                Ok(guard) => guard,
                Err(_) => {
                    cx.progress(Progress::message(format!(
                        "waiting for an earlier {} call to finish",
                        entry.spec.name
                    )));
                    lock.lock().await
                }
            }),
            None => None,
        };
        cx.progress(Progress::message("running"));
        let result = future.await?;
        Ok(Ok(checked_output(entry, result)))
    }

    fn gate(&self, name: &str) -> Result<&Entry, Refusal> {
        match self.registry.entry(name) {
            Some(entry) if entry.spec.tier <= self.cap => Ok(entry),
            Some(entry) => Err(Refusal::AboveCap { name: entry.spec.name, tier: entry.spec.tier, cap: self.cap }),
            None => Err(Refusal::UnknownTool {
                name: name.to_string(),
                available: self
                    .registry
                    .entries()
                    .iter()
                    .filter(|e| e.spec.tier <= self.cap)
                    .map(|e| e.spec.name)
                    .collect(),
            }),
        }
    }
}

impl ToolCaller for Surface {
    fn call<'a>(&'a self, name: &'a str, args: Value) -> CallerFuture<'a> {
        Box::pin(self.try_call(name, args))
    }
}

/// The surface as a tool's call sees it: its calls go through the same cap
/// and gate, inside the host's scope captured when the outer call started.
struct NestedCaller {
    surface: Surface,
    scope: Option<Arc<dyn CapturedScope>>,
}

impl std::fmt::Debug for NestedCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NestedCaller").field("surface", &self.surface).field("scoped", &self.scope.is_some()).finish()
    }
}

impl ToolCaller for NestedCaller {
    fn call<'a>(&'a self, name: &'a str, args: Value) -> CallerFuture<'a> {
        let call = ToolCaller::call(&self.surface, name, args);
        match &self.scope {
            Some(scope) => scope.enter(call),
            None => call,
        }
    }
}

impl Registry {
    /// A surface of this registry capped at `cap`.
    pub fn surface(self: &Arc<Self>, cap: Tier) -> Surface {
        Surface::new(Arc::clone(self), cap)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check() -> OutputCheck {
        let schema = json!({
            "type": "object",
            "properties": { "total": { "type": "integer", "minimum": 0 } },
            "required": ["total"],
            "additionalProperties": false,
        });
        OutputCheck::new(schema.as_object().unwrap_or_else(|| unreachable!()))
    }

    #[test]
    fn a_value_that_validates_passes_unchanged() {
        let result = ToolResult::text("3 matches").with_structured(json!({ "total": 3 }));
        let (checked, problem) = check_output("t", Some(&check()), result.clone());
        assert_eq!(problem, None);
        assert_eq!(checked, result);
    }

    #[test]
    fn a_value_that_does_not_validate_is_withheld_and_the_result_is_an_error_keeping_the_text() {
        let result = ToolResult::text("3 matches").with_structured(json!({ "total": "3", "extra": 1 }));
        let (checked, problem) = check_output("t", Some(&check()), result);
        let problem = problem.unwrap_or_default();
        assert!(problem.contains("at /total") && problem.contains("\"3\" is not of type \"integer\""), "{problem}");
        assert!(checked.is_error);
        assert_eq!(checked.structured, None);
        assert!(
            checked.text.starts_with("3 matches\n\n(internal error: t's structured value does not match"),
            "{}",
            checked.text
        );
    }

    #[test]
    fn a_success_without_a_value_is_a_defect_and_an_error_without_one_is_not() {
        let (checked, problem) = check_output("t", Some(&check()), ToolResult::text("done"));
        assert_eq!(problem.as_deref(), Some("the result has no structured value"));
        assert!(checked.is_error);
        let (checked, problem) = check_output("t", Some(&check()), ToolResult::error("bad path"));
        assert_eq!(problem, None);
        assert_eq!(checked, ToolResult::error("bad path"));
    }

    #[test]
    fn a_tool_without_an_output_schema_is_not_checked() {
        let result = ToolResult::text("ok").with_structured(json!([1, 2]));
        assert_eq!(check_output("t", None, result.clone()), (result, None));
    }
}
