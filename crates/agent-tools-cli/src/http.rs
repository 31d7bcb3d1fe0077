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
//! Runs are given at start (`--run NAME=DIR`, or the root) or opened at run
//! time by the host's owner: `POST /runs` with `{"root": DIR, "cap"?: TIER}`
//! answers 201 `{"id", "url", "token"}`, a run whose own token (256 random
//! bits) is the only one that opens it; `DELETE /runs/{id}` ends its sessions
//! and its processes (204). Both need the host's token.
//!
//! Access: with a token (`AGENT_TOOLS_HOST_TOKEN`, or `--token-file`), every
//! request must carry `Authorization: Bearer TOKEN` (the host's for the runs
//! given at start and the admin API, a run's own for an opened run); otherwise
//! it gets 401 with `WWW-Authenticate: Bearer` (RFC 6750 §3). Tokens are
//! compared in constant time. Without a token the host binds only a loopback
//! address, and opens no run at run time. A request with an
//! `Origin` header is refused with 403 (the transport spec's rule against DNS
//! rebinding: no browser page may reach a run), and a `Host` that names
//! neither loopback nor the bound address (nor one of `host.allowed_hosts`,
//! where `*`, allowed only with a token, lets any through) with 403 too.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use agent_tools::{Run, Tier};
use anyhow::Context as _;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, post};
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
    /// With --host, the token of the host to open the run on.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Serve stdio as a run of the host already serving at URL (e.g. http://127.0.0.1:7420): the run is
    /// opened at --root on the host with the host's token (AGENT_TOOLS_HOST_TOKEN or --token-file), shares
    /// the host's language servers, and is closed when the client closes stdin.
    #[arg(long, value_name = "URL", conflicts_with_all = ["http", "run", "ask", "vibe"])]
    pub host: Option<String>,
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
    /// The run's name, its endpoint's `/runs/NAME/mcp`: ASCII letters, digits,
    /// `-`, `_` and `.`, not `.` or `..`.
    pub name: String,
    /// The run's root directory, as given.
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
    /// The host's token, if any: it opens the runs given at start and the admin API.
    pub token: Option<String>,
    /// How long a run opened through `POST /runs` may go with no request and no call
    /// running before it is closed (`host.run_idle_s`); `None`: never.
    pub run_idle: Option<std::time::Duration>,
    /// Further `Host` values a request may carry (`host.allowed_hosts`): a pod is reached by its
    /// service's name, which is neither loopback nor the bound address; `*` allows any.
    pub allowed_hosts: Vec<String>,
}

/// A run the host serves: its MCP server, and what ends its processes.
pub struct Served {
    /// The run's name, its endpoint's `/runs/NAME/mcp`; [`serve`] refuses two runs with one name.
    pub name: String,
    /// The MCP server over the run's surface.
    pub server: Server,
    /// The run, whose processes end when it is closed.
    pub run: Run,
}

/// Wires a run for `POST /runs`: its root and cap.
pub type Opener = Arc<dyn Fn(&Path, Tier) -> anyhow::Result<(Server, Run)> + Send + Sync>;

/// The host: its runs by id, and how to open more.
struct Host {
    runs: RwLock<HashMap<String, Entry>>,
    token: Option<String>,
    local: SocketAddr,
    /// `Options::allowed_hosts`.
    allowed_hosts: Vec<String>,
    opener: Opener,
    cap: Tier,
    stop: CancellationToken,
    next: AtomicU64,
    /// Why recent runs ended (`DELETE`, or idle), by id, for the 404 a late request gets; the last 1,024.
    ended: std::sync::Mutex<std::collections::VecDeque<(String, String)>>,
}

/// One run at `/runs/{id}/mcp`.
struct Entry {
    service: StreamableHttpService<Server, LocalSessionManager>,
    /// What a request to it must bear; `None`: nothing (a host without a token).
    token: Option<String>,
    /// Ends its sessions.
    stop: CancellationToken,
    run: Arc<Run>,
    /// Whether it was opened through `POST /runs` (and so may be closed when idle).
    opened: bool,
    /// Its requests in flight and when the last one ended.
    activity: Arc<Activity>,
}

/// A run's requests: how many are in flight (a response still streaming counts), and
/// when the last one ended.
struct Activity {
    in_flight: AtomicU64,
    last: std::sync::Mutex<std::time::Instant>,
}

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity { in_flight: AtomicU64::new(0), last: std::sync::Mutex::new(std::time::Instant::now()) })
    }

    /// Whether nothing has happened for `idle`.
    fn idle_for(&self, idle: std::time::Duration) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
            && self.last.lock().unwrap_or_else(PoisonError::into_inner).elapsed() >= idle
    }
}

/// One request in flight, until its response body has been sent or dropped.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn new(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(PoisonError::into_inner) = std::time::Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted as in flight while it streams.
struct CountedBody {
    inner: axum::body::Body,
    _in_flight: InFlight,
}

