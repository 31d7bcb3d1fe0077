//! The Python package's tests, one binary: `pytest` runs the suite of `tests/python`
//! against the extension built in place, and `wheel` builds a wheel, installs it into a
//! fresh venv and runs the command from it, and `shared_build` checks that maturin's build
//! of the extension reuses the test build's artifacts. `common` finds the tools `cargo xtask setup`
//! installs, and builds the extension once for both.
//! Run one with `cargo test -p agent-tools-py --test it MODULE::`.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod common;
mod pytest;
mod release;
mod shared_build;
mod wheel;
