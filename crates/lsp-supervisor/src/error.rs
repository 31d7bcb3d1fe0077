//! The crate's one error type. Every variant says what happened and, where
//! there is one, what to do; none of them stands for "no results".

use std::path::PathBuf;
use std::time::Duration;

use crate::spec::Language;

/// Why a request to a language server, a project check or a rename failed.
/// An empty answer from a server that is loaded and idle is not an error: it
/// is an empty result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file's extension is none of a built-in or defined language's; the
    /// path as given.
    #[error("no language server for {}: the file type is not one a server is known for", .0.display())]
    UnknownLanguage(PathBuf),
    /// No server of the language has both a root marker and a binary that runs.
    #[error("no {language} language server is usable here: {why}")]
    NoServer {
        /// The file's language, or the one asked for.
        language: Language,
        /// For each server of the language, why it cannot serve here (no root
        /// marker, no binary), joined by `; `.
        why: String,
    },
    /// No language at all has a usable server (a search across languages).
    #[error("no language server is usable here: {why}")]
    NoServers {
        /// Why, in a sentence.
        why: String,
    },
    /// The server's process could not be started.
    #[error("could not start {server} ({}): {source}", binary.display())]
    Spawn {
        /// The server's id, such as `rust-analyzer`.
        server: &'static str,
        /// The binary that was to run.
        binary: PathBuf,
        /// Why: the spawn's error, the enclosure's, or `no stdio pipes`.
        #[source]
        source: std::io::Error,
    },
    /// The server's process ended, or broke its connection, before it answered;
    /// the next request starts it again, until [`GaveUp`](Error::GaveUp).
    #[error("{server} crashed ({what}){}", stderr_suffix(stderr_tail))]
    Crashed {
        /// The server's id.
        server: &'static str,
        /// What happened, such as `exited with status 3` or `sent a malformed frame: …`.
        what: String,
        /// The last lines it wrote on stderr; may be empty.
        stderr_tail: String,
    },
    /// The server crashed [`SupervisorConfig::max_crashes`](crate::SupervisorConfig::max_crashes)
    /// times in a row, so it is not started again until a reload.
    #[error(
        "{server} crashed {crashes} times in a row, so it is not restarted again (last: {last}); `reload` tries again"
    )]
    GaveUp {
        /// The server's id.
        server: &'static str,
        /// How many times in a row it crashed.
        crashes: u32,
        /// How the last crash went, with the end of its stderr when there is one.
        last: String,
    },
    /// The server did not answer in time; a `$/cancelRequest` was sent.
    #[error(
        "{server} did not answer {method} within {} ms (timed out; the request was cancelled){}",
        after.as_millis(),
        busy.as_ref().map(|b| format!("; it was busy with {b}")).unwrap_or_default()
    )]
    Timeout {
        /// The server's id.
        server: &'static str,
        /// The LSP method, such as `textDocument/definition`.
        method: &'static str,
        /// How long it waited.
        after: Duration,
        /// What the server was busy with (its progress), if anything.
        busy: Option<String>,
    },
    /// The server was still loading the project when the request's time ran
    /// out, so its empty answer says nothing.
    #[error(
        "{server} is not ready yet ({what}); nothing can be said about the result until it finishes, try again shortly"
    )]
    NotReady {
        /// The server's id.
        server: &'static str,
        /// What it is loading: its progress (title, message, percentage), or
        /// `loading the project`.
        what: String,
    },
    /// An empty answer from a server that said it could not load the project:
    /// not "nothing there", but nothing known.
    #[error(
        "{server} could not load the project, so its empty answer says nothing: {why}; fix what it names, then reload the server"
    )]
    NotLoaded {
        /// The server's id.
        server: &'static str,
        /// Its load status and the last `error:` it wrote on stderr (cut at 500
        /// characters), when there is one.
        why: String,
    },
    /// The server answered with an LSP error response.
    #[error("{server} answered {method} with error {code}: {message}")]
    Response {
        /// The server's id.
        server: &'static str,
        /// The LSP method.
        method: &'static str,
        /// The JSON-RPC error code, such as `-32603` (internal error).
        code: i64,
        /// The server's error message.
        message: String,
    },
    /// A message of `method` that is not what the protocol says it holds: most
    /// often the server's answer (never taken as "no results").
    #[error("{server}'s {method} broke the protocol: {why}")]
    Protocol {
        /// The server's id.
        server: &'static str,
        /// The LSP method.
        method: &'static str,
        /// What was wrong, with the start of the answer (300 characters at most).
        why: String,
    },
    /// The server does not offer the request: it did not declare the capability,
    /// or it answered "method not found".
    #[error("{server} does not support {what}")]
    Unsupported {
        /// The server's id.
        server: &'static str,
        /// The LSP method, or `rename`.
        what: &'static str,
    },
    /// The file could not be read from disk.
    #[error("could not read {}: {source}", path.display())]
    Read {
        /// The file, as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The line asked for is not in the file.
    #[error("line {line} is out of range: {} has {lines} lines (lines are 1-indexed)", path.display())]
    LineOutOfRange {
        /// The file, as given.
        path: PathBuf,
        /// The line asked for (1-based; 0 is out of range too).
        line: u32,
        /// How many lines the file has; a final line terminator starts no line.
        lines: usize,
    },
    /// The symbol does not occur on the line asked for.
    #[error("`{symbol}` does not occur on line {line} of {}; the line is: {text:?}", path.display())]
    SymbolNotOnLine {
        /// The file, as given.
        path: PathBuf,
        /// The line (1-based).
        line: u32,
        /// The symbol as given.
        symbol: String,
        /// The line's text, without its terminator.
        text: String,
    },
    /// The symbol is empty or only white space.
    #[error("symbol must name something: it is empty or only blanks")]
    EmptySymbol,
    /// The server answered a rename with no edit, or with one that changes no file.
    #[error("the rename changes nothing: {server} returned no edits for `{symbol}`")]
    NothingToRename {
        /// The server's id.
        server: &'static str,
        /// The symbol as given.
        symbol: String,
    },
    /// The new name is not an identifier: empty, starting with a digit, or
    /// holding white space or a character other than a letter, digit, `_` or `$`.
    #[error("`{name}` is not a name a symbol can have ({why}); nothing was renamed")]
    BadName {
        /// The new name as given.
        name: String,
        /// What is wrong with it, such as `it starts with a digit`.
        why: &'static str,
    },
    /// An edit of the server's rename does not hold the old name on disk, so the
    /// server saw an older text; it has been told the file changed.
    #[error(
        "the server's view of {} is stale: its rename edits line {line} where the file now holds {held:?}, not `{expected}`; nothing was written. It has been told the file changed: try again in a moment",
        path.display()
    )]
    StaleView {
        /// The server's id.
        server: &'static str,
        /// The file the edit is in.
        path: PathBuf,
        /// The edit's line in the file on disk (1-based).
        line: usize,
        /// What the edit's range holds on disk.
        held: String,
        /// The name being renamed, which the range should hold.
        expected: String,
    },
    /// After the rename was asked twice, uses that the server itself resolves to
    /// the symbol are still outside its edit.
    #[error(
        "{server}'s rename of `{symbol}` leaves uses it resolves to that very symbol ({missed}), asked twice: its view of those files is stale; nothing was written. Try again in a moment"
    )]
    IncompleteRename {
        /// The server's id.
        server: &'static str,
        /// The name being renamed.
        symbol: String,
        /// The uses left, as `PATH:LINE` (1-based lines), joined by `, `.
        missed: String,
    },
    /// The server's workspace edit cannot be applied as it stands (it reaches
    /// outside the root, edits a file that is missing or not UTF-8, has two
    /// edits that overlap, or a file changed on disk while it was planned), or a
    /// rename would reach only part of the project; the text says which.
    /// Nothing was written.
    #[error("the server's edit was refused, nothing was written: {0}")]
    EditRefused(String),
    /// A write failed midway; the message says which files were put back.
    #[error("writing the edit failed: {0}")]
    EditFailed(String),
    /// A project checker (`cargo check`, `tsc`, `pyright`, `go vet`) gave no
    /// answer: none applies at the root or for the language, its program is
    /// missing, it timed out, or it failed without a diagnostic; the text says
    /// which.
    #[error("{0}")]
    Checker(String),
    /// [`Language::define`](crate::Language::define) refused the language.
    #[error("cannot define the language {id:?}: {why}")]
    DefineLanguage {
        /// The language's id as given.
        id: String,
        /// Why, such as `it is a built-in language`.
        why: String,
    },
}

fn stderr_suffix(tail: &str) -> String {
    if tail.trim().is_empty() { String::new() } else { format!("; its stderr ended with:\n{tail}") }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
