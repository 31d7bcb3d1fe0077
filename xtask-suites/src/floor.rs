//! The parse floor: parse every file of one language under a directory, in parallel,
//! with no matching. A search that parses every file cannot be faster than this;
//! ours beats it only by not parsing files the pre-filter rules out.
//!
//! It walks like `astmatch::search` does (the `ignore` crate's parallel walker with
//! its default thread count, `.gitignore` honoured, hidden files skipped).

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use anyhow::{Result, anyhow};
use astmatch::Lang;

/// What one floor run parsed.
pub(crate) struct Parsed {
    pub(crate) files: usize,
    pub(crate) bytes: u64,
}

pub(crate) fn parse_all(lang: Lang, dir: &Path) -> Result<Parsed> {
    let files = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    thread_local! {
        static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
    }
    let grammar = lang.grammar();
    ignore::WalkBuilder::new(dir).build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) || Lang::from_path(entry.path()) != Some(lang) {
                return ignore::WalkState::Continue;
            }
            let Ok(source) = std::fs::read(entry.path()) else { return ignore::WalkState::Continue };
            PARSER.with(|cell| {
                let mut slot = cell.borrow_mut();
                let parser = slot.get_or_insert_with(|| {
                    let mut parser = tree_sitter::Parser::new();
                    // The grammars ship with astmatch and load into its tree-sitter.
                    let _ = parser.set_language(&grammar);
                    parser
                });
                if parser.parse(&source, None).is_some() {
                    files.fetch_add(1, Ordering::Relaxed);
                    bytes.fetch_add(source.len() as u64, Ordering::Relaxed);
                }
            });
            ignore::WalkState::Continue
        })
    });
    let parsed = Parsed { files: files.into_inner(), bytes: bytes.into_inner() };
    if parsed.files == 0 {
        return Err(anyhow!("no {} files parsed under {}", lang.id(), dir.display()));
    }
    Ok(parsed)
}
