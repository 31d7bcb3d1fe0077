//! Each op: its arguments checked, the supervisor's call, and the result.

use std::fmt::Write as _;
use std::path::Path;

use dap_session::{AdapterId, AttachSpec, LaunchSpec, Phase, Resume, RunOutcome};

use crate::progress::Progress;
use crate::result::ToolResult;
use crate::tool::CallContext;

use super::words::{capped_note, clip, ended_text, join, output_text, time_left_text, value_text};
use super::{AdapterOutput, Debug, DebugInput, DebugOp, DebugOutput};

pub(super) type Answer = std::result::Result<ToolResult, String>;

pub(super) fn need<T>(value: Option<T>, op: &str, field: &str) -> std::result::Result<T, String> {
    value.ok_or_else(|| format!("{op} needs `{field}`"))
}

impl Debug {
    /// Runs `work`, reporting "running" and the program's last output line
    /// every second. Only for run ops: they hold no lock of the supervisor's
    /// while they wait, so reading the output meanwhile cannot block on them.
    pub(super) async fn reporting(&self, work: impl Future<Output = Answer>, cx: &CallContext) -> Answer {
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

    pub(super) fn root(&self) -> &Path {
        self.0.workspace.root()
    }

    pub(super) fn conv(&self) -> &str {
        &self.0.conversation_id
    }

    /// The adapter a call names: a built-in one (`debugpy`, `lldb`, `delve`,
    /// `dart`, and their aliases) or one the host configured; `None` when it names none.
    pub(super) fn adapter(&self, name: Option<&str>) -> std::result::Result<Option<AdapterId>, String> {
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

    pub(super) fn show(&self, path: &Path) -> String {
        let shown = self.0.workspace.relative(path).display().to_string();
        // The working directory itself (a Go package launched as `.`).
        if shown.is_empty() { ".".to_owned() } else { shown }
    }

    pub(super) async fn run(&self, input: DebugInput) -> Answer {
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
}
