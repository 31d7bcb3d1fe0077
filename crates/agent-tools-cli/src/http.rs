//! `serve --http ADDR`: several runs in one process, each at its own MCP
//! streamable HTTP endpoint, `/runs/{run}/mcp` (spec `basic/transports`,
//! "Streamable HTTP"), served by rmcp's `StreamableHttpService`.
//!
//! A run is what one stdio `serve` is: its root, cap, approval, enclosure,
//! configuration, and what its tools hold (staged edits, the diagnostics
//! ledger, kernels, the debug session, workers, pending questions). Its
//! endpoint serves both generations: a 2026-07-28 request is stateless (its
//! questions come back as input-required rounds), a 2025-11-25 client gets an
//! `Mcp-Session-Id` and SSE streams for progress and `elicitation/create`.
//! Each call's questions go to the client that made it.
//!
//! Access: with a token (`AGENT_TOOLS_HOST_TOKEN`, or `--token-file`), every
//! request must carry `Authorization: Bearer TOKEN`; otherwise it gets 401
//! with `WWW-Authenticate: Bearer` (RFC 6750 §3), compared in constant time.
//! Without a token the host binds only a loopback address. A request with an
//! `Origin` header is refused with 403 (the transport spec's rule against DNS
//! rebinding: no browser page may reach a run), and a `Host` that names
//! neither loopback nor the bound address with 403 too.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::serve::Server;

/// The name of the one run `serve --http` serves when no `--run` is given.
pub const DEFAULT_RUN: &str = "default";

/// The variable that holds the host's token.
pub const TOKEN_VAR: &str = "AGENT_TOOLS_HOST_TOKEN";

/// `serve`'s HTTP flags.
#[derive(Debug, clap::Args)]
pub struct HttpArgs {
    /// Serve MCP streamable HTTP on this address (for example 127.0.0.1:7420; port 0 picks one)
    /// instead of stdio; each run's endpoint is http://ADDR/runs/RUN/mcp.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// A run to serve, as NAME=DIR (repeatable; with --http). Without one, the run `default` at --root.
    #[arg(long, value_name = "NAME=DIR", requires = "http", conflicts_with = "root")]
    pub run: Vec<RunArg>,
    /// A file whose first line is the token every request must bear (`Authorization: Bearer TOKEN`);
    /// AGENT_TOOLS_HOST_TOKEN gives it too. Without one, only a loopback address is bound.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
}

impl HttpArgs {
    /// The host's token: the first line of `--token-file`, else `AGENT_TOOLS_HOST_TOKEN`, else none.
    ///
    /// # Errors
    /// When the file cannot be read, or the token it gives is empty.
    pub fn token(&self) -> anyhow::Result<Option<String>> {
        let token = match &self.token_file {
            Some(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("cannot read the token file {}", file.display()))?;
                Some(text.lines().next().unwrap_or_default().trim().to_owned())
            }
            None => std::env::var(TOKEN_VAR).ok().map(|token| token.trim().to_owned()),
        };
        match token {
            Some(token) if token.is_empty() => {
                anyhow::bail!(
                    "the host's token is empty: put the token on the first line of the file, or in {TOKEN_VAR}"
                )
            }
            token => Ok(token),
        }
    }
}

/// One `--run NAME=DIR`.
#[derive(Debug, Clone)]
pub struct RunArg {
    pub name: String,
    pub root: PathBuf,
}

impl std::str::FromStr for RunArg {
    type Err = String;

    fn from_str(text: &str) -> Result<RunArg, String> {
        let (name, root) = text.split_once('=').ok_or_else(|| format!("`{text}` is not NAME=DIR"))?;
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && name != "."
            && name != "..";
        if !valid {
            return Err(format!("the run name `{name}` may hold only ASCII letters, digits, `-`, `_` and `.`"));
        }
        if root.is_empty() {
            return Err(format!("the run `{name}` has no directory after `=`"));
        }
        Ok(RunArg { name: name.to_owned(), root: PathBuf::from(root) })
    }
}

/// How the host listens.
pub struct Options {
    /// The address to bind.
    pub addr: SocketAddr,
    /// The token every request must bear, if any.
    pub token: Option<String>,
}

/// Serves each of `runs` (name and server) at `/runs/{name}/mcp` until Ctrl-C or SIGTERM.
///
/// # Errors
/// Two runs with one name, a non-loopback address without a token, or an address that cannot be bound.
pub async fn serve(runs: Vec<(String, Server)>, options: Options) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        anyhow::bail!(
            "refusing to serve {} without a token: any host that reaches it could run code. \
             Set {TOKEN_VAR} or --token-file, or bind a loopback address (127.0.0.1)",
            options.addr
        );
    }
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    let local = listener.local_addr()?;
    let stop = CancellationToken::new();
    let mut router = axum::Router::new();
    let mut names = std::collections::BTreeSet::new();
    for (name, server) in runs {
        anyhow::ensure!(names.insert(name.clone()), "two runs are named `{name}`: give each --run its own name");
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(allowed_hosts(local))
            .enforce_origin_validation()
            .with_cancellation_token(stop.child_token());
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
        router = router.nest_service(&format!("/runs/{name}/mcp"), service);
        crate::eprint(&format!("agent-tools: run `{name}` at http://{local}/runs/{name}/mcp"));
    }
    let token = Arc::new(options.token);
    if token.is_none() {
        tracing::warn!(%local, "no token: any local process can call this host's runs");
    }
    let router = router.layer(axum::middleware::from_fn_with_state(token, guard));
    tracing::info!(%local, runs = names.len(), "serving MCP over streamable HTTP");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            stop.cancel();
        })
        .await
        .context("the HTTP server failed")?;
    Ok(())
}

/// The `Host` values a request may carry: loopback names, and the bound address.
fn allowed_hosts(local: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].map(str::to_owned).into();
    hosts.push(local.ip().to_string());
    hosts.push(local.to_string());
    hosts
}

/// Refuses a request without the host's token (401), before it reaches a run.
async fn guard(State(token): State<Arc<Option<String>>>, request: Request, next: Next) -> Response {
    if let Some(token) = token.as_deref() {
        let bearer = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if !bearer.is_some_and(|given| same(given.trim().as_bytes(), token.as_bytes())) {
            let challenge = if bearer.is_some() { r#"Bearer error="invalid_token""# } else { "Bearer" };
            let mut response =
                (StatusCode::UNAUTHORIZED, "a valid `Authorization: Bearer TOKEN` is required\n").into_response();
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            return response;
        }
    }
    next.run(request).await
}

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_args_name_a_run_and_its_directory() {
        let run: RunArg = "api=/src/api".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((run.name.as_str(), run.root), ("api", PathBuf::from("/src/api")));
        for bad in ["api", "=/src", "a/b=/src", "..=/src", "api="] {
            assert!(bad.parse::<RunArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd") && !same(b"abc", b"ab") && !same(b"", b"a"));
    }
}
