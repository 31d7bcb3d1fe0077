//! One debug session: the start-up sequence adapters actually require, and
//! every operation on a started session. It drives the [`State`] machine from
//! adapter events and owns the adapter process.
//!
//! Start-up: `initialize`; `launch`/`attach` sent without waiting for its
//! reply; on `initialized`, `setBreakpoints` per file and
//! `setExceptionBreakpoints` (the adapter's default filters); then
//! `configurationDone`; then the `launch` reply (debugpy answers `launch`
//! only after `configurationDone`). The first run (to the first stop or the
//! exit) is [`Session::first_run`], waited for once the session is reachable,
//! so that the TTL or a `terminate` can end it meanwhile.
//!
//! Every wait on the program also wakes when the session ends, however it
//! ends (the program's exit, the adapter's death, `terminate`, the TTL).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dap_types::requests::{
    ConfigurationDone, Continue, Disconnect, Evaluate, Initialize, Next, Pause, Scopes, SetBreakpoints,
    SetExceptionBreakpoints, StackTrace, StepIn, StepOut, Threads, Variables,
};
use dap_types::{
    ConfigurationDoneArguments, ContinueArguments, DisconnectArguments, EvaluateArguments, EvaluateArgumentsContext,
    InitializeRequestArguments, InitializeRequestArgumentsPathFormat, NextArguments, PauseArguments, ScopesArguments,
    SetBreakpointsArguments, SetExceptionBreakpointsArguments, Source, SourceBreakpoint, StackFrame,
    StackTraceArguments, StepInArguments, StepOutArguments, VariablesArguments,
};
use serde_json::Value;
use tokio::sync::watch;

use crate::adapter::{AdapterCommand, AdapterId};
use crate::error::{Error, Result};
use crate::process::{self, AdapterProcess};
use crate::state::{IdKind, State};
use crate::transport::{Client, EventSink};
use crate::types::{
    Capped, FileBreakpoints, Frame, Location, Output, Phase, PlacedBreakpoint, RunOutcome, ScopeInfo, SessionInfo,
    Start, Stop, Terminated, ThreadInfo, Value as VarValue,
};

/// Limits and timeouts of a session.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long one request may go unanswered; also the whole handshake (connection, `initialize`,
    /// the `initialized` event) of a debug server reached over TCP, which is already running.
    pub request_timeout: Duration,
    /// How long an adapter's start-up (`initialize` up to the `initialized` event and the `launch` reply) may take.
    pub start_timeout: Duration,
    /// How long `launch`, `continue`, the steps and `pause` wait for a stop or the exit.
    pub run_timeout: Duration,
    /// Characters of debuggee output kept.
    pub output_limit: usize,
    /// Characters of a value shown before it is cut.
    pub value_limit: usize,
    /// Frames returned by `stack`.
    pub stack_cap: usize,
    /// Children returned by `variables`.
    pub variables_cap: usize,
    /// How long building a program before its launch may take (`cargo test --no-run` for a Rust test).
    pub build_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(60),
            run_timeout: Duration::from_secs(30),
            output_limit: 64 * 1024,
            value_limit: 400,
            stack_cap: 30,
            variables_cap: 50,
            build_timeout: Duration::from_secs(600),
        }
    }
}

/// How much longer than the request timeout an evaluation under debugpy is
/// waited for: pydevd interrupts it a second before that timeout, and its
/// answer may come late on a loaded machine.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

/// How long `attach` waits, once configured, for a stop that comes at once
/// (a breakpoint in a loop) before it returns with the program running.
pub const ATTACH_SETTLE: Duration = Duration::from_secs(2);

/// How to reach the adapter.
pub enum Reach<'a> {
    /// Start this command (as its own process group).
    Spawn {
        command: &'a AdapterCommand,
        cwd: &'a Path,
        env: &'a [(String, String)],
        path: Option<&'a std::ffi::OsStr>,
        enclosure: Option<&'a enclosure::Enclosure>,
    },
    /// Connect to a DAP server already listening.
    Connect { address: String },
}

/// Everything [`Session::open`] needs.
pub struct Open<'a> {
    pub adapter: AdapterId,
    pub reach: Reach<'a>,
    pub start: Start,
    /// `launch` or `attach`.
    pub request: &'static str,
    /// The adapter-specific arguments of that request.
    pub arguments: Value,
    pub breakpoints: &'a BTreeMap<PathBuf, Vec<u64>>,
    pub limits: Limits,
    pub ttl: Duration,
    /// Files the session makes outside the project (delve's build of the
    /// program), removed when the session is dropped.
    pub scratch: Vec<PathBuf>,
}

/// A started session.
pub struct Session {
    adapter: AdapterId,
    start: Start,
    client: Client,
    state: Arc<Mutex<State>>,
    changes: watch::Receiver<u64>,
    /// Wakes the waits on `changes`: every adapter event, and the session's end from this side.
    notify: Arc<watch::Sender<u64>>,
    process: tokio::sync::Mutex<Option<AdapterProcess>>,
    /// Held while the session shuts down: its phase says ended from the start of the
    /// shutdown, and [`Session::settled`] waits here until its processes are gone too.
    shutting_down: tokio::sync::Mutex<()>,
    adapter_pid: Option<u32>,
    started: Instant,
    ttl: Duration,
    scratch: Vec<PathBuf>,
    capabilities: Value,
    limits: Limits,
}

