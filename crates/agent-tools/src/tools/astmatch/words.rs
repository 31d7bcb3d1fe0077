//! The text the model reads of each result, worded beside its structured value.

use std::path::Path;

use astmatch::{ParseCache, SearchReport, StagedEdit};

use crate::result::ToolResult;

use super::input::ResolveAction;
use super::output::*;

pub(super) fn verb(action: ResolveAction) -> &'static str {
    match action {
        ResolveAction::Accept => "accept",
        ResolveAction::Discard => "discard",
    }
}

/// A search's or staging's error as the model reads it: a file over the size limit is
/// told with the setting that raises it.
pub(super) fn error_text(error: &astmatch::Error) -> String {
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
pub(super) fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

pub(super) fn search_result(report: &SearchReport, pattern: &str, cache: &ParseCache) -> ToolResult {
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
pub(super) fn words_line(found: &astmatch::WordPlaces) -> String {
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

pub(super) fn staged_result(staged: &StagedEdit) -> ToolResult {
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

/// The line that says a pattern was matched from its error-recovered parse.
pub(super) fn recovery_line(note: &str) -> String {
    format!(
        "\nnote: pattern parsed only with error recovery ({note}); matched as ast-grep matches it: a missing token is left out and the code may go on there, and an ERROR node matches any node with the same leading children (docs/patterns.md)"
    )
}

/// `statement`, or `statement and type` when the pattern parsed in several contexts.
pub(super) fn contexts_text(contexts: &[astmatch::Context]) -> String {
    let names: Vec<&str> = contexts.iter().map(|c| c.as_str()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

pub(super) fn skipped_line(skipped: &astmatch::Skipped) -> Option<String> {
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
pub(super) fn first_line(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed.split_once('\n') {
        Some((first, _)) => format!("{} …", first.trim_end()),
        None => trimmed.to_string(),
    }
}

/// `n thing` or `n things` (`match` → `matches`).
pub(super) fn plural(n: usize, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        _ if thing.ends_with("ch") => format!("{n} {thing}es"),
        _ => format!("{n} {thing}s"),
    }
}

/// A relative path with `/` separators, as shown to models.
pub(super) fn slash(path: &Path) -> String {
    path.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}
