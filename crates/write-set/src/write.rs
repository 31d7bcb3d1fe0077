//! The writer: a set of files written all or nothing.
//!
//! Each file is checked against what the caller read; then every new content
//! is written to a temporary file in its file's directory and every old file
//! kept beside it, and only then are the files renamed into place (so a reader
//! sees the old content or the new, never half), keeping their permissions; a
//! file to be removed is removed. If any step fails, the files already changed
//! are put back as they were, by renames alone. Every file-system step passes
//! a fault-injection point (`fault.rs`), empty in normal builds.

use std::fs::Permissions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use crate::error::{Error, Result};
use crate::fault::{self, Op};

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
/// created or removed since it was read, or now a symlink where a file was
/// read) is [`Error::Conflict`] naming those files, and nothing is written.
///
/// Then, in two phases. Preparing changes nothing anyone can see: each new
/// content is written to a temporary file beside its file (creating missing
/// directories; a new file gets the permissions the process's umask allows, an
/// existing one keeps its own), and each existing file to be replaced or
/// removed is kept beside it as a hard link (a copy where the file system has
/// no links). A failure here removes what was prepared. Committing only
/// renames and removes, in order, writes before removals; when a step fails,
/// the files already changed are put back by renaming what was kept (a new
/// file is removed again, with the directories made for it), which writes no
/// data, so a disk that has filled up cannot stop it. Either failure is
/// [`Error::WriteFailed`], which names any file that could not be put back.
pub fn write_files(files: &[FileWrite]) -> Result<()> {
    let changed: Vec<PathBuf> =
        files.iter().filter(|f| !holds(&f.path, f.before.as_deref())).map(|f| f.shown.clone()).collect();
    if !changed.is_empty() {
        return Err(Error::Conflict { files: changed });
    }
    let order: Vec<&FileWrite> =
        files.iter().filter(|f| f.after.is_some()).chain(files.iter().filter(|f| f.after.is_none())).collect();
    let mut made_dirs: Vec<PathBuf> = Vec::new();
    let mut prepared: Vec<Prepared<'_>> = Vec::new();
    for file in &order {
        match prepare(file, &mut made_dirs) {
            Ok(step) => prepared.push(step),
            Err(source) => {
                drop(prepared);
                remove_dirs(&made_dirs);
                return Err(Error::WriteFailed {
                    path: file.shown.clone(),
                    restored: 0,
                    unrestored: Vec::new(),
                    source,
                });
            }
        }
    }
    for k in 0..prepared.len() {
        if let Err(source) = prepared[k].commit() {
            // A rename or a removal that failed changed nothing; the ones before it are undone.
            let mut restored = 0;
            let mut unrestored = Vec::new();
            for done in prepared[..k].iter_mut().rev() {
                match done.restore() {
                    Ok(()) => restored += 1,
                    Err(_) => unrestored.push(done.file.shown.clone()),
                }
            }
            let path = prepared[k].file.shown.clone();
            drop(prepared);
            remove_dirs(&made_dirs);
            return Err(Error::WriteFailed { path, restored, unrestored, source });
        }
    }
    // Dropping what was prepared removes the kept old files.
    Ok(())
}

/// One file ready to be changed by a rename or a removal.
struct Prepared<'a> {
    file: &'a FileWrite,
    /// The new content, in a temporary file beside the file (`None`: the file is removed).
    new: Option<TempPath>,
    /// The old file, kept beside it to put back (`None`: it did not exist).
    old: Option<TempPath>,
}

impl Prepared<'_> {
    /// Puts the new content in place (a rename), or removes the file.
    fn commit(&mut self) -> std::io::Result<()> {
        let path = &self.file.path;
        match self.new.take() {
            Some(new) => {
                fault::point(Op::Rename, path)?;
                new.persist(path).map_err(|e| {
                    self.new = Some(e.path);
                    e.error
                })
            }
            None => {
                fault::point(Op::Remove, path)?;
                match std::fs::remove_file(path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                }
            }
        }
    }

    /// Undoes [`Prepared::commit`]: the kept old file renamed back, or a new file removed.
    fn restore(&mut self) -> std::io::Result<()> {
        let path = &self.file.path;
        match self.old.take() {
            Some(old) => {
                fault::point(Op::Rename, path)?;
                old.persist(path).map_err(|e| {
                    self.old = Some(e.path);
                    e.error
                })
            }
            None => {
                fault::point(Op::Remove, path)?;
                std::fs::remove_file(path)
            }
        }
    }
}

/// Writes a file's new content beside it and keeps its old one; changes nothing visible.
fn prepare<'a>(file: &'a FileWrite, made_dirs: &mut Vec<PathBuf>) -> std::io::Result<Prepared<'a>> {
    let path = &file.path;
    let dir = path.parent().unwrap_or(Path::new("."));
    let existing = std::fs::symlink_metadata(path).ok().map(|meta| meta.permissions());
    let new = match &file.after {
        Some(content) => {
            made_dirs.extend(missing_dirs(path));
            std::fs::create_dir_all(dir)?;
            Some(temporary(path, content, existing.clone())?)
        }
        None => None,
    };
    let old = match (&file.before, existing) {
        (Some(content), Some(permissions)) => Some(keep(path, content, permissions)?),
        _ => None,
    };
    Ok(Prepared { file, new, old })
}

/// `content` in a new temporary file beside `path`, with `permissions` (`None`:
/// those of a new file: 0666 narrowed by the umask, not the temporary file's 0600).
fn temporary(path: &Path, content: &[u8], permissions: Option<Permissions>) -> std::io::Result<TempPath> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    if permissions.is_none() {
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    }
    let mut tmp = builder.prefix(".agent-tools-").tempfile_in(dir)?;
    fault::point(Op::Write, path)?;
    tmp.write_all(content)?;
    tmp.flush()?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(tmp.path(), permissions)?;
    }
    Ok(tmp.into_temp_path())
}

/// The file at `path` kept beside it under a temporary name: a hard link to it,
/// or where the file system refuses one, a copy of `content` with its permissions.
fn keep(path: &Path, content: &[u8], permissions: Permissions) -> std::io::Result<TempPath> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let linked = tempfile::Builder::new().prefix(".agent-tools-old-").make_in(dir, |kept| {
        fault::point(Op::Link, path)?;
        std::fs::hard_link(path, kept)
    });
    match linked {
        Ok(kept) => Ok(kept.into_temp_path()),
        Err(_) => temporary(path, content, Some(permissions)),
    }
}

/// Whether `path` holds exactly `content` (`None`: does not exist). A symlink
/// never holds content: what was read was a file, and renaming over a link
/// would replace the link rather than write where it points.
fn holds(path: &Path, content: Option<&[u8]>) -> bool {
    match content {
        Some(content) => {
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_file())
                && std::fs::read(path).is_ok_and(|now| now == content)
        }
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

/// Removes the directories made for new files, innermost first; only an empty
/// directory goes, so one that something else filled meanwhile stays.
fn remove_dirs(made: &[PathBuf]) {
    for dir in made.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}