impl axum::body::HttpBody for CountedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Host {
    fn entry(&self, server: Server, run: Run, token: Option<String>) -> Entry {
        let stop = self.stop.child_token();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(allowed_hosts(self.local, &self.allowed_hosts))
            .enforce_origin_validation()
            .with_cancellation_token(stop.clone());
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
        Entry { service, token, stop, run: Arc::new(run), opened: false, activity: Activity::new() }
    }

    /// Records why run `id` ended.
    fn ended(&self, id: &str, why: String) {
        let mut ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
        if ended.len() == 1024 {
            ended.pop_front();
        }
        ended.push_back((id.to_owned(), why));
    }

    /// The 404 for a run this host does not serve: why it ended, when it served it.
    fn not_found(&self, id: &str) -> Response {
        let ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
        let text = match ended.iter().rev().find(|(ended, _)| ended == id) {
            Some((_, why)) => format!("no run `{id}` on this host: it {why}\n"),
            None => format!("no run `{id}` on this host\n"),
        };
        (StatusCode::NOT_FOUND, text).into_response()
    }

    fn url(&self, id: &str) -> String {
        format!("http://{}/runs/{id}/mcp", self.local)
    }
}

/// Serves each of `runs` at `/runs/{name}/mcp`, and the admin API (`POST /runs`,
/// `DELETE /runs/{id}`) when the host has a token, until Ctrl-C or SIGTERM; then
/// ends every run's processes. `cap` is the highest cap an opened run may have.
///
/// # Errors
/// Two runs with one name, a non-loopback address without a token, or an address that cannot be bound.
pub async fn serve(runs: Vec<Served>, options: Options, opener: Opener, cap: Tier) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        anyhow::bail!(
            "refusing to serve {} without a token: any host that reaches it could run code. \
             Set {TOKEN_VAR} or --token-file, or bind a loopback address (127.0.0.1)",
            options.addr
        );
    }
    if options.allowed_hosts.iter().any(|h| h == "*") && options.token.is_none() {
        anyhow::bail!(
            "host.allowed_hosts holds \"*\" (any Host) but the host has no token: any web page that \
             rebinds a name to this address could call its runs. Set {TOKEN_VAR} or --token-file"
        );
    }
    let run_idle = options.run_idle;
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    let local = listener.local_addr()?;
    if options.token.is_none() {
        tracing::warn!(%local, "no token: any local process can call this host's runs, and runs cannot be opened at run time");
    }
    let host = Arc::new(Host {
        runs: RwLock::default(),
        token: options.token,
        local,
        allowed_hosts: options.allowed_hosts,
        opener,
        cap,
        stop: CancellationToken::new(),
        next: AtomicU64::new(1),
        ended: std::sync::Mutex::default(),
    });
    for Served { name, server, run } in runs {
        let entry = host.entry(server, run, host.token.clone());
        let mut all = host.runs.write().unwrap_or_else(PoisonError::into_inner);
        anyhow::ensure!(!all.contains_key(&name), "two runs are named `{name}`: give each --run its own name");
        all.insert(name.clone(), entry);
        crate::eprint(&format!("agent-tools: run `{name}` at {}", host.url(&name)));
    }
    let router = axum::Router::new()
        .route("/runs", post(open))
        .route("/runs/{id}", delete(close))
        .route("/runs/{id}/mcp", any(mcp))
        .with_state(Arc::clone(&host));
    tracing::info!(%local, "serving MCP over streamable HTTP");
    if let Some(idle) = run_idle {
        tokio::spawn(close_idle_runs(Arc::clone(&host), idle));
    }
    let stop = host.stop.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            stop.cancel();
        })
        .await
        .context("the HTTP server failed")?;
    let runs: Vec<Entry> = host.runs.write().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, e)| e).collect();
    for entry in runs {
        entry.run.close().await;
    }
    Ok(())
}

/// `/runs/{id}/mcp`: the run's MCP endpoint, for a request that bears its token.
async fn mcp(State(host): State<Arc<Host>>, UrlPath(id): UrlPath<String>, request: Request) -> Response {
    let found = host
        .runs
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
        .map(|e| (e.service.clone(), e.token.clone(), Arc::clone(&e.activity)));
    let Some((mut service, token, activity)) = found else {
        return host.not_found(&id);
    };
    if let Some(refused) = unauthorized(&request, token.as_deref()) {
        return refused;
    }
    let in_flight = InFlight::new(&activity);
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = match tower_service::Service::call(&mut service, request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    };
    // A session ended by `DELETE` (spec `basic/transports`, "Session Management") is answered
    // 204 No Content: rmcp says 202, which the Python SDK logs as a failed termination.
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response.map(|inner| axum::body::Body::new(CountedBody { inner, _in_flight: in_flight }))
}

