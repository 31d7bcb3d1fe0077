//! A set of files written all or nothing, for every crate that writes files
//! for a user: astmatch's staged rewrites (`resolve`), the facade's
//! `apply_patch`, and lsp-supervisor's renames (`lsp_rename`).
//!
//! [`write_files`] checks each file against what its caller read, prepares
//! every change beside its file without changing any, then renames them into
//! place, and puts back what it changed when a step fails. It knows nothing of
//! what the contents mean, and never spawns a process.
//!
//! With the `fault-injection` feature (off by default), `fault` fails chosen
//! steps of the writer, for trials and tests.
#![warn(missing_docs)]

mod error;
#[cfg(feature = "fault-injection")]
pub mod fault;
#[cfg(not(feature = "fault-injection"))]
mod fault;
mod write;

pub use crate::error::{Error, Result};
pub use crate::write::{FileWrite, write_files};
