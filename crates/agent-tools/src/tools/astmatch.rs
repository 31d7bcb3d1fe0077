//! `ast_grep`, `ast_edit` and `resolve`: structural search and staged rewrite
//! over the `astmatch` crate.
//!
//! Registered only when a run wires a working directory and a set of
//! tree-sitter grammars ([`AstmatchWiring`]). The three tools share one
//! [`astmatch::EditStore`], which lives as long as the registry (one run). This
//! module formats results and converts arguments; it does not match or rewrite.
//!
//! The walks run on blocking threads. While one runs, progress says how many
//! files it has looked at; a dropped call (cancellation) stops its walk
//! through astmatch's `WalkControl`, and a stopped `ast_edit` stages nothing.
//! `resolve`'s write runs on its blocking thread to the end, so a cancelled
//! accept is written all or nothing, never half.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use astmatch::{EditStore, Lang, ParseCache, SearchOptions, SearchReport, StagedEdit, WalkControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::result::ToolResult;
use crate::schema::output_schema;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Tool};
use crate::workspace::Workspace;

/// The resources behind the structural tools: a working directory and the
/// grammars (tree-sitter parsers) the run may use.
#[derive(Debug, Clone)]
pub struct AstmatchWiring {
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// The grammars wired; a language outside this set is refused at call time.
    pub languages: Vec<Lang>,
    /// The cap, in bytes, of the parse trees kept between the run's searches (a file
    /// whose size and modification time are unchanged is not parsed again); `0` keeps
    /// none. Default [`astmatch::DEFAULT_CACHE_BYTES`] (256 MiB).
    pub parse_cache_bytes: usize,
    /// Files larger than this many bytes are skipped by a directory's walk (and counted
    /// as too large); a file named as `path` is refused with an error that names the
    /// limit. Default [`astmatch::DEFAULT_MAX_FILE_BYTES`] (64 MiB); the `agent-tools`
    /// binary sets it from `search.max_file_bytes`.
    pub max_file_bytes: u64,
    /// Parse trees shared with other runs (a [`crate::Host`]'s cache, under the host's
    /// one cap); when set, `parse_cache_bytes` is not used. `None`: the run's own cache.
    pub shared_cache: Option<Arc<ParseCache>>,
}

impl AstmatchWiring {
    /// Every shipped grammar, in `workspace`, with the default parse cache.
    pub fn new(workspace: Workspace) -> AstmatchWiring {
        AstmatchWiring {
            workspace,
            languages: Lang::ALL.to_vec(),
            parse_cache_bytes: astmatch::DEFAULT_CACHE_BYTES,
            max_file_bytes: astmatch::DEFAULT_MAX_FILE_BYTES,
            shared_cache: None,
        }
    }
}

impl RegistryBuilder {
    /// Wires structural search and staged rewrite: registers `ast_grep`,
    /// `ast_edit` and `resolve`, which share one edit store for the run.
    pub fn with_astmatch(self, wiring: AstmatchWiring) -> RegistryBuilder {
        let cache = match &wiring.shared_cache {
            Some(cache) => Arc::clone(cache),
            None => Arc::new(ParseCache::new(wiring.parse_cache_bytes)),
        };
        let shared = Arc::new(Shared { wiring, store: EditStore::new(), cache });
        self.register(AstGrep(Arc::clone(&shared))).register(AstEdit(Arc::clone(&shared))).register(Resolve(shared))
    }
}

struct Shared {
    wiring: AstmatchWiring,
    store: EditStore,
    /// Parse trees shared by the run's searches and stagings.
    cache: Arc<ParseCache>,
}

/// A shipped grammar id. Decoding also takes astmatch's aliases (`js`, `ts`,
/// `py`, `rs`, `c++`, `sh`, …), which the schema does not list.
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
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

fn default_max_results() -> u32 {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    Accept,
    Discard,
}

fn verb(action: ResolveAction) -> &'static str {
    match action {
        ResolveAction::Accept => "accept",
        ResolveAction::Discard => "discard",
    }
}