/// Closes the runs opened through `POST /runs` that have been idle for `idle`, as `DELETE` does.
async fn close_idle_runs(host: Arc<Host>, idle: std::time::Duration) {
    let every = (idle / 4).clamp(std::time::Duration::from_millis(100), std::time::Duration::from_secs(30));
    loop {
        tokio::select! {
            () = host.stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let closed: Vec<(String, Entry)> = {
            let mut runs = host.runs.write().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> =
                runs.iter().filter(|(_, e)| e.opened && e.activity.idle_for(idle)).map(|(id, _)| id.clone()).collect();
            ids.into_iter().filter_map(|id| runs.remove(&id).map(|e| (id, e))).collect()
        };
        for (id, entry) in closed {
            entry.stop.cancel();
            entry.run.close().await;
            host.ended(&id, format!("was closed after {} s with no request (host.run_idle_s)", idle.as_secs_f64()));
            tracing::info!(%id, idle_s = idle.as_secs_f64(), "run closed: idle");
        }
    }
}

/// What `POST /runs` takes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenRequest {
    /// The run's root, an existing directory.
    root: PathBuf,
    /// The run's cap; the host's by default, and never above it.
    cap: Option<Tier>,
}

/// `POST /runs`: opens a run, answering `{"id", "url", "token"}` (201).
async fn open(State(host): State<Arc<Host>>, request: Request) -> Response {
    if let Some(refused) = admin(&host, &request) {
        return refused;
    }
    let body = match axum::body::to_bytes(request.into_body(), 64 * 1024).await {
        Ok(body) => body,
        Err(e) => return bad_request(&format!("unreadable body: {e}")),
    };
    let spec: OpenRequest = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(e) => {
            return bad_request(&format!(
                "the body is not {{\"root\": DIR, \"cap\"?: \"read\"|\"write\"|\"exec\"}}: {e}"
            ));
        }
    };
    let cap = spec.cap.unwrap_or(host.cap);
    if cap > host.cap {
        return bad_request(&format!("cap {cap} is above this host's cap, {}", host.cap));
    }
    let (server, run) = match (host.opener)(&spec.root, cap) {
        Ok(opened) => opened,
        Err(e) => return bad_request(&format!("cannot open a run at {}: {e:#}", spec.root.display())),
    };
    let id = format!("r{}", host.next.fetch_add(1, Ordering::Relaxed));
    let token = match random_token() {
        Ok(token) => token,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot make a token: {e}\n")).into_response(),
    };
    let entry = Entry { opened: true, ..host.entry(server, run, Some(token.clone())) };
    host.runs.write().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), entry);
    tracing::info!(%id, root = %spec.root.display(), %cap, "run opened");
    let url = host.url(&id);
    json(StatusCode::CREATED, &serde_json::json!({ "id": id, "url": url, "token": token }))
}

/// `DELETE /runs/{id}`: ends the run's sessions and processes, and forgets it (204).
async fn close(State(host): State<Arc<Host>>, UrlPath(id): UrlPath<String>, request: Request) -> Response {
    if let Some(refused) = admin(&host, &request) {
        return refused;
    }
    let Some(entry) = host.runs.write().unwrap_or_else(PoisonError::into_inner).remove(&id) else {
        return host.not_found(&id);
    };
    entry.stop.cancel();
    entry.run.close().await;
    host.ended(&id, format!("was closed by DELETE /runs/{id}"));
    tracing::info!(%id, "run closed");
    StatusCode::NO_CONTENT.into_response()
}

/// The admin API's check: the host's token, which a host without one does not have (403).
fn admin(host: &Host, request: &Request) -> Option<Response> {
    match host.token.as_deref() {
        None => Some(
            (StatusCode::FORBIDDEN, format!("this host has no token, so runs cannot be opened or closed at run time: start it with {TOKEN_VAR} or --token-file\n"))
                .into_response(),
        ),
        Some(token) => unauthorized(request, Some(token)),
    }
}

fn bad_request(message: &str) -> Response {
    json(StatusCode::BAD_REQUEST, &serde_json::json!({ "error": message }))
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

/// A 401 for a request that does not bear `token` (none needed when `None`).
fn unauthorized(request: &Request, token: Option<&str>) -> Option<Response> {
    let token = token?;
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    if bearer.is_some_and(|given| same(given.trim().as_bytes(), token.as_bytes())) {
        return None;
    }
    let challenge = if bearer.is_some() { r#"Bearer error="invalid_token""# } else { "Bearer" };
    let mut response =
        (StatusCode::UNAUTHORIZED, "a valid `Authorization: Bearer TOKEN` is required\n").into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    Some(response)
}

/// 256 random bits, as 64 hex digits.
fn random_token() -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The `Host` values a request may carry: loopback names, the bound address, and `extra`
/// (`host.allowed_hosts`). With `*` among `extra`, none is checked: rmcp's empty list allows any.
fn allowed_hosts(local: SocketAddr, extra: &[String]) -> Vec<String> {
    if extra.iter().any(|h| h == "*") {
        return Vec::new();
    }
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].map(str::to_owned).into();
    hosts.push(local.ip().to_string());
    hosts.push(local.to_string());
    hosts.extend(extra.iter().cloned());
    hosts
}

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

pub(crate) async fn shutdown_signal() {
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
