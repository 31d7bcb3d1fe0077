//! `ask_user` over MCP elicitation: a [`QuestionPort`] that shows the card as a
//! form in the MCP client whose call asks it.
//!
//! The client is the one of the call: `serve` runs each call of a handshake-era
//! session inside [`with_client`], and a 2026-07-28 call inside its rounds
//! ([`crate::rounds`]), so one run served to several clients (over HTTP) asks
//! each question of the client that made the call. [`QuestionScope`] carries
//! both into the calls a cell makes from the kernel's task.
//!
//! The card becomes a form with a `choice` (single select) or `choices` (multi
//! select) field titled with the numbered options, and a `text` field where
//! free text is allowed. The client's reply maps to an outcome: accept →
//! answered (validated against the card, and asked again with the reason if it
//! does not fit; replies that never fit are an error, not a skip), decline → skipped, cancel → skipped, or timed out when the
//! client says so in the result's `_meta` (`"reason": "timeout"`). A client
//! that did not declare elicitation, or that is not connected yet, is
//! unavailable at once; a request the client fails is unavailable too. Nothing
//! here blocks without a client, and no answer is made up. A question dropped
//! before its reply (the call was cancelled, or the port's timeout ran out)
//! is withdrawn: the client is sent `notifications/cancelled` for it.

use std::sync::Arc;
use std::time::Duration;

use agent_tools::{CallerFuture, CapturedScope, TaskScope};

use question_port::{Answer, BoxFuture, Card, Outcome, QuestionPort};
use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, RequestId, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use serde_json::{Value, json};

/// How many times a reply that does not fit the card is asked again.
const ATTEMPTS: usize = 3;

tokio::task_local! {
    static CLIENT: Peer<RoleServer>;
}

/// Runs `call` with `client` as the client its questions are asked of.
pub async fn with_client<F: std::future::Future>(client: Peer<RoleServer>, call: F) -> F::Output {
    CLIENT.scope(client, call).await
}

/// The client of the call this task runs, on a handshake-era session.
fn current_client() -> Option<Peer<RoleServer>> {
    CLIENT.try_with(Peer::clone).ok()
}

/// The surface's [`TaskScope`]: a call's way of asking (its client, or its
/// rounds), carried into the calls its tool makes from another task (a cell's
/// `tool()`), so that their questions reach the human the outer call's reach.
#[derive(Debug)]
pub struct QuestionScope;

impl TaskScope for QuestionScope {
    fn capture(&self) -> Option<Arc<dyn CapturedScope>> {
        let captured = Captured { client: current_client(), asker: crate::rounds::current() };
        (captured.client.is_some() || captured.asker.is_some()).then(|| Arc::new(captured) as Arc<dyn CapturedScope>)
    }
}

struct Captured {
    client: Option<Peer<RoleServer>>,
    asker: Option<crate::rounds::Asker>,
}

impl CapturedScope for Captured {
    fn enter<'a>(&self, call: CallerFuture<'a>) -> CallerFuture<'a> {
        let call = match self.asker.clone() {
            Some(asker) => asker.enter(call),
            None => call,
        };
        match self.client.clone() {
            Some(client) => Box::pin(with_client(client, call)),
            None => call,
        }
    }
}

/// Asks through the elicitation of the client whose call asks.
#[derive(Debug, Default)]
pub struct ElicitationPort {
    timeout: Option<Duration>,
}

impl ElicitationPort {
    /// A port whose questions wait at most `timeout` (`None`: as long as the client takes).
    pub fn new(timeout: Option<Duration>) -> ElicitationPort {
        ElicitationPort { timeout }
    }
}

impl QuestionPort for ElicitationPort {
    fn ask<'a>(&'a self, card: &'a Card) -> BoxFuture<'a, question_port::Result<Outcome>> {
        Box::pin(async move {
            card.check()?;
            if let Some(asker) = crate::rounds::current() {
                return ask_in_rounds(card, &asker).await;
            }
            let Some(peer) = current_client() else { return Ok(Outcome::Unavailable) };
            let peer = &peer;
            if !declares_form_elicitation(peer) {
                return Ok(Outcome::Unavailable);
            }
            let Ok(schema) = form_schema(card) else { return Ok(Outcome::Unavailable) };
            let mut message = card_message(card);
            let mut last = String::new();
            for _ in 0..ATTEMPTS {
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: message.clone(),
                    requested_schema: schema.clone(),
                };
                let reply = match self.timeout {
                    Some(limit) => match tokio::time::timeout(limit, elicit(peer, params)).await {
                        Ok(reply) => reply,
                        Err(_) => return Ok(Outcome::TimedOut),
                    },
                    None => elicit(peer, params).await,
                };
                let Ok(reply) = reply else { return Ok(Outcome::Unavailable) };
                match outcome(card, reply) {
                    Ok(outcome) => return Ok(outcome),
                    Err(e) => {
                        last = e.to_string();
                        message = format!("{e}\n\n{}", card_message(card));
                    }
                }
            }
            // No reply that fits: nothing was answered, and nobody skipped.
            Err(question_port::Error::UnfitReplies { attempts: ATTEMPTS, last })
        })
    }
}

