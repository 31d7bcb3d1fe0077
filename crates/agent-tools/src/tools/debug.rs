//! `debug`: drive a debugger over the `dap-session` crate.
//!
//! Registered when a run wires a debug supervisor, a working directory and a
//! conversation id ([`DebugWiring`]). Whether an adapter can start is found at
//! call time (`adapters` says why not). Paths in results are relative to the
//! working directory; lines are 1-indexed. This module converts arguments and
//! words results; processes, waits and kills are the supervisor's.
//!
//! While a run op (`continue`, the steps, `pause`) waits for the program, a
//! progress report says "running" with the last line the program printed.
//! Dropping such a call (cancellation) drops only the wait: the program
//! runs on and the session stays usable (`pause`, `status`, `terminate`).
//! A dropped `launch` or `attach` drops the half-open session with its
//! adapter process group, so the slot is free for the next launch.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dap_session::{
    AdapterId, AttachSpec, Capped, DebugSupervisor, FileBreakpoints, Frame, LaunchSpec, Location, Output, Phase,
    Resume, RunOutcome, ScopeInfo, Started, Status, Stop, Terminated, ThreadInfo,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::result::ToolResult;
use crate::schema::output_schema;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::workspace::Workspace;

/// `debug`'s structured value, by op. Lines and columns are 1-indexed, as
/// the adapters report them (DAP `linesStartAt1`/`columnsStartAt1`); durations
/// are `{ secs, nanos }`; file paths are as the adapter names them (absolute).
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

/// The resources behind `debug`: the run's supervisor, its working directory,
/// and the conversation whose session this is.
#[derive(Debug, Clone)]
pub struct DebugWiring {
    pub supervisor: Arc<DebugSupervisor>,
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// One session per conversation.
    pub conversation_id: String,
}

impl DebugWiring {
    pub fn new(supervisor: Arc<DebugSupervisor>, workspace: Workspace, conversation_id: impl Into<String>) -> Self {
        DebugWiring { supervisor, workspace, conversation_id: conversation_id.into() }
    }
}

impl RegistryBuilder {
    /// Wires a debug supervisor, the working directory and the conversation
    /// whose session it drives: registers `debug`.
    pub fn with_debug(self, wiring: DebugWiring) -> RegistryBuilder {
        self.register(Debug(wiring))
    }
}

/// The `debug` operation.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
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

struct Debug(DebugWiring);

impl Tool for Debug {
    type Input = DebugInput;
    const NAME: &'static str = "debug";
    const TIER: Tier = Tier::Exec;
    const PARALLEL_SAFE: bool = false;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<DebugOutput>())
    }

    fn preview(&self, input: &DebugInput) -> CallPreview {
        let adapter = input.adapter.as_deref().map(|a| format!(" under {a}")).unwrap_or_default();
        match input.op {
            DebugOp::Launch => {
                let program = input.program.clone().unwrap_or_default();
                let mut command = program.clone();
                for arg in input.args.iter().flatten() {
                    command.push(' ');
                    command.push_str(arg);
                }
                CallPreview {
                    summary: Some(format!("run `{command}` in the debugger{adapter}")),
                    paths: if program.is_empty() { Vec::new() } else { vec![PathBuf::from(program)] },
                }
            }
            DebugOp::Attach => CallPreview {
                summary: Some(match input.pid {
                    Some(pid) => format!("attach the debugger{adapter} to process {pid}"),
                    None => format!(
                        "attach the debugger{adapter} to the program listening on 127.0.0.1:{}",
                        input.port.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
                    ),
                }),
                paths: Vec::new(),
            },
            _ => CallPreview::default(),
        }
    }

    async fn call(&self, input: DebugInput, cx: &CallContext) -> Result<ToolResult> {
        let running = matches!(
            input.op,
            DebugOp::Continue | DebugOp::StepOver | DebugOp::StepIn | DebugOp::StepOut | DebugOp::Pause
        );
        if matches!(input.op, DebugOp::Launch | DebugOp::Attach) {
            cx.progress(Progress::message("starting the program under the debugger"));
        }
        let work = self.run(input);
        let answer = if running && cx.wants_progress() { self.reporting(work, cx).await } else { work.await };
        Ok(match answer {
            Ok(result) => result,
            Err(message) => ToolResult::error(message),
        })
    }
}

