//! Long calls as tasks (MCP 2026-07-28's Tasks extension, SEP-2663), driven by rmcp's
//! own client, which declares the extension: a cell runs as a task polled to its
//! result, with its progress as the status message; an approval card of `serve --ask`
//! waits as `input_required` until `tasks/update` answers it; `tasks/cancel` ends a
//! runaway cell; and no task is ever given to a client that did not declare the
//! extension, on either generation.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability, GetTaskParams, Implementation,
    ProtocolVersion, UpdateTaskParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

/// A client that declares the Tasks extension (or not) and form elicitation; it answers no
/// elicitation itself: a task's questions are answered with `tasks/update`.
#[derive(Clone)]
struct TaskClient {
    tasks: bool,
}

impl ClientHandler for TaskClient {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Cancel))
    }

    fn get_info(&self) -> ClientConfig {
        let elicitation = ElicitationCapability::new().with_form(FormElicitationCapability::new());
        let builder = ClientCapabilities::builder().enable_elicitation_with(elicitation);
        let capabilities = if self.tasks { builder.enable_tasks().build() } else { builder.build() };
        ClientConfig::new(capabilities, Implementation::new("task-client", "0.0.0"))
    }
}

type Client = RunningService<RoleClient, TaskClient>;

async fn client(root: &std::path::Path, tasks: bool, lifecycle: ClientLifecycleMode, extra: &[&str]) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.args(["serve", "--cap", "exec", "--root"]).arg(root).args(extra).env("AGENT_TOOLS_LOG", "warn");
    });
    TaskClient { tasks }.serve_with_lifecycle(TokioChildProcess::new(command).unwrap(), lifecycle).await.unwrap()
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

async fn call_once(client: &Client, tool: &'static str, args: Value) -> CallToolResponse {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    client.call_tool_once(CallToolRequestParams::new(tool).with_arguments(args)).await.unwrap()
}

/// `tasks/get` as JSON, the wire shape (`status`, `statusMessage`, `inputRequests`, `result`, …).
async fn get(client: &Client, id: &str) -> Value {
    serde_json::to_value(client.get_task(GetTaskParams::new(id)).await.unwrap()).unwrap()
}

