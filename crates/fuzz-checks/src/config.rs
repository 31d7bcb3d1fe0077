//! The configuration file parser, on any file.

use std::path::PathBuf;
use std::sync::OnceLock;

use agent_tools_cli::config::{Config, Flags};

/// A directory for the file, made once per process.
fn dir() -> &'static (tempfile::TempDir, PathBuf) {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
        let file = dir.path().join("agent-tools.toml");
        (dir, file)
    })
}

/// Input: the bytes of an `agent-tools.toml`.
///
/// The file loads, or is refused with a message that starts with the file's path and,
/// when it names a place, a 1-indexed line and column inside the file, then says what is
/// wrong; loading the same file twice gives the same answer.
pub fn config(data: &[u8]) {
    let (dir, file) = dir();
    std::fs::write(file, data).unwrap_or_else(|error| panic!("writing {}: {error}", file.display()));
    let flags = Flags { file: Some(file.clone()), ..Flags::default() };
    let first = Config::load(dir.path(), &flags).map(|config| config.render()).map_err(|error| format!("{error:#}"));
    let second = Config::load(dir.path(), &flags).map(|config| config.render()).map_err(|error| format!("{error:#}"));
    assert_eq!(first, second, "two loads of one file differ");
    let Err(message) = first else { return };
    let path = file.display().to_string();
    let after =
        message.strip_prefix(&path).unwrap_or_else(|| panic!("the message does not start with the file: {message}"));
    let text = String::from_utf8_lossy(data);
    if let Some(place) = after.strip_prefix(':') {
        let mut parts = place.splitn(3, ':');
        let line: usize = parts.next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no line in {message}"));
        let column: usize =
            parts.next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no column in {message}"));
        // Lines end at `\n` only; a `\r` before it is a character of its line.
        let lines = text.split('\n').count();
        assert!((1..=lines).contains(&line), "line {line} of a {lines}-line file: {message}");
        let line_text = text.split('\n').nth(line - 1).unwrap_or("");
        assert!(
            (1..=line_text.chars().count() + 1).contains(&column),
            "column {column} of a {}-character line: {message}",
            line_text.chars().count()
        );
        let what = parts.next().unwrap_or("").trim();
        assert!(!what.is_empty(), "a place and no reason: {message}");
    } else {
        assert!(after.starts_with(": "), "the file named and nothing said: {message}");
    }
}
