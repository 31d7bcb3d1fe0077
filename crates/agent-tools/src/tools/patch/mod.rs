//! The `*** Begin Patch` format that coding models are trained to emit for an
//! `apply_patch` tool (OpenAI Codex's): [`parse`] reads a patch into
//! [`Section`]s, and [`apply_hunks`] applies one file's hunks to its text.
//!
//! Plain data in, data out: nothing here reads or writes a file. The
//! `apply_patch` tool (`files.rs`) resolves the paths, reads the files, runs
//! the sections in order over its view of them and writes the result all or
//! nothing.
//!
//! Where a hunk applies: its context and removed lines, in order, are looked
//! for from where the previous hunk of the file ended — exactly first, then
//! with trailing whitespace ignored, then with leading and trailing whitespace
//! ignored, and last with typographic dashes, quotes and spaces read as their
//! ASCII forms (the ladder of Codex's `seek_sequence`), at the first position
//! that matches at the first level that matches anywhere. An `@@ LINE` header
//! is looked for the same way first, and the hunk from that line on. A hunk
//! marked `*** End of File` must end at the file's last line. A hunk of only
//! added lines goes right after its `@@` line; without one it goes at the end
//! of the file and the next hunk is still looked for from where the one before
//! it ended (as Codex does). Bare empty lines that end a hunk are taken as
//! empty context lines, and dropped if the hunk does not match with them.
//!
//! A line ends at `\n`, `\r\n` or a lone `\r`, and every line the patch does
//! not remove keeps its own ending, so a file of mixed endings comes back
//! byte for byte outside the hunks. An added line that replaces a removed
//! one (the k-th added line of a run of changed lines, for the k-th removed
//! one) keeps that line's ending; the other added lines, pure additions, take
//! the file's commonest ending (`\n` on a tie), not their neighbours'. The
//! file's own text is kept
//! for context lines, and its final-newline state and byte-order mark are kept.

use std::fmt;

mod apply;
mod fit;

pub use apply::{Applied, HunkError, apply_hunks, commonest_ending};
pub use fit::Fit;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: its sections in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// Its `*** … File:` sections, in the order written.
    pub sections: Vec<Section>,
}

/// One `*** … File:` section. `at` is its header's 1-indexed line in the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// `*** Add File: PATH` and its `+` lines (without the `+`).
    Add {
        /// The path as written.
        path: String,
        /// The new file's lines, without their `+`.
        lines: Vec<String>,
        /// The header's line in the patch (1-based).
        at: usize,
    },
    /// `*** Delete File: PATH`.
    Delete {
        /// The path as written.
        path: String,
        /// The header's line in the patch (1-based).
        at: usize,
    },
    /// `*** Update File: PATH`, an optional `*** Move to: PATH`, and hunks
    /// (none only when it moves the file).
    Update {
        /// The path as written.
        path: String,
        /// The `*** Move to:` path as written, when the file moves.
        move_to: Option<String>,
        /// Its hunks, in order.
        hunks: Vec<Hunk>,
        /// The header's line in the patch (1-based).
        at: usize,
    },
}

impl Section {
    /// The path of its header, as written.
    pub fn path(&self) -> &str {
        match self {
            Section::Add { path, .. } | Section::Delete { path, .. } | Section::Update { path, .. } => path,
        }
    }
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The text after `@@` naming a line above the change (a function or class
    /// header), trimmed; `None` for a bare `@@` or a first hunk without one. A
    /// git-style range (`@@ -12,7 +12,8 @@ def f():`) is dropped, the text after it kept.
    pub anchor: Option<String>,
    /// Its lines, in order.
    pub lines: Vec<Line>,
    /// Followed by `*** End of File`: the hunk ends at the file's last line.
    pub end_of_file: bool,
    /// How many of the last `lines` are bare empty lines (no ` ` prefix), taken
    /// as empty context lines unless the hunk then does not match.
    pub trailing_blank: usize,
    /// 1-indexed line in the patch where the hunk starts (its `@@` line, if any).
    pub at: usize,
}

impl Hunk {
    /// Added and removed lines.
    pub fn counts(&self) -> (usize, usize) {
        let added = self.lines.iter().filter(|l| matches!(l, Line::Added(_))).count();
        let removed = self.lines.iter().filter(|l| matches!(l, Line::Removed(_))).count();
        (added, removed)
    }