/// `ast_grep`'s structured value. Lines and columns are 1-indexed; columns
/// count characters (Unicode scalar values), not bytes. Paths are relative to
/// the working directory, with `/` separators.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepOutput {
    /// Every match in scope (all are counted, even past `max_results`).
    pub total: usize,
    /// The matches shown, at most `max_results`.
    pub matches: Vec<MatchOutput>,
    /// The context (scaffold) the pattern parsed in first: `statement`, `expression`, `member`, `declaration`, `type`.
    pub context: &'static str,
    /// Every context the pattern parsed in.
    pub contexts: Vec<&'static str>,
    /// Present when no context parses the pattern without error and it was matched from
    /// its error-recovered parse, as ast-grep does (docs/patterns.md, "Error recovery"):
    /// what the parser recovered from, per context (`statement: missing ";"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
    /// The language searched.
    pub language: &'static str,
    pub files_searched: usize,
    pub files_matched: usize,
    pub skipped: SkippedOutput,
    /// Whether matches were left out of `matches` (`total` > `max_results`).
    pub truncated: bool,
    /// The parse cache after the search: the run's, or its host's, shared with the host's other runs.
    pub parse_cache: ParseCacheOutput,
    /// Rust only, present when the pattern's longest word also occurs inside macro
    /// invocations' bodies (`assert!(…)`, `vec![…]`): token trees that no pattern but a
    /// single identifier matches into, so those places were not searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_macros: Option<InMacrosOutput>,
    /// Present when the pattern was matched from its error-recovered parse and matched
    /// nothing: where its literal words occur, so it can be rewritten to parse there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words_found: Option<WordsFoundOutput>,
}

/// Where a recovered pattern's words are, when it matched nothing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WordsFoundOutput {
    /// The pattern's literal words, longest first.
    pub words: Vec<String>,
    /// Files that hold every one of them.
    pub files: usize,
    /// Occurrences of the longest word in those files.
    pub places: usize,
    /// The first occurrence, by path then position; absent when no file holds every word.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<WordPlaceOutput>,
}

/// One occurrence of a pattern's longest word: 1-indexed line, 1-indexed column in characters.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WordPlaceOutput {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The line's text, trimmed (a long line: from a little before the word).
    pub text: String,
}

/// Where a word occurs that the search could not look into.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InMacrosOutput {
    /// The pattern's longest literal word.
    pub word: String,
    /// Its occurrences inside macro bodies, over the files searched.
    pub count: usize,
}

/// One match.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchOutput {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    /// Exclusive.
    pub end_column: usize,
    /// The matched source text.
    pub text: String,
    /// Each metavariable's capture, by name (without `$`).
    pub captures: BTreeMap<String, CaptureOutput>,
    /// The context the match was found in.
    pub context: &'static str,
}

/// What a metavariable captured: one node (`$X`), or a run of nodes (`$$$X`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CaptureOutput {
    Single {
        /// Always false.
        multi: bool,
        text: String,
        line: Option<usize>,
        column: Option<usize>,
    },
    Multi {
        /// Always true.
        multi: bool,
        /// The source from the first node to the last.
        text: String,
        nodes: Vec<NodeOutput>,
    },
}

/// One node of a `$$$` capture.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeOutput {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

/// Files the walk did not read, by reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkippedOutput {
    pub binary: usize,
    pub not_utf8: usize,
    pub too_large: usize,
    pub unreadable: usize,
}

/// The parse cache the run searches with (a host's is shared by its runs): files and bytes held, its cap, and lookups that hit or parsed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParseCacheOutput {
    pub files: usize,
    pub bytes: usize,
    pub cap_bytes: usize,
    pub hits: u64,
    pub misses: u64,
}

