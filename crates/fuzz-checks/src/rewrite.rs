//! The matcher and the rewriter, on any pattern, template and source.

use astmatch::{Lang, Pattern, Reparse};

/// The language a selector byte picks.
fn lang(selector: u8) -> Lang {
    Lang::ALL[usize::from(selector) % Lang::ALL.len()]
}

/// Whether `source` parses without an error or missing node in `lang`'s grammar.
fn parses_clean(lang: Lang, source: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).unwrap_or_else(|error| panic!("{lang:?} grammar: {error}"));
    parser.parse(source, None).is_some_and(|tree| !tree.root_node().has_error())
}

fn check_range(source: &str, range: &std::ops::Range<usize>, what: &str) {
    assert!(range.start <= range.end && range.end <= source.len(), "{what} {range:?} outside {} bytes", source.len());
    assert!(
        source.is_char_boundary(range.start) && source.is_char_boundary(range.end),
        "{what} {range:?} splits a character"
    );
}

/// Input: language selector, pattern, NUL, source.
///
/// A pattern compiles or is refused with an error; every match and capture range lies
/// inside the source on character boundaries, captures inside their match, and matches
/// come in source order.
pub fn pattern_match(data: &[u8]) {
    let Some((selector, fields)) = super::fields(data, 2) else { return };
    let lang = lang(selector);
    let Ok(pattern) = Pattern::compile(&fields[0], lang) else { return };
    let source = &fields[1];
    let matches = astmatch::search_source(&pattern, source);
    let mut previous = 0;
    for found in &matches {
        check_range(source, &found.range, "match");
        assert!(found.range.start >= previous, "matches out of order at {:?}", found.range);
        previous = found.range.start;
        for capture in &found.captures {
            check_range(source, &capture.range, "capture");
            if !capture.multi {
                assert!(
                    found.range.start <= capture.range.start && capture.range.end <= found.range.end,
                    "capture ${} {:?} outside its match {:?}",
                    capture.name,
                    capture.range,
                    found.range
                );
            }
            for node in &capture.nodes {
                check_range(source, node, "captured node");
            }
        }
    }
}

/// Input: language selector, pattern, NUL, template, NUL, source.
///
/// The rewrite's re-parse is truthful: a source that parsed clean gives a text that
/// parses clean (`Clean`) or a refusal naming the break (`Broken`), never a broken text
/// called clean; a source with errors is `Unchecked`. No match leaves the text as it was.
pub fn rewrite_stage(data: &[u8]) {
    let Some((selector, fields)) = super::fields(data, 3) else { return };
    let lang = lang(selector);
    let Ok(pattern) = Pattern::compile(&fields[0], lang) else { return };
    let (template, source) = (&fields[1], &fields[2]);
    let Ok(rewrite) = astmatch::rewrite_text(&pattern, source, template) else { return };
    if rewrite.matches == 0 {
        assert_eq!(rewrite.text, *source, "no match, yet the text changed");
        assert_eq!(rewrite.replacements, 0);
    }
    if rewrite.text == *source {
        // Nothing changed, so nothing could break: astmatch calls that `Clean`.
        assert_eq!(rewrite.check, Reparse::Clean, "an unchanged text with a re-parse verdict");
        return;
    }
    let before = parses_clean(lang, source);
    match &rewrite.check {
        Reparse::Unchecked => assert!(!before, "the source parses clean, yet the re-parse was skipped"),
        Reparse::Clean => {
            assert!(before, "the source has parse errors, yet the changed text was called clean");
            assert!(
                parses_clean(lang, &rewrite.text),
                "called clean, but the rewritten text does not parse:\n{}",
                rewrite.text
            );
        }
        Reparse::Broken(error) => {
            assert!(before, "the source has parse errors, yet the re-parse says broken");
            // Besides parse errors, a shape the grammar accepts and the language does not
            // (a new one) is refused too; then the text parses and the node names the shape.
            let parse_error = error.node == "ERROR" || error.node.starts_with("MISSING");
            assert_eq!(
                parse_error,
                !parses_clean(lang, &rewrite.text),
                "refused as {} at {}:{}, and the rewritten text {}",
                error.node,
                error.line,
                error.column,
                if parse_error { "parses" } else { "does not parse" }
            );
            assert!(error.line >= 1 && error.column >= 1, "0-based error position {error:?}");
        }
    }
}
