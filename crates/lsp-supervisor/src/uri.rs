//! `file:` URIs ↔ paths (RFC 8089), through the `url` crate.

use std::path::{Path, PathBuf};

/// The `file:` URI of an absolute path; percent-encoded as `url` does.
pub fn path_to_uri(path: &Path) -> String {
    url::Url::from_file_path(path).map(String::from).unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file:` URI; `None` for other schemes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok().filter(|u| u.scheme() == "file")?.to_file_path().ok()
}
