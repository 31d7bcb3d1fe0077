//! Matching a compiled pattern against a parsed file.
//!
//! Plain data in, data out: a [`Pattern`], a tree and its source text give the
//! list of matches with their captures as byte ranges. No I/O.

use std::ops::Range;

use tree_sitter::{Node, Tree};

use crate::pattern::{MetaVar, PNode, Pattern, significant_children};

/// A metavariable's capture in one match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The metavariable's name, without `$`.
    pub name: String,
    /// Byte range of the captured code in the file; empty for an empty `$$$` run.
    pub range: Range<usize>,
    /// Whether it came from a `$$$` metavariable.
    pub multi: bool,
}

/// One match of a pattern in a file, as byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeMatch {
    /// Byte range of the whole match.
    pub range: Range<usize>,
    /// Captures in order of first binding.
    pub captures: Vec<Capture>,
}

/// A binding made during matching: the captured nodes.
struct Binding<'a> {
    name: &'a str,
    multi: bool,
    nodes: Vec<Node<'a>>,
    /// Where an empty run sits.
    at: usize,
}

struct Matcher<'a> {
    pattern: &'a Pattern,
    source: &'a [u8],
    env: Vec<Binding<'a>>,
}

/// Every match of `pattern` in `tree` (parsed from `source`), in document order.
/// Matches may nest (a call inside a call's argument); runs of sibling
/// statements do not overlap.
pub(crate) fn find_matches<'a>(pattern: &'a Pattern, tree: &'a Tree, source: &'a [u8]) -> Vec<NodeMatch> {
    let mut matcher = Matcher { pattern, source, env: Vec::new() };
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let sequence = pattern.nodes.len() > 1;
    loop {
        let node = cursor.node();
        if sequence {
            matcher.match_runs(node, &mut out);
        } else if !node.is_extra() {
            matcher.env.clear();
            if matcher.root_candidate(&pattern.nodes[0], node) && matcher.node(&pattern.nodes[0], node) {
                out.push(matcher.finish(matched_range(pattern, node)));
            }
        }
        if cursor.goto_first_child() {
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

/// The range a single-node match covers: the node, less a trailing `;` that the
/// pattern left out under automatic semicolon insertion (so a rewrite keeps it).
fn matched_range(pattern: &Pattern, node: Node<'_>) -> Range<usize> {
    let range = node.byte_range();
    if !pattern.lang.optional_semicolons() {
        return range;
    }
    let PNode::Inner { children, .. } = &pattern.nodes[0] else { return range };
    if children.last().is_some_and(PNode::is_semicolon) {
        return range;
    }
    let targets = significant_children(node);
    match targets.split_last() {
        Some((last, rest)) if !last.is_named() && last.kind() == ";" => {
            range.start..rest.last().map_or(range.end, |n| n.end_byte())
        }
        _ => range,
    }
}

impl<'a> Matcher<'a> {
    fn finish(&self, range: Range<usize>) -> NodeMatch {
        let captures = self
            .env
            .iter()
            .map(|b| Capture { name: b.name.to_string(), range: self.binding_range(b), multi: b.multi })
            .collect();
        NodeMatch { range, captures }
    }

    /// The byte range of a binding; a `$$$` run leaves out separators at its ends.
    fn binding_range(&self, b: &Binding<'_>) -> Range<usize> {
        let mut nodes: &[Node<'_>] = &b.nodes;
        if b.multi {
            while let Some((first, rest)) = nodes.split_first() {
                if !first.is_named() && first.kind() == "," { nodes = rest } else { break }
            }
            while let Some((last, rest)) = nodes.split_last() {
                if !last.is_named() && last.kind() == "," { nodes = rest } else { break }
            }
        }
        match (nodes.first(), nodes.last()) {
            (Some(first), Some(last)) => first.start_byte()..last.end_byte(),
            _ => b.at..b.at,
        }
    }

    /// A cheap test before the full match: can this node be where the pattern's root matches?
    fn root_candidate(&self, p: &PNode, node: Node<'_>) -> bool {
        match p {
            PNode::Meta(_) => node.is_named(),
            PNode::Leaf { kinds, ident: true, .. } => kinds.contains(&node.kind_id()) || self.is_ident(node),
            PNode::Leaf { kinds, .. } | PNode::Inner { kinds, .. } => kinds.contains(&node.kind_id()),
        }
    }

    fn is_ident(&self, node: Node<'_>) -> bool {
        self.pattern.ident_kinds.get(node.kind_id() as usize).copied().unwrap_or(false)
    }

    fn text(&self, node: Node<'_>) -> &'a [u8] {
        &self.source[node.byte_range()]
    }

    /// Runs of consecutive siblings among `parent`'s children that match a multi-node pattern.
    fn match_runs(&mut self, parent: Node<'a>, out: &mut Vec<NodeMatch>) {
        let children = significant_children(parent);
        let mut start = 0;
        while start < children.len() {
            self.env.clear();
            if let Some(end) = self.seq(&self.pattern.nodes, 0, &children, start, false) {
                if end > start {
                    let range = children[start].start_byte()..children[end - 1].end_byte();
                    out.push(self.finish(range));
                    start = end;
                    continue;
                }
            }
            start += 1;
        }
    }

    /// Does pattern node `p` match `t`? Bindings are pushed on success and undone on failure.
    fn node(&mut self, p: &'a PNode, t: Node<'a>) -> bool {
        match p {
            PNode::Meta(var) => t.is_named() && self.bind(var, vec![t], t.start_byte()),
            PNode::Leaf { kinds, text, ident, .. } => {
                let kind_ok = kinds.contains(&t.kind_id()) || (*ident && self.is_ident(t));
                if !kind_ok {
                    return false;
                }
                if t.child_count() == 0 {
                    return self.text(t) == text.as_bytes();
                }
                // A leaf in the pattern may be a node with only extras inside in the target.
                significant_children(t).is_empty() && self.text(t) == text.as_bytes()
            }
            PNode::Inner { kinds, children, .. } => {
                if !kinds.contains(&t.kind_id()) {
                    return false;
                }
                let targets = significant_children(t);
                let mark = self.env.len();
                if self.seq(children, 0, &targets, 0, true).is_some() {
                    true
                } else {
                    self.env.truncate(mark);
                    false
                }
            }
        }
    }

    /// Matches `ps[pi..]` against `ts[ti..]`; returns where the match ends in `ts`.
    /// With `anchored`, the whole of `ts` must be consumed.
    fn seq(&mut self, ps: &'a [PNode], pi: usize, ts: &[Node<'a>], ti: usize, anchored: bool) -> Option<usize> {
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
        if let PNode::Meta(var) = p {
            if var.multi {
                // Greedy, with backtracking: try the longest run first.
                let at = ts.get(ti).map_or_else(|| ts.last().map_or(0, |n| n.end_byte()), |n| n.start_byte());
                for len in (0..=ts.len() - ti).rev() {
                    if self.bind(var, ts[ti..ti + len].to_vec(), at) {
                        if let Some(end) = self.seq(ps, pi + 1, ts, ti + len, anchored) {
                            return Some(end);
                        }
                        // An empty run takes the separator after it along: `f($$$A, $B)` matches `f(1)`.
                        if len == 0 && ps.get(pi + 1).is_some_and(PNode::is_separator) {
                            if let Some(end) = self.seq(ps, pi + 2, ts, ti, anchored) {
                                return Some(end);
                            }
                        }
                    }
                    self.env.truncate(mark);
                }
                return None;
            }
        }
        if ti < ts.len() && self.node(p, ts[ti]) {
            if let Some(end) = self.seq(ps, pi + 1, ts, ti + 1, anchored) {
                return Some(end);
            }
            self.env.truncate(mark);
        }
        // A separator before a `$$$` that matches nothing may be absent: `f($A, $$$B)` matches `f(1)`.
        if p.is_separator() {
            if let Some(PNode::Meta(var @ MetaVar { multi: true, .. })) = ps.get(pi + 1) {
                let at = ts.get(ti).map_or(0, |n| n.start_byte());
                if self.bind(var, Vec::new(), at) {
                    if let Some(end) = self.seq(ps, pi + 2, ts, ti, anchored) {
                        return Some(end);
                    }
                }
                self.env.truncate(mark);
            }
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
    fn bind(&mut self, var: &'a MetaVar, nodes: Vec<Node<'a>>, at: usize) -> bool {
        let Some(name) = var.name.as_deref() else { return true };
        if let Some(previous) = self.env.iter().find(|b| b.name == name) {
            return same_tokens(self.source, &previous.nodes, &nodes);
        }
        self.env.push(Binding { name, multi: var.multi, nodes, at });
        true
    }
}

/// Equal token sequences: the leaves of both node lists, comments left out, have equal text.
fn same_tokens(source: &[u8], a: &[Node<'_>], b: &[Node<'_>]) -> bool {
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

fn leaves(node: Node<'_>, out: &mut Vec<Range<usize>>) {
    if node.is_extra() {
        return;
    }
    if node.child_count() == 0 {
        if node.start_byte() < node.end_byte() {
            out.push(node.byte_range());
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        leaves(child, out);
    }
}
