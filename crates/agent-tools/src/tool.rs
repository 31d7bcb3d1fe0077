//! The typed tool trait, its type-erased form, and the spec a model sees.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::progress::{Progress, ProgressSink};
use crate::result::{Image, ToolResult};
use crate::schema::{input_schema, output_schema};
use crate::tier::Tier;

/// What a tool learns about the call besides its input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallContext {
    /// The cap of the surface the call came through.
    pub cap: Tier,
    /// A handle to call other tools through the same surface (its cap and its gate),
    /// for a tool that calls tools (the kernel's in-cell `tool()` bridge); `None`
    /// outside a surface.
    pub caller: Option<std::sync::Arc<dyn ToolCaller>>,
    /// Where [`CallContext::progress`] goes; `None` when the caller asked for
    /// no progress.
    pub progress: Option<ProgressSink>,
}

impl CallContext {
    /// A context for a call through a surface capped at `cap`.
    pub fn new(cap: Tier) -> CallContext {
        CallContext { cap, caller: None, progress: None }
    }

    /// Reports how the call is going (a message a person can read, and
    /// numbers when the tool knows them). A no-op when the caller gave no
    /// sink; the surface paces what reaches the host, so a tool may report
    /// as often as it likes.
    pub fn progress(&self, progress: Progress) {
        if let Some(sink) = &self.progress {
            sink.report(progress);
        }
    }

    /// Whether anyone listens to [`CallContext::progress`]; a tool can skip
    /// gathering what only a report would show.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }
}

/// What a tool may do with the surface its call came through: call another of its
/// tools, refused above its cap and asked through its gate as any call is. Nothing
/// else of the surface (its listing, its pacing) is reachable from a tool. The
/// surface is the one implementation.
pub trait ToolCaller: Send + Sync + std::fmt::Debug {
    /// Calls tool `name` with `args`: the outer `Err` is a host failure, the inner one
    /// the [`crate::Refusal`] that kept the call from its tool.
    fn call<'a>(&'a self, name: &'a str, args: Value) -> CallerFuture<'a>;
}

/// What [`ToolCaller::call`] returns.
pub type CallerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<std::result::Result<ToolResult, crate::refusal::Refusal>>> + Send + 'a>>;

/// A tool, typed: its input, name, tier and handler in one place.
///
/// The description is the doc comment of `Input` (schemars puts it in the
/// schema's `description`, which the registry takes out); write it there once.
/// `Input` should be `#[serde(deny_unknown_fields)]` so a misspelt argument is
/// an error the model reads rather than an argument silently ignored.
pub trait Tool: Send + Sync + 'static {
    /// The arguments, decoded from the model's JSON.
    type Input: DeserializeOwned + JsonSchema + Send;
    /// The value a call answers: serialized as the structured value programs
    /// read (MCP's `structuredContent`, its schema the tool's `outputSchema`),
    /// and worded ([`Words`]) as the text the model reads, so the two cannot
    /// disagree. [`Text`] for a tool that answers text alone.
    type Output: Words + Serialize + JsonSchema + Send;
    /// The tool's name, as the model calls it.
    const NAME: &'static str;
    /// The tool's tier.
    const TIER: Tier;
    /// Whether two calls may run at once; when false the surface runs them one at a time.
    const PARALLEL_SAFE: bool = true;
    /// Whether a call may change or destroy something outside the run's own
    /// state (MCP's `destructiveHint`). By default every tool above read tier
    /// is; a tool that only stages a change (`ast_edit`) says false.
    const DESTRUCTIVE: bool = !matches!(Self::TIER, Tier::Read);

    /// What a call with this input will do, for a permission card: a short
    /// summary and the paths it touches (relative to the working directory).
    /// Must not run anything of the tool. By default: no summary (the card
    /// shows the arguments) and no paths.
    fn preview(&self, _input: &Self::Input) -> CallPreview {
        CallPreview::default()
    }

    /// Runs the tool. An error the model should read is `Ok(Err(message))`
    /// (a value may be an error too: [`Words::is_error`]); the outer `Err` is
    /// for host failures only.
    ///
    /// Cancellation is dropping the future: it must then stop what it
    /// started and free what it holds (a lock, a process, a question), and
    /// never leave a change half-applied (run an all-or-nothing write on a
    /// task of its own, which finishes even when the call is dropped).
    fn call(&self, input: Self::Input, cx: &CallContext) -> impl Future<Output = Result<Reply<Self::Output>>> + Send;
}

/// What a call answers: its value, or a message the model reads as an error,
/// with no value (a wrong argument, nothing usable to run).
pub type Reply<O> = std::result::Result<O, String>;

