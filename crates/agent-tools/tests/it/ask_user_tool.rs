//! `ask_user` through a surface, with the in-process channel port: every
//! outcome as the model reads it, and registration only when wired.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use agent_tools::{QuestionWiring, Registry, Surface, Tier};
use question_port::{Answer, ChannelConfig, QuestionReceiver, channel};
use serde_json::{Value, json};

fn surface(config: ChannelConfig) -> (Surface, QuestionReceiver) {
    let (port, questions) = channel(config);
    let wiring = QuestionWiring { port: Arc::new(port), target_space: "the test conversation".into() };
    let registry = Arc::new(Registry::builder().with_question_port(wiring).build().unwrap());
    (registry.surface(Tier::Read), questions)
}

fn args() -> Value {
    json!({
        "question": "Which database?",
        "context": "the schema migration depends on it",
        "options": [{"label": "postgres", "description": "the production one"}, {"label": "sqlite"}],
        "allow_free_text": true
    })
}

/// Asks with `args`, letting `human` settle the question.
async fn ask(
    args: Value,
    human: impl FnOnce(&mut question_port::PendingQuestion) + Send + 'static,
) -> agent_tools::ToolResult {
    let (surface, mut questions) = surface(ChannelConfig::default());
    let answering = tokio::spawn(async move {
        if let Some(mut q) = questions.recv().await {
            human(&mut q);
        }
    });
    let result = surface.call("ask_user", args).await.unwrap();
    answering.await.unwrap();
    result
}

#[test]
fn registered_only_when_a_port_is_wired() {
    let registry = Arc::new(Registry::builder().build().unwrap());
    assert!(registry.spec("ask_user").is_none());
    let (surface, _questions) = surface(ChannelConfig::default());
    let spec = surface.get("ask_user").unwrap();
    assert_eq!(spec.tier, Tier::Read);
}

#[tokio::test]
async fn answered() {
    let result = ask(args(), |q| {
        assert_eq!(q.card().options.len(), 2);
        assert_eq!(q.card().context.as_deref(), Some("the schema migration depends on it"));
        q.answer(Answer::choose(["sqlite"])).unwrap();
    })
    .await;
    assert!(!result.is_error);
    assert_eq!(result.text, "the user answered: 2. sqlite");
    assert_eq!(result.structured.unwrap(), json!({"outcome": "answered", "labels": ["sqlite"], "text": null}));

    let result = ask(args(), |q| q.answer(Answer::text("duckdb")).unwrap()).await;
    assert_eq!(result.text, "the user answered: \"duckdb\"");
}

#[tokio::test]
async fn skipped_is_a_success_that_says_to_proceed() {
    let result = ask(args(), |q| q.skip().unwrap()).await;
    assert!(!result.is_error);
    assert_eq!(
        result.text,
        "the user skipped the question: proceed on an assumption you state in your reply, and do not ask this question again"
    );
    assert_eq!(result.structured.unwrap(), json!({"outcome": "skipped"}));
}

#[tokio::test]
async fn timed_out_is_an_error_that_says_to_proceed() {
    let result = ask(args(), |q| q.time_out().unwrap()).await;
    assert!(result.is_error);
    assert_eq!(
        result.text,
        "the question timed out with no answer: proceed on an assumption you state in your reply, and do not ask this question again"
    );
    let (surface, _questions) = surface(ChannelConfig { timeout: Some(Duration::from_millis(20)) });
    let result = surface.call("ask_user", args()).await.unwrap();
    assert_eq!(result.structured.unwrap(), json!({"outcome": "timed_out"}));
}

#[tokio::test]
async fn unavailable_fails_at_once() {
    let (surface, questions) = surface(ChannelConfig::default());
    drop(questions);
    let result = surface.call("ask_user", args()).await.unwrap();
    assert!(result.is_error);
    assert!(
        result.text.starts_with("no human is attached to answer questions (the test conversation); nothing was asked"),
        "{}",
        result.text
    );
    assert_eq!(result.structured.unwrap(), json!({"outcome": "unavailable"}));
}

#[tokio::test]
async fn bad_cards_and_arguments_are_errors_the_model_reads() {
    let (surface, mut questions) = surface(ChannelConfig::default());
    let cases = [
        (
            json!({"question": "Go?"}),
            "cannot ask: the card cannot be answered: it has no options and does not allow free text",
        ),
        (
            json!({"question": "Go?", "options": [{"label": "a"}, {"label": "a"}]}),
            "cannot ask: two options are labelled 'a'; labels must be distinct",
        ),
        (json!({"question": " ", "allow_free_text": true}), "cannot ask: the question is empty"),
    ];
    for (args, expected) in cases {
        let result = surface.call("ask_user", args).await.unwrap();
        assert!(result.is_error);
        assert_eq!(result.text, expected);
    }
    assert!(questions.try_recv().is_none(), "nothing was asked");
    let result = surface.call("ask_user", json!({"question": "Go?", "choices": []})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text.contains("unknown field `choices`"), "{}", result.text);
}

/// Each outcome's text and structured value, as the golden transcript.
#[tokio::test]
async fn transcript() {
    let mut transcript = crate::golden::Transcript::new(&[]);
    type Human = fn(&mut question_port::PendingQuestion);
    let humans: [Human; 4] = [
        |q| q.answer(Answer::choose(["sqlite"])).unwrap(),
        |q| q.answer(Answer::text("duckdb")).unwrap(),
        |q| q.skip().unwrap(),
        |q| q.time_out().unwrap(),
    ];
    for human in humans {
        let result = ask(args(), human).await;
        transcript.record("ask_user", &args(), &result);
    }
    let (surface, questions) = surface(ChannelConfig::default());
    drop(questions);
    let result = surface.call("ask_user", args()).await.unwrap();
    transcript.record("ask_user", &args(), &result);
    let bad = json!({"question": "Go?", "options": [{"label": "a"}, {"label": "a"}]});
    let result = surface.call("ask_user", bad.clone()).await.unwrap();
    transcript.record("ask_user", &bad, &result);
    insta::assert_snapshot!(transcript.finish());
}
