//! `eval`: persistent Python and JavaScript kernels over the `kernel` crate.
//!
//! Registered only when a run wires a kernel set ([`KernelWiring`]). A cell's
//! `tool(name, args)` calls come back through the surface the cell ran on,
//! so the same tier gate (and everything behind it) applies to them as to a
//! model's call; a refusal is raised in the cell as a `ToolError`. This
//! module converts arguments and formats results; it runs no process itself.
//!
//! While a cell runs, progress reports carry the last line it printed.
//! Dropping the call's future (cancellation) interrupts the cell: the
//! `kernel` crate runs it on a task of its own that interrupts, then kills if
//! need be, and frees the kernel; the next call's result says whether the
//! state survived.

use std::sync::Arc;

use kernel::{BoxFuture, Cell, Kernels, OutputObserver, StreamName, ToolBridge};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::progress::{Progress, ProgressSink};
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool, ToolCaller};

mod output;

pub use output::*;

/// The resource behind `eval`: the run's kernels (one per language).
#[derive(Debug, Clone)]
pub struct KernelWiring {
    /// The kernels of the run's conversation, one per language.
    pub kernels: Arc<Kernels>,
}

impl KernelWiring {
    /// The wiring of `kernels`.
    pub fn new(kernels: Arc<Kernels>) -> KernelWiring {
        KernelWiring { kernels }
    }
}

impl RegistryBuilder {
    /// Wires a run's kernels: registers `eval`.
    pub fn with_kernels(self, wiring: KernelWiring) -> RegistryBuilder {
        self.register(Eval(wiring))
    }
}

/// The kernel's language.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvalLanguage {
    #[default]
    Python,
    Javascript,
}

/// Run a cell in a persistent Python or JavaScript kernel: variables, imports and loaded data survive between calls. The last expression is echoed as in a notebook (a trailing `;` hides it in Python); display() works; a pandas DataFrame renders as a table; a matplotlib figure comes back as an image. IPython idioms work in Python: %pip (the next import sees the install), %cd, !cmd, %%bash, %%timeit. Top-level await works in both languages. Inside a cell, tool(name, args) calls this run's other tools under the same permissions (Python returns the result; JavaScript returns a promise); a refusal raises ToolError. The kernel has no stdin: input() fails. A cell that produces no output for 5 minutes is interrupted (then killed if it ignores that, losing the kernel's state).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalInput {
    /// The cell.
    pub code: String,
    /// Required: 5–10 words describing the cell, for the transcript label.
    pub description: String,
    /// python (default) or javascript.
    #[serde(default)]
    pub language: EvalLanguage,
    /// Discard the interpreter and start clean before running the cell.
    #[serde(default)]
    pub reset: bool,
}

struct Eval(KernelWiring);

/// Lines of a cell shown on a permission card.
const CODE_LINES: usize = 6;

impl Tool for Eval {
    type Input = EvalInput;
    type Output = EvalOutput;
    const NAME: &'static str = "eval";
    const TIER: Tier = Tier::Exec;
    const PARALLEL_SAFE: bool = false;

    fn preview(&self, input: &EvalInput) -> CallPreview {
        let language = match input.language {
            EvalLanguage::Python => "python",
            EvalLanguage::Javascript => "javascript",
        };
        let reset = if input.reset { ", in a fresh kernel" } else { "" };
        let lines: Vec<&str> = input.code.lines().collect();
        let mut code = lines.iter().take(CODE_LINES).copied().collect::<Vec<_>>().join("\n");
        if lines.len() > CODE_LINES {
            code.push_str(&format!("\n… ({} more lines)", lines.len() - CODE_LINES));
        }
        CallPreview {
            summary: Some(format!("run {language} code{reset}: {}\n{code}", input.description.trim())),
            paths: Vec::new(),
        }
    }