/// How a tool's value reads: the text a model is shown of it, made from the
/// value alone, as ast-grep prints every result through one printer.
pub trait Words {
    /// Whether the value is given to programs as well (MCP `structuredContent`,
    /// with the tool's `outputSchema`); false for [`Text`].
    const STRUCTURED: bool = true;

    /// The text the model reads.
    fn words(&self) -> String;

    /// Whether the value reports a failure the model should read as one (a
    /// question that timed out, a debug adapter that died): the result is
    /// marked an error and still carries the value.
    fn is_error(&self) -> bool {
        false
    }

    /// Images that travel beside the text (a kernel's figures), taken out of
    /// the value before it is serialized.
    fn take_images(&mut self) -> Vec<Image> {
        Vec::new()
    }
}

/// The output of a tool that answers text alone: no structured value and no
/// `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Text(pub String);

impl Text {
    /// The text `text`.
    pub fn new(text: impl Into<String>) -> Text {
        Text(text.into())
    }
}

impl Words for Text {
    const STRUCTURED: bool = false;

    fn words(&self) -> String {
        self.0.clone()
    }
}

/// The result a reply makes: the value's words, images, error flag and
/// serialized value, or the message as an error.
pub fn to_result<O: Words + Serialize>(reply: Reply<O>) -> ToolResult {
    match reply {
        Err(message) => ToolResult::error(message),
        Ok(mut output) => {
            let images = output.take_images();
            let structured = if O::STRUCTURED { serde_json::to_value(&output).ok() } else { None };
            ToolResult { text: output.words(), images, structured, is_error: output.is_error() }
        }
    }
}

/// What a call will do, as a permission card shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallPreview {
    /// A few lines saying what will happen; `None` shows the arguments instead.
    pub summary: Option<String>,
    /// Paths the call touches, relative to the working directory (`.` for the
    /// whole tree); empty when the tool names none. Path rules and per-path
    /// session grants look at these.
    pub paths: Vec<PathBuf>,
}

/// A boxed tool future.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolResult>> + Send + 'a>>;

/// A tool with its input type erased, as the registry holds it. Every [`Tool`] is one.
pub trait DynTool: Send + Sync + 'static {
    /// Decodes `args` and starts the call; a decoding failure is returned as a
    /// message naming the bad or missing field.
    fn call_json<'a>(&'a self, args: Value, cx: &'a CallContext) -> std::result::Result<ToolFuture<'a>, String>;

    /// The preview of a call with these arguments; `None` when they do not decode.
    fn preview_json(&self, args: &Value) -> Option<CallPreview>;
}

fn decode<I: DeserializeOwned>(args: Value) -> std::result::Result<I, String> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => args,
        _ => return Err("arguments must be a JSON object".to_string()),
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        // serde names the field itself for unknown and missing fields; say it once.
        if path == "." || message.contains(&format!("`{path}`")) { message } else { format!("`{path}`: {message}") }
    })
}

impl<T: Tool> DynTool for T {
    fn call_json<'a>(&'a self, args: Value, cx: &'a CallContext) -> std::result::Result<ToolFuture<'a>, String> {
        let input: T::Input = decode(args)?;
        Ok(Box::pin(async move { Ok(to_result(self.call(input, cx).await?)) }))
    }

    fn preview_json(&self, args: &Value) -> Option<CallPreview> {
        let input: T::Input = decode(args.clone()).ok()?;
        Some(self.preview(&input))
    }
}

/// What a model is shown of one tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: &'static str,
    /// From the `Input` type's doc comment.
    pub description: String,
    /// Where the tool sits in `read < write < exec`.
    pub tier: Tier,
    /// Whether two calls may run at once.
    pub parallel_safe: bool,
    /// Whether a call may change or destroy something (MCP's `destructiveHint`).
    #[serde(skip)]
    pub destructive: bool,
    /// Draft-07 JSON Schema of the arguments, subschemas inlined.
    pub input_schema: Map<String, Value>,
    /// Draft-07 JSON Schema of the structured value (MCP's `outputSchema`),
    /// subschemas inlined; `None` when the tool returns text alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
}

impl ToolSpec {
    /// The spec of a typed tool.
    pub fn of<T: Tool>() -> ToolSpec {
        let (description, input_schema) = input_schema::<T::Input>();
        ToolSpec {
            name: T::NAME,
            description,
            tier: T::TIER,
            parallel_safe: T::PARALLEL_SAFE,
            destructive: T::DESTRUCTIVE,
            input_schema,
            output_schema: T::Output::STRUCTURED.then(output_schema::<T::Output>),
        }
    }
}