/// The resume requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// `continue`: run to the next stop or the end.
    Continue,
    /// `next`: run to the next line in the same frame.
    StepOver,
    /// `stepIn`: into the function called on this line, else as `StepOver`.
    StepIn,
    /// `stepOut`: run until the current function returns.
    StepOut,
}

impl Resume {
    /// Sends the request (`continue`, `next`, `stepIn`, `stepOut`) for `thread`; its
    /// response body says nothing a caller uses (the stop comes as an event).
    async fn send(self, client: &Client, thread: u64, timeout: Duration) -> Result<()> {
        let thread_id = thread;
        match self {
            Resume::Continue => {
                client.typed_body::<Continue>(&ContinueArguments { thread_id, single_thread: None }, timeout).await?;
            }
            Resume::StepOver => {
                let arguments = NextArguments { thread_id, single_thread: None, granularity: None };
                client.typed::<Next>(&arguments, timeout).await?;
            }
            Resume::StepIn => {
                let arguments = StepInArguments { thread_id, single_thread: None, target_id: None, granularity: None };
                client.typed::<StepIn>(&arguments, timeout).await?;
            }
            Resume::StepOut => {
                let arguments = StepOutArguments { thread_id, single_thread: None, granularity: None };
                client.typed::<StepOut>(&arguments, timeout).await?;
            }
        }
        Ok(())
    }
}

