//! The integration tests of `question-port`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p question-port --test it MODULE::`.

mod card;
mod channel;
mod terminal;