    async fn call(&self, input: EvalInput, cx: &CallContext) -> Result<Reply<EvalOutput>> {
        if input.description.trim().is_empty() {
            return Ok(Err("description is required: 5–10 words saying what the cell does".to_owned()));
        }
        let language = match input.language {
            EvalLanguage::Python => kernel::Language::Python,
            EvalLanguage::Javascript => kernel::Language::JavaScript,
        };
        let bridge: Option<Arc<dyn ToolBridge>> =
            cx.caller.clone().map(|caller| Arc::new(SurfaceBridge { caller }) as Arc<dyn ToolBridge>);
        let observer = cx.progress.clone().map(last_line_reporter);
        let cell = Cell { language, code: &input.code, reset: input.reset, bridge, observer };
        Ok(match self.0.kernels.execute(cell).await {
            Ok(result) => Ok(EvalOutput::new(result)),
            Err(error) => Err(format!("could not run the {language} kernel: {error}")),
        })
    }
}

/// Longest last line a progress report quotes, in characters.
const LAST_LINE_CHARS: usize = 160;

/// An observer reporting "running; last output: …" with the last non-empty
/// line the cell printed (on either stream). It holds at most the start of the
/// unfinished last line, [`LAST_LINE_CHARS`] and one more, so a line without end
/// costs that much and each piece is read once.
fn last_line_reporter(sink: ProgressSink) -> OutputObserver {
    let partial = std::sync::Mutex::new(String::new());
    std::sync::Arc::new(move |_: StreamName, text: &str| {
        let mut partial = partial.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // An unfinished line already as long as a report quotes takes nothing more before its newline.
        let text =
            if partial.chars().count() > LAST_LINE_CHARS { text.find('\n').map_or("", |at| &text[at..]) } else { text };
        partial.push_str(text);
        let line = partial.lines().rev().map(str::trim).find(|line| !line.is_empty()).map(str::to_owned);
        // Keep only the start of the unfinished last line for the next piece.
        let cut = partial.rfind('\n').map_or(0, |at| at + 1);
        partial.drain(..cut);
        if let Some((at, _)) = partial.char_indices().nth(LAST_LINE_CHARS + 1) {
            partial.truncate(at);
        }
        if let Some(line) = line {
            let mut shown: String = line.chars().take(LAST_LINE_CHARS).collect();
            if shown.len() < line.len() {
                shown.push('…');
            }
            sink.report(Progress::message(format!("running; last output: {shown}")));
        }
    })
}

/// Routes a cell's `tool()` calls through the surface that ran the cell, by its caller handle.
struct SurfaceBridge {
    caller: Arc<dyn ToolCaller>,
}

impl ToolBridge for SurfaceBridge {
    fn call(&self, name: String, args: Value) -> BoxFuture<std::result::Result<Value, String>> {
        let caller = self.caller.clone();
        Box::pin(async move {
            if name == Eval::NAME {
                return Err("eval cannot be called from inside a cell".to_owned());
            }
            match caller.call(&name, args).await {
                Ok(Ok(result)) if result.is_error => Err(result.text),
                Ok(Ok(result)) => Ok(result.structured.unwrap_or(Value::String(result.text))),
                Ok(Err(refusal)) => Err(refusal.to_string()),
                Err(error) => Err(error.to_string()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reports quote the last line's start, and a line fed without end is held at its
    /// start: a report after a gigabyte's worth of pieces is the same as after the first.
    #[test]
    fn the_last_line_is_quoted_from_its_start_and_held_bounded() {
        let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = {
            let reports = std::sync::Arc::clone(&reports);
            ProgressSink::new(move |p| {
                reports.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(p.message)
            })
        };
        let observe = last_line_reporter(sink);
        observe(StreamName::Stdout, "first\nsecond ");
        observe(StreamName::Stdout, "half\n");
        let piece = "x".repeat(1 << 18);
        for _ in 0..4096 {
            observe(StreamName::Stdout, &piece);
        }
        observe(StreamName::Stdout, "\nlast");
        let reports = reports.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let long = format!("running; last output: {}…", "x".repeat(LAST_LINE_CHARS));
        assert_eq!(reports[..2], ["running; last output: second", "running; last output: second half"]);
        assert!(reports[2..4098].iter().all(|r| *r == long), "{:?}", &reports[2..4]);
        assert_eq!(reports[4098], "running; last output: last");
    }
}
