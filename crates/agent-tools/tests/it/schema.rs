//! What a model sees: the full schema listing at cap exec, snapshotted so any
//! change shows in review, and checked for constructs some providers refuse.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_tools::{AstmatchWiring, QuestionWiring, Registry, Tier, Workspace};
use serde_json::Value;

fn listing() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let kernels = agent_tools::KernelWiring::new(Arc::new(kernel::Kernels::new(kernel::KernelConfig::new(dir.path()))));
    let question = QuestionWiring { port: Arc::new(question_port::Unattended), target_space: "nowhere".into() };
    let runner =
        vibe_roster::CommandRunner::new(vibe_roster::CommandConfig::same(vibe_roster::CommandSpec::shell("cat")));
    let roster = vibe_roster::Roster::new(Arc::new(runner), vibe_roster::RosterConfig::default());
    let supervisor = Arc::new(lsp_supervisor::Supervisor::new(lsp_supervisor::SupervisorConfig::new(workspace.root())));
    let registry = Arc::new(
        Registry::builder()
            .with_astmatch(AstmatchWiring::new(workspace.clone()))
            .with_lsp(agent_tools::LspWiring::new(Arc::clone(&supervisor), workspace.clone()))
            .with_checked_file_tools(
                workspace.clone(),
                Arc::new(agent_tools::DiagnosticsOnWrite::new(supervisor, workspace.clone())),
            )
            .with_kernels(kernels)
            .with_debug(agent_tools::DebugWiring::new(
                Arc::new(dap_session::DebugSupervisor::new(dap_session::DebugConfig::default())),
                workspace.clone(),
                "schema",
            ))
            .with_question_port(question)
            .with_vibe_roster(roster)
            .build()
            .unwrap(),
    );
    serde_json::to_value(registry.surface(Tier::Exec).list()).unwrap()
}

#[test]
fn schema_listing_at_cap_exec() {
    insta::assert_json_snapshot!(listing());
}

/// Every key anywhere in a JSON value.
fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (k, v) in object {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn no_schema_has_refs_or_definitions() {
    let listing = listing();
    for tool in listing.as_array().unwrap() {
        let mut found = Vec::new();
        keys(&tool["input_schema"], &mut found);
        for banned in ["$ref", "definitions", "$defs", "$schema"] {
            assert!(!found.iter().any(|k| k == banned), "{} has {banned}", tool["name"]);
        }
        assert_eq!(tool["input_schema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(tool["input_schema"]["additionalProperties"], false, "{}", tool["name"]);
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{} has no description", tool["name"]);
    }
}
