//! Project chores, run as `cargo xtask <command>` through the alias in `.cargo/config.toml`.
//!
//! - `setup`: installs what the tests and the benchmark need (idempotent; each step checks first).
//! - `fixtures`: builds the fixture language server and debug adapter (setup does too).
//! - `bench astmatch`: times our structural search against the ast-grep CLI and a bare parse.
//! - `bench kernel`: times the eval kernel against ipykernel driven by jupyter_client.
//! - `bench dap`: times a debugger step through dap-session against a raw DAP client to the same adapter.
//! - `bench lsp`: times lsp requests through the supervisor against a raw client to the same server.
//! - `fuzz`: runs the libFuzzer targets in `fuzz/` (nightly and `cargo fuzz`), one line of figures per target.
//! - `faults`: the fault suite — one table of faults over the language server, debug adapter, kernel and workers.
//! - `trials`: randomized all-or-nothing trials of resolve's and lsp_rename's writes, with faults and concurrent changes.
//!
//! This is a binary for people and CI: it prints what it does, and it is not a library.

// Printing is this binary's job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod bench_dap;
mod bench_kernel;
mod bench_lsp;
mod corpus;
mod faults;
mod faults_dap;
mod faults_kernel;
mod faults_lsp;
mod faults_vibe;
mod floor;
mod fuzz;
mod setup;
mod trials;
mod trials_rename;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup            install the tools the tests and the benchmark need into .tools/
  fixtures         build the fixture language server and debug adapter (setup does this too)
  bench astmatch [--runs N]
                   time ast_grep against the ast-grep CLI and a bare tree-sitter parse
  bench kernel [--rounds N] [--cells N] [--enclosure none|bwrap]
                   time the eval kernel against ipykernel + jupyter_client
  bench dap [--adapter debugpy|lldb] [--rounds N] [--steps N]
                   time a debugger step through dap-session against a raw DAP client
  bench lsp [--server all|clangd|rust-analyzer|gopls|pyright|pylsp|ruff|typescript-language-server]
            [--rounds N] [--writes N] [--only requests|writes|cross-file]
                   time lsp requests through the supervisor against a raw client, diagnostics on write,
                   and the cross-file answer (callers a signature change broke)
  trials [--count N] [--seed S] [--only resolve|rename|rename-server]
                   randomized all-or-nothing trials of resolve's and lsp_rename's writes (faults, concurrent changes);
                   prints the seed and the figures, fails on any partial application or wrong result
  faults [--only TEXT]
                   the fault suite: each row injects a fault into the fixture language server, the fixture debug
                   adapter, the Python kernel or a worker, and checks that the call ends in time with a clear
                   answer, that no process is left, that the next call works and that status tells the truth
  fuzz TARGET...|--all (--minutes N | --seconds N | --smoke)
                   run libFuzzer targets (needs the nightly toolchain; installs cargo-fuzz when missing);
                   one line per target: runs, coverage, corpus, crashes (kept in fixtures/fuzz/TARGET/).
                   Targets: pattern_match, rewrite_stage, lsp_frames, dap_frames, dap_state, kernel_frames,
                   root_paths, config. --smoke: 5 s each from the seeds alone, fixed random seed (CI)";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["setup"] => setup::run(),
        ["fixtures"] => setup::build_fixtures(),
        ["bench", "astmatch", rest @ ..] => bench::run(&bench::Options::parse(rest)?),
        ["bench", "kernel", rest @ ..] => bench_kernel::run(&bench_kernel::Options::parse(rest)?),
        ["bench", "dap", rest @ ..] => bench_dap::run(&bench_dap::Options::parse(rest)?),
        ["bench", "lsp", rest @ ..] => bench_lsp::run(&bench_lsp::Options::parse(rest)?),
        ["fuzz", rest @ ..] => fuzz::run(&fuzz::Options::parse(rest)?),
        ["trials", rest @ ..] => trials::run(&trials::Options::parse(rest)?),
        ["faults", rest @ ..] => faults::run(&faults::Options::parse(rest)?),
        // Used by the benchmark from a release build; not for people.
        ["parse-floor", lang, dir] => bench::parse_floor_command(lang, dir),
        ["search-once", lang, pattern, dir] => bench::search_once_command(lang, pattern, dir),
        ["kernel-once", cells] => bench_kernel::once_command(cells, "none"),
        ["kernel-once", cells, enclosure] => bench_kernel::once_command(cells, enclosure),
        ["lsp-once", rest @ ..] => bench_lsp::once_command(rest),
        ["help" | "--help" | "-h"] | [] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => bail!("unknown command `{}`\n\n{USAGE}", args.join(" ")),
    }
}

/// The workspace root (the parent of `xtask/`).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Where `setup` installs tools: `<workspace>/.tools` (ignored in git).
pub(crate) fn tools_dir() -> PathBuf {
    workspace_root().join(".tools")
}

/// Runs a command to completion with no stdin, failing with its stderr when it fails.
pub(crate) fn run_quiet(cmd: &mut Command) -> Result<std::process::Output> {
    let shown = format!("{cmd:?}");
    let out = cmd.stdin(std::process::Stdio::null()).output().with_context(|| format!("could not start {shown}"))?;
    if !out.status.success() {
        bail!(
            "{shown} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}
