//! Differential test of rewriting: our `rewrite_text` against the ast-grep CLI, byte for
//! byte, on real code no one here wrote (see `common/rewrite_cases.rs` for the corpora).
//!
//! For each case ast-grep runs once over the case's directories
//! (`ast-grep run --pattern P --rewrite R --lang L --json=stream DIRS…`); each JSON line
//! is a match with its `replacement` and `replacementOffsets` (byte offsets into the
//! file). Its replacements are applied in memory as `ast-grep run -U` writes them:
//! sorted by start, outer before inner, and an edit that starts inside one already
//! applied is dropped. Ours is `rewrite_text` on the same text. Nothing is written.
//!
//! Per file, the match start locations must agree (as in `differential.rs`), and where
//! they do the two texts must be identical. Any other difference fails unless a row of
//! [`KNOWN`] explains it, by a predicate checked against the actual difference; a row
//! that explains nothing in the run fails too (stale), so the table stays true.
//!
//! (`apply` was checked against files that `ast-grep run -U` rewrote, nested and dropped
//! edits included; `show_one` below repeats that check for any file.)
//!
//! ast-grep is found at `$AST_GREP`, else `<workspace>/.tools/venv/bin/ast-grep`. When
//! it or a corpus is missing the test fails under `CI=true` and otherwise says what is
//! missing and passes.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::rewrite_cases as common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use astmatch::{Lang, Pattern, Reparse, Rewrite, SearchOptions, rewrite_text, search};
use common::{REWRITE_CASES, RewriteCase, Scale, ast_grep, corpus_dirs, corpus_name, require};
use similar::{DiffOp, TextDiff};

/// Our search skips larger files; ast-grep's matches in them are left out.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// How a known difference is told apart. Each is a predicate on the actual difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The file is tab-indented, and the texts are equal once each line's leading
    /// whitespace is removed and the empty lines only ast-grep has are dropped.
    TabIndent,
    /// Every differing line begins inside a multi-line string, raw string or comment of our
    /// output, and is equal to its counterpart once leading whitespace is removed.
    LiteralLines,
    /// Every differing line is equal to its counterpart once trailing whitespace is removed.
    BlankLineWhitespace,
    /// The only lines that differ are whitespace-only lines that ast-grep has and we do not
    /// (a template line holding only an empty `$$$` capture).
    EmptyMultiLine,
    /// The file indents by another step than the template; every differing line is equal to
    /// its counterpart once leading spaces are removed, and the two indentations differ by a
    /// multiple of the difference between the two steps (we convert the template's levels
    /// to the file's step, ast-grep keeps the template's spaces).
    IndentUnit,
    /// A multi-line capture placed on a line that another capture continues: every differing
    /// line equals its counterpart once leading whitespace is removed, and ours is indented
    /// by exactly the amount the line it lands on is indented past the match's first line
    /// (we re-base a capture on the line it lands on, ast-grep on the match's first line).
    LandingLine,
    /// Every differing line equals its counterpart once leading whitespace is removed, and ours
    /// is a line of the matched code exactly as it was (where a capture lands
    /// at the indentation it came from we leave its lines alone; ast-grep moves a line that is
    /// less indented than the capture's first).
    KeptCodeLine,
    /// We made more replacements than ast-grep applied, and every difference lies inside
    /// one of ast-grep's applied edits that holds a match it dropped as nested.
    Nested,
    /// ast-grep's text has a parse error and ours has none, and every difference is on a
    /// line of ast-grep's text that holds an error node.
    TheirsBroken,
    /// Every differing line equals its counterpart once `;` are removed, and ours has more:
    /// ast-grep's statement match takes the statement's `;` and a template without one drops
    /// it; we keep the code's terminator.
    Semicolon,
    /// Matches only we found, each with an empty `$$$` capture next to a `,` of the pattern:
    /// an empty `$$$` takes one adjacent separator with us (docs/patterns.md, "Rewriting"), ast-grep requires the `,`.
    OnlyOursEmptyMulti,
    /// Matches only we found, each on a node (or a same-range ancestor) of one of these kinds.
    OnlyOursOnNode(&'static [&'static str]),
    /// Matches only ast-grep found, each on a node (or a same-range ancestor) with a direct
    /// child token of one of these kinds that the pattern lacks (ast-grep skips such tokens
    /// of the code, we do not).
    TheirsSkipsToken(&'static [&'static str]),
    /// Our re-parse check refuses the file (`Reparse::Broken`): it is not staged at all, so
    /// there is no text of ours to compare.
    Refused,
    /// Matches only ast-grep found, each on a node that we match once some of its (or a
    /// descendant's) trailing children are cut off: ast-grep ignores the code's children
    /// after the pattern's last one. Its edits there are left out before the outputs are compared.
    TheirsIgnoresTrailing,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::TabIndent => "TabIndent",
            Kind::LiteralLines => "LiteralLines",
            Kind::BlankLineWhitespace => "BlankLineWhitespace",
            Kind::EmptyMultiLine => "EmptyMultiLine",
            Kind::IndentUnit => "IndentUnit",
            Kind::LandingLine => "LandingLine",
            Kind::KeptCodeLine => "KeptCodeLine",
            Kind::Nested => "Nested",
            Kind::TheirsBroken => "TheirsBroken",
            Kind::Refused => "Refused",
            Kind::Semicolon => "Semicolon",
            Kind::OnlyOursEmptyMulti => "MatchSet:OnlyOursEmptyMulti",
            Kind::OnlyOursOnNode(_) => "MatchSet:OnlyOursOnNode",
            Kind::TheirsSkipsToken(_) => "MatchSet:TheirsSkipsToken",
            Kind::TheirsIgnoresTrailing => "MatchSet:TheirsIgnoresTrailing",
        }
    }

    fn is_match_set(self) -> bool {
        matches!(
            self,
            Kind::OnlyOursEmptyMulti
                | Kind::OnlyOursOnNode(_)
                | Kind::TheirsIgnoresTrailing
                | Kind::TheirsSkipsToken(_)
        )
    }
}

