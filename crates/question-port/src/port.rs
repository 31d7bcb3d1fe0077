//! The port trait, and the port with nobody behind it.

use std::future::Future;
use std::pin::Pin;

use crate::card::{Card, Outcome};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Somewhere a card can be shown to a human.
///
/// Implementations must fail closed: when no human is attached, return
/// [`Outcome::Unavailable`] at once rather than wait. An
/// [`Outcome::Answered`] must carry an answer that passed
/// [`Card::validate`]; an invalid answer is the port's to reject and re-ask,
/// or to report as skipped, never to pass on.
pub trait QuestionPort: Send + Sync {
    /// Asks the card. Errors: the card fails [`Card::check`].
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, crate::Result<Outcome>>;
}

/// A port with nobody behind it: every question is [`Outcome::Unavailable`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Unattended;

impl QuestionPort for Unattended {
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, crate::Result<Outcome>> {
        Box::pin(async move {
            card.check()?;
            Ok(Outcome::Unavailable)
        })
    }
}
