//! The tools themselves: for each leaf crate, the `*Input` types a model sees,
//! the conversion to the crate's plain Rust API, and the model-facing wording
//! of results. No matching, parsing or process handling happens here, with
//! one exception: the plain file tools' own text handling (`edit`'s
//! replacement, and `patch.rs`, the `apply_patch` format), which has no
//! resource and no leaf crate of its own.

pub mod ask_user;
pub mod astmatch;
pub mod debug;
pub mod diagnostics;
pub mod files;
pub mod kernel;
pub mod lsp;
pub mod lsp_output;
pub mod patch;
pub mod vibe;
