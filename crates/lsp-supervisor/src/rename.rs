//! A project-wide rename that is complete, or refused, or says exactly what it
//! left: the server's `WorkspaceEdit` is planned in memory and checked before
//! anything is written.
//!
//! 1. Every text edit's range must hold the old name on disk; a range that
//!    does not means the server edited a text it saw earlier (its view is
//!    stale): the rename is refused, nothing is written, and the servers are
//!    told the file changed, so the next try sees it.
//! 2. The root is scanned (the `ignore` walker, files of the server's
//!    languages) for the old name as a whole identifier outside the edited
//!    ranges, and the server is asked where each such use is defined
//!    (`textDocument/definition`, at most [`PROBES`] uses):
//!    - defined inside one of the edited ranges, in a file the server's
//!      configuration leaves out ([`crate::coverage`]): reported, not renamed;
//!    - defined inside an edited range in a file it covers: the server missed
//!      a use of the very symbol it renamed, so its view is stale. The servers
//!      are told those files changed and the rename is asked once more; when
//!      the second edit still misses them, the rename is refused;
//!    - defined elsewhere: another symbol of the same name, counted;
//!    - not resolved (a comment, a string, code the server does not see):
//!      reported, not renamed.
//! 3. The edit is written all or nothing ([`crate::edit`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::request as req;
use lsp_types::{Position, Range, TextDocumentIdentifier, TextDocumentPositionParams};

use crate::change::FileChange;
use crate::edit::{ChangedFile, Leftover, Plan, RenameOutcome, not_an_identifier, plan_workspace_edit};
use crate::encoding::{from_lsp_column, lines, to_lsp_column};
use crate::error::{Error, Result};
use crate::navigation::{Places, convert_locations, range_to_location};
use crate::server::Server;
use crate::spec::Language;
use crate::supervisor::Supervisor;
use crate::uri::file_uri;

/// How many uses outside the edit the server is asked about.
pub const PROBES: usize = 40;
/// How long one of those questions may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Files larger than this are not scanned for uses.
const SCAN_MAX_BYTES: u64 = 2 << 20;

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The whole identifier around byte `at` of `line` (a Rust lifetime keeps its `'`).
fn identifier_around(line: &str, at: usize) -> &str {
    let at = at.min(line.len());
    let start = line[..at].char_indices().rev().take_while(|(_, c)| is_ident(*c)).last().map_or(at, |(i, _)| i);
    let end = line[at..].char_indices().find(|(_, c)| !is_ident(*c)).map_or(line.len(), |(i, _)| at + i);
    let start = if start > 0 && line[..start].ends_with('\'') { start - 1 } else { start };
    &line[start..end]
}

/// A use of the old name found by the scan: its file, 0-based line, byte column and line text.
#[derive(Debug, Clone)]
struct Site {
    path: PathBuf,
    line: usize,
    byte: usize,
    text: String,
}

/// Whole-identifier occurrences of `name` in `text`, as (0-based line, byte column, byte offset).
fn occurrences(text: &str, name: &str) -> Vec<(usize, usize, usize)> {
    let bare = name.trim_start_matches('\'');
    let mut out = Vec::new();
    let mut line = 0;
    let mut line_start = 0;
    let mut scanned = 0;
    for (at, _) in text.match_indices(bare) {
        let between = &text[scanned..at];
        if let Some(nl) = between.rfind('\n') {
            line += between.matches('\n').count();
            line_start = scanned + nl + 1;
        }
        scanned = at;
        let before = text[..at].chars().next_back();
        let after = text[at + bare.len()..].chars().next();
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            continue;
        }
        out.push((line, at - line_start, at));
    }
    out
}

/// What the scan and the questions found.
#[derive(Debug, Default)]
struct Scan {
    /// Uses of the renamed symbol the edit left out, in files the server's configuration covers.
    missed: Vec<Leftover>,
    not_covered: Vec<Leftover>,
    unresolved: Vec<Leftover>,
    other_symbols: usize,
    unchecked: usize,
}

