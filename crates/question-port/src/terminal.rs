//! A terminal prompt: the card on the terminal, the choice read as a line.
//!
//! The human types an option's number (several separated by commas or spaces
//! on a multi-select card), an option's label, or — where the card allows it —
//! any other text as the answer. An empty line skips. A reply that does not fit
//! the card is explained and asked again; end of input counts as a skip.
//!
//! [`render_card`], [`parse_reply`] and [`prompt`] are plain functions over
//! text and streams; [`TerminalPort`] runs [`prompt`] on the process's stdin
//! and stderr when stdin is a terminal, and is unavailable otherwise.

use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use crate::card::{Answer, Card, Outcome};
use crate::error::{Error, Result};
use crate::port::{BoxFuture, QuestionPort};

/// The card as numbered text, ending with a line that says how to answer.
pub fn render_card(card: &Card) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "? {}", card.question.trim());
    if let Some(context) = card.context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        for line in context.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for (i, choice) in card.options.iter().enumerate() {
        match choice.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            Some(description) => {
                let _ = writeln!(out, "  {}. {} — {}", i + 1, choice.label, description);
            }
            None => {
                let _ = writeln!(out, "  {}. {}", i + 1, choice.label);
            }
        }
    }
    let mut how = Vec::new();
    match (card.options.len(), card.multi_select) {
        (0, _) => {}
        (1, _) => how.push("type 1".to_owned()),
        (n, false) => how.push(format!("type a number 1-{n}")),
        (n, true) => how.push(format!("type numbers 1-{n}, separated by commas")),
    }
    if card.allow_free_text {
        how.push(if card.options.is_empty() {
            "type your answer".to_owned()
        } else {
            "or type your own answer".to_owned()
        });
    }
    how.push("an empty line skips".to_owned());
    let _ = writeln!(out, "({})", how.join("; "));
    out
}

/// What one typed line means for a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A valid answer.
    Answer(Answer),
    /// The human skipped.
    Skip,
    /// The line does not fit the card; the error says why.
    Invalid(Error),
}

/// Reads one typed line against a card: numbers, a label, free text, or empty (skip).
pub fn parse_reply(card: &Card, line: &str) -> Reply {
    let line = line.trim();
    if line.is_empty() {
        return Reply::Skip;
    }
    let answer = match numbers(line) {
        Some(numbers) => {
            let mut labels = Vec::with_capacity(numbers.len());
            for number in numbers {
                match card.option(number) {
                    Some(choice) => labels.push(choice.label.clone()),
                    None => return Reply::Invalid(Error::NoSuchNumber { number, count: card.options.len() }),
                }
            }
            Answer::choose(labels)
        }
        None => match card.options.iter().find(|c| c.label.trim().eq_ignore_ascii_case(line)) {
            Some(choice) => Answer::choose([choice.label.clone()]),
            None => Answer::text(line),
        },
    };
    match card.validate(answer) {
        Ok(answer) => Reply::Answer(answer),
        Err(e) => Reply::Invalid(e),
    }
}

/// The line as option numbers, if it is only numbers separated by commas or spaces.
fn numbers(line: &str) -> Option<Vec<usize>> {
    let tokens: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).collect();
    if tokens.is_empty() {
        return None;
    }
    tokens.iter().map(|t| t.parse::<usize>().ok()).collect()
}

/// Shows the card on `output` and reads lines from `input` until one fits.
/// End of input is a skip. Errors: reading or writing fails.
pub fn prompt<R: BufRead, W: Write>(card: &Card, mut input: R, mut output: W) -> std::io::Result<Outcome> {
    output.write_all(render_card(card).as_bytes())?;
    loop {
        output.write_all(b"> ")?;
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(Outcome::Skipped);
        }
        match parse_reply(card, &line) {
            Reply::Answer(answer) => return Ok(Outcome::Answered(answer)),
            Reply::Skip => return Ok(Outcome::Skipped),
            Reply::Invalid(e) => writeln!(output, "{e}")?,
        }
    }
}

/// Asks on the process's terminal: the card goes to stderr, the reply is read
/// from stdin. When stdin is not a terminal nobody can answer, so every
/// question is [`Outcome::Unavailable`] at once.
#[derive(Debug, Clone, Default)]
pub struct TerminalPort {
    /// How long to wait for a reply before [`Outcome::TimedOut`]; `None` waits.
    pub timeout: Option<Duration>,
}

impl TerminalPort {
    /// Whether a human can answer here (stdin is a terminal).
    pub fn is_attached() -> bool {
        std::io::stdin().is_terminal()
    }
}

impl QuestionPort for TerminalPort {
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, Result<Outcome>> {
        Box::pin(async move {
            card.check()?;
            if !TerminalPort::is_attached() {
                return Ok(Outcome::Unavailable);
            }
            let card = card.clone();
            let asking =
                tokio::task::spawn_blocking(move || prompt(&card, std::io::stdin().lock(), std::io::stderr().lock()));
            let joined = match self.timeout {
                // On timeout the blocked read is left behind; it ends with the process.
                Some(limit) => match tokio::time::timeout(limit, asking).await {
                    Ok(joined) => joined,
                    Err(_) => return Ok(Outcome::TimedOut),
                },
                None => asking.await,
            };
            // A terminal that cannot be read or written has nobody behind it.
            Ok(match joined {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(_)) | Err(_) => Outcome::Unavailable,
            })
        })
    }
}
