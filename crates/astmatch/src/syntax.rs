//! The syntax trees the matcher walks: tree-sitter's own, or the flat copy the
//! parse cache keeps.
//!
//! A tree-sitter tree costs about 30 bytes of memory per byte of source (a node of
//! tens of bytes for every few bytes of code, and its children's pointers). The parse
//! cache keeps a [`FlatTree`] instead: each node's kind id, flags, byte range, parent
//! and the end of its subtree, in pre-order arrays of 19 bytes a node, about 4.5 bytes
//! per byte of Python or Rust source. Matching reads both through [`SyntaxNode`], so
//! one matcher serves a fresh parse and a cached file, and gives the same matches.

use std::ops::Range;

use tree_sitter::{Language, Node, Tree, TreeCursor};

/// What the matcher reads of a node; implemented by tree-sitter's [`Node`] and by [`FlatNode`].
pub(crate) trait SyntaxNode<'t>: Copy + Sized {
    /// A cursor over the tree this node is in.
    type Cursor: SyntaxCursor<'t, Node = Self>;

    /// A cursor at this node.
    fn walk(self) -> Self::Cursor;
    /// The kind's numeric id in the grammar (an alias's id for an aliased node; `u16::MAX` for `ERROR`).
    fn kind_id(self) -> u16;
    /// The kind's name in the grammar.
    fn kind(self) -> &'t str;
    /// A named node (not an anonymous token such as `,`).
    fn is_named(self) -> bool;
    /// An extra: a comment, or another node the grammar allows anywhere.
    fn is_extra(self) -> bool;
    /// An `ERROR` node.
    fn is_error(self) -> bool;
    /// A node the parser inserted to recover from an error (zero width).
    fn is_missing(self) -> bool;
    /// The node or one below it is `ERROR` or missing.
    fn has_error(self) -> bool;
    /// Byte offset where the node starts.
    fn start_byte(self) -> usize;
    /// Byte offset where the node ends (exclusive).
    fn end_byte(self) -> usize;
    /// Whether the node has children (extras count).
    fn has_children(self) -> bool;
    /// The node's parent.
    fn parent(self) -> Option<Self>;
    /// The sibling after this node (extras count). tree-sitter's may pass over a
    /// zero-width sibling (a missing node); the flat tree's does not.
    fn next_sibling(self) -> Option<Self>;
    /// The sibling before this node (extras count).
    fn prev_sibling(self) -> Option<Self>;

    /// The node's byte range.
    fn byte_range(self) -> Range<usize> {
        self.start_byte()..self.end_byte()
    }
}

/// A cursor that moves through a tree, as tree-sitter's [`TreeCursor`] does.
pub(crate) trait SyntaxCursor<'t> {
    /// The tree's node type.
    type Node: SyntaxNode<'t>;

    /// The node the cursor is at.
    fn node(&self) -> Self::Node;
    /// Moves to the first child; `false` (and stays) when there is none.
    fn goto_first_child(&mut self) -> bool;
    /// Moves to the next sibling; `false` (and stays) when there is none.
    fn goto_next_sibling(&mut self) -> bool;
    /// Moves to the parent; `false` (and stays) at the node the cursor started at.
    fn goto_parent(&mut self) -> bool;
    /// Starts again at `node`.
    fn reset(&mut self, node: Self::Node);
}

impl<'t> SyntaxNode<'t> for Node<'t> {
    type Cursor = TreeCursor<'t>;

    fn walk(self) -> TreeCursor<'t> {
        Node::walk(&self)
    }
    fn kind_id(self) -> u16 {
        Node::kind_id(&self)
    }
    fn kind(self) -> &'t str {
        Node::kind(&self)
    }
    fn is_named(self) -> bool {
        Node::is_named(&self)
    }
    fn is_extra(self) -> bool {
        Node::is_extra(&self)
    }
    fn is_error(self) -> bool {
        Node::is_error(&self)
    }
    fn is_missing(self) -> bool {
        Node::is_missing(&self)
    }
    fn has_error(self) -> bool {
        Node::has_error(&self)
    }
    fn start_byte(self) -> usize {
        Node::start_byte(&self)
    }
    fn end_byte(self) -> usize {
        Node::end_byte(&self)
    }
    fn has_children(self) -> bool {
        self.child_count() > 0
    }
    fn parent(self) -> Option<Self> {
        Node::parent(&self)
    }
    fn next_sibling(self) -> Option<Self> {
        Node::next_sibling(&self)
    }
    fn prev_sibling(self) -> Option<Self> {
        Node::prev_sibling(&self)
    }
}

