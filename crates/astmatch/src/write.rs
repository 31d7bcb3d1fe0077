//! The one way this crate writes files: a set of files written all or nothing.
//!
//! Each file is checked against what the caller read, then written through a
//! temporary file in its own directory and a rename (so a reader sees the old
//! content or the new, never half), keeping its permissions; a file to be
//! removed is removed. If any step fails, the files already changed are put
//! back as they were. [`EditStore::accept`](crate::EditStore::accept) writes
//! through it, and so may any caller with a set of files to change at once (the
//! facade's `apply_patch`); it knows nothing of what the contents mean.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fault::Op;

/// One file of a set to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// Where the file is.
    pub path: PathBuf,
    /// How errors name it (for example relative to the root).
    pub shown: PathBuf,
    /// What it holds now, as the caller read it; `None`: it must not exist.
    pub before: Option<Vec<u8>>,
    /// What it is to hold; `None`: it is removed.
    pub after: Option<Vec<u8>>,
}

/// Writes every file of `files`, or none.
///
/// First every file is compared with its `before`: any difference (changed,
/// created or removed since it was read) is [`Error::Conflict`] naming those
/// files, and nothing is written. Then the files with an `after` are written,
/// in order, creating missing directories (a new file gets the permissions the
/// process's umask allows, an existing one keeps its own); then the files
/// without one are removed. When a step fails, the files already changed are
/// restored from their `before` (a file that was new is removed again, with the
/// directories made for it) and the result is [`Error::WriteFailed`], which
/// names any file that could not be restored.
pub fn write_files(files: &[FileWrite]) -> Result<()> {
    write_files_with(files, &mut write_or_remove)
}

/// One step of [`write_files_with`]: write `Some(content)` to the path, or remove it on `None`.
pub type Step<'a> = dyn FnMut(&Path, Option<&[u8]>) -> std::io::Result<()> + 'a;

/// [`write_files`] with the step supplied: `step(path, Some(content))` writes,
/// `step(path, None)` removes (tests use it to fail a step midway). Restoring
/// does not go through it.
#[doc(hidden)]
pub fn write_files_with(files: &[FileWrite], step: &mut Step<'_>) -> Result<()> {
    let changed: Vec<PathBuf> =
        files.iter().filter(|f| !holds(&f.path, f.before.as_deref())).map(|f| f.shown.clone()).collect();
    if !changed.is_empty() {
        return Err(Error::Conflict { files: changed });
    }
    let order: Vec<&FileWrite> =
        files.iter().filter(|f| f.after.is_some()).chain(files.iter().filter(|f| f.after.is_none())).collect();
    let mut made_dirs: Vec<PathBuf> = Vec::new();
    for (k, file) in order.iter().enumerate() {
        if file.after.is_some() {
            made_dirs.extend(missing_dirs(&file.path));
        }
        if let Err(source) = step(&file.path, file.after.as_deref()) {
            // The failed step may have done part of its work: put its file back too, uncounted.
            let _ = write_or_remove(&file.path, file.before.as_deref());
            let mut restored = 0;
            let mut unrestored = Vec::new();
            for done in order[..k].iter().rev() {
                match write_or_remove(&done.path, done.before.as_deref()) {
                    Ok(()) => restored += 1,
                    Err(_) => unrestored.push(done.shown.clone()),
                }
            }
            for dir in made_dirs.iter().rev() {
                // Only an empty directory goes; one that something else filled meanwhile stays.
                let _ = std::fs::remove_dir(dir);
            }
            return Err(Error::WriteFailed { path: file.shown.clone(), restored, unrestored, source });
        }
    }
    Ok(())
}

/// Whether `path` holds exactly `content` (`None`: does not exist).
fn holds(path: &Path, content: Option<&[u8]>) -> bool {
    match content {
        Some(content) => std::fs::read(path).is_ok_and(|now| now == content),
        None => std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound),
    }
}

/// The ancestors of `path` that do not exist yet, outermost first.
fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> =
        path.ancestors().skip(1).take_while(|d| !d.exists()).map(Path::to_path_buf).collect();
    missing.reverse();
    missing
}

fn write_or_remove(path: &Path, content: Option<&[u8]>) -> std::io::Result<()> {
    match content {
        Some(content) => write_atomic(path, content),
        None => match crate::fault::point(Op::Remove, path).and_then(|()| std::fs::remove_file(path)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    }
}

/// Writes `content` to `path` through a temporary file in the same directory and a rename,
/// keeping the file's permissions.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let existing = std::fs::metadata(path).ok().map(|meta| meta.permissions());
    let mut builder = tempfile::Builder::new();
    // A temporary file is private (0600); a new file gets what any file the
    // process creates gets, 0666 narrowed by the umask.
    #[cfg(unix)]
    if existing.is_none() {
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    crate::fault::point(Op::Write, path)?;
    tmp.write_all(content)?;
    tmp.flush()?;
    if let Some(permissions) = existing {
        std::fs::set_permissions(tmp.path(), permissions)?;
    }
    crate::fault::point(Op::Rename, path)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
