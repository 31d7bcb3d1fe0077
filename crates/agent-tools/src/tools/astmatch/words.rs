//! The text the model reads of each result, worded from its value.

use std::path::Path;

use crate::tool::Words;

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

impl Words for AstGrepOutput {
    fn words(&self) -> String {
        let lang = self.language;
        let shown = self.matches.len();
        let mut text = if self.total == 0 && self.files_searched == 0 && skipped_total(&self.skipped) == 0 {
            // Nothing was searched: say so, rather than a bare "no matches".
            let extensions = astmatch::Lang::from_id(lang).map(|l| l.extensions()).unwrap_or_default();
            format!(
                "nothing searched: no {lang} files ({}) in this scope",
                extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ")
            )
        } else if self.total == 0 && self.files_searched == 0 {
            // Every file was skipped: no "no matches" about files that were not read.
            format!(
                "nothing searched: every {lang} file in this scope was skipped (listed below), so `{}` was not looked for",
                first_line(&self.pattern)
            )
        } else if self.total == 0 {
            format!(
                "no matches for `{}` in {} (pattern parsed as {}, {lang})",
                first_line(&self.pattern),
                plural(self.files_searched, &format!("{lang} file")),
                contexts_text(&self.contexts),
            )
        } else {
            format!(
                "{} (showing {shown}) in {}, pattern parsed as {} ({lang})",
                plural(self.total, "match"),
                plural(self.files_matched, "file"),
                contexts_text(&self.contexts),
            )
        };
        if let Some(note) = &self.recovered {
            text.push_str(&recovery_line(note));
        }
        if let Some(found) = &self.words_found {
            text.push_str(&words_line(found));
        }
        let several_contexts = self.contexts.len() > 1;
        for m in &self.matches {
            text.push_str(&format!("\n{}:{}:{}: {}", m.file, m.line, m.column, first_line(&m.text)));
            if !m.captures.is_empty() {
                let captures: Vec<String> = m
                    .capture_order
                    .iter()
                    .filter_map(|name| m.captures.get(name).map(|c| (name, c)))
                    .map(|(name, c)| match c {
                        CaptureOutput::Multi { text, .. } => format!("$$${name} = {}", first_line(text)),
                        CaptureOutput::Single { text, .. } => format!("${name} = {}", first_line(text)),
                    })
                    .collect();
                text.push_str(&format!("  [{}]", captures.join(", ")));
            }
            if several_contexts {
                text.push_str(&format!("  ({})", m.context));
            }
        }
        if self.total > shown {
            text.push_str(&format!(
                "\n… {} not shown; narrow `path` or raise `max_results`",
                plural(self.total - shown, "more match")
            ));
        }
        if let Some(line) = skipped_line(&self.skipped) {
            text.push('\n');
            text.push_str(&line);
        }
        if let Some(error) = self.parse_cache.store.as_ref().and_then(|s| s.error.as_ref()) {
            text.push_str(&format!(
                "\nnote: the tree store keeps no trees ({error}); set `search.tree_store` to a writable directory, or `search.tree_store_mb = 0` to turn it off"
            ));
        }
        if let Some(m) = &self.in_macros {
            text.push_str(&format!(
                "\nnote: `{}` also occurs {} inside macro invocations (`assert!(…)`, `vec![…]`), whose bodies are token trees that a pattern does not match into, so those places were not searched; a one-identifier pattern (`{}`) or a text search finds them",
                m.word,
                plural(m.count, "time"),
                m.word
            ));
        }
        text
    }
}

/// The line that says where a recovered pattern that matched nothing has its words.
fn words_line(found: &WordsFoundOutput) -> String {
    let words = found.words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ");
    match &found.first {
        None => format!("\nnote: no file searched holds all of the pattern's words ({words})"),
        Some(first) => format!(
            "\nnote: the pattern's words ({words}) are all in {}, where `{}` occurs {}; the first is {}:{}:{}: {}; the recovered pattern matches none of them, so write it as code that parses there (e.g. with its body)",
            plural(found.files, "file"),
            found.words.first().map_or("", String::as_str),
            plural(found.places, "time"),
            first.file,
            first.line,
            first.column,
            first.text
        ),
    }
}

