//! `ask_user`'s value (MCP `structuredContent`): how the question ended, made
//! from the port's outcome, and its words.

use question_port::{Answer, Card, Outcome};
use schemars::JsonSchema;
use serde::Serialize;

use crate::tool::Words;

use super::PROCEED;

/// How the question ended, and the answer when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub enum AskUserOutput {
    /// The human answered.
    Answered {
        /// The labels of the chosen options, as the card gave them (empty when only text was given).
        labels: Vec<String>,
        /// The free text, when the human wrote some.
        text: Option<String>,
        /// Each label's place on the card, 0-indexed (shown numbered from 1); for the words.
        #[serde(skip)]
        positions: Vec<Option<usize>>,
    },
    /// The human dismissed the question without answering.
    Skipped,
    /// Nobody answered within the port's time limit.
    TimedOut,
    /// No human is attached; nothing was asked.
    Unavailable {
        /// Where the card would have been shown; for the words.
        #[serde(skip)]
        target_space: String,
    },
}

impl AskUserOutput {
    /// The value of one outcome of `card`, shown in `target_space`.
    pub fn new(card: &Card, outcome: Outcome, target_space: &str) -> AskUserOutput {
        match outcome {
            Outcome::Answered(Answer { labels, text }) => {
                let positions = labels.iter().map(|l| card.options.iter().position(|c| &c.label == l)).collect();
                AskUserOutput::Answered { labels, text, positions }
            }
            Outcome::Skipped => AskUserOutput::Skipped,
            Outcome::TimedOut => AskUserOutput::TimedOut,
            Outcome::Unavailable => AskUserOutput::Unavailable { target_space: target_space.to_owned() },
        }
    }
}

impl Words for AskUserOutput {
    fn words(&self) -> String {
        match self {
            AskUserOutput::Answered { labels, text, positions } => {
                let mut parts: Vec<String> = labels
                    .iter()
                    .zip(positions)
                    .map(|(label, at)| match at {
                        Some(i) => format!("{}. {label}", i + 1),
                        None => label.clone(),
                    })
                    .collect();
                if let Some(text) = text {
                    parts.push(format!("\"{text}\""));
                }
                format!("the user answered: {}", parts.join(", "))
            }
            AskUserOutput::Skipped => format!("the user skipped the question: {PROCEED}"),
            AskUserOutput::TimedOut => format!("the question timed out with no answer: {PROCEED}"),
            AskUserOutput::Unavailable { target_space } => format!(
                "no human is attached to answer questions ({target_space}); nothing was asked and no answer was made up: proceed on an assumption you state in your reply, or stop and say what you need"
            ),
        }
    }

    fn is_error(&self) -> bool {
        matches!(self, AskUserOutput::TimedOut | AskUserOutput::Unavailable { .. })
    }
}
