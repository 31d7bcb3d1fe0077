//! Searching files: the walk, the skip rules, the pre-filter, and positions.
//!
//! One walker serves both a search and the staging of a rewrite; what it keeps of a
//! file with matches is its caller's choice. A search keeps only what it can return
//! (the first `max_results` matches, positioned and cut) and counts the rest, so its
//! memory does not grow with the number of matches; a rewrite keeps every matched
//! file's text and matches, which it needs.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use tree_sitter::{Parser, Tree};

use crate::cache::ParseCache;
use crate::error::{Error, Result};
use crate::lang::Context;
use crate::lang::Lang;
use crate::matcher::{FileLayout, NodeMatch, file_layout, find_matches, macro_occurrences};
use crate::pattern::Pattern;
use crate::store::StoreKey;
use crate::syntax::{FlatTree, SyntaxNode};

/// How a search runs.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The language; inferred from the file's extension when the scope is a file.
    pub lang: Option<Lang>,
    /// How many matches to return (all are counted). Default 50.
    pub max_results: usize,
    /// Skip files that lack one of the pattern's literal words before parsing them.
    /// The results are the same either way; this only saves time. Default on.
    pub prefilter: bool,
    /// Files a directory walk finds that are larger than this many bytes are skipped
    /// and counted ([`Skipped::too_large`]); a file named as the scope itself is refused
    /// with [`Error::FileTooLarge`] instead. Default [`DEFAULT_MAX_FILE_BYTES`] (64 MiB).
    pub max_file_bytes: u64,
    /// Matched text is cut to this many characters. Default 400.
    pub max_text_chars: usize,
    /// Parse trees to reuse and keep: a file whose bytes are the text its tree was
    /// kept with is not parsed again (and, with the cache's store, one parsed by an
    /// earlier process). Default none.
    pub cache: Option<Arc<ParseCache>>,
    /// Watches and stops the walk from another thread (a host's progress
    /// report, its caller gone). Default none.
    pub control: Option<Arc<WalkControl>>,
}

/// A walk seen and stopped from outside: how many files it has looked at so
/// far, and a flag that ends it. A stopped search or staging returns
/// [`Error::Stopped`], and a stopped staging stages nothing.
#[derive(Debug, Default)]
pub struct WalkControl {
    visited: AtomicUsize,
    stop: AtomicBool,
}

impl WalkControl {
    /// A control with nothing visited and no stop asked; share it with the walk
    /// through [`SearchOptions::control`].
    pub fn new() -> WalkControl {
        WalkControl::default()
    }

    /// Files of the language looked at so far (searched or skipped).
    pub fn files_visited(&self) -> usize {
        self.visited.load(Ordering::Relaxed)
    }

    /// Asks the walk to end; files already being read finish first.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`WalkControl::stop`] has been called; the walk checks it before
    /// and after each file, and reads no new file once it is.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

pub(crate) fn stopped(options: &SearchOptions) -> bool {
    options.control.as_deref().is_some_and(WalkControl::is_stopped)
}

/// The default [`SearchOptions::max_file_bytes`]: 64 MiB, three times a large
/// single-line bundle (a 23 MB one parses in about 3 s and peaks near 0.9 GB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            lang: None,
            max_results: 50,
            prefilter: true,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_text_chars: 400,
            cache: None,
            control: None,
        }
    }
}

/// Files passed over, by reason. They never stop a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Files with a NUL byte in their first 8 KiB. They are skipped even where their
    /// text would match (ast-grep searches them), and only they are.
    pub binary: usize,
    /// Files that are not valid UTF-8.
    pub not_utf8: usize,
    /// Files over [`SearchOptions::max_file_bytes`].
    pub too_large: usize,
    /// Files that could not be read, and directories that could not be listed.
    pub unreadable: usize,
}

impl Skipped {
    /// All files skipped.
    pub fn total(&self) -> usize {
        self.binary + self.not_utf8 + self.too_large + self.unreadable
    }
}

