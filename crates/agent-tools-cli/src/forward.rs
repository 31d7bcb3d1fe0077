//! `serve --host URL`: a stdio MCP server whose run lives in a running host
//! (`serve --http`), for clients that only start stdio servers.
//!
//! It opens a run at its root through the host's admin API (`POST /runs`, with
//! the host's token from `AGENT_TOOLS_HOST_TOKEN` or `--token-file`), then
//! passes every JSON-RPC message between stdio and the run's streamable HTTP
//! endpoint unchanged, with rmcp's client transport on the HTTP side: both
//! protocol generations, progress, cancellation and questions work as they do
//! against the host directly. The run shares the host's language servers with
//! the host's other runs. When the client closes stdin (or on Ctrl-C or
//! SIGTERM), the run is closed (`DELETE /runs/{id}`), which ends its processes.
//!
//! The URL is plain `http://`; no TLS stack is built in. The host's flags and
//! configuration apply to the run (`--ask`, `--vibe`, its settings at the root).

use std::path::Path;

use agent_tools::Tier;
use anyhow::{Context as _, bail};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport as _};
use rmcp::{RoleClient, RoleServer};

use crate::http::TOKEN_VAR;

/// The run the host opened: `POST /runs`'s answer.
#[derive(Debug, serde::Deserialize)]
struct Opened {
    id: String,
    url: String,
    token: String,
}

/// Serves stdio as a run of the host at `host` (its base URL, e.g.
/// `http://127.0.0.1:7420`), at `root` capped at `cap` (the host's cap when `None`),
/// until the client closes stdin or a signal comes.
///
/// # Errors
/// No host answers at the URL; the host refuses the token or the run (the host's own
/// message is given); the host ends the run or goes away while serving.
pub async fn forward(host: &str, root: &Path, cap: Option<Tier>, token: Option<String>) -> anyhow::Result<()> {
    let base = host.trim_end_matches('/');
    if !base.starts_with("http://") {
        bail!("--host takes the host's base URL, http://ADDR (for example http://127.0.0.1:7420), not `{host}`");
    }
    let Some(token) = token else {
        bail!(
            "--host opens a run through the host's admin API, which needs the host's token: set {TOKEN_VAR} \
             or give --token-file, as the host was started"
        );
    };
    // The host is this machine's or reached directly; a proxy from the environment is not asked.
    let client = reqwest::Client::builder().no_proxy().build().context("cannot build the HTTP client")?;
    let opened = open(&client, base, root, cap, &token).await?;
    tracing::info!(id = %opened.id, url = %opened.url, "run opened on the host");
    let served = relay(&client, &opened).await;
    let closed = close(&client, base, &opened.id, &token).await;
    served.and(closed)
}

/// `POST /runs`: the run at `root`.
async fn open(
    client: &reqwest::Client,
    base: &str,
    root: &Path,
    cap: Option<Tier>,
    token: &str,
) -> anyhow::Result<Opened> {
    let mut body = serde_json::json!({ "root": root });
    if let Some(cap) = cap {
        body["cap"] = serde_json::json!(cap.as_str());
    }
    let response = client.post(format!("{base}/runs")).bearer_auth(token).json(&body).send().await.map_err(|e| {
        anyhow::anyhow!("no host answers at {base}: {e}; start one with `agent-tools serve --http ADDR`")
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    match status.as_u16() {
        201 => serde_json::from_str(&text)
            .with_context(|| format!("the host at {base} answered POST /runs with an unexpected body: {text}")),
        401 => bail!("the host at {base} refused the token: set {TOKEN_VAR} (or --token-file) to the host's own token"),
        _ => {
            // The host says why: its JSON `error`, or its plain text.
            let why = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
                .unwrap_or_else(|| text.trim().to_owned());
            bail!("the host at {base} did not open a run ({status}): {why}")
        }
    }
}

/// Passes messages both ways until the client closes stdin, a signal comes, or the
/// host's side ends.
async fn relay(client: &reqwest::Client, opened: &Opened) -> anyhow::Result<()> {
    let config = StreamableHttpClientTransportConfig::with_uri(opened.url.as_str()).auth_header(opened.token.as_str());
    let mut http = StreamableHttpClientTransport::with_client(client.clone(), config);
    let mut stdio = rmcp::transport::IntoTransport::<RoleServer, _, _>::into_transport(rmcp::transport::stdio());
    // A send resolves once the host has taken the message (a request: when its response
    // has come), so sends run beside the relay; their order is the client's, as each
    // waits for what it must (initialize before initialized).
    let mut sends = tokio::task::JoinSet::new();
    let ended = loop {
        tokio::select! {
            message = stdio.receive() => match message {
                Some(message) => {
                    let send = rmcp::transport::Transport::<RoleClient>::send(&mut http, message);
                    sends.spawn(send);
                }
                None => break Ok(()),
            },
            message = http.receive() => match message {
                Some(message) => {
                    if let Err(e) = stdio.send(message).await {
                        break Err(anyhow::anyhow!("cannot write to stdout: {e}"));
                    }
                }
                None => break Err(anyhow::anyhow!("the host ended the run {} (it closed its stream)", opened.id)),
            },
            Some(sent) = sends.join_next(), if !sends.is_empty() => {
                if let Ok(Err(e)) = sent {
                    tracing::warn!(error = %e, "a message could not be passed to the host");
                }
            }
            () = crate::http::shutdown_signal() => break Ok(()),
        }
    };
    sends.abort_all();
    let _ = rmcp::transport::Transport::<RoleClient>::close(&mut http).await;
    ended
}

/// `DELETE /runs/{id}`: ends the run's processes.
async fn close(client: &reqwest::Client, base: &str, id: &str, token: &str) -> anyhow::Result<()> {
    let response = client
        .delete(format!("{base}/runs/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .with_context(|| format!("cannot close the run {id} on the host at {base}"))?;
    match response.status().as_u16() {
        // 404: the host had closed it already (host.run_idle_s), which ended its processes.
        204 | 404 => Ok(()),
        status => bail!("the host at {base} did not close the run {id} ({status})"),
    }
}
