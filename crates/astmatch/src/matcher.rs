//! Matching a compiled pattern against a parsed file.
//!
//! Plain data in, data out: a [`Pattern`], a tree and its source text give the
//! list of matches with their captures as byte ranges. No I/O.

use std::collections::HashSet;
use std::ops::Range;

use tree_sitter::Tree;

use crate::lang::Context;
use crate::pattern::{Alternative, MetaVar, PNode, Pattern, counts, significant_children};
use crate::syntax::{SyntaxCursor, SyntaxNode};

/// A node's children, kept on the stack when there are few (most nodes).
type Nodes<N> = smallvec::SmallVec<[N; 8]>;

/// The words of an alternative are all in `text`.
fn has_words(alt: &Alternative, text: &[u8]) -> bool {
    alt.words.iter().all(|f| f.find(text).is_some())
}

/// A metavariable's capture in one match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The metavariable's name, without `$`.
    pub name: String,
    /// Byte range of the captured code in the file; empty for an empty `$$$` run.
    /// A `$$$` capture takes in the comments at its edges (and own-line comments
    /// right before its list), so a rewrite keeps them.
    pub range: Range<usize>,
    /// Whether it came from a `$$$` metavariable.
    pub multi: bool,
    /// The captured nodes' byte ranges: one for a single capture; for a `$$$` capture
    /// each node of the run, list separators (`,`) left out.
    pub nodes: Vec<Range<usize>>,
    /// The capture ends with a line comment (`// …`, `# …`), so code may not follow it on its line.
    pub(crate) ends_in_line_comment: bool,
    /// The capture ends with its list's trailing `,` (taken in to keep a comment after it).
    pub(crate) trailing_separator: bool,
    /// Where the captured code's first node starts: its line's indentation is the one the
    /// capture's lines are re-based from (a comment taken in before it may sit elsewhere).
    pub(crate) origin: usize,
}

/// One match of a pattern in a file, as byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeMatch {
    /// Byte range of the whole match.
    pub range: Range<usize>,
    /// Captures in order of first binding.
    pub captures: Vec<Capture>,
    /// The scaffold context of the pattern shape that matched.
    pub context: Context,
}

/// What a rewrite must know of a file's text beyond the matches.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileLayout {
    /// Byte offsets of the line starts that lie inside a string literal, a raw or
    /// template string, a heredoc or a comment: re-indenting never changes those lines,
    /// and they do not count when the file's indentation step is measured.
    pub(crate) verbatim: Vec<usize>,
    /// Byte ranges of the comments.
    pub(crate) comments: Vec<Range<usize>>,
    /// The file's parse tree, from which the rewritten text is parsed again incrementally.
    pub(crate) tree: Option<Tree>,
}

/// The literal lines and comments of a parsed file, from its root node; `tree` is
/// tree-sitter's tree of it, when there is one, for the incremental re-parse.
pub(crate) fn file_layout<'t, N: SyntaxNode<'t>>(root: N, source: &[u8], tree: Option<&Tree>) -> FileLayout {
    let mut layout = FileLayout::default();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let literal = is_literal_kind(node.kind());
        if literal {
            if node.kind().contains("comment") {
                layout.comments.push(node.byte_range());
            }
            let range = node.byte_range();
            for nl in memchr::memchr_iter(b'\n', &source[range.clone()]) {
                let offset = range.start + nl + 1;
                if offset < range.end {
                    layout.verbatim.push(offset);
                }
            }
        }
        if !literal && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                layout.verbatim.sort_unstable();
                layout.verbatim.dedup();
                layout.tree = tree.cloned();
                return layout;
            }
        }
    }
}

/// A binding made during matching: the captured nodes.
struct Binding<'a, N> {
    name: &'a str,
    multi: bool,
    nodes: Nodes<N>,
    /// Where an empty run sits.
    at: usize,
    /// For an empty run, the significant sibling after it, if any: comments between it
    /// and the one before are the run's.
    next: Option<N>,
}

struct Matcher<'a, N: SyntaxNode<'a>> {
    pattern: &'a Pattern,
    source: &'a [u8],
    env: Vec<Binding<'a, N>>,
    /// One cursor reused to list children (making one of tree-sitter's allocates).
    cursor: N::Cursor,
}