type Answer = std::result::Result<ToolResult, String>;

/// `text` cut to `max` characters, with an ellipsis when cut.
fn clip(text: &str, max: usize) -> String {
    let mut shown: String = text.chars().take(max).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

fn need<T>(value: Option<T>, op: &str, field: &str) -> std::result::Result<T, String> {
    value.ok_or_else(|| format!("{op} needs `{field}`"))
}

impl Debug {
    /// Runs `work`, reporting "running" and the program's last output line
    /// every second. Only for run ops: they hold no lock of the supervisor's
    /// while they wait, so reading the output meanwhile cannot block on them.
    async fn reporting(&self, work: impl Future<Output = Answer>, cx: &CallContext) -> Answer {
        let mut work = std::pin::pin!(work);
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tokio::select! {
                answer = &mut work => return answer,
                _ = tick.tick() => {
                    let output = tokio::time::timeout(
                        std::time::Duration::from_millis(200),
                        self.0.supervisor.output(self.conv()),
                    )
                    .await;
                    let last = match &output {
                        Ok(Ok(output)) => output.text.lines().rev().map(str::trim).find(|l| !l.is_empty()),
                        _ => None,
                    };
                    cx.progress(Progress::message(match last {
                        Some(line) => format!("running; last output: {}", clip(line, 160)),
                        None => "running".to_owned(),
                    }));
                }
            }
        }
    }

    fn root(&self) -> &Path {
        self.0.workspace.root()
    }

    fn conv(&self) -> &str {
        &self.0.conversation_id
    }

    /// The adapter a call names: a built-in one (`debugpy`, `lldb`, `delve`,
    /// `dart`, and their aliases) or one the host configured; `None` when it names none.
    fn adapter(&self, name: Option<&str>) -> std::result::Result<Option<AdapterId>, String> {
        let Some(name) = name.map(str::trim) else { return Ok(None) };
        let configured = &self.0.supervisor.config().detection.adapters;
        if let Some(id) = AdapterId::parse(name).or_else(|| configured.iter().find(|a| a.name == name).map(|a| a.id()))
        {
            return Ok(Some(id));
        }
        let mut known: Vec<&str> = AdapterId::ALL.iter().map(|a| a.name()).collect();
        known.extend(configured.iter().map(|a| a.name.as_str()).filter(|n| AdapterId::parse(n).is_none()));
        Err(format!("unknown adapter {name:?}: use one of {}", known.join(", ")))
    }

    fn show(&self, path: &Path) -> String {
        let shown = self.0.workspace.relative(path).display().to_string();
        // The working directory itself (a Go package launched as `.`).
        if shown.is_empty() { ".".to_owned() } else { shown }
    }

    async fn run(&self, input: DebugInput) -> Answer {
        let debug = &self.0.supervisor;
        let conv = self.conv();
        let err = |e: dap_session::Error| crate::workspace::relative_text(&self.0.workspace, &e.to_string());
        match input.op {
            DebugOp::Adapters => {
                let reports = debug.adapters(self.root()).await;
                let mut text = String::new();
                for report in &reports {
                    let _ = writeln!(text, "{}: {}", report.id, report.detail);
                }
                let adapters = reports
                    .iter()
                    .map(|r| AdapterOutput {
                        id: r.id.name().to_owned(),
                        usable: r.usable(),
                        marker: r.marker.clone(),
                        command: r.command.as_ref().map(|c| c.program.clone()),
                        detail: r.detail.clone(),
                    })
                    .collect();
                Ok(ToolResult::text(text.trim_end()).with_output(&DebugOutput::Adapters { adapters }))
            }
            DebugOp::Status => {
                let status = debug.status(conv).await;
                let mut text = match &status.session {
                    None => "no debug session in this conversation".to_owned(),
                    Some(info) => {
                        let what = match &info.start {
                            dap_session::Start::Launch { module: Some(module), .. } => format!("launched -m {module}"),
                            dap_session::Start::Launch { program, .. } => format!("launched {}", self.show(program)),
                            dap_session::Start::Attach { pid: Some(pid), .. } => format!("attached to process {pid}"),
                            dap_session::Start::Attach { host, port, .. } => format!("attached to {host}:{port}"),
                        };
                        let phase = match &info.phase {
                            Phase::Starting => "starting".to_owned(),
                            Phase::Running => "running".to_owned(),
                            Phase::Stopped(stop) => self.stop_text(stop),
                            Phase::Ended { reason, exit_code } => ended_text(reason, *exit_code),
                        };
                        let left = if matches!(info.phase, Phase::Ended { .. }) {
                            String::new()
                        } else {
                            format!("; {} left before the session is ended", time_left_text(info.ttl_left))
                        };
                        format!("{} session ({what}): {phase}{left}", info.adapter)
                    }
                };
                if !status.breakpoints.is_empty() {
                    text.push_str("\nbreakpoints:");
                    for file in &status.breakpoints {
                        let _ = write!(text, "\n  {}: {}", self.show(&file.file), join(&file.lines));
                    }
                }
                Ok(ToolResult::text(text).with_output(&DebugOutput::Status(status)))
            }
            DebugOp::Breakpoints => {
                let file = need(input.file.as_deref(), "breakpoints", "file")?;
                let lines = need(input.lines, "breakpoints", "lines (an empty list clears the file)")?;
                let path = self.0.workspace.resolve(file).map_err(|e| e.to_string())?;
                let set = debug.set_breakpoints(conv, &path, &lines).await.map_err(err)?;
                Ok(ToolResult::text(self.breakpoints_text(&set)).with_output(&DebugOutput::Breakpoints(set)))
            }
            DebugOp::Launch => {
                let given = need(input.program.as_deref(), "launch", "program")?.trim();
                let module = given
                    .strip_prefix("-m")
                    .filter(|m| m.is_empty() || m.starts_with(char::is_whitespace))
                    .map(str::trim);
                let mut spec = match module {
                    Some("") => return Err("launch: `-m` needs a module name (`-m pytest`)".to_owned()),
                    Some(module) => {
                        let mut spec = LaunchSpec::new(self.root(), self.root());
                        spec.module = Some(module.to_owned());
                        spec
                    }
                    None => {
                        let program = self.0.workspace.resolve(given).map_err(|e| e.to_string())?;
                        LaunchSpec::new(self.root(), program)
                    }
                };
                spec.args = input.args.unwrap_or_default();
                spec.adapter = self.adapter(input.adapter.as_deref())?;
                spec.test = input.test.unwrap_or(false);
                if let Some(cwd) = input.cwd.as_deref() {
                    let cwd = self.0.workspace.resolve(cwd).map_err(|e| e.to_string())?;
                    if !cwd.is_dir() {
                        return Err(format!("launch: cwd {} is not a directory", self.show(&cwd)));
                    }
                    spec.cwd = Some(cwd);
                }
                spec.env = input.env.unwrap_or_default().into_iter().collect();
                let shown = match &spec.module {
                    Some(module) => format!("-m {module}"),
                    None => self.show(&spec.program),
                };
                let started = debug.launch(conv, spec).await.map_err(err)?;
                let head = format!("launched {shown} under {}", started.adapter);
                Ok(self.started(head, &started))
            }
            DebugOp::Attach => {
                let mut spec = match (input.port, input.pid) {
                    (Some(port), None) => AttachSpec::port(self.root(), port),
                    (None, Some(pid)) => AttachSpec::pid(self.root(), pid),
                    (Some(_), Some(_)) => return Err("attach takes `port` or `pid`, not both".to_owned()),
                    (None, None) => {
                        return Err(
                            "attach needs `port` (a debug server on 127.0.0.1) or `pid` (a local process, with lldb or delve)"
                                .to_owned(),
                        );
                    }
                };
                spec.adapter = self.adapter(input.adapter.as_deref())?;
                let target = match spec.pid {
                    Some(pid) => format!("process {pid}"),
                    None => format!("127.0.0.1:{}", spec.port),
                };
                let started = debug.attach(conv, spec).await.map_err(err)?;
                let head = format!("attached {} to {target}", started.adapter);
                if let RunOutcome::StillRunning { waited } = &started.outcome {
                    // Ready once configured: an attached program (a server, a loop) runs on.
                    let mut text = head;
                    for file in &started.breakpoints {
                        let _ = write!(text, "\n{}", self.breakpoints_text(file));
                    }
                    let _ = write!(
                        text,
                        "\nattached; running (no stop within {} s): set breakpoints, pause it, or read status; terminate detaches and leaves it running",
                        waited.as_secs()
                    );
                    return Ok(ToolResult::text(text).with_output(&DebugOutput::Started(started)));
                }
                Ok(self.started(head, &started))
            }
            DebugOp::Continue | DebugOp::StepOver | DebugOp::StepIn | DebugOp::StepOut => {
                let how = match input.op {
                    DebugOp::Continue => Resume::Continue,
                    DebugOp::StepOver => Resume::StepOver,
                    DebugOp::StepIn => Resume::StepIn,
                    _ => Resume::StepOut,
                };
                let outcome = debug.resume(conv, how, input.thread_id).await.map_err(err)?;
                Ok(self.outcome(&outcome))
            }
            DebugOp::Pause => {
                if let Some(info) = debug.status(conv).await.session
                    && let Phase::Stopped(stop) = info.phase
                {
                    let text = format!("already stopped, nothing to pause: {}", self.stop_text(&stop));
                    return Ok(ToolResult::text(text).with_output(&DebugOutput::Run(RunOutcome::Stopped(stop))));
                }
                let outcome = debug.pause(conv, input.thread_id).await.map_err(err)?;
                if let RunOutcome::StillRunning { waited } = &outcome {
                    let text = format!(
                        "the pause was sent, but the program did not stop within {} s (a process held elsewhere — a forked Python child at a breakpoint, a blocked system call — can do that): read status later, or terminate",
                        waited.as_secs()
                    );
                    return Ok(ToolResult::text(text).with_output(&DebugOutput::Run(outcome)));
                }
                Ok(self.outcome(&outcome))
            }
            DebugOp::Threads => {
                let threads = debug.threads(conv).await.map_err(err)?;
                let text = if threads.is_empty() {
                    // delve lists only a placeholder while the program runs (left out): pause it to see them.
                    "the adapter listed no threads (some list them only while the program is stopped: pause it first)"
                        .to_owned()
                } else {
                    threads.iter().map(|t| format!("thread {}: {}", t.id, t.name)).collect::<Vec<_>>().join("\n")
                };
                Ok(ToolResult::text(text).with_output(&DebugOutput::Threads { threads }))
            }
            DebugOp::Stack => {
                let stack = debug.stack(conv, input.thread_id).await.map_err(err)?;
                let mut text = stack
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| format!("#{i} {} (frame_id {})", self.location_text(&f.location), f.id))
                    .collect::<Vec<_>>()
                    .join("\n");
                text.push_str(&capped_note(&stack, "frames"));
                Ok(ToolResult::text(text).with_output(&DebugOutput::Stack(stack)))
            }
            DebugOp::Scopes => {
                let frame = need(input.frame_id, "scopes", "frame_id")?;
                let scopes = debug.scopes(conv, frame).await.map_err(err)?;
                let mut text = scopes
                    .iter()
                    .map(|s| {
                        let expensive = if s.expensive { ", expensive" } else { "" };
                        format!("{} (reference {}{expensive})", s.name, s.reference)
                    })
                    .collect::<Vec<_>>();
                if let Some(note) = debug.locals_note(conv, &scopes).await {
                    text.push(format!("note: {note}"));
                }
                Ok(ToolResult::text(text.join("\n")).with_output(&DebugOutput::Scopes { scopes }))
            }
            DebugOp::Variables => {
                let reference = need(input.reference, "variables", "reference")?;
                let variables = debug.variables(conv, reference).await.map_err(err)?;
                let mut text = variables.items.iter().map(value_text).collect::<Vec<_>>().join("\n");
                if variables.items.is_empty() {
                    text.push_str("(no variables)");
                }
                text.push_str(&capped_note(&variables, "variables"));
                Ok(ToolResult::text(text).with_output(&DebugOutput::Variables(variables)))
            }
            DebugOp::Evaluate => {
                let expression = need(input.expression.as_deref(), "evaluate", "expression")?;
                let value = debug.evaluate(conv, expression, input.frame_id).await.map_err(err)?;
                Ok(ToolResult::text(value_text(&value)).with_output(&DebugOutput::Evaluated(value)))
            }
            DebugOp::Output => {
                let output = debug.output(conv).await.map_err(err)?;
                let mut text = output_text(&output);
                if output.dropped_chars > 0 {
                    text = format!("(the first {} characters were dropped)\n{text}", output.dropped_chars);
                }
                Ok(ToolResult::text(text).with_output(&DebugOutput::Output(output)))
            }
            DebugOp::Terminate => {
                let terminated = debug.terminate(conv).await.map_err(err)?;
                let text = match &terminated.was {
                    // A clean-up that comes after the end is no error: it says how the session had ended.
                    Phase::Ended { reason, exit_code } => {
                        format!("already {}; nothing was left to terminate", ended_text(reason, *exit_code))
                    }
                    _ if terminated.debuggee_ended => {
                        format!("terminated: the program and the {} adapter are gone", terminated.adapter)
                    }
                    _ => format!(
                        "detached: the attached program keeps running; the {} session is over",
                        terminated.adapter
                    ),
                };
                Ok(ToolResult::text(text).with_output(&DebugOutput::Terminated(terminated)))
            }
        }
    }

    fn started(&self, head: String, started: &Started) -> ToolResult {
        let mut text = head;
        for file in &started.breakpoints {
            let _ = write!(text, "\n{}", self.breakpoints_text(file));
        }
        let _ = write!(text, "\n{}", self.outcome_text(&started.outcome));
        let mut result = ToolResult::text(text).with_output(&DebugOutput::Started(started.clone()));
        result.is_error = adapter_died(&started.outcome);
        result
    }

    fn outcome(&self, outcome: &RunOutcome) -> ToolResult {
        let mut result = ToolResult::text(self.outcome_text(outcome)).with_output(&DebugOutput::Run(outcome.clone()));
        result.is_error = adapter_died(outcome);
        result
    }

    fn outcome_text(&self, outcome: &RunOutcome) -> String {
        match outcome {
            RunOutcome::Stopped(stop) => self.stop_text(stop),
            RunOutcome::Exited { exit_code, reason } => {
                format!("{}; op output shows what it printed", ended_text(reason, *exit_code))
            }
            RunOutcome::StillRunning { waited } => format!(
                "still running after {} s with no stop: pause it, read status later (it says where the program stopped, if it did), or terminate",
                waited.as_secs()
            ),
        }
    }

    fn stop_text(&self, stop: &Stop) -> String {
        let mut text = format!("stopped ({})", stop.reason);
        if let Some(location) = &stop.location {
            let _ = write!(text, " at {}", self.location_text(location));
        }
        if let Some(thread) = stop.thread_id {
            let _ = write!(text, ", thread {thread}");
        }
        if let Some(detail) = stop.text.as_ref().or(stop.description.as_ref()) {
            let _ = write!(text, ": {detail}");
        }
        text
    }

    fn location_text(&self, location: &Location) -> String {
        let file = location.file.as_deref().map(|f| self.show(f)).unwrap_or_else(|| "<no source>".into());
        format!("{file}:{} in {}", location.line, location.function)
    }

    fn breakpoints_text(&self, set: &FileBreakpoints) -> String {
        let file = self.show(&set.file);
        if set.lines.is_empty() {
            return format!("cleared the breakpoints in {file}");
        }
        match &set.placed {
            None => format!("breakpoints in {file} at lines {}; sent to the adapter at launch", join(&set.lines)),
            Some(placed) => {
                let each = placed
                    .iter()
                    .map(|p| {
                        let moved = p.line.filter(|&l| l != p.requested_line).map(|l| format!(" → {l}"));
                        let state = if p.verified { "set" } else { "not verified" };
                        let message = p.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default();
                        format!("{}{} {state}{message}", p.requested_line, moved.unwrap_or_default())
                    })
                    .collect::<Vec<_>>();
                format!("breakpoints in {file}: {}", each.join(", "))
            }
        }
    }
}

