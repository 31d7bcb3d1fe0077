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

use std::path::PathBuf;
use std::sync::Arc;

use dap_session::DebugSupervisor;

use crate::error::Result;
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool};
use crate::workspace::Workspace;

mod convert;
mod input;
mod ops;
mod output;
mod words;

pub use input::*;
pub use output::*;

/// The resources behind `debug`: the run's supervisor, its working directory,
/// and the conversation whose session this is.
#[derive(Debug, Clone)]
pub struct DebugWiring {
    /// The run's debug sessions, shared with its other conversations.
    pub supervisor: Arc<DebugSupervisor>,
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// One session per conversation.
    pub conversation_id: String,
}

impl DebugWiring {
    /// The wiring of `conversation_id`'s session.
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

struct Debug(DebugWiring);

impl Tool for Debug {
    type Input = DebugInput;
    type Output = Debugged;
    const NAME: &'static str = "debug";
    const TIER: Tier = Tier::Exec;
    const PARALLEL_SAFE: bool = false;

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

    async fn call(&self, input: DebugInput, cx: &CallContext) -> Result<Reply<Debugged>> {
        let running = matches!(
            input.op,
            DebugOp::Continue | DebugOp::StepOver | DebugOp::StepIn | DebugOp::StepOut | DebugOp::Pause
        );
        if matches!(input.op, DebugOp::Launch | DebugOp::Attach) {
            cx.progress(Progress::message("starting the program under the debugger"));
        }
        let work = self.run(input);
        Ok(if running && cx.wants_progress() { self.reporting(work, cx).await } else { work.await })
    }
}