/// `ast_edit`'s structured value: what was staged (nothing is written yet).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditOutput {
    /// The id to give `resolve`; `null` when nothing was staged.
    pub edit_id: Option<String>,
    pub replacements: usize,
    pub matches: usize,
    pub files_searched: usize,
    /// The staged files, each with its unified diff.
    pub files: Vec<StagedFileOutput>,
    /// How many staged files were re-parsed and still parse.
    pub checked: usize,
    /// Staged files that had parse errors before the rewrite, so the re-parse cannot tell.
    pub unchecked: Vec<String>,
    /// Files not staged because the rewrite would break their parse.
    pub refused: Vec<RefusedFileOutput>,
    pub context: &'static str,
    pub contexts: Vec<&'static str>,
    /// As in `ast_grep`: present when the pattern was matched from its error-recovered parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
    pub language: &'static str,
    pub skipped: SkippedOutput,
}

/// One staged file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StagedFileOutput {
    pub path: String,
    pub replacements: usize,
    pub diff: String,
    /// 1-indexed lines of comments inside a match but outside every capture, which the rewrite does not keep.
    pub dropped_comments: Vec<usize>,
}

/// A file the rewrite would leave unparseable, and where.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusedFileOutput {
    pub path: String,
    pub replacements: usize,
    /// Where the first parse error of the rewritten text is (1-indexed).
    pub line: usize,
    pub column: usize,
    /// The error node's kind (`ERROR`, or the missing node's).
    pub node: String,
    /// The source around the error.
    pub code: String,
    /// The line of the match whose replacement caused it (1-indexed, in the old text).
    pub match_line: usize,
    pub replacement: String,
}

/// `resolve`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveOutput {
    pub edit_id: String,
    pub action: ResolveAction,
    /// Replacements written (0 for a discard).
    pub replacements: usize,
    /// Files written (none for a discard).
    pub files: Vec<String>,
}

struct AstGrep(Arc<Shared>);
struct AstEdit(Arc<Shared>);
struct Resolve(Arc<Shared>);

impl Tool for AstGrep {
    type Input = AstGrepInput;
    const NAME: &'static str = "ast_grep";
    const TIER: Tier = Tier::Read;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<AstGrepOutput>())
    }

    async fn call(&self, input: AstGrepInput, cx: &CallContext) -> Result<ToolResult> {
        let shared = Arc::clone(&self.0);
        let control = Arc::new(WalkControl::new());
        let walk = Arc::clone(&control);
        walking(Self::NAME, cx, control, move || {
            let scope = match shared.scope(input.path.as_deref(), input.language) {
                Ok(scope) => scope,
                Err(result) => return result,
            };
            if input.max_results == 0 {
                return ToolResult::error("max_results must be at least 1 (all matches are counted either way)");
            }
            let options = SearchOptions {
                lang: input.language.map(Language::lang),
                max_results: usize::try_from(input.max_results).unwrap_or(usize::MAX),
                max_file_bytes: shared.wiring.max_file_bytes,
                cache: Some(Arc::clone(&shared.cache)),
                control: Some(walk),
                ..SearchOptions::default()
            };
            match astmatch::search(shared.root(), &scope, &input.pattern, &options) {
                Ok(report) => search_result(&report, &input.pattern, &shared.cache),
                Err(e) => ToolResult::error(error_text(&e)),
            }
        })
        .await
    }
}

