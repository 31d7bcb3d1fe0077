//! Staged edits: a rewrite is computed and previewed, nothing is written until
//! accept, and accept is all or nothing.

use std::collections::HashMap;
use std::ops::Range;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tree_sitter::{InputEdit, Point, Tree};

use crate::error::{Error, Result};
use crate::lang::Context;
use crate::lang::Lang;
use crate::matcher::FileLayout;
use crate::pattern::Pattern;
use crate::rewrite::{Placed, Template, rewrite_with};
use crate::search::{Found, SearchOptions, Skipped, line_column, matches_in, prepare, walk, with_parser};
use crate::write::{FileWrite, write_files};

/// One file of a staged edit, as previewed.
#[derive(Debug, Clone)]
pub struct FileChange {
    /// Relative to the root.
    pub path: PathBuf,
    /// Replacements in this file.
    pub replacements: usize,
    /// Unified diff (3 lines of context), cut to `max_diff_lines` lines with a note.
    pub diff: String,
    /// 1-indexed lines of comments the rewrite does not keep (see [`Rewrite::dropped_comments`]).
    pub dropped_comments: Vec<usize>,
}

/// The preview of a staged edit.
#[derive(Debug, Clone)]
pub struct StagedEdit {
    /// Id to pass to [`EditStore::accept`] or [`EditStore::discard`]; `None` when there was nothing to change.
    pub edit_id: Option<String>,
    /// The language.
    pub lang: Lang,
    /// The first scaffold context the pattern parsed in.
    pub context: Context,
    /// Every scaffold context the pattern parsed in to a distinct shape, in ladder order.
    pub contexts: Vec<Context>,
    /// When the pattern parsed only with error recovery, what was recovered from
    /// ([`crate::Pattern::recovered`]); `None` otherwise.
    pub recovered: Option<String>,
    /// Replacements across all files: exactly what accept applies.
    pub replacements: usize,
    /// Matches found (a match whose rewrite leaves the code as it was is not a replacement).
    pub matches: usize,
    /// Files of the language that were looked at.
    pub files_searched: usize,
    /// Changed files, ordered by path.
    pub files: Vec<FileChange>,
    /// Files skipped while searching.
    pub skipped: Skipped,
    /// Staged files re-parsed after the rewrite and found free of parse errors.
    pub checked: usize,
    /// Staged files that had parse errors before the rewrite, so the re-parse could not
    /// tell whether the rewrite added one.
    pub unchecked: Vec<PathBuf>,
    /// Files whose rewrite would have broken their parse: not staged.
    pub refused: Vec<RefusedFile>,
}

/// A file whose rewritten text has a parse error that the old text did not: its change is
/// refused, and the other files stay staged.
#[derive(Debug, Clone)]
pub struct RefusedFile {
    /// Relative to the root.
    pub path: PathBuf,
    /// Replacements the file would have had.
    pub replacements: usize,
    /// Where the rewritten text stops parsing, and which replacement did it.
    pub error: ParseError,
}

/// The first parse error in a rewritten text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-indexed line of the error in the rewritten text.
    pub line: usize,
    /// 1-indexed column of the error in the rewritten text, in characters.
    pub column: usize,
    /// The error node: `ERROR` (code the grammar could not place) or `MISSING x` (a token it had to assume).
    pub node: String,
    /// The rewritten code around the error (its line, trimmed).
    pub code: String,
    /// 1-indexed line, in the old text, of the match whose replacement holds the error or
    /// comes right before it.
    pub match_line: usize,
    /// The first line of that replacement's new code.
    pub replacement: String,
}

/// One file rewritten in memory and re-parsed: what [`EditStore::stage`] does per file.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// The new text.
    pub text: String,
    /// Matches found in the old text.
    pub matches: usize,
    /// Substitutions made (nested matches count): exactly what accept would apply.
    pub replacements: usize,
    /// The re-parse of the new text.
    pub check: Reparse,
    /// 1-indexed lines (in the old text) of comments inside a rewritten match but outside
    /// every capture: the template takes their place, so they are not kept. Capture them
    /// with a metavariable (or a `$$$` run) to keep them.
    pub dropped_comments: Vec<usize>,
}

/// The result of re-parsing a rewritten text with the same grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reparse {
    /// The new text parses without error, or nothing was replaced (the text is unchanged).
    Clean,
    /// The old text already had parse errors, so the check cannot tell.
    Unchecked,
    /// The old text parsed without error and the new one does not.
    Broken(ParseError),
}

