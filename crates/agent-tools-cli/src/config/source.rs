//! Provenance: where a value came from ([`Source`], kept beside it in
//! [`Sourced`]), and where a text being read comes from ([`Origin`]), so a
//! refusal names its place.

use std::fmt;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a value came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Source {
    /// The built-in default.
    #[default]
    Default,
    /// The configuration file, at this 1-indexed line and character column.
    File {
        /// The configuration file's path.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// The column in characters, counted from 1.
        column: usize,
    },
    /// This environment variable.
    Env(String),
    /// This flag, as given (`--set eval.timeout_s=5`, `--lsp`).
    Flag(String),
}

impl Source {
    /// Where a refusal points: `FILE:LINE:COLUMN` in the file, else the variable or flag.
    pub fn place(&self) -> String {
        match self {
            Source::Default => "the default".to_owned(),
            Source::File { path, line, column } => format!("{}:{line}:{column}", path.display()),
            Source::Env(var) => format!("environment variable {var}"),
            Source::Flag(flag) => format!("flag {flag}"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { path, line, .. } => write!(f, "file {}:{line}", path.display()),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A setting's value and where it came from. It reads as the value:
/// `settings.lsp.outline_cap` is a `usize` to the code that uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The setting's value.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

impl<T> Deref for Sourced<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

/// Where a text being read came from, for error places and sources.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    File { path: &'a Path, text: &'a str },
    Env { var: &'a str },
    Flag { flag: &'a str },
}

impl Origin<'_> {
    /// `FILE:LINE:COLUMN` of a span of the file; the variable or the flag.
    pub fn place(&self, span: &Range<usize>) -> String {
        match self {
            Origin::File { path, text } => {
                let (line, column) = line_column(text, span.start);
                format!("{}:{line}:{column}", path.display())
            }
            Origin::Env { var } => format!("environment variable {var}"),
            Origin::Flag { flag } => format!("flag {flag}"),
        }
    }

    /// The source of a value whose key is at `span`.
    pub fn source(&self, span: &Range<usize>) -> Source {
        match self {
            Origin::File { path, text } => {
                let (line, column) = line_column(text, span.start);
                Source::File { path: path.to_path_buf(), line, column }
            }
            Origin::Env { var } => Source::Env((*var).to_owned()),
            Origin::Flag { flag } => Source::Flag((*flag).to_owned()),
        }
    }
}

/// 1-indexed line and character column of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_indexed_lines_and_character_columns() {
        assert_eq!(line_column("a = 1\nbé = x", 10), (2, 4));
        assert_eq!(line_column("x", 0), (1, 1));
    }
}
