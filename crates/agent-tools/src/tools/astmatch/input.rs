//! The arguments of `ast_grep`, `ast_edit` and `resolve`, as the model writes them.

use astmatch::Lang;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A shipped grammar id. Decoding also takes astmatch's aliases (`js`, `ts`,
/// `py`, `rs`, `c++`, `sh`, …), which the schema does not list.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Bash,
    C,
    Cpp,
    Dart,
    Go,
    Java,
    Javascript,
    Json,
    Python,
    Rust,
    Tsx,
    Typescript,
}

impl Language {
    /// The `astmatch` language.
    pub fn lang(self) -> Lang {
        match self {
            Language::Bash => Lang::Bash,
            Language::C => Lang::C,
            Language::Cpp => Lang::Cpp,
            Language::Dart => Lang::Dart,
            Language::Go => Lang::Go,
            Language::Java => Lang::Java,
            Language::Javascript => Lang::JavaScript,
            Language::Json => Lang::Json,
            Language::Python => Lang::Python,
            Language::Rust => Lang::Rust,
            Language::Tsx => Lang::Tsx,
            Language::Typescript => Lang::TypeScript,
        }
    }

    /// The argument for an `astmatch` language.
    pub fn from_lang(lang: Lang) -> Language {
        match lang {
            Lang::Bash => Language::Bash,
            Lang::C => Language::C,
            Lang::Cpp => Language::Cpp,
            Lang::Dart => Language::Dart,
            Lang::Go => Language::Go,
            Lang::Java => Language::Java,
            Lang::JavaScript => Language::Javascript,
            Lang::Json => Language::Json,
            Lang::Python => Language::Python,
            Lang::Rust => Language::Rust,
            Lang::Tsx => Language::Tsx,
            Lang::TypeScript => Language::Typescript,
        }
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Language, D::Error> {
        let id = String::deserialize(deserializer)?;
        match Lang::from_id(&id) {
            Some(lang) => Ok(Language::from_lang(lang)),
            None => Err(serde::de::Error::custom(format!(
                "unknown language '{id}'; known languages: {}",
                Lang::known_ids()
            ))),
        }
    }
}

/// Structural search: finds code by shape rather than by text. The pattern is a code fragment parsed by the same grammar as the files, so it matches however the code is spaced, wrapped or commented, and never inside a string literal or a comment. `$NAME` matches one named node, `$$NAME` one node that may also be an unnamed token (`_`, `;`), `$$$NAME` a run of zero or more siblings, and `$_` any node without binding it. A metavariable repeated in one pattern must capture the same code: `if ($X != null) $X.dispose()` matches a guard that disposes what it tested, not one that disposes something else. The fragment is parsed in every scaffold that accepts it (statement, expression, class member, declaration, type) and matches where any of those shapes does; the result names the contexts. When a `$$$` run could end at several places, the earliest end that lets the rest match wins. A pattern that parses only with error recovery (C++ `if ($A)` with no body, a Rust closure's `|$A, $B|`) is matched from that parse as ast-grep matches it, and the result says so; one no scaffold accepts even then is reported as unparseable, and one that is only metavariables is refused. Returns `file:line:column: code` per match, with captures.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepInput {
    /// A code fragment with metavariables, e.g. `foo($X)` or `if ($X != null) $X.dispose()`.
    pub pattern: String,
    /// File or directory to search, relative to the workspace root; defaults to the whole workspace.
    pub path: Option<String>,
    /// The grammar to parse the pattern and files with. Inferred when `path` names a file; required otherwise.
    pub language: Option<Language>,
    /// How many matches to list; all are counted.
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1))]
    pub max_results: u32,
}

pub(super) fn default_max_results() -> u32 {
    50
}

/// Structural rewrite, staged: the same matching as `ast_grep`, plus a rewrite template with the metavariables substituted back in. The rewrite keeps the matched code's indentation and the file's line endings; a multi-line capture keeps its lines' indentation relative to its first line, and text inside string literals and comments is never re-indented. Every rewritten file is parsed again: a file the rewrite would leave unparseable is not staged, and the result says where and why. Nothing is written: the result is a preview (the replacement count and a unified diff per file) and an `edit_id`; call `resolve` with it to accept or discard the change.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditInput {
    /// What to match: a code fragment with metavariables, as for `ast_grep`.
    pub pattern: String,
    /// What to put in each match's place, with `$NAME` and `$$$NAME` substituted.
    pub rewrite: String,
    /// File or directory to rewrite in, relative to the workspace root; defaults to the whole workspace.
    pub path: Option<String>,
    /// The grammar. Inferred when `path` names a file; required otherwise.
    pub language: Option<Language>,
}

/// Commits or discards a change staged by `ast_edit`. On accept, every file is compared with its content when the change was staged, and any difference refuses the whole change: nothing is written, and the edit must be staged again.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveInput {
    /// The `edit_id` from the `(proposed)` result of `ast_edit`.
    pub edit_id: String,
    /// `accept` writes the change; `discard` drops it.
    pub action: ResolveAction,
}

/// What to do with a staged change.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    Accept,
    Discard,
}
