//! The integration tests of `agent-tools`, one module a subject, in one test binary:
//! one link instead of one a file. Run one module with `cargo test -p agent-tools --test it MODULE::`.
//! `tests/facade.rs` stays a binary of its own: it builds the facade once per feature,
//! and running those builds beside the servers these modules start would slow both.

// Tests may unwrap, expect and print what they saw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, clippy::print_stdout)]

mod apply_patch;
mod approval_gate;
mod approval_policy;
mod ask_user_tool;
mod astmatch_tools;
mod boundaries;
mod confinement;
mod cross_file_diagnostics;
mod debug_tool;
mod eval_tool;
mod golden;
mod helper_servers;
mod host;
mod lsp_status;
mod lsp_tools;
mod paths;
mod schema;
mod surface;
mod vibe_tools;