/// A known difference: in files of `lang` rewritten with `pattern`, a difference of `kind`.
/// A file's difference may need several rows of its pattern together; each file is
/// explained by a smallest such set (rows dropped one by one while the rest still explain
/// it), and a row that no file needs is stale.
struct Known {
    lang: Lang,
    pattern: &'static str,
    kind: Kind,
    reason: &'static str,
}

const fn known(lang: Lang, pattern: &'static str, kind: Kind, reason: &'static str) -> Known {
    Known { lang, pattern, kind, reason }
}

use Kind::*;

const NESTED: &str = "we rewrite matches nested inside a capture too (docs/patterns.md, Nested matches: one accept leaves no match behind); ast-grep drops an edit that starts inside another";
const BLANK: &str =
    "a blank line inside a multi-line capture stays empty with us; ast-grep writes the indentation onto it";
const TRAILING: &str = "ast-grep ignores the code's children after the pattern's last one, so it also matches (and its rewrite drops) an `else`, `elif`, `from` or extra value";
const TABS: &str = "ast-grep's indentation code counts only spaces: in tab-indented files it leaves template lines without the match's indentation and adds an empty line before the template's last line";
const LANDING: &str = "a multi-line capture landing on a line another capture continues is re-based on that line with us (docs/patterns.md, Rewriting), on the match's first line by ast-grep";
const LITERAL: &str = "we never re-indent lines inside a string (that would change the literal); ast-grep does";
const UNIT: &str = "we convert the template's four-space levels to the file's two-space step (docs/patterns.md, Rewriting); ast-grep keeps the template's spaces";
const EMPTY_LINE: &str = "a template line holding only an empty `$$$` capture disappears with us (docs/patterns.md, Rewriting); ast-grep leaves a line of indentation";

const KNOWN: &[Known] = &[
    known(Lang::Rust, "$X.unwrap()", Nested, NESTED),
    known(Lang::Rust, "$X.map($F)", Nested, NESTED),
    known(Lang::Rust, "$X.map($F)", LandingLine, LANDING),
    known(Lang::Rust, "unsafe { $$$B }", BlankLineWhitespace, BLANK),
    known(
        Lang::Python,
        "self.$A = $B",
        Refused,
        "rewriting the nested match of a chain `self.a = self.b = x` too makes `self.a: object = self.b: object = x`, which Python rejects: the file is refused rather than staged (ast-grep rewrites only the outer match)",
    ),
    known(
        Lang::Python,
        "if $A: $$$B",
        KeptCodeLine,
        "a body whose first line is an own-line comment is re-based from its first statement's line, so it stays where it was with us; ast-grep indents the statements one level deeper than the comment",
    ),
    known(
        Lang::TypeScript,
        "type $N = $T;",
        LiteralLines,
        "the ` * ` lines of a doc comment inside a moved type are lines inside a comment, which we never re-indent; ast-grep moves them with the code",
    ),
    known(Lang::Python, "raise $E", TheirsIgnoresTrailing, TRAILING),
    known(Lang::Python, "raise $E", LiteralLines, LITERAL),
    known(Lang::Python, "with $C:\n    $$$B", BlankLineWhitespace, BLANK),
    known(Lang::Python, "with $C:\n    $$$B", Nested, NESTED),
    known(Lang::Python, "with $C: $$$B", BlankLineWhitespace, BLANK),
    known(Lang::Python, "with $C: $$$B", Nested, NESTED),
    known(Lang::Python, "if $A: $$$B", TheirsIgnoresTrailing, TRAILING),
    known(Lang::Python, "if $A: $$$B", Nested, NESTED),
    known(Lang::Python, "if $A: $$$B", BlankLineWhitespace, BLANK),
    known(Lang::Python, "for $K, $V in $D.items(): $$$B", BlankLineWhitespace, BLANK),
    known(Lang::TypeScript, "interface $I extends $$$B { $$$M }", EmptyMultiLine, EMPTY_LINE),
    known(Lang::TypeScript, "declare function $F($$$A): $R;", EmptyMultiLine, EMPTY_LINE),
    known(
        Lang::JavaScript,
        "throw new Error($M)",
        Semicolon,
        "ast-grep's match of the statement takes its `;` and the template has none, so ast-grep drops it; we keep it",
    ),
    known(
        Lang::JavaScript,
        "function $F($$$P) { $$$B }",
        OnlyOursOnNode(&["function_expression"]),
        "we match a named function expression with the declaration's pattern (same shape); ast-grep compares node kinds",
    ),
    known(
        Lang::JavaScript,
        "function $F($$$P) { $$$B }",
        TheirsSkipsToken(&["async"]),
        "ast-grep skips the code's `async`, which the pattern lacks, and matches async functions; we do not",
    ),
    known(Lang::JavaScript, "function $F($$$P) { $$$B }", Nested, NESTED),
    known(Lang::JavaScript, "function $F($$$P) { $$$B }", IndentUnit, UNIT),
    known(Lang::JavaScript, "$A.push($B)", IndentUnit, UNIT),
    known(Lang::JavaScript, "$A.push($B)", Nested, NESTED),
    known(Lang::JavaScript, "$A.forEach($B)", Nested, NESTED),
    known(Lang::JavaScript, "$A.forEach($B)", BlankLineWhitespace, BLANK),
    known(Lang::JavaScript, "if ($C) { $$$B } else { $$$E }", IndentUnit, UNIT),
    known(Lang::JavaScript, "if ($C) { $$$B } else { $$$E }", Nested, NESTED),
    known(Lang::Go, "if $C { $$$B }", TheirsIgnoresTrailing, TRAILING),
    known(Lang::Go, "if $C { $$$B }", TabIndent, TABS),
    known(Lang::Go, "if $C { $$$B }", Nested, NESTED),
    known(
        Lang::Go,
        "$T.Errorf($F, $$$A)",
        OnlyOursEmptyMulti,
        "`t.Errorf(\"msg\")` has no `,`: an empty `$$$A` takes the pattern's `,` with it (docs/patterns.md, Rewriting); ast-grep requires the `,` and misses these calls",
    ),
    known(Lang::Go, "$X.Run($N, $F)", TabIndent, TABS),
    known(Lang::Go, "return $X, nil", TheirsIgnoresTrailing, TRAILING),
    known(Lang::Go, "for $K, $V := range $M { $$$B }", TabIndent, TABS),
    known(Lang::Go, "for $K, $V := range $M { $$$B }", Nested, NESTED),
];

