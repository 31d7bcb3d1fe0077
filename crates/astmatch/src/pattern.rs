//! Compiling a pattern: metavariables to placeholders, the scaffold ladder, and
//! the owned pattern tree that the matcher walks.

use std::collections::HashMap;

use tree_sitter::{Node, Parser, Tree};

use crate::error::{Error, Result};
use crate::lang::{Context, Lang};
use crate::syntax::{SyntaxCursor, SyntaxNode};

/// A metavariable: `$NAME` (single), `$$NAME` (single, named or unnamed node) or
/// `$$$NAME` (multi); `name` is `None` for `$_`, `$$_`, `$$$` and names starting
/// with `_`, which bind nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetaVar {
    pub(crate) name: Option<String>,
    pub(crate) multi: bool,
    /// `$$NAME`: the one node may be an unnamed token (`_`, `;`), not only a named node.
    pub(crate) any: bool,
}

/// One node of a compiled pattern.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PNode {
    Meta(MetaVar),
    Leaf {
        kinds: Vec<u16>,
        kind: String,
        text: String,
        ident: bool,
    },
    Inner {
        kinds: Vec<u16>,
        children: Vec<PNode>,
        /// The pattern's parse assumed a missing token in this node (error recovery):
        /// the code's children after the pattern's last one are not compared.
        open: bool,
        /// An ERROR node of a recovered parse: it matches a node of any kind with these children.
        error: bool,
    },
    /// A list node whose elements are one `$$$` run: it binds the node's children, or
    /// an empty run where the code has no such node (a Go block without statements).
    Run {
        kinds: Vec<u16>,
        var: MetaVar,
    },
    /// A decorator that is only `@` and a `$$$` run (`@$$$DECOS`): it stands for one or
    /// more consecutive decorators, and the run binds what follows the `@` of each, from
    /// the first's to the last's (`A()\n@B()`), so a rewrite with `@$$$DECOS` puts back
    /// the same text. One decorator binds what ast-grep binds, its expression.
    Decorators {
        kinds: Vec<u16>,
        var: MetaVar,
    },
}

impl PNode {
    /// An anonymous list separator (`,`), which may be left out next to an empty `$$$`.
    pub(crate) fn is_separator(&self) -> bool {
        matches!(self, PNode::Leaf { kind, .. } if kind == ",")
    }

    /// A closing bracket token.
    pub(crate) fn is_closing(&self) -> bool {
        matches!(self, PNode::Leaf { kind, .. } if matches!(kind.as_str(), ")" | "]" | "}" | ">"))
    }

    pub(crate) fn is_semicolon(&self) -> bool {
        matches!(self, PNode::Leaf { kind, .. } if kind == ";")
    }
}

/// One shape of a pattern: the tree the fragment compiled to in one scaffold rung.
pub(crate) struct Alternative {
    pub(crate) context: Context,
    /// The nodes the shape consists of; more than one means a run of siblings.
    pub(crate) nodes: Vec<PNode>,
    /// The shape's literal words: a node whose text lacks one cannot match it.
    pub(crate) words: Vec<memchr::memmem::Finder<'static>>,
}

impl std::fmt::Debug for Alternative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alternative").field("context", &self.context).field("nodes", &self.nodes).finish()
    }
}

/// A compiled pattern, ready to match files of one language.
///
/// The fragment is compiled in every rung of the language's scaffold ladder that
/// parses it without error; each distinct tree is one [`Alternative`], tried in
/// ladder order, and a node matches when any alternative does.
#[derive(Debug)]
pub struct Pattern {
    pub(crate) lang: Lang,
    /// The distinct shapes, in ladder order; never empty.
    pub(crate) alternatives: Vec<Alternative>,
    /// Indexed by node kind id: is that kind identifier-like?
    pub(crate) ident_kinds: Vec<bool>,
    /// Literal words every match must contain, for the pre-filter.
    pub(crate) words: Vec<String>,
    /// Names bound by the pattern, in order of first appearance.
    pub(crate) bound: Vec<String>,
    /// Set when no rung parses the pattern without error and it was compiled from an
    /// error-recovered parse: what the parser had to recover from.
    pub(crate) recovered: Option<String>,
}