/// Whether a run ended because the adapter went away (crashed, killed): an
/// error for the caller, where the program ending is not.
fn adapter_died(outcome: &RunOutcome) -> bool {
    matches!(outcome, RunOutcome::Exited { reason, .. } if reason.starts_with(dap_session::ADAPTER_EXITED))
}

/// The TTL's time left, rounded up (`0.4 s` is `1 s`, `61 s` is `2 min`): "0 s" only
/// once none is left, when the TTL is ending the session.
fn time_left_text(left: std::time::Duration) -> String {
    match left.as_millis().div_ceil(1000) {
        secs @ 0..60 => format!("{secs} s"),
        secs => format!("{} min", secs.div_ceil(60)),
    }
}

fn ended_text(reason: &str, exit_code: Option<i64>) -> String {
    match exit_code {
        Some(code) => format!("ended: {reason} (exit code {code})"),
        None => format!("ended: {reason}"),
    }
}

fn value_text(value: &dap_session::Value) -> String {
    let mut text = value.name.clone();
    if let Some(type_name) = value.type_name.as_deref().filter(|t| !t.is_empty()) {
        let _ = write!(text, ": {type_name}");
    }
    let _ = write!(text, " = {}", value.value);
    if let Some(chars) = value.cut_from {
        let _ = write!(text, "… (cut, {chars} characters in all)");
    }
    if value.reference != 0 {
        let _ = write!(text, " (reference {})", value.reference);
    }
    text
}

