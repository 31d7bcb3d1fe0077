//! Ask the human behind a run a question, and get a validated answer back.
//!
//! A [`Card`] is a question with optional context, numbered [`Choice`]s, and
//! whether free text and several choices are accepted. A [`QuestionPort`] asks
//! it and yields an [`Outcome`]: [`Outcome::Answered`] with an [`Answer`] that
//! has been checked against the card, [`Outcome::Skipped`],
//! [`Outcome::TimedOut`], or [`Outcome::Unavailable`] when no human is
//! attached. A port fails closed: with nobody there it returns `Unavailable` at
//! once, never blocks and never invents an answer.
//!
//! Implementations here: [`channel`] (an in-process channel for runtimes that
//! embed the asking side and render the card themselves), [`TerminalPort`] (a
//! numbered prompt on a TTY) and [`Unattended`] (nobody, ever). Other transports
//! (MCP elicitation, a chat UI) implement [`QuestionPort`] outside this crate.
//!
//! This crate knows nothing of tool calling, JSON schemas or approval tiers;
//! the wording a model reads about an outcome belongs to the caller.
#![warn(missing_docs)]

mod card;
mod channel;
mod error;
mod port;
mod terminal;

pub use crate::card::{Answer, Card, Choice, Outcome};
pub use crate::channel::{ChannelConfig, ChannelPort, PendingQuestion, QuestionReceiver, channel};
pub use crate::error::{Error, Result};
pub use crate::port::{BoxFuture, QuestionPort, Unattended};
pub use crate::terminal::{Reply, TerminalPort, parse_reply, prompt, render_card};