/// One of ast-grep's matches.
#[derive(Debug, Clone)]
struct TheirMatch {
    /// 1-indexed line and character column of the match start.
    loc: (usize, usize),
    /// The matched node's byte range.
    range: Range<usize>,
    /// Where its replacement goes.
    edit: Range<usize>,
    replacement: String,
}

/// One of ours, as `search` reports it.
#[derive(Debug, Clone)]
struct OurMatch {
    loc: (usize, usize),
    range: Range<usize>,
    /// Whether a `$$$` capture is empty.
    empty_multi: bool,
}

/// ast-grep's replacements applied in memory: the text, and each applied edit's range in
/// the old and in the new text.
struct Applied {
    text: String,
    edits: Vec<(Range<usize>, Range<usize>)>,
    /// Old-text ranges of edits dropped because they start inside an applied one.
    dropped: Vec<Range<usize>>,
}

fn apply(source: &str, matches: &[&TheirMatch]) -> Applied {
    let mut sorted: Vec<&TheirMatch> = matches.to_vec();
    sorted.sort_by_key(|m| (m.edit.start, std::cmp::Reverse(m.edit.end)));
    let mut text = String::new();
    let mut edits = Vec::new();
    let mut dropped = Vec::new();
    let mut pos = 0;
    for m in sorted {
        if m.edit.start < pos {
            dropped.push(m.edit.clone());
            continue;
        }
        text.push_str(&source[pos..m.edit.start]);
        let start = text.len();
        text.push_str(&m.replacement);
        edits.push((m.edit.clone(), start..text.len()));
        pos = m.edit.end;
    }
    text.push_str(&source[pos..]);
    Applied { text, edits, dropped }
}

impl Applied {
    /// Where an old-text offset lands in the new text (an offset inside an edit lands on
    /// the edit's start, or its end when `end`).
    fn map(&self, offset: usize, end: bool) -> usize {
        let i = self.edits.partition_point(|(old, _)| old.start <= offset);
        if i == 0 {
            return offset;
        }
        let (old, new) = &self.edits[i - 1];
        if offset < old.end || (offset == old.end && end && offset > old.start) {
            if end { new.end } else { new.start }
        } else {
            offset - old.end + new.end
        }
    }
}

/// 0-indexed line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count()
}

/// The 0-indexed lines a byte range spans.
fn lines_of(text: &str, range: Range<usize>) -> Range<usize> {
    let first = line_of(text, range.start);
    let last = line_of(text, range.end.max(range.start + 1) - 1).max(first);
    first..last + 1
}

fn parse(lang: Lang, text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parser.parse(text, None)
}

/// Every node of `tree`, pre-order.
fn nodes(tree: &tree_sitter::Tree) -> Vec<tree_sitter::Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        out.push(node);
        let mut cursor = node.walk();
        let children: Vec<_> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// 0-indexed lines that begin strictly inside a multi-line string or comment of `text`.
fn literal_lines(lang: Lang, text: &str) -> BTreeSet<usize> {
    let mut lines = BTreeSet::new();
    let Some(tree) = parse(lang, text) else { return lines };
    for node in nodes(&tree) {
        let kind = node.kind();
        let literal = kind.contains("string") || kind.contains("comment") || kind.contains("heredoc");
        let (first, last) = (node.start_position().row, node.end_position().row);
        if literal && last > first {
            lines.extend(first + 1..=last);
        }
    }
    lines
}

/// 0-indexed lines of `text` holding an ERROR or MISSING node; `None` when it parses clean.
fn error_lines(lang: Lang, text: &str) -> Option<BTreeSet<usize>> {
    let tree = parse(lang, text)?;
    if !tree.root_node().has_error() {
        return None;
    }
    let mut lines = BTreeSet::new();
    for node in nodes(&tree) {
        if node.is_error() || node.is_missing() {
            lines.extend(node.start_position().row..=node.end_position().row);
        }
    }
    Some(lines)
}

/// The outermost node spanning exactly `range`.
fn exact_node<'t>(tree: &'t tree_sitter::Tree, range: &Range<usize>) -> Option<tree_sitter::Node<'t>> {
    let mut node = tree.root_node().descendant_for_byte_range(range.start, range.end)?;
    while node.byte_range() != *range {
        node = node.parent()?;
        if node.start_byte() > range.start || node.end_byte() < range.end {
            return None;
        }
    }
    while let Some(p) = node.parent()
        && p.byte_range() == *range
    {
        node = p;
    }
    Some(node)
}