impl Supervisor {
    /// The symbol's declaration when it lies in another file under the root
    /// (for a server that renames an imported name only locally when asked at
    /// a use: typescript-language-server with prefix and suffix text on).
    async fn declaration_elsewhere(
        &self,
        server: &Server,
        path: &Path,
        position: Position,
    ) -> Option<(crate::results::Location, Position)> {
        let answer = self.query::<req::GotoDefinition>(server, definition_at(path, position)).await.ok()?;
        let location = convert_locations(answer.places(), server.encoding).await.into_iter().next()?;
        let root = &self.config().root;
        if location.path == path
            || !location.path.starts_with(root)
            || location.path.components().any(|c| c.as_os_str() == "node_modules")
        {
            return None;
        }
        // The server answers for a file it has open.
        server.sync(&location.path, Language::from_path(&location.path)?).await.ok()?;
        let text = crate::navigation::read_lines(&location.path).await;
        let line_text = text.get(location.line as usize - 1)?;
        let byte = line_text.char_indices().nth(location.column as usize - 1).map_or(line_text.len(), |(i, _)| i);
        let character = to_lsp_column(line_text, byte, server.encoding);
        Some((location.clone(), Position { line: location.line - 1, character }))
    }

    /// Scans the root for uses of `old` outside the edit and asks the server
    /// where each is defined (see the module docs).
    async fn leftovers(&self, server: &Server, plan: &Plan, old: &str) -> Scan {
        let mut sites = Vec::new();
        // The walk and the reads run off the runtime, on every core; only the
        // files that hold the name come back with their text.
        let (root, languages, bare) =
            (server.root.clone(), server.spec.languages.clone(), old.trim_start_matches('\'').to_owned());
        let holding = tokio::task::spawn_blocking(move || {
            let files: Vec<PathBuf> = ignore::WalkBuilder::new(&root)
                .require_git(false)
                .build()
                .flatten()
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .filter(|e| Language::from_path(e.path()).is_some_and(|l| languages.contains(&l)))
                .filter(|e| e.metadata().is_ok_and(|m| m.len() <= SCAN_MAX_BYTES))
                .map(ignore::DirEntry::into_path)
                .collect();
            crate::importers::read_each(&files, |_, text| text.contains(bare.as_str()).then(|| text.to_owned()))
        })
        .await
        // A scan that panicked found nothing only by accident: its panic goes on.
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        for (path, text) in holding {
            let Some(text) = text else { continue };
            let path = path.as_path();
            let text = crate::encoding::strip_bom(&text).0.to_string();
            let edited = plan.edited.get(path).map(|(_, spans)| spans.as_slice()).unwrap_or(&[]);
            let all = lines(&text);
            for (line, byte, offset) in occurrences(&text, old) {
                // Inside an edited range, or touched by an insertion next to it
                // (rust-analyzer makes `S { x }` into `S { x: y }` by inserting `: y`).
                let end = offset + old.trim_start_matches('\'').len();
                if edited.iter().any(|&(s, e, _)| (s <= offset && offset < e) || (s == e && (s == offset || s == end)))
                {
                    continue;
                }
                let line_text = all.get(line).copied().unwrap_or("").to_string();
                sites.push(Site { path: path.to_path_buf(), line, byte, text: line_text });
            }
        }
        // Files the edit did not touch first: that is where a stale view misses uses.
        sites.sort_by_key(|s| (plan.edited.contains_key(&s.path), s.path.clone(), s.line));
        let mut scan = Scan { unchecked: sites.len().saturating_sub(PROBES), ..Scan::default() };
        let mut opened = Vec::new();
        for site in sites.into_iter().take(PROBES) {
            let Some(language) = Language::from_path(&site.path) else { continue };
            if !server.is_open(&site.path) {
                opened.push(site.path.clone());
            }
            let character = to_lsp_column(&site.text, site.byte, server.encoding);
            let file_lines = vec![site.text.clone()];
            let end = to_lsp_column(&site.text, site.byte + old.trim_start_matches('\'').len(), server.encoding);
            let range = Range { start: Position { line: 0, character }, end: Position { line: 0, character: end } };
            let mut location = range_to_location(&site.path, &range, &file_lines, server.encoding);
            location.line = u32::try_from(site.line + 1).unwrap_or(u32::MAX);
            location.end_line = location.line;
            let excluded = crate::coverage::excluded(server.spec.id, &server.root, &site.path);
            if let Err(e) = server.sync(&site.path, language).await {
                scan.unresolved.push(Leftover { location, excluded, unasked: Some(e.to_string()) });
                continue;
            }
            let position = Position { line: u32::try_from(site.line).unwrap_or(u32::MAX), character };
            let params = definition_at(&site.path, position);
            // A question not answered (timed out, failed) is said so, never taken as "not resolved".
            let answer = match server.request_with::<req::GotoDefinition>(params, PROBE_TIMEOUT).await {
                Ok(answer) => answer,
                // An error answer is the server's word that nothing is defined
                // there (gopls: "no identifier found" in a comment).
                Err(Error::Response { .. }) => None,
                Err(e) => {
                    scan.unresolved.push(Leftover { location, excluded, unasked: Some(e.to_string()) });
                    continue;
                }
            };
            let definitions = convert_locations(answer.places(), server.encoding).await;
            if definitions.is_empty() {
                scan.unresolved.push(Leftover { location, excluded, unasked: None });
                continue;
            }
            let renamed = definitions.iter().any(|d| renamed_at(plan, old, &d.path, d.line, d.column));
            if !renamed && let Some(copy) = definitions.iter().find_map(|d| copy_of_edited(plan, &server.root, &d.path))
            {
                scan.not_covered.push(Leftover { location, excluded: Some(copy), unasked: None });
                continue;
            }
            match (renamed, excluded) {
                (true, Some(why)) => scan.not_covered.push(Leftover { location, excluded: Some(why), unasked: None }),
                (true, None) => scan.missed.push(Leftover { location, excluded: None, unasked: None }),
                (false, _) => scan.other_symbols += 1,
            }
        }
        for path in opened {
            server.closed(&path);
        }
        scan
    }
}