fn capped_note<T>(list: &Capped<T>, what: &str) -> String {
    if list.total > list.items.len() {
        format!("\n({} of {} {what} shown)", list.items.len(), list.total)
    } else {
        String::new()
    }
}

/// The program's output for a person: as printed when it all came on
/// stdout; else each run of one stream under a `[stream]` line.
fn output_text(output: &dap_session::Output) -> String {
    if output.text.is_empty() {
        return "(no output yet)".to_owned();
    }
    if output.chunks.iter().all(|c| c.stream == "stdout") {
        return output.text.clone();
    }
    let mut text = String::new();
    for chunk in &output.chunks {
        let _ = writeln!(text, "[{}]", chunk.stream);
        text.push_str(&chunk.text);
        if !chunk.text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

fn join(lines: &[u64]) -> String {
    lines.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::time_left_text;

    #[test]
    fn the_time_left_is_rounded_up() {
        let cases = [(0, "0 s"), (1, "1 s"), (400, "1 s"), (1000, "1 s"), (1001, "2 s"), (59_000, "59 s")];
        for (ms, text) in cases {
            assert_eq!(time_left_text(Duration::from_millis(ms)), text, "{ms} ms");
        }
        let cases = [(59_001, "1 min"), (60_000, "1 min"), (61_000, "2 min"), (1_800_000, "30 min")];
        for (ms, text) in cases {
            assert_eq!(time_left_text(Duration::from_millis(ms)), text, "{ms} ms");
        }
    }
}
