//! Parse trees kept between searches of one run, or of all the runs of a host.
//!
//! A search parses every file that passes the pre-filter; a run that searches the
//! same files again (another pattern, or a rewrite after a search) reuses the trees
//! of files whose text is unchanged. Each lookup reads the file and compares its bytes
//! with the text kept with the tree, so a change is never missed, whatever the file's
//! size and time stamps say (reading is cheap beside parsing).
//!
//! What is kept is a [`FlatTree`], the matcher's compact copy of tree-sitter's tree
//! (about 4.5 bytes per byte of source, against some 30 for tree-sitter's own), with
//! the text. The cache is capped in bytes, counted exactly; once full it keeps what it
//! holds and admits nothing more (a scan over more files than fit would otherwise
//! evict everything it is about to need again).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::lang::Lang;
use crate::store::{StoreStats, TreeStore};
use crate::syntax::FlatTree;

/// The default cap: 256 MiB (the flat trees and texts of about 45 MB of source).
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// Memory per byte of source that a file is expected to need at most, flat tree and
/// text together: checked before a tree is copied, so a full cache costs no copying.
/// (Python and Rust take about 5.5; what is charged is the exact size.)
const EXPECTED_BYTES_PER_SOURCE_BYTE: usize = 8;

/// What an entry costs beside its text and tree: its path and the map's slot.
const ENTRY_BYTES: usize = 128;

/// A cache of parsed files, shared by the searches of one run (or a host's runs); safe to share between threads.
pub struct ParseCache {
    cap: usize,
    state: Mutex<State>,
    store: Option<TreeStore>,
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
    source: Arc<str>,
    tree: Arc<FlatTree>,
    cost: usize,
}

/// How a cache is used, for `status` lines and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Files whose trees are held.
    pub files: usize,
    /// Bytes held: texts, flat trees and entries.
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
        ParseCache { cap: cap_bytes, state: Mutex::new(State::default()), store: None }
    }

    /// The same cache, backed by a store on disk: a file missing from memory is
    /// loaded from the store when its bytes were parsed before (by this process or
    /// another), and a file parsed is written to the store.
    pub fn with_store(self, store: TreeStore) -> ParseCache {
        ParseCache { store: Some(store), ..self }
    }

    /// The store on disk, if any.
    pub(crate) fn store(&self) -> Option<&TreeStore> {
        self.store.as_ref()
    }

    /// How the store on disk was used by this process, if there is one.
    pub fn store_stats(&self) -> Option<StoreStats> {
        self.store.as_ref().map(TreeStore::stats)
    }

    /// Whether a parse of a file of `source_len` bytes should be copied flat: it is
    /// likely to fit in memory or in the store.
    pub(crate) fn wants_copy(&self, source_len: usize) -> bool {
        self.has_room(source_len) || self.store.as_ref().is_some_and(|s| s.has_room(source_len))
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

    /// The kept text and tree of `path` parsed as `lang`, if the text is `bytes`, the file as read now.
    pub(crate) fn get(&self, path: &Path, lang: Lang, bytes: &[u8]) -> Option<(Arc<str>, Arc<FlatTree>)> {
        let mut state = self.lock();
        let found = state
            .entries
            .get(path)
            .filter(|e| e.lang == lang && e.source.as_bytes() == bytes)
            .map(|e| (Arc::clone(&e.source), Arc::clone(&e.tree)));
        match found {
            Some(_) => state.hits += 1,
            None => state.misses += 1,
        }
        found
    }

    /// Whether a file of `source_len` bytes is likely to fit: worth copying its tree for [`ParseCache::put`].
    pub(crate) fn has_room(&self, source_len: usize) -> bool {
        let expected = source_len.saturating_mul(EXPECTED_BYTES_PER_SOURCE_BYTE).saturating_add(ENTRY_BYTES);
        self.lock().bytes.saturating_add(expected) <= self.cap
    }

    /// Keeps a parsed file, replacing an older entry; nothing is kept once the cap is reached.
    pub(crate) fn put(&self, path: &Path, lang: Lang, source: Arc<str>, tree: Arc<FlatTree>) {
        let cost = source.len() + tree.heap_bytes() + ENTRY_BYTES + path.as_os_str().len();
        let mut state = self.lock();
        if let Some(old) = state.entries.remove(path) {
            state.bytes -= old.cost;
        }
        if state.bytes.saturating_add(cost) > self.cap {
            return;
        }
        state.bytes += cost;
        state.entries.insert(path.to_path_buf(), Entry { lang, source, tree, cost });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseCache").field("stats", &self.stats()).field("store", &self.store).finish()
    }
}
