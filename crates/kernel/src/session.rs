//! The kernels of one conversation: at most one per language, started on
//! first use, replaced after a crash, a kill or a reset.
//!
//! A cell runs on a task of its own that holds the language's slot, so
//! dropping the caller's future (cancellation) does not leave the kernel
//! busy: the task sees the caller gone, interrupts the cell (then kills the
//! kernel if the interrupt is ignored), releases the slot, and the next
//! cell's result says what became of the cancelled one.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

use crate::magics::rewrite_python;
use crate::output::{Collector, OutputObserver};
use crate::process::{KernelInfo, Process, RunEnd};
use crate::{
    Cut, HostSpawner, Image, InterpreterReport, KernelConfig, Language, Output, Result, Spawner, ToolBridge,
    find_interpreter_in, interpreter_reports,
};

/// One cell to run.
#[derive(Clone)]
pub struct Cell<'a> {
    /// Which kernel runs it.
    pub language: Language,
    /// The cell's source text.
    pub code: &'a str,
    /// Discard the language's interpreter and start clean before running.
    pub reset: bool,
    /// Answers `tool(name, args)` from inside the cell; without one such
    /// calls fail in the cell.
    pub bridge: Option<Arc<dyn ToolBridge>>,
    /// Sees the cell's stream text as it arrives (for progress reports).
    pub observer: Option<OutputObserver>,
}

impl<'a> Cell<'a> {
    /// A cell of `code` in `language`, with no reset, bridge or observer.
    pub fn new(language: Language, code: &'a str) -> Self {
        Cell { language, code, reset: false, bridge: None, observer: None }
    }
}

/// What the inactivity timeout did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutAction {
    /// The kernel was interrupted and stopped the cell; its state is kept.
    Interrupted,
    /// The kernel ignored the interrupt and was killed; its state is lost.
    Killed,
}

/// How a cell ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellStatus {
    /// It ran to the end.
    Ok,
    /// It raised; the error is the last [`Output::Error`].
    Error,
    /// It went quiet for longer than the inactivity timeout.
    TimedOut {
        /// Whether the cell was interrupted or its kernel killed.
        action: TimeoutAction,
        /// The inactivity timeout that ran out ([`KernelConfig::inactivity_timeout`](crate::KernelConfig::inactivity_timeout)).
        after: Duration,
    },
    /// The kernel process died during the cell (segfault, `os._exit`,
    /// `process.exit`); `exit` says how. The next call starts a fresh kernel.
    Crashed {
        /// How the process ended, such as `exit status 1`, `killed by SIGSEGV`
        /// or `did not exit; killed`.
        exit: String,
    },
}

/// The outcome of one cell, in Jupyter's output model.
#[derive(Debug, Clone)]
pub struct CellResult {
    /// The kernel the cell ran in.
    pub kernel: KernelInfo,
    /// 1-based count of cells run in this kernel.
    pub execution_count: u32,
    /// Everything the cell produced, in order, under the output limits.
    pub outputs: Vec<Output>,
    /// How the cell ended.
    pub status: CellStatus,
    /// The kernel's variables are gone: it was killed or crashed in this cell.
    pub state_lost: bool,
    /// This cell started a new kernel; `previous_lost` says whether an
    /// earlier one had died (crash, kill) rather than this being the first.
    pub fresh_kernel: bool,
    /// With `fresh_kernel`: an earlier kernel of this language had died or been
    /// killed, and its state was lost; always false otherwise.
    pub previous_lost: bool,
    /// The previous cell of this language was cancelled (its caller went
    /// away) and stopped this way: interrupted (the state is kept) or killed
    /// (the state was lost; this cell runs in a fresh kernel).
    pub previous_cancelled: Option<TimeoutAction>,
    /// How much output was cut, if any.
    pub cut: Option<Cut>,
    /// Where the kernel runs: its spawner's description (`host`,
    /// `bwrap (no network, root writable)`, `command prefix …`).
    pub enclosure: String,
}

impl CellResult {
    /// Whether the cell failed (raised, timed out or crashed).
    pub fn is_error(&self) -> bool {
        self.status != CellStatus::Ok
    }

