//! The kernels of one conversation: at most one per language, started on
//! first use, replaced after a crash, a kill or a reset.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use crate::magics::rewrite_python;
use crate::output::Collector;
use crate::process::{Process, RunEnd};
use crate::{
    Cut, HostSpawner, Image, InterpreterReport, KernelConfig, Language, Output, Result, Spawner, ToolBridge,
    find_interpreter, interpreter_reports,
};

/// One cell to run.
#[derive(Clone)]
pub struct Cell<'a> {
    pub language: Language,
    pub code: &'a str,
    /// Discard the language's interpreter and start clean before running.
    pub reset: bool,
    /// Answers `tool(name, args)` from inside the cell; without one such
    /// calls fail in the cell.
    pub bridge: Option<Arc<dyn ToolBridge>>,
}

impl<'a> Cell<'a> {
    pub fn new(language: Language, code: &'a str) -> Self {
        Cell { language, code, reset: false, bridge: None }
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
    TimedOut { action: TimeoutAction, after: Duration },
    /// The kernel process died during the cell (segfault, `os._exit`,
    /// `process.exit`); `exit` says how. The next call starts a fresh kernel.
    Crashed { exit: String },
}

/// The kernel a cell ran in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub language: Language,
    /// Interpreter version, e.g. `3.11.7` or `20.20.2`.
    pub version: String,
    pub executable: PathBuf,
    pub pid: u32,
}

/// The outcome of one cell, in Jupyter's output model.
#[derive(Debug, Clone)]
pub struct CellResult {
    pub kernel: KernelInfo,
    /// 1-based count of cells run in this kernel.
    pub execution_count: u32,
    pub outputs: Vec<Output>,
    pub status: CellStatus,
    /// The kernel's variables are gone: it was killed or crashed in this cell.
    pub state_lost: bool,
    /// This cell started a new kernel; `previous_lost` says whether an
    /// earlier one had died (crash, kill) rather than this being the first.
    pub fresh_kernel: bool,
    pub previous_lost: bool,
    /// How much output was cut, if any.
    pub cut: Option<Cut>,
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
        if self.fresh_kernel && self.previous_lost {
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
}

/// The kernels of one conversation. Cells for one language run one at a
/// time; dropping `Kernels` kills every kernel process.
pub struct Kernels {
    config: KernelConfig,
    spawner: Arc<dyn Spawner>,
    slots: [Mutex<Slot>; 2],
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
        Kernels { config, spawner, slots: [Mutex::new(Slot::default()), Mutex::new(Slot::default())] }
    }

    pub fn config(&self) -> &KernelConfig {
        &self.config
    }

    /// Which interpreters this configuration would use, and where kernels run.
    pub fn status(&self) -> (String, Vec<InterpreterReport>) {
        (self.spawner.describe(), interpreter_reports(&self.config))
    }

    /// Runs a cell, starting the language's kernel first if needed.
    ///
    /// Errors only when no kernel can be started (no interpreter, spawn
    /// failure); a cell that raises, times out or crashes is a [`CellResult`].
    pub async fn execute(&self, cell: Cell<'_>) -> Result<CellResult> {
        let mut slot = self.slots[cell.language.index()].lock().await;
        if cell.reset {
            if let Some(mut process) = slot.process.take() {
                process.kill().await;
            }
            slot.lost = false;
        }
        let fresh = slot.process.is_none();
        let previous_lost = fresh && slot.lost;
        if fresh {
            let interpreter = find_interpreter(cell.language, &self.config)?;
            slot.process = Some(Process::start(&interpreter, &self.config, self.spawner.as_ref()).await?);
            slot.lost = false;
        }
        let Some(process) = slot.process.as_mut() else {
            return Err(crate::Error::Spawner("kernel vanished while starting".to_owned()));
        };
        let code = match cell.language {
            Language::Python => rewrite_python(cell.code),
            Language::JavaScript => cell.code.to_owned(),
        };
        let mut collector = Collector::new(self.config.limits);
        let end = process.run(&code, cell.bridge.as_ref(), &self.config, &mut collector).await;
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
        Ok(CellResult {
            kernel,
            execution_count,
            outputs,
            status,
            state_lost,
            fresh_kernel: fresh,
            previous_lost,
            cut: (!cut.is_empty()).then_some(cut),
        })
    }

    /// Discards the language's interpreter; the next cell starts clean.
    pub async fn reset(&self, language: Language) {
        let mut slot = self.slots[language.index()].lock().await;
        if let Some(mut process) = slot.process.take() {
            process.kill().await;
        }
        slot.lost = false;
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