impl Pattern {
    /// Compiles `pattern` for `lang` in every rung of the language's scaffold ladder
    /// that parses it without error.
    ///
    /// When no rung does, the rungs' error-recovered parses are used, as ast-grep uses
    /// its one: an ERROR node matches a node of any kind with the same leading children,
    /// a token the parser had to assume (MISSING) is left out, and the code may go on
    /// after the pattern's last child in the node that lacked it. [`Pattern::recovered`]
    /// then says so. A fragment with unbalanced brackets, or whose recovered parse is an
    /// ERROR with no named node in it, is not recovered.
    ///
    /// Errors: [`Error::EmptyPattern`]; [`Error::OnlyMetavariables`] when the pattern has
    /// no code besides metavariables (it would match everything); [`Error::Unparseable`]
    /// when no scaffold parses the fragment, even with error recovery.
    pub fn compile(pattern: &str, lang: Lang) -> Result<Pattern> {
        let fragment = dedent(pattern);
        if fragment.is_empty() {
            return Err(Error::EmptyPattern);
        }
        let tokens = scan_metavars(&fragment);
        if only_metavariables(&fragment, &tokens) {
            return Err(Error::OnlyMetavariables { pattern: fragment });
        }
        let grammar = lang.grammar();
        let mut parser = Parser::new();
        parser
            .set_language(&grammar)
            .map_err(|_| Error::Unparseable { lang, tried: "grammar failed to load".into() })?;
        let ident_kinds = identifier_kinds(&grammar);
        let mut kinds = KindTable::new(&grammar);

        let mut tried = Vec::new();
        let mut alternatives: Vec<Alternative> = Vec::new();
        let mut words: Option<Vec<String>> = None;
        let mut vars_seen: Option<MetaVars> = None;
        for scaffold in lang.scaffolds() {
            if !tried.contains(&scaffold.context.as_str()) {
                tried.push(scaffold.context.as_str());
            }
            for spelling in [Spelling::Plain, Spelling::Types] {
                if spelling == Spelling::Types && lang.type_placeholder(0).is_none() {
                    continue;
                }
                let Some((source, body, vars, tree)) =
                    parse_in_scaffold(&mut parser, &fragment, &tokens, lang, scaffold, spelling)
                else {
                    continue;
                };
                if spelling == Spelling::Types && !types_in_type_positions(&tree, &source, &vars) {
                    continue;
                }
                let lead = body.len() - body.trim_start().len();
                let start = scaffold.prefix.len() + lead;
                let end = scaffold.prefix.len() + body.trim_end().len();
                let Some(top) = top_nodes(&tree, start, end) else { continue };
                let mut nodes: Vec<PNode> =
                    top.iter().map(|n| compile_node(*n, &source, &vars, &mut kinds, &ident_kinds)).collect();
                // A lone node that merely wraps another of the same extent is the inner node
                // (an expression statement around a call, a parenthesised expression's content).
                if nodes.len() == 1 {
                    let node = innermost(top[0], &source, &vars);
                    nodes = vec![compile_node(node, &source, &vars, &mut kinds, &ident_kinds)];
                }
                if nodes.iter().all(|n| matches!(n, PNode::Meta(_) | PNode::Run { .. }))
                    || alternatives.iter().any(|a| a.nodes == nodes)
                    || keyword_as_identifier(lang, &nodes)
                {
                    continue;
                }
                let found = alt_words(&nodes);
                let finders = found.iter().map(|w| memchr::memmem::Finder::new(w.as_bytes()).into_owned()).collect();
                // A file must hold the words of at least one alternative; only the words
                // every alternative has can rule a file out.
                words = Some(match words {
                    None => found,
                    Some(before) => before.into_iter().filter(|w| found.contains(w)).collect(),
                });
                alternatives.push(Alternative { context: scaffold.context, nodes, words: finders });
                vars_seen.get_or_insert(vars);
            }
        }
        let mut recovered = None;
        if vars_seen.is_none() && balanced(&fragment) {
            let mut notes: Vec<String> = Vec::new();
            for scaffold in lang.scaffolds() {
                let Some((alt, vars, note)) =
                    recover_in_scaffold(&mut parser, &fragment, &tokens, lang, scaffold, &mut kinds, &ident_kinds)
                else {
                    continue;
                };
                if alternatives.iter().any(|a| a.nodes == alt.nodes) {
                    continue;
                }
                let mine = alt_words(&alt.nodes);
                words = Some(match words {
                    None => mine,
                    Some(before) => before.into_iter().filter(|w| mine.contains(w)).collect(),
                });
                if !notes.contains(&note) {
                    notes.push(note);
                }
                alternatives.push(alt);
                vars_seen.get_or_insert(vars);
            }
            // Where every rung wraps the fragment (Go's open with a package clause), a
            // fragment whose error spills into the wrapping (an invalid rune literal `'123'`)
            // is recovered from its parse alone, as ast-grep parses a pattern.
            if notes.is_empty()
                && let Some(bare) = lang.bare_scaffold()
                && let Some((alt, vars, note)) =
                    recover_in_scaffold(&mut parser, &fragment, &tokens, lang, &bare, &mut kinds, &ident_kinds)
            {
                words = Some(alt_words(&alt.nodes));
                notes.push(note);
                alternatives.push(alt);
                vars_seen.get_or_insert(vars);
            }
            if !notes.is_empty() {
                recovered = Some(notes.join("; "));
            }
        }
        let Some(vars) = vars_seen else {
            return Err(Error::Unparseable { lang, tried: tried.join(", ") });
        };
        let mut words = words.unwrap_or_default();
        words.sort_by_key(|w| std::cmp::Reverse(w.len()));
        words.dedup();
        let mut bound = Vec::new();
        for v in &vars.vars {
            if let Some(name) = &v.name
                && !bound.contains(name)
            {
                bound.push(name.clone());
            }
        }
        Ok(Pattern { lang, alternatives, ident_kinds, words, bound, recovered })
    }

