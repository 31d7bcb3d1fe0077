//! The structured values of `ast_grep`, `ast_edit` and `resolve` (MCP `structuredContent`),
//! and their conversions from astmatch's reports.

use std::collections::BTreeMap;

use astmatch::{ParseCache, SearchReport, StagedEdit};
use schemars::JsonSchema;
use serde::Serialize;

use super::input::ResolveAction;
use super::words::slash;

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
    /// Files of the language looked at (parsed, or ruled out by a quick text check).
    pub files_searched: usize,
    /// Files with at least one match.
    pub files_matched: usize,
    /// Files not read, by reason.
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
    /// The pattern as given; for the words.
    #[serde(skip)]
    pub pattern: String,
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
    /// The file, relative to the working directory.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// The column (1-based, in characters).
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
    /// The file, relative to the working directory.
    pub file: String,
    /// The match's first line (1-based).
    pub line: usize,
    /// The match's first column (1-based, in characters).
    pub column: usize,
    /// The match's last line (1-based).
    pub end_line: usize,
    /// The column just past the match's end (1-based, in characters): exclusive.
    pub end_column: usize,
    /// The matched source text.
    pub text: String,
    /// Each metavariable's capture, by name (without `$`).
    pub captures: BTreeMap<String, CaptureOutput>,
    /// The context the match was found in.
    pub context: &'static str,
    /// The capture names in the pattern's order; for the words.
    #[serde(skip)]
    pub capture_order: Vec<String>,
}

/// What a metavariable captured: one node (`$X`), or a run of nodes (`$$$X`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CaptureOutput {
    /// A `$X` or `$$X` capture: one node.
    Single {
        /// Always false.
        multi: bool,
        /// The node's source text.
        text: String,
        /// The node's line (1-based).
        line: Option<usize>,
        /// The node's column (1-based, in characters).
        column: Option<usize>,
    },
    /// A `$$$X` capture: a run of zero or more sibling nodes.
    Multi {
        /// Always true.
        multi: bool,
        /// The source from the first node to the last.
        text: String,
        /// Each node of the run, in order; empty when the run is.
        nodes: Vec<NodeOutput>,
    },
}

/// One node of a `$$$` capture.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeOutput {
    /// The node's source text.
    pub text: String,
    /// The node's line (1-based).
    pub line: usize,
    /// The node's column (1-based, in characters).
    pub column: usize,
}

/// Files the walk did not read, by reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkippedOutput {
    /// Files with a NUL byte in their first 8 KiB.
    pub binary: usize,
    /// Files that are not valid UTF-8.
    pub not_utf8: usize,
    /// Files over the size limit (64 MiB by default).
    pub too_large: usize,
    /// Files that could not be read, and directories that could not be listed.
    pub unreadable: usize,
}

/// The parse cache the run searches with (a host's is shared by its runs): files and bytes held, its cap, and lookups that hit or parsed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParseCacheOutput {
    /// Files whose parse trees are held.
    pub files: usize,
    /// Bytes held, estimated (sources and trees).
    pub bytes: usize,
    /// The cap, in bytes.
    pub cap_bytes: usize,
    /// Lookups that found a current tree.
    pub hits: u64,
    /// Lookups that found none in memory: the tree was loaded from the store, or the file parsed.
    pub misses: u64,
    /// The tree store on disk, when there is one (`search.tree_store`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<TreeStoreOutput>,
}

/// The tree store on disk: parse trees kept for later processes, by the SHA-256 of each file's bytes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeStoreOutput {
    /// Its directory.
    pub dir: String,
    /// Its cap, in bytes.
    pub cap_bytes: u64,
    /// Trees this process loaded from it instead of parsing.
    pub loaded: u64,
    /// Trees this process wrote to it.
    pub written: u64,
    /// Why this process could not write to it, when it could not (the search parsed instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `ast_edit`'s structured value: what was staged (nothing is written yet).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditOutput {
    /// The id to give `resolve`; `null` when nothing was staged.
    pub edit_id: Option<String>,
    /// Replacements across the staged files: exactly what `resolve` with `accept` writes.
    pub replacements: usize,
    /// Matches found; a match whose rewrite leaves its code as it was is no replacement.
    pub matches: usize,
    /// Files of the language looked at.
    pub files_searched: usize,
    /// The staged files, each with its unified diff.
    pub files: Vec<StagedFileOutput>,
    /// How many staged files were re-parsed and still parse.
    pub checked: usize,
    /// Staged files that had parse errors before the rewrite, so the re-parse cannot tell.
    pub unchecked: Vec<String>,
    /// Files not staged because the rewrite would break their parse.
    pub refused: Vec<RefusedFileOutput>,
    /// As in `ast_grep`: the context the pattern parsed in first.
    pub context: &'static str,
    /// As in `ast_grep`: every context the pattern parsed in.
    pub contexts: Vec<&'static str>,
    /// As in `ast_grep`: present when the pattern was matched from its error-recovered parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
    /// The language searched.
    pub language: &'static str,
    /// Files not read, by reason.
    pub skipped: SkippedOutput,
}

/// One staged file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StagedFileOutput {
    /// The file, relative to the working directory.
    pub path: String,
    /// Replacements in this file.
    pub replacements: usize,
    /// The change as a unified diff.
    pub diff: String,
    /// 1-indexed lines of comments inside a match but outside every capture, which the rewrite does not keep.
    pub dropped_comments: Vec<usize>,
}

/// A file the rewrite would leave unparseable, and where.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusedFileOutput {
    /// The file, relative to the working directory.
    pub path: String,
    /// Replacements the file would have had.
    pub replacements: usize,
    /// Where the first parse error of the rewritten text is (1-indexed).
    pub line: usize,
    /// The error's column in the rewritten text (1-based, in characters).
    pub column: usize,
    /// The error node's kind (`ERROR`, or the missing node's).
    pub node: String,
    /// The source around the error.
    pub code: String,
    /// The line of the match whose replacement caused it (1-indexed, in the old text).
    pub match_line: usize,
    /// The first line of that match's new code.
    pub replacement: String,
}

/// `resolve`'s structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveOutput {
    /// The staged change's id, as given.
    pub edit_id: String,
    /// What was done with it.
    pub action: ResolveAction,
    /// Replacements written (0 for a discard).
    pub replacements: usize,
    /// Files written (none for a discard).
    pub files: Vec<String>,
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
        store: cache.store_stats().map(|store| TreeStoreOutput {
            dir: store.dir.display().to_string(),
            cap_bytes: store.cap,
            loaded: store.loaded,
            written: store.written,
            error: store.error,
        }),
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

impl AstGrepOutput {
    /// The value of a search for `pattern`, with the parse cache after it.
    pub(super) fn new(report: &SearchReport, pattern: &str, cache: &ParseCache) -> AstGrepOutput {
        let matches = report
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
                capture_order: m.captures.iter().map(|c| c.name.clone()).collect(),
            })
            .collect();
        AstGrepOutput {
            total: report.total,
            matches,
            context: report.context.as_str(),
            contexts: report.contexts.iter().map(|c| c.as_str()).collect(),
            recovered: report.recovered.clone(),
            language: report.lang.id(),
            files_searched: report.files_searched,
            files_matched: report.files_matched,
            skipped: skipped_value(&report.skipped),
            truncated: report.total > report.matches.len(),
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
            pattern: pattern.to_owned(),
        }
    }
}

impl AstEditOutput {
    /// The value of a staging.
    pub(super) fn new(staged: &StagedEdit) -> AstEditOutput {
        AstEditOutput {
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
        }
    }
}
