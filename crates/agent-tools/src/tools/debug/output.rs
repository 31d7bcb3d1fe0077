//! `debug`'s structured values (MCP `structuredContent`), by op.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

/// `debug`'s structured value, by op.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum DebugOutput {
    /// `adapters`: each known adapter and whether it is usable here.
    Adapters {
        /// Every known adapter, and whether it is usable at the working directory.
        adapters: Vec<AdapterOutput>,
    },
    /// `status`: the session (`null` when none) and the breakpoints.
    Status(StatusOutput),
    /// `breakpoints`: one file's, as asked and as placed.
    Breakpoints(BreakpointsOutput),
    /// `launch`, `attach`: the adapter, the breakpoints sent, and how the first run ended.
    Started(StartedOutput),
    /// `continue`, the steps, `pause`: how the run ended (`state`: `stopped`, `exited`, `still_running`).
    Run(RunOutput),
    /// `threads`.
    Threads {
        /// The program's threads.
        threads: Vec<ThreadOutput>,
    },
    /// `stack`: the frames of a thread, capped.
    Stack(CappedOutput<FrameOutput>),
    /// `scopes`: a frame's scopes.
    Scopes {
        /// The frame's scopes, innermost first, as the adapter lists them.
        scopes: Vec<ScopeOutput>,
    },
    /// `variables`: the children of a reference, capped.
    Variables(CappedOutput<ValueOutput>),
    /// `evaluate`: the value.
    Evaluated(ValueOutput),
    /// `output`: what the program printed.
    Output(ProgramOutput),
    /// `terminate`.
    Terminated(TerminatedOutput),
}

/// `debug`'s structured value, by op. Lines and columns are 1-indexed, as
/// the adapters report them (DAP `linesStartAt1`/`columnsStartAt1`); durations
/// are in ms; file paths are as the adapter names them (absolute).
/// The words show paths relative to the working directory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Debugged {
    /// The op's value.
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

/// A place in the source.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocationOutput {
    /// The source file, as the adapter names it (absolute for the known adapters).
    pub file: Option<PathBuf>,
    /// 1-based; 0 when the adapter has no source for the frame.
    pub line: u64,
    /// 1-based; 0 when unknown.
    pub column: u64,
    /// The frame's name, typically the function.
    pub function: String,
}

/// Why and where the program stopped.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StopOutput {
    /// The stop number in this session (1 for the first stop); references are valid for one stop.
    pub number: u64,
    /// `breakpoint`, `step`, `pause`, `exception`, `entry`, … as the adapter says.
    pub reason: String,
    /// The adapter's description of the stop, when it gave one.
    pub description: Option<String>,
    /// The exception text and the like.
    pub text: Option<String>,
    /// The thread that stopped, when the adapter named it.
    pub thread_id: Option<u64>,
    /// The top frame of the stopped thread, when the adapter gave one.
    pub location: Option<LocationOutput>,
}

/// How a run (launch, continue, a step, pause) ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RunOutput {
    /// The program stopped.
    Stopped(StopOutput),
    /// The program exited (or the adapter ended the session).
    Exited {
        /// The exit code, when the adapter reported one.
        exit_code: Option<i64>,
        /// How it ended.
        reason: String,
    },
    /// Neither a stop nor an exit came within the wait; the program is still running.
    StillRunning {
        /// How long the call waited, in ms.
        waited_ms: u64,
    },
}

/// One breakpoint as the adapter placed it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PlacedOutput {
    /// The line asked for (1-based).
    pub requested_line: u64,
    /// The line the adapter placed it on, when it says (1-based).
    pub line: Option<u64>,
    /// Whether the adapter could place it.
    pub verified: bool,
    /// Why not, or what the adapter said of it.
    pub message: Option<String>,
}

/// The breakpoints of one file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BreakpointsOutput {
    /// The file, absolute.
    pub file: PathBuf,
    /// 1-based lines as asked.
    pub lines: Vec<u64>,
    /// What the adapter did with them; `null` while no session is running (they are sent at launch).
    pub placed: Option<Vec<PlacedOutput>>,
}

/// A thread.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadOutput {
    /// The thread's id, for `stack` and the run ops' `thread_id`.
    pub id: u64,
    /// Its name, as the adapter gives it.
    pub name: String,
}

