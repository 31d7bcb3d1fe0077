//! The Python package's tests, one binary: `pytest` runs the suite of `tests/python`
//! against the extension built in place, and `wheel` builds a wheel, installs it into a
//! fresh venv and runs the command from it. `common` finds the tools `cargo xtask setup`
//! installs, and builds the extension once for both.

mod common;
mod pytest;
mod wheel;
