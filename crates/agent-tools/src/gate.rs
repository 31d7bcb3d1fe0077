//! The approval gate's shell: consults [`crate::approval::decide`], and on
//! `ask` shows a permission card through the wired question port (the same
//! [`Card`] as `ask_user`), remembering "allow for this session" answers.
//!
//! Fail closed: a deny, a skip, a timeout, a port with nobody behind it, or a
//! card the port cannot show all refuse the call. Nothing of the tool runs
//! before the answer; the surface awaits this gate before it polls the tool.

use std::sync::{Arc, Mutex, PoisonError};

use question_port::{Card, Choice, Outcome, QuestionPort};
use serde_json::Value;

use crate::approval::{ApprovalPolicy, CallFacts, Decision, SessionGrants, decide};
use crate::refusal::Refusal;
use crate::tool::{CallPreview, ToolSpec};

/// The option that runs this one call.
pub const ALLOW_ONCE: &str = "allow once";
/// The option that runs the call and remembers the yes for the rest of the run.
pub const ALLOW_SESSION: &str = "allow for this session";
/// The option that refuses the call.
pub const DENY: &str = "deny";

/// Lines of a summary shown on a card before it is cut.
const SUMMARY_LINES: usize = 8;
/// Characters of compact arguments shown when a tool gives no summary.
const ARGS_CHARS: usize = 300;

/// What a run wires for approval: the host's policy and where permission cards go.
#[derive(Clone)]
pub struct ApprovalWiring {
    /// The host's rules.
    pub policy: ApprovalPolicy,
    /// Where permission cards are shown; [`question_port::Unattended`] denies every `ask`.
    pub port: Arc<dyn QuestionPort>,
}

impl std::fmt::Debug for ApprovalWiring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalWiring").field("policy", &self.policy).finish_non_exhaustive()
    }
}

/// The gate of one registry: its policy, port and the session's grants.
pub(crate) struct Gate {
    wiring: ApprovalWiring,
    grants: Mutex<SessionGrants>,
}

impl Gate {
    pub(crate) fn new(wiring: ApprovalWiring) -> Gate {
        Gate { wiring, grants: Mutex::new(SessionGrants::default()) }
    }

    /// The grants given so far.
    pub(crate) fn grants(&self) -> SessionGrants {
        self.grants.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether the call may run; asks when the policy says so.
    pub(crate) async fn check(&self, spec: &ToolSpec, args: &Value, preview: &CallPreview) -> Result<(), Refusal> {
        let facts = CallFacts { tool: spec.name, tier: spec.tier, paths: &preview.paths };
        let decision = {
            let grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
            decide(&facts, &self.wiring.policy, &grants)
        };
        let denied = |reason: &str| Err(Refusal::Denied { name: spec.name, reason: reason.to_owned() });
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny { reason } => denied(&reason),
            Decision::Ask => {
                let card = permission_card(spec, args, preview);
                match self.wiring.port.ask(&card).await {
                    Ok(Outcome::Answered(answer)) => match answer.labels.first().map(String::as_str) {
                        Some(ALLOW_ONCE) => Ok(()),
                        Some(ALLOW_SESSION) => {
                            self.grants.lock().unwrap_or_else(PoisonError::into_inner).grant(&facts);
                            Ok(())
                        }
                        _ => denied("the user denied it"),
                    },
                    Ok(Outcome::Skipped) => denied("the user did not approve it (the permission prompt was dismissed)"),
                    Ok(Outcome::TimedOut) => denied("the permission prompt timed out with no answer"),
                    Ok(Outcome::Unavailable) => {
                        denied("it needs a human's approval and no human is attached to give it")
                    }
                    Err(e) => denied(&format!("the permission prompt could not be shown: {e}")),
                }
            }
        }
    }
}

/// The permission card for a call: the question names the tool and its tier,
/// the context says what it will do (the tool's summary, or its arguments, and
/// the paths), and the options are allow once, allow for this session, deny.
pub fn permission_card(spec: &ToolSpec, args: &Value, preview: &CallPreview) -> Card {
    let mut context = match &preview.summary {
        Some(summary) => first_lines(summary, SUMMARY_LINES),
        None => format!("arguments: {}", compact(args)),
    };
    if !preview.paths.is_empty() {
        let paths: Vec<String> = preview.paths.iter().map(|p| p.display().to_string()).collect();
        context.push_str(&format!("\npaths: {}", paths.join(", ")));
    }
    let session = if preview.paths.is_empty() {
        format!("run it, and run {} without asking for the rest of this session", spec.name)
    } else {
        format!("run it, and run {} on these paths without asking for the rest of this session", spec.name)
    };
    Card {
        question: format!("Allow {} ({} tier) to run?", spec.name, spec.tier),
        context: Some(context),
        options: vec![
            Choice::described(ALLOW_ONCE, "run this call only"),
            Choice::described(ALLOW_SESSION, session),
            Choice::described(DENY, "do not run it; the model is told why"),
        ],
        allow_free_text: false,
        multi_select: false,
    }
}

fn first_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text.trim_end().to_owned();
    }
    format!("{}\n… ({} more lines)", lines[..max].join("\n"), lines.len() - max)
}

fn compact(args: &Value) -> String {
    let text = args.to_string();
    if text.chars().count() <= ARGS_CHARS {
        return text;
    }
    let cut: String = text.chars().take(ARGS_CHARS).collect();
    format!("{cut}…")
}
