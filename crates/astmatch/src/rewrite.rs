//! Substituting captures into a rewrite template, keeping the file's layout.
//!
//! Plain text in, text out (with the file's literal lines and comments, found by
//! the matcher). The rules, written out in `docs/patterns.md`: a multi-line
//! template takes the indentation of the line where the match starts, converted
//! to the file's indent style (tabs or spaces, and the step its code lines use);
//! a multi-line capture's continuation lines keep their indentation relative to
//! the line of its first node, re-based on the output line where the capture
//! lands; lines that begin inside a string or comment are never re-indented; the
//! template's line endings become the file's; an empty `$$$` capture takes one
//! adjacent `,` with it, and a template line holding only an empty `$$$` capture
//! disappears; a capture ending in a line comment never has code after it on its
//! line. Matches nested inside a capture are rewritten too.

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::matcher::{FileLayout, NodeMatch};
use crate::pattern::parse_metavar;

/// One piece of a parsed template.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Var { name: String },
}

/// A parsed rewrite template.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `template`; every `$NAME` / `$$$NAME` must be bound by the pattern.
    pub(crate) fn parse(template: &str, bound: &[String]) -> Result<Template> {
        let template = template.replace("\r\n", "\n");
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut i = 0;
        while i < template.len() {
            let rest = &template[i..];
            match parse_metavar(rest) {
                Some((len, _, Some(name))) if !name.starts_with('_') => {
                    if !bound.iter().any(|b| b == name) {
                        return Err(Error::UnboundInRewrite {
                            name: name.to_string(),
                            bound: if bound.is_empty() { "none".into() } else { bound.join(", ") },
                        });
                    }
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Var { name: name.to_string() });
                    i += len;
                }
                _ => {
                    let ch = rest.chars().next().unwrap_or('\0');
                    text.push(ch);
                    i += ch.len_utf8().max(1);
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template { pieces })
    }
}

/// The file's layout conventions.
struct Layout {
    newline: &'static str,
    /// One indentation level in the file: a tab, or some spaces.
    unit: String,
}

/// The file's newline and indentation step, measured on its code lines only (a line
/// that begins inside a string or comment — a docstring, a ` * ` line of a doc
/// comment, a raw string's script — says nothing of how the code is indented). The
/// step is the most common increase of indentation from one code line to the next.
fn layout_of(source: &str, verbatim: &[usize]) -> Layout {
    let newline = if source.contains("\r\n") { "\r\n" } else { "\n" };
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps: HashMap<usize, usize> = HashMap::new();
    let mut previous = 0usize;
    let mut start = 0usize;
    for line in source.split_inclusive('\n') {
        let at = start;
        start += line.len();
        if line.trim().is_empty() || verbatim.binary_search(&at).is_ok() {
            continue;
        }
        if line.starts_with('\t') {
            tabs += 1;
        } else if line.starts_with(' ') {
            spaces += 1;
        }
        let width = line.len() - line.trim_start_matches(' ').len();
        if !line.starts_with('\t') {
            if width > previous {
                *steps.entry(width - previous).or_default() += 1;
            }
            previous = width;
        }
    }
    let unit = if tabs > spaces {
        "\t".to_string()
    } else {
        let step = steps.into_iter().max_by_key(|&(w, n)| (n, std::cmp::Reverse(w))).map_or(4, |(w, _)| w);
        " ".repeat(step.clamp(1, 8))
    };
    Layout { newline, unit }
}

