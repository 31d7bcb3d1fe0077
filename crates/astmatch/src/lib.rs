//! Structural search and staged rewrite over tree-sitter grammars.
//!
//! A pattern is a code fragment in the target language with metavariables:
//! `$NAME` matches one node, `$$$NAME` a run of zero or more siblings (with
//! backtracking, like `*` in a glob), and `$_` / `$$$` match without binding.
//! A metavariable repeated in one pattern must capture the same code (equal
//! token sequences, whitespace and comments ignored).
//!
//! The pattern is parsed by the target file's own grammar inside a ladder of
//! scaffolds (statement, expression, class member, declaration, …); every
//! scaffold that parses the fragment without error gives a shape, a node matches
//! when any shape does, and each match names its [`Context`]. A fragment no
//! scaffold accepts is [`Error::Unparseable`]; one that is only metavariables is
//! [`Error::OnlyMetavariables`].
//!
//! Use [`search`] to find matches under a directory or in one file, and
//! [`EditStore`] to stage a rewrite (nothing written) and later accept or
//! discard it. Every staged file is parsed again, and a rewrite that would break a
//! file's parse is refused for that file. Accept is all or nothing.
//!
//! This crate knows nothing of tool calling, JSON schemas or approval tiers; it
//! never spawns a process and never writes a file except through
//! [`write_files`] (all or nothing, atomic per file), which [`EditStore::accept`]
//! uses and which other callers with a set of files to change may use too.
#![warn(missing_docs)]

mod cache;
mod error;
mod lang;
mod matcher;
mod pattern;
mod rewrite;
mod search;
mod stage;
mod store;
mod syntax;
mod write;

/// The writer's fault seam, with the `fault-injection` feature only.
#[cfg(feature = "fault-injection")]
pub use write_set::fault;

pub use crate::cache::{CacheStats, DEFAULT_CACHE_BYTES, ParseCache};
pub use crate::error::{Error, Result};
pub use crate::lang::Context;
pub use crate::lang::Lang;
pub use crate::matcher::{Capture, NodeMatch};
pub use crate::pattern::Pattern;
pub use crate::rewrite::rewrite_source;
pub use crate::search::{
    CapturedNode, DEFAULT_MAX_FILE_BYTES, InMacros, Match, MatchCapture, SearchOptions, SearchReport, Skipped,
    WalkControl, WordPlace, WordPlaces, search, search_source,
};
pub use crate::stage::{
    Accepted, EditStore, FileChange, ParseError, RefusedFile, Reparse, Rewrite, StagedEdit, rewrite_text,
};
pub use crate::store::{DEFAULT_STORE_BYTES, StoreStats, TreeStore};
pub use crate::write::{FileWrite, write_files};
