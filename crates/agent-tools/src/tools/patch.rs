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

use std::borrow::Cow;
use std::fmt;

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
    pub sections: Vec<Section>,
}

/// One `*** … File:` section. `at` is its header's 1-indexed line in the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// `*** Add File: PATH` and its `+` lines (without the `+`).
    Add { path: String, lines: Vec<String>, at: usize },
    /// `*** Delete File: PATH`.
    Delete { path: String, at: usize },
    /// `*** Update File: PATH`, an optional `*** Move to: PATH`, and hunks
    /// (none only when it moves the file).
    Update { path: String, move_to: Option<String>, hunks: Vec<Hunk>, at: usize },
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

/// How closely a hunk's lines matched the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Exact,
    /// Equal once trailing whitespace is ignored.
    IgnoringTrailingSpace,
    /// Equal once leading and trailing whitespace is ignored.
    IgnoringIndentation,
    /// Equal once leading and trailing whitespace is ignored and typographic
    /// dashes, quotes and spaces are read as ASCII ([`plain`]).
    IgnoringPunctuation,
}

const LADDER: [Fit; 4] = [Fit::Exact, Fit::IgnoringTrailingSpace, Fit::IgnoringIndentation, Fit::IgnoringPunctuation];

/// The loosest rung, for the nearest partial match in an error.
const LOOSEST: Fit = Fit::IgnoringPunctuation;

/// The ASCII character a typographic one stands for, and its name for notes;
/// `None` for any other character. The set is Codex's `seek_sequence`
/// normalisation: Unicode dashes and the minus sign, curly and low quotes, and
/// the non-breaking and fixed-width spaces.
fn typographic(c: char) -> Option<(char, &'static str)> {
    Some(match c {
        '\u{2010}' => ('-', "a hyphen (U+2010)"),
        '\u{2011}' => ('-', "a non-breaking hyphen"),
        '\u{2012}' => ('-', "a figure dash"),
        '\u{2013}' => ('-', "an en dash"),
        '\u{2014}' => ('-', "an em dash"),
        '\u{2015}' => ('-', "a horizontal bar"),
        '\u{2212}' => ('-', "a minus sign"),
        '\u{2018}' => ('\'', "a left single quote"),
        '\u{2019}' => ('\'', "a right single quote"),
        '\u{201A}' => ('\'', "a low single quote"),
        '\u{201B}' => ('\'', "a reversed single quote"),
        '\u{201C}' => ('"', "a left double quote"),
        '\u{201D}' => ('"', "a right double quote"),
        '\u{201E}' => ('"', "a low double quote"),
        '\u{201F}' => ('"', "a reversed double quote"),
        '\u{00A0}' => (' ', "a non-breaking space"),
        '\u{202F}' => (' ', "a narrow non-breaking space"),
        '\u{2002}' => (' ', "an en space"),
        '\u{2003}' => (' ', "an em space"),
        '\u{2004}'..='\u{2006}' | '\u{2008}' | '\u{205F}' => (' ', "a fixed-width space"),
        '\u{2007}' => (' ', "a figure space"),
        '\u{2009}' => (' ', "a thin space"),
        '\u{200A}' => (' ', "a hair space"),
        '\u{3000}' => (' ', "an ideographic space"),
        _ => return None,
    })
}

/// `c` as the punctuation-normalised rung reads it.
fn plain(c: char) -> char {
    typographic(c).map_or(c, |(ascii, _)| ascii)
}

impl Fit {
    fn same(self, file: &str, hunk: &str) -> bool {
        match self {
            Fit::Exact => file == hunk,
            Fit::IgnoringTrailingSpace => file.trim_end() == hunk.trim_end(),
            Fit::IgnoringIndentation => file.trim() == hunk.trim(),
            Fit::IgnoringPunctuation => file.trim().chars().map(plain).eq(hunk.trim().chars().map(plain)),
        }
    }
}

/// One file's hunks applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new text.
    pub text: String,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    /// What the model should know about how hunks were placed (a loose match,
    /// lines that also occur further down), one sentence each, naming the hunk.
    pub notes: Vec<String>,
}

/// A hunk that could not be placed: which (1-indexed) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkError {
    pub hunk: usize,
    pub message: String,
}

/// An output line and its ending.
type OutLine<'a> = (Cow<'a, str>, &'a str);

