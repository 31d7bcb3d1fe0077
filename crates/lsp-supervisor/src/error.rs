//! The crate's one error type. Every variant says what happened and, where
//! there is one, what to do; none of them stands for "no results".

use std::path::PathBuf;
use std::time::Duration;

use crate::spec::Language;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no language server for {}: the file type is not one a server is known for", .0.display())]
    UnknownLanguage(PathBuf),
    #[error("no {language} language server is usable here: {why}")]
    NoServer { language: Language, why: String },
    /// No language at all has a usable server (a search across languages).
    #[error("no language server is usable here: {why}")]
    NoServers { why: String },
    #[error("could not start {server} ({}): {source}", binary.display())]
    Spawn {
        server: &'static str,
        binary: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{server} crashed ({what}){}", stderr_suffix(stderr_tail))]
    Crashed { server: &'static str, what: String, stderr_tail: String },
    #[error(
        "{server} crashed {crashes} times in a row, so it is not restarted again (last: {last}); `reload` tries again"
    )]
    GaveUp { server: &'static str, crashes: u32, last: String },
    #[error(
        "{server} did not answer {method} within {} ms (timed out; the request was cancelled){}",
        after.as_millis(),
        busy.as_ref().map(|b| format!("; it was busy with {b}")).unwrap_or_default()
    )]
    Timeout {
        server: &'static str,
        method: &'static str,
        after: Duration,
        /// What the server was busy with (its progress), if anything.
        busy: Option<String>,
    },
    #[error(
        "{server} is not ready yet ({what}); nothing can be said about the result until it finishes, try again shortly"
    )]
    NotReady { server: &'static str, what: String },
    /// An empty answer from a server that said it could not load the project:
    /// not "nothing there", but nothing known.
    #[error(
        "{server} could not load the project, so its empty answer says nothing: {why}; fix what it names, then reload the server"
    )]
    NotLoaded { server: &'static str, why: String },
    #[error("{server} answered {method} with error {code}: {message}")]
    Response { server: &'static str, method: &'static str, code: i64, message: String },
    /// A message of `method` that is not what the protocol says it holds: most
    /// often the server's answer (never taken as "no results").
    #[error("{server}'s {method} broke the protocol: {why}")]
    Protocol { server: &'static str, method: &'static str, why: String },
    #[error("{server} does not support {what}")]
    Unsupported { server: &'static str, what: &'static str },
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("line {line} is out of range: {} has {lines} lines (lines are 1-indexed)", path.display())]
    LineOutOfRange { path: PathBuf, line: u32, lines: usize },
    #[error("`{symbol}` does not occur on line {line} of {}; the line is: {text:?}", path.display())]
    SymbolNotOnLine { path: PathBuf, line: u32, symbol: String, text: String },
    #[error("symbol must name something: it is empty or only blanks")]
    EmptySymbol,
    #[error("the rename changes nothing: {server} returned no edits for `{symbol}`")]
    NothingToRename { server: &'static str, symbol: String },
    #[error("`{name}` is not a name a symbol can have ({why}); nothing was renamed")]
    BadName { name: String, why: &'static str },
    #[error(
        "the server's view of {} is stale: its rename edits line {line} where the file now holds {held:?}, not `{expected}`; nothing was written. It has been told the file changed: try again in a moment",
        path.display()
    )]
    StaleView { server: &'static str, path: PathBuf, line: usize, held: String, expected: String },
    #[error(
        "{server}'s rename of `{symbol}` leaves uses it resolves to that very symbol ({missed}), asked twice: its view of those files is stale; nothing was written. Try again in a moment"
    )]
    IncompleteRename { server: &'static str, symbol: String, missed: String },
    #[error("the server's edit was refused, nothing was written: {0}")]
    EditRefused(String),
    /// A write failed midway; the message says which files were put back.
    #[error("writing the edit failed: {0}")]
    EditFailed(String),
    #[error("{0}")]
    Checker(String),
    #[error("cannot define the language {id:?}: {why}")]
    DefineLanguage { id: String, why: String },
}

fn stderr_suffix(tail: &str) -> String {
    if tail.trim().is_empty() { String::new() } else { format!("; its stderr ended with:\n{tail}") }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