    /// The language the pattern was compiled for.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The first scaffold context in which the pattern parsed.
    pub fn context(&self) -> Context {
        self.alternatives[0].context
    }

    /// Every scaffold context in which the pattern parsed to a distinct shape, in ladder order.
    pub fn contexts(&self) -> Vec<Context> {
        let mut out: Vec<Context> = Vec::new();
        for a in &self.alternatives {
            if !out.contains(&a.context) {
                out.push(a.context);
            }
        }
        out
    }

    /// The metavariable names the pattern binds, in order of first appearance.
    pub fn bound_names(&self) -> &[String] {
        &self.bound
    }

    /// Literal words (identifiers, keywords) every match contains; a file
    /// without one of them cannot match.
    pub fn required_words(&self) -> &[String] {
        &self.words
    }

    /// When the pattern parses only with error recovery: what the parser recovered
    /// from, in each context it was compiled in (`statement: missing ";"`). `None` for
    /// a pattern that some rung parses without error.
    pub fn recovered(&self) -> Option<&str> {
        self.recovered.as_deref()
    }
}

/// Statement keywords, reserved in every shipped language but Bash.
const STATEMENT_KEYWORDS: &[&str] = &["if", "else", "for", "while", "do", "switch", "return"];

/// Whether a shape reads a statement keyword as an identifier: C++'s expression rung
/// parses `if ($A)` without error as a call of a function named `if`. No code holds
/// such a call, so the shape is not the pattern's meaning and is dropped.
fn keyword_as_identifier(lang: Lang, nodes: &[PNode]) -> bool {
    lang != Lang::Bash
        && nodes.iter().any(|n| match n {
            PNode::Leaf { ident: true, text, .. } => STATEMENT_KEYWORDS.contains(&text.as_str()),
            PNode::Inner { children, .. } => keyword_as_identifier(lang, children),
            PNode::Leaf { .. } | PNode::Meta(_) | PNode::Run { .. } | PNode::Decorators { .. } => false,
        })
}

