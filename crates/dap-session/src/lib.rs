//! Debug Adapter Protocol sessions for one agent run.
//!
//! A [`DebugSupervisor`] holds one session per conversation, each with a hard
//! TTL (30 minutes by default), and each conversation's breakpoints, which may
//! be set before the program starts. A session talks DAP to a real debug
//! adapter — debugpy, lldb-dap, delve (over TCP), dart, or one the host
//! configures ([`AdapterSpec`]) — found by [`detect_all`]: a root marker
//! **and** an adapter binary that resolves and runs. Every operation of the `debug` tool is a method: `launch`, `attach`,
//! `resume` (continue and the steps), `pause`, `threads`, `stack`, `scopes`,
//! `variables`, `evaluate`, `output`, `terminate`.
//!
//! Lines and columns are 1-based throughout (the client sends
//! `linesStartAt1`/`columnsStartAt1`). Frame ids and variables references are
//! valid for one stop: after the program resumes, using one is
//! [`Error::Stale`]. Requests from the adapter (`runInTerminal`,
//! `startDebugging`, anything else) are refused at once with a message;
//! unknown events are ignored; neither stalls the session.
//!
//! This crate knows nothing of tool names, JSON schemas or tiers; it never
//! resolves a user's path (the caller passes absolute paths inside its root).
//! `terminate` (and the TTL) ends the adapter's whole process group and a
//! launched debuggee; an attached debuggee is left running.
#![warn(missing_docs)]

mod adapter;
mod cargo;
mod error;
mod process;
pub mod protocol;
mod session;
mod state;
mod supervisor;
mod transport;
mod types;

pub use adapter::{
    AdapterCommand, AdapterId, AdapterReport, AdapterSpec, CustomAdapter, Detection, Transport, detect, detect_all,
    find_in_path, infer_from_program, program_python,
};
pub use error::{Error, Result};
pub use process::alive;
pub use session::{Limits, Resume};
pub use state::{ADAPTER_EXITED, OutputBuffer};
/// The session state machine, for the fuzz targets (the `fuzzing` feature).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use state::{IdKind, State};
pub use supervisor::{AttachSpec, DebugConfig, DebugSupervisor, LaunchSpec};
pub use transport::{Client, Diagnostics, EventSink, PendingReply, Received, refusal};
pub use types::{
    Capped, FileBreakpoints, Frame, Location, Output, OutputChunk, Phase, PlacedBreakpoint, RunOutcome, ScopeInfo,
    SessionInfo, Start, Started, Status, Stop, Terminated, ThreadInfo, Value,
};