/// Leading whitespace of the line containing `offset`.
fn line_indent(source: &str, offset: usize) -> &str {
    let start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &source[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// A text being assembled, with the line starts that re-indentation must leave as they are.
#[derive(Debug, Default)]
struct Text {
    s: String,
    /// Byte offsets in `s` of line starts inside a literal (string, heredoc, block comment).
    verbatim: Vec<usize>,
}

impl Text {
    fn push_str(&mut self, text: &str) {
        self.s.push_str(text);
    }

    /// Appends `other`, keeping its verbatim marks.
    fn append(&mut self, other: Text) {
        let base = self.s.len();
        self.verbatim.extend(other.verbatim.into_iter().map(|o| o + base));
        self.s.push_str(&other.s);
    }
}

/// One replacement in the rewritten text: its byte range there, and the match's range in the old text.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub(crate) new: Range<usize>,
    pub(crate) old: Range<usize>,
}

/// Rewrites every match in `source` with `template` (matches nested inside a
/// capture are rewritten too). Returns the new text and how many matches were
/// rewritten; the count is exactly the number of substitutions in the result.
///
/// The text is not checked here: [`crate::rewrite_file`] also re-parses it.
///
/// Errors: [`Error::UnboundInRewrite`] when the template names a metavariable
/// the pattern does not bind.
pub fn rewrite_source(
    source: &str,
    matches: &[NodeMatch],
    template: &str,
    bound: &[String],
) -> Result<(String, usize)> {
    let template = Template::parse(template, bound)?;
    let (text, count, _, _) = rewrite_with(source, matches, &template, &FileLayout::default());
    Ok((text, count))
}

pub(crate) fn rewrite_with(
    source: &str,
    matches: &[NodeMatch],
    template: &Template,
    file: &FileLayout,
) -> (String, usize, Vec<Placed>, Vec<usize>) {
    let mut sorted: Vec<&NodeMatch> = matches.iter().collect();
    sorted.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
    let verbatim = file.verbatim.clone();
    let layout = layout_of(source, &verbatim);
    let rewriter = Rewriter {
        source,
        matches: sorted,
        template,
        layout,
        verbatim,
        comments: &file.comments,
        dropped: std::cell::RefCell::new(Vec::new()),
    };
    let mut count = 0;
    let mut placed = Vec::new();
    let text = rewriter.render(0..source.len(), None, &mut count, Some(&mut placed));
    let mut dropped = rewriter.dropped.into_inner();
    dropped.sort_unstable();
    dropped.dedup();
    (text.s, count, placed, dropped)
}

struct Rewriter<'a> {
    source: &'a str,
    matches: Vec<&'a NodeMatch>,
    template: &'a Template,
    layout: Layout,
    /// Line starts of the source that lie inside literals, sorted.
    verbatim: Vec<usize>,
    /// The file's comments.
    comments: &'a [Range<usize>],
    /// Start offsets of comments inside a rewritten match but outside its captures: the
    /// template replaces them.
    dropped: std::cell::RefCell<Vec<usize>>,
}

/// A capture ready to insert: its rendered text and where it came from.
struct Filled {
    text: Text,
    /// Leading whitespace of the source line where the capture starts.
    origin: String,
    ends_in_line_comment: bool,
    /// The capture brings its list's trailing `,` (and the comment after it).
    trailing_separator: bool,
}

