//! The `agent-tools` command's modules, as a library so that the fuzz targets
//! (`fuzz/`) reach the configuration parser exactly as the command runs it. The
//! command is the interface; nothing here is a stable API.

pub mod config;
pub mod elicit;
pub mod rounds;
pub mod serve;
pub mod status;
pub mod wiring;

/// The one place the command writes to stderr (outside logging).
#[allow(clippy::print_stderr)]
pub fn eprint(text: &str) {
    eprintln!("{text}");
}