/// One match, positioned for people and models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// The file, relative to the search root.
    pub file: PathBuf,
    /// 1-indexed line of the match's start.
    pub line: usize,
    /// 1-indexed column of the match's start, counted in characters (Unicode scalar values).
    pub column: usize,
    /// 1-indexed line of the match's end.
    pub end_line: usize,
    /// 1-indexed column just past the match's end, in characters.
    pub end_column: usize,
    /// Byte range in the file.
    pub byte_range: Range<usize>,
    /// The matched code, cut to [`SearchOptions::max_text_chars`] characters (then ending in `…`).
    pub text: String,
    /// Per bound metavariable, in order of first binding; captured code is cut like `text`.
    pub captures: Vec<MatchCapture>,
    /// The scaffold context of the pattern shape that matched.
    pub context: Context,
}

/// A capture of one match, positioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchCapture {
    /// The metavariable's name, without `$`.
    pub name: String,
    /// The captured code (for `$$$`, the whole run with what lies between its nodes), cut like [`Match::text`].
    pub text: String,
    /// Whether it is a `$$$` capture.
    pub multi: bool,
    /// The captured nodes: one for a single capture, each node of the run for a `$$$`
    /// (list separators left out; an empty run has none).
    pub nodes: Vec<CapturedNode>,
}

/// One captured node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedNode {
    /// The node's code, cut like [`Match::text`].
    pub text: String,
    /// 1-indexed line of the node's start.
    pub line: usize,
    /// 1-indexed column of the node's start, in characters.
    pub column: usize,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchReport {
    /// The language searched.
    pub lang: Lang,
    /// The first scaffold context the pattern parsed in.
    pub context: Context,
    /// Every scaffold context the pattern parsed in to a distinct shape, in ladder order;
    /// a node matches when any of those shapes matches, and each match names its own.
    pub contexts: Vec<Context>,
    /// When the pattern parsed only with error recovery, what was recovered from
    /// ([`crate::Pattern::recovered`]); `None` otherwise.
    pub recovered: Option<String>,
    /// Every match found, including those not returned.
    pub total: usize,
    /// The first `max_results` matches, ordered by file path, then position.
    pub matches: Vec<Match>,
    /// Files of the language that were looked at (parsed or ruled out by the pre-filter).
    pub files_searched: usize,
    /// Files with at least one match.
    pub files_matched: usize,
    /// Files skipped, by reason.
    pub skipped: Skipped,
    /// Rust only: where the pattern's longest word occurs inside macro invocations'
    /// bodies (`assert!(…)`), which are token trees no pattern but a single identifier
    /// matches into, so those places were not searched. `None` when it occurs in none.
    pub in_macros: Option<InMacros>,
    /// Set when the pattern was recovered ([`SearchReport::recovered`]) and matched
    /// nothing: where its literal words occur, so the pattern can be fixed.
    pub words_found: Option<WordPlaces>,
}

/// Where a recovered pattern's literal words occur in the files searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordPlaces {
    /// The pattern's literal words, longest first ([`crate::Pattern::required_words`]).
    pub words: Vec<String>,
    /// Files that hold every one of the words.
    pub files: usize,
    /// Occurrences of the longest word in those files.
    pub places: usize,
    /// The first of them, by file path, then position; `None` when no file holds every word.
    pub first: Option<WordPlace>,
}

/// One occurrence of a pattern's longest word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordPlace {
    /// The file, relative to the search root.
    pub file: PathBuf,
    /// 1-indexed line.
    pub line: usize,
    /// 1-indexed column, in characters.
    pub column: usize,
    /// The line's text, trimmed and cut to [`SearchOptions::max_text_chars`] characters.
    pub text: String,
}

/// Occurrences of a word inside Rust macro bodies, which a search does not match into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InMacros {
    /// The pattern's longest literal word (`unwrap` for `$X.unwrap()`).
    pub word: String,
    /// How often it occurs inside macro invocations' bodies, over the files searched
    /// that hold all the pattern's words (the others are ruled out unparsed).
    pub count: usize,
}

/// What a walk counted; what it kept of each file with matches is its keeper's.
pub(crate) struct Walked {
    /// Matches found, over every file.
    pub(crate) matches: usize,
    /// Files with at least one match.
    pub(crate) files_matched: usize,
    pub(crate) files_searched: usize,
    pub(crate) skipped: Skipped,
    /// See [`SearchReport::in_macros`].
    pub(crate) in_macros: usize,
    /// Files holding every word of a recovered pattern, occurrences of its longest word
    /// there, and the first (relative path, byte offset, text); see [`SearchReport::words_found`].
    pub(crate) words: WordsTally,
}

