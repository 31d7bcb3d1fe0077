//! The debug supervisor of a run: one session per conversation, each with a
//! hard TTL, and each conversation's breakpoints (which may be set before a
//! session starts and are sent when it does).
//!
//! A second `launch` or `attach` while a session is live is refused, never a
//! silent replacement; a session that has ended stays readable (`status`,
//! `output`) until the next start replaces it.
//!
//! A start holds the conversation's slot only through the adapter's start-up. The
//! first run (to the first stop, or a while for an attach) is waited for with the
//! session in its slot and its TTL armed, so `status`, `terminate` and the TTL
//! reach it meanwhile, and the wait returns as soon as any of them ends it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dap_types::requests::{Attach, Launch, Request as _};
use serde_json::{Value, json};

use crate::adapter::{self, AdapterId, AdapterReport, Detection};
use crate::error::{Error, Result};
use crate::session::{Limits, Open, Reach, Resume, Session};
use crate::types::{
    Capped, FileBreakpoints, Frame, Output, RunOutcome, ScopeInfo, Start, Started, Status, Terminated, ThreadInfo,
    Value as VarValue,
};

/// How the supervisor runs sessions.
#[derive(Debug, Clone)]
pub struct DebugConfig {
    /// A session's hard lifetime; when it runs out the session is terminated and the adapter killed. Default 30 minutes.
    pub ttl: Duration,
    /// The timeouts, caps and limits of each session.
    pub limits: Limits,
    /// Which adapters exist besides the built-in ones (and changes to those), and where they are looked for (search path, debugpy's python).
    pub detection: Detection,
    /// Extra environment for adapter processes.
    pub env: Vec<(String, String)>,
    /// Where adapters (and so the programs they start) and `cargo test --no-run` run; `None` is
    /// the host. An enclosure that is not available fails the launch; nothing runs unenclosed.
    pub enclosure: Option<enclosure::Enclosure>,
}

impl Default for DebugConfig {
    fn default() -> DebugConfig {
        DebugConfig {
            ttl: Duration::from_secs(30 * 60),
            limits: Limits::default(),
            detection: Detection { probe_timeout: Duration::from_secs(10), ..Detection::default() },
            env: Vec::new(),
            enclosure: None,
        }
    }
}

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// The run's working directory: markers are looked for here, and the program runs here unless `cwd` says otherwise.
    pub root: PathBuf,
    /// Absolute path of the program (a script for debugpy, a binary for lldb, a binary, `.go` file or package
    /// directory for delve; with `test`, the package directory or one of its `_test.go` files). Unused with `module`.
    pub program: PathBuf,
    /// The program's arguments (the module's, with `module`).
    pub args: Vec<String>,
    /// `None` infers it from the program, or takes the one usable adapter.
    pub adapter: Option<AdapterId>,
    /// A Python module to run as `python -m` does (`pytest`, with the test as an argument), instead of `program`.
    pub module: Option<String>,
    /// Run tests: a Go package's under delve's `test` mode (`args` go to the test binary: `-test.run`, …);
    /// a Rust package's built by `cargo test --no-run`, the test binary built from `program` (a source
    /// file such as `src/lib.rs` or `tests/x.rs`, or the only one) run by lldb (`args`: the test's name, `--exact`).
    pub test: bool,
    /// Where the program runs; `None` is the root.
    pub cwd: Option<PathBuf>,
    /// Extra environment variables of the program.
    pub env: Vec<(String, String)>,
}

impl LaunchSpec {
    /// A launch of `program` at `root` with no arguments, the adapter inferred.
    pub fn new(root: impl Into<PathBuf>, program: impl Into<PathBuf>) -> LaunchSpec {
        LaunchSpec {
            root: root.into(),
            program: program.into(),
            args: Vec::new(),
            adapter: None,
            module: None,
            test: false,
            cwd: None,
            env: Vec::new(),
        }
    }

    fn cwd(&self) -> &Path {
        self.cwd.as_deref().unwrap_or(&self.root)
    }