impl Tool for AstEdit {
    type Input = AstEditInput;
    const NAME: &'static str = "ast_edit";
    const TIER: Tier = Tier::Write;
    // It only stages: nothing is written until `resolve` accepts.
    const DESTRUCTIVE: bool = false;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<AstEditOutput>())
    }

    fn preview(&self, input: &AstEditInput) -> CallPreview {
        let path = input.path.as_deref().map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
        let place = if path == "." { "the whole workspace".to_owned() } else { path.to_owned() };
        CallPreview {
            summary: Some(format!(
                "stage a rewrite of `{}` into `{}` in {place} (nothing is written until resolve accepts it)",
                input.pattern, input.rewrite
            )),
            paths: vec![PathBuf::from(path)],
        }
    }

    async fn call(&self, input: AstEditInput, cx: &CallContext) -> Result<ToolResult> {
        let shared = Arc::clone(&self.0);
        let control = Arc::new(WalkControl::new());
        let walk = Arc::clone(&control);
        walking(Self::NAME, cx, control, move || {
            let scope = match shared.scope(input.path.as_deref(), input.language) {
                Ok(scope) => scope,
                Err(result) => return result,
            };
            let options = SearchOptions {
                lang: input.language.map(Language::lang),
                max_file_bytes: shared.wiring.max_file_bytes,
                cache: Some(Arc::clone(&shared.cache)),
                control: Some(walk),
                ..SearchOptions::default()
            };
            match shared.store.stage(shared.root(), &scope, &input.pattern, &input.rewrite, &options) {
                Ok(staged) => staged_result(&staged),
                Err(e) => ToolResult::error(error_text(&e)),
            }
        })
        .await
    }
}

impl Tool for Resolve {
    type Input = ResolveInput;
    const NAME: &'static str = "resolve";
    const TIER: Tier = Tier::Write;

    fn output_schema() -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(output_schema::<ResolveOutput>())
    }

    fn preview(&self, input: &ResolveInput) -> CallPreview {
        let id = input.edit_id.trim();
        let Some(files) = self.0.store.pending_files(id) else {
            return CallPreview {
                summary: Some(format!("{} edit '{id}', which is not staged", verb(input.action))),
                paths: Vec::new(),
            };
        };
        let names: Vec<String> = files.iter().map(|f| slash(f)).collect();
        let summary = match input.action {
            ResolveAction::Accept => format!("write edit {id}, changing {} file(s): {}", names.len(), names.join(", ")),
            ResolveAction::Discard => format!("discard edit {id} (writes nothing): {}", names.join(", ")),
        };
        CallPreview { summary: Some(summary), paths: files }
    }

    async fn call(&self, input: ResolveInput, _cx: &CallContext) -> Result<ToolResult> {
        let shared = Arc::clone(&self.0);
        blocking(Self::NAME, move || {
            let id = input.edit_id.trim();
            match input.action {
                ResolveAction::Accept => match shared.store.accept(id) {
                    Ok(accepted) => {
                        let files: Vec<String> = accepted.files.iter().map(|f| slash(f)).collect();
                        let mut text = format!(
                            "accepted {id}: {} written to {}",
                            plural(accepted.replacements, "replacement"),
                            plural(files.len(), "file")
                        );
                        for file in &files {
                            text.push_str(&format!("\n  {file}"));
                        }
                        ToolResult::text(text).with_output(&ResolveOutput {
                            edit_id: id.to_owned(),
                            action: ResolveAction::Accept,
                            replacements: accepted.replacements,
                            files,
                        })
                    }
                    Err(e) => ToolResult::error(e.to_string()),
                },
                ResolveAction::Discard => match shared.store.discard(id) {
                    Ok(()) => {
                        ToolResult::text(format!("discarded {id}; nothing was written")).with_output(&ResolveOutput {
                            edit_id: id.to_owned(),
                            action: ResolveAction::Discard,
                            replacements: 0,
                            files: Vec::new(),
                        })
                    }
                    Err(e) => ToolResult::error(e.to_string()),
                },
            }
        })
        .await
    }
}

impl Shared {
    fn root(&self) -> &Path {
        self.wiring.workspace.root()
    }

