//! Card checks and answer validation, as data-driven cases.

use question_port::{Answer, Card, Choice, Error};

fn card(options: &[&str], allow_free_text: bool, multi_select: bool) -> Card {
    Card {
        question: "Which database?".to_owned(),
        context: None,
        options: options.iter().map(|l| Choice::new(*l)).collect(),
        allow_free_text,
        multi_select,
    }
}

#[track_caller]
fn check_answer(card: &Card, answer: Answer, expected: Result<Answer, Error>) {
    assert_eq!(card.validate(answer), expected);
}

#[test]
fn valid_answers_pass_normalised() {
    let single = card(&["postgres", "sqlite"], false, false);
    check_answer(&single, Answer::choose(["sqlite"]), Ok(Answer::choose(["sqlite"])));

    let multi = card(&["a", "b", "c"], false, true);
    check_answer(&multi, Answer::choose(["c", "a"]), Ok(Answer::choose(["c", "a"])));

    let free = card(&["a"], true, false);
    check_answer(&free, Answer::text("  my own  "), Ok(Answer::text("my own")));
    check_answer(
        &free,
        Answer { labels: vec!["a".into()], text: Some("and more".into()) },
        Ok(Answer { labels: vec!["a".into()], text: Some("and more".into()) }),
    );
    // Blank text beside a label is dropped, not an error.
    check_answer(&free, Answer { labels: vec!["a".into()], text: Some("  ".into()) }, Ok(Answer::choose(["a"])));
}

#[test]
fn bad_answers_are_refused() {
    let single = card(&["postgres", "sqlite"], false, false);
    check_answer(
        &single,
        Answer::choose(["mysql"]),
        Err(Error::UnknownOption { label: "mysql".into(), offered: "'postgres', 'sqlite'".into() }),
    );
    check_answer(&single, Answer::choose(["postgres", "sqlite"]), Err(Error::TooManyChoices { count: 2 }));
    check_answer(&single, Answer::text("mysql"), Err(Error::FreeTextNotAllowed));
    check_answer(&single, Answer::default(), Err(Error::EmptyAnswer { free_text: false }));
    check_answer(&single, Answer::text("   "), Err(Error::EmptyAnswer { free_text: false }));
    // Labels match exactly: a near miss is not an option.
    check_answer(
        &single,
        Answer::choose(["Postgres"]),
        Err(Error::UnknownOption { label: "Postgres".into(), offered: "'postgres', 'sqlite'".into() }),
    );

    let multi = card(&["a", "b"], true, true);
    check_answer(&multi, Answer::choose(["a", "a"]), Err(Error::RepeatedChoice { label: "a".into() }));
    check_answer(&multi, Answer::default(), Err(Error::EmptyAnswer { free_text: true }));

    let text_only = card(&[], true, false);
    check_answer(
        &text_only,
        Answer::choose(["x"]),
        Err(Error::UnknownOption { label: "x".into(), offered: "none".into() }),
    );
}

#[test]
fn bad_cards_are_refused() {
    let cases: &[(Card, Result<(), Error>)] = &[
        (card(&["a"], false, false), Ok(())),
        (card(&[], true, false), Ok(())),
        (Card { question: "  ".into(), ..card(&["a"], false, false) }, Err(Error::EmptyQuestion)),
        (card(&["a", " "], false, false), Err(Error::EmptyLabel { index: 2 })),
        (card(&["a", "b", "a"], false, false), Err(Error::DuplicateLabel { label: "a".into() })),
        (card(&[], false, false), Err(Error::Unanswerable)),
    ];
    for (card, expected) in cases {
        assert_eq!(&card.check(), expected, "{card:?}");
    }
}

#[test]
fn error_messages_are_lowercase_without_trailing_period() {
    let errors = [
        Error::EmptyQuestion,
        Error::EmptyLabel { index: 1 },
        Error::DuplicateLabel { label: "a".into() },
        Error::Unanswerable,
        Error::UnknownOption { label: "x".into(), offered: "'a'".into() },
        Error::RepeatedChoice { label: "a".into() },
        Error::TooManyChoices { count: 2 },
        Error::FreeTextNotAllowed,
        Error::EmptyAnswer { free_text: true },
        Error::NoSuchNumber { number: 4, count: 3 },
        Error::AlreadySettled,
    ];
    for e in errors {
        let message = e.to_string();
        assert!(!message.ends_with('.'), "{message}");
        let first = message.chars().next().unwrap_or('x');
        assert!(!first.is_uppercase(), "{message}");
    }
}
