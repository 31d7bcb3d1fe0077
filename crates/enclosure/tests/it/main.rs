//! The integration tests of `enclosure`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p enclosure --test it MODULE::`.

mod sandbox;
mod secrets;