impl Rewriter<'_> {
    /// The text of `range` with the outermost matches inside it replaced.
    fn render(
        &self,
        range: Range<usize>,
        exclude: Option<usize>,
        count: &mut usize,
        mut placed: Option<&mut Vec<Placed>>,
    ) -> Text {
        let mut out = Text::default();
        let mut pos = range.start;
        for (i, m) in self.matches.iter().enumerate() {
            if Some(i) == exclude || m.range.start < pos || m.range.end > range.end || m.range.is_empty() {
                continue;
            }
            self.copy(&mut out, pos..m.range.start);
            let start = out.s.len();
            out.append(self.expand(i, count));
            if let Some(placed) = placed.as_deref_mut() {
                placed.push(Placed { new: start..out.s.len(), old: m.range.clone() });
            }
            pos = m.range.end;
        }
        self.copy(&mut out, pos..range.end);
        out
    }

    /// Copies source text, carrying the verbatim marks that fall inside it.
    fn copy(&self, out: &mut Text, range: Range<usize>) {
        let base = out.s.len();
        let first = self.verbatim.partition_point(|&o| o < range.start);
        for &o in self.verbatim[first..].iter().take_while(|&&o| o < range.end) {
            out.verbatim.push(base + o - range.start);
        }
        out.push_str(&self.source[range]);
    }

    /// The template filled in for match `i`.
    fn expand(&self, i: usize, count: &mut usize) -> Text {
        let m = self.matches[i];
        *count += 1;
        let base = line_indent(self.source, m.range.start);
        let first = self.comments.partition_point(|c| c.start < m.range.start);
        for c in self.comments[first..].iter().take_while(|c| c.end <= m.range.end) {
            if !m.captures.iter().any(|k| k.range.start <= c.start && c.end <= k.range.end) {
                self.dropped.borrow_mut().push(c.start);
            }
        }
        let mut captures: HashMap<&str, Filled> = HashMap::new();
        for c in &m.captures {
            if captures.contains_key(c.name.as_str()) {
                continue;
            }
            let text = self.render(c.range.clone(), Some(i), count, None);
            let origin = line_indent(self.source, c.origin).to_string();
            captures.insert(
                c.name.as_str(),
                Filled {
                    text,
                    origin,
                    ends_in_line_comment: c.ends_in_line_comment,
                    trailing_separator: c.trailing_separator,
                },
            );
        }

        // Resolve empty captures first: they drop an adjacent separator or their whole line.
        let mut pieces: Vec<Piece> = self.template.pieces.clone();
        for k in 0..pieces.len() {
            let Piece::Var { name } = &pieces[k] else { continue };
            let empty = captures.get(name.as_str()).is_some_and(|f| f.text.s.is_empty());
            if !empty {
                continue;
            }
            if drop_blank_line(&mut pieces, k) {
                continue;
            }
            let before = if k > 0 { take_text(&pieces, k - 1) } else { None };
            if let Some(t) = before.filter(|t| t.trim_end_matches([' ', '\t']).ends_with(',')) {
                let trimmed = t.trim_end_matches([' ', '\t']);
                let cut = trimmed.len() - 1;
                let kept = trimmed[..cut].trim_end_matches([' ', '\t']).to_string();
                pieces[k - 1] = Piece::Text(kept);
                continue;
            }
            if let Some(t) = pieces.get(k + 1).and_then(|p| match p {
                Piece::Text(t) => Some(t.clone()),
                _ => None,
            }) {
                let after = t.trim_start_matches([' ', '\t']);
                if let Some(rest) = after.strip_prefix(',') {
                    pieces[k + 1] = Piece::Text(rest.trim_start_matches([' ', '\t']).to_string());
                }
            }
        }

        // A capture that brings its own trailing `,` takes the place of the template's.
        for k in 0..pieces.len() {
            let Piece::Var { name } = &pieces[k] else { continue };
            if !captures.get(name.as_str()).is_some_and(|f| f.trailing_separator) {
                continue;
            }
            if let Some(Piece::Text(t)) = pieces.get(k + 1)
                && let Some(rest) = t.trim_start_matches([' ', '\t']).strip_prefix(',')
            {
                pieces[k + 1] = Piece::Text(rest.to_string());
            }
        }

        // Assemble, indenting continuation lines.
        let mut out = Text::default();
        for (k, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Text(t) => {
                    let segments = t.split('\n').count();
                    let var_follows = matches!(pieces.get(k + 1), Some(Piece::Var { .. }));
                    for (n, line) in t.split('\n').enumerate() {
                        if n > 0 {
                            out.push_str(self.layout.newline);
                            // A blank line stays blank, unless a capture continues it.
                            let continued = n + 1 == segments && var_follows;
                            if !line.trim().is_empty() || continued {
                                out.push_str(base);
                                out.push_str(&self.convert_indent(line));
                            } else {
                                continue;
                            }
                            let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
                            out.push_str(&line[lead..]);
                        } else {
                            out.push_str(line);
                        }
                    }
                }
                Piece::Var { name } => {
                    let Some(filled) = captures.get(name.as_str()) else { continue };
                    // The indentation of the output line the capture starts on: the
                    // match's own line while the template is still on its first line.
                    let here = if out.s.contains('\n') { current_indent(&out.s) } else { base.to_string() };
                    insert_capture(&mut out, filled, &here);
                    // A capture ending in a line comment must not have code after it on its line.
                    let code_follows = match pieces.get(k + 1) {
                        Some(Piece::Text(t)) => !t.split('\n').next().unwrap_or("").trim().is_empty(),
                        Some(Piece::Var { .. }) => true,
                        None => false,
                    };
                    if filled.ends_in_line_comment && code_follows {
                        out.push_str(self.layout.newline);
                        out.push_str(&here);
                    }
                }
            }
        }
        out
    }

    /// The template line's indentation, in the file's unit.
    fn convert_indent(&self, line: &str) -> String {
        let lead = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        let mut levels = 0usize;
        let mut spaces = 0usize;
        for ch in lead.chars() {
            if ch == '\t' {
                levels += 1;
            } else {
                spaces += 1;
            }
        }
        let template_unit = self.template_space_unit();
        levels += spaces / template_unit;
        let rest = spaces % template_unit;
        format!("{}{}", self.layout.unit.repeat(levels), " ".repeat(rest))
    }

    /// The template's own indentation step in spaces (the smallest non-zero one), default 4.
    fn template_space_unit(&self) -> usize {
        let mut unit = usize::MAX;
        for piece in &self.template.pieces {
            if let Piece::Text(t) = piece {
                for line in t.split('\n').skip(1) {
                    let n = line.len() - line.trim_start_matches(' ').len();
                    if n > 0 && !line.trim().is_empty() {
                        unit = unit.min(n);
                    }
                }
            }
        }
        if unit == usize::MAX { 4 } else { unit }
    }
}