/// Files holding every word of a recovered pattern, occurrences of its longest word
/// there, and the first (relative path, 1-indexed line and column, the line's text).
pub(crate) type WordsTally = (usize, usize, Option<(PathBuf, usize, usize, String)>);

/// Picks the language: given, or from the scope's extension when it is a file.
pub(crate) fn resolve_lang(root: &Path, scope: &Path, lang: Option<Lang>) -> Result<Lang> {
    if let Some(lang) = lang {
        return Ok(lang);
    }
    if scope.is_file() {
        return Lang::from_path(scope).ok_or_else(|| Error::LanguageRequired {
            reason: format!("'{}' has no known extension", scope.strip_prefix(root).unwrap_or(scope).display()),
            known: Lang::known_ids(),
        });
    }
    Err(Error::LanguageRequired {
        reason: "the path is a directory, so give `language`".into(),
        known: Lang::known_ids(),
    })
}

/// Searches `scope` (a file or a directory, inside `root`) for `pattern`.
///
/// Directories are walked in parallel, honouring `.gitignore` and skipping hidden
/// files; only files with the language's extensions are searched. A file given
/// directly is searched whatever its extension.
///
/// Errors: [`Error::PathNotFound`], [`Error::LanguageRequired`],
/// [`Error::EmptyPattern`], [`Error::Unparseable`], and [`Error::FileTooLarge`] when the
/// scope is a file over [`SearchOptions::max_file_bytes`].
pub fn search(root: &Path, scope: &Path, pattern: &str, options: &SearchOptions) -> Result<SearchReport> {
    let first = Mutex::new(FirstMatches::new(options.max_results));
    let lock = || first.lock().unwrap_or_else(|e| e.into_inner());
    let pattern = prepare(root, scope, pattern, options)?;
    let walked = walk(root, scope, &pattern, options, false, &|found: Found<'_>| {
        if !lock().admits(found.relative) {
            return;
        }
        // Positioned outside the lock, so the walk's threads do it in parallel.
        let matches = (found.matches.iter().take(options.max_results))
            .map(|m| position(found.relative, found.source, m, options.max_text_chars))
            .collect();
        lock().insert(found.relative.to_path_buf(), matches);
    })?;
    let total = walked.matches;
    let matches = first.into_inner().unwrap_or_else(|e| e.into_inner()).into_matches();
    Ok(SearchReport {
        lang: pattern.lang(),
        context: pattern.context(),
        contexts: pattern.contexts(),
        recovered: pattern.recovered().map(str::to_string),
        total,
        matches,
        files_searched: walked.files_searched,
        files_matched: walked.files_matched,
        skipped: walked.skipped,
        in_macros: (walked.in_macros > 0)
            .then(|| pattern.required_words().first().cloned())
            .flatten()
            .map(|word| InMacros { word, count: walked.in_macros }),
        words_found: (total == 0 && pattern.recovered().is_some() && !pattern.words.is_empty()).then(|| {
            let (files, places, first) = walked.words.clone();
            WordPlaces {
                words: pattern.words.clone(),
                files,
                places,
                first: first.map(|(file, line, column, line_text)| WordPlace {
                    file,
                    line,
                    column,
                    text: cut(line_text.trim(), options.max_text_chars),
                }),
            }
        }),
    })
}

/// The first `cap` matches in (path, position) order of the files seen so far: a
/// prefix of those files in path order, each with at most `cap` positioned matches,
/// the last kept only while the files before it hold fewer than `cap`. A file that
/// comes after a full prefix is never positioned; one that comes before evicts the
/// files it pushes out. Memory: fewer than twice `cap` matches, and as many files.
struct FirstMatches {
    cap: usize,
    files: BTreeMap<PathBuf, Vec<Match>>,
    /// Matches held, over `files`.
    held: usize,
}

impl FirstMatches {
    fn new(cap: usize) -> FirstMatches {
        FirstMatches { cap, files: BTreeMap::new(), held: 0 }
    }

