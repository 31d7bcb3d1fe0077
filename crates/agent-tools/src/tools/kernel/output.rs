//! `eval`'s value (MCP `structuredContent`): the cell's outputs shaped as
//! Jupyter's, made from the kernel's result, and worded by it.

use std::collections::BTreeMap;

use kernel::{CellResult, CellStatus, Output, TimeoutAction};
use schemars::JsonSchema;
use serde::Serialize;

use crate::result::Image;
use crate::tool::Words;

/// `eval`'s structured value: the cell's outputs shaped as Jupyter's
/// (nbformat 4 output types and MIME bundles), and what happened to the kernel.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalOutput {
    /// `python` or `javascript`.
    pub language: &'static str,
    /// The interpreter's version.
    pub version: String,
    /// The cell's number in this kernel (1 for the first).
    pub execution_count: u32,
    /// How the cell ended.
    pub status: EvalStatus,
    /// Whether the kernel's earlier state (variables, imports) is gone.
    pub state_lost: bool,
    /// Whether this cell ran in a kernel started for it.
    pub fresh_kernel: bool,
    /// Where the kernel runs: `host`, or the run's enclosure, e.g. `bwrap (no network, root writable)`.
    pub enclosure: String,
    /// How the previous cell ended when its call was cancelled: `interrupted`
    /// (the state survived) or `killed` (a fresh kernel); `null` otherwise.
    pub previous_cancelled: Option<&'static str>,
    /// The cell's outputs, in the order it made them.
    pub outputs: Vec<CellOutput>,
    /// What was cut to keep within the output limits; `null` when nothing was.
    pub cut: Option<CutOutput>,
    /// The kernel's result this value is made from: worded by the `kernel`
    /// crate ([`CellResult::text`]), its figures the result's images.
    #[serde(skip)]
    pub result: CellResult,
}

impl Words for EvalOutput {
    fn words(&self) -> String {
        self.result.text()
    }

    fn is_error(&self) -> bool {
        self.result.is_error()
    }

    fn take_images(&mut self) -> Vec<Image> {
        let mut images = Vec::new();
        for output in &self.result.outputs {
            if let Output::Display { data } | Output::Result { data } = output {
                for mime in ["image/png", "image/jpeg"] {
                    if let Some(encoded) = data.get(mime) {
                        images.push(Image { mime: mime.to_owned(), data_base64: encoded.clone() });
                    }
                }
            }
        }
        images
    }
}

/// How a cell ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum EvalStatus {
    /// The cell ran to its end.
    Ok,
    /// The cell raised (its `error` output says what).
    Error,
    /// The cell went quiet past the inactivity budget.
    TimedOut {
        /// `interrupted` (the state survived) or `killed`.
        action: &'static str,
        /// The budget, in seconds.
        inactivity_seconds: u64,
    },
    /// The kernel process died.
    Crashed {
        /// The exit status as the system described it.
        exit: String,
    },
}

/// One output of a cell (nbformat's `output_type`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "output_type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CellOutput {
    /// Text written to stdout or stderr, adjacent writes merged.
    Stream {
        /// `stdout` or `stderr`.
        name: String,
        /// What was written, possibly cut (see `cut`).
        text: String,
    },
    /// A MIME bundle shown with `display()`; image bytes are in the result's images, here `(in images)`.
    DisplayData {
        /// The output by MIME type (`text/plain`, `text/html`, `image/png`).
        data: BTreeMap<String, String>,
    },
    /// The value of the cell's last expression, as a MIME bundle.
    ExecuteResult {
        /// The value by MIME type.
        data: BTreeMap<String, String>,
    },
    /// The exception that ended the cell.
    Error {
        /// The exception's type name, such as `ValueError`.
        ename: String,
        /// The exception's message.
        evalue: String,
        /// The traceback's entries, pointing into the cell (`<cell N>` in Python,
        /// `cell-N` in JavaScript); an entry may hold several lines.
        traceback: Vec<String>,
    },
}

/// What was cut from a cell's outputs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CutOutput {
    /// Characters of stream text dropped.
    pub stream_chars: usize,
    /// MIME values left out for size.
    pub mime_values: usize,
    /// Rich outputs left out past the count limit.
    pub rich_outputs: usize,
    /// Bytes of kernel frames skipped unread, each over the 16 MiB frame limit.
    pub frame_bytes: u64,
}

fn action_name(action: TimeoutAction) -> &'static str {
    match action {
        TimeoutAction::Interrupted => "interrupted",
        TimeoutAction::Killed => "killed",
    }
}

impl EvalOutput {
    /// Jupyter-shaped outputs for programs; image bytes travel in `images` only.
    pub(super) fn new(result: CellResult) -> EvalOutput {
        let bundle = |data: &kernel::MimeBundle| -> BTreeMap<String, String> {
            data.iter()
                .map(|(mime, value)| {
                    let shown = if mime.starts_with("image/") && mime != "image/svg+xml" {
                        "(in images)".to_owned()
                    } else {
                        value.clone()
                    };
                    (mime.clone(), shown)
                })
                .collect()
        };
        let outputs = result
            .outputs
            .iter()
            .map(|output| match output {
                Output::Stream { name, text } => CellOutput::Stream { name: name.to_string(), text: text.clone() },
                Output::Display { data } => CellOutput::DisplayData { data: bundle(data) },
                Output::Result { data } => CellOutput::ExecuteResult { data: bundle(data) },
                Output::Error { ename, evalue, traceback } => {
                    CellOutput::Error { ename: ename.clone(), evalue: evalue.clone(), traceback: traceback.clone() }
                }
            })
            .collect();
        let status = match &result.status {
            CellStatus::Ok => EvalStatus::Ok,
            CellStatus::Error => EvalStatus::Error,
            CellStatus::TimedOut { action, after } => {
                EvalStatus::TimedOut { action: action_name(*action), inactivity_seconds: after.as_secs() }
            }
            CellStatus::Crashed { exit } => EvalStatus::Crashed { exit: exit.clone() },
        };
        EvalOutput {
            language: result.kernel.language.name(),
            version: result.kernel.version.clone(),
            execution_count: result.execution_count,
            status,
            state_lost: result.state_lost,
            fresh_kernel: result.fresh_kernel,
            enclosure: result.enclosure.clone(),
            previous_cancelled: result.previous_cancelled.map(action_name),
            outputs,
            cut: result.cut.map(|cut| CutOutput {
                stream_chars: cut.stream_chars,
                mime_values: cut.mime_values,
                rich_outputs: cut.rich_outputs,
                frame_bytes: cut.frame_bytes,
            }),
            result,
        }
    }
}
