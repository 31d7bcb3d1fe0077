//! Parse trees kept between searches of one run, or of all the runs of a host.
//!
//! A search parses every file that passes the pre-filter; a run that searches the
//! same files again (another pattern, or a rewrite after a search) reuses the trees
//! of files whose size and modification time are unchanged. The cache is capped in
//! bytes; once full it keeps what it holds and admits nothing more (a scan over more
//! files than fit would otherwise evict everything it is about to need again).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tree_sitter::Tree;

use crate::lang::Lang;

/// The default cap: 256 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// Approximate memory of a parse tree per byte of source, as measured: a `serve` run
/// holding the trees of 24 MB of the Python standard library peaked at 805 MB, some 745 MB
/// above the same run without them (tree-sitter keeps a node of tens of bytes for every
/// few bytes of code).
const TREE_BYTES_PER_SOURCE_BYTE: usize = 30;

/// A cache of parsed files, shared by the searches of one run (or a host's runs); safe to share between threads.
pub struct ParseCache {
    cap: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: HashMap<PathBuf, Entry>,
    bytes: usize,
    hits: u64,
    misses: u64,
}

struct Entry {
    lang: Lang,
    len: u64,
    modified: SystemTime,
    source: Arc<str>,
    tree: Tree,
    cost: usize,
}

/// How a cache is used, for `status` lines and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Files whose trees are held.
    pub files: usize,
    /// Estimated bytes held (source plus tree).
    pub bytes: usize,
    /// The cap in bytes.
    pub cap: usize,
    /// Lookups that found a current tree.
    pub hits: u64,
    /// Lookups that parsed the file.
    pub misses: u64,
}

impl ParseCache {
    /// A cache holding at most about `cap_bytes` of sources and trees; `0` caches nothing.
    pub fn new(cap_bytes: usize) -> ParseCache {
        ParseCache { cap: cap_bytes, state: Mutex::new(State::default()) }
    }

    /// What the cache holds and how it was used.
    pub fn stats(&self) -> CacheStats {
        let state = self.lock();
        CacheStats {
            files: state.entries.len(),
            bytes: state.bytes,
            cap: self.cap,
            hits: state.hits,
            misses: state.misses,
        }
    }

    /// The source and tree of `path` parsed as `lang`, if the file's size and
    /// modification time are those it had when it was cached.
    pub(crate) fn get(&self, path: &Path, lang: Lang, len: u64, modified: SystemTime) -> Option<(Arc<str>, Tree)> {
        let mut state = self.lock();
        let found = state
            .entries
            .get(path)
            .filter(|e| e.lang == lang && e.len == len && e.modified == modified)
            .map(|e| (Arc::clone(&e.source), e.tree.clone()));
        match found {
            Some(_) => state.hits += 1,
            None => state.misses += 1,
        }
        found
    }

    /// Keeps a parsed file, replacing an older entry; nothing is kept once the cap is reached.
    pub(crate) fn put(&self, path: &Path, lang: Lang, len: u64, modified: SystemTime, source: Arc<str>, tree: Tree) {
        let cost = source.len().saturating_mul(TREE_BYTES_PER_SOURCE_BYTE + 1);
        let mut state = self.lock();
        if let Some(old) = state.entries.remove(path) {
            state.bytes -= old.cost;
        }
        if state.bytes.saturating_add(cost) > self.cap {
            return;
        }
        state.bytes += cost;
        state.entries.insert(path.to_path_buf(), Entry { lang, len, modified, source, tree, cost });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseCache").field("stats", &self.stats()).finish()
    }
}