impl<'t> SyntaxCursor<'t> for TreeCursor<'t> {
    type Node = Node<'t>;

    fn node(&self) -> Node<'t> {
        TreeCursor::node(self)
    }
    fn goto_first_child(&mut self) -> bool {
        TreeCursor::goto_first_child(self)
    }
    fn goto_next_sibling(&mut self) -> bool {
        TreeCursor::goto_next_sibling(self)
    }
    fn goto_parent(&mut self) -> bool {
        TreeCursor::goto_parent(self)
    }
    fn reset(&mut self, node: Node<'t>) {
        TreeCursor::reset(self, node)
    }
}

const NAMED: u8 = 1;
const EXTRA: u8 = 2;
const ERROR: u8 = 4;
const MISSING: u8 = 8;
const HAS_ERROR: u8 = 16;
/// No parent: the root.
const NONE: u32 = u32::MAX;
/// Bytes a node takes in the arrays: kind, flags, start, end, next, parent.
const NODE_BYTES: usize = 2 + 1 + 4 + 4 + 4 + 4;

/// A parse tree copied into flat arrays, one entry a node in pre-order (a node's
/// first child, if any, is the entry after it). What the parse cache keeps.
pub(crate) struct FlatTree {
    language: Language,
    kinds: Vec<u16>,
    flags: Vec<u8>,
    starts: Vec<u32>,
    ends: Vec<u32>,
    /// The entry after the node's subtree.
    next: Vec<u32>,
    parents: Vec<u32>,
}

impl FlatTree {
    /// The copy of `tree`; `None` when the source is too large for 32-bit offsets (4 GiB and more).
    pub(crate) fn new(tree: &Tree) -> Option<FlatTree> {
        let root = tree.root_node();
        if u32::try_from(root.end_byte()).is_err() {
            return None;
        }
        let language = tree.language().to_owned();
        // Named is a property of the kind: look it up once per kind, not per node.
        let named: Vec<bool> =
            (0..language.node_kind_count()).map(|id| language.node_kind_is_named(id as u16)).collect();
        let mut flat = FlatTree {
            language,
            kinds: Vec::new(),
            flags: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
            next: Vec::new(),
            parents: Vec::new(),
        };
        // Open nodes from the root down to the cursor's node.
        let mut open: Vec<u32> = Vec::new();
        let mut cursor = tree.walk();
        loop {
            let node = cursor.node();
            let id = flat.kinds.len() as u32;
            let kind = node.kind_id();
            let mut flags = 0;
            if node.is_error() {
                flags |= ERROR | NAMED;
            } else if named.get(kind as usize).copied().unwrap_or(false) {
                flags |= NAMED;
            }
            if node.is_extra() {
                flags |= EXTRA;
            }
            if node.is_missing() {
                flags |= MISSING;
            }
            if node.has_error() {
                flags |= HAS_ERROR;
            }
            flat.kinds.push(kind);
            flat.flags.push(flags);
            // In range: no node ends past the root.
            flat.starts.push(node.start_byte() as u32);
            flat.ends.push(node.end_byte() as u32);
            flat.next.push(NONE);
            flat.parents.push(open.last().copied().unwrap_or(NONE));
            open.push(id);
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if let Some(done) = open.pop() {
                    flat.next[done as usize] = flat.kinds.len() as u32;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    while let Some(done) = open.pop() {
                        flat.next[done as usize] = flat.kinds.len() as u32;
                    }
                    flat.shrink();
                    return Some(flat);
                }
            }
        }
    }

    fn shrink(&mut self) {
        self.kinds.shrink_to_fit();
        self.flags.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.next.shrink_to_fit();
        self.parents.shrink_to_fit();
    }

    /// The root node.
    pub(crate) fn root(&self) -> FlatNode<'_> {
        FlatNode { tree: self, id: 0 }
    }

    /// Bytes of memory the arrays take.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.kinds.len() * NODE_BYTES
    }

    /// The arrays as bytes, for the tree store: the node count (`u32`), then each
    /// array in turn, little-endian. [`FlatTree::from_bytes`] reads them back.
    pub(crate) fn to_bytes(&self, out: &mut Vec<u8>) {
        out.reserve(4 + self.heap_bytes());
        out.extend_from_slice(&(self.kinds.len() as u32).to_le_bytes());
        out.extend(self.kinds.iter().flat_map(|k| k.to_le_bytes()));
        out.extend_from_slice(&self.flags);
        for array in [&self.starts, &self.ends, &self.next, &self.parents] {
            out.extend(array.iter().flat_map(|v| v.to_le_bytes()));
        }
    }

    /// A tree written by [`FlatTree::to_bytes`] for `source` in `language`; `None`
    /// unless the bytes are exactly one tree and it is well formed: every node's
    /// parent is the innermost node open before it, every subtree ends inside its
    /// parent's, every kind is the grammar's, and every range is inside `source`
    /// and on its character boundaries. Such a tree cannot make the matcher panic or
    /// loop, whatever the bytes were.
    pub(crate) fn from_bytes(language: &Language, bytes: &[u8], source: &str) -> Option<FlatTree> {
        let (count, rest) = bytes.split_first_chunk::<4>()?;
        let n = u32::from_le_bytes(*count) as usize;
        if n == 0 || n >= NONE as usize || rest.len() != n.checked_mul(NODE_BYTES)? {
            return None;
        }
        let (kinds, rest) = rest.split_at(2 * n);
        let (flags, rest) = rest.split_at(n);
        let words = |bytes: &[u8]| -> Vec<u32> {
            bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        let (starts, rest) = rest.split_at(4 * n);
        let (ends, rest) = rest.split_at(4 * n);
        let (next, parents) = rest.split_at(4 * n);
        let flat = FlatTree {
            language: language.clone(),
            kinds: kinds.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect(),
            flags: flags.to_vec(),
            starts: words(starts),
            ends: words(ends),
            next: words(next),
            parents: words(parents),
        };
        flat.is_well_formed(source).then_some(flat)
    }

    fn is_well_formed(&self, source: &str) -> bool {
        let n = self.kinds.len() as u32;
        let kinds = self.language.node_kind_count();
        let mut open: Vec<u32> = Vec::new();
        for id in 0..n {
            let i = id as usize;
            while open.last().is_some_and(|&o| self.next[o as usize] <= id) {
                open.pop();
            }
            let parent = open.last().copied().unwrap_or(NONE);
            let (start, end, next) = (self.starts[i] as usize, self.ends[i] as usize, self.next[i]);
            let ok = self.parents[i] == parent
                && (id == 0) == (parent == NONE)
                && next > id
                && next <= open.last().map_or(n, |&o| self.next[o as usize])
                && (id != 0 || next == n)
                && (self.flags[i] & ERROR != 0 || (self.kinds[i] as usize) < kinds)
                && start <= end
                && source.is_char_boundary(start)
                && source.is_char_boundary(end);
            if !ok {
                return false;
            }
            open.push(id);
        }
        true
    }
}