/// A file and a position in it.
fn at(path: &Path, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams { text_document: TextDocumentIdentifier { uri: file_uri(path) }, position }
}

/// `textDocument/definition` at a position.
fn definition_at(path: &Path, position: Position) -> lsp_types::GotoDefinitionParams {
    lsp_types::GotoDefinitionParams {
        text_document_position_params: at(path, position),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

/// The edit's ranges whose new text keeps the old name as an alias
/// (`bar as foo`), where importers of the old name go on reaching the symbol.
fn kept_aliases(plan: &Plan, old: &str) -> Vec<crate::results::Location> {
    let mut out = Vec::new();
    for (path, (text, spans)) in &plan.edited {
        for (start, end, new) in spans {
            let keeps_alias =
                new.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w[0] == "as" && w[1] == old);
            if !keeps_alias {
                continue;
            }
            let line = text[..*start].matches('\n').count();
            let line_start = text[..*start].rfind('\n').map_or(0, |i| i + 1);
            let column = |at: usize| text[line_start..at.max(line_start)].chars().count() + 1;
            let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            out.push(crate::results::Location {
                path: path.clone(),
                line: as_u32(line + 1),
                column: as_u32(column(*start)),
                end_line: as_u32(line + 1 + text[*start..*end].matches('\n').count()),
                end_column: as_u32(column(*end)),
                text: new.clone(),
            });
        }
    }
    out
}

/// When `definition` lies outside the project's sources (outside the root, or
/// in a directory the walk skips: `.venv`, `node_modules`) yet ends like a file
/// the edit changes (`requests/utils.py`), it is a copy of that file, such as
/// an installed package: the use resolves there, not to the renamed symbol.
fn copy_of_edited(plan: &Plan, root: &Path, definition: &Path) -> Option<String> {
    let inside_sources = definition.starts_with(root)
        && !definition.strip_prefix(root).is_ok_and(|rel| {
            rel.components().any(|c| {
                let c = c.as_os_str().to_string_lossy();
                c.starts_with('.') || c == "node_modules" || c == "site-packages"
            })
        });
    if inside_sources {
        return None;
    }
    // The module's directory and name, without extensions: `requests/utils`
    // for `utils.py` and its stub `utils.pyi`, `src/a` for `a.ts` and `a.d.ts`.
    let module = |p: &Path| -> Option<(String, String)> {
        let dir = p.parent()?.file_name()?.to_string_lossy().into_owned();
        let name = p.file_name()?.to_string_lossy();
        Some((dir, name.split('.').next().unwrap_or("").to_string()))
    };
    let copy = module(definition)?;
    plan.edited.keys().find_map(|edited| {
        let tail: PathBuf = edited.components().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
        (module(edited).as_ref() == Some(&copy)).then(|| {
            format!(
                "the server resolves them to {}, a copy or stub of {} outside the project's sources (an installed package, typeshed), so it cannot rename them; where they run against this project they still use the old name",
                definition.display(),
                tail.display()
            )
        })
    })
}

/// Whether a 1-indexed line and character column lies inside one of the
/// edit's ranges that renames: not one whose new text keeps the old name (a
/// shorthand property or a destructuring made `{ key: old }`, whose binding
/// keeps its name).
fn renamed_at(plan: &Plan, old: &str, path: &Path, line: u32, column: u32) -> bool {
    let Some((text, spans)) = plan.edited.get(path) else { return false };
    let Some(line_start) = crate::encoding::line_starts(text).get(line as usize - 1).copied() else { return false };
    let line_text = &text[line_start..];
    let byte = line_start + line_text.char_indices().nth(column as usize - 1).map_or(line_text.len(), |(i, _)| i);
    // An insertion (`z: ` before a shorthand field) renames nothing where it stands.
    spans.iter().any(|(s, e, new)| *s <= byte && byte < *e && occurrences(new, old).is_empty())
}

/// [`Supervisor::rename`].
pub(crate) async fn rename(
    sup: &Supervisor,
    path: &Path,
    line: u32,
    symbol: &str,
    new_name: &str,
) -> Result<RenameOutcome> {
    if let Some(why) = not_an_identifier(new_name) {
        return Err(Error::BadName { name: new_name.to_string(), why });
    }
    let target = sup.target(path, line, symbol).await?;
    let server = Arc::clone(&target.server);
    if !server.supports::<req::Rename>() {
        return Err(Error::Unsupported { server: server.spec.id, what: "rename" });
    }
    // A rename that reaches only the open files would leave the others calling the old name.
    if let Some(why) = server.spec.missing_index(&server.root) {
        return Err(Error::EditRefused(format!(
            "{why}: a rename would change only those and break the rest; create a compilation database \
             (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: bear -- make) and try again"
        )));
    }
    let file_lines = crate::navigation::read_lines(path).await;
    let line_text = file_lines.get(line as usize - 1).cloned().unwrap_or_default();
    let byte = from_lsp_column(&line_text, target.position.character, server.encoding);
    let old = identifier_around(&line_text, byte).to_string();
    let (mut at_path, mut at_position, mut asked_at) = (path.to_path_buf(), target.position, None);
    if server.spec.renames_at_declaration
        && let Some((decl, position)) = sup.declaration_elsewhere(&server, path, target.position).await
    {
        (at_path, at_position) = (decl.path.clone(), position);
        asked_at = Some(decl);
    }
    let root = sup.config().root.clone();
    // Asked again once when the edit misses uses the server itself resolves to the symbol.
    let mut asked_again = false;
    loop {
        let params = lsp_types::RenameParams {
            text_document_position: at(&at_path, at_position),
            new_name: new_name.to_string(),
            work_done_progress_params: Default::default(),
        };
        let Some(edit) = sup.query::<req::Rename>(&server, params).await? else {
            return Err(Error::NothingToRename { server: server.spec.id, symbol: symbol.to_string() });
        };
        let plan = plan_workspace_edit(&root, edit, server.encoding)?;
        if let Some((file, line, held)) = plan.stale_edit(&old) {
            sup.files_changed(&[(file.clone(), FileChange::Changed)]).await;
            return Err(Error::StaleView { server: server.spec.id, path: file, line, held, expected: old });
        }
        let scan = sup.leftovers(&server, &plan, &old).await;
        if !scan.missed.is_empty() {
            let changed: Vec<(PathBuf, FileChange)> = {
                let mut files: Vec<PathBuf> = scan.missed.iter().map(|l| l.location.path.clone()).collect();
                files.dedup();
                files.into_iter().map(|f| (f, FileChange::Changed)).collect()
            };
            sup.files_changed(&changed).await;
            if !asked_again {
                asked_again = true;
                continue;
            }
            let missed: Vec<String> =
                scan.missed.iter().map(|l| format!("{}:{}", l.location.path.display(), l.location.line)).collect();
            return Err(Error::IncompleteRename { server: server.spec.id, symbol: old, missed: missed.join(", ") });
        }
        let kept_aliases = kept_aliases(&plan, &old);
        let edits = plan.edits;
        let changes = plan.commit()?;
        if changes.is_empty() {
            return Err(Error::NothingToRename { server: server.spec.id, symbol: symbol.to_string() });
        }
        sup.files_changed(&changes).await;
        let files = changes
            .iter()
            .map(|(path, change)| ChangedFile {
                path: path.clone(),
                change: match change {
                    FileChange::Created => "created",
                    FileChange::Changed => "changed",
                    FileChange::Deleted => "deleted",
                },
            })
            .collect();
        return Ok(RenameOutcome {
            server: server.spec.id,
            cursor: target.cursor,
            old_name: old,
            asked_at,
            files,
            edits,
            not_covered: scan.not_covered,
            unresolved: scan.unresolved,
            other_symbols: scan.other_symbols,
            unchecked: scan.unchecked,
            kept_aliases,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_name_is_the_whole_identifier_at_the_cursor() {
        assert_eq!(identifier_around("    self.items.len()", 9), "items");
        assert_eq!(identifier_around("fn total_area(x)", 8), "total_area");
        assert_eq!(identifier_around("fn f<'a>(x: &'a str)", 6), "'a");
        assert_eq!(identifier_around("$el = 1", 0), "$el");
    }

    #[test]
    fn occurrences_are_whole_identifiers_with_their_lines() {
        let text = "def to_key(x):\n    return to_key_val(x) + to_key(x)\n# to_key\n";
        let found: Vec<(usize, usize)> = occurrences(text, "to_key").into_iter().map(|(l, b, _)| (l, b)).collect();
        assert_eq!(found, [(0, 4), (1, 27), (2, 2)]);
    }

    #[test]
    fn an_edit_that_keeps_the_old_name_as_an_alias_says_where() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::write(root.join("index.ts"), "export {\n\tisHTTPError,\n} from './guards.js';\n")?;
        let uri = crate::uri::path_to_uri(&root.join("index.ts"));
        let edit = serde_json::json!({ "changes": { uri: [{
            "range": { "start": { "line": 1, "character": 1 }, "end": { "line": 1, "character": 12 } },
            "newText": "isHttpError as isHTTPError"
        }] } });
        let plan = crate::edit::plan_json(&root, &edit, crate::encoding::PositionEncoding::Utf16)?;
        let kept = kept_aliases(&plan, "isHTTPError");
        assert_eq!(kept.len(), 1);
        assert_eq!((kept[0].line, kept[0].column, kept[0].end_column), (2, 2, 13));
        assert_eq!(kept[0].text, "isHttpError as isHTTPError");
        assert!(kept_aliases(&plan, "isHttpError").is_empty(), "an alias of another name is not this one's");
        Ok(())
    }
}
