//! What happened to a file on disk, in LSP's terms: the vocabulary the watcher,
//! the supervisor, the servers and the edits share.

/// LSP `FileChangeType` (`workspace/didChangeWatchedFiles`): the discriminants are the protocol's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FileChange {
    /// The file was created.
    Created = 1,
    /// The file's content changed.
    Changed = 2,
    /// The file was deleted.
    Deleted = 3,
}