/// The literal words of a shape, longest first.
fn alt_words(nodes: &[PNode]) -> Vec<String> {
    let mut found = Vec::new();
    collect_words(nodes, &mut found);
    found.sort_by_key(|w| std::cmp::Reverse(w.len()));
    found.dedup();
    found
}

/// Whether the fragment's brackets balance, outside string and character literals.
/// A fragment that opens what it never closes (`foo(`) is not recovered: it is unparseable.
/// A quote with no match later on its line (a Rust lifetime `'a`) opens no literal.
fn balanced(fragment: &str) -> bool {
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in fragment.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => {
                let rest = &fragment[i + 1..];
                let line = if c == '`' { rest } else { rest.split('\n').next().unwrap_or("") };
                if line.contains(c) {
                    quote = Some(c);
                }
            }
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return false;
                }
            }
            _ => {}
        }
    }
    stack.is_empty()
}

/// The error-recovered parse of the fragment in one scaffold, as a shape: the fragment
/// must still be whole nodes of the tree, and not a bare ERROR of tokens.
fn recover_in_scaffold(
    parser: &mut Parser,
    fragment: &str,
    tokens: &[Token],
    lang: Lang,
    scaffold: &crate::lang::Scaffold,
    kinds: &mut KindTable,
    ident_kinds: &[bool],
) -> Option<(Alternative, MetaVars, String)> {
    if lang == Lang::Python && scaffold.context == Context::Member {
        return None;
    }
    let choices = vec![0usize; tokens.len()];
    let (text, vars, _) = spell(fragment, tokens, lang, &choices, Spelling::Plain);
    let source = format!("{}{}{}", scaffold.prefix, text, scaffold.suffix);
    let tree = parser.parse(&source, None)?;
    let lead = text.len() - text.trim_start().len();
    let start = scaffold.prefix.len() + lead;
    let end = scaffold.prefix.len() + text.trim_end().len();
    // The scaffold itself must be intact: every error lies inside the fragment.
    let errors = error_ranges(&tree);
    if errors.is_empty() || errors.iter().any(|r| r.start < start || r.end > end) {
        return None;
    }
    let top = top_nodes(&tree, start, end)?;
    let mut nodes: Vec<PNode> = top.iter().map(|n| compile_node(*n, &source, &vars, kinds, ident_kinds)).collect();
    if nodes.len() == 1 {
        let node = innermost(top[0], &source, &vars);
        nodes = vec![compile_node(node, &source, &vars, kinds, ident_kinds)];
    }
    if nodes.iter().all(|n| matches!(n, PNode::Meta(_) | PNode::Run { .. }))
        || nodes.iter().any(is_bare_error)
        || keyword_as_identifier(lang, &nodes)
    {
        return None;
    }
    // What was recovered from, in the fragment's own words.
    // Longer placeholders first, so `zz_mv10` is not read as `zz_mv1` and a `0`.
    let mut placeholders: Vec<(&String, &usize)> = vars.placeholders.iter().collect();
    placeholders.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    let unspell = |s: &str| {
        let mut out = s.to_string();
        for &(placeholder, &i) in &placeholders {
            out = out.replace(placeholder.as_str(), &fragment[tokens[i].range.clone()]);
        }
        // The note is one line: a long ERROR is shown by its start.
        let first = out.lines().next().unwrap_or("").to_string();
        if first.chars().count() > 60 || out.contains('\n') {
            format!("{}…", first.chars().take(60).collect::<String>())
        } else {
            first
        }
    };
    let mut what: Vec<String> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            what.push(format!("missing {:?}", node.kind()));
        } else if node.is_error() {
            what.push(format!("ERROR at `{}`", unspell(source[node.byte_range()].trim())));
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    let words = alt_words(&nodes);
    let finders = words.iter().map(|w| memchr::memmem::Finder::new(w.as_bytes()).into_owned()).collect();
    let note = format!("{}: {}", scaffold.context, what.join(", "));
    Some((Alternative { context: scaffold.context, nodes, words: finders }, vars, note))
}

