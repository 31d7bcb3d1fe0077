//! `agent-tools serve --ask`: the server's own permission prompts over MCP
//! elicitation, answered by a real rmcp client; a client without elicitation
//! is denied at once; without `--ask` nothing is asked.
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::common::{call, text};

const APP: &str = "x = foo(1)\n";

/// A human behind an MCP client: replies to each elicitation from a script and
/// records the messages shown.
#[derive(Clone, Default)]
struct Human {
    replies: Arc<Mutex<VecDeque<ElicitResult>>>,
    shown: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Human {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.shown.lock().unwrap().push(message);
        }
        let reply = self.replies.lock().unwrap().pop_front();
        Ok(reply.unwrap_or_else(|| ElicitResult::new(ElicitationAction::Cancel)))
    }

    fn get_info(&self) -> ClientConfig {
        let elicitation = ElicitationCapability::new().with_form(FormElicitationCapability::new());
        let capabilities = ClientCapabilities::builder().enable_elicitation_with(elicitation).build();
        ClientConfig::new(capabilities, Implementation::new("test-human", "0.0.0"))
    }
}

fn command(root: &Path, extra: &[&str]) -> tokio::process::Command {
    command_at(root, "write", extra)
}

fn command_at(root: &Path, cap: &str, extra: &[&str]) -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).arg("--cap").arg(cap).args(extra).env("AGENT_TOOLS_LOG", "warn");
    })
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    dir
}

fn app(dir: &tempfile::TempDir) -> String {
    std::fs::read_to_string(dir.path().join("app.py")).unwrap()
}

fn choose(label: &str) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "choice": label }))
}

fn edit() -> Value {
    json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"})
}

#[tokio::test]
async fn ask_prompts_over_elicitation_and_runs_on_allow() {
    let dir = fixture();
    let human = Human {
        replies: Arc::new(Mutex::new([choose("allow for this session"), choose("allow once")].into_iter().collect())),
        ..Human::default()
    };
    let client = human.clone().serve(TokioChildProcess::new(command(dir.path(), &["--ask"])).unwrap()).await.unwrap();
    // Read tier runs without a prompt.
    let found = call(&client, "ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    assert!(human.shown.lock().unwrap().is_empty());

    let staged = call(&client, "ast_edit", edit()).await;
    assert_eq!(staged.is_error, Some(false), "{}", text(&staged));
    // Allowed for the session on app.py: staging again is not asked.
    let again = call(&client, "ast_edit", edit()).await;
    assert_eq!(again.is_error, Some(false), "{}", text(&again));
    let accepted = call(&client, "resolve", json!({"edit_id": "edit_2", "action": "accept"})).await;
    assert_eq!(accepted.is_error, Some(false), "{}", text(&accepted));
    assert_eq!(app(&dir), "x = bar(1)\n");
    let shown = human.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].starts_with("Allow ast_edit (write tier) to run?"), "{}", shown[0]);
    assert!(
        shown[1].starts_with("Allow resolve (write tier) to run?\n\nwrite edit edit_2, changing 1 file(s): app.py"),
        "{}",
        shown[1]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn ask_denies_on_deny_and_without_elicitation() {
    let dir = fixture();
    let human = Human { replies: Arc::new(Mutex::new([choose("deny")].into_iter().collect())), ..Human::default() };
    let client = human.clone().serve(TokioChildProcess::new(command(dir.path(), &["--ask"])).unwrap()).await.unwrap();
    let denied = call(&client, "ast_edit", edit()).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text(&denied).starts_with("refused: ast_edit did not run, because the user denied it"),
        "{}",
        text(&denied)
    );
    client.cancel().await.unwrap();

    // A client that declares no elicitation: nobody to ask, denied at once.
    let client = ().serve(TokioChildProcess::new(command(dir.path(), &["--ask"])).unwrap()).await.unwrap();
    let denied = call(&client, "ast_edit", edit()).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(text(&denied).contains("no human is attached"), "{}", text(&denied));
    client.cancel().await.unwrap();

    // Without --ask the client is the approval surface: nothing is asked.
    let client = ().serve(TokioChildProcess::new(command(dir.path(), &[])).unwrap()).await.unwrap();
    let staged = call(&client, "ast_edit", edit()).await;
    assert_eq!(staged.is_error, Some(false), "{}", text(&staged));
    client.cancel().await.unwrap();
    assert_eq!(app(&dir), APP);
}