/// Asks `card` on a 2026-07-28 session: each form goes back to the client
/// as an input-required result, and its answer comes with the retry. A retry
/// with no answer that reads is a reply that does not fit.
async fn ask_in_rounds(card: &Card, asker: &crate::rounds::Asker) -> question_port::Result<Outcome> {
    let Ok(schema) = form_schema(card) else { return Ok(Outcome::Unavailable) };
    let mut message = card_message(card);
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        let fitted = match asker.ask(message.clone(), schema.clone()).await {
            crate::rounds::Reply::Expired => return Ok(Outcome::TimedOut),
            crate::rounds::Reply::Answer(Some(reply)) => outcome(card, reply),
            // The retry carried no `inputResponses.question` that reads as an elicitation result.
            crate::rounds::Reply::Answer(None) => {
                Err(question_port::Error::EmptyAnswer { free_text: card.allow_free_text })
            }
        };
        match fitted {
            Ok(outcome) => return Ok(outcome),
            Err(e) => {
                last = e.to_string();
                message = format!("{e}\n\n{}", card_message(card));
            }
        }
    }
    Err(question_port::Error::UnfitReplies { attempts: ATTEMPTS, last })
}

/// Sends one elicitation and waits for the reply. Dropped before the reply,
/// it withdraws the question (`notifications/cancelled` with its id), so the
/// client's form does not stay open for a call that is gone.
async fn elicit(peer: &Peer<RoleServer>, params: ElicitRequestParams) -> Result<ElicitResult, ServiceError> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let handle = peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await?;
    let mut withdraw = Withdraw { peer: peer.clone(), id: Some(handle.id.clone()) };
    let reply = handle.await_response().await;
    withdraw.id = None;
    match reply? {
        ClientResult::ElicitResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Withdraws an elicitation still pending when it is dropped.
struct Withdraw {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = "the question was withdrawn: the call that asked it was cancelled or timed out".to_owned();
        tokio::spawn(async move {
            let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason))).await;
        });
    }
}

/// Whether the client declared elicitation with forms in its handshake.
fn declares_form_elicitation(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info().is_some_and(|info| declares_form(info.capabilities.elicitation.as_ref()))
}

/// Whether a client's elicitation capability covers forms (an empty
/// `elicitation: {}` from clients of 2025-06-18 means forms).
pub fn declares_form(elicitation: Option<&rmcp::model::ElicitationCapability>) -> bool {
    elicitation.is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// The question and its context, as the form's message.
pub fn card_message(card: &Card) -> String {
    match card.context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(context) => format!("{}\n\n{context}", card.question.trim()),
        None => card.question.trim().to_owned(),
    }
}

/// The form for a card: `choice` or `choices` over the numbered options, and
/// `text` where free text is allowed.
pub fn form_schema(card: &Card) -> Result<ElicitationSchema, serde_json::Error> {
    let titled: Vec<Value> = card
        .options
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let title = match c.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
                Some(d) => format!("{}. {} — {d}", i + 1, c.label),
                None => format!("{}. {}", i + 1, c.label),
            };
            json!({ "const": c.label, "title": title })
        })
        .collect();
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    if !card.options.is_empty() {
        if card.multi_select {
            properties.insert(
                "choices".into(),
                json!({ "type": "array", "title": "Choose any", "items": { "anyOf": titled } }),
            );
        } else {
            properties.insert("choice".into(), json!({ "type": "string", "title": "Choose one", "oneOf": titled }));
        }
        if !card.allow_free_text {
            required.push(if card.multi_select { "choices" } else { "choice" });
        }
    }
    if card.allow_free_text {
        let title = if card.options.is_empty() { "Your answer" } else { "Or your own answer" };
        properties.insert("text".into(), json!({ "type": "string", "title": title }));
        if card.options.is_empty() {
            required.push("text");
        }
    }
    let schema = json!({ "type": "object", "properties": properties, "required": required });
    match schema {
        Value::Object(object) => ElicitationSchema::from_json_schema(object),
        _ => ElicitationSchema::from_json_schema(serde_json::Map::new()),
    }
}

/// The outcome of one reply, or why an accepted reply does not fit the card.
pub fn outcome(card: &Card, reply: ElicitResult) -> Result<Outcome, question_port::Error> {
    match reply.action {
        ElicitationAction::Accept => {
            let content = reply.content.unwrap_or(Value::Null);
            let mut labels: Vec<String> = Vec::new();
            if let Some(choice) = content.get("choice").and_then(Value::as_str) {
                labels.push(choice.to_owned());
            }
            if let Some(choices) = content.get("choices").and_then(Value::as_array) {
                labels.extend(choices.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            let text = content.get("text").and_then(Value::as_str).map(str::to_owned);
            card.validate(Answer { labels, text }).map(Outcome::Answered)
        }
        ElicitationAction::Decline => Ok(Outcome::Skipped),
        _ => {
            let timed_out = reply
                .meta
                .as_ref()
                .and_then(|meta| meta.0.get("reason"))
                .and_then(Value::as_str)
                .is_some_and(|reason| reason == "timeout");
            Ok(if timed_out { Outcome::TimedOut } else { Outcome::Skipped })
        }
    }
}
