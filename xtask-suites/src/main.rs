//! The suites behind `cargo xtask bench|trials|faults|fuzz`, which drive the
//! workspace's crates and so compile most of them. `cargo xtask` (the light
//! `xtask` binary) runs this one as `cargo run -p xtask-suites -- …` with the same
//! command line, so `cargo xtask setup` never waits for this build.
//!
//! - `bench astmatch`: times our structural search against the ast-grep CLI and a bare parse.
//! - `bench kernel`: times the eval kernel against ipykernel driven by jupyter_client.
//! - `bench dap`: times a debugger step through dap-session against a raw DAP client to the same adapter.
//! - `bench lsp`: times lsp requests through the supervisor against a raw client to the same server.
//! - `bench host`: the memory of N runs on one checkout, one HTTP host against N stdio processes.
//! - `bench scale`: our search against the ast-grep CLI on trees of 25k–100k real files, time and peak memory.
//! - `bench engines`: an eval cell and a debugger step on the host against the same in a container (runc, gVisor).
//! - `fuzz`: runs the libFuzzer targets in `fuzz/` (nightly and `cargo fuzz`), one line of figures per target.
//! - `faults`: the fault suite — one table of faults over the language server, debug adapter, kernel, workers,
//!   and a kernel in a container killed or paused mid-cell.
//! - `trials`: randomized all-or-nothing trials of resolve's and lsp_rename's writes, with faults and concurrent changes.
//!
//! `cargo test -p xtask-suites` runs the fault table and 100 trials of each part.
//! This is a binary for people and CI: it prints what it does, and it is not a library.
//! The usage text is `cargo xtask help`'s.
#![warn(missing_docs)]
// Printing is this binary's job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod bench_dap;
mod bench_engines;
mod bench_host;
mod bench_kernel;
mod bench_lsp;
mod bench_scale;
mod corpus;
mod fault_row;
mod faults;
mod faults_dap;
mod faults_engine;
mod faults_kernel;
mod faults_lsp;
mod faults_vibe;
mod floor;
mod fuzz;
mod trial_parts;
mod trials;
mod trials_rename;

use anyhow::{Result, bail};
pub(crate) use xtask::{run_quiet, setup, tools_dir, workspace_root};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["bench", "astmatch", rest @ ..] => bench::run(&bench::Options::parse(rest)?),
        ["bench", "kernel", rest @ ..] => bench_kernel::run(&bench_kernel::Options::parse(rest)?),
        ["bench", "dap", rest @ ..] => bench_dap::run(&bench_dap::Options::parse(rest)?),
        ["bench", "lsp", rest @ ..] => bench_lsp::run(&bench_lsp::Options::parse(rest)?),
        ["bench", "host", rest @ ..] => bench_host::run(&bench_host::Options::parse(rest)?),
        ["bench", "engines", rest @ ..] => bench_engines::run(&bench_engines::Options::parse(rest)?),
        ["bench", "scale", rest @ ..] => bench_scale::run(&bench_scale::Options::parse(rest)?),
        ["fuzz", rest @ ..] => fuzz::run(&fuzz::Options::parse(rest)?),
        ["trials", rest @ ..] => trial_parts::run(&trials::Options::parse(rest)?),
        ["faults", rest @ ..] => faults::run(&faults::Options::parse(rest)?),
        // Used by the benchmark from a release build; not for people.
        ["parse-floor", lang, dir] => bench::parse_floor_command(lang, dir),
        ["search-once", lang, pattern, dir] => bench::search_once_command(lang, pattern, dir),
        ["kernel-once", cells] => bench_kernel::once_command(cells, "none"),
        ["kernel-once", cells, enclosure] => bench_kernel::once_command(cells, enclosure),
        ["lsp-once", rest @ ..] => bench_lsp::once_command(rest),
        _ => bail!("unknown command `{}`; `cargo xtask help` lists them", args.join(" ")),
    }
}