    /// Up to `n` of its lines as written in the patch (header first), for messages.
    pub fn first_lines(&self, n: usize) -> Vec<String> {
        let header = match &self.anchor {
            Some(anchor) => format!("@@ {anchor}"),
            None => "@@".to_string(),
        };
        std::iter::once(header).chain(self.lines.iter().map(Line::written)).take(n).collect()
    }
}

/// A hunk line, without its prefix character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// ` ` — kept.
    Context(String),
    /// `-` — removed.
    Removed(String),
    /// `+` — added.
    Added(String),
}

impl Line {
    fn written(&self) -> String {
        match self {
            Line::Context(t) => format!(" {t}"),
            Line::Removed(t) => format!("-{t}"),
            Line::Added(t) => format!("+{t}"),
        }
    }
}

/// A patch that does not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-indexed line of the patch.
    pub line: usize,
    /// What is wrong there, worded for the model.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

fn error(line: usize, message: impl Into<String>) -> ParseError {
    ParseError { line: line + 1, message: message.into() }
}

/// Parses a patch.
///
/// Lenient where models are known to slip, strict where a guess could write
/// the wrong thing: blank lines around the envelope and between sections, and
/// spaces around marker lines, are allowed; so is a shell here-document wrapper
/// (`<<'EOF'` … `EOF`), a first hunk without `@@`, a bare empty line inside a
/// hunk (an empty context line) and git's `\ No newline at end of file` (skipped).
/// Anything else that is not part of the format is an error naming its line.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let blank = |i: &usize| lines[*i].trim().is_empty();
    let Some(mut first) = (0..lines.len()).find(|i| !blank(i)) else {
        return Err(error(0, format!("the patch is empty; it must start with '{BEGIN}'")));
    };
    let mut last = (0..lines.len()).rev().find(|i| !blank(i)).unwrap_or(first);
    let heredoc = ["<<EOF", "<<'EOF'", "<<\"EOF\""];
    if heredoc.contains(&lines[first].trim()) && last > first && lines[last].trim() == "EOF" {
        first = (first + 1..last).find(|i| !blank(i)).unwrap_or(last);
        last = (first..last).rev().find(|i| !blank(i)).unwrap_or(first);
    }
    if lines[first].trim() != BEGIN {
        return Err(error(first, format!("the patch must start with '{BEGIN}', not '{}'", lines[first].trim())));
    }
    if last == first || lines[last].trim() != END {
        return Err(error(last, format!("the patch must end with '{END}' (was it cut off?)")));
    }
    let mut sections = Vec::new();
    let mut i = first + 1;
    while i < last {
        let line = lines[i].trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        let at = i;
        if let Some(path) = line.strip_prefix(ADD) {
            let path = header_path(path, at, ADD)?;
            i += 1;
            let mut added = Vec::new();
            while i < last {
                let Some(text) = lines[i].strip_prefix('+') else { break };
                added.push(text.to_string());
                i += 1;
            }
            sections.push(Section::Add { path, lines: added, at: at + 1 });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            let path = header_path(path, at, DELETE)?;
            sections.push(Section::Delete { path, at: at + 1 });
            i += 1;
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = header_path(path, at, UPDATE)?;
            i += 1;
            let mut move_to = None;
            if let Some(to) = lines.get(i).filter(|_| i < last).and_then(|l| l.trim().strip_prefix(MOVE)) {
                move_to = Some(header_path(to, i, MOVE)?);
                i += 1;
            }
            let mut hunks = Vec::new();
            while i < last {
                if lines[i].trim().is_empty() {
                    i += 1;
                    continue;
                }
                if lines[i].trim_start().starts_with("***") {
                    if lines[i].trim() == END_OF_FILE {
                        return Err(error(i, format!("'{END_OF_FILE}' must follow a hunk's lines")));
                    }
                    break;
                }
                let (hunk, next) = parse_hunk(&lines, i, last, hunks.is_empty())?;
                hunks.push(hunk);
                i = next;
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(error(at, format!("'{UPDATE} {path}' has no hunks; each change starts with '@@'")));
            }
            sections.push(Section::Update { path, move_to, hunks, at: at + 1 });
        } else if line.starts_with("***") {
            return Err(error(
                i,
                format!(
                    "unknown marker '{line}'; a section starts with '{ADD} PATH', '{DELETE} PATH' or '{UPDATE} PATH'"
                ),
            ));
        } else {
            let hint = if line.starts_with('+') {
                " (in an Add File section every line starts with '+', an empty line too)"
            } else {
                ""
            };
            return Err(error(
                i,
                format!(
                    "expected a section header ('{ADD} PATH', '{DELETE} PATH' or '{UPDATE} PATH'), found '{line}'{hint}"
                ),
            ));
        }
    }
    if sections.is_empty() {
        return Err(error(first, "the patch has no sections; nothing to do"));
    }
    Ok(Patch { sections })
}

