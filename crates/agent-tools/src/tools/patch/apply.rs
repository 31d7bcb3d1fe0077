//! Applying an `Update File` section's hunks to a file's text: each hunk's context found
//! on a ladder of looser fits, the file's line endings kept.

use std::borrow::Cow;

use super::fit::{Fit, LADDER, LOOSEST, typographic};
use super::{Hunk, Line};

/// One file's hunks applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new text.
    pub text: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// What the model should know about how hunks were placed (a loose match,
    /// lines that also occur further down), one sentence each, naming the hunk.
    pub notes: Vec<String>,
}

/// A hunk that could not be placed: which (1-indexed) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkError {
    /// The hunk's number in its section (1-based).
    pub hunk: usize,
    /// Why it could not be placed, worded for the model.
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
