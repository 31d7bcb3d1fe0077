//! How the tools' values look in MCP, for `serve` and the request rounds and
//! tasks it hands calls to: a [`ToolSpec`] as an MCP `Tool`, a [`ToolResult`]
//! as a `CallToolResult`, and progress reports as `notifications/progress`
//! whose `progress` grows.

use agent_tools::{Progress, ToolResult, ToolSpec};
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Tool, ToolAnnotations};
use rmcp::service::Peer;

/// The `progress` values of one request's notifications: `progress` must
/// grow with every notification (MCP "Progress"), so a tool's own count is
/// used when it grows, else the last value plus one.
#[derive(Default)]
pub(crate) struct Paced {
    last: f64,
}

impl Paced {
    /// Sends `report` as `notifications/progress` with `token` (nothing without one).
    pub(crate) async fn send(&mut self, peer: &Peer<RoleServer>, token: Option<&ProgressToken>, report: Progress) {
        let Some(token) = token else { return };
        let (progress, total) = match report.progress {
            Some(progress) if progress > self.last => (progress, report.total),
            _ => (self.last + 1.0, None),
        };
        self.last = progress;
        let mut param = ProgressNotificationParam::new(token.clone(), progress).with_message(report.message);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Err(error) = peer.notify_progress(param).await {
            tracing::debug!(%error, "progress notification not sent");
        }
    }
}

/// A tool as MCP lists it: annotations from the tier and [`ToolSpec::destructive`],
/// the tier and parallel-safety in `_meta`, and the `outputSchema` of a tool
/// that returns a structured value.
pub fn mcp_tool(spec: &ToolSpec) -> Tool {
    let mut meta = serde_json::Map::new();
    meta.insert("tier".into(), spec.tier.as_str().into());
    meta.insert("parallelSafe".into(), spec.parallel_safe.into());
    let mut tool = Tool::new(spec.name, spec.description.clone(), spec.input_schema.clone())
        .with_annotations(
            ToolAnnotations::new().read_only(spec.tier == agent_tools::Tier::Read).destructive(spec.destructive),
        )
        .with_meta(rmcp::model::MetaObject(meta));
    tool.output_schema = spec.output_schema.clone().map(std::sync::Arc::new);
    tool
}

pub(crate) fn mcp_result(result: ToolResult) -> CallToolResult {
    let mut content = vec![ContentBlock::text(result.text)];
    content.extend(result.images.into_iter().map(|image| ContentBlock::image(image.data_base64, image.mime)));
    let mut out = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    out.structured_content = result.structured;
    out
}