fn header_path(rest: &str, at: usize, marker: &str) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(error(at, format!("'{marker}' names no path")));
    }
    Ok(path.to_string())
}

/// Parses one hunk starting at `lines[i]`; returns it and the index after it.
fn parse_hunk(lines: &[&str], mut i: usize, last: usize, first: bool) -> Result<(Hunk, usize), ParseError> {
    let at = i + 1;
    let anchor = if let Some(rest) = lines[i].strip_prefix("@@") {
        i += 1;
        anchor_of(rest)
    } else if first && lines[i].starts_with([' ', '-', '+']) {
        None
    } else {
        return Err(error(i, format!("expected a hunk starting with '@@', found '{}'", lines[i])));
    };
    let mut hunk = Hunk { anchor, lines: Vec::new(), end_of_file: false, trailing_blank: 0, at };
    while i < last {
        let line = lines[i];
        if line.trim() == END_OF_FILE {
            if hunk.lines.is_empty() {
                return Err(error(i, format!("'{END_OF_FILE}' must follow a hunk's lines")));
            }
            hunk.end_of_file = true;
            i += 1;
            break;
        }
        if line.starts_with("@@") || line.trim_start().starts_with("***") {
            break;
        }
        let mut chars = line.chars();
        let parsed = match chars.next() {
            None => Line::Context(String::new()),
            Some(' ') => Line::Context(chars.as_str().to_string()),
            Some('-') => Line::Removed(chars.as_str().to_string()),
            Some('+') => Line::Added(chars.as_str().to_string()),
            Some('\\') => {
                i += 1;
                continue;
            }
            Some(_) => {
                return Err(error(
                    i,
                    format!(
                        "'{line}': every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added); an empty context line is ' ' or nothing"
                    ),
                ));
            }
        };
        hunk.trailing_blank = if line.is_empty() { hunk.trailing_blank + 1 } else { 0 };
        hunk.lines.push(parsed);
        i += 1;
    }
    if hunk.lines.len() == hunk.trailing_blank {
        return Err(error(at - 1, "this hunk has no lines"));
    }
    Ok((hunk, i))
}

/// The anchor of a `@@` header: the text after it, less a git-style range.
fn anchor_of(rest: &str) -> Option<String> {
    let rest = rest.trim();
    let rest = match rest.split_once("@@") {
        Some((range, after)) if is_git_range(range.trim()) => after.trim(),
        _ if is_git_range(rest) => "",
        _ => rest,
    };
    (!rest.is_empty()).then(|| rest.to_string())
}

/// `-12,7 +12,8` (counts optional).
fn is_git_range(text: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let side = |s: &str, sign: char| {
        s.strip_prefix(sign).is_some_and(|s| match s.split_once(',') {
            Some((a, b)) => number(a) && number(b),
            None => number(s),
        })
    };
    match text.split_once(' ') {
        Some((old, new)) => side(old, '-') && side(new.trim(), '+'),
        None => false,
    }
}
