//! The run's working directory, and the functions that resolve a path
//! argument inside it.
//!
//! Every path a model gives goes through [`resolve_path`] (a path that must
//! exist) or [`resolve_path_for_write`] (one about to be written): relative
//! paths are joined to the root; a path that escapes it (`..`, an absolute path
//! elsewhere, a symlink whose target is outside) is refused. This module reads
//! the file system (to follow symlinks) but never writes to it.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// A path argument that cannot be used. The messages are for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// A relative path whose `..` climbs out of the root.
    Escapes {
        /// The path as given.
        given: String,
        /// The working directory, canonical.
        root: PathBuf,
    },
    /// An absolute path outside the root.
    Outside {
        /// The path as given.
        given: String,
        /// The working directory, canonical.
        root: PathBuf,
    },
    /// A path inside the root that leads, through a symlink, outside it.
    SymlinkOutside {
        /// The path as given.
        given: String,
        /// Where the path leads with its symlinks followed.
        target: PathBuf,
        /// The working directory, canonical.
        root: PathBuf,
    },
    /// A symlink on the path cannot be followed: a loop, or more than [`MAX_SYMLINKS`] links.
    SymlinkLoop {
        /// The path as given.
        given: String,
        /// The symlink that could not be followed.
        link: PathBuf,
    },
    /// The path is inside the root but does not exist.
    NotFound {
        /// The path as given.
        given: String,
    },
}

/// Symlinks followed by hand on one path before it counts as a loop (Linux's own limit).
pub const MAX_SYMLINKS: usize = 40;

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Escapes { given, root } => {
                write!(f, "refused: path '{given}' escapes the working directory {}", root.display())
            }
            PathError::Outside { given, root } => {
                write!(f, "refused: path '{given}' is outside the working directory {}", root.display())
            }
            PathError::SymlinkOutside { given, target, root } => write!(
                f,
                "refused: path '{given}' goes through a symlink to {}, outside the working directory {}",
                target.display(),
                root.display()
            ),
            PathError::SymlinkLoop { given, link } => write!(
                f,
                "refused: path '{given}' goes through the symlink {}, which cannot be followed (a loop)",
                link.display()
            ),
            PathError::NotFound { given } => write!(f, "path not found: '{given}'"),
        }
    }
}

impl std::error::Error for PathError {}

/// Resolves a path argument inside `root`, which must be canonical.
///
/// Relative paths are joined to `root`; `.` and the empty string are the root.
/// `..` is applied lexically, then the longest existing prefix is canonicalized
/// (following symlinks) and the result must still lie inside `root`. Returns the
/// canonical path of an existing file or directory.
///
/// A dangling symlink on the way is followed to where its target would be, so a
/// path cannot be redirected outside the root through one.
///
/// Errors: [`PathError::Escapes`], [`PathError::Outside`],
/// [`PathError::SymlinkOutside`], [`PathError::SymlinkLoop`], [`PathError::NotFound`].
pub fn resolve_path(root: &Path, given: &str) -> Result<PathBuf, PathError> {
    let (real, exists) = resolve_inside(root, given)?;
    if !exists {
        return Err(PathError::NotFound { given: given.to_string() });
    }
    Ok(real)
}

/// [`resolve_path`] for a path about to be written, which may not exist yet:
/// the same refusals, but a missing file (or missing directories above it) is
/// no error. Returns the canonical longest existing prefix with the rest
/// appended, so two spellings of one file give one path.
///
/// Errors: [`PathError::Escapes`], [`PathError::Outside`], [`PathError::SymlinkOutside`],
/// [`PathError::SymlinkLoop`].
pub fn resolve_path_for_write(root: &Path, given: &str) -> Result<PathBuf, PathError> {
    resolve_inside(root, given).map(|(real, _)| real)
}

/// The checks both resolvers share; the flag says whether the path exists.
fn resolve_inside(root: &Path, given: &str) -> Result<(PathBuf, bool), PathError> {
    let absolute = Path::new(given).is_absolute();
    let joined = if absolute { PathBuf::from(given) } else { root.join(given) };
    let lexical = normalize(&joined);
    let (real, exists) = canonicalize_existing_prefix(&lexical, 0)
        .map_err(|link| PathError::SymlinkLoop { given: given.to_string(), link })?;
    if !real.starts_with(root) {
        let root = root.to_path_buf();
        let given = given.to_string();
        return Err(if lexical.starts_with(&root) {
            PathError::SymlinkOutside { given, target: real, root }
        } else if absolute {
            PathError::Outside { given, root }
        } else {
            PathError::Escapes { given, root }
        });
    }
    Ok((real, exists))
}

/// `path` with `.` dropped and `..` applied lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    lexical
}

/// Canonicalizes the longest prefix of `path` that exists and appends the rest;
/// the flag says whether the whole path exists. A symlink that does not
/// canonicalize (its target is missing) is followed by hand, so the result names
/// where a write through it would land. `Err` names a link that cannot be followed.
fn canonicalize_existing_prefix(path: &Path, followed: usize) -> Result<(PathBuf, bool), PathBuf> {
    for ancestor in path.ancestors() {
        let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let exists = rest.as_os_str().is_empty();
            return Ok((if exists { real } else { real.join(rest) }, exists));
        }
        let is_link = std::fs::symlink_metadata(ancestor).is_ok_and(|meta| meta.file_type().is_symlink());
        if is_link {
            let target = std::fs::read_link(ancestor).map_err(|_| ancestor.to_path_buf())?;
            if followed >= MAX_SYMLINKS {
                return Err(ancestor.to_path_buf());
            }
            let parent = ancestor.parent().unwrap_or(Path::new("/"));
            let mut next = normalize(&parent.join(target));
            // `join("")` would add a trailing `/`, which makes `lstat` follow the link.
            if !rest.as_os_str().is_empty() {
                next.push(rest);
            }
            let (real, _) = canonicalize_existing_prefix(&next, followed + 1)?;
            // A dangling link: the path exists only once something is written there.
            return Ok((real, false));
        }
    }
    Ok((path.to_path_buf(), false))
}

/// The run's working directory: a canonical, existing directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Canonicalizes `root`. Errors: [`Error::Workspace`], [`Error::NotADirectory`].
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace> {
        let path = root.as_ref();
        let root =
            std::fs::canonicalize(path).map_err(|source| Error::Workspace { path: path.to_path_buf(), source })?;
        if !root.is_dir() {
            return Err(Error::NotADirectory { path: root });
        }
        Ok(Workspace { root })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// [`resolve_path`] against this root.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, PathError> {
        resolve_path(&self.root, given)
    }

    /// [`resolve_path_for_write`] against this root.
    pub fn resolve_for_write(&self, given: &str) -> Result<PathBuf, PathError> {
        resolve_path_for_write(&self.root, given)
    }

    /// `path` relative to the root, for display; unchanged when outside it.
    pub fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }
}

/// A message with the root's absolute path taken out of the paths in it.
pub(crate) fn relative_text(ws: &Workspace, text: &str) -> String {
    text.replace(&format!("{}/", ws.root().display()), "")
}