/// Every node spanning exactly `range`, innermost first.
fn exact_nodes<'t>(tree: &'t tree_sitter::Tree, range: &Range<usize>) -> Vec<tree_sitter::Node<'t>> {
    // The smallest node holding the range, then its ancestors while they span no more.
    let mut out = Vec::new();
    let mut node = tree.root_node().descendant_for_byte_range(range.start, range.end);
    while let Some(n) = node
        && n.byte_range() == *range
    {
        out.push(n);
        node = n.parent();
    }
    out
}

/// Whether we match at `range` once trailing children of the node there (or of one of its
/// descendants, two levels down) are cut off. The node's text is matched on its own, inside
/// a scaffold that keeps its column.
fn ignores_trailing(pattern: &Pattern, tree: &tree_sitter::Tree, source: &str, range: &Range<usize>) -> bool {
    let Some(node) = exact_node(tree, range) else { return false };
    let line_start = source[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let lead: String = source[line_start..range.start].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let (before, after) = match pattern.lang() {
        Lang::Python if lead.is_empty() => ("", ""),
        Lang::Python => ("if True:\n", "\n"),
        Lang::Go => ("package p\nfunc _() {\n", "\n}\n"),
        Lang::Rust => ("fn _() {\n", "\n}\n"),
        _ => ("", "\n"),
    };
    let mut level = vec![node];
    let mut tried = 0;
    for _depth in 0..3 {
        let mut next = Vec::new();
        for m in &level {
            let mut cursor = m.walk();
            let children: Vec<tree_sitter::Node<'_>> = m.children(&mut cursor).collect();
            for i in (0..children.len().saturating_sub(1)).rev() {
                for j in i + 1..children.len() {
                    tried += 1;
                    if tried > 200 {
                        return false;
                    }
                    let cut = children[i].end_byte()..children[j].end_byte();
                    let snippet = format!(
                        "{before}{lead}{}{}{after}",
                        &source[range.start..cut.start],
                        &source[cut.end..range.end]
                    );
                    let at = before.len() + lead.len();
                    if astmatch::search_source(pattern, &snippet).iter().any(|m| m.range.start == at) {
                        return true;
                    }
                }
            }
            next.extend(children);
        }
        level = next;
    }
    false
}

/// Items of `a` not in `b` (by location), counting repeats.
fn minus<A: Clone, B>(
    a: &[A],
    b: &[B],
    key_a: impl Fn(&A) -> (usize, usize),
    key_b: impl Fn(&B) -> (usize, usize),
) -> Vec<A> {
    let mut counts: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for l in b {
        *counts.entry(key_b(l)).or_default() += 1;
    }
    a.iter()
        .filter(|l| match counts.get_mut(&key_a(l)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// Everything known about one file's difference.
struct FileDiff<'a> {
    lang: Lang,
    path: &'a Path,
    source: &'a str,
    /// The template's indentation step in spaces (`None` when it indents with tabs).
    template_unit: Option<usize>,
    ours: &'a Rewrite,
    theirs: &'a Applied,
    /// Lines of `theirs.text` where a difference is allowed whatever the row (only-ours matches).
    allowed: BTreeSet<usize>,
}

fn tab_indented(source: &str) -> bool {
    let tabs = source.lines().filter(|l| l.starts_with('\t')).count();
    let spaces = source.lines().filter(|l| l.starts_with(' ') && !l.trim().is_empty()).count();
    tabs > spaces
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The template's smallest non-zero indentation in spaces; `None` when it has a tab-indented line.
fn template_unit(template: &str) -> Option<usize> {
    let lines: Vec<&str> = template.split('\n').skip(1).filter(|l| !l.trim().is_empty()).collect();
    if lines.iter().any(|l| indent(l).contains('\t')) {
        return None;
    }
    Some(lines.iter().map(|l| indent(l).len()).filter(|&n| n > 0).min().unwrap_or(4))
}

/// The file's indentation step in spaces: the most common increase of indentation between
/// consecutive code lines (lines inside strings and comments left out).
fn file_unit(lang: Lang, source: &str) -> Option<usize> {
    let literal = literal_lines(lang, source);
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    let mut previous: Option<usize> = None;
    for (n, line) in source.split('\n').enumerate() {
        if line.trim().is_empty() || literal.contains(&n) || indent(line).contains('\t') {
            continue;
        }
        let here = indent(line).len();
        if let Some(p) = previous
            && here > p
        {
            *counts.entry(here - p).or_default() += 1;
        }
        previous = Some(here);
    }
    counts.into_iter().max_by_key(|&(step, n)| (n, std::cmp::Reverse(step))).map(|(step, _)| step)
}

/// The differing hunks of `theirs` (old) against `ours` (new) that `kinds` leave unexplained,
/// as (their lines, our lines).
fn unexplained<'a>(d: &'a FileDiff<'a>, kinds: &[Kind]) -> Vec<(Range<usize>, Range<usize>)> {
    let theirs = &d.theirs.text;
    let ours = &d.ours.text;
    let their_lines: Vec<&str> = theirs.split('\n').collect();
    let our_lines: Vec<&str> = ours.split('\n').collect();
    let tab = kinds.contains(&Kind::TabIndent) && tab_indented(d.source);
    let literal = if kinds.contains(&Kind::LiteralLines) { literal_lines(d.lang, ours) } else { BTreeSet::new() };
    let trailing = kinds.contains(&Kind::BlankLineWhitespace);
    let semicolon = kinds.contains(&Kind::Semicolon);
    let empty_multi = kinds.contains(&Kind::EmptyMultiLine);
    let landing = kinds.contains(&Kind::LandingLine);
    let kept_code = kinds.contains(&Kind::KeptCodeLine);
    // (template step, file step) when they differ.
    let units = if kinds.contains(&Kind::IndentUnit) {
        d.template_unit.zip(file_unit(d.lang, d.source)).filter(|(t, u)| t != u)
    } else {
        None
    };
    let mut regions = d.allowed.clone();
    if kinds.contains(&Kind::Nested) && d.ours.replacements > d.theirs.edits.len() {
        for (old, new) in &d.theirs.edits {
            if d.theirs.dropped.iter().any(|r| old.start <= r.start && r.end <= old.end) {
                regions.extend(lines_of(theirs, new.clone()));
            }
        }
    }
    if kinds.contains(&Kind::TheirsBroken)
        && error_lines(d.lang, ours).is_none()
        && let Some(lines) = error_lines(d.lang, theirs)
    {
        regions.extend(lines);
    }
    let same = |t: usize, o: usize| {
        let (a, b) = (their_lines[t], our_lines[o]);
        let (ia, ib) = (indent(a), indent(b));
        a == b
            || (tab && a.trim_start() == b.trim_start())
            || (literal.contains(&o) && a.trim_start() == b.trim_start())
            || (trailing && a.trim_end() == b.trim_end())
            || (semicolon && a.replace(';', "") == b.replace(';', "") && b.len() > a.len())
            || units.is_some_and(|(t, u)| {
                let (ia, ib) = (ia.len(), ib.len());
                let step = t.abs_diff(u);
                a.trim_start() == b.trim_start()
                    && !indent(a).contains('\t')
                    && !indent(b).contains('\t')
                    && ia != ib
                    && (ia > ib) == (t > u)
                    && ia.abs_diff(ib) % step == 0
            })
    };
    // Lines only ast-grep has that a kind lets go.
    let extra = |t: usize| {
        let line = their_lines[t];
        (tab && line.is_empty()) || (empty_multi && line.trim().is_empty())
    };
    // Lines are aligned by their text without surrounding whitespace; each aligned pair
    // must then be equal or a tolerated difference.
    let (their_norm, our_norm): (Vec<&str>, Vec<&str>) =
        (their_lines.iter().map(|l| l.trim()).collect(), our_lines.iter().map(|l| l.trim()).collect());
    let diff = TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_slices(&their_norm, &our_norm);
    let mut hunks: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, new_index, len } => {
                // Runs of aligned pairs that differ in whitespace.
                let mut run: Option<(usize, usize, usize)> = None;
                for k in 0..=len {
                    let differs = k < len && their_lines[old_index + k] != our_lines[new_index + k];
                    match (&mut run, differs) {
                        (Some((_, _, n)), true) => *n += 1,
                        (None, true) => run = Some((old_index + k, new_index + k, 1)),
                        (Some((t, o, n)), false) => {
                            hunks.push((*t..*t + *n, *o..*o + *n));
                            run = None;
                        }
                        (None, false) => {}
                    }
                }
            }
            DiffOp::Delete { old_index, old_len, new_index } => {
                hunks.push((old_index..old_index + old_len, new_index..new_index))
            }
            DiffOp::Insert { old_index, new_index, new_len } => {
                hunks.push((old_index..old_index, new_index..new_index + new_len))
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                hunks.push((old_index..old_index + old_len, new_index..new_index + new_len))
            }
        }
    }
    let mut left = Vec::new();
    for (t, o) in hunks {
        let kept: Vec<usize> = t.clone().filter(|&l| !extra(l)).collect();
        if kept.len() == o.len() && kept.iter().zip(o.clone()).all(|(&a, b)| same(a, b)) {
            continue;
        }
        if landing && kept.len() == o.len() && o.start > 0 {
            // The match's first line: that of ast-grep's edit holding the hunk.
            let edit =
                d.theirs.edits.iter().map(|(_, new)| lines_of(theirs, new.clone())).find(|l| l.contains(&t.start));
            if let Some(edit) = edit {
                let shift =
                    indent(our_lines[o.start - 1]).len() as isize - indent(their_lines[edit.start]).len() as isize;
                if shift != 0
                    && kept.iter().zip(o.clone()).all(|(&a, b)| {
                        let (a, b) = (their_lines[a], our_lines[b]);
                        a.trim_start() == b.trim_start() && indent(b).len() as isize - indent(a).len() as isize == shift
                    })
                {
                    continue;
                }
            }
        }
        if kept_code && kept.len() == o.len() && !t.is_empty() {
            let edit = d.theirs.edits.iter().find(|(_, new)| lines_of(theirs, new.clone()).contains(&t.start));
            if let Some((old, _)) = edit {
                let start = d.source[..old.start].rfind('\n').map_or(0, |i| i + 1);
                let code: BTreeSet<&str> = d.source[start..old.end].split('\n').collect();
                // Line by line: a kept line of the matched code, or a line another row lets go.
                if kept.iter().zip(o.clone()).all(|(&a, b)| {
                    let (x, y) = (their_lines[a], our_lines[b]);
                    same(a, b) || regions.contains(&a) || (x.trim_start() == y.trim_start() && code.contains(y))
                }) {
                    continue;
                }
            }
        }
        // A pure insertion or deletion may slide over lines equal to its own (a `}` among
        // `}`s); it is inside a region if one of its places is.
        let placements: Vec<Range<usize>> = if t.is_empty() {
            slide(&our_norm, o.clone())
                .into_iter()
                .map(|(_, shift)| {
                    let at = (t.start as isize + shift) as usize;
                    at..at
                })
                .collect()
        } else if o.is_empty() {
            slide(&their_norm, t.clone()).into_iter().map(|(r, _)| r).collect()
        } else {
            vec![t.clone()]
        };
        let inside = placements.iter().any(|t| {
            if t.is_empty() {
                regions.contains(&t.start) || (t.start > 0 && regions.contains(&(t.start - 1)))
            } else {
                t.clone().all(|l| regions.contains(&l))
            }
        });
        if !inside {
            left.push((t, o));
        }
    }
    left
}