/// Polls until the task's status is not `working` (bounded: a stuck task fails the test),
/// with every status message seen on the way.
async fn settle(client: &Client, id: &str) -> (Value, Vec<String>) {
    let mut messages = Vec::new();
    for _ in 0..600 {
        let task = get(client, id).await;
        if let Some(message) = task["statusMessage"].as_str()
            && messages.last().is_none_or(|last: &String| last != message)
        {
            messages.push(message.to_owned());
        }
        if task["status"] != "working" {
            return (task, messages);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the task {id} was still working after 60 s: {messages:?}");
}

fn task_id(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(task) => task.task.task_id,
        other => panic!("a long call of a client that takes tasks answers with a task, not {other:?}"),
    }
}

fn result_text(task: &Value) -> String {
    task["result"]["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect()
}

#[tokio::test]
async fn a_cell_runs_as_a_task_whose_status_carries_its_progress() {
    let dir = tempfile::tempdir().unwrap();
    let client = client(dir.path(), true, modern(), &[]).await;
    let code = "import time\nfor i in range(5):\n    print(i, flush=True)\n    time.sleep(1)\n'done'";
    let response =
        call_once(&client, "eval", json!({"language": "python", "code": code, "description": "count"})).await;
    let id = task_id(response);
    let (task, messages) = settle(&client, &id).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["isError"], false, "{task}");
    assert_eq!(result_text(&task), "0\n1\n2\n3\n4\n'done'\n", "{task}");
    // The first message is the task's own; the cell's progress (its printed lines) follows.
    assert_eq!(messages.first().map(String::as_str), Some("eval is running"), "{messages:?}");
    assert!(messages.len() >= 2, "the cell's progress reached the status: {messages:?}");
    // A short call is no task: it answers as always.
    let response = call_once(&client, "ast_grep", json!({"pattern": "x", "language": "python"})).await;
    assert!(matches!(response, CallToolResponse::Complete(_)), "{response:?}");
    // An id this run never gave is an error, not an empty task.
    let unknown = client.get_task(GetTaskParams::new("not-a-task")).await.unwrap_err().to_string();
    assert!(unknown.contains("not-a-task"), "{unknown}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_approval_in_a_task_waits_as_input_required_until_tasks_update_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), "x = foo(1)\n").unwrap();
    let client = client(dir.path(), true, modern(), &["--ask"]).await;
    let edit = json!({"pattern": "foo($A)", "rewrite": "bar($A)", "language": "python"});
    let id = task_id(call_once(&client, "ast_edit", edit).await);
    let (task, _) = settle(&client, &id).await;
    assert_eq!(task["status"], "input_required", "{task}");
    let requests = task["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["question-1"], "{task}");
    let message = requests["question-1"]["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("Allow ast_edit (write tier) to run?"), "{message}");
    let answer = json!({"action": "accept", "content": {"choice": "allow once"}});
    let responses = [("question-1".to_owned(), answer)].into_iter().collect();
    client.update_task(UpdateTaskParams::new(id.clone(), responses)).await.unwrap();
    let (task, _) = settle(&client, &id).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert!(result_text(&task).contains("bar(1)"), "{task}");
    assert_eq!(task["result"]["structuredContent"]["replacements"], 1, "{task}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tasks_cancel_ends_a_runaway_cell_and_the_task_says_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let client = client(dir.path(), true, modern(), &[]).await;
    let start = json!({"language": "python", "code": "import os\nos.getpid()", "description": "pid"});
    let id = task_id(call_once(&client, "eval", start).await);
    let (task, _) = settle(&client, &id).await;
    let pid: i32 = result_text(&task).trim().parse().unwrap_or_else(|e| panic!("{e}: {task}"));
    let spin = json!({"language": "python", "code": "while True:\n    pass", "description": "spin"});
    let id = task_id(call_once(&client, "eval", spin).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(get(&client, &id).await["status"], "working");
    client.cancel_task(CancelTaskParams::new(id.clone())).await.unwrap();
    let (task, _) = settle(&client, &id).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    // The cell was stopped as a cancelled request's is: the kernel answers again, the same process.
    let after = json!({"language": "python", "code": "import os\nos.getpid()", "description": "pid again"});
    let id = task_id(call_once(&client, "eval", after).await);
    let (task, _) = settle(&client, &id).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["structuredContent"]["previous_cancelled"], "interrupted", "{task}");
    assert_eq!(result_text(&task).lines().last(), Some(pid.to_string().as_str()), "{task}");
    client.cancel().await.unwrap();
}

/// No task for a client that did not declare the extension on 2026-07-28, nor for a
/// 2025-11-25 session that declares it (the extension is 2026-07-28's).
#[tokio::test]
async fn no_task_for_a_client_that_did_not_declare_tasks_nor_on_2025_11_25() {
    let dir = tempfile::tempdir().unwrap();
    let cell = json!({"language": "python", "code": "6 * 7", "description": "answer"});
    for (what, tasks, lifecycle) in
        [("2026-07-28 without tasks", false, modern()), ("2025-11-25", true, ClientLifecycleMode::Initialize)]
    {
        let client = client(dir.path(), tasks, lifecycle, &[]).await;
        match call_once(&client, "eval", cell.clone()).await {
            CallToolResponse::Complete(result) => {
                assert_eq!(crate::common::text(&result).trim(), "42", "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
        client.cancel().await.unwrap();
    }
}

/// Over HTTP, a task is its run's: another run of the same host knows none of its ids,
/// and its `tasks/cancel` changes nothing.
#[tokio::test]
async fn a_task_of_one_run_is_unknown_to_another_run_of_the_host() {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let runs = [format!("a={}", a.path().display()), format!("b={}", b.path().display())];
    let host = crate::http_mcp::start(&["--cap", "exec", "--run", &runs[0], "--run", &runs[1]], 2);
    let connect = |url: &str| {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(crate::http_mcp::TOKEN);
        let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
        TaskClient { tasks: true }.serve_with_lifecycle(transport, modern())
    };
    let (run_a, run_b) = (connect(&host.urls["a"]).await.unwrap(), connect(&host.urls["b"]).await.unwrap());
    let cell = json!({"language": "python", "code": "import time\ntime.sleep(2)\n'a'", "description": "wait"});
    let id = task_id(call_once(&run_a, "eval", cell).await);
    let unknown = run_b.get_task(GetTaskParams::new(id.clone())).await.unwrap_err().to_string();
    assert!(unknown.contains(&format!("unknown task: {id}")), "{unknown}");
    let cancelled = run_b.cancel_task(CancelTaskParams::new(id.clone())).await.unwrap_err().to_string();
    assert!(cancelled.contains(&format!("unknown task: {id}")), "{cancelled}");
    let (task, _) = settle(&run_a, &id).await;
    assert_eq!((&task["status"], result_text(&task).trim()), (&json!("completed"), "'a'"), "{task}");
    run_a.cancel().await.unwrap();
    run_b.cancel().await.unwrap();
}
