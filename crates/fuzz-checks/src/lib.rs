//! The properties the fuzz targets check, one function per target.
//!
//! Each function takes the fuzzer's input bytes, runs one part of the project
//! on them, and panics when a property fails. The libFuzzer targets in `fuzz/`
//! call these functions, and so do the regression tests, which replay every
//! input under `fixtures/fuzz/TARGET/`, so a crash once found stays found.
//!
//! The inputs are plain byte layouts, not `arbitrary` structures, so that seed
//! inputs can be written from real code (`cargo xtask fuzz` does):
//! - text targets: a selector byte, then fields separated by NUL bytes;
//! - stream targets: a count byte `k`, `k` chunk sizes, then the stream, which
//!   is read whole and again in chunks of those sizes; both reads must agree.
#![warn(missing_docs)]

mod chunked;
mod config;
mod paths;
mod rewrite;
mod seeds;
mod streams;

pub use crate::config::config;
pub use crate::paths::root_paths;
pub use crate::rewrite::{pattern_match, rewrite_stage};
pub use crate::seeds::seeds;
pub use crate::streams::{dap_frames, dap_state, kernel_frames, lsp_frames};

/// One fuzz target: its name (the file name in `fuzz/fuzz_targets/` and the
/// directory under `fixtures/fuzz/`) and its check.
pub struct Target {
    /// The target's name, such as `pattern_match`: its file is
    /// `fuzz/fuzz_targets/NAME.rs` and its inputs are under `fixtures/fuzz/NAME/`.
    pub name: &'static str,
    /// The property check, given the fuzzer's input bytes; it panics when the
    /// property fails.
    pub check: fn(&[u8]),
    /// What it covers, one line.
    pub about: &'static str,
}

/// Every target, in the order `cargo xtask fuzz --all` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "pattern_match",
        check: pattern_match,
        about: "pattern compiler and matcher, every shipped language",
    },
    Target {
        name: "rewrite_stage",
        check: rewrite_stage,
        about: "rewrite and re-parse: a clean file stays clean or the change is refused",
    },
    Target { name: "lsp_frames", check: lsp_frames, about: "LSP Content-Length framing and message routing" },
    Target { name: "dap_frames", check: dap_frames, about: "DAP framing and message envelopes" },
    Target { name: "dap_state", check: dap_state, about: "the debug session's state machine against a model" },
    Target {
        name: "kernel_frames",
        check: kernel_frames,
        about: "the kernel's frame reader, stream scanner and output caps",
    },
    Target { name: "root_paths", check: root_paths, about: "path resolution inside the root, over symlink layouts" },
    Target { name: "config", check: config, about: "the agent-tools.toml parser and its error places" },
];

/// The selector byte and up to `n` NUL-separated fields (the last keeps any further NULs).
pub(crate) fn fields(data: &[u8], n: usize) -> Option<(u8, Vec<String>)> {
    let (&selector, rest) = data.split_first()?;
    let mut fields: Vec<String> =
        rest.splitn(n, |&b| b == 0).map(|field| String::from_utf8_lossy(field).into_owned()).collect();
    fields.resize(n, String::new());
    Some((selector, fields))
}

/// One tokio runtime per thread, reused across inputs.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|error| panic!("a current-thread runtime: {error}"));
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}
