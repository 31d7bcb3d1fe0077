//! `ask_user` over MCP elicitation, and the `vibe_*` tools in `serve --vibe`:
//! `agent-tools serve` as a child process, driven by real rmcp clients. One
//! client declares elicitation and answers accept, decline or cancel as
//! scripted; one does not declare it.
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, MetaObject,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::common::{call, text};

/// A human behind an MCP client: replies to each elicitation from a script
/// and records what it was shown.
#[derive(Clone, Default)]
struct Human {
    replies: Arc<Mutex<VecDeque<ElicitResult>>>,
    shown: Arc<Mutex<Vec<(String, Value)>>>,
    /// Declares `elicitation: {}` (2025-06-18 style) instead of `{form: {}}`.
    bare_capability: bool,
}

impl Human {
    fn replying(replies: impl IntoIterator<Item = ElicitResult>) -> Human {
        Human { replies: Arc::new(Mutex::new(replies.into_iter().collect())), ..Human::default() }
    }

    fn shown(&self) -> Vec<(String, Value)> {
        self.shown.lock().unwrap().clone()
    }
}

impl ClientHandler for Human {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request {
            self.shown.lock().unwrap().push((message, serde_json::to_value(requested_schema).unwrap()));
        }
        let reply = self.replies.lock().unwrap().pop_front();
        Ok(reply.unwrap_or_else(|| ElicitResult::new(ElicitationAction::Cancel)))
    }

    fn get_info(&self) -> ClientConfig {
        let elicitation = if self.bare_capability {
            ElicitationCapability::new()
        } else {
            ElicitationCapability::new().with_form(FormElicitationCapability::new())
        };
        let capabilities = ClientCapabilities::builder().enable_elicitation_with(elicitation).build();
        ClientConfig::new(capabilities, Implementation::new("test-human", "0.0.0"))
    }
}

fn command(root: &Path, extra: &[&str]) -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).arg("--cap").arg("read").args(extra).env("AGENT_TOOLS_LOG", "warn");
    })
}

async fn connect<H: ClientHandler>(handler: H, root: &Path, extra: &[&str]) -> RunningService<RoleClient, H> {
    handler.serve(TokioChildProcess::new(command(root, extra)).unwrap()).await.unwrap()
}

fn question() -> Value {
    json!({
        "question": "Which database?",
        "context": "the migration depends on it",
        "options": [{"label": "postgres", "description": "the production one"}, {"label": "sqlite"}],
        "allow_free_text": true
    })
}

fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

/// Asks `question()` of a client replying with `replies`; returns the result and what the client was shown.
async fn ask(human: Human, args: Value) -> (CallToolResult, Vec<(String, Value)>) {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(human.clone(), dir.path(), &[]).await;
    let result = call(&client, "ask_user", args).await;
    client.cancel().await.unwrap();
    (result, human.shown())
}

#[tokio::test]
async fn accept_is_answered_and_the_card_is_a_form() {
    let (result, shown) = ask(Human::replying([accept(json!({"choice": "sqlite"}))]), question()).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "the user answered: 2. sqlite");
    assert_eq!(result.structured_content.unwrap(), json!({"outcome": "answered", "labels": ["sqlite"], "text": null}));

    assert_eq!(shown.len(), 1);
    let (message, schema) = &shown[0];
    assert_eq!(message, "Which database?\n\nthe migration depends on it");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["choice"]["oneOf"],
        json!([{"const": "postgres", "title": "1. postgres — the production one"}, {"const": "sqlite", "title": "2. sqlite"}])
    );
    assert_eq!(schema["properties"]["text"]["type"], "string");
}