    /// Whether a file at `relative` could hold some of the first `cap` matches.
    fn admits(&self, relative: &Path) -> bool {
        self.cap > 0
            && (self.held < self.cap || self.files.last_key_value().is_some_and(|(last, _)| relative < last.as_path()))
    }

    /// Adds a file's first matches (at most `cap`, in document order), if it is admitted.
    fn insert(&mut self, relative: PathBuf, matches: Vec<Match>) {
        if matches.is_empty() || !self.admits(&relative) {
            return;
        }
        self.held += matches.len();
        if let Some(old) = self.files.insert(relative, matches) {
            // A walk visits a file once; were it to visit one twice, it is held once.
            self.held -= old.len();
        }
        while let Some(last) = self.files.last_entry() {
            if self.held - last.get().len() < self.cap {
                break;
            }
            self.held -= last.remove().len();
        }
    }

    fn into_matches(self) -> Vec<Match> {
        let mut matches: Vec<Match> = self.files.into_values().flatten().collect();
        matches.truncate(self.cap);
        matches
    }
}

/// Matches of a compiled pattern in one text.
pub fn search_source(pattern: &Pattern, source: &str) -> Vec<NodeMatch> {
    matches_in(pattern, source, false).0
}

/// Matches in one text, whether the text has parse errors, and (with `layout`, when
/// something matched) its literal lines and comments.
pub(crate) fn matches_in(pattern: &Pattern, source: &str, layout: bool) -> (Vec<NodeMatch>, bool, FileLayout) {
    match parse(pattern.lang(), source) {
        Some(tree) => {
            let root = tree.root_node();
            let matches = find_matches(pattern, root, source.as_bytes());
            let lines = if layout && !matches.is_empty() {
                file_layout(root, source.as_bytes(), Some(&tree))
            } else {
                FileLayout::default()
            };
            (matches, root.has_error(), lines)
        }
        None => (Vec::new(), false, FileLayout::default()),
    }
}

/// Parses `source` with this thread's parser for `lang`.
pub(crate) fn parse(lang: Lang, source: &str) -> Option<Tree> {
    with_parser(lang, |parser| parser.parse(source, None))
}

pub(crate) fn with_parser<T>(lang: Lang, f: impl FnOnce(&mut Parser) -> T) -> T {
    thread_local! {
        static PARSER: RefCell<Option<(Lang, Parser)>> = const { RefCell::new(None) };
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_some_and(|(l, _)| *l != lang) {
            *slot = None;
        }
        let (_, parser) = slot.get_or_insert_with(|| {
            let mut parser = Parser::new();
            // Every shipped grammar loads into the linked tree-sitter; were one not to,
            // parse() would return None and the file would have no matches.
            let _ = parser.set_language(&lang.grammar());
            (lang, parser)
        });
        f(parser)
    })
}

/// A file with matches, as a walk hands it to its keeper. The file's tree is gone by
/// then (or held by the parse cache), and its text goes when the keeper returns.
pub(crate) struct Found<'a> {
    pub(crate) path: &'a Path,
    /// Relative to the search root.
    pub(crate) relative: &'a Path,
    pub(crate) source: &'a str,
    /// In document order; never empty.
    pub(crate) matches: Vec<NodeMatch>,
    pub(crate) had_errors: bool,
    pub(crate) layout: FileLayout,
}

/// The pattern compiled for a walk of `scope`, once the walk is known to be possible:
/// the scope exists, its language is known (and a file's agrees with the one given),
/// and a file named as the scope is not over the size limit.
pub(crate) fn prepare(root: &Path, scope: &Path, pattern: &str, options: &SearchOptions) -> Result<Pattern> {
    if !scope.exists() {
        return Err(Error::PathNotFound(scope.strip_prefix(root).unwrap_or(scope).to_path_buf()));
    }
    let lang = resolve_lang(root, scope, options.lang)?;
    if scope.is_file()
        && let Some(file_lang) = Lang::from_path(scope)
        && !same_family(file_lang, lang)
    {
        return Err(Error::LanguageMismatch {
            path: scope.strip_prefix(root).unwrap_or(scope).to_path_buf(),
            file_lang,
            given: lang,
        });
    }
    let pattern = Pattern::compile(pattern, lang)?;
    // A file named as the scope is never passed over in silence: one over the limit is
    // refused, so no "no matches" is said about a file that was not read.
    if scope.is_file()
        && let Ok(meta) = std::fs::metadata(scope)
        && meta.len() > options.max_file_bytes
    {
        return Err(Error::FileTooLarge {
            path: scope.strip_prefix(root).unwrap_or(scope).to_path_buf(),
            bytes: meta.len(),
            limit: options.max_file_bytes,
        });
    }
    Ok(pattern)
}