/// A file's text as lines, each with its ending (`""` only for a last line without one).
struct Text<'a> {
    bom: &'a str,
    lines: Vec<(&'a str, &'a str)>,
    eol: &'a str,
    final_newline: bool,
}

/// The commonest line ending of `text` (`\n`, `\r\n` or `\r`; `\n` on a tie
/// or when it has none), which added lines take.
pub fn commonest_ending(text: &str) -> &'static str {
    match split(text).eol {
        "\r\n" => "\r\n",
        "\r" => "\r",
        _ => "\n",
    }
}

fn split(text: &str) -> Text<'_> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (&text[..text.len() - rest.len()], rest),
        None => ("", text),
    };
    let mut lines = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        match rest.find(['\n', '\r']) {
            Some(n) => {
                let width = if rest[n..].starts_with("\r\n") { 2 } else { 1 };
                lines.push((&rest[..n], &rest[n..n + width]));
                rest = &rest[n + width..];
            }
            None => {
                lines.push((rest, ""));
                rest = "";
            }
        }
    }
    let count = |ending: &str| lines.iter().filter(|(_, e)| *e == ending).count();
    // The commonest ending, the earlier in this list on a tie.
    let mut eol = "\n";
    for ending in ["\r\n", "\r"] {
        if count(ending) > count(eol) {
            eol = ending;
        }
    }
    let final_newline = lines.last().is_none_or(|(_, e)| !e.is_empty());
    Text { bom, lines, eol, final_newline }
}

/// The first position at or after `from` where `pattern` matches, with how
/// closely; `at_end` allows only the position that ends at the last line.
fn seek(lines: &[(&str, &str)], pattern: &[&str], from: usize, at_end: bool) -> Option<(usize, Fit)> {
    let last_start = lines.len().checked_sub(pattern.len())?;
    if from > last_start {
        return None;
    }
    let starts = if at_end { last_start..=last_start } else { from..=last_start };
    LADDER.into_iter().find_map(|fit| {
        starts.clone().find(|&s| pattern.iter().zip(&lines[s..]).all(|(p, (l, _))| fit.same(l, p))).map(|s| (s, fit))
    })
}

/// The longest run of `pattern`'s first lines found from `from` on (loosest
/// fit): where it starts and how many lines; `None` when not even the first is there.
fn longest_prefix(lines: &[(&str, &str)], pattern: &[&str], from: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for s in from..lines.len() {
        let n = pattern.iter().zip(&lines[s..]).take_while(|(p, (l, _))| LOOSEST.same(l, p)).count();
        if n > 0 && best.is_none_or(|(_, m)| n > m) {
            best = Some((s, n));
        }
    }
    best
}

