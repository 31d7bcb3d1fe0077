//! The `agent-tools` command's modules, as a library so that the fuzz targets
//! (`fuzz/`) reach the configuration parser exactly as the command runs it, and
//! the Python package (`crates/agent-tools-py`) runs the command itself
//! ([`command::main`]) and wires its runs as `serve` does ([`command::wire_run`]).
//! The command is the interface; nothing here is a stable API.
#![warn(missing_docs)]

mod call;
pub mod command;
pub mod config;
pub mod elicit;
pub mod forward;
pub mod http;
pub mod mcp_shapes;
pub mod rounds;
pub mod serve;
pub mod status;
pub mod tasks;
mod terminal;
pub mod wire;
pub mod wiring;

/// The one place the command writes to stderr (outside logging).
#[allow(clippy::print_stderr)]
pub fn eprint(text: &str) {
    eprintln!("{text}");
}