/// rmcp's own client on MCP 2026-07-28 (`server/discover`, no handshake): the
/// approval card and an `ask_user` card come back as input-required results,
/// which rmcp's client answers through the same `create_elicitation` and
/// retries; a client that declares no elicitation there is nobody, denied at once.
#[tokio::test]
async fn an_rmcp_client_on_2026_07_28_answers_the_cards_by_retrying() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let dir = fixture();
    let human = Human {
        replies: Arc::new(Mutex::new([choose("allow once"), choose("deny")].into_iter().collect())),
        ..Human::default()
    };
    let modern = || ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let transport = TokioChildProcess::new(command(dir.path(), &["--ask"])).unwrap();
    let client = human.clone().serve_with_lifecycle(transport, modern()).await.unwrap();
    let staged = call(&client, "ast_edit", edit()).await;
    assert_eq!(staged.is_error, Some(false), "{}", text(&staged));
    let denied = call(&client, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text(&denied).starts_with("refused: resolve did not run, because the user denied it"), "{}", text(&denied));
    assert_eq!(app(&dir), APP);
    human.replies.lock().unwrap().push_back(choose("blue"));
    let question = json!({"question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]});
    let answered = call(&client, "ask_user", question).await;
    assert_eq!(text(&answered), "the user answered: 2. blue");
    let shown = human.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert!(shown[0].starts_with("Allow ast_edit (write tier) to run?"), "{}", shown[0]);
    client.cancel().await.unwrap();

    let transport = TokioChildProcess::new(command(dir.path(), &["--ask"])).unwrap();
    let client = ().serve_with_lifecycle(transport, modern()).await.unwrap();
    let denied = call(&client, "ast_edit", edit()).await;
    assert!(text(&denied).contains("no human is attached"), "{}", text(&denied));
    client.cancel().await.unwrap();
}

/// A cell's `tool()` call runs on the kernel's task, inside the `eval` call:
/// its approval is asked through that call's rounds on 2026-07-28, and through
/// elicitation on 2025-11-25, and the write happens once both are allowed.
#[tokio::test]
async fn a_cells_tool_call_is_asked_for_in_the_eval_call_on_both_generations() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let cell = json!({
        "language": "python",
        "code": "r = tool('write', {'path': 'from_cell.txt', 'content': 'hi\\n'})\nprint(r['path'], r['created'])",
        "description": "write a file from a cell",
    });
    let generations = [
        ("2026-07-28", ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }),
        ("2025-11-25", ClientLifecycleMode::Initialize),
    ];
    for (generation, lifecycle) in generations {
        let dir = fixture();
        let human = Human {
            replies: Arc::new(Mutex::new([choose("allow once"), choose("allow once")].into_iter().collect())),
            ..Human::default()
        };
        let transport = TokioChildProcess::new(command_at(dir.path(), "exec", &["--ask"])).unwrap();
        let client = human.clone().serve_with_lifecycle(transport, lifecycle).await.unwrap();
        let ran = call(&client, "eval", cell.clone()).await;
        assert_eq!(ran.is_error, Some(false), "{generation}: {}", text(&ran));
        assert!(text(&ran).contains("from_cell.txt True"), "{generation}: {}", text(&ran));
        assert_eq!(std::fs::read_to_string(dir.path().join("from_cell.txt")).unwrap(), "hi\n", "{generation}");
        let shown: Vec<String> =
            human.shown.lock().unwrap().iter().map(|m| m.lines().next().unwrap_or_default().to_owned()).collect();
        assert_eq!(shown, ["Allow eval (exec tier) to run?", "Allow write (write tier) to run?"], "{generation}");
        client.cancel().await.unwrap();
    }
}
