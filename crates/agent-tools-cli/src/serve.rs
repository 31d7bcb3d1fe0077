//! The MCP server: one surface of one run's registry, over stdio or as one of
//! the runs of the HTTP host ([`crate::http`]), with tools
//! listed and called by hand from the registry (our tools are dynamic, so the
//! rmcp `#[tool]` macros do not fit).
//!
//! A tool's structured value travels as `structuredContent` beside its text;
//! error results set `isError`. Staged edits live as long as the process. It
//! logs to stderr only. Each tool carries MCP annotations saying what its tier
//! means (`readOnlyHint` for read tier, `destructiveHint` where a call changes
//! files or runs code), so a client with its own approval UI can use them. By
//! default the client is the approval surface within the cap; with `--ask` the
//! surface's approval gate asks over elicitation as well. On MCP 2026-07-28
//! sessions, where a server sends no requests, both ask in rounds of
//! input-required results instead ([`crate::rounds`]).
//!
//! Progress: a `tools/call` whose `_meta` carries a `progressToken` gets
//! `notifications/progress` (MCP 2025-06-18, "Progress") from the surface's
//! paced reports: from about 2 s into the call, at least every 2 s and at
//! most twice a second, each `progress` greater than the last, and none once
//! the call has returned (each notification is written before the handler
//! returns, and so before the response). Cancellation: rmcp cancels the
//! request's token on `notifications/cancelled`; the call's future is then
//! dropped, which stops the tool's work (see each tool); rmcp sends no
//! response for a cancelled request (its answer, our error, is dropped).

use std::sync::Arc;
use std::time::Duration;

use agent_tools::{Progress, ProgressSink, Surface};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressToken, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::Peer;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};

use crate::elicit::{QuestionScope, declares_form, with_client};
use crate::mcp_shapes::{Paced, mcp_result, mcp_tool};
use crate::rounds::Rounds;
use crate::tasks::Tasks;

/// Serves `server` on stdin/stdout until the client disconnects.
pub async fn serve(server: Server) -> anyhow::Result<()> {
    tracing::info!(cap = %server.surface.cap(), tools = server.surface.list().len(), "serving MCP on stdio");
    let service = server.serve(rmcp::transport::stdio()).await?;
    let reason = service.waiting().await?;
    tracing::info!(?reason, "MCP client gone");
    Ok(())
}

/// One run's MCP server: the surface its clients see, and its calls waiting
/// for a retry (2026-07-28). Cheap to clone; clones serve the same run, so the
/// HTTP host makes one per session or stateless request.
#[derive(Clone)]
pub struct Server {
    surface: Surface,
    rounds: Arc<Rounds>,
    tasks: Arc<Tasks>,
}

impl Server {
    /// The server of a run shown through `surface`; `question_timeout` bounds how
    /// long a 2026-07-28 question waits for its retry.
    ///
    /// # Errors
    /// When the process cannot read the random key that seals `requestState`.
    pub fn new(surface: Surface, question_timeout: Duration) -> anyhow::Result<Server> {
        let rounds = Arc::new(Rounds::new(question_timeout)?);
        let tasks = Arc::new(Tasks::new(question_timeout));
        // A cell's `tool()` calls run on the kernel's task: they take the outer call's way of asking with them.
        let surface = surface.with_task_scope(Arc::new(QuestionScope));
        Ok(Server { surface, rounds, tasks })
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
            .with_server_info(Implementation::new("agent-tools", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Server-bound tools of one agent run, capped at the {} tier. Paths resolve inside the run's working directory.",
                self.surface.cap()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.surface.list().into_iter().map(mcp_tool).collect()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.surface.get(name).ok().map(mcp_tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // 2026-07-28 (no handshake): questions go back to the client as input-required results.
        if context.protocol_version().is_some_and(|version| !version.has_initialize()) {
            tracing::debug!(tool = %request.name, "call, 2026-07-28");
            let elicits = context.client_capabilities().is_some_and(|caps| declares_form(caps.elicitation.as_ref()));
            // A long call of a client that takes tasks (SEP-2663) answers at once with one.
            let tasks = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
            let args = request.arguments.clone().map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
            if tasks && request.request_state.is_none() && crate::tasks::runs_long(&request.name, &args) {
                return Ok(self.tasks.start(&self.surface, request.name.to_string(), args, elicits));
            }
            return self.rounds.call(&self.surface, request, &context, elicits).await;
        }
        let args = request.arguments.map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
        tracing::debug!(tool = %request.name, "call");
        let token = context.meta.get_progress_token();
        let (sender, reports) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let sink = token.is_some().then(|| ProgressSink::new(move |report| drop(sender.send(report))));
        // The sink (and so the sender) lives inside the call's future: once
        // the call returns, the forwarder drains what is queued and ends.
        // Its questions go to this call's client.
        let call = with_client(context.peer.clone(), self.surface.call_with_progress(&request.name, args, sink));
        let forward = forward_progress(context.peer.clone(), token, reports);
        let outcome = tokio::select! {
            (outcome, ()) = async { tokio::join!(call, forward) } => outcome,
            () = context.ct.cancelled() => {
                tracing::info!(tool = %request.name, "cancelled by the client; the call was dropped");
                return Err(ErrorData::internal_error(format!("the {} call was cancelled by the client", request.name), None));
            }
        };
        match outcome {
            Ok(result) => Ok(mcp_result(result).into()),
            Err(e) => {
                tracing::error!(tool = %request.name, error = %e, "host failure");
                Err(ErrorData::internal_error(e.to_string(), None))
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request.task_id)
    }
}

/// Sends each report as `notifications/progress` with `token`, one at a
/// time and each to the end, until the reports end.
async fn forward_progress(
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    mut reports: tokio::sync::mpsc::UnboundedReceiver<Progress>,
) {
    let Some(token) = token else { return };
    let mut paced = Paced::default();
    while let Some(report) = reports.recv().await {
        paced.send(&peer, Some(&token), report).await;
    }
}
