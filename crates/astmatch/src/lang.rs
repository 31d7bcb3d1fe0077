//! The shipped grammars, their file extensions and their scaffold ladders.

use std::fmt;
use std::path::Path;

/// The scaffold context in which a pattern parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Inside a function body (or at a script's top level).
    Statement,
    /// Inside parentheses, as an expression.
    Expression,
    /// Inside a class, struct or impl body.
    Member,
    /// At the top level of a file.
    Declaration,
    /// In a type position.
    Type,
    /// A JSON value.
    Value,
}

impl Context {
    /// The context's name as shown in results: `statement`, `expression`, `member`, `declaration`, `type`, `value`.
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Statement => "statement",
            Context::Expression => "expression",
            Context::Member => "member",
            Context::Declaration => "declaration",
            Context::Type => "type",
            Context::Value => "value",
        }
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A language with a shipped tree-sitter grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// Shell scripts: id `bash` (or `sh`, `shell`), files `.sh` and `.bash`.
    Bash,
    /// Id `c`, files `.c` and `.h` (a header is taken as C, not C++).
    C,
    /// C++: id `cpp` (or `c++`, `cxx`, `cc`), files `.cc`, `.cpp`, `.cxx`, `.c++`,
    /// `.hh`, `.hpp`, `.hxx`, `.h++`.
    Cpp,
    /// Id `dart`, files `.dart`.
    Dart,
    /// Id `go` (or `golang`), files `.go`.
    Go,
    /// Id `java`, files `.java`.
    Java,
    /// JavaScript with JSX: id `javascript` (or `js`, `jsx`), files `.js`, `.mjs`,
    /// `.cjs`, `.jsx`.
    JavaScript,
    /// Id `json`, files `.json`; patterns are values or object members.
    Json,
    /// Id `python` (or `py`), files `.py` and `.pyi`.
    Python,
    /// Id `rust` (or `rs`), files `.rs`.
    Rust,
    /// TypeScript with JSX, by tree-sitter-typescript's TSX grammar: id `tsx`,
    /// files `.tsx`.
    Tsx,
    /// TypeScript without JSX: id `typescript` (or `ts`), files `.ts`, `.mts`, `.cts`.
    TypeScript,
}

/// One rung of a scaffold ladder: the fragment is parsed as `prefix + fragment + suffix`.
pub(crate) struct Scaffold {
    pub(crate) context: Context,
    pub(crate) prefix: &'static str,
    pub(crate) suffix: &'static str,
}

macro_rules! rung {
    ($context:ident, $prefix:expr, $suffix:expr) => {
        Scaffold { context: Context::$context, prefix: $prefix, suffix: $suffix }
    };
}