/// Walks `scope` for `pattern` (from [`prepare`]), counting as it goes, and hands each
/// file with matches to `keep`, on the walk's threads, in no particular order. With
/// `layout` (a walk for a rewrite) each file's literal lines and comments are found,
/// and macro bodies are not counted.
pub(crate) fn walk(
    root: &Path,
    scope: &Path,
    pattern: &Pattern,
    options: &SearchOptions,
    layout: bool,
    keep: &(dyn Fn(Found<'_>) + Sync),
) -> Result<Walked> {
    let lang = pattern.lang();
    // Matches, files matched, files searched, files skipped.
    let state = Mutex::new((0usize, 0usize, 0usize, Skipped::default()));
    let in_macros = AtomicUsize::new(0);
    let words: Mutex<WordsTally> = Mutex::new((0, 0, None));
    let gate = ParseGate::default();
    let visit = |path: &Path| {
        let outcome = search_file(path, pattern, options, layout, &in_macros, &gate);
        if let FileOutcome::NoMatch(Some(hit)) = &outcome {
            let relative = path.strip_prefix(root).unwrap_or(path);
            let mut guard = words.lock().unwrap_or_else(|e| e.into_inner());
            guard.0 += 1;
            guard.1 += hit.places;
            // Each file gives its own first place: the first file's is the first.
            if guard.2.as_ref().is_none_or(|(file, ..)| relative < file.as_path()) {
                guard.2 = Some((relative.to_path_buf(), hit.line, hit.column, hit.text.clone()));
            }
        }
        if let Some(control) = &options.control {
            control.visited.fetch_add(1, Ordering::Relaxed);
        }
        let mut guard = state.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            FileOutcome::Matches(source, matches, had_errors, layout) => {
                guard.0 += matches.len();
                guard.1 += 1;
                guard.2 += 1;
                drop(guard);
                let relative = path.strip_prefix(root).unwrap_or(path);
                keep(Found { path, relative, source: &source, matches, had_errors, layout });
            }
            FileOutcome::NoMatch(_) => guard.2 += 1,
            FileOutcome::Skipped(reason) => {
                let s = &mut guard.3;
                match reason {
                    SkipReason::Binary => s.binary += 1,
                    SkipReason::NotUtf8 => s.not_utf8 += 1,
                    SkipReason::TooLarge => s.too_large += 1,
                    SkipReason::Unreadable => s.unreadable += 1,
                }
            }
        }
    };

    if scope.is_file() {
        visit(scope);
    } else {
        let walker = ignore::WalkBuilder::new(scope).build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(_) if stopped(options) => {}
                    Ok(entry) => {
                        if entry.file_type().is_some_and(|t| t.is_file()) && Lang::from_path(entry.path()) == Some(lang)
                        {
                            visit(entry.path());
                        }
                    }
                    // A directory that cannot be listed is counted, never silently left out.
                    Err(_) => state.lock().unwrap_or_else(|e| e.into_inner()).3.unreadable += 1,
                }
                if stopped(options) { ignore::WalkState::Quit } else { ignore::WalkState::Continue }
            })
        });
    }
    if stopped(options) {
        return Err(Error::Stopped);
    }
    let (matches, files_matched, files_searched, skipped) = state.into_inner().unwrap_or_else(|e| e.into_inner());
    let words = words.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(Walked { matches, files_matched, files_searched, skipped, in_macros: in_macros.into_inner(), words })
}

enum SkipReason {
    Binary,
    NotUtf8,
    TooLarge,
    Unreadable,
}

enum FileOutcome {
    Matches(Text, Vec<NodeMatch>, bool, FileLayout),
    /// No match; for a recovered pattern, where the file holds all its words, if it does.
    NoMatch(Option<WordHit>),
    Skipped(SkipReason),
}

