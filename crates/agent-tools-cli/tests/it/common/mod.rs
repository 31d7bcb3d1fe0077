//! Helpers shared by the MCP tests: calling a tool through a real rmcp client and reading its text.

#![allow(dead_code, clippy::unwrap_used)]

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;

/// Calls `tool` with `args` (a JSON object) and returns the raw MCP result.
pub async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &'static str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new(tool).with_arguments(args)).await.unwrap()
}

/// The text content of a result, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}