    fn env_object(&self) -> Value {
        Value::Object(self.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
    }
}

/// What to attach to.
#[derive(Debug, Clone)]
pub struct AttachSpec {
    /// The run's working directory, where adapters' markers are looked for.
    pub root: PathBuf,
    /// The debug server's host name or address; unused with `pid`.
    pub host: String,
    /// The debuggee's debug server port (debugpy `--listen`, a headless delve, a gdb-remote stub for lldb);
    /// unused with `pid`.
    pub port: u16,
    /// `None` takes the one usable adapter at `root`.
    pub adapter: Option<AdapterId>,
    /// A local process to attach to by id instead (lldb; delve's `local` attach), as `lldb -p` does.
    pub pid: Option<u32>,
}

impl AttachSpec {
    /// An attach to the debug server on 127.0.0.1:`port`, the adapter chosen as the one usable.
    pub fn port(root: impl Into<PathBuf>, port: u16) -> AttachSpec {
        AttachSpec { root: root.into(), host: "127.0.0.1".into(), port, adapter: None, pid: None }
    }

    /// An attach to the local process `pid`.
    pub fn pid(root: impl Into<PathBuf>, pid: u32) -> AttachSpec {
        AttachSpec { pid: Some(pid), ..AttachSpec::port(root, 0) }
    }
}

#[derive(Default)]
struct Conversation {
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<u64>>>,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
}

/// The debug sessions of one run, by conversation id.
pub struct DebugSupervisor {
    config: DebugConfig,
    conversations: Mutex<HashMap<String, Arc<Conversation>>>,
}

impl std::fmt::Debug for DebugSupervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugSupervisor").field("config", &self.config).finish_non_exhaustive()
    }
}

