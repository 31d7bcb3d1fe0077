//! `debug`'s arguments, as the model writes them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// The `debug` operation.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DebugOp {
    Adapters,
    Status,
    Breakpoints,
    Launch,
    Attach,
    Continue,
    Pause,
    StepOver,
    StepIn,
    StepOut,
    Threads,
    Stack,
    Scopes,
    Variables,
    Evaluate,
    Output,
    Terminate,
}

/// Drive a debugger (debugpy for Python, lldb for C/C++/Rust binaries built with debug info, delve for Go, dart). One session per conversation, ended after 30 minutes. Ops: adapters (which adapters are usable here and why not); status (the session and where it stopped); breakpoints (file + lines; an empty list clears the file; may be set before launch); launch (program + args, or -m MODULE for Python, test for Go and Rust tests, cwd, env: starts it and runs to the first breakpoint or the exit; a second launch is refused while a session runs); attach (port of a debuggee's debug server on localhost, e.g. `python -m debugpy --listen PORT`, or pid of a local process for lldb/delve; returns once attached, with the program running or stopped); continue, step_over, step_in, step_out, pause (thread_id optional: run, then report where it stopped, or that it exited); threads; stack (frames of the stopped thread, at most 30); scopes (frame_id); variables (reference from scopes or a variable: children, at most 50, values cut at 400 characters); evaluate (expression, in frame_id or the top frame); output (what the program printed so far, by stream); terminate (ends the program and the adapter; an attached program keeps running). Frame ids and references are valid only until the program moves: ask again after each stop. Lines are 1-indexed; paths are relative to the working directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugInput {
    /// What to do.
    pub op: DebugOp,
    /// breakpoints: the source file, relative to the working directory.
    pub file: Option<String>,
    /// breakpoints: 1-indexed lines; an empty list clears the file.
    pub lines: Option<Vec<u64>>,
    /// launch: the program, relative to the working directory (a .py script, a binary with debug info, a Go package directory or binary), or `-m MODULE` for a Python module run as `python -m` does (`-m pytest` with args ["tests/test_x.py::test_y"]). With test: true, see test.
    pub program: Option<String>,
    /// launch: the program's arguments.
    pub args: Option<Vec<String>>,
    /// launch: run tests. Go: program is the package directory or a _test.go file, run under delve's test mode (args e.g. ["-test.run", "TestX"]). Rust: program is the test target's source file (src/lib.rs, tests/x.rs), built with cargo test --no-run and run by lldb (args e.g. ["tests::adds", "--exact"]).
    pub test: Option<bool>,
    /// launch: the directory the program runs in, relative to the working directory (default: the working directory).
    pub cwd: Option<String>,
    /// launch: extra environment variables of the program.
    pub env: Option<BTreeMap<String, String>>,
    /// attach: the debug server's port on 127.0.0.1.
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<u16>,
    /// attach: a local process id instead of a port (lldb for C/C++/Rust, delve for Go).
    pub pid: Option<u32>,
    /// launch, attach: the adapter: debugpy, lldb, delve, dart, or one the configuration adds (`adapters` lists them); inferred from the program (or the one usable adapter) when omitted.
    pub adapter: Option<String>,
    /// continue, pause, steps, stack: the thread; the stopped thread when omitted.
    pub thread_id: Option<u64>,
    /// scopes (required), evaluate (optional): a frame id from the latest stack.
    pub frame_id: Option<u64>,
    /// variables: a reference from the latest scopes or variables.
    pub reference: Option<u64>,
    /// evaluate: the expression, in the debuggee's language.
    pub expression: Option<String>,
}
