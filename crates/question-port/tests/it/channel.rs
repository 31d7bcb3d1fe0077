//! Every outcome of asking through the in-process channel port.

use std::time::Duration;

use question_port::{Answer, Card, ChannelConfig, Choice, Error, Outcome, QuestionPort, Unattended, channel};

fn card() -> Card {
    Card {
        question: "Ship it?".into(),
        context: Some("the release branch is frozen tomorrow".into()),
        options: vec![Choice::described("yes", "merge now"), Choice::new("no")],
        allow_free_text: true,
        multi_select: false,
    }
}

#[tokio::test]
async fn answered() {
    let (port, mut questions) = channel(ChannelConfig::default());
    let human = tokio::spawn(async move {
        let mut q = questions.recv().await.ok_or("no question")?;
        assert_eq!(q.card(), &card());
        q.answer(Answer::choose(["yes"])).map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    let outcome = port.ask(&card()).await;
    assert_eq!(outcome, Ok(Outcome::Answered(Answer::choose(["yes"]))));
    assert_eq!(human.await.ok(), Some(Ok(())));
}

#[tokio::test]
async fn answered_with_free_text() {
    let (port, mut questions) = channel(ChannelConfig::default());
    tokio::spawn(async move {
        if let Some(mut q) = questions.recv().await {
            let _ = q.answer(Answer::text(" after the demo "));
        }
    });
    assert_eq!(port.ask(&card()).await, Ok(Outcome::Answered(Answer::text("after the demo"))));
}

#[tokio::test]
async fn skipped() {
    let (port, mut questions) = channel(ChannelConfig::default());
    tokio::spawn(async move {
        if let Some(mut q) = questions.recv().await {
            let _ = q.skip();
        }
    });
    assert_eq!(port.ask(&card()).await, Ok(Outcome::Skipped));
}

#[tokio::test]
async fn timed_out_by_the_human_side() {
    let (port, mut questions) = channel(ChannelConfig::default());
    tokio::spawn(async move {
        if let Some(mut q) = questions.recv().await {
            let _ = q.time_out();
        }
    });
    assert_eq!(port.ask(&card()).await, Ok(Outcome::TimedOut));
}

#[tokio::test]
async fn timed_out_by_the_port() {
    let (port, mut questions) = channel(ChannelConfig { timeout: Some(Duration::from_millis(50)) });
    // The receiver is attached but nobody settles the question.
    let outcome = port.ask(&card()).await;
    assert_eq!(outcome, Ok(Outcome::TimedOut));
    let q = questions.try_recv();
    assert!(q.as_ref().is_some_and(|q| q.is_abandoned()), "the human side sees the asker gave up");
}

#[tokio::test]
async fn unavailable_when_no_receiver() {
    let (port, questions) = channel(ChannelConfig::default());
    drop(questions);
    assert!(!port.is_attached());
    // No timeout is configured: this returns only because it fails closed at once.
    assert_eq!(port.ask(&card()).await, Ok(Outcome::Unavailable));
}

#[tokio::test]
async fn unavailable_when_the_question_is_dropped() {
    let (port, mut questions) = channel(ChannelConfig::default());
    tokio::spawn(async move {
        let q = questions.recv().await;
        drop(q);
    });
    assert_eq!(port.ask(&card()).await, Ok(Outcome::Unavailable));
}

#[tokio::test]
async fn unattended_is_unavailable() {
    assert_eq!(Unattended.ask(&card()).await, Ok(Outcome::Unavailable));
}

#[tokio::test]
async fn invalid_answers_are_refused_to_the_human_and_the_question_stays_open() {
    let (port, mut questions) = channel(ChannelConfig::default());
    let human = tokio::spawn(async move {
        let mut q = questions.recv().await.ok_or(Error::AlreadySettled)?;
        let mut refusals = Vec::new();
        for bad in [Answer::choose(["maybe"]), Answer::choose(["yes", "no"]), Answer::default()] {
            refusals.push(q.answer(bad).err());
        }
        q.answer(Answer::choose(["no"]))?;
        // Settled once: later replies are refused.
        refusals.push(q.skip().err());
        Ok::<_, Error>(refusals)
    });
    assert_eq!(port.ask(&card()).await, Ok(Outcome::Answered(Answer::choose(["no"]))));
    let refusals = human.await.ok();
    assert_eq!(
        refusals,
        Some(Ok(vec![
            Some(Error::UnknownOption { label: "maybe".into(), offered: "'yes', 'no'".into() }),
            Some(Error::TooManyChoices { count: 2 }),
            Some(Error::EmptyAnswer { free_text: true }),
            Some(Error::AlreadySettled),
        ]))
    );
}

#[tokio::test]
async fn a_bad_card_is_an_error_before_anything_is_asked() {
    let (port, mut questions) = channel(ChannelConfig::default());
    let bad = Card { options: vec![], allow_free_text: false, ..card() };
    assert_eq!(port.ask(&bad).await, Err(Error::Unanswerable));
    assert!(questions.try_recv().is_none());
    assert_eq!(Unattended.ask(&bad).await, Err(Error::Unanswerable));
}

#[tokio::test]
async fn the_port_is_object_safe() {
    let (port, questions) = channel(ChannelConfig::default());
    drop(questions);
    let ports: Vec<Box<dyn QuestionPort>> = vec![Box::new(port), Box::new(Unattended)];
    for port in &ports {
        assert_eq!(port.ask(&card()).await, Ok(Outcome::Unavailable));
    }
}