/// A file's text: read for this walk, or the parse cache's.
enum Text {
    Read(String),
    Cached(Arc<str>),
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Read(text) => text,
            Text::Cached(text) => text,
        }
    }
}

/// A file that holds every word of a recovered pattern yet no match of it.
struct WordHit {
    /// Occurrences of the longest word.
    places: usize,
    /// The first one's 1-indexed line and character column, and its line's text.
    line: usize,
    column: usize,
    text: String,
}

/// Where a recovered pattern's words are in a file that holds them all; `None` for a
/// pattern that was not recovered or has no words, and for a file without one of them.
fn word_hit(pattern: &Pattern, source: &str) -> Option<WordHit> {
    pattern.recovered()?;
    let longest = pattern.words.first()?;
    let bytes = source.as_bytes();
    if !pattern.words.iter().all(|w| memchr::memmem::find(bytes, w.as_bytes()).is_some()) {
        return None;
    }
    let mut at = memchr::memmem::find_iter(bytes, longest.as_bytes());
    let first = at.next()?;
    let (line, column) = line_column(source, first);
    let start = memchr::memrchr(b'\n', &bytes[..first]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[first..]).map_or(bytes.len(), |i| first + i);
    // A long line (a bundle's) is shown by the part around the word.
    let from = source[start..first].char_indices().rev().nth(40).map_or(start, |(i, _)| start + i);
    Some(WordHit { places: 1 + at.count(), line, column, text: source[from..end].to_string() })
}

fn search_file(
    path: &Path,
    pattern: &Pattern,
    options: &SearchOptions,
    layout: bool,
    in_macros: &AtomicUsize,
    gate: &ParseGate,
) -> FileOutcome {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > options.max_file_bytes => return FileOutcome::Skipped(SkipReason::TooLarge),
        Ok(_) => {}
        Err(_) => return FileOutcome::Skipped(SkipReason::Unreadable),
    }
    let Ok(bytes) = std::fs::read(path) else { return FileOutcome::Skipped(SkipReason::Unreadable) };
    let has_words = |bytes: &[u8]| pattern.words.iter().all(|w| memchr::memmem::find(bytes, w.as_bytes()).is_some());
    let cache = options.cache.as_deref();
    if let Some(cache) = cache
        && let Some((source, tree)) = cache.get(path, pattern.lang(), &bytes)
    {
        if options.prefilter && !has_words(source.as_bytes()) {
            return FileOutcome::NoMatch(None);
        }
        let root = tree.root();
        let matches = find_matches(pattern, root, source.as_bytes());
        count_in_macros(pattern, root, source.as_bytes(), layout, in_macros);
        if matches.is_empty() {
            return FileOutcome::NoMatch(word_hit(pattern, &source));
        }
        let lines = if layout { file_layout(root, source.as_bytes(), None) } else { FileLayout::default() };
        return FileOutcome::Matches(Text::Cached(source), matches, root.has_error(), lines);
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
        return FileOutcome::Skipped(SkipReason::Binary);
    }
    if options.prefilter && !has_words(&bytes) {
        // Still must be UTF-8 to count as searched rather than skipped.
        if std::str::from_utf8(&bytes).is_err() {
            return FileOutcome::Skipped(SkipReason::NotUtf8);
        }
        return FileOutcome::NoMatch(None);
    }
    let Ok(source) = String::from_utf8(bytes) else { return FileOutcome::Skipped(SkipReason::NotUtf8) };
    let lang = pattern.lang();
    let keep = |cache: &ParseCache, flat: FlatTree| {
        if cache.has_room(source.len()) {
            cache.put(path, lang, Arc::from(source.as_str()), Arc::new(flat));
        }
    };
    // Parsed before, by this process or another: the store on disk has the tree.
    let stored = cache.and_then(ParseCache::store).map(|store| (store, StoreKey::new(lang, &source)));
    if let Some(cache) = cache
        && let Some(flat) = stored.as_ref().and_then(|(store, key)| store.load(key, &source))
    {
        let (matches, had_errors, lines) = matches_of(pattern, flat.root(), &source, layout, in_macros, None);
        keep(cache, flat);
        return if matches.is_empty() {
            FileOutcome::NoMatch(word_hit(pattern, &source))
        } else {
            FileOutcome::Matches(Text::Read(source), matches, had_errors, lines)
        };
    }
    // Declared before the tree, so the pass is given back once the tree is gone.
    let _pass = gate.enter(source.len());
    let Some(tree) = parse(lang, &source) else { return FileOutcome::NoMatch(None) };
    // The flat copy is made only to be kept, and then matched instead of the tree.
    let kept = cache.filter(|c| c.wants_copy(source.len())).and_then(|_| FlatTree::new(&tree));
    let (matches, had_errors, lines) = match &kept {
        Some(flat) => matches_of(pattern, flat.root(), &source, layout, in_macros, Some(&tree)),
        None => matches_of(pattern, tree.root_node(), &source, layout, in_macros, Some(&tree)),
    };
    drop(tree);
    if let (Some(cache), Some(flat)) = (cache, kept) {
        if let Some((store, key)) = &stored {
            store.save(key, &flat);
        }
        keep(cache, flat);
    }
    if matches.is_empty() {
        FileOutcome::NoMatch(word_hit(pattern, &source))
    } else {
        FileOutcome::Matches(Text::Read(source), matches, had_errors, lines)
    }
}