impl DebugSupervisor {
    /// A supervisor with no session and no breakpoint yet.
    pub fn new(config: DebugConfig) -> DebugSupervisor {
        DebugSupervisor { config, conversations: Mutex::new(HashMap::new()) }
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &DebugConfig {
        &self.config
    }

    fn conversation(&self, id: &str) -> Arc<Conversation> {
        let mut conversations = self.conversations.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(conversations.entry(id.to_owned()).or_default())
    }

    async fn session(&self, conversation: &str) -> Result<Arc<Session>> {
        self.conversation(conversation).session.lock().await.clone().ok_or(Error::NoSession)
    }

    /// Every adapter and whether it is usable at `root`, with the reason.
    pub async fn adapters(&self, root: &Path) -> Vec<AdapterReport> {
        adapter::detect_all(root, &self.config.detection).await
    }

    /// The conversation's session (live or ended) and breakpoints.
    pub async fn status(&self, conversation: &str) -> Status {
        let conversation = self.conversation(conversation);
        let session = conversation.session.lock().await.clone();
        let info = match session {
            Some(session) => {
                // A stop that came after the run's wait ended has no location yet: ask for it.
                session.locate_stop().await;
                // An ended phase is reported once the shutdown behind it has ended the processes.
                session.settled().await;
                Some(session.info())
            }
            None => None,
        };
        Status { session: info, breakpoints: breakpoint_list(&conversation) }
    }

    /// Sets the breakpoints of `file` (absolute) to `lines` (1-based); an
    /// empty list clears the file. Sent at once to a live session, else at the next start.
    pub async fn set_breakpoints(&self, conversation: &str, file: &Path, lines: &[u64]) -> Result<FileBreakpoints> {
        if file.is_dir() {
            return Err(Error::Invalid(format!("{} is a directory: breakpoints go in a source file", file.display())));
        }
        if let Some(&bad) = lines.iter().find(|&&l| l == 0) {
            return Err(Error::Invalid(format!("line {bad} is not a line: lines start at 1")));
        }
        // An adapter moves a breakpoint past the end to the last line, or leaves it unverified.
        if let Some(&last) = lines.iter().max()
            && let Ok(text) = std::fs::read_to_string(file)
        {
            let count = text.lines().count() as u64;
            if last > count {
                return Err(Error::Invalid(format!(
                    "line {last} is out of range: {} has {count} lines (lines are 1-indexed); no breakpoint was changed",
                    file.display()
                )));
            }
        }
        let mut lines = lines.to_vec();
        lines.sort_unstable();
        lines.dedup();
        let conversation = self.conversation(conversation);
        {
            let mut breakpoints = conversation.breakpoints.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if lines.is_empty() {
                breakpoints.remove(file);
            } else {
                breakpoints.insert(file.to_path_buf(), lines.clone());
            }
        }
        let session = conversation.session.lock().await.clone();
        match session {
            Some(session) if !session.ended() => session.send_breakpoints(file, &lines).await,
            _ => Ok(FileBreakpoints { file: file.to_path_buf(), lines, placed: None }),
        }
    }

    /// Launches `spec.program` under its adapter, stopped at the breakpoints set so far.
    pub async fn launch(&self, conversation: &str, spec: LaunchSpec) -> Result<Started> {
        let detection = &self.config.detection;
        let rust = spec.program.extension().is_some_and(|e| e == "rs") || spec.program.join("Cargo.toml").is_file();
        let go = spec.program.extension().is_some_and(|e| e == "go") || spec.program.join("go.mod").is_file() || {
            spec.program.is_dir()
                && std::fs::read_dir(&spec.program)
                    .is_ok_and(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "go")))
        };
        let inferred = match (&spec.module, spec.test) {
            (Some(_), _) => Some(AdapterId::Debugpy),
            (None, true) if rust => Some(AdapterId::Lldb),
            (None, true) if go => Some(AdapterId::Delve),
            (None, true) if spec.adapter.is_none() => {
                return Err(Error::Invalid(format!(
                    "test: true runs a Go package's tests (a package directory or _test.go file) or a Rust package's (the test target's .rs file); {} is neither. For Python, launch `-m pytest` with the test as its argument",
                    spec.program.display()
                )));
            }
            (None, _) => detection.infer(&spec.program, &spec.root),
        };
        let adapter = match spec.adapter.or(inferred) {
            Some(adapter) => adapter,
            None => self.only_usable(&spec.root, Launch::COMMAND).await?,
        };
        if spec.module.is_some() && adapter != AdapterId::Debugpy {
            return Err(Error::Invalid(format!("a module (`-m`) is run by debugpy, not {adapter}")));
        }
        let mut spec = spec;
        match (spec.test, adapter) {
            (false, _) | (true, AdapterId::Delve) => {}
            // A Rust test: built by cargo, its binary run by lldb with the test's name as argument.
            (true, AdapterId::Lldb) => {
                spec.program = crate::cargo::test_binary(
                    &spec.program,
                    spec.cwd(),
                    self.config.limits.build_timeout,
                    self.config.enclosure.as_ref(),
                )
                .await?;
            }
            (true, _) => {
                return Err(Error::Invalid(format!(
                    "test mode is for Go packages (delve) and Rust packages (lldb); for {adapter} launch the test runner itself (`-m pytest` for Python)"
                )));
            }
        }
        let start =
            Start::Launch { program: spec.program.clone(), module: spec.module.clone(), args: spec.args.clone() };
        let mut arguments = launch_request(adapter, &spec, &self.config);
        let mut scratch = Vec::new();
        if adapter == AdapterId::Delve && (arguments["mode"] == "debug" || arguments["mode"] == "test") {
            // delve builds the program before running it; by default into `__debug_bin*`
            // in the project. Built in the temporary directory instead, and removed with the session.
            let binary =
                std::env::temp_dir().join(format!("agent-tools-delve-{}-{}", std::process::id(), next_build()));
            arguments["output"] = json!(binary);
            scratch.push(binary);
        }
        self.open(conversation, &spec.root, adapter, start, Launch::COMMAND, arguments, None, scratch).await
    }

    /// Attaches to a debuggee already running with a debug server on `spec.port`.
    pub async fn attach(&self, conversation: &str, spec: AttachSpec) -> Result<Started> {
        let adapter = match spec.adapter {
            Some(adapter) => adapter,
            None => self.only_usable(&spec.root, Attach::COMMAND).await?,
        };
        let start = Start::Attach { host: spec.host.clone(), port: spec.port, pid: spec.pid };
        let (arguments, connect) = match (adapter, spec.pid) {
            // `python -m debugpy --listen PORT` runs its own adapter on that port: connect to it.
            // redirectOutput: what the program prints reaches `output` as it does after a launch.
            (AdapterId::Debugpy, None) => {
                (json!({ "justMyCode": true, "redirectOutput": true }), Some(format!("{}:{}", spec.host, spec.port)))
            }
            // A headless delve speaks DAP itself: connect to it and attach remotely.
            (AdapterId::Delve, None) => (json!({ "mode": "remote" }), Some(format!("{}:{}", spec.host, spec.port))),
            (AdapterId::Delve, Some(pid)) => (json!({ "mode": "local", "processId": pid }), None),
            (AdapterId::Lldb, None) => {
                (json!({ "gdb-remote-port": spec.port, "gdb-remote-hostname": spec.host }), None)
            }
            (AdapterId::Lldb, Some(pid)) => (json!({ "pid": pid }), None),
            (AdapterId::Debugpy, Some(_)) => {
                return Err(Error::Invalid(
                    "debugpy attaches to a debug server's port (start the program with `python -m debugpy --listen PORT`), not to a process id".into(),
                ));
            }
            (AdapterId::Dart | AdapterId::Custom(_), Some(pid)) => (json!({ "processId": pid }), None),
            (AdapterId::Dart | AdapterId::Custom(_), None) => (json!({ "host": spec.host, "port": spec.port }), None),
        };
        let mut arguments = arguments;
        if let Some(configured) = self.config.detection.spec(adapter) {
            merge(&mut arguments, &configured.attach);
        }
        let opened =
            self.open(conversation, &spec.root, adapter, start, Attach::COMMAND, arguments, connect, Vec::new()).await;
        match opened {
            // Whatever listens there did not answer as a debug server that speaks DAP.
            Err(error @ Error::NoHandshake { .. }) => Err(Error::Invalid(format!(
                "{error}. Is the program running under `python -m debugpy --listen {port}` (or a headless delve) on that port? debugpy `--wait-for-client` may serve no client after another client or a port probe connected and left: start the program again and attach with nothing else connecting to the port",
                port = spec.port
            ))),
            opened => opened,
        }
    }

    async fn only_usable(&self, root: &Path, what: &str) -> Result<AdapterId> {
        let reports = self.adapters(root).await;
        let usable: Vec<&AdapterReport> = reports.iter().filter(|r| r.usable()).collect();
        match usable.as_slice() {
            [one] => Ok(one.id),
            [] => Err(Error::NoAdapter(format!(
                "no debug adapter is usable here:\n{}",
                reports.iter().map(|r| format!("- {}: {}", r.id, r.detail)).collect::<Vec<_>>().join("\n")
            ))),
            many => Err(Error::NoAdapter(format!(
                "cannot tell which adapter to {what} with; name one of: {}",
                many.iter().map(|r| r.id.name()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn open(
        &self,
        conversation: &str,
        root: &Path,
        adapter: AdapterId,
        start: Start,
        request: &'static str,
        arguments: Value,
        connect: Option<String>,
        scratch: Vec<PathBuf>,
    ) -> Result<Started> {
        let conversation = self.conversation(conversation);
        let mut slot = conversation.session.lock().await;
        if let Some(existing) = slot.as_ref()
            && !existing.ended()
        {
            let info = existing.info();
            let what = match &info.start {
                Start::Launch { program, .. } => {
                    let shown = program.strip_prefix(root).unwrap_or(program);
                    format!("{} launched {}", info.adapter, shown.display())
                }
                Start::Attach { pid: Some(pid), .. } => format!("{} attached to process {pid}", info.adapter),
                Start::Attach { host, port, .. } => format!("{} attached to {host}:{port}", info.adapter),
            };
            return Err(Error::AlreadyRunning(what));
        }
        let report = adapter::detect(adapter, root, &self.config.detection).await;
        let command = match (&report.command, report.usable()) {
            (Some(command), true) => command.clone(),
            _ => return Err(Error::NoAdapter(format!("{adapter} is {}", report.detail))),
        };
        let breakpoints = conversation.breakpoints.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        // Inside a prefix's container, its own `PATH` stands.
        let path = self.config.detection.search_path.clone().filter(|_| self.config.detection.inside.is_none());
        // A debug server inside a prefix's container listens in the container's network: it is
        // reached through a relay run inside, over the prefix's stdio (as `kubectl port-forward` does).
        let inside = self.config.enclosure.as_ref().filter(|enclosure| enclosure.looks_inside());
        let relay = match (&connect, inside) {
            (Some(address), Some(inside)) => Some(relay_command(inside, address)?),
            _ => None,
        };
        let reach = match (connect, &relay, inside) {
            (Some(_), Some(relay), Some(inside)) => {
                Reach::Spawn { command: relay, cwd: root, env: &self.config.env, path: None, enclosure: Some(inside) }
            }
            (Some(address), _, _) => Reach::Connect { address },
            (None, _, _) => Reach::Spawn {
                command: &command,
                cwd: root,
                env: &self.config.env,
                path: path.as_deref(),
                enclosure: self.config.enclosure.as_ref(),
            },
        };
        let open = Open {
            adapter,
            reach,
            start,
            request,
            arguments,
            breakpoints: &breakpoints,
            limits: self.config.limits.clone(),
            ttl: self.config.ttl,
            scratch,
        };
        // An ended session's processes are gone already; dropping it frees the slot.
        *slot = None;
        let (session, breakpoints) = Session::open(open).await?;
        let session = Arc::new(session);
        *slot = Some(Arc::clone(&session));
        drop(slot);
        self.arm_ttl(&session);
        let unfinished = Unfinished { conversation, session: Some(Arc::clone(&session)) };
        let outcome = session.first_run().await;
        unfinished.finish();
        Ok(Started { adapter, breakpoints, outcome })
    }

    /// Ends `session` when its TTL runs out, counted from the session's start as status's time left is.
    fn arm_ttl(&self, session: &Arc<Session>) {
        let ttl = self.config.ttl;
        let deadline = tokio::time::Instant::from_std(session.ttl_deadline());
        let weak = Arc::downgrade(session);
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            if let Some(session) = weak.upgrade()
                && !session.ended()
            {
                tracing::info!(adapter = %session.adapter(), "debug session TTL ran out");
                session.terminate(&format!("its lifetime of {} s (TTL) ran out", ttl.as_secs())).await;
            }
        });
    }

    /// `continue` or a step, then the next stop or the end.
    pub async fn resume(&self, conversation: &str, how: Resume, thread: Option<u64>) -> Result<RunOutcome> {
        self.session(conversation).await?.resume(how, thread).await
    }

    /// Pauses `thread` (default: the first listed), then waits for the stop; a program
    /// already stopped is returned as it stands.
    pub async fn pause(&self, conversation: &str, thread: Option<u64>) -> Result<RunOutcome> {
        self.session(conversation).await?.pause(thread).await
    }

    /// The debuggee's threads; an error once the session has ended.
    pub async fn threads(&self, conversation: &str) -> Result<Vec<ThreadInfo>> {
        self.session(conversation).await?.threads().await
    }

    /// The frames of `thread` (default: the stopped thread), innermost first, at most
    /// [`Limits::stack_cap`]; [`Error::NotStopped`] while the program runs.
    pub async fn stack(&self, conversation: &str, thread: Option<u64>) -> Result<Capped<Frame>> {
        self.session(conversation).await?.stack(thread).await
    }

    /// The scopes of a frame from the current stop; [`Error::Stale`] for a frame of an
    /// earlier stop.
    pub async fn scopes(&self, conversation: &str, frame_id: u64) -> Result<Vec<ScopeInfo>> {
        self.session(conversation).await?.scopes(frame_id).await
    }

    /// A note on scopes that show no locals where the binary may lack debug info for them (lldb; once a session).
    pub async fn locals_note(&self, conversation: &str, scopes: &[ScopeInfo]) -> Option<String> {
        self.session(conversation).await.ok()?.locals_note(scopes).await
    }

    /// The children of a variables reference from the current stop, at most
    /// [`Limits::variables_cap`], each value cut at [`Limits::value_limit`] characters.
    pub async fn variables(&self, conversation: &str, reference: u64) -> Result<Capped<VarValue>> {
        self.session(conversation).await?.variables(reference).await
    }

    /// Evaluates `expression` in a frame of the current stop (default: the stopped
    /// thread's top frame); the value is cut at [`Limits::value_limit`] characters.
    pub async fn evaluate(&self, conversation: &str, expression: &str, frame_id: Option<u64>) -> Result<VarValue> {
        self.session(conversation).await?.evaluate(expression, frame_id).await
    }

    /// The debuggee's captured output; readable after the session has ended.
    pub async fn output(&self, conversation: &str) -> Result<Output> {
        Ok(self.session(conversation).await?.output())
    }

    /// Ends the conversation's session: a launched debuggee is ended, an attached one left running.
    /// A session that has already ended is no error: [`Terminated::was`] is its end, with how it came.
    /// A launch or a run waiting on the session returns that it ended, "terminated by request".
    pub async fn terminate(&self, conversation: &str) -> Result<Terminated> {
        Ok(self.session(conversation).await?.terminate("terminated by request").await)
    }
}

/// A start whose first run is still being waited for. Dropped before [`Unfinished::finish`]
/// (the call was cancelled), it takes the half-open session out of the slot, so the slot is
/// free for the next start; the session's drop then ends its adapter and a launched program.
struct Unfinished {
    conversation: Arc<Conversation>,
    session: Option<Arc<Session>>,
}

impl Unfinished {
    fn finish(mut self) {
        self.session = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        let Some(session) = self.session.take() else { return };
        session.abandon("the start was cancelled before its first run ended");
        match self.conversation.session.try_lock() {
            Ok(mut slot) => clear_slot(&mut slot, &session),
            // Held for a moment by another call (status): cleared as soon as it is free.
            Err(_) => {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let conversation = Arc::clone(&self.conversation);
                    runtime.spawn(async move { clear_slot(&mut *conversation.session.lock().await, &session) });
                }
            }
        }
    }
}

/// Empties `slot` if it still holds `session`.
fn clear_slot(slot: &mut Option<Arc<Session>>, session: &Arc<Session>) {
    if slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, session)) {
        *slot = None;
    }
}