/// Every match of `pattern` in `tree` (parsed from `source`), in document order,
/// each node range once. Matches may nest (a call inside a call's argument); runs
/// of sibling statements do not overlap.
pub(crate) fn find_matches<'a, N: SyntaxNode<'a>>(pattern: &'a Pattern, root: N, source: &'a [u8]) -> Vec<NodeMatch> {
    let mut matcher = Matcher { pattern, source, env: Vec::new(), cursor: root.walk() };
    // Kind ids where some shape's root can match: every other node is passed over at once.
    let mut root_kinds = vec![false; pattern.ident_kinds.len()];
    let mut any_ident = false;
    for alt in &pattern.alternatives {
        match &alt.nodes[0] {
            PNode::Leaf { kinds, ident, .. } => {
                any_ident |= *ident;
                kinds.iter().for_each(|&k| root_kinds[k as usize] = true);
            }
            PNode::Inner { error: true, .. } | PNode::Meta(_) => root_kinds.iter_mut().for_each(|k| *k = true),
            PNode::Inner { kinds, .. } | PNode::Run { kinds, .. } | PNode::Decorators { kinds, .. } => {
                kinds.iter().for_each(|&k| root_kinds[k as usize] = true)
            }
        }
    }
    if any_ident {
        for (k, ident) in pattern.ident_kinds.iter().enumerate() {
            root_kinds[k] |= *ident;
        }
    }
    let mut out: Vec<NodeMatch> = Vec::new();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let sequences: Vec<&Alternative> = pattern.alternatives.iter().filter(|a| a.nodes.len() > 1).collect();
    let singles: Vec<&Alternative> = pattern.alternatives.iter().filter(|a| a.nodes.len() == 1).collect();
    // Where the pattern's longest word occurs: a subtree holding none of them holds no
    // match, and is not walked.
    let anchor = pattern.words.first().map(|w| {
        let at: Vec<usize> = memchr::memmem::find_iter(source, w.as_bytes()).collect();
        (at, w.len())
    });
    let may_hold = |node: N| match &anchor {
        None => true,
        Some((at, len)) => {
            let i = at.partition_point(|&o| o < node.start_byte());
            at.get(i).is_some_and(|&o| o + len <= node.end_byte())
        }
    };
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        // Nothing to find in or below a node without the word: on to the next sibling, or up.
        let holds = may_hold(node);
        for alt in sequences.iter().filter(|_| holds) {
            matcher.match_runs(alt, node, &mut out, &mut seen);
        }
        // An ERROR node's kind id is past the grammar's table: every shape may start there.
        let kind_ok = node.is_error() || root_kinds.get(node.kind_id() as usize).copied().unwrap_or(false);
        if holds && counts(node) && kind_ok {
            for alt in &singles {
                matcher.env.clear();
                let root = &alt.nodes[0];
                if matcher.root_candidate(root, node)
                    && has_words(alt, &source[node.byte_range()])
                    && matcher.node(root, node)
                {
                    let range = matched_range(pattern, root, node);
                    if seen.insert((range.start, range.end)) {
                        out.push(matcher.finish(range, alt.context));
                    }
                    break;
                }
            }
        }
        if holds && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                out.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
                return out;
            }
        }
    }
}

/// How often the pattern's longest word occurs inside the bodies of Rust macro
/// invocations (`assert!(…)`, `vec![…]`): a body is a token tree, which no pattern but
/// a single identifier matches into, so these places are not searched. Zero for other
/// languages, for a one-identifier pattern, and for a pattern without a word.
pub(crate) fn macro_occurrences<'t, N: SyntaxNode<'t>>(pattern: &Pattern, root: N, source: &[u8]) -> usize {
    let single_identifier =
        pattern.alternatives.iter().any(|a| matches!(a.nodes.as_slice(), [PNode::Leaf { ident: true, .. }]));
    let Some(word) = pattern.words.first().filter(|_| pattern.lang == crate::Lang::Rust && !single_identifier) else {
        return 0;
    };
    // Where the word occurs, found once: a node holds an occurrence when one starts and
    // ends inside it, told by a binary search, so the walk reads no text again.
    let at: Vec<usize> = memchr::memmem::find_iter(source, word.as_bytes()).collect();
    let within = |node: N| {
        let first = at.partition_point(|&o| o < node.start_byte());
        let end = at.partition_point(|&o| o + word.len() <= node.end_byte());
        end.saturating_sub(first)
    };
    let mut count = 0;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let held = within(node);
        if held == 0 {
            continue;
        }
        if node.kind() == "token_tree" && node.parent().is_some_and(|p| p.kind() == "macro_invocation") {
            count += held;
            continue;
        }
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                stack.push(cursor.node());
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }
    count
}