/// A parsed file's matches, whether it has parse errors, and (with `layout`, when
/// something matched) its literal lines and comments; counts its macro bodies' words.
fn matches_of<'t, N: SyntaxNode<'t>>(
    pattern: &'t Pattern,
    root: N,
    source: &'t str,
    layout: bool,
    in_macros: &AtomicUsize,
    tree: Option<&Tree>,
) -> (Vec<NodeMatch>, bool, FileLayout) {
    let matches = find_matches(pattern, root, source.as_bytes());
    count_in_macros(pattern, root, source.as_bytes(), layout, in_macros);
    let lines =
        if layout && !matches.is_empty() { file_layout(root, source.as_bytes(), tree) } else { FileLayout::default() };
    (matches, root.has_error(), lines)
}

/// Bytes of source whose trees a walk holds at once, beyond one file: a larger file is
/// parsed and matched alone. A tree takes about 30 bytes per byte of source, and a few
/// files of a tree (bundled JavaScript) run to 10 MB: two of them at once would double
/// the walk's peak memory, while files under this size, nearly all, pass at once.
const PARSING_AT_ONCE: usize = 4 << 20;

/// Admits files to parsing in the order they ask, while the bytes being parsed stay
/// within [`PARSING_AT_ONCE`] (one file is always admitted alone).
#[derive(Default)]
struct ParseGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    held: usize,
    next_ticket: u64,
    serving: u64,
}

/// A file's admission; dropping it gives its bytes back.
struct GatePass<'a> {
    gate: &'a ParseGate,
    bytes: usize,
}

impl ParseGate {
    fn enter(&self, bytes: usize) -> GatePass<'_> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        while state.serving != ticket || (state.held > 0 && state.held.saturating_add(bytes) > PARSING_AT_ONCE) {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.serving += 1;
        state.held += bytes;
        self.changed.notify_all();
        GatePass { gate: self, bytes }
    }
}

impl Drop for GatePass<'_> {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
        state.held -= self.bytes;
        self.gate.changed.notify_all();
    }
}

/// Adds a file's [`SearchReport::in_macros`] occurrences; a walk for a rewrite
/// (`layout`) reports none, so it counts none.
fn count_in_macros<'t, N: SyntaxNode<'t>>(
    pattern: &Pattern,
    root: N,
    source: &[u8],
    layout: bool,
    in_macros: &AtomicUsize,
) {
    if !layout {
        in_macros.fetch_add(macro_occurrences(pattern, root, source), Ordering::Relaxed);
    }
}

/// Languages whose files one grammar reads: a `.js` file may be searched as TypeScript
/// (a superset), a `.h` header as C or C++, and a `.ts` or `.js` file as TSX.
fn same_family(file: Lang, given: Lang) -> bool {
    use Lang::*;
    file == given || matches!((file, given), (JavaScript, TypeScript | Tsx) | (TypeScript, Tsx) | (C, Cpp) | (Cpp, C))
}

