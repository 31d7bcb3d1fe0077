//! Project chores, run as `cargo xtask <command>` through the alias in `.cargo/config.toml`.
//!
//! - `setup`: installs what the tests and the benchmark need (idempotent; each step checks first).
//! - `fixtures`: builds the fixture language server and debug adapter (setup does too).
//! - `dist`: the release's Linux wheel, built and checked as a user without a toolchain meets it.
//! - `image`: the container image of `deploy/Containerfile` (podman, offline), and `--bench` its start to first call.
//! - `test`: the whole suite: every test through cargo-nextest (setup installs it), then
//!   the doctests through `cargo test --doc`, which nextest does not run.
//! - `bench`, `trials`, `faults`, `fuzz`: run by `xtask-suites`, which drives the
//!   workspace's crates and so compiles most of them; this binary passes the command
//!   line on as `cargo run -p xtask-suites -- …`, so `setup` never waits for that build.
//!
//! This is a binary for people and CI: it prints what it does.

#![warn(missing_docs)]
// Printing is this binary's job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, bail};
use xtask::{setup, workspace_root};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup            install the tools the tests and the benchmark need into .tools/
  fixtures         build the fixture language server and debug adapter (setup does this too)
  test [ARGS]      run the whole suite: `cargo nextest run --workspace ARGS` with setup's cargo-nextest
                   (each test a process, every binary's tests in one pool), then the doctests (`cargo test --doc`)
  dist             build the release's Linux wheel (manylinux 2_28, maturin with zig) into target/dist, check its
                   policy with auditwheel, install it into a fresh venv with no Rust toolchain on PATH and use it
                   (call, serve, import), timing pip install to the first answered call
  image [--binary PATH] [--tag TAG] [--bench [--runs N]]
                   build the container image of deploy/Containerfile with podman, offline: a Debian root filesystem
                   from mmdebstrap (cached in .tools/image), the binary (default: a release build), pyright;
                   --bench: container start to the first answered tool call over MCP HTTP, under runc and gVisor

run by xtask-suites (the first run builds most of the workspace):
  bench astmatch [--runs N]
                   time ast_grep against the ast-grep CLI and a bare tree-sitter parse
  bench scale [--sizes 25000,50000,100000] [--runs N] [--binary PATH]
                   ast_grep against `ast-grep run` on trees of N real source files hard-linked under the temp dir:
                   per size and pattern both times, both peak RSS, their ratios and both match counts,
                   then the peak memory of staging a whole-tree ast_edit per replacement
  bench kernel [--rounds N] [--cells N] [--enclosure none|bwrap]
                   time the eval kernel against ipykernel + jupyter_client
  bench dap [--adapter debugpy|lldb] [--rounds N] [--steps N]
                   time a debugger step through dap-session against a raw DAP client
  bench lsp [--server all|clangd|rust-analyzer|gopls|pyright|pylsp|ruff|typescript-language-server]
            [--rounds N] [--writes N] [--only requests|writes|cross-file]
                   time lsp requests through the supervisor against a raw client, diagnostics on write,
                   and the cross-file answer (callers a signature change broke)
  bench host [--runs 1,4,16,32] [--separate-max N] [--project rust|python] [--worktrees] [--churn N]
                   the memory (PSS) of N runs on one checkout (or, --worktrees, on N git worktrees of it): one
                   `serve --http` host against N stdio processes (rust-analyzer on regex-syntax, pyright on nine
                   stdlib packages), with ratios; --churn N: N runs opened, asked and closed in turn on one host,
                   its RSS and the processes under it after a warm-up and at the end
  bench engines [--rounds N] [--cells N] [--steps N]
                   time an eval cell and a debugger step on the host against the same through
                   `podman exec -i` into a container under runc and under gVisor, with ratios
  trials [--count N] [--seed S] [--only resolve|rename|rename-server]
                   randomized all-or-nothing trials of resolve's and lsp_rename's writes (faults, concurrent changes);
                   prints the seed and the figures, fails on any partial application or wrong result
  faults [--only TEXT]
                   the fault suite: each row injects a fault into the fixture language server, the fixture debug
                   adapter, the Python kernel or a worker, and checks that the call ends in time with a clear
                   answer, that no process is left, that the next call works and that status tells the truth
  fuzz TARGET...|--all (--minutes N | --seconds N | --smoke)
                   run libFuzzer targets, one per core at a time (needs the nightly toolchain; installs cargo-fuzz when missing);
                   one line per target: runs, coverage, corpus, crashes (kept in fixtures/fuzz/TARGET/).
                   Targets: pattern_match, rewrite_stage, lsp_frames, dap_frames, dap_state, kernel_frames,
                   root_paths, config. --smoke: 5 s each from the seeds alone, fixed random seed (CI)";

/// The commands `xtask-suites` runs; their options are checked there.
const SUITES: &[&str] = &["bench", "trials", "faults", "fuzz"];

fn main() -> Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["setup"] => setup::run().map(|()| ExitCode::SUCCESS),
        ["fixtures"] => setup::build_fixtures().map(|()| ExitCode::SUCCESS),
        ["dist"] => xtask::dist::run().map(|()| ExitCode::SUCCESS),
        ["image", rest @ ..] => xtask::image::run(rest).map(|()| ExitCode::SUCCESS),
        ["test", rest @ ..] => test(rest),
        [command, ..] if SUITES.contains(command) => suites(&args),
        ["help" | "--help" | "-h"] | [] => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!("unknown command `{}`\n\n{USAGE}", args.join(" ")),
    }
}

/// The suite: `cargo-nextest nextest run --workspace ARGS` (the configuration is
/// `.config/nextest.toml`), then the doctests, which nextest cannot run. The first
/// failure's exit code is ours; the doctests are not run after a failure.
fn test(args: &[&str]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let nextest = setup::venv_bin("cargo-nextest");
    if !nextest.exists() {
        bail!("{} is missing: run `cargo xtask setup` first", nextest.display());
    }
    let steps: [(std::path::PathBuf, Vec<&str>); 2] = [
        (nextest, [&["nextest", "run", "--workspace"][..], args].concat()),
        // The whole workspace, so the features resolve as in the test build and nothing is
        // built again (cargo warns that the Python package, a cdylib, has no doctests).
        (cargo.into(), vec!["test", "--workspace", "--doc"]),
    ];
    for (program, step) in steps {
        println!("== {} {}", program.file_name().unwrap_or_default().to_string_lossy(), step.join(" "));
        let status = Command::new(&program)
            .current_dir(workspace_root())
            .args(&step)
            .status()
            .with_context(|| format!("could not start {}", program.display()))?;
        if !status.success() {
            return Ok(exit_code(status));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A child's exit status as ours.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        // Killed by a signal: a failure all the same.
        None => ExitCode::FAILURE,
    }
}

/// `cargo run -p xtask-suites -- ARGS` from the workspace root (not quiet: the first
/// build takes minutes, and its progress shows), with this
/// process's stdin, stdout and stderr; its exit code becomes ours.
fn suites(args: &[&str]) -> Result<ExitCode> {
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(workspace_root())
        .args(["run", "--package", "xtask-suites", "--"])
        .args(args)
        .status()
        .context("could not start cargo run -p xtask-suites")?;
    Ok(exit_code(status))
}