    /// The search scope, or the error result to return: the path resolved in
    /// the workspace, and the language (given or inferred) among those wired.
    fn scope(&self, path: Option<&str>, language: Option<Language>) -> std::result::Result<PathBuf, ToolResult> {
        let scope = match path {
            Some(path) => self.wiring.workspace.resolve(path).map_err(|e| ToolResult::error(e.to_string()))?,
            None => self.root().to_path_buf(),
        };
        let lang = match language {
            Some(language) => Some(language.lang()),
            None if scope.is_file() => match Lang::from_path(&scope) {
                Some(lang) => Some(lang),
                // Said here rather than by astmatch, so the path is shown as the model gave it.
                None => {
                    return Err(ToolResult::error(format!(
                        "language is required: '{}' has no known extension; known languages: {}",
                        slash(self.wiring.workspace.relative(&scope)),
                        Lang::known_ids()
                    )));
                }
            },
            None => None,
        };
        if let Some(lang) = lang
            && !self.wiring.languages.contains(&lang)
        {
            let wired: Vec<&str> = self.wiring.languages.iter().map(|l| l.id()).collect();
            return Err(ToolResult::error(format!(
                "language {lang} is not wired in this run; available: {}",
                wired.join(", ")
            )));
        }
        Ok(scope)
    }
}

/// Runs blocking, CPU-bound work (parsing, walking, writing) off the async runtime.
async fn blocking(tool: &'static str, work: impl FnOnce() -> ToolResult + Send + 'static) -> Result<ToolResult> {
    tokio::task::spawn_blocking(work).await.map_err(|e| Error::TaskFailed { tool, message: e.to_string() })
}

/// Stops a walk when the call that started it is dropped (cancelled).
struct StopOnDrop(Arc<WalkControl>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs a walk on a blocking thread, reporting how many files it has
/// looked at every second; dropped, it stops the walk (a staging then
/// stages nothing).
async fn walking(
    tool: &'static str,
    cx: &CallContext,
    control: Arc<WalkControl>,
    work: impl FnOnce() -> ToolResult + Send + 'static,
) -> Result<ToolResult> {
    let _stop = StopOnDrop(Arc::clone(&control));
    let mut handle = tokio::task::spawn_blocking(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            joined = &mut handle => {
                return joined.map_err(|e| Error::TaskFailed { tool, message: e.to_string() });
            }
            _ = tick.tick(), if cx.wants_progress() => {
                cx.progress(Progress::message(format!("{} files looked at so far", control.files_visited())));
            }
        }
    }
}

/// A search's or staging's error as the model reads it: a file over the size limit is
/// told with the setting that raises it.
fn error_text(error: &astmatch::Error) -> String {
    match error {
        astmatch::Error::FileTooLarge { path, bytes, limit } => format!(
            "refused: '{}' is {} ({bytes} bytes), over the {} limit on a searched file (search.max_file_bytes = {limit}); it was not searched. Raise search.max_file_bytes (agent-tools.toml [search], AGENT_TOOLS_SEARCH_MAX_FILE_BYTES or --set search.max_file_bytes=N) to search it",
            slash(path),
            mebibytes(*bytes),
            mebibytes(*limit)
        ),
        other => other.to_string(),
    }
}

/// Bytes as MiB with one decimal: `22.5 MiB`.
fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