/// Rewrites every match of `pattern` in `source` with `template` and re-parses the result.
///
/// Errors: [`Error::UnboundInRewrite`].
pub fn rewrite_text(pattern: &Pattern, source: &str, template: &str) -> Result<Rewrite> {
    let template = Template::parse(template, pattern.bound_names())?;
    let (matches, had_errors, layout) = matches_in(pattern, source, true);
    Ok(rewrite_checked(pattern.lang(), source, &matches, had_errors, &layout, &template))
}

fn rewrite_checked(
    lang: Lang,
    source: &str,
    matches: &[crate::matcher::NodeMatch],
    had_errors: bool,
    layout: &FileLayout,
    template: &Template,
) -> Rewrite {
    let (text, replacements, placed, dropped) = rewrite_with(source, matches, template, layout);
    let dropped_comments = dropped.iter().map(|&o| line_column(source, o).0).collect();
    let check = if text == source || replacements == 0 {
        Reparse::Clean
    } else if had_errors {
        Reparse::Unchecked
    } else {
        let tree = reparse(lang, source, &text, &placed, layout.tree.as_ref());
        let mut errors = match &tree {
            Some(tree) => parse_errors(tree),
            None => vec![(0..text.len(), "ERROR".to_string())],
        };
        if errors.is_empty()
            && let Some(tree) = &tree
        {
            // Shapes the grammar accepts and the language does not: new ones count as errors.
            // The old text is looked at only when the new one has some (without its tree,
            // from the parse cache or the store, that takes a parse).
            let found = invalid_shapes(lang, tree);
            if !found.is_empty() {
                let before = match &layout.tree {
                    Some(old) => invalid_shapes(lang, old).len(),
                    None => crate::search::parse(lang, source).map_or(0, |old| invalid_shapes(lang, &old).len()),
                };
                if found.len() > before {
                    errors = found;
                }
            }
        }
        match describe(source, &text, &errors, &placed) {
            None => Reparse::Clean,
            Some(error) => Reparse::Broken(error),
        }
    };
    Rewrite { text, matches: matches.len(), replacements, check, dropped_comments }
}

/// Parses the rewritten text. With the old text's tree, incrementally: each replacement
/// is an edit of the tree (applied last first, so earlier offsets stay valid), and only
/// what the edits touch is parsed again.
fn reparse(lang: Lang, old: &str, new: &str, placed: &[Placed], tree: Option<&Tree>) -> Option<Tree> {
    let Some(tree) = tree else { return crate::search::parse(lang, new) };
    let mut edited = tree.clone();
    for p in placed.iter().rev() {
        let start_position = point(old, p.old.start);
        edited.edit(&InputEdit {
            start_byte: p.old.start,
            old_end_byte: p.old.end,
            new_end_byte: p.old.start + p.new.len(),
            start_position,
            old_end_position: point(old, p.old.end),
            new_end_position: advance(start_position, &new[p.new.clone()]),
        });
    }
    with_parser(lang, |parser| parser.parse(new, Some(&edited)))
}

/// The row and byte column of an offset.
fn point(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset];
    let row = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    Point { row, column: offset - line_start }
}

/// Where `inserted`, written at `start`, ends.
fn advance(start: Point, inserted: &str) -> Point {
    match inserted.rfind('\n') {
        Some(last) => Point { row: start.row + inserted.matches('\n').count(), column: inserted.len() - last - 1 },
        None => Point { row: start.row, column: start.column + inserted.len() },
    }
}

/// The ERROR and MISSING nodes of a tree: (byte range, node description).
fn parse_errors(tree: &Tree) -> Vec<(Range<usize>, String)> {
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            found.push((node.byte_range(), format!("MISSING {}", node.kind())));
        } else if node.is_error() {
            found.push((node.byte_range(), "ERROR".to_string()));
        }
        if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    found
}

