//! Path resolution inside the root, over a layout of symlinks in and out.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agent_tools::{resolve_path, resolve_path_for_write};

/// A base directory holding `root/` and `outside/`, made once per process:
/// plain files and directories, symlinks that stay inside, symlinks that leave
/// (relative, absolute, through `..`), a loop, a chain, and dangling symlinks
/// whose missing targets are inside and outside.
struct Layout {
    _base: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn layout() -> &'static Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    LAYOUT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
        let base = std::fs::canonicalize(dir.path()).unwrap_or_else(|error| panic!("{error}"));
        let root = base.join("root");
        let made = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(base.join("outside/dir"))?;
            std::fs::write(base.join("outside/canary.txt"), "canary")?;
            std::fs::create_dir_all(root.join("dir/sub"))?;
            std::fs::write(root.join("file.txt"), "inside")?;
            std::fs::write(root.join("dir/sub/inner.txt"), "inside")?;
            symlink("dir", root.join("link_in"))?;
            symlink("../outside", root.join("link_out"))?;
            symlink(base.join("outside/canary.txt"), root.join("link_abs_out"))?;
            symlink("link_loop", root.join("link_loop"))?;
            symlink("link_in", root.join("link_chain"))?;
            symlink("dir/new.txt", root.join("dangling_in"))?;
            symlink("../outside/new.txt", root.join("dangling_out"))?;
            symlink(base.join("outside/missing/deeper"), root.join("dangling_abs_out"))?;
            symlink("dangling_out", root.join("dangling_chain"))?;
            symlink("../..", root.join("dir/up"))?;
            symlink(".", root.join("dir/self"))?;
            Ok(())
        })();
        made.unwrap_or_else(|error| panic!("the symlink layout: {error}"));
        Layout { _base: dir, base, root }
    })
}

/// Every prefix of `path` that exists (without following its last component) is not a symlink.
fn no_symlink_on_the_way(path: &Path) -> Result<(), PathBuf> {
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        if std::fs::symlink_metadata(&prefix).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(prefix);
        }
    }
    Ok(())
}

/// Input: a selector byte (0: relative; 1: under the root's absolute path; 2: under the
/// base above the root), then the path.
///
/// A path either is refused, or resolves to a path inside the root on which no component
/// is a symlink, so opening it cannot be redirected (a dangling symlink included); a read
/// resolution exists, and a write resolution of the same path agrees with it.
pub fn root_paths(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    let layout = layout();
    let given = String::from_utf8_lossy(rest).replace('\0', "");
    let given = match selector % 3 {
        0 => given,
        1 => format!("{}/{given}", layout.root.display()),
        _ => format!("{}/{given}", layout.base.display()),
    };
    let read = resolve_path(&layout.root, &given);
    let write = resolve_path_for_write(&layout.root, &given);
    for resolved in [&read, &write].into_iter().flatten() {
        assert!(resolved.starts_with(&layout.root), "{given:?} resolved to {} outside the root", resolved.display());
        if let Err(link) = no_symlink_on_the_way(resolved) {
            panic!("{given:?} resolved to {}, which goes through the symlink {}", resolved.display(), link.display());
        }
    }
    if let Ok(read) = &read {
        assert!(
            std::fs::symlink_metadata(read).is_ok(),
            "{given:?} resolved for reading to missing {}",
            read.display()
        );
        assert_eq!(write.as_ref().ok(), Some(read), "{given:?}: the write resolution disagrees");
    }
    if write.is_err() {
        assert!(read.is_err(), "{given:?} readable but refused for writing: {write:?}");
    }
}