/// A node of a [`FlatTree`].
#[derive(Clone, Copy)]
pub(crate) struct FlatNode<'t> {
    tree: &'t FlatTree,
    id: u32,
}

impl FlatNode<'_> {
    fn at(self, id: u32) -> Self {
        FlatNode { tree: self.tree, id }
    }

    fn flag(self, flag: u8) -> bool {
        self.tree.flags[self.id as usize] & flag != 0
    }

    fn subtree_end(self) -> u32 {
        self.tree.next[self.id as usize]
    }
}

impl<'t> SyntaxNode<'t> for FlatNode<'t> {
    type Cursor = FlatCursor<'t>;

    fn walk(self) -> FlatCursor<'t> {
        FlatCursor { node: self, top: self.id }
    }
    fn kind_id(self) -> u16 {
        self.tree.kinds[self.id as usize]
    }
    fn kind(self) -> &'t str {
        if self.is_error() {
            return "ERROR";
        }
        self.tree.language.node_kind_for_id(self.kind_id()).unwrap_or("")
    }
    fn is_named(self) -> bool {
        self.flag(NAMED)
    }
    fn is_extra(self) -> bool {
        self.flag(EXTRA)
    }
    fn is_error(self) -> bool {
        self.flag(ERROR)
    }
    fn is_missing(self) -> bool {
        self.flag(MISSING)
    }
    fn has_error(self) -> bool {
        self.flag(HAS_ERROR)
    }
    fn start_byte(self) -> usize {
        self.tree.starts[self.id as usize] as usize
    }
    fn end_byte(self) -> usize {
        self.tree.ends[self.id as usize] as usize
    }
    fn has_children(self) -> bool {
        self.subtree_end() > self.id + 1
    }
    fn parent(self) -> Option<Self> {
        let parent = self.tree.parents[self.id as usize];
        (parent != NONE).then(|| self.at(parent))
    }
    fn next_sibling(self) -> Option<Self> {
        let parent = self.parent()?;
        let next = self.subtree_end();
        (next < parent.subtree_end()).then(|| self.at(next))
    }
    fn prev_sibling(self) -> Option<Self> {
        let parent = self.parent()?;
        let mut child = parent.id + 1;
        let mut before = None;
        while child != self.id {
            before = Some(child);
            child = self.at(child).subtree_end();
        }
        before.map(|id| self.at(id))
    }
}

/// A cursor over a [`FlatTree`], kept within the subtree it started at.
pub(crate) struct FlatCursor<'t> {
    node: FlatNode<'t>,
    /// Where the cursor started: it does not go above.
    top: u32,
}