/// The places a block of `lines` can slide to over equal neighbours: (range, shift).
fn slide(lines: &[&str], block: Range<usize>) -> Vec<(Range<usize>, isize)> {
    let mut out = vec![(block.clone(), 0)];
    let (mut a, mut b, mut shift) = (block.start, block.end, 0isize);
    while a > 0 && lines[a - 1] == lines[b - 1] && shift > -200 {
        (a, b, shift) = (a - 1, b - 1, shift - 1);
        out.push((a..b, shift));
    }
    let (mut a, mut b, mut shift) = (block.start, block.end, 0isize);
    while b < lines.len() && lines[a] == lines[b] && shift < 200 {
        (a, b, shift) = (a + 1, b + 1, shift + 1);
        out.push((a..b, shift));
    }
    out
}

/// A readable account of the first unexplained hunk.
fn report(d: &FileDiff<'_>, hunk: &(Range<usize>, Range<usize>), hunks: usize, closest: &str) -> String {
    let their_lines: Vec<&str> = d.theirs.text.split('\n').collect();
    let our_lines: Vec<&str> = d.ours.text.split('\n').collect();
    let (t, o) = hunk;
    let cut = |s: &str| {
        let s = s.replace('\t', "→");
        if s.chars().count() > 160 { format!("{}…", s.chars().take(160).collect::<String>()) } else { s }
    };
    let mut text = format!(
        "  {} (our line {}, their line {}; {hunks} unexplained hunks{closest}; ours {} replacements, ast-grep applied {}; our check {:?})\n",
        d.path.display(),
        o.start + 1,
        t.start + 1,
        d.ours.replacements,
        d.theirs.edits.len(),
        d.ours.check
    );
    for (l, line) in our_lines.iter().enumerate().take(o.start).skip(o.start.saturating_sub(3)) {
        let _ = writeln!(text, "      {:>5}   {}", l + 1, cut(line));
    }
    for l in o.clone().take(6) {
        let _ = writeln!(text, "    ours {:>5}   {}", l + 1, cut(our_lines[l]));
    }
    if o.len() > 6 {
        let _ = writeln!(text, "    ours   …     ({} lines)", o.len());
    }
    for l in t.clone().take(6) {
        let _ = writeln!(text, "  theirs {:>5}   {}", l + 1, cut(their_lines[l]));
    }
    if t.len() > 6 {
        let _ = writeln!(text, "  theirs   …     ({} lines)", t.len());
    }
    text
}