/// The range a single-node match covers: the node, less a trailing `;` that the
/// pattern left out under automatic semicolon insertion (so a rewrite keeps it).
fn matched_range<'t, N: SyntaxNode<'t>>(pattern: &Pattern, root: &PNode, node: N) -> Range<usize> {
    let range = node.byte_range();
    if !pattern.lang.optional_semicolons() {
        return range;
    }
    let PNode::Inner { children, .. } = root else { return range };
    if children.last().is_some_and(PNode::is_semicolon) {
        return range;
    }
    let targets = significant_children(node);
    // Only a `;` the pattern had no child for (a `$$X` may have matched it).
    if targets.len() <= children.len() {
        return range;
    }
    match targets.split_last() {
        Some((last, rest)) if !last.is_named() && last.kind() == ";" => {
            range.start..rest.last().map_or(range.end, |n| n.end_byte())
        }
        _ => range,
    }
}

/// An anonymous token that only separates list elements: `,` or a newline token.
fn is_separator_token<'t, N: SyntaxNode<'t>>(node: N, source: &[u8]) -> bool {
    !node.is_named() && (node.kind() == "," || source[node.byte_range()].iter().all(u8::is_ascii_whitespace))
}

/// An anonymous token of only whitespace (a newline that ends a statement).
fn is_whitespace_token<'t, N: SyntaxNode<'t>>(node: N, source: &[u8]) -> bool {
    !node.is_named() && source[node.byte_range()].iter().all(u8::is_ascii_whitespace)
}

/// A line comment: it runs to the end of its line, so nothing may follow it there.
fn is_line_comment<'t, N: SyntaxNode<'t>>(node: N, source: &[u8]) -> bool {
    let text = &source[node.byte_range()];
    node.kind().contains("comment") && (text.starts_with(b"//") || text.starts_with(b"#")) && !text.ends_with(b"*/")
}

/// Node kinds whose text is taken literally: strings of every sort, heredocs, comments.
fn is_literal_kind(kind: &str) -> bool {
    (kind.contains("string") && kind != "concatenated_string") || kind.contains("heredoc") || kind.contains("comment")
}