impl<'t> SyntaxCursor<'t> for FlatCursor<'t> {
    type Node = FlatNode<'t>;

    fn node(&self) -> FlatNode<'t> {
        self.node
    }
    fn goto_first_child(&mut self) -> bool {
        let found = self.node.has_children();
        if found {
            self.node = self.node.at(self.node.id + 1);
        }
        found
    }
    fn goto_next_sibling(&mut self) -> bool {
        if self.node.id == self.top {
            return false;
        }
        match self.node.next_sibling() {
            Some(next) => {
                self.node = next;
                true
            }
            None => false,
        }
    }
    fn goto_parent(&mut self) -> bool {
        if self.node.id == self.top {
            return false;
        }
        match self.node.parent() {
            Some(parent) => {
                self.node = parent;
                true
            }
            None => false,
        }
    }
    fn reset(&mut self, node: FlatNode<'t>) {
        self.node = node;
        self.top = node.id;
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::Lang;

    fn parse(lang: Lang, source: &str) -> tree_sitter::Tree {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&lang.grammar()).expect("grammar loads");
        parser.parse(source, None).expect("parses")
    }

    /// Every node of the flat copy reads as tree-sitter's does, walked in the same order.
    fn same_tree(lang: Lang, source: &str) {
        let tree = parse(lang, source);
        let flat = FlatTree::new(&tree).expect("fits");
        let mut theirs = tree.walk();
        let mut ours = flat.root().walk();
        let mut nodes = 0;
        loop {
            let (a, b) = (theirs.node(), SyntaxCursor::node(&ours));
            nodes += 1;
            assert_eq!(
                (a.kind_id(), a.kind(), a.is_named(), a.is_extra(), a.is_error(), a.is_missing(), a.has_error()),
                (b.kind_id(), b.kind(), b.is_named(), b.is_extra(), b.is_error(), b.is_missing(), b.has_error()),
                "node {nodes} of {source:?}"
            );
            assert_eq!(a.byte_range(), SyntaxNode::byte_range(b));
            assert_eq!(a.child_count() > 0, b.has_children());
            assert_eq!(a.parent().map(|p| p.byte_range()), b.parent().map(SyntaxNode::byte_range));
            // tree-sitter's next sibling may pass over a zero-width one (a missing node); the flat tree's does not.
            let wide =
                |n: Option<FlatNode<'_>>| n.filter(|n| n.start_byte() < n.end_byte()).map(SyntaxNode::byte_range);
            assert_eq!(
                (a.next_sibling().map(|p| p.byte_range()), a.prev_sibling().map(|p| p.byte_range())),
                (wide(b.next_sibling()), b.prev_sibling().map(SyntaxNode::byte_range)),
                "siblings of node {nodes} ({} {:?}, parent {:?}, next {:?}) of {source:?}",
                a.kind(),
                a.byte_range(),
                a.parent().map(|p| p.kind()),
                b.next_sibling().map(|n| (n.kind(), n.is_missing(), n.is_extra()))
            );
            let down = theirs.goto_first_child();
            assert_eq!(down, SyntaxCursor::goto_first_child(&mut ours));
            if down {
                continue;
            }
            loop {
                let right = theirs.goto_next_sibling();
                assert_eq!(right, SyntaxCursor::goto_next_sibling(&mut ours));
                if right {
                    break;
                }
                let up = theirs.goto_parent();
                assert_eq!(up, SyntaxCursor::goto_parent(&mut ours));
                if !up {
                    assert_eq!(nodes, flat.kinds.len());
                    return;
                }
            }
        }
    }

    #[test]
    fn a_flat_tree_reads_as_the_tree_it_was_copied_from() {
        same_tree(Lang::Python, "import os\n\nclass A(B):\n    # note\n    def f(self, x):\n        return [x, y,]\n");
        same_tree(Lang::Rust, "fn main() { let x = vec![1, 2]; /* c */ x.unwrap(); }\n");
        // Errors and missing nodes keep their flags.
        same_tree(Lang::Python, "def f(:\n    return (1,\n");
        same_tree(Lang::Rust, "fn f() { let x = ; }\n");
        same_tree(Lang::TypeScript, "type T = { a: string }\nlet x = 1\n");
        same_tree(Lang::Python, "");
    }

    #[test]
    fn a_cursor_from_an_inner_node_stays_in_its_subtree() {
        let tree = parse(Lang::Python, "a = 1\nb = 2\n");
        let flat = FlatTree::new(&tree).expect("fits");
        let first = flat.root().walk();
        let mut cursor = first;
        assert!(SyntaxCursor::goto_first_child(&mut cursor));
        let statement = SyntaxCursor::node(&cursor);
        let mut inner = statement.walk();
        assert!(!inner.goto_next_sibling(), "the start node's sibling is outside the subtree");
        assert!(inner.goto_first_child());
        assert!(inner.goto_parent());
        assert!(!inner.goto_parent(), "the start node's parent is outside the subtree");
        assert_eq!(SyntaxNode::byte_range(SyntaxCursor::node(&inner)), 0..5);
    }
}
