//! `file:` URIs ↔ paths (RFC 8089), through the `url` crate, and as
//! `lsp_types::Uri`, which holds only what RFC 3986 allows.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The `file:` URI of an absolute path; percent-encoded as `url` does.
pub fn path_to_uri(path: &Path) -> String {
    url::Url::from_file_path(path).map(String::from).unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file:` URI; `None` for other schemes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok().filter(|u| u.scheme() == "file")?.to_file_path().ok()
}

/// A path's `file:` URI as the protocol's type, sent to servers: encoded as
/// [`path_to_uri`] encodes it, and also the bytes `url` leaves bare in a path
/// that RFC 3986 does not allow there (`[`, `]`, `|`, `^`, `\`).
pub(crate) fn file_uri(path: &Path) -> lsp_types::Uri {
    let mut text = String::from("file://");
    if !path.is_absolute() {
        text.push('/');
    }
    for &b in path.as_os_str().as_bytes() {
        // RFC 3986 `pchar` and `/`, but for `%`, which starts an escape.
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b) {
            text.push(char::from(b));
        } else {
            text.push_str(&format!("%{b:02X}"));
        }
    }
    match lsp_types::Uri::from_str(&text) {
        Ok(uri) => uri,
        // An empty authority and a path of `pchar`s, `/` and escapes is a URI whatever the path held.
        Err(e) => unreachable!("{text} is not a URI: {e}"),
    }
}

/// The path of a `file:` URI of the protocol's type; `None` for other schemes.
pub(crate) fn uri_path(uri: &lsp_types::Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_str())
}

/// A URI a server sent with bytes RFC 3986 does not allow (a `[` that `url`
/// left bare, a space, a `%` that starts no escape), percent-encoded, so that
/// `lsp_types::Uri` takes it; `:`, `/`, `?`, `#` and valid escapes stay.
pub(crate) fn repair(uri: &str) -> String {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?#".contains(&b);
    let bytes = uri.as_bytes();
    let mut out = String::with_capacity(uri.len());
    for (i, &b) in bytes.iter().enumerate() {
        let escape = b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if allowed(b) || escape {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn a_path_url_leaves_bare_still_makes_a_protocol_uri_and_comes_back() {
        let path = Path::new("/tmp/app/[slug]/a b|c^d\\é.ts");
        let uri = file_uri(path);
        assert_eq!(uri.as_str(), "file:///tmp/app/%5Bslug%5D/a%20b%7Cc%5Ed%5C%C3%A9.ts");
        assert_eq!(uri_path(&uri).as_deref(), Some(path));
        // Other paths are sent exactly as `url` writes them.
        for plain in ["/tmp/x/a.rs", "/tmp/x y/#1?/100%/{a}/<b>/`c`/\"d\"/é/!$&'()*+,;=:@"] {
            assert_eq!(file_uri(Path::new(plain)).as_str(), path_to_uri(Path::new(plain)), "{plain}");
        }
        // Every byte a path can hold.
        let every: Vec<u8> = (1..=255u8).filter(|&b| b != b'/').collect();
        let odd = Path::new("/tmp").join(OsStr::from_bytes(&every));
        assert_eq!(uri_path(&file_uri(&odd)), Some(odd));
        assert_eq!(repair("file:///a/[b]/c%2x%41 d"), "file:///a/%5Bb%5D/c%252x%41%20d");
    }
}
