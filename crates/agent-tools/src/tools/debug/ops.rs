//! Each op: its arguments checked, the supervisor's call, and the result.

use std::path::Path;

use dap_session::{AdapterId, AttachSpec, LaunchSpec, Phase, Resume, RunOutcome};

use crate::progress::Progress;
use crate::tool::{CallContext, Reply};

use super::words::clip;
use super::{AdapterOutput, Debug, DebugInput, DebugOp, DebugOutput, Debugged, RunOutput, Said};

pub(super) type Answer = Reply<Debugged>;

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

    /// The value of an op, with what its words say besides.
    fn said(&self, value: DebugOutput, said: Said) -> Debugged {
        Debugged { value, root: self.root().to_path_buf(), said }
    }

    pub(super) async fn run(&self, input: DebugInput) -> Answer {
        let debug = &self.0.supervisor;
        let conv = self.conv();
        let err = |e: dap_session::Error| crate::workspace::relative_text(&self.0.workspace, &e.to_string());
        let plain = |value: DebugOutput| self.said(value, Said::Plain);
        match input.op {
            DebugOp::Adapters => {
                let reports = debug.adapters(self.root()).await;
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
                Ok(plain(DebugOutput::Adapters { adapters }))
            }
            DebugOp::Status => Ok(plain(DebugOutput::Status(debug.status(conv).await.into()))),
            DebugOp::Breakpoints => {
                let file = need(input.file.as_deref(), "breakpoints", "file")?;
                let lines = need(input.lines, "breakpoints", "lines (an empty list clears the file)")?;
                let path = self.0.workspace.resolve(file).map_err(|e| e.to_string())?;
                let set = debug.set_breakpoints(conv, &path, &lines).await.map_err(err)?;
                Ok(plain(DebugOutput::Breakpoints(set.into())))
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
                Ok(self.said(DebugOutput::Started(started.into()), Said::Launched(head)))
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
                Ok(self.said(DebugOutput::Started(started.into()), Said::Attached(head)))
            }
            DebugOp::Continue | DebugOp::StepOver | DebugOp::StepIn | DebugOp::StepOut => {
                let how = match input.op {
                    DebugOp::Continue => Resume::Continue,
                    DebugOp::StepOver => Resume::StepOver,
                    DebugOp::StepIn => Resume::StepIn,
                    _ => Resume::StepOut,
                };
                let outcome = debug.resume(conv, how, input.thread_id).await.map_err(err)?;
                Ok(plain(DebugOutput::Run(outcome.into())))
            }
            DebugOp::Pause => {
                if let Some(info) = debug.status(conv).await.session
                    && let Phase::Stopped(stop) = info.phase
                {
                    return Ok(self.said(DebugOutput::Run(RunOutput::Stopped(stop.into())), Said::AlreadyStopped));
                }
                let outcome = debug.pause(conv, input.thread_id).await.map_err(err)?;
                let said =
                    if matches!(outcome, RunOutcome::StillRunning { .. }) { Said::PauseSent } else { Said::Plain };
                Ok(self.said(DebugOutput::Run(outcome.into()), said))
            }
            DebugOp::Threads => {
                let threads = debug.threads(conv).await.map_err(err)?;
                Ok(plain(DebugOutput::Threads { threads: threads.into_iter().map(Into::into).collect() }))
            }
            DebugOp::Stack => {
                Ok(plain(DebugOutput::Stack(debug.stack(conv, input.thread_id).await.map_err(err)?.into())))
            }
            DebugOp::Scopes => {
                let frame = need(input.frame_id, "scopes", "frame_id")?;
                let scopes = debug.scopes(conv, frame).await.map_err(err)?;
                let said = match debug.locals_note(conv, &scopes).await {
                    Some(note) => Said::Note(note),
                    None => Said::Plain,
                };
                Ok(self.said(DebugOutput::Scopes { scopes: scopes.into_iter().map(Into::into).collect() }, said))
            }
            DebugOp::Variables => {
                let reference = need(input.reference, "variables", "reference")?;
                Ok(plain(DebugOutput::Variables(debug.variables(conv, reference).await.map_err(err)?.into())))
            }
            DebugOp::Evaluate => {
                let expression = need(input.expression.as_deref(), "evaluate", "expression")?;
                let value = debug.evaluate(conv, expression, input.frame_id).await.map_err(err)?;
                Ok(plain(DebugOutput::Evaluated(value.into())))
            }
            DebugOp::Output => Ok(plain(DebugOutput::Output(debug.output(conv).await.map_err(err)?.into()))),
            DebugOp::Terminate => Ok(plain(DebugOutput::Terminated(debug.terminate(conv).await.map_err(err)?.into()))),
        }
    }
}