fn search_result(report: &SearchReport, pattern: &str, cache: &ParseCache) -> ToolResult {
    let files_with_matches = report.files_matched;
    let shown = report.matches.len();
    let truncated = report.total > shown;
    let mut text = if report.total == 0 && report.files_searched == 0 && report.skipped.total() == 0 {
        // Nothing was searched: say so, rather than a bare "no matches".
        format!(
            "nothing searched: no {} files ({}) in this scope",
            report.lang,
            report.lang.extensions().iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ")
        )
    } else if report.total == 0 && report.files_searched == 0 {
        // Every file was skipped: no "no matches" about files that were not read.
        format!(
            "nothing searched: every {} file in this scope was skipped (listed below), so `{}` was not looked for",
            report.lang,
            first_line(pattern)
        )
    } else if report.total == 0 {
        format!(
            "no matches for `{}` in {} (pattern parsed as {}, {})",
            first_line(pattern),
            plural(report.files_searched, &format!("{} file", report.lang)),
            contexts_text(&report.contexts),
            report.lang
        )
    } else {
        format!(
            "{} (showing {shown}) in {}, pattern parsed as {} ({})",
            plural(report.total, "match"),
            plural(files_with_matches, "file"),
            contexts_text(&report.contexts),
            report.lang
        )
    };
    if let Some(note) = &report.recovered {
        text.push_str(&recovery_line(note));
    }
    if let Some(found) = &report.words_found {
        text.push_str(&words_line(found));
    }
    let several_contexts = report.contexts.len() > 1;
    for m in &report.matches {
        text.push_str(&format!("\n{}:{}:{}: {}", slash(&m.file), m.line, m.column, first_line(&m.text)));
        if !m.captures.is_empty() {
            let captures: Vec<String> = m
                .captures
                .iter()
                .map(|c| format!("{}{} = {}", if c.multi { "$$$" } else { "$" }, c.name, first_line(&c.text)))
                .collect();
            text.push_str(&format!("  [{}]", captures.join(", ")));
        }
        if several_contexts {
            text.push_str(&format!("  ({})", m.context));
        }
    }
    if truncated {
        text.push_str(&format!(
            "\n… {} not shown; narrow `path` or raise `max_results`",
            plural(report.total - shown, "more match")
        ));
    }
    if let Some(line) = skipped_line(&report.skipped) {
        text.push('\n');
        text.push_str(&line);
    }
    if let Some(m) = &report.in_macros {
        text.push_str(&format!(
            "\nnote: `{}` also occurs {} inside macro invocations (`assert!(…)`, `vec![…]`), whose bodies are token trees that a pattern does not match into, so those places were not searched; a one-identifier pattern (`{}`) or a text search finds them",
            m.word,
            plural(m.count, "time"),
            m.word
        ));
    }
    let matches: Vec<MatchOutput> = report
        .matches
        .iter()
        .map(|m| MatchOutput {
            file: slash(&m.file),
            line: m.line,
            column: m.column,
            end_line: m.end_line,
            end_column: m.end_column,
            text: m.text.clone(),
            captures: m
                .captures
                .iter()
                .map(|c| {
                    let nodes: Vec<NodeOutput> = c
                        .nodes
                        .iter()
                        .map(|n| NodeOutput { text: n.text.clone(), line: n.line, column: n.column })
                        .collect();
                    let value = if c.multi {
                        CaptureOutput::Multi { multi: true, text: c.text.clone(), nodes }
                    } else {
                        CaptureOutput::Single {
                            multi: false,
                            text: c.text.clone(),
                            line: nodes.first().map(|n| n.line),
                            column: nodes.first().map(|n| n.column),
                        }
                    };
                    (c.name.clone(), value)
                })
                .collect(),
            context: m.context.as_str(),
        })
        .collect();
    ToolResult::text(text).with_output(&AstGrepOutput {
        total: report.total,
        matches,
        context: report.context.as_str(),
        contexts: report.contexts.iter().map(|c| c.as_str()).collect(),
        recovered: report.recovered.clone(),
        language: report.lang.id(),
        files_searched: report.files_searched,
        files_matched: report.files_matched,
        skipped: skipped_value(&report.skipped),
        truncated,
        parse_cache: cache_value(cache),
        in_macros: report.in_macros.as_ref().map(|m| InMacrosOutput { word: m.word.clone(), count: m.count }),
        words_found: report.words_found.as_ref().map(|w| WordsFoundOutput {
            words: w.words.clone(),
            files: w.files,
            places: w.places,
            first: w.first.as_ref().map(|p| WordPlaceOutput {
                file: slash(&p.file),
                line: p.line,
                column: p.column,
                text: p.text.clone(),
            }),
        }),
    })
}

/// The line that says where a recovered pattern that matched nothing has its words.
fn words_line(found: &astmatch::WordPlaces) -> String {
    let words = found.words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ");
    match &found.first {
        None => format!("\nnote: no file searched holds all of the pattern's words ({words})"),
        Some(first) => format!(
            "\nnote: the pattern's words ({words}) are all in {}, where `{}` occurs {}; the first is {}:{}:{}: {}; the recovered pattern matches none of them, so write it as code that parses there (e.g. with its body)",
            plural(found.files, "file"),
            found.words.first().map_or("", String::as_str),
            plural(found.places, "time"),
            slash(&first.file),
            first.line,
            first.column,
            first.text
        ),
    }
}

