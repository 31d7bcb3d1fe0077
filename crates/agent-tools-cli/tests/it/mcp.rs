//! `agent-tools serve` as a child process, driven by rmcp's client over stdio.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::json;

use crate::common::{call, text};

const APP: &str = "def foo(a):\n    return a\n\nx = foo(1)\nif x:\n    y = foo(x + 1)\n";

async fn connect(root: &Path, cap: &str) -> RunningService<RoleClient, ()> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).arg("--cap").arg(cap).env("AGENT_TOOLS_LOG", "warn");
    });
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/app.py"), APP).unwrap();
    dir
}

#[tokio::test]
async fn read_surface_lists_and_gates() {
    let dir = fixture();
    let client = connect(dir.path(), "read").await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "agent-tools");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["ast_grep", "lsp", "ask_user"]);
    assert_eq!(tools[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
    assert_eq!(tools[0].input_schema["required"], json!(["pattern"]));
    assert!(tools[0].description.as_deref().unwrap().starts_with("Structural search"));

    let refused =
        call(&client, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "language": "python"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(text(&refused), "refused: ast_edit is write tier; this surface is capped at read");
    assert_eq!(std::fs::read_to_string(dir.path().join("pkg/app.py")).unwrap(), APP);

    let found = call(&client, "ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await;
    assert_eq!(found.is_error, Some(false));
    let s = found.structured_content.clone().unwrap();
    assert_eq!(s["total"], 2);
    assert_eq!(s["context"], "statement");
    assert_eq!(
        s["matches"],
        json!([
            {"file": "pkg/app.py", "line": 4, "column": 5, "end_line": 4, "end_column": 11, "text": "foo(1)", "context": "statement",
             "captures": {"X": {"multi": false, "text": "1", "line": 4, "column": 9}}},
            {"file": "pkg/app.py", "line": 6, "column": 9, "end_line": 6, "end_column": 19, "text": "foo(x + 1)", "context": "statement",
             "captures": {"X": {"multi": false, "text": "x + 1", "line": 6, "column": 13}}},
        ])
    );
    assert!(text(&found).starts_with("2 matches (showing 2) in 1 file"), "{}", text(&found));

    let missing = call(&client, "ast_grep", json!({"pattern": "foo($X)", "path": "../"})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).starts_with("refused: path '../' escapes the working directory"), "{}", text(&missing));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn exec_surface_stages_and_accepts_an_edit() {
    let dir = fixture();
    let client = connect(dir.path(), "exec").await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "resolve",
            "lsp",
            "lsp_rename",
            "write",
            "edit",
            "apply_patch",
            "debug",
            "ask_user",
            "eval"
        ]
    );
    assert_eq!(tools[1].annotations.as_ref().unwrap().read_only_hint, Some(false));
    // What each tier means, for a client with its own approval UI: ast_edit only stages.
    let hints: Vec<(&str, Option<bool>, Option<bool>)> = tools
        .iter()
        .map(|t| {
            let a = t.annotations.as_ref().unwrap();
            (t.name.as_ref(), a.read_only_hint, a.destructive_hint)
        })
        .collect();
    assert_eq!(
        hints,
        [
            ("ast_grep", Some(true), Some(false)),
            ("ast_edit", Some(false), Some(false)),
            ("resolve", Some(false), Some(true)),
            ("lsp", Some(true), Some(false)),
            ("lsp_rename", Some(false), Some(true)),
            ("write", Some(false), Some(true)),
            ("edit", Some(false), Some(true)),
            ("apply_patch", Some(false), Some(true)),
            ("debug", Some(false), Some(true)),
            ("ask_user", Some(true), Some(false)),
            ("eval", Some(false), Some(true)),
        ]
    );

    let staged = call(&client, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "pkg"})).await;
    assert_eq!(staged.is_error, Some(true), "a directory needs a language: {}", text(&staged));
    let staged =
        call(&client, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "pkg/app.py"})).await;
    assert_eq!(staged.is_error, Some(false), "{}", text(&staged));
    let s = staged.structured_content.unwrap();
    assert_eq!((s["edit_id"].as_str(), s["replacements"].as_u64()), (Some("edit_1"), Some(2)));
    assert_eq!(std::fs::read_to_string(dir.path().join("pkg/app.py")).unwrap(), APP);

    let accepted = call(&client, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert_eq!(accepted.is_error, Some(false), "{}", text(&accepted));
    assert_eq!(accepted.structured_content.unwrap()["files"], json!(["pkg/app.py"]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/app.py")).unwrap(),
        "def foo(a):\n    return a\n\nx = bar(1)\nif x:\n    y = bar(x + 1)\n"
    );
    let bad = call(&client, "resolve", json!({"edit_id": "edit_1"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(text(&bad), "invalid arguments for resolve: missing field `action`");
    client.cancel().await.unwrap();
}

/// One server process is one run: a kernel's state lives across calls.
#[tokio::test]
async fn eval_keeps_kernel_state_across_calls() {
    let dir = fixture();
    let client = connect(dir.path(), "exec").await;
    let first =
        call(&client, "eval", json!({"code": "total = 40", "description": "set a variable in the kernel"})).await;
    assert_eq!(first.is_error, Some(false), "{}", text(&first));
    let second =
        call(&client, "eval", json!({"code": "total + 2", "description": "read the variable back from the kernel"}))
            .await;
    assert_eq!(second.is_error, Some(false), "{}", text(&second));
    assert_eq!(text(&second).trim(), "42");
    let refused = connect(dir.path(), "write").await;
    let names: Vec<String> = refused.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n == "eval"), "{names:?}");
    refused.cancel().await.unwrap();
    client.cancel().await.unwrap();
}
