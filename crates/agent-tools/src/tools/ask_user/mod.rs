//! `ask_user`: a question card for the human, over the `question-port` crate.
//!
//! Registered only when a run wires a question port and a target space
//! ([`QuestionWiring`]). This module converts the model's arguments into a
//! [`question_port::Card`] and words each outcome for the model; the asking,
//! validation and waiting are the port's.

use std::sync::Arc;

use question_port::{Card, Choice, QuestionPort};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::Result;
use crate::progress::{Progress, WAITING_FOR_USER};
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, Reply, Tool};

mod output;

pub use output::*;

/// The resources behind `ask_user`: where questions go, and where they are shown.
#[derive(Clone)]
pub struct QuestionWiring {
    /// The port that asks the human.
    pub port: Arc<dyn QuestionPort>,
    /// Where the card is shown (a conversation, a terminal, an MCP client); named in results.
    pub target_space: String,
}

impl std::fmt::Debug for QuestionWiring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuestionWiring").field("target_space", &self.target_space).finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    /// Wires a question port and the target space its cards are shown in:
    /// registers `ask_user`.
    pub fn with_question_port(self, wiring: QuestionWiring) -> RegistryBuilder {
        self.register(AskUser(wiring))
    }
}

/// Asks the human operator a question and waits for the answer: the only way to ask the operator anything. Never write the question as a chat message instead, which ends the turn. The question is shown as a numbered card; the human picks option(s), types an answer where allowed, or skips. A skip is a success: proceed on an assumption you state and do not ask again. A timeout is an error with the same instruction. With no human attached the call fails at once rather than wait. Not for permission to act ("may I do this?"): that is a separate gate.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserInput {
    /// What to ask: one clear question.
    pub question: String,
    /// Why you are asking and what hangs on the answer.
    #[serde(default)]
    pub context: Option<String>,
    /// The choices, shown numbered from 1 in this order; labels must be distinct.
    #[serde(default)]
    pub options: Vec<AskOption>,
    /// Whether a typed answer is accepted (instead of, or besides, the options). Required for a question with no options.
    #[serde(default)]
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
}

/// One choice on the card.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskOption {
    /// A short name for the choice; the answer names it.
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: Option<String>,
}

impl AskUserInput {
    fn card(self) -> Card {
        Card {
            question: self.question,
            context: self.context,
            options: self.options.into_iter().map(|o| Choice { label: o.label, description: o.description }).collect(),
            allow_free_text: self.allow_free_text,
            multi_select: self.multi_select,
        }
    }
}

struct AskUser(QuestionWiring);

pub(super) const PROCEED: &str = "proceed on an assumption you state in your reply, and do not ask this question again";

impl Tool for AskUser {
    type Input = AskUserInput;
    type Output = AskUserOutput;
    const NAME: &'static str = "ask_user";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: AskUserInput, cx: &CallContext) -> Result<Reply<AskUserOutput>> {
        let card = input.card();
        cx.progress(Progress::message(WAITING_FOR_USER));
        let outcome = match self.0.port.ask(&card).await {
            Ok(outcome) => outcome,
            Err(e @ question_port::Error::UnfitReplies { .. }) => return Ok(Err(e.to_string())),
            Err(e) => return Ok(Err(format!("cannot ask: {e}"))),
        };
        Ok(Ok(AskUserOutput::new(&card, outcome, &self.0.target_space)))
    }
}