/// A number for each delve build of this process, so that two sessions never share a binary.
fn next_build() -> u64 {
    static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn breakpoint_list(conversation: &Conversation) -> Vec<FileBreakpoints> {
    let breakpoints = conversation.breakpoints.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    breakpoints
        .iter()
        .map(|(file, lines)| FileBreakpoints { file: file.clone(), lines: lines.clone(), placed: None })
        .collect()
}

/// The `launch` arguments: the adapter's own, with a configured adapter's
/// program field and `launch` fields.
fn launch_request(adapter: AdapterId, spec: &LaunchSpec, config: &DebugConfig) -> Value {
    let mut arguments = launch_arguments(adapter, spec, config);
    if let Some(configured) = config.detection.spec(adapter) {
        if let Some(field) = configured.program_field.as_deref().filter(|f| *f != "program")
            && let Some(object) = arguments.as_object_mut()
            && let Some(program) = object.remove("program")
        {
            object.insert(field.to_owned(), program);
        }
        merge(&mut arguments, &configured.launch);
    }
    arguments
}

/// Sets the configured fields in a request's arguments, over ours.
fn merge(arguments: &mut Value, fields: &serde_json::Map<String, Value>) {
    if let Some(object) = arguments.as_object_mut() {
        for (key, value) in fields {
            object.insert(key.clone(), value.clone());
        }
    }
}

/// The adapter-specific `launch` arguments.
fn launch_arguments(adapter: AdapterId, spec: &LaunchSpec, config: &DebugConfig) -> Value {
    match adapter {
        AdapterId::Debugpy => {
            // pydevd interrupts an evaluation (a property getter that loops) that runs past
            // this, a second before the request's own timeout, so the thread is free again.
            let interrupt =
                config.limits.request_timeout.saturating_sub(Duration::from_secs(1)).max(Duration::from_secs(1));
            let mut env = spec.env_object();
            if env.get("PYDEVD_INTERRUPT_THREAD_TIMEOUT").is_none() {
                env["PYDEVD_INTERRUPT_THREAD_TIMEOUT"] = json!(interrupt.as_secs_f64().to_string());
            }
            let mut arguments = json!({
                "type": "python",
                "request": "launch",
                "name": "agent-tools",
                "args": spec.args,
                "cwd": spec.cwd(),
                "env": env,
                "console": "internalConsole",
                "redirectOutput": true,
                "justMyCode": true,
                "stopOnEntry": false,
                // Children (multiprocessing, a subprocess running python) run without the
                // debugger: followed, debugpy would hold each child until a client attached
                // to it through a `startDebugging` request, which this client does not serve.
                "subProcess": false,
            });
            match &spec.module {
                Some(module) => arguments["module"] = json!(module),
                None => arguments["program"] = json!(spec.program),
            }
            // The program runs on the project's interpreter, whichever Python runs the adapter.
            if let Some((python, _)) = adapter::program_python(&spec.root, &config.detection) {
                arguments["python"] = json!([python]);
            }
            arguments
        }
        AdapterId::Lldb => json!({
            "name": "agent-tools",
            "program": spec.program,
            "args": spec.args,
            "cwd": spec.cwd(),
            // lldb-dap takes `VAR=VALUE` strings.
            "env": spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            "stopOnEntry": false,
        }),
        AdapterId::Delve => {
            // A `_test.go` file stands for its package.
            let test_file = spec.program.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("_test.go"));
            let program = match spec.program.parent() {
                Some(package) if spec.test && test_file => package.to_path_buf(),
                _ => spec.program.clone(),
            };
            let source = program.is_dir() || program.extension().is_some_and(|e| e == "go");
            let mode = match (spec.test, source) {
                (true, _) => "test",
                (false, true) => "debug",
                (false, false) => "exec",
            };
            json!({
                "name": "agent-tools",
                "mode": mode,
                "program": program,
                "args": spec.args,
                "cwd": spec.cwd(),
                "env": spec.env_object(),
                "outputMode": "remote",
                "stopOnEntry": false,
            })
        }
        // A configured adapter: the fields most adapters read; its `launch` table adds the rest.
        AdapterId::Dart | AdapterId::Custom(_) => json!({
            "name": "agent-tools",
            "program": spec.program,
            "args": spec.args,
            "cwd": spec.cwd(),
        }),
    }
}