/// An ERROR node with no named node in it: only tokens the grammar could not place.
fn is_bare_error(node: &PNode) -> bool {
    match node {
        PNode::Inner { error: true, children, .. } => children.iter().all(|c| match c {
            PNode::Leaf { kind, ident, .. } => !ident && !kind.chars().next().is_some_and(char::is_alphanumeric),
            PNode::Inner { error, .. } => *error && is_bare_error(c),
            PNode::Meta(_) | PNode::Run { .. } | PNode::Decorators { .. } => false,
        }),
        _ => false,
    }
}

/// How single metavariables are spelled in one compilation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    /// Identifiers first (then the alternatives a parse error asks for).
    Plain,
    /// Single metavariables as types, where the language has a type spelling: C's
    /// `sizeof($T)` parses as an expression, and only so finds no `sizeof(int)`.
    Types,
}

/// Whether every single metavariable spelled as a type parsed as one (a `type_descriptor`).
fn types_in_type_positions(tree: &Tree, source: &str, vars: &MetaVars) -> bool {
    let mut typed = vec![false; vars.vars.len()];
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "type_descriptor"
            && let Some(&i) = vars.placeholders.get(&source[node.byte_range()])
        {
            typed[i] = true;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    vars.vars.iter().zip(&typed).all(|(v, t)| v.multi || *t)
}

/// Whether the fragment holds nothing but metavariables (and whitespace or separators).
fn only_metavariables(fragment: &str, tokens: &[Token]) -> bool {
    let mut rest = String::new();
    let mut pos = 0;
    for t in tokens {
        rest.push_str(&fragment[pos..t.range.start]);
        pos = t.range.end;
    }
    rest.push_str(&fragment[pos..]);
    !tokens.is_empty() && rest.chars().all(|c| c.is_whitespace() || matches!(c, ',' | ';'))
}

/// The innermost node of the same extent as `node`, stopping at a metavariable.
fn innermost<'t>(mut node: Node<'t>, source: &str, vars: &MetaVars) -> Node<'t> {
    loop {
        if vars.lookup(&source[node.byte_range()]).is_some() {
            return node;
        }
        let children: Children<'_> = significant_children(node).into_iter().filter(|c| !c.is_missing()).collect();
        if children.len() == 1 && children[0].byte_range() == node.byte_range() {
            node = children[0];
        } else {
            return node;
        }
    }
}

/// Removes the common leading indentation of non-blank lines and trims the ends.
fn dedent(text: &str) -> String {
    let text = text.trim_matches(|c| c == '\n' || c == '\r');
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> =
        text.lines().map(|l| if l.len() >= common { &l[common..] } else { l.trim_start() }).collect();
    lines.join("\n").trim().to_string()
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}")).collect::<Vec<_>>().join("\n")
}

/// The placeholders standing for metavariables in the parsed fragment.
pub(crate) struct MetaVars {
    placeholders: HashMap<String, usize>,
    pub(crate) vars: Vec<MetaVar>,
}

impl MetaVars {
    fn lookup(&self, text: &str) -> Option<&MetaVar> {
        self.placeholders.get(text).map(|&i| &self.vars[i])
    }
}

/// A metavariable as written in the fragment.
pub(crate) struct Token {
    /// Byte range of `$NAME` in the fragment.
    range: std::ops::Range<usize>,
    var: MetaVar,
}