/// `variables` of one reference, unfiltered and unpaged (the session caps what it shows).
fn variables_of(variables_reference: u64) -> VariablesArguments {
    VariablesArguments { variables_reference, filter: None, start: None, count: None, format: None }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    /// Starts the adapter and runs the start-up sequence, up to the program
    /// running; returns the breakpoints as placed. On failure everything started is killed.
    ///
    /// A debug server reached over TCP (an attach to a port) is already running, so its
    /// handshake, from the connection to the `initialized` event, is bounded by the request
    /// timeout, not the start-up timeout; one that does not finish it is [`Error::NoHandshake`].
    pub async fn open(open: Open<'_>) -> Result<(Session, Vec<FileBreakpoints>)> {
        let state = Arc::new(Mutex::new(State::new(open.limits.output_limit)));
        let (notify, changes) = watch::channel(0u64);
        let notify = Arc::new(notify);
        let sink_state = Arc::clone(&state);
        let sink_notify = Arc::clone(&notify);
        let sink: EventSink = Arc::new(move |event| {
            let version = {
                let mut state = lock(&sink_state);
                state.on_event(&event.event, &event.body);
                state.version
            };
            let _ = sink_notify.send(version);
        });
        let limits = open.limits.clone();
        let handshake_began = tokio::time::Instant::now();
        let connected_to = match &open.reach {
            Reach::Connect { address } => Some(address.clone()),
            Reach::Spawn { .. } => None,
        };
        let (process, client) = match open.reach {
            Reach::Spawn { command, cwd, env, path, enclosure } => {
                let spawn = process::Spawn {
                    name: open.adapter.name(),
                    command,
                    cwd,
                    env,
                    path,
                    enclosure,
                    start_timeout: limits.start_timeout,
                    line_limit: limits.output_limit,
                };
                let (process, client) = process::start(spawn, sink).await?;
                (Some(process), client)
            }
            Reach::Connect { address } => (None, process::connect(&address, sink, limits.request_timeout).await?),
        };
        // Spawned, the adapter may take its time to start (lldb-dap loading, delve building);
        // connected to, a debug server that is there answers at once or not at all.
        let (began, budget) = match connected_to {
            Some(_) => (handshake_began, limits.request_timeout),
            None => (tokio::time::Instant::now(), limits.start_timeout),
        };
        let adapter_pid = process.as_ref().map(AdapterProcess::pid);
        let mut session = Session {
            adapter: open.adapter,
            start: open.start,
            client,
            state,
            changes,
            notify,
            process: tokio::sync::Mutex::new(process),
            shutting_down: tokio::sync::Mutex::new(()),
            adapter_pid,
            started: Instant::now(),
            ttl: open.ttl,
            scratch: open.scratch,
            capabilities: Value::Null,
            limits,
        };
        match session.start_up(open.request, open.arguments, open.breakpoints, began, budget).await {
            Ok(placed) => Ok((session, placed)),
            Err(error) => {
                // An adapter that let start-up time out is not asked to disconnect: it is killed.
                let polite = !matches!(error, Error::Timeout { .. });
                session.shutdown(false, polite, "start-up failed").await;
                let error = match (connected_to, error) {
                    (
                        Some(address),
                        error @ (Error::Timeout { .. } | Error::AdapterGone { .. } | Error::Unreadable { .. }),
                    ) if !session.handshake_done() => {
                        let heard = heard(&session.client.received(), &error);
                        Error::NoHandshake { address, waited: session.limits.request_timeout, heard }
                    }
                    (_, error) => error,
                };
                // What the adapter printed is often the cause (delve's build errors come as
                // `console` output, with "Build error: Check the debug console" as the reply).
                let printed = session.output().text;
                let tail: Vec<&str> = printed.lines().rev().filter(|l| !l.trim().is_empty()).take(40).collect();
                if tail.is_empty() {
                    return Err(error);
                }
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                Err(Error::Invalid(format!("{error}\nthe adapter and program printed:\n{}", tail.join("\n"))))
            }
        }
    }

    /// Whether the handshake got as far as the `initialized` event.
    fn handshake_done(&self) -> bool {
        lock(&self.state).initialized
    }

    async fn start_up(
        &mut self,
        request: &'static str,
        arguments: Value,
        breakpoints: &BTreeMap<PathBuf, Vec<u64>>,
        began: tokio::time::Instant,
        budget: Duration,
    ) -> Result<Vec<FileBreakpoints>> {
        // One budget for the whole handshake; a step that runs out says the whole budget.
        let deadline = began + budget;
        let left = || deadline.saturating_duration_since(tokio::time::Instant::now());
        let whole = |error: Error| match error {
            Error::Timeout { command, .. } => Error::Timeout { command, after: budget },
            error => error,
        };
        let initialize = InitializeRequestArguments {
            client_id: Some("agent-tools".into()),
            client_name: Some("agent-tools".into()),
            adapter_id: self.adapter.name().into(),
            locale: Some("en".into()),
            lines_start_at1: Some(true),
            columns_start_at1: Some(true),
            path_format: Some(InitializeRequestArgumentsPathFormat::Path),
            supports_variable_type: Some(true),
            supports_variable_paging: Some(false),
            supports_run_in_terminal_request: Some(false),
            supports_memory_references: Some(false),
            supports_progress_reporting: Some(false),
            supports_invalidated_event: Some(false),
            supports_memory_event: Some(false),
            supports_args_can_be_interpreted_by_shell: Some(false),
            supports_start_debugging_request: Some(false),
        };
        // The capabilities are read by hand: a filter without the `label` the specification
        // requires would make `dap-types` refuse the whole answer, and only two fields are used.
        self.capabilities = self.client.typed_body::<Initialize>(&initialize, left()).await.map_err(whole)?;
        // Not awaited yet: debugpy answers it only after configurationDone. The arguments of
        // `launch` and `attach` are each adapter's own, so they have no type.
        let reply = self.client.send(request, arguments).await?;
        let mut reply = tokio::spawn(reply.wait(left()));
        let mut reply_result: Option<Result<Value>> = None;
        let mut changes = self.changes.clone();
        loop {
            {
                let state = lock(&self.state);
                if state.initialized {
                    break;
                }
                if let Phase::Ended { reason, .. } = &state.phase {
                    if let Some(Err(error)) = reply_result {
                        return Err(whole(error));
                    }
                    return Err(Error::Ended(format!("{reason} before it was ready")));
                }
            }
            if let Some(Err(error)) = reply_result {
                return Err(whole(error));
            }
            tokio::select! {
                joined = &mut reply, if reply_result.is_none() => {
                    reply_result = Some(joined.unwrap_or_else(|e| Err(Error::Invalid(format!("{request} task failed: {e}")))));
                }
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Err(Error::Invalid("the session's event stream ended".into()));
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(Error::Timeout { command: "initialized event".into(), after: budget });
                }
            }
        }
        let mut placed = Vec::new();
        for (file, lines) in breakpoints {
            placed.push(self.send_breakpoints(file, lines).await?);
        }
        if let Some(filters) = self.capabilities.get("exceptionBreakpointFilters").and_then(Value::as_array) {
            let filters: Vec<String> = filters
                .iter()
                .filter(|f| f.get("default").and_then(Value::as_bool) == Some(true))
                .filter_map(|f| f.get("filter").and_then(Value::as_str).map(str::to_owned))
                .collect();
            let arguments = SetExceptionBreakpointsArguments { filters, filter_options: None, exception_options: None };
            self.client.typed_body::<SetExceptionBreakpoints>(&arguments, self.limits.request_timeout).await?;
        }
        if self.capabilities.get("supportsConfigurationDoneRequest").and_then(Value::as_bool) == Some(true) {
            self.client.typed::<ConfigurationDone>(&ConfigurationDoneArguments, self.limits.request_timeout).await?;
        }
        match reply_result {
            Some(result) => result.map_err(whole)?,
            None => reply
                .await
                .unwrap_or_else(|e| Err(Error::Invalid(format!("{request} task failed: {e}"))))
                .map_err(whole)?,
        };
        {
            // Launched or attached: the program runs until an event says otherwise.
            let mut state = lock(&self.state);
            if state.phase == Phase::Starting {
                state.phase = Phase::Running;
                state.version += 1;
            }
        }
        Ok(placed)
    }

    /// The run after start-up: a launch waits for the first stop or the end within
    /// `run_timeout`. An attached program is already running (a server, a loop): the
    /// session is ready once configured, and only a stop that comes at once is waited for.
    pub async fn first_run(&self) -> RunOutcome {
        match self.start {
            Start::Attach { .. } => {
                let outcome = self.wait_run(0, ATTACH_SETTLE.min(self.limits.run_timeout)).await;
                self.sigstop_is_pause(outcome)
            }
            Start::Launch { .. } => self.wait_run(0, self.limits.run_timeout).await,
        }
    }

    /// Sends one file's breakpoints (an empty list clears the file) and reports where they landed.
    pub async fn send_breakpoints(&self, file: &Path, lines: &[u64]) -> Result<FileBreakpoints> {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let breakpoint = |&line: &u64| SourceBreakpoint {
            line,
            column: None,
            condition: None,
            hit_condition: None,
            log_message: None,
            mode: None,
        };
        let arguments = SetBreakpointsArguments {
            source: Source {
                name,
                path: Some(file.to_string_lossy().into_owned()),
                source_reference: None,
                presentation_hint: None,
                origin: None,
                sources: None,
                adapter_data: None,
                checksums: None,
            },
            breakpoints: Some(lines.iter().map(breakpoint).collect()),
            lines: Some(lines.to_vec()),
            source_modified: Some(false),
        };
        let response = self.client.typed::<SetBreakpoints>(&arguments, self.limits.request_timeout).await?;
        let placed = lines
            .iter()
            .zip(response.breakpoints.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(&requested_line, breakpoint)| PlacedBreakpoint {
                requested_line,
                line: breakpoint.and_then(|b| b.line),
                verified: breakpoint.is_some_and(|b| b.verified),
                message: breakpoint.and_then(|b| b.message.clone()),
            })
            .collect();
        Ok(FileBreakpoints { file: file.to_path_buf(), lines: lines.to_vec(), placed: Some(placed) })
    }

    /// Waits for a stop numbered above `before`, or the end, up to `wait`.
    async fn wait_run(&self, before: u64, wait: Duration) -> RunOutcome {
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = self.changes.clone();
        loop {
            let seen = {
                let state = lock(&self.state);
                match &state.phase {
                    Phase::Stopped(stop) if stop.number > before => Some(Ok(stop.clone())),
                    Phase::Ended { reason, exit_code } => {
                        Some(Err(RunOutcome::Exited { exit_code: *exit_code, reason: reason.clone() }))
                    }
                    _ => None,
                }
            };
            match seen {
                Some(Ok(mut stop)) => {
                    stop.location = self.top_location(stop.thread_id).await;
                    if let Ok(mut state) = self.state.lock()
                        && let Phase::Stopped(current) = &mut state.phase
                        && current.number == stop.number
                    {
                        current.location = stop.location.clone();
                    }
                    return RunOutcome::Stopped(stop);
                }
                Some(Err(ended)) => {
                    // An end from this side (terminate, the TTL) is said once its processes are gone.
                    self.settled().await;
                    self.release_after_end().await;
                    // An exit code told after `terminated` (delve's console line) has come by now.
                    if let (
                        RunOutcome::Exited { exit_code: None, reason },
                        Phase::Ended { exit_code: Some(code), .. },
                    ) = (&ended, &lock(&self.state).phase)
                    {
                        return RunOutcome::Exited { exit_code: Some(*code), reason: reason.clone() };
                    }
                    return ended;
                }
                None => {}
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return RunOutcome::Exited { exit_code: None, reason: "the session's event stream ended".into() };
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return RunOutcome::StillRunning { waited: wait };
                }
            }
        }
    }

    /// After the program ends on its own, the adapter has nothing left to do.
    async fn release_after_end(&self) {
        let launched = matches!(self.start, Start::Launch { .. });
        let mut process = self.process.lock().await;
        if let Some(process) = process.as_mut() {
            let arguments =
                DisconnectArguments { restart: None, terminate_debuggee: Some(launched), suspend_debuggee: None };
            let _ = self.client.typed::<Disconnect>(&arguments, Duration::from_millis(500)).await;
            process.kill(Duration::from_secs(2)).await;
        }
        if launched {
            end_launched_debuggee(&lock(&self.state));
        }
    }

    /// Fills in the location of the current stop when it has none (a stop that
    /// came after the run's wait had ended).
    pub async fn locate_stop(&self) {
        let (number, thread) = match &lock(&self.state).phase {
            Phase::Stopped(stop) if stop.location.is_none() => (stop.number, stop.thread_id),
            _ => return,
        };
        let location = self.top_location(thread).await;
        if let Phase::Stopped(current) = &mut lock(&self.state).phase
            && current.number == number
        {
            current.location = location;
        }
    }

    async fn top_location(&self, thread: Option<u64>) -> Option<Location> {
        let thread = match thread {
            Some(thread) => thread,
            None => self.first_thread().await.ok()?,
        };
        let arguments = StackTraceArguments { thread_id: thread, start_frame: Some(0), levels: Some(1), format: None };
        let response = self.client.typed::<StackTrace>(&arguments, self.limits.request_timeout).await.ok()?;
        let frame = response.stack_frames.into_iter().next()?;
        lock(&self.state).issue(IdKind::Frame, [frame.id]);
        Some(location(&frame))
    }

    async fn first_thread(&self) -> Result<u64> {
        self.threads().await?.first().map(|t| t.id).ok_or_else(|| Error::Invalid("the program has no threads".into()))
    }

    /// `continue` or a step on `thread` (default: the stopped thread), then waits for the next stop or the end.
    pub async fn resume(&self, how: Resume, thread: Option<u64>) -> Result<RunOutcome> {
        let (stopped_thread, before) = {
            let state = lock(&self.state);
            let stop = state.require_stopped()?;
            (stop.thread_id, stop.number)
        };
        let thread = match thread.or(stopped_thread) {
            Some(thread) => thread,
            None => self.first_thread().await?,
        };
        let previous = {
            let mut state = lock(&self.state);
            let previous = state.phase.clone();
            state.resume();
            previous
        };
        if let Err(error) = how.send(&self.client, thread, self.limits.request_timeout).await {
            // Refused by the adapter: the program did not move, so the stop (and its ids) still stands.
            let mut state = lock(&self.state);
            if matches!(error, Error::Request { .. }) && state.phase == Phase::Running {
                state.phase = previous;
            }
            return Err(error);
        }
        let mut outcome = self.wait_run(before, self.limits.run_timeout).await;
        // lldb places a breakpoint on a line a macro expands on (`assert_eq!`) at each of the
        // line's locations ("breakpoint 1.1", "1.2", …): a continue from one stops at the next,
        // on the same line. Those are one breakpoint to a person: go on past them.
        if let (Resume::Continue, AdapterId::Lldb, Phase::Stopped(left)) = (how, self.adapter, &previous) {
            for _ in 0..8 {
                let RunOutcome::Stopped(stop) = &outcome else { break };
                if !other_location_of_the_same_breakpoint(left, stop) {
                    break;
                }
                let before = stop.number;
                lock(&self.state).resume();
                Resume::Continue
                    .send(&self.client, stop.thread_id.unwrap_or(thread), self.limits.request_timeout)
                    .await?;
                outcome = self.wait_run(before, self.limits.run_timeout).await;
            }
        }
        Ok(outcome)
    }

    /// Pauses `thread` (default: the first), then waits for the stop.
    pub async fn pause(&self, thread: Option<u64>) -> Result<RunOutcome> {
        let before = {
            let state = lock(&self.state);
            match &state.phase {
                Phase::Stopped(stop) => return Ok(RunOutcome::Stopped(stop.clone())),
                Phase::Ended { reason, .. } => return Err(Error::Ended(reason.clone())),
                Phase::Starting | Phase::Running => state.stops,
            }
        };
        // Any thread will do: delve and lldb stop them all. delve lists only a placeholder
        // (id -1) while the program runs, so with no thread listed the request names thread 1.
        let thread = match thread {
            Some(thread) => thread,
            None => self.threads().await?.first().map_or(1, |t| t.id),
        };
        self.client.typed::<Pause>(&PauseArguments { thread_id: thread }, self.limits.request_timeout).await?;
        let outcome = self.wait_run(before, self.limits.run_timeout).await;
        Ok(self.sigstop_is_pause(outcome))
    }

    /// lldb-dap reports the stop that a pause (or an attach to a running process)
    /// causes as an exception, "signal SIGSTOP": it is a pause, and is called so.
    fn sigstop_is_pause(&self, mut outcome: RunOutcome) -> RunOutcome {
        if let RunOutcome::Stopped(stop) = &mut outcome
            && self.adapter == AdapterId::Lldb
            && stop.reason == "exception"
            && stop.description.as_deref().is_some_and(|d| d.contains("SIGSTOP"))
        {
            stop.reason = "pause".to_owned();
            if let Phase::Stopped(current) = &mut lock(&self.state).phase
                && current.number == stop.number
            {
                current.reason = "pause".to_owned();
            }
        }
        outcome
    }

    /// The debuggee's threads.
    pub async fn threads(&self) -> Result<Vec<ThreadInfo>> {
        self.require_live()?;
        let body = self.client.typed_body::<Threads>(&(), self.limits.request_timeout).await?;
        // Read by hand: delve lists a placeholder thread with id -1 while the program runs,
        // which `dap-types`' unsigned ids refuse; it is no thread and is left out.
        let threads = body.get("threads").and_then(Value::as_array).ok_or_else(|| Error::Unreadable {
            command: "threads".into(),
            detail: "no `threads` list in the response".into(),
        })?;
        Ok(threads
            .iter()
            .filter_map(|t| {
                let id = t.get("id").and_then(Value::as_u64)?;
                let name = t.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                Some(ThreadInfo { id, name })
            })
            .collect())
    }

    fn require_live(&self) -> Result<()> {
        match &lock(&self.state).phase {
            Phase::Ended { reason, .. } => Err(Error::Ended(reason.clone())),
            _ => Ok(()),
        }
    }

    /// The stopped thread's frames (or `thread`'s), capped.
    pub async fn stack(&self, thread: Option<u64>) -> Result<Capped<Frame>> {
        let stopped_thread = lock(&self.state).require_stopped()?.thread_id;
        let thread = match thread.or(stopped_thread) {
            Some(thread) => thread,
            None => self.first_thread().await?,
        };
        let cap = self.limits.stack_cap;
        let frames_of = |levels: usize| StackTraceArguments {
            thread_id: thread,
            start_frame: Some(0),
            levels: Some(levels as u64),
            format: None,
        };
        let response = self.client.typed::<StackTrace>(&frames_of(cap), self.limits.request_timeout).await?;
        let mut frames = response.stack_frames;
        let mut total = response.total_frames.map(|t| t as usize).unwrap_or(frames.len()).max(frames.len());
        if frames.len() >= cap && response.total_frames.is_none() {
            // No total from the adapter: ask for everything once (`levels` 0), to count.
            if let Ok(all) = self.client.typed::<StackTrace>(&frames_of(0), self.limits.request_timeout).await {
                total = all.stack_frames.len().max(total);
            }
        }
        frames.truncate(cap);
        lock(&self.state).issue(IdKind::Frame, frames.iter().map(|f| f.id));
        let items = frames.iter().map(|f| Frame { id: f.id, location: location(f) }).collect();
        Ok(Capped { items, total })
    }

    /// The scopes of a frame from the current stop.
    pub async fn scopes(&self, frame_id: u64) -> Result<Vec<ScopeInfo>> {
        lock(&self.state).check(IdKind::Frame, frame_id)?;
        let response = self.client.typed::<Scopes>(&ScopesArguments { frame_id }, self.limits.request_timeout).await?;
        lock(&self.state).issue(IdKind::Reference, response.scopes.iter().map(|s| s.variables_reference));
        Ok(response
            .scopes
            .into_iter()
            .map(|s| ScopeInfo { name: s.name, reference: s.variables_reference, expensive: s.expensive })
            .collect())
    }

    /// lldb only, once a session: when a frame's `Locals` scope holds nothing,
    /// a note that the binary may lack debug info for locals (a build with line
    /// tables only, as Cargo's `debug = "line-tables-only"` or `-g1`, shows
    /// frames and lines but no variables). `None` otherwise.
    pub async fn locals_note(&self, scopes: &[ScopeInfo]) -> Option<String> {
        if self.adapter != AdapterId::Lldb || lock(&self.state).said_no_locals {
            return None;
        }
        let locals = scopes.iter().find(|s| s.name == "Locals")?;
        let response =
            self.client.typed::<Variables>(&variables_of(locals.reference), self.limits.request_timeout).await.ok()?;
        // lldb-dap 19 lists one pseudo-variable, `<error>`: "no variable information is available in debug info".
        if response.variables.iter().any(|v| v.name != "<error>") {
            return None;
        }
        lock(&self.state).said_no_locals = true;
        Some(
            "this frame shows no local variables; if the source has some here, the binary was built without debug info for locals (line tables only): build with `debug = true` in the Cargo profile, or `-g` for C/C++".to_owned(),
        )
    }

    /// The children of a reference from the current stop, capped, values cut.
    pub async fn variables(&self, reference: u64) -> Result<Capped<VarValue>> {
        lock(&self.state).check(IdKind::Reference, reference)?;
        let response = self.client.typed::<Variables>(&variables_of(reference), self.limits.request_timeout).await?;
        let total = response.variables.len();
        let items: Vec<VarValue> = response
            .variables
            .into_iter()
            .take(self.limits.variables_cap)
            .map(|v| self.value(v.name, v.value, v.type_, v.variables_reference))
            .collect();
        lock(&self.state).issue(IdKind::Reference, items.iter().map(|v| v.reference));
        Ok(Capped { items, total })
    }

    fn value(&self, name: String, value: String, type_name: Option<String>, reference: u64) -> VarValue {
        let chars = value.chars().count();
        let (value, cut_from) = if chars > self.limits.value_limit {
            (value.chars().take(self.limits.value_limit).collect(), Some(chars))
        } else {
            (value, None)
        };
        VarValue { name, value, cut_from, type_name, reference }
    }

    /// Evaluates `expression` in a frame of the current stop (default: the top frame of the stopped thread).
    pub async fn evaluate(&self, expression: &str, frame_id: Option<u64>) -> Result<VarValue> {
        let stopped_thread = lock(&self.state).require_stopped()?.thread_id;
        let frame_id = match frame_id {
            Some(frame_id) => {
                lock(&self.state).check(IdKind::Frame, frame_id)?;
                frame_id
            }
            None => {
                let thread = match stopped_thread {
                    Some(thread) => thread,
                    None => self.first_thread().await?,
                };
                let arguments =
                    StackTraceArguments { thread_id: thread, start_frame: Some(0), levels: Some(1), format: None };
                let response = self.client.typed::<StackTrace>(&arguments, self.limits.request_timeout).await?;
                let frame = response
                    .stack_frames
                    .first()
                    .ok_or_else(|| Error::Invalid("the stopped thread has no frames".into()))?;
                lock(&self.state).issue(IdKind::Frame, [frame.id]);
                frame.id
            }
        };
        // debugpy runs statements in the repl context; lldb-dap would take repl input as a command.
        let context = if self.adapter == AdapterId::Debugpy {
            EvaluateArgumentsContext::Repl
        } else {
            EvaluateArgumentsContext::Watch
        };
        let arguments = EvaluateArguments {
            expression: expression.to_owned(),
            frame_id: Some(frame_id),
            context: Some(context),
            format: None,
        };
        let asked = Instant::now();
        // pydevd interrupts the evaluation a second before the request timeout
        // (PYDEVD_INTERRUPT_THREAD_TIMEOUT); on a loaded machine its answer may
        // come after the timeout, so it is waited for a little longer.
        let wait = if self.adapter == AdapterId::Debugpy {
            self.limits.request_timeout + INTERRUPT_GRACE
        } else {
            self.limits.request_timeout
        };
        let response = match self.client.typed::<Evaluate>(&arguments, wait).await {
            Ok(response) => response,
            Err(Error::Timeout { after, .. }) => {
                return Err(Error::Invalid(format!(
                    "the evaluation got no answer within {} s and was given up; the program is still stopped where it was, though the adapter may answer other requests only once the expression finishes",
                    after.as_secs()
                )));
            }
            // pydevd interrupts an evaluation that runs past PYDEVD_INTERRUPT_THREAD_TIMEOUT.
            Err(Error::Request { message, .. })
                if self.adapter == AdapterId::Debugpy
                    && message.trim_end().ends_with("KeyboardInterrupt")
                    && asked.elapsed() >= Duration::from_secs(1) =>
            {
                return Err(Error::Invalid(format!(
                    "the evaluation ran for {} s without finishing and was interrupted; the program is still stopped where it was",
                    asked.elapsed().as_secs()
                )));
            }
            Err(error) => return Err(error),
        };
        lock(&self.state).issue(IdKind::Reference, [response.variables_reference]);
        Ok(self.value(expression.to_owned(), response.result, response.type_, response.variables_reference))
    }

    /// The captured output.
    pub fn output(&self) -> Output {
        lock(&self.state).output.snapshot()
    }

    pub fn adapter(&self) -> AdapterId {
        self.adapter
    }

    pub fn ended(&self) -> bool {
        lock(&self.state).ended()
    }

    /// Returns once no shutdown is under way (the TTL's, or another call's): a phase read
    /// after it says ended only when the session's processes are gone.
    pub async fn settled(&self) {
        drop(self.shutting_down.lock().await);
    }

    /// When the TTL ends the session: its lifetime counts from the session's start, as
    /// [`SessionInfo::ttl_left`] does, so status's time left reaches zero when the TTL fires.
    pub fn ttl_deadline(&self) -> Instant {
        self.started + self.ttl
    }

    pub fn info(&self) -> SessionInfo {
        let state = lock(&self.state);
        let age = self.started.elapsed();
        SessionInfo {
            adapter: self.adapter,
            start: self.start.clone(),
            phase: state.phase.clone(),
            age,
            ttl_left: if state.ended() { Duration::ZERO } else { self.ttl.saturating_sub(age) },
            debuggee_pid: state.debuggee_pid,
            adapter_pid: self.adapter_pid,
        }
    }

    /// Marks the session ended without waiting on its processes, for a start that was
    /// cancelled: the session's drop ends them, and nothing takes it for live meanwhile.
    pub fn abandon(&self, reason: &str) {
        let version = {
            let mut state = lock(&self.state);
            state.end(reason);
            state.version
        };
        let _ = self.notify.send(version);
    }

    /// Ends the session: asks the adapter to disconnect (ending a launched
    /// debuggee, leaving an attached one running), then kills the adapter's
    /// process group, and a launched debuggee that is still alive.
    ///
    /// On a session that has already ended, it ends nothing more (what is left of its processes
    /// is killed all the same) and `was` is that end, with its reason.
    pub async fn terminate(&self, reason: &str) -> Terminated {
        let launched = matches!(self.start, Start::Launch { .. });
        let was = self.shutdown(launched, true, reason).await;
        Terminated { adapter: self.adapter, debuggee_ended: launched, was }
    }

    /// Ends the session and its processes; returns the phase it found, read under the
    /// shutdown's lock, so two shutdowns never both find the session live.
    async fn shutdown(&self, end_debuggee: bool, polite: bool, reason: &str) -> Phase {
        let _down = self.shutting_down.lock().await;
        let was = lock(&self.state).phase.clone();
        let live = polite && !self.ended() && self.client.closed().is_none();
        // Ended first, so the adapter's exit on disconnect is not taken for a crash; and every
        // wait on the program (a launch's first run, a continue) wakes to return the end.
        let version = {
            let mut state = lock(&self.state);
            state.end(reason);
            state.version
        };
        let _ = self.notify.send(version);
        if live {
            let arguments = DisconnectArguments {
                restart: Some(false),
                terminate_debuggee: Some(end_debuggee),
                suspend_debuggee: None,
            };
            if let Err(error) = self.client.typed::<Disconnect>(&arguments, Duration::from_secs(2)).await {
                tracing::debug!(%error, "disconnect before kill");
            }
        }
        if let Some(process) = self.process.lock().await.as_mut() {
            process.kill(Duration::from_secs(2)).await;
        }
        if end_debuggee {
            end_launched_debuggee(&lock(&self.state));
            // A killed process lingers until the kernel has torn it down: wait (bounded) so
            // that "ended" is true when it is said.
            let pid = lock(&self.state).debuggee_pid;
            if let Some(pid) = pid {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
                while process::alive(pid) && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
        was
    }
}

impl Drop for Session {
    /// The adapter's process group goes with its process ([`AdapterProcess`]'s
    /// drop); a launched debuggee that left the group (debugpy's launcher
    /// starts it in a session of its own) and has not exited goes here, so a
    /// host that exits with a program still running leaves nothing behind.
    fn drop(&mut self) {
        if matches!(self.start, Start::Launch { .. }) {
            end_launched_debuggee(&lock(&self.state));
        }
        for file in &self.scratch {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Kills the debuggee when it left the adapter's process group and is still
/// alive; one that reported its exit is left alone (its pid may be another
/// process's by now), but what it left in the process group it led is not.
fn end_launched_debuggee(state: &State) {
    let Some(pid) = state.debuggee_pid else { return };
    if state.exit_code.is_none() && process::alive(pid) {
        process::kill_pid(pid);
    }
    // Gone (reaped), it may have left children in the group it led.
    process::kill_group_of_gone(pid);
}

/// What a debug server that did not finish the handshake sent, for [`Error::NoHandshake`]:
/// nothing, bytes that are no DAP message, or messages without the one awaited.
fn heard(received: &crate::transport::Received, failed: &Error) -> String {
    let closed = matches!(failed, Error::AdapterGone { .. });
    if received.bytes == 0 {
        let then = if closed { ", and then the connection was closed" } else { "" };
        return format!("the connection was accepted, but nothing came back (0 bytes) in answer to `initialize`{then}");
    }
    if received.messages == 0 {
        return format!("it sent {} bytes, none of them a DAP message ({failed})", received.bytes);
    }
    let missing = if received.first.iter().any(|m| m == "initialize response") {
        "no `initialized` event after `attach`"
    } else {
        "no answer to `initialize`"
    };
    let more = received.messages.saturating_sub(received.first.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let then = if closed { "; then it closed the connection" } else { "" };
    format!("it sent {} DAP messages ({}{more}) but {missing}{then}", received.messages, received.first.join(", "))
}

/// Whether `stop` is at another location of the breakpoint `left` stopped at, on
/// the same line (lldb's `breakpoint 1.2` after `breakpoint 1.1`).
fn other_location_of_the_same_breakpoint(left: &Stop, stop: &Stop) -> bool {
    let place = |s: &Stop| s.location.as_ref().map(|l| (l.file.clone(), l.line));
    let id = |s: &Stop| {
        let (breakpoint, location) = s.description.as_deref()?.strip_prefix("breakpoint ")?.split_once('.')?;
        Some((breakpoint.to_owned(), location.to_owned()))
    };
    match (id(left), id(stop)) {
        (Some((a, x)), Some((b, y))) => {
            left.reason == "breakpoint" && stop.reason == "breakpoint" && a == b && x != y && place(left) == place(stop)
        }
        _ => false,
    }
}

fn location(frame: &StackFrame) -> Location {
    Location {
        file: frame.source.as_ref().and_then(|s| s.path.as_ref()).map(PathBuf::from),
        line: frame.line,
        column: frame.column,
        function: without_rust_hash(&frame.name).to_owned(),
    }
}

/// `main::square::h0123456789abcdef` → `main::square`: the hash of Rust's legacy
/// symbol mangling, which lldb leaves on frame names, says nothing to a reader.
fn without_rust_hash(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => path,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::without_rust_hash;

    #[test]
    fn rust_symbol_hashes_are_dropped_from_frame_names() {
        assert_eq!(without_rust_hash("main::main::h8da7fa642d137fc6"), "main::main");
        assert_eq!(without_rust_hash("std::rt::lang_start_internal"), "std::rt::lang_start_internal");
        assert_eq!(without_rust_hash("a::hello"), "a::hello");
        assert_eq!(without_rust_hash("greet"), "greet");
    }
}
