//! Parse trees kept on disk, for the searches of later processes.
//!
//! Each `agent-tools call` is a new process, and so is each run of a runtime that
//! starts one per task: without a store every search of theirs parses every file it
//! reads again. The store keeps the [`FlatTree`] of each file parsed, in a file named
//! by the SHA-256 of the source's bytes, the language and this build (grammar and executable); a
//! search that reads the same bytes again loads the tree instead of parsing. A file
//! whose text changed has another name, so no stale tree is ever read, and nothing
//! depends on time stamps or a watcher.
//!
//! Entries are written whole (a temporary file, then a rename), so a reader sees an
//! entry completely or not at all, however many processes share the directory. An
//! entry holds the SHA-256 of its tree's bytes, checked on every read; one whose
//! bytes do not match, or that is not a well-formed tree for its source, is not
//! used: the file is parsed, and the entry written again.
//! The directory is capped in bytes: a process that finds it full removes the
//! entries used least recently (by modification time, renewed when an entry is read
//! and its time is over a minute old), never one used in the last minute, until a
//! quarter of the cap is free, at most once a minute; until then it writes nothing.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::lang::Lang;
use crate::syntax::FlatTree;

/// The default cap of a store: 1 GiB (the trees of about 190 MB of source).
pub const DEFAULT_STORE_BYTES: u64 = 1 << 30;

/// The first bytes of every entry; the last two say the format's version.
const MAGIC: &[u8; 8] = b"ATFLAT\x00\x01";

/// Bytes of an entry per byte of source that a file is expected to need at most
/// (Python and Rust take about 4.5).
const EXPECTED_BYTES_PER_SOURCE_BYTE: u64 = 6;

/// An entry read this long after it was last renewed gets a new modification time.
const RENEW_AFTER: Duration = Duration::from_secs(60);

/// Parse trees on disk, shared by every process that opens the same directory; safe to share between threads.
pub struct TreeStore {
    dir: PathBuf,
    cap: u64,
    state: Mutex<State>,
    loaded: AtomicU64,
    written: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Bytes of the entries, summed when this process first asked for room; `None` before.
    used: Option<u64>,
    /// When this process last made room.
    trimmed: Option<SystemTime>,
    /// The first write that failed, and why.
    error: Option<String>,
}

/// How a store was used by this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreStats {
    /// The directory.
    pub dir: PathBuf,
    /// The cap in bytes.
    pub cap: u64,
    /// Trees loaded instead of parsed.
    pub loaded: u64,
    /// Trees written.
    pub written: u64,
    /// Why the first write that failed did (the directory cannot be made, a read-only
    /// or full disk): the search goes on, parsing, and keeps nothing there.
    pub error: Option<String>,
}

impl TreeStore {
    /// A store in `dir` (created when first written) holding at most about `cap_bytes`.
    pub fn new(dir: impl Into<PathBuf>, cap_bytes: u64) -> TreeStore {
        TreeStore {
            dir: dir.into(),
            cap: cap_bytes,
            state: Mutex::new(State::default()),
            loaded: AtomicU64::new(0),
            written: AtomicU64::new(0),
        }
    }