/// Finds `$NAME`, `$$NAME`, `$$$NAME`, `$_` and `$$$` in the fragment.
pub(crate) fn scan_metavars(fragment: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < fragment.len() {
        if let Some((len, multi, name)) = parse_metavar(&fragment[i..]) {
            let any = !multi && fragment[i..].starts_with("$$");
            let name = name.filter(|n| !n.starts_with('_')).map(str::to_string);
            tokens.push(Token { range: i..i + len, var: MetaVar { name, multi, any } });
            i += len;
        } else {
            i += fragment[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    tokens
}

/// The spellings a metavariable may take, the bare identifier first.
fn spellings(lang: Lang, index: usize, var: &MetaVar, spelling: Spelling) -> Vec<String> {
    let first = match (spelling, var.multi) {
        (Spelling::Types, false) => lang.type_placeholder(index).unwrap_or_else(|| lang.placeholder(index)),
        _ => lang.placeholder(index),
    };
    let mut all = vec![first];
    if var.multi {
        all.extend(lang.multi_placeholder_alts(index));
    } else {
        all.extend(lang.single_placeholder_alts(index));
    }
    all
}

/// The fragment with each metavariable spelled as `choices` says; returns the text,
/// the placeholder table and each placeholder's byte range in the text.
fn spell(
    fragment: &str,
    tokens: &[Token],
    lang: Lang,
    choices: &[usize],
    spelling: Spelling,
) -> (String, MetaVars, Vec<std::ops::Range<usize>>) {
    let mut out = String::with_capacity(fragment.len() + 16 * tokens.len());
    let mut vars = MetaVars { placeholders: HashMap::new(), vars: Vec::new() };
    let mut spans = Vec::new();
    let mut pos = 0;
    for (index, token) in tokens.iter().enumerate() {
        out.push_str(&fragment[pos..token.range.start]);
        let all = spellings(lang, index, &token.var, spelling);
        let placeholder = all.get(choices[index]).cloned().unwrap_or_else(|| lang.placeholder(index));
        vars.placeholders.insert(placeholder.clone(), index);
        vars.vars.push(token.var.clone());
        spans.push(out.len()..out.len() + placeholder.len());
        out.push_str(&placeholder);
        pos = token.range.end;
    }
    out.push_str(&fragment[pos..]);
    (out, vars, spans)
}

/// Parses the fragment in one scaffold. When the parse has errors, metavariables
/// next to an error take their next spelling, one at a time, breadth first (a
/// `$$$` in a class body must be spelled as a member, a `$M` after `from` as a
/// string); a small budget bounds the search.
fn parse_in_scaffold(
    parser: &mut Parser,
    fragment: &str,
    tokens: &[Token],
    lang: Lang,
    scaffold: &crate::lang::Scaffold,
    spelling: Spelling,
) -> Option<(String, String, MetaVars, Tree)> {
    const BUDGET: usize = 24;
    let mut queue = std::collections::VecDeque::from([vec![0usize; tokens.len()]]);
    let mut seen = std::collections::HashSet::new();
    let mut parses = 0;
    while let Some(choices) = queue.pop_front() {
        if !seen.insert(choices.clone()) {
            continue;
        }
        parses += 1;
        if parses > BUDGET {
            return None;
        }
        let (text, vars, spans) = spell(fragment, tokens, lang, &choices, spelling);
        let (body, shift): (String, Box<dyn Fn(usize) -> usize>) =
            if lang == Lang::Python && scaffold.context == Context::Member {
                // Indenting adds four bytes per line; map fragment offsets through it.
                let indented = indent(&text, "    ");
                let text2 = text.clone();
                (indented, Box::new(move |o: usize| o + 4 * (1 + text2[..o].matches('\n').count())))
            } else {
                (text.clone(), Box::new(|o: usize| o))
            };
        let source = format!("{}{}{}", scaffold.prefix, body, scaffold.suffix);
        let tree = parser.parse(&source, None)?;
        if !tree.root_node().has_error() {
            return Some((source, body, vars, tree));
        }
        let errors = error_ranges(&tree);
        let base = scaffold.prefix.len();
        let can_bump = |i: usize| choices[i] + 1 < spellings(lang, i, &tokens[i].var, spelling).len();
        let near: Vec<usize> = (0..spans.len())
            .filter(|&i| {
                let (s, e) = (base + shift(spans[i].start), base + shift(spans[i].end));
                can_bump(i) && errors.iter().any(|r| r.start <= e + 1 && s <= r.end + 1)
            })
            .collect();
        // An error away from every metavariable (a MISSING token at the end, say) may still
        // come from one of them: then each takes its turn.
        let bump = if near.is_empty() { (0..spans.len()).filter(|&i| can_bump(i)).collect() } else { near };
        for i in bump {
            let mut next = choices.clone();
            next[i] += 1;
            queue.push_back(next);
        }
    }
    None
}

/// Byte ranges of ERROR and MISSING nodes.
fn error_ranges(tree: &Tree) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            out.push(node.byte_range());
            continue;
        }
        if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    out
}

/// Parses a metavariable at the start of `text`: (length in bytes, multi, name).
/// `$$NAME` is a single metavariable (one node, named or unnamed).
pub(crate) fn parse_metavar(text: &str) -> Option<(usize, bool, Option<&str>)> {
    let (multi, rest) = if let Some(rest) = text.strip_prefix("$$$") {
        (true, rest)
    } else if let Some(rest) = text.strip_prefix("$$").filter(|r| metavar_name_len(r) > 0) {
        (false, rest)
    } else if let Some(rest) = text.strip_prefix('$') {
        (false, rest)
    } else {
        return None;
    };
    let prefix = text.len() - rest.len();
    let name_len = metavar_name_len(rest);
    if name_len == 0 {
        // `$$$` alone is an anonymous multi; a lone `$` is literal.
        return multi.then_some((prefix, true, None));
    }
    Some((prefix + name_len, multi, Some(&rest[..name_len])))
}

/// Length of a metavariable name (`[A-Z_][A-Z0-9_]*`) at the start of `text`.
fn metavar_name_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_uppercase() || *b == b'_' => {}
        _ => return 0,
    }
    bytes.iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_').count()
}

