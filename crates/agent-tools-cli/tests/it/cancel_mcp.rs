//! Progress and cancellation through `agent-tools serve`, driven by an rmcp
//! client: progress to the call's token, none after the response; a cancelled `ask_user` withdraws its elicitation; a cancelled
//! permission card (`--ask`) means the call does not run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, ElicitRequestParams,
    ElicitResult, ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    RequestId,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A client that records progress, and a human who never answers: each
/// elicitation stays open until the server withdraws it.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    asked: Arc<Notify>,
    withdrawn: Arc<Mutex<Vec<RequestId>>>,
    gone: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.notify_one();
        context.ct.cancelled().await;
        self.withdrawn.lock().unwrap().push(context.id.clone());
        self.gone.notify_one();
        Err(ErrorData::internal_error("withdrawn", None))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }

    fn get_info(&self) -> ClientConfig {
        let elicitation = ElicitationCapability::new().with_form(FormElicitationCapability::new());
        let capabilities = ClientCapabilities::builder().enable_elicitation_with(elicitation).build();
        ClientConfig::new(capabilities, Implementation::new("test-client", "0.0.0"))
    }
}

async fn connect(client: Client, root: &Path, extra: &[&str]) -> RunningService<RoleClient, Client> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).arg("--cap").arg("exec").args(extra).env("AGENT_TOOLS_LOG", "warn");
    });
    client.serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

/// A `tools/call` request; rmcp gives every request a progress token of its own.
fn request(tool: &'static str, args: Value) -> ClientRequest {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(tool).with_arguments(args)))
}

fn eval(code: &str) -> Value {
    json!({"code": code, "description": "a step of the cancellation test"})
}

/// (A call without a token hears nothing: the TypeScript SDK test checks
/// that, since rmcp's client sends a token with every request.)
#[tokio::test]
async fn progress_goes_to_the_calls_token_and_never_after_its_response() {
    let dir = tempfile::tempdir().unwrap();
    let handler = Client::default();
    let client = connect(handler.clone(), dir.path(), &[]).await;
    let code = "import time\nprint('napping', flush=True)\ntime.sleep(3)";
    client.peer().send_request(request("eval", eval(code))).await.unwrap();
    let at_response = handler.progress.lock().unwrap().clone();
    assert!(!at_response.is_empty(), "a 3 s call with a token hears progress");
    assert!(at_response.iter().all(|p| p.progress_token == at_response[0].progress_token));
    assert!(at_response.windows(2).all(|w| w[1].progress > w[0].progress), "{at_response:?}");
    assert!(
        at_response.iter().any(|p| p.message.as_deref().is_some_and(|m| m.contains("last output: napping"))),
        "{at_response:?}"
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(handler.progress.lock().unwrap().len(), at_response.len(), "nothing after the response");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_ask_user_withdraws_its_question() {
    let dir = tempfile::tempdir().unwrap();
    let handler = Client::default();
    let client = connect(handler.clone(), dir.path(), &[]).await;
    let question = json!({"question": "Which database?", "options": [{"label": "postgres"}, {"label": "sqlite"}]});
    let handle = client
        .peer()
        .send_cancellable_request(request("ask_user", question), PeerRequestOptions::no_options())
        .await
        .unwrap();
    handler.asked.notified().await;
    handle.cancel(Some("the user pressed stop".into())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), handler.gone.notified()).await.expect("the question was withdrawn");
    assert_eq!(handler.withdrawn.lock().unwrap().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_permission_card_means_the_call_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let handler = Client::default();
    let client = connect(handler.clone(), dir.path(), &["--ask"]).await;
    let marker = dir.path().join("ran");
    let code = format!("open({:?}, 'w').write('ran')", marker.display().to_string());
    let handle = client
        .peer()
        .send_cancellable_request(request("eval", eval(&code)), PeerRequestOptions::no_options())
        .await
        .unwrap();
    handler.asked.notified().await;
    handle.cancel(None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), handler.gone.notified()).await.expect("the card was withdrawn");
    // The server still answers (a read-tier call, which needs no card), and the cell never ran.
    let after = common::call(&client, "ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await;
    assert_eq!(after.is_error, Some(false), "{}", common::text(&after));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "the cancelled call ran");
    client.cancel().await.unwrap();
}
