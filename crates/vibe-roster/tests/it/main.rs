//! The integration tests of `vibe-roster`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p vibe-roster --test it MODULE::`.

mod bounded;
mod enclosed;
mod processes;
mod scripted;