/// Applies `hunks` to `original`, or says which hunk could not be placed.
/// The placement rules are in the module documentation.
pub fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<Applied, HunkError> {
    let text = split(original);
    let lines = &text.lines;
    // (first line replaced, how many, what goes there)
    let mut replacements: Vec<(usize, usize, Vec<OutLine<'_>>)> = Vec::new();
    let mut notes = Vec::new();
    let (mut added, mut removed) = (0, 0);
    // Where the next hunk may start: the end of the previous one (0-indexed line).
    let mut cursor = 0;
    for (k, hunk) in hunks.iter().enumerate() {
        let n = k + 1;
        let fail = |message: String| HunkError { hunk: n, message };
        let after = |from: usize| if from == 0 { String::new() } else { format!(" after line {from}") };
        let mut from = cursor;
        let mut anchor_line = None;
        if let Some(anchor) = &hunk.anchor {
            match seek(lines, &[anchor.as_str()], from, false) {
                Some((i, _)) => {
                    anchor_line = Some(i);
                    from = i;
                }
                None => {
                    return Err(fail(format!("its @@ line `{anchor}` is not in the file{}", after(cursor))));
                }
            }
        }
        let old = |hunk_lines: &[Line]| -> Vec<String> {
            hunk_lines
                .iter()
                .filter_map(|l| match l {
                    Line::Context(t) | Line::Removed(t) => Some(t.clone()),
                    Line::Added(_) => None,
                })
                .collect()
        };
        let full = old(&hunk.lines);
        if full.iter().all(String::is_empty) && full.len() == hunk.trailing_blank {
            // Only added lines (and perhaps blank separators): after the @@ line, or at
            // the end. Without an @@ line the next hunk is still looked for from
            // the cursor, as Codex does, so such a hunk need not be the last.
            let at = match anchor_line {
                Some(i) if !hunk.end_of_file => i + 1,
                _ => lines.len(),
            };
            let new: Vec<OutLine<'_>> = hunk
                .lines
                .iter()
                .filter_map(|l| match l {
                    Line::Added(t) => Some((Cow::Owned(t.clone()), text.eol)),
                    _ => None,
                })
                .collect();
            added += new.len();
            replacements.push((at, 0, new));
            if let Some(i) = anchor_line {
                cursor = i + 1;
            }
            continue;
        }
        let pattern: Vec<&str> = full.iter().map(String::as_str).collect();
        let mut used = &hunk.lines[..];
        let mut found = seek(lines, &pattern, from, hunk.end_of_file);
        if found.is_none() && hunk.trailing_blank > 0 {
            used = &hunk.lines[..hunk.lines.len() - hunk.trailing_blank];
            found = seek(lines, &pattern[..pattern.len() - hunk.trailing_blank], from, hunk.end_of_file);
        }
        let Some((start, fit)) = found else {
            return Err(fail(no_match(lines, &pattern, from, cursor, hunk.end_of_file, anchor_line.is_some())));
        };
        let len = old(used).len();
        match fit {
            Fit::Exact => {}
            Fit::IgnoringTrailingSpace => notes.push(format!(
                "hunk {n} matched at line {} only with trailing whitespace ignored; the file's own context lines were kept",
                start + 1
            )),
            Fit::IgnoringIndentation => notes.push(format!(
                "hunk {n} matched at line {} only with indentation ignored; the file's own context lines were kept, added lines are as the patch gave them",
                start + 1
            )),
            Fit::IgnoringPunctuation => notes.push(format!(
                "hunk {n} matched at line {} only after normalising {}; the file's own context lines were kept, added lines are as the patch gave them",
                start + 1,
                normalised(start, &lines[start..start + len], &pattern[..len])
            )),
        }
        if !hunk.end_of_file {
            let used_pattern = &pattern[..len];
            let again = (start + 1..=lines.len().saturating_sub(len))
                .find(|&s| used_pattern.iter().zip(&lines[s..]).all(|(p, (l, _))| fit.same(l, p)));
            if let Some(again) = again {
                let since = if anchor_line.is_some() { " after its @@ line".to_string() } else { after(cursor) };
                notes.push(format!(
                    "hunk {n} was applied at line {}, the first match{since}; its lines also occur at line {}",
                    start + 1,
                    again + 1
                ));
            }
        }
        let mut endings = added_endings(used, &lines[start..], text.eol).into_iter();
        let mut new = Vec::new();
        let mut i = start;
        for line in used {
            match line {
                Line::Context(_) => {
                    new.push((Cow::Borrowed(lines[i].0), lines[i].1));
                    i += 1;
                }
                Line::Removed(_) => {
                    removed += 1;
                    i += 1;
                }
                Line::Added(t) => {
                    added += 1;
                    new.push((Cow::Owned(t.clone()), endings.next().unwrap_or(text.eol)));
                }
            }
        }
        replacements.push((start, len, new));
        cursor = start + len;
    }
    // A pure addition at the end may come before later hunks; a stable sort
    // keeps additions at the same place in the patch's order.
    replacements.sort_by_key(|(start, _, _)| *start);
    let mut out: Vec<OutLine<'_>> = Vec::with_capacity(lines.len());
    let mut i = 0;
    for (start, len, new) in replacements {
        out.extend(lines[i..start].iter().map(|(l, e)| (Cow::Borrowed(*l), *e)));
        out.extend(new);
        i = start + len;
    }
    out.extend(lines[i..].iter().map(|(l, e)| (Cow::Borrowed(*l), *e)));
    let count = out.len();
    let mut result = String::with_capacity(original.len() + 64);
    result.push_str(text.bom);
    for (k, (line, ending)) in out.iter().enumerate() {
        result.push_str(line);
        let last = k + 1 == count;
        result.push_str(match (last, text.final_newline) {
            (false, _) | (true, true) if ending.is_empty() => text.eol,
            (true, false) => "",
            _ => ending,
        });
    }
    Ok(Applied { text: result, added, removed, notes })
}

/// The ending each added line of `hunk_lines` takes, in order. Within a run
/// of changed lines (between context lines), the k-th added line replaces the
/// k-th removed one and keeps its ending, so an edited line of a mixed file
/// ends as it did; an added line with no removed line left to replace is a
/// pure addition and takes `eol`, the file's commonest ending. `file` are the
/// file's lines from where the hunk applies.
fn added_endings<'a>(hunk_lines: &[Line], file: &[(&'a str, &'a str)], eol: &'a str) -> Vec<&'a str> {
    let mut endings = Vec::new();
    let mut i = 0;
    // The removed lines' endings and the count of added lines in the current run.
    let mut removed: Vec<&'a str> = Vec::new();
    let mut pending = 0;
    let mut end_run = |removed: &mut Vec<&'a str>, pending: &mut usize| {
        endings.extend((0..*pending).map(|k| removed.get(k).copied().unwrap_or(eol)));
        removed.clear();
        *pending = 0;
    };
    for line in hunk_lines {
        match line {
            Line::Context(_) => {
                end_run(&mut removed, &mut pending);
                i += 1;
            }
            Line::Removed(_) => {
                removed.push(file.get(i).map_or(eol, |(_, e)| *e));
                i += 1;
            }
            Line::Added(_) => pending += 1,
        }
    }
    end_run(&mut removed, &mut pending);
    endings
}