fn staged_result(staged: &StagedEdit) -> ToolResult {
    let structured = AstEditOutput {
        edit_id: staged.edit_id.clone(),
        replacements: staged.replacements,
        matches: staged.matches,
        files_searched: staged.files_searched,
        files: staged
            .files
            .iter()
            .map(|f| StagedFileOutput {
                path: slash(&f.path),
                replacements: f.replacements,
                diff: f.diff.clone(),
                dropped_comments: f.dropped_comments.clone(),
            })
            .collect(),
        checked: staged.checked,
        unchecked: staged.unchecked.iter().map(|p| slash(p)).collect(),
        refused: staged
            .refused
            .iter()
            .map(|r| RefusedFileOutput {
                path: slash(&r.path),
                replacements: r.replacements,
                line: r.error.line,
                column: r.error.column,
                node: r.error.node.clone(),
                code: r.error.code.clone(),
                match_line: r.error.match_line,
                replacement: r.error.replacement.clone(),
            })
            .collect(),
        context: staged.context.as_str(),
        contexts: staged.contexts.iter().map(|c| c.as_str()).collect(),
        recovered: staged.recovered.clone(),
        language: staged.lang.id(),
        skipped: skipped_value(&staged.skipped),
    };
    let mut text = match &staged.edit_id {
        None if !staged.refused.is_empty() => format!(
            "refused: the rewrite would leave every file it changes unparseable ({}); nothing was staged",
            plural(staged.refused.len(), "file")
        ),
        None if staged.matches == 0 => format!(
            "nothing to change: the pattern (parsed as {}, {}) matched nothing in {}",
            contexts_text(&staged.contexts),
            staged.lang,
            plural(staged.files_searched, "file")
        ),
        None => format!(
            "nothing to change: the pattern (parsed as {}, {}) matched {}, and the rewrite leaves each as it is",
            contexts_text(&staged.contexts),
            staged.lang,
            plural(staged.matches, "time")
        ),
        Some(id) => {
            let mut check = format!("re-parsed {}: ", plural(staged.files.len(), "file"));
            if staged.unchecked.is_empty() {
                check.push_str("all still parse");
            } else {
                check.push_str(&format!(
                    "{} still parse, and {} already had parse errors before the rewrite, so the re-parse cannot tell about {}: {}",
                    staged.checked,
                    plural(staged.unchecked.len(), "file"),
                    if staged.unchecked.len() == 1 { "it" } else { "them" },
                    staged.unchecked.iter().map(|p| slash(p)).collect::<Vec<_>>().join(", ")
                ));
            }
            let refused = if staged.refused.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} not staged, because the rewrite would break {} parse (listed at the end)",
                    plural(staged.refused.len(), "file"),
                    if staged.refused.len() == 1 { "its" } else { "their" }
                )
            };
            let mut text = format!(
                "(proposed) {} in {} (pattern parsed as {}, {}); {check}{refused}; nothing is written yet — call resolve with edit_id \"{id}\" to accept or discard",
                plural(staged.replacements, "replacement"),
                plural(staged.files.len(), "file"),
                contexts_text(&staged.contexts),
                staged.lang
            );
            for file in &staged.files {
                text.push_str("\n\n");
                text.push_str(file.diff.trim_end());
            }
            text
        }
    };
    if let Some(note) = &staged.recovered {
        text.push_str(&recovery_line(note));
    }
    let dropped: Vec<String> = staged
        .files
        .iter()
        .flat_map(|f| f.dropped_comments.iter().map(move |line| format!("{}:{line}", slash(&f.path))))
        .collect();
    if !dropped.is_empty() {
        let shown: Vec<&str> = dropped.iter().take(10).map(String::as_str).collect();
        let more = if dropped.len() > 10 { format!(" and {} more", dropped.len() - 10) } else { String::new() };
        text.push_str(&format!(
            "\n\nnote: {} inside matched code but outside every capture {} not kept, since the rewrite takes {} place: {}{more}; to keep {}, capture {} with a metavariable",
            plural(dropped.len(), "comment"),
            if dropped.len() == 1 { "is" } else { "are" },
            if dropped.len() == 1 { "its" } else { "their" },
            shown.join(", "),
            if dropped.len() == 1 { "it" } else { "them" },
            if dropped.len() == 1 { "it" } else { "them" },
        ));
    }
    if !staged.refused.is_empty() {
        let header = if staged.edit_id.is_some() {
            format!(
                "\n\nnot staged: {} whose rewritten text would not parse (the other files are staged as shown):",
                plural(staged.refused.len(), "file")
            )
        } else {
            "\n\nwhere each would break:".to_string()
        };
        text.push_str(&header);
        for r in &staged.refused {
            let e = &r.error;
            text.push_str(&format!(
                "\n  {}:{}:{}: {} in `{}`, from the replacement of the match at line {} (`{}`)",
                slash(&r.path),
                e.line,
                e.column,
                e.node,
                e.code,
                e.match_line,
                e.replacement
            ));
        }
        text.push_str(
            "\nadjust the pattern or rewrite so the new code parses, or narrow `path` to leave those files out",
        );
    }
    if let Some(line) = skipped_line(&staged.skipped) {
        text.push('\n');
        text.push_str(&line);
    }
    let mut result = ToolResult::text(text).with_output(&structured);
    result.is_error = staged.edit_id.is_none() && !staged.refused.is_empty();
    result
}

