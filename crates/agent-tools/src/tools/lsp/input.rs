//! `lsp`'s and `lsp_rename`'s arguments, as the model writes them.

use schemars::JsonSchema;
use serde::Deserialize;

/// The `lsp` action.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LspAction {
    Diagnostics,
    Definition,
    TypeDefinition,
    Implementation,
    References,
    Hover,
    Symbols,
    CodeActions,
    Status,
    Reload,
}

/// Ask the project's language server. Actions: diagnostics (file, or "*" to run the project checker such as cargo check, tsc, pyright, go vet); definition, type_definition, implementation, references (capped at 50), hover, code_actions (each needs file, line and symbol); symbols (query for a workspace search capped at 100, or file for its outline capped at 200); status (which servers run, for which roots, and why a language has none); reload (restart the servers for the working directory). A place is a 1-indexed line plus a symbol: a substring of that line naming what you mean (the first whole-identifier occurrence is used; the result says which column); never a column. Results give paths relative to the working directory and 1-indexed lines. A server still indexing answers "not ready", a slow one "timed out": neither means "nothing found". A language may have helper servers beside its primary (ruff beside pyright): diagnostics and code_actions then include theirs, each item naming its server, and say which helper did not answer; navigation comes from the primary.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspInput {
    /// What to ask.
    pub action: LspAction,
    /// The file, relative to the working directory; "*" for diagnostics means the whole project.
    pub file: Option<String>,
    /// 1-indexed line of the symbol.
    pub line: Option<u32>,
    /// A substring of that line naming the symbol, e.g. "parse_config" or "self.items".
    pub symbol: Option<String>,
    /// symbols: search the workspace for names containing this.
    pub query: Option<String>,
    /// diagnostics "*" and symbols with a query: limit to this language (rust, python, typescript, javascript, c, cpp, go).
    pub language: Option<String>,
    /// symbols with a query: also list matches outside the working directory (dependencies, standard libraries), marked as such.
    pub dependencies: Option<bool>,
}

/// Rename a symbol across the project with the language server, writing every file it touches (all or nothing; files outside the working directory are refused). The place is a 1-indexed line plus a symbol substring of that line, as for lsp. Lists the files changed; an edit that changes nothing is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspRenameInput {
    /// The file, relative to the working directory.
    pub file: String,
    /// 1-indexed line of the symbol.
    pub line: u32,
    /// A substring of that line naming the symbol.
    pub symbol: String,
    /// The new name.
    pub new_name: String,
}