impl Lang {
    /// Every shipped language, sorted by id.
    pub const ALL: &'static [Lang] = &[
        Lang::Bash,
        Lang::C,
        Lang::Cpp,
        Lang::Dart,
        Lang::Go,
        Lang::Java,
        Lang::JavaScript,
        Lang::Json,
        Lang::Python,
        Lang::Rust,
        Lang::Tsx,
        Lang::TypeScript,
    ];

    /// The language id used in arguments: `bash`, `c`, `cpp`, `dart`, `go`, `java`,
    /// `javascript`, `json`, `python`, `rust`, `tsx`, `typescript`.
    pub fn id(self) -> &'static str {
        match self {
            Lang::Bash => "bash",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Dart => "dart",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::JavaScript => "javascript",
            Lang::Json => "json",
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::Tsx => "tsx",
            Lang::TypeScript => "typescript",
        }
    }

    /// Parses a language id; common aliases (`js`, `ts`, `py`, `rs`, `c++`, `sh`, …) are accepted.
    pub fn from_id(id: &str) -> Option<Lang> {
        let id = id.trim().to_ascii_lowercase();
        let lang = match id.as_str() {
            "bash" | "sh" | "shell" => Lang::Bash,
            "c" => Lang::C,
            "cpp" | "c++" | "cxx" | "cc" => Lang::Cpp,
            "dart" => Lang::Dart,
            "go" | "golang" => Lang::Go,
            "java" => Lang::Java,
            "javascript" | "js" | "jsx" => Lang::JavaScript,
            "json" => Lang::Json,
            "python" | "py" => Lang::Python,
            "rust" | "rs" => Lang::Rust,
            "tsx" => Lang::Tsx,
            "typescript" | "ts" => Lang::TypeScript,
            _ => return None,
        };
        Some(lang)
    }

    /// The comma-separated list of language ids, for error messages.
    pub fn known_ids() -> String {
        Lang::ALL.iter().map(|l| l.id()).collect::<Vec<_>>().join(", ")
    }

    /// File extensions (without the dot) that belong to this language.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Bash => &["sh", "bash"],
            Lang::C => &["c", "h"],
            Lang::Cpp => &["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++"],
            Lang::Dart => &["dart"],
            Lang::Go => &["go"],
            Lang::Java => &["java"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::Json => &["json"],
            Lang::Python => &["py", "pyi"],
            Lang::Rust => &["rs"],
            Lang::Tsx => &["tsx"],
            Lang::TypeScript => &["ts", "mts", "cts"],
        }
    }

    /// The language of a file, from its extension.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Lang::ALL.iter().copied().find(|l| l.extensions().iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Dart => tree_sitter_dart::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Json => tree_sitter_json::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        }
    }

    /// How a metavariable is written into the fragment before parsing: a token
    /// the grammar accepts wherever a node goes. `{}` is replaced by a number.
    pub(crate) fn placeholder(self, index: usize) -> String {
        match self {
            // JSON has no identifiers; a string is a value anywhere a value goes.
            Lang::Json => format!("\"zz_mv{index}\""),
            _ => format!("zz_mv{index}"),
        }
    }

    /// How a single metavariable is spelled to parse as a type, where an identifier in
    /// the same place parses as an expression instead (C's `sizeof($T)`, `($T) x`); `None`
    /// where the grammar needs no such spelling.
    pub(crate) fn type_placeholder(self, index: usize) -> Option<String> {
        match self {
            Lang::C | Lang::Cpp => Some(format!("struct zz_mv{index}")),
            _ => None,
        }
    }

    /// Further spellings for a `$$$` placeholder, for lists where a bare identifier
    /// is not a valid element (statement lists, item lists, class bodies, match arms,
    /// JSON objects). Each is tried after the bare identifier.
    pub(crate) fn multi_placeholder_alts(self, index: usize) -> Vec<String> {
        let n = index;
        match self {
            Lang::Rust => vec![format!("zz_mv{n}!{{}}"), format!("zz_mv{n} => {{}}"), format!("zz_mv{n}: u8")],
            Lang::Java => vec![format!("zz_mv{n}();"), format!("void zz_mv{n}() {{}}")],
            Lang::C | Lang::Cpp => vec![format!("zz_mv{n};"), format!("int zz_mv{n};")],
            Lang::Dart => vec![format!("zz_mv{n};"), format!("var zz_mv{n};")],
            Lang::Json => vec![format!("\"zz_mv{n}\": 0")],
            // The clauses of a `switch` body.
            Lang::Go | Lang::JavaScript | Lang::TypeScript | Lang::Tsx => vec![format!("case zz_mv{n}:")],
            _ => Vec::new(),
        }
    }

    /// Further spellings for a `$NAME` placeholder, where a bare identifier is not
    /// valid (a module path in an import is a string).
    pub(crate) fn single_placeholder_alts(self, index: usize) -> Vec<String> {
        match self {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Go => vec![format!("\"zz_mv{index}\"")],
            _ => Vec::new(),
        }
    }

    /// Statement terminators that may be left out (automatic semicolon insertion).
    pub(crate) fn optional_semicolons(self) -> bool {
        matches!(self, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
    }

    /// The scaffold ladder, tried in order: statement, expression, class member, declaration
    /// (plus a type rung where the language has one).
    pub(crate) fn scaffolds(self) -> &'static [Scaffold] {
        match self {
            Lang::Rust => &[
                rung!(Statement, "fn zz_scaffold() {\n", "\n}"),
                rung!(Expression, "fn zz_scaffold() { let _ = (", "); }"),
                rung!(Member, "impl ZzScaffold {\n", "\n}"),
                rung!(Declaration, "", ""),
                rung!(Type, "type ZzScaffold = ", ";"),
                rung!(Member, "struct ZzScaffold {\n", "\n}"),
            ],
            Lang::Python => {
                &[rung!(Statement, "", ""), rung!(Expression, "(", ")"), rung!(Member, "class ZzScaffold:\n", "")]
            }
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => &[
                rung!(Statement, "", ""),
                rung!(Expression, "(", ");"),
                rung!(Member, "class ZzScaffold {\n", "\n}"),
                rung!(Type, "type ZzScaffold = ", ";"),
            ],
            Lang::Go => &[
                rung!(Statement, "package zz\nfunc zzScaffold() {\n", "\n}\n"),
                rung!(Expression, "package zz\nvar zzScaffold = (", ")\n"),
                rung!(Member, "package zz\ntype ZzScaffold struct {\n", "\n}\n"),
                rung!(Declaration, "package zz\n", "\n"),
                rung!(Type, "package zz\nvar zzScaffold ", "\n"),
            ],
            Lang::C => &[
                rung!(Statement, "void zz_scaffold(void) {\n", "\n}"),
                rung!(Expression, "void zz_scaffold(void) { zz_v = (", "); }"),
                rung!(Member, "struct zz_scaffold {\n", "\n};"),
                rung!(Declaration, "", ""),
            ],
            Lang::Cpp => &[
                rung!(Statement, "void zz_scaffold() {\n", "\n}"),
                rung!(Expression, "void zz_scaffold() { zz_v = (", "); }"),
                rung!(Member, "class ZzScaffold {\n", "\n};"),
                rung!(Declaration, "", ""),
            ],
            Lang::Java => &[
                rung!(Statement, "class ZzScaffold { void zzScaffold() {\n", "\n} }"),
                rung!(Expression, "class ZzScaffold { Object zzV = (", "); }"),
                rung!(Member, "class ZzScaffold {\n", "\n}"),
                rung!(Declaration, "", ""),
            ],
            Lang::Dart => &[
                rung!(Statement, "void zzScaffold() {\n", "\n}"),
                rung!(Expression, "var zzV = (", ");"),
                rung!(Member, "class ZzScaffold {\n", "\n}"),
                rung!(Declaration, "", ""),
            ],
            Lang::Bash => &[rung!(Statement, "", "")],
            Lang::Json => &[rung!(Value, "", ""), rung!(Member, "{", "}")],
        }
    }
}

impl Lang {
    /// The rung an error-recovered pattern is last tried in, when no rung of the ladder
    /// recovers it: the fragment alone, as a whole file, as ast-grep parses a pattern.
    /// Only Go has one: each of its rungs opens with a package clause, so an error that
    /// runs to the fragment's end (an invalid rune literal `'123'`) spills into the rung.
    pub(crate) fn bare_scaffold(self) -> Option<Scaffold> {
        match self {
            Lang::Go => Some(rung!(Declaration, "", "")),
            _ => None,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
