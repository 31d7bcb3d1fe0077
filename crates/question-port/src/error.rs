//! The crate's error type.

/// Everything that can be wrong with a card or an answer to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The card's question is empty or only whitespace.
    #[error("the question is empty")]
    EmptyQuestion,
    /// An option's label is empty or only whitespace.
    #[error("option {index} has an empty label")]
    EmptyLabel {
        /// The option's number on the card, counted from 1.
        index: usize,
    },
    /// Two options share a label, so an answer could not say which was meant.
    #[error("two options are labelled '{label}'; labels must be distinct")]
    DuplicateLabel {
        /// The label the two options share.
        label: String,
    },
    /// The card has no options and does not accept free text.
    #[error("the card cannot be answered: it has no options and does not allow free text")]
    Unanswerable,
    /// The answer names a label the card does not offer.
    #[error("'{label}' is not one of the options ({offered})")]
    UnknownOption {
        /// The label as the answer gave it.
        label: String,
        /// The card's labels, each in single quotes and joined by `, `, or
        /// `none` when the card has no options.
        offered: String,
    },
    /// The answer names the same option twice.
    #[error("'{label}' is chosen twice")]
    RepeatedChoice {
        /// The label chosen twice.
        label: String,
    },
    /// Several options chosen on a single-select card.
    #[error("only one option may be chosen, {count} were")]
    TooManyChoices {
        /// How many labels the answer gave.
        count: usize,
    },
    /// Typed text on a card that does not accept it.
    #[error("this question does not accept a typed answer; choose one of the options")]
    FreeTextNotAllowed,
    /// Neither an option nor text.
    #[error("the answer is empty: choose an option{}", if *.free_text { " or type an answer" } else { "" })]
    EmptyAnswer {
        /// Whether the card accepts free text, so the message can offer typing.
        free_text: bool,
    },
    /// A typed option number that the card does not have.
    #[error("there is no option {number}; choose a number from 1 to {count}")]
    NoSuchNumber {
        /// The number typed (options are numbered from 1).
        number: usize,
        /// How many options the card has.
        count: usize,
    },
    /// The question was already answered, skipped or given up on.
    #[error("the question is already settled")]
    AlreadySettled,
    /// The client accepted the form every time it was asked, but never with
    /// an answer that fits the card (an empty or wrong `content`): the human
    /// did not skip, the client's replies were unusable.
    #[error(
        "the client's answers did not fit the question, {attempts} times (last: {last}); the user did not skip it, and no answer was made up"
    )]
    UnfitReplies {
        /// How many times the question was asked.
        attempts: usize,
        /// Why the last reply did not fit: the message of its [`Error`], empty when
        /// there was none.
        last: String,
    },
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