/// Joins its stdin and stdout to a TCP connection: how a debug server listening inside a
/// prefix's container is reached from the host, through the prefix's stdio.
const RELAY: &str = r#"import os, socket, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
try:
    conn = socket.create_connection((host, port), timeout=10)
except OSError as error:
    sys.exit("nothing answered at %s:%d inside the container: %s" % (host, port, error))
conn.settimeout(None)
def upstream():
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
threading.Thread(target=upstream, daemon=True).start()
while True:
    data = conn.recv(65536)
    if not data:
        break
    os.write(1, data)
"#;

/// The relay to `address` (`HOST:PORT`), on the container's own `python3`.
fn relay_command(inside: &enclosure::Enclosure, address: &str) -> Result<crate::AdapterCommand> {
    let (host, port) = address.rsplit_once(':').ok_or_else(|| Error::Invalid(format!("not HOST:PORT: {address}")))?;
    let python = inside.locate(&["python3"]).map_err(|error| Error::Invalid(error.to_string()))?.ok_or_else(|| {
        Error::Invalid(format!(
            "attaching to {address} inside {} relays the connection with python3 there, and there is none on its PATH",
            inside.describe()
        ))
    })?;
    Ok(crate::AdapterCommand {
        program: python,
        args: vec!["-c".into(), RELAY.into(), host.to_owned(), port.to_owned()],
        transport: crate::Transport::Stdio,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::adapter::AdapterSpec;

    fn config_with(adapters: Vec<AdapterSpec>) -> DebugConfig {
        let mut config = DebugConfig::default();
        config.detection.adapters = adapters;
        config
    }

    #[test]
    fn a_configured_adapter_moves_the_program_and_sets_its_launch_fields_over_ours() {
        let mut spec = LaunchSpec::new("/repo", "/repo/main.toy");
        spec.args = vec!["-v".into()];
        let configured = AdapterSpec {
            name: "toy".into(),
            program_field: Some("script".into()),
            launch: serde_json::from_value(json!({ "cwd": "/elsewhere", "mode": { "fast": true } })).unwrap(),
            ..AdapterSpec::default()
        };
        let id = configured.id();
        assert_eq!(
            launch_request(id, &spec, &config_with(vec![configured])),
            json!({
                "name": "agent-tools",
                "script": "/repo/main.toy",
                "args": ["-v"],
                "cwd": "/elsewhere",
                "mode": { "fast": true },
            })
        );
        // A built-in adapter's change keeps its own fields and adds the configured ones.
        let lldb = AdapterSpec {
            name: "lldb".into(),
            launch: serde_json::from_value(json!({ "initCommands": ["settings set x y"] })).unwrap(),
            ..AdapterSpec::default()
        };
        assert_eq!(
            launch_request(AdapterId::Lldb, &spec, &config_with(vec![lldb])),
            json!({
                "name": "agent-tools",
                "program": "/repo/main.toy",
                "args": ["-v"],
                "cwd": "/repo",
                "env": [],
                "stopOnEntry": false,
                "initCommands": ["settings set x y"],
            })
        );
        let plain = DebugConfig::default();
        assert_eq!(launch_request(AdapterId::Lldb, &spec, &plain), launch_arguments(AdapterId::Lldb, &spec, &plain));
    }
}