/// 1-indexed line and character column of a byte offset.
pub(crate) fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let before = &source.as_bytes()[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let column = source[line_start..offset].chars().count() + 1;
    (line, column)
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn position(relative: &Path, source: &str, m: &NodeMatch, max_chars: usize) -> Match {
    let (line, column) = line_column(source, m.range.start);
    let (end_line, end_column) = line_column(source, m.range.end);
    Match {
        file: relative.to_path_buf(),
        line,
        column,
        end_line,
        end_column,
        byte_range: m.range.clone(),
        text: cut(&source[m.range.clone()], max_chars),
        captures: m
            .captures
            .iter()
            .map(|c| MatchCapture {
                name: c.name.clone(),
                text: cut(&source[c.range.clone()], max_chars),
                multi: c.multi,
                nodes: c
                    .nodes
                    .iter()
                    .map(|r| {
                        let (line, column) = line_column(source, r.start);
                        CapturedNode { text: cut(&source[r.clone()], max_chars), line, column }
                    })
                    .collect(),
            })
            .collect(),
        context: m.context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(file: &str, line: usize) -> Match {
        Match {
            file: PathBuf::from(file),
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            byte_range: 0..1,
            text: String::new(),
            captures: Vec::new(),
            context: Context::Statement,
        }
    }

    /// A file larger than the gate's bytes waits until the files being parsed are done,
    /// and the files that ask after it wait for it; small files pass side by side.
    #[test]
    fn a_large_file_is_parsed_alone_and_in_its_turn() {
        use std::sync::atomic::AtomicBool;
        use std::sync::mpsc;
        let gate = ParseGate::default();
        let small = gate.enter(1000);
        let beside = gate.enter(1000);
        let (big_in, big_entered) = mpsc::channel();
        let (small_in, small_entered) = mpsc::channel();
        let big_done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let pass = gate.enter(PARSING_AT_ONCE + 1);
                big_in.send(()).ok();
                std::thread::sleep(std::time::Duration::from_millis(50));
                big_done.store(true, Ordering::SeqCst);
                drop(pass);
            });
            // The big file has taken its ticket before the next small one asks.
            while gate.state.lock().map(|s| s.next_ticket).unwrap_or(0) < 3 {
                std::thread::yield_now();
            }
            scope.spawn(|| {
                let _pass = gate.enter(1000);
                small_in.send(big_done.load(Ordering::SeqCst)).ok();
            });
            let wait = std::time::Duration::from_millis(200);
            assert!(big_entered.recv_timeout(wait).is_err(), "the big file entered beside two others");
            drop(small);
            assert!(big_entered.recv_timeout(wait).is_err(), "the big file entered beside one other");
            drop(beside);
            assert!(big_entered.recv().is_ok(), "the big file enters once the others are done");
            assert_eq!(small_entered.recv().ok(), Some(true), "a later small file waited for the big one");
        });
        assert_eq!(gate.state.lock().map(|s| s.held).unwrap_or(1), 0);
    }

    /// Files come in any order (the walk is parallel); what is kept is the first `cap`
    /// in path order all the same.
    #[test]
    fn first_matches_keeps_the_first_in_path_order_whatever_the_order_of_arrival() {
        let files: Vec<(String, usize)> = (0..30).map(|i| (format!("f{i:02}"), i % 4 + 1)).collect();
        let all: Vec<Match> = files.iter().flat_map(|(f, n)| (1..=*n).map(move |line| one(f, line))).collect();
        let orders: [Vec<usize>; 3] =
            [(0..30).collect(), (0..30).rev().collect(), (0..30).map(|i| (i * 7) % 30).collect()];
        for cap in [0, 1, 2, 5, 11, 200] {
            for order in &orders {
                let mut first = FirstMatches::new(cap);
                for &i in order {
                    let (file, n) = &files[i];
                    if first.admits(Path::new(file)) {
                        first.insert(PathBuf::from(file), (1..=*n).take(cap).map(|line| one(file, line)).collect());
                    }
                    assert!(first.held < 2 * cap.max(1), "cap {cap}: {} held", first.held);
                }
                assert_eq!(first.into_matches(), all[..cap.min(all.len())], "cap {cap}, order {order:?}");
            }
        }
    }
}