#[tokio::test]
async fn accept_with_free_text_and_multi_select() {
    let (result, _) = ask(Human::replying([accept(json!({"text": "duckdb"}))]), question()).await;
    assert_eq!(text(&result), "the user answered: \"duckdb\"");

    let mut multi = question();
    multi["multi_select"] = json!(true);
    multi["allow_free_text"] = json!(false);
    let (result, shown) = ask(Human::replying([accept(json!({"choices": ["sqlite", "postgres"]}))]), multi).await;
    assert_eq!(text(&result), "the user answered: 2. sqlite, 1. postgres");
    assert_eq!(shown[0].1["properties"]["choices"]["type"], "array");
    assert_eq!(shown[0].1["required"], json!(["choices"]));
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_asked_again_with_the_reason() {
    let human = Human::replying([accept(json!({"choice": "mysql"})), accept(json!({"choice": "postgres"}))]);
    let mut strict = question();
    strict["allow_free_text"] = json!(false);
    let (result, shown) = ask(human, strict).await;
    assert_eq!(text(&result), "the user answered: 1. postgres");
    assert_eq!(shown.len(), 2);
    assert!(
        shown[1].0.starts_with("'mysql' is not one of the options ('postgres', 'sqlite')\n\nWhich database?"),
        "{}",
        shown[1].0
    );
}

/// A client that accepts with content that never fits (empty, as some
/// clients send) is an error that says so: the human did not skip.
#[tokio::test]
async fn replies_that_never_fit_are_an_error_not_a_skip() {
    let human = Human::replying([accept(json!({})), accept(json!({})), accept(json!({}))]);
    let mut strict = question();
    strict["allow_free_text"] = json!(false);
    let (result, shown) = ask(human, strict).await;
    assert_eq!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(shown.len(), 3);
    assert!(
        text(&result).starts_with("the client's answers did not fit the question, 3 times (last: the answer is empty"),
        "{}",
        text(&result)
    );
    assert!(text(&result).ends_with("the user did not skip it, and no answer was made up"), "{}", text(&result));
}

#[tokio::test]
async fn decline_is_skipped() {
    let (result, _) = ask(Human::replying([ElicitResult::new(ElicitationAction::Decline)]), question()).await;
    assert_eq!(result.is_error, Some(false));
    assert!(text(&result).starts_with("the user skipped the question: proceed on an assumption"), "{}", text(&result));
    assert_eq!(result.structured_content.unwrap(), json!({"outcome": "skipped"}));
}

#[tokio::test]
async fn cancel_is_skipped_or_timed_out_as_the_client_reports() {
    let (result, _) = ask(Human::replying([ElicitResult::new(ElicitationAction::Cancel)]), question()).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content.unwrap(), json!({"outcome": "skipped"}));

    let mut meta = serde_json::Map::new();
    meta.insert("reason".into(), json!("timeout"));
    let timed_out = ElicitResult::new(ElicitationAction::Cancel).with_meta(MetaObject(meta));
    let (result, _) = ask(Human::replying([timed_out]), question()).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).starts_with("the question timed out with no answer: proceed on an assumption"),
        "{}",
        text(&result)
    );
}

#[tokio::test]
async fn a_bare_elicitation_capability_means_forms() {
    let human = Human { bare_capability: true, ..Human::replying([accept(json!({"choice": "postgres"}))]) };
    let (result, _) = ask(human, question()).await;
    assert_eq!(text(&result), "the user answered: 1. postgres");
}

#[tokio::test]
async fn a_client_without_elicitation_is_unavailable_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect((), dir.path(), &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ask_user"), "ask_user is listed: the port is wired");
    let result = call(&client, "ask_user", question()).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).starts_with("no human is attached to answer questions (the MCP client); nothing was asked"),
        "{}",
        text(&result)
    );
    assert_eq!(result.structured_content.unwrap(), json!({"outcome": "unavailable"}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn vibe_tools_only_in_vibe_mode() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect((), dir.path(), &[]).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n.starts_with("vibe_")), "{names:?}");
    client.cancel().await.unwrap();

    let client = connect((), dir.path(), &["--vibe", "--vibe-fast-cmd", "tr a-z A-Z", "--vibe-good-cmd", "rev"]).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    for tool in ["vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"] {
        assert!(names.iter().any(|n| n == tool), "{tool} at cap read: {names:?}");
    }
    let spawned = call(&client, "vibe_spawn", json!({"brief": "hello", "label": "shout"})).await;
    assert_eq!(spawned.is_error, Some(false), "{}", text(&spawned));
    let waited = call(&client, "vibe_wait", json!({"worker_id": "w1"})).await;
    assert_eq!(waited.structured_content.unwrap()["last_result"], "HELLO");
    call(&client, "vibe_spawn", json!({"brief": "abc", "label": "backwards", "tier": "good"})).await;
    let waited = call(&client, "vibe_wait", json!({"worker_id": "w2"})).await;
    assert_eq!(waited.structured_content.unwrap()["last_result"], "cba");
    client.cancel().await.unwrap();
}

#[test]
fn vibe_without_a_worker_command_is_refused() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["serve", "--vibe"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--vibe needs a worker command"), "{stderr}");
}

#[test]
fn call_ask_user_without_a_terminal_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["call", "ask_user", &question().to_string(), "--root"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "the tool reported an error");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("no human is attached to answer questions (the terminal)"), "{stdout}");
}