/// Code the grammar parses without error but the language's compiler rejects, which a
/// rewrite can make: in Python an annotated assignment inside a chain
/// (`self.a: T = self.b: T = None`, when `self.$A = $B` → `self.$A: T = $B` also
/// rewrites the nested match). Each as (byte range, description).
fn invalid_shapes(lang: Lang, tree: &Tree) -> Vec<(Range<usize>, String)> {
    if lang != Lang::Python {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "assignment"
            && let Some(right) = node.child_by_field_name("right").filter(|r| r.kind() == "assignment")
            && (node.child_by_field_name("type").is_some() || right.child_by_field_name("type").is_some())
        {
            found.push((node.byte_range(), "an annotated assignment in a chain (Python rejects it)".to_string()));
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    found
}

/// The error to report: the smallest error node that touches a replacement (where the
/// parser gave up on the new code), else the first one; and the replacement it touches,
/// else the last one before it.
fn describe(old: &str, new: &str, errors: &[(Range<usize>, String)], placed: &[Placed]) -> Option<ParseError> {
    let touches = |r: &Range<usize>, p: &Placed| r.start <= p.new.end && p.new.start <= r.end;
    let chosen = errors
        .iter()
        .filter(|(r, _)| placed.iter().any(|p| touches(r, p)))
        .min_by_key(|(r, _)| (r.len(), r.start))
        .or_else(|| errors.iter().min_by_key(|(r, _)| r.start))?;
    let (range, node) = chosen;
    // An ERROR node wider than the replacement starts where the parser lost its way;
    // point at the replacement inside it instead.
    let culprit = placed
        .iter()
        .find(|p| touches(range, p))
        .or_else(|| placed.iter().rev().find(|p| p.new.start <= range.start))
        .or(placed.first());
    let at = match culprit {
        Some(p) if range.start < p.new.start => p.new.start,
        _ => range.start,
    };
    let (line, column) = line_column(new, at);
    let code = new.lines().nth(line - 1).unwrap_or("").trim().to_string();
    let (match_line, replacement) = match culprit {
        Some(p) => {
            (line_column(old, p.old.start).0, new[p.new.clone()].lines().next().unwrap_or("").trim().to_string())
        }
        None => (line, String::new()),
    };
    Some(ParseError { line, column, node: node.clone(), code, match_line, replacement })
}

/// What accept wrote.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// Files written, relative to the root.
    pub files: Vec<PathBuf>,
    /// Replacements applied.
    pub replacements: usize,
}

struct Pending {
    replacements: usize,
    /// (absolute path, relative path, content at staging, new content)
    files: Vec<(PathBuf, PathBuf, String, String)>,
}

/// Staged edits of one run, by id (`edit_1`, `edit_2`, …). Safe to share between threads.
#[derive(Default)]
pub struct EditStore {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next: u64,
    pending: HashMap<String, Pending>,
}

/// A file rewritten and checked by a staging's walk.
struct StagedFile {
    path: PathBuf,
    relative: PathBuf,
    /// The text as read.
    source: String,
    rewrite: Rewrite,
    /// Empty for a file whose rewrite is refused.
    diff: String,
}

/// Lines of diff shown per file before it is cut.
const MAX_DIFF_LINES: usize = 200;

impl EditStore {
    /// An empty store.
    pub fn new() -> EditStore {
        EditStore::default()
    }

    /// Finds every match of `pattern` under `scope` and stages the rewrite with
    /// `rewrite`; writes nothing.
    ///
    /// Every rewritten file is parsed again with the same grammar. A file that parsed
    /// without error before and has an error after is not staged: it is listed in
    /// [`StagedEdit::refused`] with where and why, and the other files stay staged (when
    /// none does, `edit_id` is `None`). So accept can only write files that still parse.
    ///
    /// Errors: as [`crate::search`], plus [`Error::UnboundInRewrite`]; stopped
    /// through [`SearchOptions::control`] before the edit is stored,
    /// [`Error::Stopped`] and nothing staged.
    pub fn stage(
        &self,
        root: &Path,
        scope: &Path,
        pattern: &str,
        rewrite: &str,
        options: &SearchOptions,
    ) -> Result<StagedEdit> {
        // The template is checked against the pattern before any file is read.
        let bound = prepare(root, scope, pattern, options)?;
        let template = Template::parse(rewrite, bound.bound_names())?;
        // Each file is rewritten and checked as the walk finds it, on the walk's threads;
        // its tree goes then, and only the old and new texts and the diff are kept.
        let staged = Mutex::new(Vec::new());
        let walked = walk(root, scope, &bound, options, true, &|found: Found<'_>| {
            let rewrite =
                rewrite_checked(bound.lang(), found.source, &found.matches, found.had_errors, &found.layout, &template);
            if rewrite.replacements == 0 || rewrite.text == found.source {
                return;
            }
            let diff = match rewrite.check {
                Reparse::Broken(_) => String::new(),
                Reparse::Clean | Reparse::Unchecked => diff(found.relative, found.source, &rewrite.text),
            };
            let file = StagedFile {
                path: found.path.to_path_buf(),
                relative: found.relative.to_path_buf(),
                source: found.source.to_string(),
                rewrite,
                diff,
            };
            staged.lock().unwrap_or_else(|e| e.into_inner()).push(file);
        })?;
        let mut staged = staged.into_inner().unwrap_or_else(|e| e.into_inner());
        staged.sort_by(|a, b| a.relative.cmp(&b.relative));
        let mut files = Vec::new();
        let mut pending = Vec::new();
        let mut refused = Vec::new();
        let mut unchecked = Vec::new();
        let mut replacements = 0;
        let matches = walked.matches;
        let files_searched = walked.files_searched;
        for file in staged {
            let rewrite = file.rewrite;
            match rewrite.check {
                Reparse::Broken(error) => {
                    refused.push(RefusedFile { path: file.relative, replacements: rewrite.replacements, error });
                    continue;
                }
                Reparse::Unchecked => unchecked.push(file.relative.clone()),
                Reparse::Clean => {}
            }
            replacements += rewrite.replacements;
            files.push(FileChange {
                path: file.relative.clone(),
                replacements: rewrite.replacements,
                diff: file.diff,
                dropped_comments: rewrite.dropped_comments,
            });
            pending.push((file.path, file.relative, file.source, rewrite.text));
        }
        let checked = files.len() - unchecked.len();
        if crate::search::stopped(options) {
            return Err(Error::Stopped);
        }
        let edit_id = if pending.is_empty() {
            None
        } else {
            let mut state = self.lock();
            state.next += 1;
            let id = format!("edit_{}", state.next);
            state.pending.insert(id.clone(), Pending { replacements, files: pending });
            Some(id)
        };
        Ok(StagedEdit {
            edit_id,
            lang: bound.lang(),
            context: bound.context(),
            contexts: bound.contexts(),
            recovered: bound.recovered().map(str::to_string),
            replacements,
            matches,
            files_searched,
            files,
            skipped: walked.skipped,
            checked,
            unchecked,
            refused,
        })
    }

    /// Applies a staged edit: every file is compared with its content at staging
    /// time and any difference (a file now a symlink too) refuses the whole edit
    /// ([`Error::Conflict`], nothing written). The files are written through
    /// [`write_files`]: all new contents first beside their files, then renamed
    /// into place; if a step fails, the files already changed are put back
    /// ([`Error::WriteFailed`]).
    ///
    /// The edit leaves the store, except after [`Error::WriteFailed`], when it stays
    /// staged and may be accepted again.
    pub fn accept(&self, edit_id: &str) -> Result<Accepted> {
        let pending =
            self.lock().pending.remove(edit_id).ok_or_else(|| Error::UnknownEdit { id: edit_id.to_string() })?;
        let files: Vec<FileWrite> = pending
            .files
            .iter()
            .map(|(path, relative, original, new)| FileWrite {
                path: path.clone(),
                shown: relative.clone(),
                before: Some(original.clone().into_bytes()),
                after: Some(new.clone().into_bytes()),
            })
            .collect();
        let written = write_files(&files);
        match written {
            Ok(()) => Ok(Accepted {
                files: pending.files.iter().map(|f| f.1.clone()).collect(),
                replacements: pending.replacements,
            }),
            Err(e @ Error::WriteFailed(_)) => {
                // Still staged: a later accept may succeed.
                self.lock().pending.insert(edit_id.to_string(), pending);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// Drops a staged edit without writing anything.
    pub fn discard(&self, edit_id: &str) -> Result<()> {
        match self.lock().pending.remove(edit_id) {
            Some(_) => Ok(()),
            None => Err(Error::UnknownEdit { id: edit_id.to_string() }),
        }
    }

    /// The files a staged edit would change, relative to the root and ordered
    /// as staged; `None` when no edit has that id.
    pub fn pending_files(&self, edit_id: &str) -> Option<Vec<PathBuf>> {
        self.lock().pending.get(edit_id).map(|p| p.files.iter().map(|f| f.1.clone()).collect())
    }

    /// Ids of the edits staged now, sorted.
    pub fn pending_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().pending.keys().cloned().collect();
        ids.sort();
        ids
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    let text = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return text;
    }
    let mut cut = lines[..MAX_DIFF_LINES].join("\n");
    cut.push_str(&format!("\n… diff cut: {} more lines\n", lines.len() - MAX_DIFF_LINES));
    cut
}