/// A node's children, kept on the stack when there are few (most nodes).
pub(crate) type Children<'t> = smallvec::SmallVec<[Node<'t>; 8]>;

/// Children that count for matching: comments and other extras are left out. An
/// ERROR node is an extra to tree-sitter, yet it holds code, so it counts.
pub(crate) fn significant_children<'t, N: SyntaxNode<'t>>(node: N) -> smallvec::SmallVec<[N; 8]> {
    let mut out = smallvec::SmallVec::new();
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            if counts(child) {
                out.push(child);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Whether a child node counts for matching (see [`significant_children`]).
pub(crate) fn counts<'t, N: SyntaxNode<'t>>(node: N) -> bool {
    !node.is_extra() || node.is_error()
}

/// The maximal nodes inside `[start, end)`, if they are siblings that cover it exactly.
fn top_nodes(tree: &Tree, start: usize, end: usize) -> Option<Vec<Node<'_>>> {
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            let (s, e) = (child.start_byte(), child.end_byte());
            if e <= start || s >= end || (s == e) {
                continue;
            }
            if s >= start && e <= end {
                if counts(child) {
                    found.push(child);
                }
            } else {
                stack.push(child);
            }
        }
    }
    found.sort_by_key(|n| n.start_byte());
    let first = found.first()?;
    let last = found.last()?;
    if first.start_byte() != start || last.end_byte() != end {
        return None;
    }
    let parent = first.parent().map(|p| p.id());
    if found.iter().any(|n| n.parent().map(|p| p.id()) != parent) {
        return None;
    }
    Some(found)
}

/// Node kind ids grouped by kind name, so that aliases of one kind compare equal.
struct KindTable {
    by_name: HashMap<(String, bool), Vec<u16>>,
}

impl KindTable {
    fn new(grammar: &tree_sitter::Language) -> KindTable {
        let mut by_name: HashMap<(String, bool), Vec<u16>> = HashMap::new();
        for id in 0..grammar.node_kind_count() as u16 {
            if let Some(name) = grammar.node_kind_for_id(id) {
                by_name.entry((name.to_string(), grammar.node_kind_is_named(id))).or_default().push(id);
            }
        }
        KindTable { by_name }
    }

    fn ids(&self, node: Node<'_>) -> Vec<u16> {
        self.by_name.get(&(node.kind().to_string(), node.is_named())).cloned().unwrap_or_else(|| vec![node.kind_id()])
    }
}

/// Node kinds that hold a list of elements without delimiters of their own.
fn is_list_kind(kind: &str) -> bool {
    kind == "block" || kind.ends_with("_list") || kind.ends_with("_block") || kind.ends_with("body")
}