fn take_text(pieces: &[Piece], k: usize) -> Option<String> {
    match &pieces[k] {
        Piece::Text(t) => Some(t.clone()),
        Piece::Var { .. } => None,
    }
}

/// If the variable at `k` is alone on its template line, removes that line.
fn drop_blank_line(pieces: &mut [Piece], k: usize) -> bool {
    let before = if k > 0 { take_text(pieces, k - 1) } else { Some(String::new()) };
    let after = pieces.get(k + 1).map_or(Some(String::new()), |p| match p {
        Piece::Text(t) => Some(t.clone()),
        Piece::Var { .. } => None,
    });
    let (Some(before), Some(after)) = (before, after) else { return false };
    let Some(nl) = before.rfind('\n') else { return false };
    if !before[nl + 1..].trim().is_empty() {
        return false;
    }
    let after_line_end = after.find('\n');
    let tail = &after[..after_line_end.unwrap_or(after.len())];
    if !tail.trim().is_empty() {
        return false;
    }
    // Remove from the newline before through the end of the line (keeping the next newline).
    if k > 0 {
        pieces[k - 1] = Piece::Text(before[..nl].to_string());
    }
    if k + 1 < pieces.len() {
        pieces[k + 1] = Piece::Text(after[after_line_end.unwrap_or(after.len())..].to_string());
    }
    pieces[k] = Piece::Text(String::new());
    true
}

/// Appends a capture's text, its continuation lines re-based from the capture's
/// origin indentation onto `here`; lines inside literals are copied as they are.
fn insert_capture(out: &mut Text, filled: &Filled, here: &str) {
    let text = &filled.text;
    let mut offset = 0;
    for (n, line) in text.s.split('\n').enumerate() {
        if n == 0 {
            out.push_str(line);
        } else {
            out.push_str("\n");
            if text.verbatim.binary_search(&offset).is_ok() {
                out.verbatim.push(out.s.len());
                out.push_str(line);
            } else {
                out.push_str(&reindent(line, &filled.origin, here));
            }
        }
        offset += line.len() + 1;
    }
}

/// One code line moved from indentation `origin` to `here`, keeping its indentation
/// relative to `origin`; a capture that stays at its indentation keeps its bytes. A blank
/// line stays blank.
fn reindent(line: &str, origin: &str, here: &str) -> String {
    if origin == here {
        return line.to_string();
    }
    let body = line.trim_start_matches([' ', '\t']);
    if body.trim().is_empty() {
        // Moved: no indentation is written onto a blank line; only a `\r` of a CRLF line survives.
        return if line.ends_with('\r') { "\r".to_string() } else { String::new() };
    }
    if let Some(rest) = line.strip_prefix(origin) {
        return format!("{here}{rest}");
    }
    let lead = &line[..line.len() - body.len()];
    if origin.starts_with(lead) {
        // Less indented than the capture's first line: keep the same distance below `here`.
        let deficit = origin.len() - lead.len();
        return format!("{}{body}", &here[..here.len().saturating_sub(deficit)]);
    }
    format!("{here}{body}")
}

/// Indentation of the last line of `out` up to its first non-blank character.
fn current_indent(out: &str) -> String {
    let line = out.rsplit('\n').next().unwrap_or("");
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    line[..n].to_string()
}