/// What the punctuation-normalised rung read as ASCII, for the note: the
/// typographic characters that differ between a file line and its hunk line,
/// by the file's (1-indexed) line, e.g. `an en dash on line 14`; one that was
/// in the patch rather than the file says so. `matched` are the file's lines
/// from the match on, the first of them at 0-indexed line `start`.
fn normalised(start: usize, matched: &[(&str, &str)], pattern: &[&str]) -> String {
    let mut by_line: Vec<String> = Vec::new();
    for (k, ((file, _), hunk)) in matched.iter().zip(pattern).enumerate() {
        let mut names: Vec<String> = Vec::new();
        for (a, b) in file.trim().chars().zip(hunk.trim().chars()) {
            let name = match (typographic(a), typographic(b)) {
                _ if a == b => continue,
                (Some((_, name)), _) => name.to_string(),
                (None, Some((_, name))) => format!("{name} in the patch"),
                (None, None) => continue,
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if !names.is_empty() {
            by_line.push(format!("{} on line {}", and_list(&names), start + k + 1));
        }
    }
    const SHOWN: usize = 4;
    let more = by_line.len().saturating_sub(SHOWN);
    by_line.truncate(SHOWN);
    let mut text = if by_line.is_empty() { "typographic punctuation".to_string() } else { and_list(&by_line) };
    if more > 0 {
        text.push_str(&format!(" (and on {more} more lines)"));
    }
    text
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Why a hunk's lines were not found, as precisely as can be said.
fn no_match(
    lines: &[(&str, &str)],
    pattern: &[&str],
    from: usize,
    cursor: usize,
    at_end: bool,
    anchored: bool,
) -> String {
    let place = if at_end {
        " at the end of the file".to_string()
    } else if anchored {
        format!(" after its @@ line (line {})", from + 1)
    } else if cursor > 0 {
        format!(" after the previous hunk (which ends at line {cursor})")
    } else {
        String::new()
    };
    let mut message = format!("its context and removed lines do not occur in the file{place}");
    if let Some((s, _)) = seek(lines, pattern, 0, false).filter(|(s, _)| *s < from) {
        message.push_str(&format!(
            "; they occur at line {}, before that — hunks must come in file order, each after the one before",
            s + 1
        ));
    } else if let Some((s, n)) = longest_prefix(lines, pattern, from) {
        if n == pattern.len() {
            message.push_str(&format!("; they occur at line {}, which is not the end of the file", s + 1));
            return message;
        }
        let what = match lines.get(s + n) {
            Some((line, _)) => format!("the file has `{}` where the hunk has `{}`", line.trim(), pattern[n].trim()),
            None => "the file ends there".to_string(),
        };
        message.push_str(&format!(
            "; the nearest is at line {}, where {} of its {} lines match, then {what}",
            s + 1,
            n,
            pattern.len()
        ));
    }
    message
}