/// The run's parse cache: files and bytes held, the cap, and lookups that hit or parsed.
fn cache_value(cache: &ParseCache) -> ParseCacheOutput {
    let stats = cache.stats();
    ParseCacheOutput {
        files: stats.files,
        bytes: stats.bytes,
        cap_bytes: stats.cap,
        hits: stats.hits,
        misses: stats.misses,
    }
}

/// The line that says a pattern was matched from its error-recovered parse.
fn recovery_line(note: &str) -> String {
    format!(
        "\nnote: pattern parsed only with error recovery ({note}); matched as ast-grep matches it: a missing token is left out and the code may go on there, and an ERROR node matches any node with the same leading children (docs/patterns.md)"
    )
}

/// `statement`, or `statement and type` when the pattern parsed in several contexts.
fn contexts_text(contexts: &[astmatch::Context]) -> String {
    let names: Vec<&str> = contexts.iter().map(|c| c.as_str()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

fn skipped_value(skipped: &astmatch::Skipped) -> SkippedOutput {
    SkippedOutput {
        binary: skipped.binary,
        not_utf8: skipped.not_utf8,
        too_large: skipped.too_large,
        unreadable: skipped.unreadable,
    }
}

fn skipped_line(skipped: &astmatch::Skipped) -> Option<String> {
    if skipped.total() == 0 {
        return None;
    }
    let reasons: Vec<String> = [
        (skipped.binary, "binary"),
        (skipped.not_utf8, "not UTF-8"),
        (skipped.too_large, "too large"),
        (skipped.unreadable, "unreadable"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} {why}"))
    .collect();
    Some(format!("skipped {}: {}", plural(skipped.total(), "file"), reasons.join(", ")))
}

/// The first line of `text`, trimmed, with `…` when more follows.
fn first_line(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed.split_once('\n') {
        Some((first, _)) => format!("{} …", first.trim_end()),
        None => trimmed.to_string(),
    }
}

/// `n thing` or `n things` (`match` → `matches`).
fn plural(n: usize, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        _ if thing.ends_with("ch") => format!("{n} {thing}es"),
        _ => format!("{n} {thing}s"),
    }
}

/// A relative path with `/` separators, as shown to models.
fn slash(path: &Path) -> String {
    path.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}
