//! The tools themselves: for each leaf crate, the `*Input` types a model sees,
//! the conversion to the crate's plain Rust API, and the model-facing wording
//! of results. No matching, parsing or process handling happens here.

pub mod ask_user;
pub mod astmatch;
pub mod debug;
pub mod diagnostics;
pub mod files;
pub mod kernel;
pub mod lsp;
pub mod vibe;