fn is_identifier_kind(kind: &str) -> bool {
    kind.ends_with("identifier") || matches!(kind, "word" | "variable_name" | "name" | "constant")
}

fn identifier_kinds(grammar: &tree_sitter::Language) -> Vec<bool> {
    (0..grammar.node_kind_count() as u16)
        .map(|id| grammar.node_kind_is_named(id) && grammar.node_kind_for_id(id).is_some_and(is_identifier_kind))
        .collect()
}

fn compile_node(node: Node<'_>, source: &str, vars: &MetaVars, kinds: &mut KindTable, ident_kinds: &[bool]) -> PNode {
    let text = &source[node.byte_range()];
    // A list node may end with the newline token that ends its last statement (Go).
    if let Some(var) = vars.lookup(text.trim_end()) {
        // A `$$$` stands for a run of a list's elements. When its placeholder is the
        // only element of a list node of the same extent (a Python block, a Go
        // statement list), the run is inside that node: the list is kept, so the run
        // never takes a sibling of the list (an `except` clause next to a `try` body).
        let children: Vec<Node<'_>> = significant_children(node)
            .into_iter()
            .filter(|c| c.is_named() || !source[c.byte_range()].trim().is_empty())
            .collect();
        if var.multi
            && is_list_kind(node.kind())
            && children.len() == 1
            && vars.lookup(&source[children[0].byte_range()]).is_some()
        {
            return PNode::Run { kinds: kinds.ids(node), var: var.clone() };
        }
        if text.len() == text.trim_end().len() || children.len() != 1 {
            return PNode::Meta(var.clone());
        }
        return compile_node(children[0], source, vars, kinds, ident_kinds);
    }
    let all = significant_children(node);
    // `$$$PRE;` among statements is an expression statement of the run's placeholder:
    // it stands for any statements, as `$$$PRE` does, not for one expression statement.
    if let [first, semicolon] = all.as_slice()
        && node.is_named()
        && !semicolon.is_named()
        && semicolon.kind() == ";"
        && let Some(var) = vars.lookup(&source[first.byte_range()]).filter(|v| v.multi)
    {
        return PNode::Meta(var.clone());
    }
    // `@$$$DECOS`: a decorator that is only `@` and a run stands for several decorators.
    let shown: Children<'_> =
        all.iter().copied().filter(|c| c.is_named() || !source[c.byte_range()].trim().is_empty()).collect();
    if node.kind() == "decorator"
        && let [at, run] = shown.as_slice()
        && !at.is_named()
        && let Some(var) = vars.lookup(&source[run.byte_range()]).filter(|v| v.multi)
    {
        return PNode::Decorators { kinds: kinds.ids(node), var: var.clone() };
    }
    let error = node.is_error();
    if all.is_empty() {
        let ident = ident_kinds.get(node.kind_id() as usize).copied().unwrap_or(false);
        return PNode::Leaf { kinds: kinds.ids(node), kind: node.kind().to_string(), text: text.to_string(), ident };
    }
    // A token the parser had to assume is not the pattern's: it is left out, and the
    // code may hold anything after the pattern's last child here (ast-grep's reading).
    let children: Vec<Node<'_>> = all.iter().copied().filter(|c| !c.is_missing()).collect();
    PNode::Inner {
        kinds: kinds.ids(node),
        open: error || children.len() < all.len(),
        error,
        children: children.into_iter().map(|c| compile_node(c, source, vars, kinds, ident_kinds)).collect(),
    }
}

/// Words (identifier-like text of at least two characters) that every match must contain.
fn collect_words(nodes: &[PNode], out: &mut Vec<String>) {
    for node in nodes {
        match node {
            PNode::Leaf { text, .. } => {
                if text.len() >= 2 && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80) {
                    out.push(text.clone());
                }
            }
            PNode::Inner { children, .. } => collect_words(children, out),
            PNode::Meta(_) | PNode::Run { .. } | PNode::Decorators { .. } => {}
        }
    }
}