/// ast-grep's matches of a case, by absolute file.
fn theirs(ast_grep: &Path, case: &RewriteCase, dirs: &[PathBuf]) -> BTreeMap<PathBuf, Vec<TheirMatch>> {
    let out = Command::new(ast_grep)
        .args(["run", "--pattern", case.pattern, "--rewrite", case.rewrite, "--lang", case.lang.id(), "--json=stream"])
        .args(dirs)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", ast_grep.display()));
    // ast-grep exits 1 when nothing matched.
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "ast-grep failed on {:?}: {}",
        case.pattern,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut found: BTreeMap<PathBuf, Vec<TheirMatch>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.trim().is_empty()) {
        let m: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("ast-grep printed {line:?}: {e}"));
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("ast-grep printed {line:?}")) as usize;
        let file = PathBuf::from(m["file"].as_str().unwrap_or_default());
        let start = &m["range"]["start"];
        let range = &m["range"]["byteOffset"];
        let edit = &m["replacementOffsets"];
        found.entry(file).or_default().push(TheirMatch {
            // ast-grep's `range.start` is 0-based: line, and column in characters.
            loc: (n(&start["line"]) + 1, n(&start["column"]) + 1),
            range: n(&range["start"])..n(&range["end"]),
            edit: n(&edit["start"])..n(&edit["end"]),
            replacement: m["replacement"].as_str().unwrap_or_else(|| panic!("no replacement in {line:?}")).to_string(),
        });
    }
    found.retain(|file, _| std::fs::metadata(file).is_ok_and(|md| md.len() <= MAX_FILE_BYTES));
    found
}

/// Our matches of a case, by absolute file.
fn ours(case: &RewriteCase, dirs: &[PathBuf]) -> BTreeMap<PathBuf, Vec<OurMatch>> {
    let options = SearchOptions { lang: Some(case.lang), max_results: usize::MAX, ..Default::default() };
    let mut found: BTreeMap<PathBuf, Vec<OurMatch>> = BTreeMap::new();
    for dir in dirs {
        let report = search(dir, dir, case.pattern, &options)
            .unwrap_or_else(|e| panic!("ours: {:?} in {}: {e}", case.pattern, dir.display()));
        for m in report.matches {
            let empty_multi = m.captures.iter().any(|c| c.multi && c.text.is_empty());
            found.entry(dir.join(m.file)).or_default().push(OurMatch {
                loc: (m.line, m.column),
                range: m.byte_range,
                empty_multi,
            });
        }
    }
    found
}

#[derive(Default)]
struct Tally {
    compared: usize,
    identical: usize,
    explained: BTreeMap<String, usize>,
}