    /// `$XDG_CACHE_HOME/agent-tools/trees`, else `~/.cache/agent-tools/trees`, else
    /// `agent-tools/trees` in the temporary directory.
    pub fn default_dir() -> PathBuf {
        std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir)
            .join("agent-tools")
            .join("trees")
    }

    /// The directory, its cap, and what this process loaded and wrote.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            dir: self.dir.clone(),
            cap: self.cap,
            loaded: self.loaded.load(Ordering::Relaxed),
            written: self.written.load(Ordering::Relaxed),
            error: self.lock().error.clone(),
        }
    }

    /// The stored tree of the source `key` was made from ([`StoreKey::new`]), if there
    /// is one and it is well formed.
    pub(crate) fn load(&self, key: &StoreKey, source: &str) -> Option<FlatTree> {
        let StoreKey { lang, digest: key } = *key;
        let path = self.entry_path(&key);
        let mut file = std::fs::File::open(&path).ok()?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
        let rest = bytes.strip_prefix(MAGIC.as_slice())?.strip_prefix(key.as_slice())?;
        let (digest, body) = rest.split_first_chunk::<32>()?;
        if Sha256::digest(body).as_slice() != digest.as_slice() {
            return None;
        }
        let tree = FlatTree::from_bytes(&lang.grammar(), body, source)?;
        let renew = file.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if renew.is_some_and(|age| age > RENEW_AFTER) {
            let _ = file.set_modified(SystemTime::now());
        }
        self.loaded.fetch_add(1, Ordering::Relaxed);
        Some(tree)
    }

    /// Whether a tree of a file of `source_len` bytes is likely to fit (making room
    /// first, when the store is full and this process has not tried in the last minute).
    pub(crate) fn has_room(&self, source_len: usize) -> bool {
        let expected = (source_len as u64).saturating_mul(EXPECTED_BYTES_PER_SOURCE_BYTE);
        self.make_room(&mut self.lock(), expected)
    }

    /// Writes `tree`, parsed from the source `key` was made from, unless the store is
    /// full; errors (a read-only or full disk) leave the store as it was.
    pub(crate) fn save(&self, key: &StoreKey, tree: &FlatTree) {
        // The entry's size, known before it is made: header, digests, then the tree's bytes.
        let size = (MAGIC.len() + 64 + 4 + tree.heap_bytes()) as u64;
        {
            let mut state = self.lock();
            if !self.make_room(&mut state, size) {
                return;
            }
            // Counted before the write, so threads writing at once stay under the cap.
            state.used = state.used.map(|u| u + size);
        }
        let key = key.digest;
        // The header, a place for the tree's digest, then the tree, in one buffer.
        let mut bytes = Vec::with_capacity(size as usize);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&key);
        let at = bytes.len();
        bytes.extend_from_slice(&[0; 32]);
        tree.to_bytes(&mut bytes);
        let digest = Sha256::digest(&bytes[at + 32..]);
        bytes[at..at + 32].copy_from_slice(&digest);
        match self.write(&key, &bytes) {
            Ok(()) => {
                self.written.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                let mut state = self.lock();
                state.used = state.used.map(|used| used.saturating_sub(size));
                state.error.get_or_insert_with(|| format!("cannot write in {}: {error}", self.dir.display()));
            }
        }
    }

    /// Whether `size` more bytes fit. The entries' sizes are summed at the first call;
    /// when they do not fit, the store is trimmed, at most once a minute.
    fn make_room(&self, state: &mut State, size: u64) -> bool {
        let used = match state.used {
            Some(used) => used,
            None => *state.used.insert(self.scan().iter().map(|e| e.size).sum()),
        };
        if used.saturating_add(size) <= self.cap {
            return true;
        }
        let recently = state.trimmed.and_then(|t| t.elapsed().ok()).is_some_and(|age| age < RENEW_AFTER);
        if recently {
            return false;
        }
        state.trimmed = Some(SystemTime::now());
        let left = self.trim(self.cap - self.cap / 4);
        state.used = Some(left);
        left.saturating_add(size) <= self.cap
    }

    fn write(&self, key: &[u8; 32], bytes: &[u8]) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = self.entry_path(key);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temporary = dir.join(format!(".{}.{}.{n}.tmp", hex(&key[..8]), std::process::id()));
        let written = std::fs::File::create(&temporary).and_then(|mut f| f.write_all(bytes));
        let renamed = written.and_then(|()| std::fs::rename(&temporary, &path));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        renamed
    }

    /// Removes the entries used least recently, never one used in the last minute,
    /// until at most `target` bytes are left; returns the bytes left.
    fn trim(&self, target: u64) -> u64 {
        let mut entries = self.scan();
        let mut used: u64 = entries.iter().map(|e| e.size).sum();
        entries.sort_by_key(|e| e.modified);
        let now = SystemTime::now();
        for entry in entries {
            if used <= target {
                break;
            }
            let recent = now.duration_since(entry.modified).map_or(true, |age| age < RENEW_AFTER);
            if recent {
                break;
            }
            if std::fs::remove_file(&entry.path).is_ok() {
                used -= entry.size;
            }
        }
        used
    }

    /// Every entry and leftover temporary file, with its size and modification time.
    fn scan(&self) -> Vec<Found> {
        let mut found = Vec::new();
        let Ok(shards) = std::fs::read_dir(&self.dir) else { return found };
        for shard in shards.flatten() {
            let Ok(files) = std::fs::read_dir(shard.path()) else { continue };
            for file in files.flatten() {
                let Ok(meta) = file.metadata() else { continue };
                if meta.is_file() {
                    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push(Found { path: file.path(), size: meta.len(), modified });
                }
            }
        }
        found
    }

    fn entry_path(&self, key: &[u8; 32]) -> PathBuf {
        self.dir.join(hex(&key[..1])).join(hex(&key[1..]))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for TreeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeStore").field("stats", &self.stats()).finish()
    }
}

struct Found {
    path: PathBuf,
    size: u64,
    modified: SystemTime,
}

