//! The one way this crate writes files: [`write_files`], a set of files
//! written all or nothing by the `write-set` crate, shared with
//! lsp-supervisor's renames. [`EditStore::accept`](crate::EditStore::accept)
//! writes through it, and so may any caller with a set of files to change at
//! once (the facade's `apply_patch`).

use crate::error::{Error, Result};

pub use write_set::FileWrite;

/// Writes every file of `files`, or none: `write_set::write_files`, its errors
/// as this crate's [`Error::Conflict`] and [`Error::WriteFailed`].
///
/// First every file is compared with its `before`: any difference (changed,
/// created or removed since it was read, or now a symlink where a file was
/// read) is [`Error::Conflict`] naming those files, and nothing is written.
/// Then every new content is written beside its file and every old file kept
/// beside it, before any file changes; then the files are renamed into place
/// (writes first, removals last). When a step fails, the files already
/// changed are put back by renaming what was kept (a new file is removed
/// again, with the directories made for it), which writes no data, and the
/// result is [`Error::WriteFailed`], which names any file that could not be
/// put back.
pub fn write_files(files: &[FileWrite]) -> Result<()> {
    write_set::write_files(files).map_err(|e| match e {
        write_set::Error::Conflict { files } => Error::Conflict { files },
        failed @ write_set::Error::WriteFailed { .. } => Error::WriteFailed(failed),
    })
}