impl Words for AstEditOutput {
    fn words(&self) -> String {
        let lang = self.language;
        let mut text = match &self.edit_id {
            None if !self.refused.is_empty() => format!(
                "refused: the rewrite would leave every file it changes unparseable ({}); nothing was staged",
                plural(self.refused.len(), "file")
            ),
            None if self.matches == 0 => format!(
                "nothing to change: the pattern (parsed as {}, {lang}) matched nothing in {}",
                contexts_text(&self.contexts),
                plural(self.files_searched, "file")
            ),
            None => format!(
                "nothing to change: the pattern (parsed as {}, {lang}) matched {}, and the rewrite leaves each as it is",
                contexts_text(&self.contexts),
                plural(self.matches, "time")
            ),
            Some(id) => {
                let mut check = format!("re-parsed {}: ", plural(self.files.len(), "file"));
                if self.unchecked.is_empty() {
                    check.push_str("all still parse");
                } else {
                    check.push_str(&format!(
                        "{} still parse, and {} already had parse errors before the rewrite, so the re-parse cannot tell about {}: {}",
                        self.checked,
                        plural(self.unchecked.len(), "file"),
                        if self.unchecked.len() == 1 { "it" } else { "them" },
                        self.unchecked.join(", ")
                    ));
                }
                let refused = if self.refused.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} not staged, because the rewrite would break {} parse (listed at the end)",
                        plural(self.refused.len(), "file"),
                        if self.refused.len() == 1 { "its" } else { "their" }
                    )
                };
                let mut text = format!(
                    "(proposed) {} in {} (pattern parsed as {}, {lang}); {check}{refused}; nothing is written yet — call resolve with edit_id \"{id}\" to accept or discard",
                    plural(self.replacements, "replacement"),
                    plural(self.files.len(), "file"),
                    contexts_text(&self.contexts),
                );
                for file in &self.files {
                    text.push_str("\n\n");
                    text.push_str(file.diff.trim_end());
                }
                text
            }
        };
        if let Some(note) = &self.recovered {
            text.push_str(&recovery_line(note));
        }
        let dropped: Vec<String> = self
            .files
            .iter()
            .flat_map(|f| f.dropped_comments.iter().map(move |line| format!("{}:{line}", f.path)))
            .collect();
        if !dropped.is_empty() {
            let shown: Vec<&str> = dropped.iter().take(10).map(String::as_str).collect();
            let more = if dropped.len() > 10 { format!(" and {} more", dropped.len() - 10) } else { String::new() };
            let one = dropped.len() == 1;
            text.push_str(&format!(
                "\n\nnote: {} inside matched code but outside every capture {} not kept, since the rewrite takes {} place: {}{more}; to keep {}, capture {} with a metavariable",
                plural(dropped.len(), "comment"),
                if one { "is" } else { "are" },
                if one { "its" } else { "their" },
                shown.join(", "),
                if one { "it" } else { "them" },
                if one { "it" } else { "them" },
            ));
        }
        if !self.refused.is_empty() {
            let header = if self.edit_id.is_some() {
                format!(
                    "\n\nnot staged: {} whose rewritten text would not parse (the other files are staged as shown):",
                    plural(self.refused.len(), "file")
                )
            } else {
                "\n\nwhere each would break:".to_string()
            };
            text.push_str(&header);
            for r in &self.refused {
                text.push_str(&format!(
                    "\n  {}:{}:{}: {} in `{}`, from the replacement of the match at line {} (`{}`)",
                    r.path, r.line, r.column, r.node, r.code, r.match_line, r.replacement
                ));
            }
            text.push_str(
                "\nadjust the pattern or rewrite so the new code parses, or narrow `path` to leave those files out",
            );
        }
        if let Some(line) = skipped_line(&self.skipped) {
            text.push('\n');
            text.push_str(&line);
        }
        text
    }

    /// Nothing staged because every changed file would break: an error the model reads.
    fn is_error(&self) -> bool {
        self.edit_id.is_none() && !self.refused.is_empty()
    }
}

impl Words for ResolveOutput {
    fn words(&self) -> String {
        let id = &self.edit_id;
        match self.action {
            ResolveAction::Accept => {
                let mut text = format!(
                    "accepted {id}: {} written to {}",
                    plural(self.replacements, "replacement"),
                    plural(self.files.len(), "file")
                );
                for file in &self.files {
                    text.push_str(&format!("\n  {file}"));
                }
                text
            }
            ResolveAction::Discard => format!("discarded {id}; nothing was written"),
        }
    }
}

/// The line that says a pattern was matched from its error-recovered parse.
fn recovery_line(note: &str) -> String {
    format!(
        "\nnote: pattern parsed only with error recovery ({note}); matched as ast-grep matches it: a missing token is left out and the code may go on there, and an ERROR node matches any node with the same leading children (docs/patterns.md)"
    )
}

/// `statement`, or `statement and type` when the pattern parsed in several contexts.
fn contexts_text(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

fn skipped_total(skipped: &SkippedOutput) -> usize {
    skipped.binary + skipped.not_utf8 + skipped.too_large + skipped.unreadable
}

fn skipped_line(skipped: &SkippedOutput) -> Option<String> {
    let total = skipped_total(skipped);
    if total == 0 {
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
    Some(format!("skipped {}: {}", plural(total, "file"), reasons.join(", ")))
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
