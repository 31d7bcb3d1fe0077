//! The terminal prompt over in-memory streams: rendering, parsing, re-asking.

use expect_test::expect;
use question_port::{Answer, Card, Choice, Error, Outcome, Reply, parse_reply, prompt, render_card};

fn card(allow_free_text: bool, multi_select: bool) -> Card {
    Card {
        question: "Which runtime?".into(),
        context: Some("the worker pool depends on it".into()),
        options: vec![Choice::described("tokio", "multi-threaded"), Choice::new("smol"), Choice::new("none")],
        allow_free_text,
        multi_select,
    }
}

#[test]
fn renders_a_numbered_card() {
    expect![[r#"
        ? Which runtime?
          the worker pool depends on it
          1. tokio — multi-threaded
          2. smol
          3. none
        (type a number 1-3; or type your own answer; an empty line skips)
    "#]]
    .assert_eq(&render_card(&card(true, false)));
    expect![[r#"
        ? Which runtime?
          the worker pool depends on it
          1. tokio — multi-threaded
          2. smol
          3. none
        (type numbers 1-3, separated by commas; an empty line skips)
    "#]]
    .assert_eq(&render_card(&card(false, true)));
}

#[track_caller]
fn check(card: &Card, line: &str, expected: Reply) {
    assert_eq!(parse_reply(card, line), expected, "line {line:?}");
}

#[test]
fn parses_replies() {
    let single = card(false, false);
    check(&single, "2\n", Reply::Answer(Answer::choose(["smol"])));
    check(&single, " TOKIO ", Reply::Answer(Answer::choose(["tokio"])));
    check(&single, "", Reply::Skip);
    check(&single, "  \n", Reply::Skip);
    check(&single, "4", Reply::Invalid(Error::NoSuchNumber { number: 4, count: 3 }));
    check(&single, "0", Reply::Invalid(Error::NoSuchNumber { number: 0, count: 3 }));
    check(&single, "1,2", Reply::Invalid(Error::TooManyChoices { count: 2 }));
    check(&single, "async-std", Reply::Invalid(Error::FreeTextNotAllowed));

    let multi = card(false, true);
    check(&multi, "3, 1", Reply::Answer(Answer::choose(["none", "tokio"])));
    check(&multi, "1 2", Reply::Answer(Answer::choose(["tokio", "smol"])));
    check(&multi, "1,1", Reply::Invalid(Error::RepeatedChoice { label: "tokio".into() }));

    let free = card(true, false);
    check(&free, "async-std please", Reply::Answer(Answer::text("async-std please")));
    check(&free, "2", Reply::Answer(Answer::choose(["smol"])));
}

#[test]
fn prompt_asks_again_until_a_reply_fits() {
    let mut shown = Vec::new();
    let outcome = prompt(&card(false, false), &b"9\nwhatever\n1\n"[..], &mut shown);
    assert_eq!(outcome.ok(), Some(Outcome::Answered(Answer::choose(["tokio"]))));
    let shown = String::from_utf8_lossy(&shown);
    expect![[r#"
        ? Which runtime?
          the worker pool depends on it
          1. tokio — multi-threaded
          2. smol
          3. none
        (type a number 1-3; an empty line skips)
        > there is no option 9; choose a number from 1 to 3
        > this question does not accept a typed answer; choose one of the options
        > "#]]
    .assert_eq(&shown);
}

#[test]
fn prompt_skips_on_empty_line_and_end_of_input() {
    assert_eq!(prompt(&card(true, true), &b"\n"[..], Vec::new()).ok(), Some(Outcome::Skipped));
    assert_eq!(prompt(&card(true, true), &b""[..], Vec::new()).ok(), Some(Outcome::Skipped));
}