/// A stack frame.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FrameOutput {
    /// For `scopes` and `evaluate`; valid until the program resumes.
    pub id: u64,
    /// Where the frame is.
    pub location: LocationOutput,
}

/// A capped list and how many there were in all.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CappedOutput<T> {
    /// The ones shown.
    pub items: Vec<T>,
    /// How many the adapter had; larger than `items`' length when capped.
    pub total: usize,
}

/// A scope of a frame.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScopeOutput {
    /// `Locals`, `Globals`, … as the adapter names it.
    pub name: String,
    /// For `variables`; valid until the program resumes.
    pub reference: u64,
    /// Whether the adapter says reading it is costly.
    pub expensive: bool,
}

/// A variable, or the result of an evaluation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ValueOutput {
    /// The variable's name, or the expression evaluated.
    pub name: String,
    /// Cut at the value limit (400 characters by default).
    pub value: String,
    /// The value's length in characters when it was cut.
    pub cut_from: Option<usize>,
    /// Its type, when the adapter gives one.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// Non-zero when it has children (for `variables`); valid until the program resumes.
    pub reference: u64,
}

/// The captured output of the debuggee.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProgramOutput {
    /// The last part of what was printed, every stream together, in arrival order.
    pub text: String,
    /// Characters dropped from the front to keep within the limit.
    pub dropped_chars: usize,
    /// The same text by stream, in arrival order (consecutive pieces of one stream are one chunk).
    pub chunks: Vec<ChunkOutput>,
}

/// A run of output from one stream.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChunkOutput {
    /// The DAP `output` category: `stdout`, `stderr`, or the adapter's own `console` and `important` messages.
    pub stream: String,
    /// What was printed.
    pub text: String,
}

/// How a session was started.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StartOutput {
    /// A launched program; `module` is set for a Python module run as `python -m` does (`program` is then the root).
    Launch {
        /// The program, absolute.
        program: PathBuf,
        /// The Python module run with `-m`.
        module: Option<String>,
        /// Its arguments.
        args: Vec<String>,
    },
    /// An attach; `pid` is set for an attach to a local process by id (`host` and `port` are then unused).
    Attach {
        /// The debug server's host.
        host: String,
        /// The debug server's port.
        port: u16,
        /// The local process attached to.
        pid: Option<u32>,
    },
}

/// Where a session stands.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PhaseOutput {
    /// Started; configuring or running towards the first stop.
    Starting,
    /// Running.
    Running,
    /// Stopped.
    Stopped(StopOutput),
    /// The session is over.
    Ended {
        /// How it ended (program exited, terminated, TTL, adapter crash).
        reason: String,
        /// The program's exit code, when the adapter reported one.
        exit_code: Option<i64>,
    },
}

/// A session's summary.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionOutput {
    /// The adapter's name: debugpy, lldb, delve, dart, or one the configuration adds.
    pub adapter: String,
    /// How it was started.
    pub start: StartOutput,
    /// Where it stands.
    pub phase: PhaseOutput,
    /// Time since the session started, in ms.
    pub age_ms: u64,
    /// Time left before the TTL ends it, in ms (0 once ended).
    pub ttl_left_ms: u64,
    /// The debuggee's process id, when the adapter reported it.
    pub debuggee_pid: Option<u32>,
    /// The adapter's process id, when one was started for the session.
    pub adapter_pid: Option<u32>,
}

/// A conversation's debugging state: its session (running or ended) and its breakpoints.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusOutput {
    /// The session, `null` when there is none.
    pub session: Option<SessionOutput>,
    /// The breakpoints set, by file.
    pub breakpoints: Vec<BreakpointsOutput>,
}

/// A started session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StartedOutput {
    /// The adapter's name.
    pub adapter: String,
    /// The breakpoints sent at start-up, as placed.
    pub breakpoints: Vec<BreakpointsOutput>,
    /// How the first run ended.
    pub outcome: RunOutput,
}

/// What `terminate` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TerminatedOutput {
    /// The adapter's name.
    pub adapter: String,
    /// True when the debuggee was ended too (launch); false when it was left running (attach).
    pub debuggee_ended: bool,
    /// The phase the session was in before; `ended` (with its reason) when it had already
    /// ended, in which case nothing more was ended.
    pub was: PhaseOutput,
}
