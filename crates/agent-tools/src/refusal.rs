//! Why a call did not reach its tool: the refusals a surface and the approval gate give.

use std::fmt;

use crate::tier::Tier;

/// Why a call did not reach its tool. Shown to the model as an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No tool of that name on this surface.
    UnknownTool {
        /// The name as called.
        name: String,
        /// The names of the tools at or below the surface's cap, in registration order.
        available: Vec<&'static str>,
    },
    /// The tool exists but its tier is above the surface's cap.
    AboveCap {
        /// The tool's name.
        name: &'static str,
        /// The tool's tier.
        tier: Tier,
        /// The surface's cap.
        cap: Tier,
    },
    /// The arguments do not decode into the tool's input.
    BadArguments {
        /// The tool's name.
        tool: &'static str,
        /// What is wrong, with the field's path when serde gives one (`` `line`: invalid type ``).
        message: String,
    },
    /// The approval gate refused the call (a policy rule, or the human's
    /// answer, or nobody there to answer); the tool did not run.
    Denied {
        /// The tool's name.
        name: &'static str,
        /// Why, for the model: the rule that denied it, the human's answer, or that nobody could answer.
        reason: String,
    },
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
