//! An in-process channel port, for runtimes that embed the asking side and
//! show the card in their own interface.
//!
//! [`channel`] returns the port and a [`QuestionReceiver`]; the runtime takes
//! each [`PendingQuestion`] from the receiver, renders its card and settles it
//! with [`PendingQuestion::answer`], [`PendingQuestion::skip`] or
//! [`PendingQuestion::time_out`]. An answer that does not fit the card is
//! refused there, to the human side, and the question stays open.
//!
//! Fail closed: once the receiver is dropped, asking returns
//! [`Outcome::Unavailable`] at once; a pending question dropped unsettled is
//! also `Unavailable`. No answer is ever made up.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::card::{Answer, Card, Outcome};
use crate::error::{Error, Result};
use crate::port::{BoxFuture, QuestionPort};

/// How a [`ChannelPort`] waits.
#[derive(Debug, Clone, Default)]
pub struct ChannelConfig {
    /// How long to wait for the human before [`Outcome::TimedOut`]; `None` waits
    /// as long as the receiving side keeps the question.
    pub timeout: Option<Duration>,
}

/// The asking half of an in-process channel.
#[derive(Debug, Clone)]
pub struct ChannelPort {
    tx: mpsc::UnboundedSender<PendingQuestion>,
    config: ChannelConfig,
}

/// The answering half: yields each question asked through the port.
#[derive(Debug)]
pub struct QuestionReceiver {
    rx: mpsc::UnboundedReceiver<PendingQuestion>,
}

/// A question waiting for the human.
#[derive(Debug)]
pub struct PendingQuestion {
    card: Card,
    reply: Option<oneshot::Sender<Outcome>>,
}

/// A connected port and receiver.
pub fn channel(config: ChannelConfig) -> (ChannelPort, QuestionReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    (ChannelPort { tx, config }, QuestionReceiver { rx })
}

impl ChannelPort {
    /// Whether a receiver is still attached.
    pub fn is_attached(&self) -> bool {
        !self.tx.is_closed()
    }
}

impl QuestionPort for ChannelPort {
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, Result<Outcome>> {
        Box::pin(async move {
            card.check()?;
            let (reply, settled) = oneshot::channel();
            let pending = PendingQuestion { card: card.clone(), reply: Some(reply) };
            if self.tx.send(pending).is_err() {
                return Ok(Outcome::Unavailable);
            }
            let outcome = match self.config.timeout {
                Some(limit) => match tokio::time::timeout(limit, settled).await {
                    Ok(settled) => settled,
                    Err(_) => return Ok(Outcome::TimedOut),
                },
                None => settled.await,
            };
            // A question dropped unsettled means the human side went away.
            Ok(outcome.unwrap_or(Outcome::Unavailable))
        })
    }
}

impl QuestionReceiver {
    /// The next question; `None` once every port is dropped.
    pub async fn recv(&mut self) -> Option<PendingQuestion> {
        self.rx.recv().await
    }

    /// The next question if one is waiting now.
    pub fn try_recv(&mut self) -> Option<PendingQuestion> {
        self.rx.try_recv().ok()
    }
}

impl PendingQuestion {
    /// The card to show.
    pub fn card(&self) -> &Card {
        &self.card
    }

    /// Whether the asker has stopped waiting (timed out or dropped).
    pub fn is_abandoned(&self) -> bool {
        self.reply.as_ref().is_none_or(oneshot::Sender::is_closed)
    }

    /// Answers the question. Errors: the answer does not fit the card (see
    /// [`Card::validate`]), and the question stays open; or it is already settled.
    pub fn answer(&mut self, answer: Answer) -> Result<()> {
        if self.reply.is_none() {
            return Err(Error::AlreadySettled);
        }
        let answer = self.card.validate(answer)?;
        self.settle(Outcome::Answered(answer))
    }

    /// Declines to answer. Errors: already settled.
    pub fn skip(&mut self) -> Result<()> {
        self.settle(Outcome::Skipped)
    }

    /// Reports that the human did not answer in time. Errors: already settled.
    pub fn time_out(&mut self) -> Result<()> {
        self.settle(Outcome::TimedOut)
    }

    fn settle(&mut self, outcome: Outcome) -> Result<()> {
        let reply = self.reply.take().ok_or(Error::AlreadySettled)?;
        // The asker may have given up already; that is not the human's error.
        let _ = reply.send(outcome);
        Ok(())
    }
}
