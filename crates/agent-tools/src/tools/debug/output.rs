//! `debug`'s structured values (MCP `structuredContent`), by op.

use std::path::PathBuf;

use dap_session::{
    Capped, FileBreakpoints, Frame, Output, RunOutcome, ScopeInfo, Started, Status, Terminated, ThreadInfo,
};
use schemars::JsonSchema;
use serde::Serialize;

/// `debug`'s structured value, by op.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum DebugOutput {
    /// `adapters`: each known adapter and whether it is usable here.
    Adapters { adapters: Vec<AdapterOutput> },
    /// `status`: the session (`null` when none) and the breakpoints.
    Status(Status),
    /// `breakpoints`: one file's, as asked and as placed.
    Breakpoints(FileBreakpoints),
    /// `launch`, `attach`: the adapter, the breakpoints sent, and how the first run ended.
    Started(Started),
    /// `continue`, the steps, `pause`: how the run ended (`state`: `stopped`, `exited`, `still_running`).
    Run(RunOutcome),
    /// `threads`.
    Threads { threads: Vec<ThreadInfo> },
    /// `stack`: the frames of a thread, capped.
    Stack(Capped<Frame>),
    /// `scopes`: a frame's scopes.
    Scopes { scopes: Vec<ScopeInfo> },
    /// `variables`: the children of a reference, capped.
    Variables(Capped<dap_session::Value>),
    /// `evaluate`: the value.
    Evaluated(dap_session::Value),
    /// `output`: what the program printed.
    Output(Output),
    /// `terminate`.
    Terminated(Terminated),
}

/// `debug`'s structured value, by op. Lines and columns are 1-indexed, as
/// the adapters report them (DAP `linesStartAt1`/`columnsStartAt1`); durations
/// are `{ secs, nanos }`; file paths are as the adapter names them (absolute).
/// The words show paths relative to the working directory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Debugged {
    pub value: DebugOutput,
    /// The working directory, which the words show paths relative to.
    #[serde(skip)]
    pub root: PathBuf,
    /// What the words say besides the value.
    #[serde(skip)]
    pub said: Said,
}

/// What `debug`'s words say besides its value.
#[derive(Debug, Clone, Default)]
pub enum Said {
    /// The value alone.
    #[default]
    Plain,
    /// `launch`: how the words begin (`launched app.py under debugpy`).
    Launched(String),
    /// `attach`: how the words begin (`attached debugpy to 127.0.0.1:5678`).
    Attached(String),
    /// `pause` on a program that was already stopped.
    AlreadyStopped,
    /// `pause` sent to a program that did not stop.
    PauseSent,
    /// `scopes`: a note on the locals (`locals_note`).
    Note(String),
}

/// One debug adapter as `adapters` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdapterOutput {
    /// `debugpy`, `lldb`, `delve`, `dart`.
    pub id: String,
    /// Root marker found and binary runs.
    pub usable: bool,
    /// The root marker found.
    pub marker: Option<String>,
    /// The program that would run.
    pub command: Option<PathBuf>,
    /// What was found, or which half is missing.
    pub detail: String,
}
