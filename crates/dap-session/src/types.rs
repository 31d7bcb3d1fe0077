//! What the operations return: plain data, positions as the adapter reports
//! them with `linesStartAt1`/`columnsStartAt1` (1-based lines and columns).

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::adapter::AdapterId;

/// A place in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stop {
    /// The stop number in this session (1 for the first stop); references are valid for one stop.
    pub number: u64,
    /// `breakpoint`, `step`, `pause`, `exception`, `entry`, … as the adapter says.
    pub reason: String,
    /// The adapter's own words for the stop (lldb's `breakpoint 1.1`), when it gives them.
    pub description: Option<String>,
    /// The exception text and the like.
    pub text: Option<String>,
    /// The thread that stopped, when the adapter names one.
    pub thread_id: Option<u64>,
    /// The top frame of the stopped thread, when the adapter gave one.
    pub location: Option<Location>,
}

/// How a run (launch, continue, a step, pause) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RunOutcome {
    /// The program stopped.
    Stopped(Stop),
    /// The program exited (or the adapter ended the session); `exit_code` when the adapter reported one.
    Exited {
        /// The program's exit code, when the adapter reported one.
        exit_code: Option<i64>,
        /// How the session ended, such as `the program finished` or `terminated by request`.
        reason: String,
    },
    /// Neither a stop nor an exit came within the wait; the program is still running.
    StillRunning {
        /// How long it waited: [`Limits::run_timeout`](crate::Limits::run_timeout), or
        /// less after an attach.
        waited: Duration,
    },
}

/// One breakpoint as the adapter placed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedBreakpoint {
    /// The line asked for (1-based).
    pub requested_line: u64,
    /// The line the adapter placed it on, when it says (1-based).
    pub line: Option<u64>,
    /// Whether the adapter could place it; false also when it sent no breakpoint back.
    pub verified: bool,
    /// The adapter's explanation, typically why it is not verified.
    pub message: Option<String>,
}

/// The breakpoints of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileBreakpoints {
    /// The source file, absolute, as given.
    pub file: PathBuf,
    /// 1-based lines as asked.
    pub lines: Vec<u64>,
    /// What the adapter did with them; `None` while no session is running (they are sent at launch).
    pub placed: Option<Vec<PlacedBreakpoint>>,
}

/// A thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadInfo {
    /// The adapter's id for the thread, for `stack` and the resume requests.
    pub id: u64,
    /// The thread's name as the adapter gives it; empty when it gives none.
    pub name: String,
}

/// A stack frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// Valid until the program resumes.
    pub id: u64,
    /// Where the frame is.
    pub location: Location,
}

/// A capped list and how many there were in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capped<T> {
    /// The first items, at most the cap.
    pub items: Vec<T>,
    /// How many the adapter had; larger than `items.len()` when capped.
    pub total: usize,
}

/// A scope of a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeInfo {
    /// The scope's name as the adapter gives it (`Locals`, `Globals`, `Registers`).
    pub name: String,
    /// For `variables`; valid until the program resumes.
    pub reference: u64,
    /// The adapter's hint that listing the scope's variables is slow.
    pub expensive: bool,
}

/// A variable, or the result of an evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Value {
    /// The variable's name, or the expression evaluated.
    pub name: String,
    /// Cut at the value limit (400 characters by default).
    pub value: String,
    /// The value's length in characters when it was cut.
    pub cut_from: Option<usize>,
    /// The value's type as the adapter names it, when it does.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// Non-zero when it has children (for `variables`); valid until the program resumes.
    pub reference: u64,
}

/// The captured output of the debuggee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Output {
    /// The last part of what was printed, every stream together, in arrival order.
    pub text: String,
    /// Characters dropped from the front to keep within the limit.
    pub dropped_chars: usize,
    /// The same text by stream, in arrival order (consecutive pieces of one stream are one chunk).
    pub chunks: Vec<OutputChunk>,
}

/// A run of output from one stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputChunk {
    /// The DAP `output` category: `stdout`, `stderr`, or the adapter's own `console` and `important` messages.
    pub stream: String,
    /// What it printed, as printed.
    pub text: String,
}

/// How a session was started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// `module` is set for a Python module run as `python -m` does (`program` is then the root).
    Launch {
        /// The program's absolute path, as [`LaunchSpec::program`](crate::LaunchSpec::program).
        program: PathBuf,
        /// The Python module run instead of `program`.
        module: Option<String>,
        /// The program's arguments.
        args: Vec<String>,
    },
    /// `pid` is set for an attach to a local process by id (`host` and `port` are then unused).
    Attach {
        /// The debug server's host.
        host: String,
        /// The debug server's port.
        port: u16,
        /// The local process attached to by id.
        pid: Option<u32>,
    },
}

/// Where a session stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Phase {
    /// Started; configuring or running towards the first stop.
    Starting,
    /// Configured, and the program runs.
    Running,
    /// The program is stopped; the stop's ids are valid until it resumes.
    Stopped(Stop),
    /// The session is over; `reason` says how (program exited, terminated, TTL, adapter crash).
    Ended {
        /// How it ended, such as `the program finished`, `terminated by request`, or one
        /// beginning with [`ADAPTER_EXITED`](crate::ADAPTER_EXITED).
        reason: String,
        /// The program's exit code, when the adapter reported one.
        exit_code: Option<i64>,
    },
}

/// A session's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    /// The adapter the session runs on.
    pub adapter: AdapterId,
    /// How it was started.
    pub start: Start,
    /// Where it stands now.
    pub phase: Phase,
    /// Time since the session started.
    pub age: Duration,
    /// Time left before the TTL ends it (zero once ended).
    pub ttl_left: Duration,
    /// The debuggee's process id, when the adapter reported it.
    pub debuggee_pid: Option<u32>,
    /// The adapter's process id, when this crate started one.
    pub adapter_pid: Option<u32>,
}

/// A conversation's debugging state: its session (running or ended) and its breakpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The latest session, running or ended; `None` before the first start.
    pub session: Option<SessionInfo>,
    /// Every file's breakpoints as set, in path order, with no `placed`.
    pub breakpoints: Vec<FileBreakpoints>,
}

/// A started session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Started {
    /// The adapter it started on, as asked or inferred.
    pub adapter: AdapterId,
    /// The breakpoints sent at start-up, as placed.
    pub breakpoints: Vec<FileBreakpoints>,
    /// The first run: a launch's first stop or end within the run timeout; after an
    /// attach, a stop that came within 2 s, else still running.
    pub outcome: RunOutcome,
}

/// What `terminate` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Terminated {
    /// The session's adapter.
    pub adapter: AdapterId,
    /// True when the debuggee was ended too (launch); false when it was left running (attach).
    pub debuggee_ended: bool,
    /// The phase the session was in before; `ended` (with its reason) when it had already
    /// ended, in which case nothing more was ended.
    pub was: Phase,
}
