//! The tools themselves: for each leaf crate, the `*Input` types a model sees,
//! the conversion to the crate's plain Rust API, and the model-facing wording
//! of results. No matching, parsing or process handling happens here, with
//! one exception: the plain file tools' own text handling (`edit`'s
//! replacement, and `patch.rs`, the `apply_patch` format), which has no
//! resource and no leaf crate of its own.

#[cfg(feature = "ask")]
pub mod ask_user;
#[cfg(feature = "search")]
pub mod astmatch;
#[cfg(feature = "debug")]
pub mod debug;
#[cfg(feature = "lsp")]
pub mod diagnostics;
pub mod files;
#[cfg(feature = "eval")]
pub mod kernel;
#[cfg(feature = "lsp")]
pub mod lsp;
pub mod patch;
#[cfg(feature = "vibe")]
pub mod vibe;