/// An entry's name: the SHA-256 of this build's identity for a language and of a
/// source. Made once per file, for its lookup and, on a miss, its write.
#[derive(Clone, Copy)]
pub(crate) struct StoreKey {
    lang: Lang,
    digest: [u8; 32],
}

impl StoreKey {
    pub(crate) fn new(lang: Lang, source: &str) -> StoreKey {
        let mut hasher = Sha256::new();
        hasher.update(build_identity(lang));
        hasher.update(source.as_bytes());
        StoreKey { lang, digest: hasher.finalize().into() }
    }
}

/// What a tree depends on besides its source: the store's format, this crate's
/// version, the grammar (its ABI, version where it declares one, parse-table size,
/// and every kind and field name), and the executable (its path, size and
/// modification time), so a rebuilt or upgraded binary never reads another build's
/// trees. In the Python module the executable is the interpreter: there the grammar's
/// own identity is what tells builds apart.
fn build_identity(lang: Lang) -> &'static [u8] {
    static IDENTITIES: OnceLock<Mutex<HashMap<Lang, &'static [u8]>>> = OnceLock::new();
    let mut identities = IDENTITIES.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    identities.entry(lang).or_insert_with(|| {
        let grammar = lang.grammar();
        let mut hasher = Sha256::new();
        hasher.update(MAGIC);
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(lang.id().as_bytes());
        hasher.update(grammar.abi_version().to_le_bytes());
        hasher.update(grammar.parse_state_count().to_le_bytes());
        if let Some(version) = grammar.metadata() {
            hasher.update([version.major_version, version.minor_version, version.patch_version]);
        }
        for id in 0..grammar.node_kind_count() as u16 {
            hasher.update(grammar.node_kind_for_id(id).unwrap_or("").as_bytes());
            hasher.update([0, u8::from(grammar.node_kind_is_named(id))]);
        }
        for id in 1..=grammar.field_count() as u16 {
            hasher.update(grammar.field_name_for_id(id).unwrap_or("").as_bytes());
            hasher.update([0]);
        }
        if let Ok(exe) = std::env::current_exe() {
            hasher.update(exe.as_os_str().as_encoded_bytes());
            if let Ok(meta) = std::fs::metadata(&exe) {
                hasher.update(meta.len().to_le_bytes());
                let modified = meta.modified().ok().and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
                hasher.update(modified.unwrap_or_default().as_nanos().to_le_bytes());
            }
        }
        let digest: [u8; 32] = hasher.finalize().into();
        Vec::leak(digest.to_vec())
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse(source: &str) -> FlatTree {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&Lang::Python.grammar()).unwrap();
        FlatTree::new(&parser.parse(source, None).unwrap()).unwrap()
    }

    fn entries(dir: &std::path::Path) -> usize {
        TreeStore::new(dir, 0).scan().len()
    }

    #[test]
    fn a_tree_is_loaded_only_for_the_same_bytes_and_only_when_intact() {
        let dir = tempfile::tempdir().unwrap();
        let store = TreeStore::new(dir.path(), 1 << 20);
        let source = "def f(a):\n    return a + 1\n";
        let tree = parse(source);
        store.save(&StoreKey::new(Lang::Python, source), &tree);
        assert_eq!(entries(dir.path()), 1);
        // Another process, the same directory.
        let later = TreeStore::new(dir.path(), 1 << 20);
        let loaded = later.load(&StoreKey::new(Lang::Python, source), source).expect("stored");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        tree.to_bytes(&mut a);
        loaded.to_bytes(&mut b);
        assert_eq!(a, b);
        assert_eq!(later.stats().loaded, 1);
        // Other bytes, or another language, have another entry.
        let other = "def f(a):\n    return a + 2\n";
        assert!(later.load(&StoreKey::new(Lang::Python, other), other).is_none());
        assert!(later.load(&StoreKey::new(Lang::Bash, source), source).is_none());

        let path = later.entry_path(&StoreKey::new(Lang::Python, source).digest);
        let good = std::fs::read(&path).unwrap();
        let header = MAGIC.len() + 64;
        // A flipped byte anywhere, a cut entry, or a tree whose digest is right but whose
        // structure is not is never used.
        for at in [0, MAGIC.len() + 3, MAGIC.len() + 40, header + 2, header + 9, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            assert!(later.load(&StoreKey::new(Lang::Python, source), source).is_none(), "byte {at} flipped");
        }
        std::fs::write(&path, &good[..good.len() - 4]).unwrap();
        assert!(later.load(&StoreKey::new(Lang::Python, source), source).is_none(), "cut");
        let mut body = good[header..].to_vec();
        let n = u32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
        // The second node's parent (the parents are the last array) says it is the root.
        let parent_of_second = body.len() - 4 * n + 4;
        body[parent_of_second..parent_of_second + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut forged = good[..MAGIC.len() + 32].to_vec();
        forged.extend_from_slice(&Sha256::digest(&body));
        forged.extend_from_slice(&body);
        std::fs::write(&path, &forged).unwrap();
        assert!(later.load(&StoreKey::new(Lang::Python, source), source).is_none(), "ill-formed");
        // The source it was parsed from is needed too: ranges past the end are refused.
        assert!(FlatTree::from_bytes(&Lang::Python.grammar(), &good[header..], "def").is_none());
        assert!(FlatTree::from_bytes(&Lang::Python.grammar(), &good[header..], source).is_some());
        assert_eq!(later.stats().loaded, 1);
    }

    #[test]
    fn a_store_that_cannot_be_written_says_why_and_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the directory should be.
        let blocked = dir.path().join("trees");
        std::fs::write(&blocked, "").unwrap();
        let store = TreeStore::new(&blocked, 1 << 20);
        let source = "x = 1\n";
        store.save(&StoreKey::new(Lang::Python, source), &parse(source));
        let stats = store.stats();
        assert_eq!(stats.written, 0);
        let error = stats.error.expect("the failure is kept");
        assert!(error.starts_with(&format!("cannot write in {}: ", blocked.display())), "{error}");
        assert!(store.load(&StoreKey::new(Lang::Python, source), source).is_none());
    }

    #[test]
    fn a_full_store_makes_room_from_what_was_used_least_recently_never_the_last_minute() {
        let dir = tempfile::tempdir().unwrap();
        let sources: Vec<String> = (0..4).map(|i| format!("x{i} = [{}]\n", "1, ".repeat(20))).collect();
        let trees: Vec<FlatTree> = sources.iter().map(|s| parse(s)).collect();
        let probe = TreeStore::new(dir.path(), u64::MAX);
        probe.save(&StoreKey::new(Lang::Python, &sources[0]), &trees[0]);
        let size = probe.scan()[0].size;
        // Room for three entries.
        let store = TreeStore::new(dir.path(), 3 * size + size / 2);
        for i in 1..3 {
            store.save(&StoreKey::new(Lang::Python, &sources[i]), &trees[i]);
        }
        assert_eq!(entries(dir.path()), 3);
        // Full, and all three were used in the last minute: nothing is removed, nothing written.
        store.save(&StoreKey::new(Lang::Python, &sources[3]), &trees[3]);
        assert_eq!(entries(dir.path()), 3);
        assert_eq!(store.stats().written, 2);
        // Two hours later for entries 0 and 1 (entry 0 the older); a new process makes room.
        for (i, hours) in [(0, 3), (1, 2)] {
            let file = std::fs::File::options()
                .write(true)
                .open(store.entry_path(&StoreKey::new(Lang::Python, &sources[i]).digest));
            let then = SystemTime::now() - Duration::from_secs(hours * 3600);
            file.unwrap().set_modified(then).unwrap();
        }
        let later = TreeStore::new(dir.path(), 3 * size + size / 2);
        later.save(&StoreKey::new(Lang::Python, &sources[3]), &trees[3]);
        assert_eq!(later.stats().written, 1);
        // Down to three quarters of the cap (one entry goes), then the new one.
        assert!(
            later.load(&StoreKey::new(Lang::Python, &sources[0]), &sources[0]).is_none(),
            "the least recently used is gone"
        );
        for (i, source) in sources.iter().enumerate().skip(1) {
            assert!(later.load(&StoreKey::new(Lang::Python, source), source).is_some(), "entry {i}");
        }
        // A read renews an old entry's time.
        let path = later.entry_path(&StoreKey::new(Lang::Python, &sources[2]).digest);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(7200)).unwrap();
        assert!(later.load(&StoreKey::new(Lang::Python, &sources[2]), &sources[2]).is_some());
        let age = std::fs::metadata(&path).unwrap().modified().unwrap().elapsed().unwrap_or_default();
        assert!(age < RENEW_AFTER, "{age:?}");
        // A store full of entries no one has read for hours (another build's) makes room
        // when a new process first asks whether a tree would fit.
        for found in later.scan() {
            let file = std::fs::File::options().write(true).open(&found.path).unwrap();
            file.set_modified(SystemTime::now() - Duration::from_secs(5 * 3600)).unwrap();
        }
        let next = TreeStore::new(dir.path(), 3 * size + size / 2);
        assert!(next.has_room(size as usize / 4));
        assert_eq!(entries(dir.path()), 2);
    }
}
