//! The crate's error type.

use std::path::PathBuf;

use crate::lang::Lang;

/// Everything that can go wrong in a search or a staged edit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No scaffold of the language's ladder parses the pattern without error.
    #[error(
        "unparseable pattern for {lang}: no context accepts it (tried: {tried}); check the pattern is valid {lang} code, with metavariables where nodes go"
    )]
    Unparseable {
        /// The language whose grammar and ladder were tried.
        lang: Lang,
        /// The contexts tried, comma-separated in ladder order (`statement,
        /// expression, member, declaration`), or `grammar failed to load` when
        /// the parser refused the grammar.
        tried: String,
    },
    /// The pattern has no code besides metavariables, so it would match every node.
    #[error(
        "pattern `{pattern}` is only metavariables, so it would match every node; anchor it with code around them, e.g. `foo($$$ARGS)` or `$A.len()`"
    )]
    OnlyMetavariables {
        /// The pattern with its common indentation removed and its ends trimmed.
        pattern: String,
    },
    /// The pattern is empty or only whitespace.
    #[error("empty pattern: give a code fragment to match")]
    EmptyPattern,
    /// A language id that no shipped grammar has.
    #[error("unknown language '{given}'; known languages: {known}")]
    UnknownLanguage {
        /// The id as the caller gave it.
        given: String,
        /// Every known id, comma-separated ([`Lang::known_ids`]).
        known: String,
    },
    /// The path has no language and none was given.
    #[error("language is required: {reason}; known languages: {known}")]
    LanguageRequired {
        /// Why none could be picked: the scope is a file with no known extension
        /// (named relative to the root), or a directory.
        reason: String,
        /// Every known id, comma-separated ([`Lang::known_ids`]).
        known: String,
    },
    /// The walk was stopped through its [`crate::WalkControl`]; nothing was staged.
    #[error("stopped before the walk ended; nothing was staged")]
    Stopped,
    /// The search scope is a file over [`crate::SearchOptions::max_file_bytes`].
    #[error(
        "'{}' is {bytes} bytes, over the limit of {limit} bytes on a file searched; raise the limit to search it",
        path.display()
    )]
    FileTooLarge {
        /// The file, relative to the root (as given when it is outside the root).
        path: PathBuf,
        /// Its size in bytes.
        bytes: u64,
        /// The limit in force, in bytes.
        limit: u64,
    },
    /// The search scope does not exist.
    #[error("path not found: {}", .0.display())]
    PathNotFound(PathBuf),
    /// `path` names a file of one language and `language` names another.
    #[error(
        "'{}' is a {file_lang} file (by its extension), but language is {given}; give language \"{file_lang}\" or leave it out",
        path.display()
    )]
    LanguageMismatch {
        /// The file, relative to the root (as given when it is outside the root).
        path: PathBuf,
        /// The language of the file's extension ([`Lang::from_path`]).
        file_lang: Lang,
        /// The language the caller asked for.
        given: Lang,
    },
    /// A `$NAME` in the rewrite template that the pattern does not bind.
    #[error("rewrite uses ${name}, which the pattern does not bind (bound: {bound})")]
    UnboundInRewrite {
        /// The metavariable's name without its `$` or `$$$` (`ARGS`).
        name: String,
        /// The names the pattern binds, comma-separated in order of first
        /// appearance, or `none`.
        bound: String,
    },
    /// `resolve` was given an id that is not staged (never was, or already resolved).
    #[error("unknown edit_id '{id}': it was never staged or is already resolved")]
    UnknownEdit {
        /// The edit id as the caller gave it.
        id: String,
    },
    /// At accept, files differ from their content at staging time; nothing was written.
    #[error(
        "refused: {} changed since the edit was staged ({}); nothing was written — stage the edit again",
        if .files.len() == 1 { "1 file" } else { "files" },
        .files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    Conflict {
        /// The files that differ: relative to the root for a staged edit, else as
        /// each [`FileWrite::shown`](crate::FileWrite::shown) names it.
        files: Vec<PathBuf>,
    },
    /// An I/O failure on one file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file the operation was on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A write failed midway through a set of files; the files already written
    /// were restored, except those it names: write-set's
    /// [`write_set::Error::WriteFailed`], worded as write-set words it.
    #[error(transparent)]
    WriteFailed(write_set::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
