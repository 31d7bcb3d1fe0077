//! Why a call did not reach its tool: the refusals a surface and the approval gate give.

use std::fmt;

use crate::tier::Tier;

/// Why a call did not reach its tool. Shown to the model as an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No tool of that name on this surface.
    UnknownTool { name: String, available: Vec<&'static str> },
    /// The tool exists but its tier is above the surface's cap.
    AboveCap { name: &'static str, tier: Tier, cap: Tier },
    /// The arguments do not decode into the tool's input.
    BadArguments { tool: &'static str, message: String },
    /// The approval gate refused the call (a policy rule, or the human's
    /// answer, or nobody there to answer); the tool did not run.
    Denied { name: &'static str, reason: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::UnknownTool { name, available } if available.is_empty() => {
                write!(f, "unknown tool '{name}'; this surface has no tools")
            }
            Refusal::UnknownTool { name, available } => {
                write!(f, "unknown tool '{name}'; available tools: {}", available.join(", "))
            }
            Refusal::AboveCap { name, tier, cap } => {
                write!(f, "refused: {name} is {tier} tier; this surface is capped at {cap}")
            }
            Refusal::BadArguments { tool, message } => write!(f, "invalid arguments for {tool}: {message}"),
            Refusal::Denied { name, reason } => write!(
                f,
                "refused: {name} did not run, because {reason}; do not retry the same call unchanged (do the task another way, or ask the user)"
            ),
        }
    }
}

impl std::error::Error for Refusal {}