#[test]
fn rewrites_match_ast_grep() {
    const TEST: &str = "rewrite differential test";
    let ast_grep = ast_grep();
    if !require(TEST, &format!("ast-grep ({})", ast_grep.display()), ast_grep.is_file()) {
        return;
    }
    let mut corpora = BTreeMap::new();
    for &lang in common::LANGS {
        let dirs = corpus_dirs(lang, Scale::Sample);
        if !require(TEST, corpus_name(lang), !dirs.is_empty()) {
            return;
        }
        corpora.insert(lang, dirs);
    }

    let started = std::time::Instant::now();
    let mut failures: Vec<String> = Vec::new();
    let mut used = vec![0usize; KNOWN.len()];
    for case in REWRITE_CASES {
        let dirs = &corpora[&case.lang];
        let pattern = Pattern::compile(case.pattern, case.lang)
            .unwrap_or_else(|e| panic!("{} {:?}: {e}", case.lang.id(), case.pattern));
        let case_started = std::time::Instant::now();
        let theirs = theirs(&ast_grep, case, dirs);
        let ours = ours(case, dirs);
        let rows: Vec<usize> =
            (0..KNOWN.len()).filter(|&i| KNOWN[i].lang == case.lang && KNOWN[i].pattern == case.pattern).collect();
        let files: BTreeSet<&PathBuf> = theirs.keys().chain(ours.keys()).collect();
        let mut tally = Tally::default();
        let mut case_failures = Vec::new();
        for path in files {
            let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let their_matches: &[TheirMatch] = theirs.get(path).map_or(&[], |v| v);
            let our_matches: &[OurMatch] = ours.get(path).map_or(&[], |v| v);
            let rewrite = rewrite_text(&pattern, &source, case.rewrite)
                .unwrap_or_else(|e| panic!("{} {:?}: {e}", case.lang.id(), case.pattern));
            tally.compared += 1;
            if matches!(rewrite.check, Reparse::Broken(_))
                && let Some(&i) = rows.iter().find(|&&i| KNOWN[i].kind == Kind::Refused)
            {
                used[i] += 1;
                *tally.explained.entry(Kind::Refused.label().to_string()).or_default() += 1;
                continue;
            }

            // The match sets.
            let only_ours = minus(our_matches, their_matches, |m| m.loc, |m| m.loc);
            let only_theirs = minus(their_matches, our_matches, |m| m.loc, |m| m.loc);
            let mut match_rows = Vec::new();
            let mut excluded: BTreeMap<(usize, usize), usize> = BTreeMap::new();
            if !only_theirs.is_empty() {
                let tree = parse(case.lang, &source).expect("parse");
                let row = rows.iter().copied().find(|&i| match KNOWN[i].kind {
                    Kind::TheirsIgnoresTrailing => {
                        only_theirs.iter().all(|m| ignores_trailing(&pattern, &tree, &source, &m.range))
                    }
                    Kind::TheirsSkipsToken(tokens) => only_theirs.iter().all(|m| {
                        exact_nodes(&tree, &m.range).iter().any(|n| {
                            let mut cursor = n.walk();
                            n.children(&mut cursor).any(|c| !c.is_named() && tokens.contains(&c.kind()))
                        })
                    }),
                    _ => false,
                });
                match row {
                    Some(i) => {
                        match_rows.push(i);
                        for m in &only_theirs {
                            *excluded.entry(m.loc).or_default() += 1;
                        }
                    }
                    None => case_failures.push(format!(
                        "  {}: {} matches only ast-grep found, first at {}:{}: {}\n",
                        path.display(),
                        only_theirs.len(),
                        only_theirs[0].loc.0,
                        only_theirs[0].loc.1,
                        source.lines().nth(only_theirs[0].loc.0 - 1).unwrap_or("").trim()
                    )),
                }
            }
            if !only_ours.is_empty() {
                let tree = parse(case.lang, &source).expect("parse");
                let row = rows.iter().copied().find(|&i| match KNOWN[i].kind {
                    Kind::OnlyOursEmptyMulti => only_ours.iter().all(|m| m.empty_multi),
                    Kind::OnlyOursOnNode(kinds) => {
                        only_ours.iter().all(|m| exact_nodes(&tree, &m.range).iter().any(|n| kinds.contains(&n.kind())))
                    }
                    _ => false,
                });
                match row {
                    Some(i) => match_rows.push(i),
                    None => case_failures.push(format!(
                        "  {}: {} matches only we found, first at {}:{} ({}): {}\n",
                        path.display(),
                        only_ours.len(),
                        only_ours[0].loc.0,
                        only_ours[0].loc.1,
                        exact_nodes(&tree, &only_ours[0].range).iter().map(|n| n.kind()).collect::<Vec<_>>().join("/"),
                        source.lines().nth(only_ours[0].loc.0 - 1).unwrap_or("").trim()
                    )),
                }
            }
            if match_rows.len() < usize::from(!only_ours.is_empty()) + usize::from(!only_theirs.is_empty()) {
                continue;
            }

            // ast-grep's edits where both matched, applied as `-U` would.
            let kept: Vec<&TheirMatch> = their_matches
                .iter()
                .filter(|m| match excluded.get_mut(&m.loc) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                })
                .collect();
            let applied = apply(&source, &kept);
            let mut allowed = BTreeSet::new();
            for m in &only_ours {
                let range = applied.map(m.range.start, false)..applied.map(m.range.end, true);
                allowed.extend(lines_of(&applied.text, range));
            }
            let diff = FileDiff {
                lang: case.lang,
                path,
                source: &source,
                template_unit: template_unit(case.rewrite),
                ours: &rewrite,
                theirs: &applied,
                allowed,
            };
            for &i in &match_rows {
                used[i] += 1;
            }
            let match_label = match_rows.iter().map(|&i| KNOWN[i].kind.label()).collect::<Vec<_>>().join("+");
            if rewrite.text == applied.text {
                if match_rows.is_empty() {
                    tally.identical += 1;
                } else {
                    *tally.explained.entry(match_label).or_default() += 1;
                }
                continue;
            }
            let first = unexplained(&diff, &[]);
            if first.is_empty() {
                // Differences only inside matches only we found.
                *tally.explained.entry(match_label).or_default() += 1;
                continue;
            }
            // All text rows of the pattern together, then a smallest subset that still explains.
            let text_rows: Vec<usize> = rows.iter().copied().filter(|&i| !KNOWN[i].kind.is_match_set()).collect();
            let kinds_of = |set: &[usize]| set.iter().map(|&i| KNOWN[i].kind).collect::<Vec<Kind>>();
            let left = unexplained(&diff, &kinds_of(&text_rows));
            if !left.is_empty() {
                // Rows that explain part of a file that still differs are not stale.
                for &i in &text_rows {
                    let without: Vec<usize> = text_rows.iter().copied().filter(|&j| j != i).collect();
                    if unexplained(&diff, &kinds_of(&without)).len() > left.len() {
                        used[i] += 1;
                    }
                }
                let closest = if text_rows.is_empty() {
                    String::new()
                } else {
                    format!(" with rows {}", label(&kinds_of(&text_rows)))
                };
                case_failures.push(report(&diff, &left[0], left.len(), &closest));
                continue;
            }
            let mut needed = text_rows.clone();
            for &i in &text_rows {
                let without: Vec<usize> = needed.iter().copied().filter(|&j| j != i).collect();
                if unexplained(&diff, &kinds_of(&without)).is_empty() {
                    needed = without;
                }
            }
            for &i in &needed {
                used[i] += 1;
            }
            let mut name = label(&kinds_of(&needed));
            if !match_label.is_empty() {
                name = format!("{match_label}+{name}");
            }
            *tally.explained.entry(name).or_default() += 1;
        }
        let their_total: usize = theirs.values().map(Vec::len).sum();
        let our_total: usize = ours.values().map(Vec::len).sum();
        let explained: Vec<String> = tally.explained.iter().map(|(k, n)| format!("{k} {n}")).collect();
        eprintln!(
            "{:<10} {:<45} matches ours {:>5} / theirs {:>5}  files {:>4}  identical {:>4}  explained {:>3} [{}]  {} ({:.1} s)",
            case.lang.id(),
            one_line(case.pattern),
            our_total,
            their_total,
            tally.compared,
            tally.identical,
            tally.explained.values().sum::<usize>(),
            explained.join(", "),
            if case_failures.is_empty() { "ok" } else { "DIFFERENT" },
            case_started.elapsed().as_secs_f64()
        );
        if !case_failures.is_empty() {
            let n = case_failures.len();
            let mut text =
                format!("{} {:?} => {:?}: {n} files differ unexplained\n", case.lang.id(), case.pattern, case.rewrite);
            let shown = if std::env::var_os("RD_ALL").is_some() { usize::MAX } else { 3 };
            for f in case_failures.iter().take(shown) {
                text.push_str(f);
            }
            if n > shown {
                let _ = writeln!(text, "  … and {} more files", n - shown);
            }
            failures.push(text);
        }
    }
    for (i, row) in KNOWN.iter().enumerate() {
        if used[i] == 0 {
            failures.push(format!(
                "stale row: {} {:?} {} ({}) explained no difference",
                row.lang.id(),
                row.pattern,
                row.kind.label(),
                row.reason
            ));
        }
    }
    eprintln!(
        "rewrite differential test: {} cases in {:.1} s, {} known-difference rows",
        REWRITE_CASES.len(),
        started.elapsed().as_secs_f64(),
        KNOWN.len()
    );
    assert!(failures.is_empty(), "ours and ast-grep rewrite differently:\n{}", failures.join("\n"));
}