    /// Every image in display data and results, in order.
    pub fn images(&self) -> Vec<Image> {
        self.outputs
            .iter()
            .flat_map(|output| match output {
                Output::Display { data } | Output::Result { data } => Image::from_bundle(data),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The plain-text rendering for a reader: streams as written, rich
    /// outputs by their `text/plain` (images as a placeholder), errors by
    /// their traceback, and a closing note for timeouts and crashes.
    pub fn text(&self) -> String {
        let mut text = String::new();
        match self.previous_cancelled {
            Some(TimeoutAction::Interrupted) => {
                let _ = writeln!(text, "[the previous cell was cancelled and interrupted; the kernel's state is kept]");
            }
            Some(TimeoutAction::Killed) => {
                let _ = writeln!(
                    text,
                    "[the previous cell was cancelled and ignored the interrupt, so its kernel was killed and its state was lost; this cell ran in a new {} kernel]",
                    self.kernel.language
                );
            }
            None => {}
        }
        if self.fresh_kernel && self.enclosure != "host" {
            let _ = writeln!(text, "[a new {} kernel, in {}]", self.kernel.language, self.enclosure);
        }
        if self.fresh_kernel && self.previous_lost && self.previous_cancelled != Some(TimeoutAction::Killed) {
            let _ = writeln!(
                text,
                "[started a new {} kernel: the previous one had died and its state was lost]",
                self.kernel.language
            );
        }
        for output in &self.outputs {
            match output {
                Output::Stream { text: chunk, .. } => text.push_str(chunk),
                Output::Display { data } | Output::Result { data } => {
                    ensure_newline(&mut text);
                    let images = Image::from_bundle(data);
                    if images.is_empty() {
                        text.push_str(data.get("text/plain").map_or("", String::as_str));
                    } else {
                        for image in images {
                            match image.size {
                                Some((w, h)) => {
                                    let _ = write!(text, "[{} image {w}×{h}]", image.mime);
                                }
                                None => {
                                    let _ = write!(text, "[{} image]", image.mime);
                                }
                            }
                        }
                    }
                    text.push('\n');
                }
                Output::Error { traceback, ename, evalue } => {
                    ensure_newline(&mut text);
                    if traceback.is_empty() {
                        let _ = writeln!(text, "{ename}: {evalue}");
                    } else {
                        for line in traceback {
                            text.push_str(line);
                            text.push('\n');
                        }
                    }
                }
            }
        }
        ensure_newline(&mut text);
        match &self.status {
            CellStatus::TimedOut { action: TimeoutAction::Interrupted, after } => {
                let _ = writeln!(
                    text,
                    "[no output for {} s: the cell was interrupted; partial output above; the kernel's state is kept]",
                    after.as_secs()
                );
            }
            CellStatus::TimedOut { action: TimeoutAction::Killed, after } => {
                let _ = writeln!(
                    text,
                    "[no output for {} s: the cell ignored the interrupt and the kernel was killed; partial output above; the kernel's state was lost]",
                    after.as_secs()
                );
            }
            CellStatus::Crashed { exit } => {
                let _ = writeln!(
                    text,
                    "[the {} kernel crashed ({exit}); partial output above; its state was lost and the next call starts a fresh kernel]",
                    self.kernel.language
                );
            }
            CellStatus::Ok | CellStatus::Error => {}
        }
        text
    }
}

fn ensure_newline(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

#[derive(Default)]
struct Slot {
    process: Option<Process>,
    lost: bool,
    /// The last cell was cancelled, and how it stopped.
    cancelled: Option<TimeoutAction>,
}

/// The kernels of one conversation. Cells for one language run one at a
/// time; dropping `Kernels` kills every kernel process.
pub struct Kernels {
    config: KernelConfig,
    spawner: Arc<dyn Spawner>,
    slots: [Arc<Mutex<Slot>>; 2],
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels").field("root", &self.config.root).field("spawner", &self.spawner).finish()
    }
}

impl Kernels {
    /// Kernels run on the host.
    pub fn new(config: KernelConfig) -> Self {
        Kernels::with_spawner(config, Arc::new(HostSpawner))
    }

    /// Kernels started through `spawner` (an enclosure the host runs).
    pub fn with_spawner(config: KernelConfig, spawner: Arc<dyn Spawner>) -> Self {
        Kernels { config, spawner, slots: [Arc::default(), Arc::default()] }
    }

    /// The configuration the kernels are started with.
    pub fn config(&self) -> &KernelConfig {
        &self.config
    }

    /// Which interpreters this configuration would use, and where kernels run.
    pub fn status(&self) -> (String, Vec<InterpreterReport>) {
        (self.spawner.describe(), interpreter_reports(&self.config, self.spawner.as_ref()))
    }

    /// Runs a cell, starting the language's kernel first if needed.
    ///
    /// Errors only when no kernel can be started (no interpreter, spawn
    /// failure); a cell that raises, times out or crashes is a [`CellResult`].
    ///
    /// Cancel-safe: dropping the future while the cell runs interrupts it
    /// (interrupt, grace, kill, as for the inactivity budget) on the cell's
    /// own task, which then releases the kernel; the next cell's
    /// [`CellResult::previous_cancelled`] says how it stopped.
    pub async fn execute(&self, cell: Cell<'_>) -> Result<CellResult> {
        let slot = self.slots[cell.language.index()].clone().lock_owned().await;
        let job = Job {
            slot,
            language: cell.language,
            code: cell.code.to_owned(),
            reset: cell.reset,
            bridge: cell.bridge,
            observer: cell.observer,
            config: self.config.clone(),
            spawner: self.spawner.clone(),
        };
        // The caller holds `_caller`; dropping this future drops it, which
        // is how the job learns that nobody waits for the cell any more.
        let (_caller, cancel) = oneshot::channel::<()>();
        match tokio::spawn(job.run(cancel)).await {
            Ok(result) => result,
            Err(error) => Err(crate::Error::Spawner(format!("the cell's task failed: {error}"))),
        }
    }

    /// Discards the language's interpreter; the next cell starts clean.
    pub async fn reset(&self, language: Language) {
        let mut slot = self.slots[language.index()].lock().await;
        if let Some(mut process) = slot.process.take() {
            process.kill().await;
        }
        slot.lost = false;
        slot.cancelled = None;
    }

    /// Kills every kernel.
    pub async fn shutdown(&self) {
        for language in Language::ALL {
            self.reset(language).await;
        }
    }

    /// The running kernels.
    pub async fn running(&self) -> Vec<KernelInfo> {
        let mut found = Vec::new();
        for slot in &self.slots {
            if let Some(process) = slot.lock().await.process.as_ref() {
                found.push(process.info.clone());
            }
        }
        found
    }
}

/// One cell's run, on a task of its own, holding its language's slot.
struct Job {
    slot: OwnedMutexGuard<Slot>,
    language: Language,
    code: String,
    reset: bool,
    bridge: Option<Arc<dyn ToolBridge>>,
    observer: Option<OutputObserver>,
    config: KernelConfig,
    spawner: Arc<dyn Spawner>,
}

impl Job {
    async fn run(mut self, mut cancel: oneshot::Receiver<()>) -> Result<CellResult> {
        let slot = &mut *self.slot;
        if self.reset {
            if let Some(mut process) = slot.process.take() {
                process.kill().await;
            }
            slot.lost = false;
            slot.cancelled = None;
        }
        let fresh = slot.process.is_none();
        let previous_lost = fresh && slot.lost;
        if fresh {
            // Through a prefix the lookup is a process run inside: off the runtime's threads.
            let (language, config, spawner) = (self.language, self.config.clone(), Arc::clone(&self.spawner));
            let interpreter =
                tokio::task::spawn_blocking(move || find_interpreter_in(language, &config, spawner.as_ref()))
                    .await
                    .map_err(|error| crate::Error::Spawner(format!("the interpreter's lookup failed: {error}")))??;
            slot.process = Some(Process::start(&interpreter, &self.config, self.spawner.as_ref()).await?);
            slot.lost = false;
        }
        let Some(process) = slot.process.as_mut() else {
            return Err(crate::Error::Spawner("kernel vanished while starting".to_owned()));
        };
        if matches!(cancel.try_recv(), Err(oneshot::error::TryRecvError::Closed)) {
            // Cancelled while the kernel started: the cell never ran.
            return Err(crate::Error::Spawner("the call was cancelled before the cell ran".to_owned()));
        }
        let code = match self.language {
            Language::Python => rewrite_python(&self.code),
            Language::JavaScript => self.code.clone(),
        };
        let mut collector = Collector::new(self.config.limits);
        let (end, cancelled) = process
            .run(&code, self.bridge.as_ref(), &self.config, &mut collector, self.observer.as_ref(), &mut cancel)
            .await;
        let kernel = process.info.clone();
        let execution_count = process.count;
        let (outputs, cut) = collector.finish();
        let after = self.config.inactivity_timeout;
        let (status, state_lost) = match end {
            RunEnd::Done { interrupted: true, .. } => {
                (CellStatus::TimedOut { action: TimeoutAction::Interrupted, after }, false)
            }
            RunEnd::Done { status, .. } => (if status == "ok" { CellStatus::Ok } else { CellStatus::Error }, false),
            RunEnd::Killed => (CellStatus::TimedOut { action: TimeoutAction::Killed, after }, true),
            RunEnd::Crashed { exit } => (CellStatus::Crashed { exit }, true),
        };
        if state_lost {
            if let Some(mut process) = slot.process.take() {
                process.kill().await;
            }
            slot.lost = true;
        }
        let previous_cancelled = slot.cancelled.take();
        if cancelled {
            slot.cancelled = Some(if state_lost { TimeoutAction::Killed } else { TimeoutAction::Interrupted });
        }
        Ok(CellResult {
            kernel,
            execution_count,
            outputs,
            status,
            state_lost,
            fresh_kernel: fresh,
            previous_lost,
            previous_cancelled,
            cut: (!cut.is_empty()).then_some(cut),
            enclosure: self.spawner.describe(),
        })
    }
}
