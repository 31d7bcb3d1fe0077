//! Persistent Python and JavaScript kernels for one conversation.
//!
//! A kernel is a child process of the project's own interpreter (Python:
//! `.venv/bin/python`, then `venv/bin/python`, then `python3`; JavaScript:
//! `node`), driven by a small driver program shipped inside this crate. Frames
//! travel on two extra pipes (fds 3 and 4 in the child), never on the
//! program's stdout or stderr, so user prints, C extensions and child
//! processes cannot corrupt them; the kernel's stdin is empty.
//!
//! Use [`Kernels`]: one per conversation, holding at most one kernel per
//! [`Language`], started lazily through a [`Spawner`] the host provides
//! ([`HostSpawner`] by default). [`Kernels::execute`] runs a [`Cell`] and
//! returns a [`CellResult`] in Jupyter's output model. A cell may call back
//! into the host with `tool(name, args)`; the host answers through the
//! [`ToolBridge`] passed with the cell.
//!
//! This crate knows nothing of tool names, JSON schemas or approval tiers: the
//! bridge is an opaque callback, and refusals come back as its error string.
//! It never boots an enclosure; a spawner that runs kernels elsewhere only
//! wraps the command.
#![warn(missing_docs)]

mod bridge;
mod config;
mod error;
/// The frame reader, stream scanner and output collector over any bytes, for the fuzz
/// targets (the `fuzzing` feature).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod interpreter;
mod language;
mod magics;
mod output;
mod process;
mod protocol;
mod scanner;
mod session;
mod spawn;

pub use bridge::{BoxFuture, ToolBridge};
pub use config::{KernelConfig, OutputLimits};
pub use error::{Error, Result};
pub use interpreter::{
    Interpreter, InterpreterReport, InterpreterSource, find_interpreter, find_interpreter_in, interpreter_reports,
};
pub use language::Language;
pub use magics::rewrite_python;
pub use output::{Cut, Image, MimeBundle, Output, OutputObserver, StreamName};
pub use process::KernelInfo;
pub use session::{Cell, CellResult, CellStatus, Kernels, TimeoutAction};
pub use spawn::{HostSpawner, Launch, Spawner};