fn label(kinds: &[Kind]) -> String {
    kinds.iter().map(|k| k.label()).collect::<Vec<_>>().join("+")
}

fn one_line(s: &str) -> String {
    s.replace('\n', "⏎")
}

/// For looking at one difference: `RD_CASE=<index into REWRITE_CASES> RD_FILE=<path>
/// RD_LINES=<a>-<b> cargo test -p astmatch --test it rewrite_differential::show_one -- --ignored
/// --nocapture` prints both outputs' lines a..=b. With `RD_UPDATED=<copy>` (a copy of the file
/// that `ast-grep run -U` rewrote, outside the repository) it also checks that [`apply`]
/// writes what `-U` writes. (`RD_ALL=1` on the main test lists every differing file.)
#[test]
#[ignore]
fn show_one() {
    let Ok(i) = std::env::var("RD_CASE") else { return };
    let case = &REWRITE_CASES[i.parse::<usize>().unwrap()];
    let file = PathBuf::from(std::env::var("RD_FILE").unwrap());
    let lines = std::env::var("RD_LINES").unwrap_or("0-40".into());
    let (a, b) = lines.split_once('-').unwrap();
    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
    let source = std::fs::read_to_string(&file).unwrap();
    let pattern = Pattern::compile(case.pattern, case.lang).unwrap();
    let ours = rewrite_text(&pattern, &source, case.rewrite).unwrap();
    let theirs = theirs(&ast_grep(), case, std::slice::from_ref(&file));
    let t: Vec<&TheirMatch> = theirs.values().flatten().collect();
    let applied = apply(&source, &t);
    if let Some(updated) = std::env::var_os("RD_UPDATED") {
        let written = std::fs::read_to_string(updated).unwrap();
        assert!(written == applied.text, "apply() differs from what `ast-grep -U` wrote");
        eprintln!("apply() == ast-grep -U: {} edits applied, {} dropped", applied.edits.len(), applied.dropped.len());
    }
    eprintln!(
        "file step {:?}, template step {:?}, tab-indented {}",
        file_unit(case.lang, &source),
        template_unit(case.rewrite),
        tab_indented(&source)
    );
    for (name, text) in [("ours", &ours.text), ("theirs", &applied.text)] {
        eprintln!("----- {name}");
        for (n, l) in text.split('\n').enumerate().skip(a.saturating_sub(1)).take(b + 1 - a) {
            eprintln!("{:>5} {:?}", n + 1, l);
        }
    }
}