impl<'a, N: SyntaxNode<'a>> Matcher<'a, N> {
    fn finish(&self, range: Range<usize>, context: Context) -> NodeMatch {
        let captures: Vec<Capture> = self.env.iter().map(|b| self.capture(b, &range)).collect();
        NodeMatch { range, captures, context }
    }

    /// A binding as a capture. A `$$$` run leaves out separators at its ends and takes
    /// in the comments at its edges, clamped to the match.
    fn capture(&self, b: &Binding<'a, N>, within: &Range<usize>) -> Capture {
        let mut nodes: &[N] = &b.nodes;
        if b.multi {
            while let Some((first, rest)) = nodes.split_first() {
                if is_separator_token(*first, self.source) { nodes = rest } else { break }
            }
            while let Some((last, rest)) = nodes.split_last() {
                if is_separator_token(*last, self.source) { nodes = rest } else { break }
            }
        }
        let name = b.name.to_string();
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else {
            // An empty run keeps the comments where it sits (a body that is only a comment).
            let mut range = b.at..b.at;
            let mut ends_in_line_comment = false;
            if b.multi
                && let Some(next) = b.next
            {
                let mut p = next.prev_sibling();
                while let Some(extra) = p.filter(|p| p.is_extra()) {
                    if range.is_empty() {
                        range.end = extra.end_byte();
                        ends_in_line_comment = is_line_comment(extra, self.source);
                    }
                    range.start = extra.start_byte();
                    p = extra.prev_sibling();
                }
            }
            if range.start < within.start || range.end > within.end {
                range = b.at..b.at;
                ends_in_line_comment = false;
            }
            let origin = range.start;
            return Capture {
                name,
                range,
                multi: b.multi,
                nodes: Vec::new(),
                ends_in_line_comment,
                trailing_separator: false,
                origin,
            };
        };
        let (mut start, mut end) = (first.start_byte(), last.end_byte());
        let mut ends_in_line_comment = false;
        let mut trailing_separator = false;
        if b.multi {
            // Comments right before the first node, in its list, and before the list
            // itself while the run begins it (a Python comment above a block's first
            // statement, or after its `:`, sits beside the block).
            let mut list = Some(*first);
            while let Some(node) = list.filter(|l| l.start_byte() >= start) {
                let mut p = node.prev_sibling();
                while let Some(extra) = p.filter(|p| p.is_extra()) {
                    start = extra.start_byte();
                    p = extra.prev_sibling();
                }
                if p.is_some() {
                    break;
                }
                list = node.parent();
            }
            // Comments after the last node, in its list and after the list while the run
            // ends it (a Go comment after a block's last statement sits beside the list).
            let mut list = Some(*last);
            while let Some(node) = list {
                let mut x = node.next_sibling();
                while let Some(next) = x {
                    if next.is_extra() {
                        end = next.end_byte();
                        ends_in_line_comment = is_line_comment(next, self.source);
                    } else if !is_whitespace_token(next, self.source) {
                        break;
                    }
                    x = next.next_sibling();
                }
                if let Some(next) = x {
                    // A trailing `,` with comments after it, before the closing bracket: the
                    // comments are the last element's, so the run takes the comma along.
                    if !next.is_named() && next.kind() == "," {
                        let mut y = next.next_sibling();
                        let mut comment_end = None;
                        while let Some(extra) = y.filter(|y| y.is_extra()) {
                            comment_end = Some((extra.end_byte(), is_line_comment(extra, self.source)));
                            y = extra.next_sibling();
                        }
                        if let Some((e, line)) = comment_end
                            && y.is_none_or(|y| !y.is_named())
                        {
                            end = e;
                            ends_in_line_comment = line;
                            trailing_separator = true;
                        }
                    }
                    break;
                }
                list = node.parent();
            }
        }
        let start = start.max(within.start).min(first.start_byte());
        let end = end.min(within.end).max(last.end_byte());
        if end == last.end_byte() {
            ends_in_line_comment = false;
            trailing_separator = false;
        }
        let listed = nodes
            .iter()
            .filter(|n| !b.multi || !is_separator_token(**n, self.source))
            .map(|n| n.byte_range())
            .collect();
        Capture {
            name,
            range: start..end,
            multi: b.multi,
            nodes: listed,
            ends_in_line_comment,
            trailing_separator,
            origin: first.start_byte(),
        }
    }

    /// The children of `node` that count for matching (extras left out), listed with the reused cursor.
    fn children(&mut self, node: N) -> Nodes<N> {
        let mut out = Nodes::new();
        self.cursor.reset(node);
        if self.cursor.goto_first_child() {
            loop {
                let child = self.cursor.node();
                if counts(child) {
                    out.push(child);
                }
                if !self.cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        out
    }

    /// A cheap test before the full match: can this node be where the pattern's root matches?
    fn root_candidate(&self, p: &PNode, node: N) -> bool {
        match p {
            PNode::Meta(var) => var.any || node.is_named(),
            PNode::Inner { error: true, .. } => true,
            PNode::Leaf { kinds, ident: true, .. } => kinds.contains(&node.kind_id()) || self.is_ident(node),
            PNode::Leaf { kinds, .. }
            | PNode::Inner { kinds, .. }
            | PNode::Run { kinds, .. }
            | PNode::Decorators { kinds, .. } => kinds.contains(&node.kind_id()),
        }
    }

    fn is_ident(&self, node: N) -> bool {
        self.pattern.ident_kinds.get(node.kind_id() as usize).copied().unwrap_or(false)
    }

    fn text(&self, node: N) -> &'a [u8] {
        &self.source[node.byte_range()]
    }

    /// Runs of consecutive siblings among `parent`'s children that match a multi-node pattern.
    fn match_runs(
        &mut self,
        alt: &'a Alternative,
        parent: N,
        out: &mut Vec<NodeMatch>,
        seen: &mut HashSet<(usize, usize)>,
    ) {
        let children = self.children(parent);
        let mut start = 0;
        while start < children.len() {
            self.env.clear();
            if let Some(end) = self.seq(&alt.nodes, 0, &children, start, false)
                && end > start
            {
                let range = children[start].start_byte()..children[end - 1].end_byte();
                if seen.insert((range.start, range.end)) {
                    out.push(self.finish(range, alt.context));
                }
                start = end;
                continue;
            }
            start += 1;
        }
    }

    /// Does pattern node `p` match `t`? Bindings are pushed on success and undone on failure.
    fn node(&mut self, p: &'a PNode, t: N) -> bool {
        match p {
            PNode::Meta(var) => (var.any || t.is_named()) && self.bind(var, &[t], t.start_byte()),
            PNode::Leaf { kinds, text, ident, .. } => {
                let kind_ok = kinds.contains(&t.kind_id()) || (*ident && self.is_ident(t));
                if !kind_ok {
                    return false;
                }
                if !t.has_children() {
                    return self.text(t) == text.as_bytes();
                }
                // A leaf in the pattern may be a node with only extras inside in the target.
                self.children(t).is_empty() && self.text(t) == text.as_bytes()
            }
            PNode::Inner { kinds, children, open, error } => {
                if !*error && !kinds.contains(&t.kind_id()) {
                    return false;
                }
                let targets = self.children(t);
                let mark = self.env.len();
                if self.seq(children, 0, &targets, 0, !*open).is_some() {
                    true
                } else {
                    self.env.truncate(mark);
                    false
                }
            }
            PNode::Run { kinds, var } => {
                if !kinds.contains(&t.kind_id()) {
                    return false;
                }
                let children = self.children(t);
                self.bind(var, &children, t.start_byte())
            }
            PNode::Decorators { kinds, var } => {
                if !kinds.contains(&t.kind_id()) {
                    return false;
                }
                let content = self.decorated(&[t]);
                self.bind(var, &content, t.start_byte())
            }
        }
    }

    /// What follows the `@` of each decorator, in order: the nodes a `@$$$` run binds.
    fn decorated(&mut self, decorators: &[N]) -> Nodes<N> {
        let mut out = Nodes::new();
        for &decorator in decorators {
            let children = self.children(decorator);
            out.extend(children.into_iter().skip(1).filter(|c| c.is_named() || !is_whitespace_token(*c, self.source)));
        }
        out
    }

    /// Matches `ps[pi..]` against `ts[ti..]`; returns where the match ends in `ts`.
    /// With `anchored`, the whole of `ts` must be consumed.
    fn seq(&mut self, ps: &'a [PNode], pi: usize, ts: &[N], ti: usize, anchored: bool) -> Option<usize> {
        let Some(p) = ps.get(pi) else {
            if !anchored || ti == ts.len() {
                return Some(ti);
            }
            // Automatic semicolon insertion: a `;` the pattern left out may end the code.
            let rest_is_semicolons =
                self.pattern.lang.optional_semicolons() && ts[ti..].iter().all(|n| !n.is_named() && n.kind() == ";");
            return rest_is_semicolons.then_some(ts.len());
        };
        let mark = self.env.len();
        if let PNode::Meta(var) = p
            && var.multi
        {
            let at = ts.get(ti).map_or_else(|| ts.last().map_or(0, |n| n.end_byte()), |n| n.start_byte());
            // A `$$$` that ends a run of statements takes the rest of the list.
            if !anchored && pi + 1 == ps.len() {
                return self.bind(var, &ts[ti..], at).then_some(ts.len());
            }
            // The earliest end that lets the rest of the pattern match wins.
            for len in 0..=ts.len() - ti {
                let next = if len == 0 { ts.get(ti).copied() } else { None };
                if self.bind_next(var, &ts[ti..ti + len], at, next) {
                    if let Some(end) = self.seq(ps, pi + 1, ts, ti + len, anchored) {
                        return Some(end);
                    }
                    // An empty run takes the separator after it along: `f($$$A, $B)` matches `f(1)`.
                    if len == 0
                        && ps.get(pi + 1).is_some_and(PNode::is_separator)
                        && let Some(end) = self.seq(ps, pi + 2, ts, ti, anchored)
                    {
                        return Some(end);
                    }
                }
                self.env.truncate(mark);
            }
            return None;
        }
        // `@$$$DECOS`: one decorator or more; the fewest that let the rest match win.
        if let PNode::Decorators { kinds, var } = p {
            let run = ts[ti..].iter().take_while(|t| kinds.contains(&t.kind_id())).count();
            for len in 1..=run {
                let content = self.decorated(&ts[ti..ti + len]);
                if self.bind(var, &content, ts[ti].start_byte())
                    && let Some(end) = self.seq(ps, pi + 1, ts, ti + len, anchored)
                {
                    return Some(end);
                }
                self.env.truncate(mark);
            }
            return None;
        }
        if ti < ts.len() && self.node(p, ts[ti]) {
            if let Some(end) = self.seq(ps, pi + 1, ts, ti + 1, anchored) {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // Code the parser passed over to recover (an ERROR that is an extra, such as
        // `try!` in Rust 2018's `let x = try!(f());`) may be passed over here too, as
        // ast-grep does: `let $P = $E;` matches that statement with `$E` = `(f())`.
        if !matches!(p, PNode::Inner { error: true, .. }) && ts.get(ti).is_some_and(|t| t.is_error() && t.is_extra()) {
            if let Some(end) = self.seq(ps, pi, ts, ti + 1, anchored) {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // A list node holding only a `$$$` may be absent in the code: an empty run.
        if let PNode::Run { var, .. } = p {
            let at = ts.get(ti).map_or_else(|| ts.last().map_or(0, |n| n.end_byte()), |n| n.start_byte());
            if self.bind_next(var, &[], at, ts.get(ti).copied())
                && let Some(end) = self.seq(ps, pi + 1, ts, ti, anchored)
            {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // A separator before a `$$$` that matches nothing may be absent: `f($A, $$$B)` matches `f(1)`.
        if p.is_separator()
            && let Some(PNode::Meta(var @ MetaVar { multi: true, .. })) = ps.get(pi + 1)
        {
            let at = ts.get(ti).map_or(0, |n| n.start_byte());
            if self.bind(var, &[], at)
                && let Some(end) = self.seq(ps, pi + 2, ts, ti, anchored)
            {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // A trailing comma in the code before a closing bracket need not be in the pattern:
        // `Some($X)` matches `Some(\n    x,\n)`.
        if p.is_closing() && ts.get(ti).is_some_and(|t| !t.is_named() && t.kind() == ",") {
            if let Some(end) = self.seq(ps, pi, ts, ti + 1, anchored) {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // Automatic semicolon insertion: a `;` in the pattern may be absent in the code.
        if p.is_semicolon() && self.pattern.lang.optional_semicolons() {
            if let Some(end) = self.seq(ps, pi + 1, ts, ti, anchored) {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        None
    }

    /// Binds a metavariable, or checks a repeated one captures the same code.
    fn bind(&mut self, var: &'a MetaVar, nodes: &[N], at: usize) -> bool {
        self.bind_next(var, nodes, at, None)
    }

    /// [`Matcher::bind`], with the sibling that follows an empty run.
    fn bind_next(&mut self, var: &'a MetaVar, nodes: &[N], at: usize, next: Option<N>) -> bool {
        let Some(name) = var.name.as_deref() else { return true };
        if let Some(previous) = self.env.iter().find(|b| b.name == name) {
            return same_tokens(self.source, &previous.nodes, nodes);
        }
        self.env.push(Binding { name, multi: var.multi, nodes: nodes.iter().copied().collect(), at, next });
        true
    }
}

/// Equal token sequences: the leaves of both node lists, comments left out, have equal text.
fn same_tokens<'t, N: SyntaxNode<'t>>(source: &[u8], a: &[N], b: &[N]) -> bool {
    let mut ta = Vec::new();
    let mut tb = Vec::new();
    for n in a {
        leaves(*n, &mut ta);
    }
    for n in b {
        leaves(*n, &mut tb);
    }
    ta.len() == tb.len() && ta.iter().zip(&tb).all(|(x, y)| source[x.clone()] == source[y.clone()])
}

fn leaves<'t, N: SyntaxNode<'t>>(node: N, out: &mut Vec<Range<usize>>) {
    if !counts(node) {
        return;
    }
    if !node.has_children() {
        if node.start_byte() < node.end_byte() {
            out.push(node.byte_range());
        }
        return;
    }
    let mut cursor = node.walk();
    cursor.goto_first_child();
    loop {
        leaves(cursor.node(), out);
        if !cursor.goto_next_sibling() {
            break;
        }
    }
}
