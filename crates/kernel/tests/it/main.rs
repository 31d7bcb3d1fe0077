//! The integration tests of `kernel`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p kernel --test it MODULE::`.

mod bounded;
mod cancel;
mod common;
mod enclosed;
mod javascript;
mod python;
mod supervision;
