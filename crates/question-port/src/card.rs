//! The question card, an answer to it, and the outcomes of asking.

/// A question for the human, rendered as a numbered card.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Card {
    /// What is asked.
    pub question: String,
    /// Why it is asked and what hangs on the answer.
    pub context: Option<String>,
    /// The choices, numbered from 1 in this order.
    pub options: Vec<Choice>,
    /// Whether a typed answer is accepted (instead of, or besides, options).
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

/// One option on a card.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Choice {
    /// What the option is called; distinct within a card. Answers name it.
    pub label: String,
    /// A longer explanation.
    pub description: Option<String>,
}

impl Choice {
    /// An option with only a label.
    pub fn new(label: impl Into<String>) -> Choice {
        Choice { label: label.into(), description: None }
    }

    /// An option with a label and a description.
    pub fn described(label: impl Into<String>, description: impl Into<String>) -> Choice {
        Choice { label: label.into(), description: Some(description.into()) }
    }
}

/// What the human chose: option labels, typed text, or both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// Labels of the chosen options, in the order chosen.
    pub labels: Vec<String>,
    /// The typed answer, if any.
    pub text: Option<String>,
}

impl Answer {
    /// An answer choosing these options.
    pub fn choose<I, S>(labels: I) -> Answer
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Answer { labels: labels.into_iter().map(Into::into).collect(), text: None }
    }

    /// An answer that is only typed text.
    pub fn text(text: impl Into<String>) -> Answer {
        Answer { labels: Vec::new(), text: Some(text.into()) }
    }
}

/// How asking ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The human answered; the answer has been validated against the card.
    Answered(Answer),
    /// The human chose not to answer.
    Skipped,
    /// Nobody answered in time.
    TimedOut,
    /// No human is attached; nothing was asked.
    Unavailable,
}

impl Card {
    /// A card with a question and nothing else; add options or allow free text.
    pub fn new(question: impl Into<String>) -> Card {
        Card { question: question.into(), ..Card::default() }
    }

    /// Checks that the card can be shown and answered: a question, non-empty
    /// distinct labels, and at least one option or free text.
    pub fn check(&self) -> crate::Result<()> {
        use crate::Error;
        if self.question.trim().is_empty() {
            return Err(Error::EmptyQuestion);
        }
        for (i, choice) in self.options.iter().enumerate() {
            if choice.label.trim().is_empty() {
                return Err(Error::EmptyLabel { index: i + 1 });
            }
            if self.options[..i].iter().any(|c| c.label == choice.label) {
                return Err(Error::DuplicateLabel { label: choice.label.clone() });
            }
        }
        if self.options.is_empty() && !self.allow_free_text {
            return Err(Error::Unanswerable);
        }
        Ok(())
    }

    /// Checks an answer against the card and returns it normalised (text
    /// trimmed; blank text dropped). Every label must be an option, named
    /// once; several only on a multi-select card; text only where free text is
    /// allowed; and something must be chosen or typed.
    pub fn validate(&self, answer: Answer) -> crate::Result<Answer> {
        use crate::Error;
        let text = answer.text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        for (i, label) in answer.labels.iter().enumerate() {
            if !self.options.iter().any(|c| &c.label == label) {
                return Err(Error::UnknownOption { label: label.clone(), offered: self.offered() });
            }
            if answer.labels[..i].contains(label) {
                return Err(Error::RepeatedChoice { label: label.clone() });
            }
        }
        if !self.multi_select && answer.labels.len() > 1 {
            return Err(Error::TooManyChoices { count: answer.labels.len() });
        }
        if text.is_some() && !self.allow_free_text {
            return Err(Error::FreeTextNotAllowed);
        }
        if answer.labels.is_empty() && text.is_none() {
            return Err(Error::EmptyAnswer { free_text: self.allow_free_text });
        }
        Ok(Answer { labels: answer.labels, text })
    }

    /// The option with this 1-based number.
    pub fn option(&self, number: usize) -> Option<&Choice> {
        number.checked_sub(1).and_then(|i| self.options.get(i))
    }

    fn offered(&self) -> String {
        if self.options.is_empty() {
            return "none".to_owned();
        }
        self.options.iter().map(|c| format!("'{}'", c.label)).collect::<Vec<_>>().join(", ")
    }
}
