//! Position encodings (LSP 3.17 `PositionEncodingKind`) and the one boundary
//! where columns are converted.
//!
//! A position's `character` counts code units of the negotiated encoding:
//! UTF-16 code units (the default when the server names none), UTF-8 bytes,
//! or UTF-32 code points. Inside the crate a column is a byte offset into the
//! line's text; every position going out and every range coming back goes
//! through [`to_lsp_column`] / [`from_lsp_column`] with the target line's text.
//!
//! Lines end at `\n`, `\r\n` or `\r` (LSP "Text Documents": all three are line
//! terminators). A UTF-8 byte order mark at the start of a file is not text:
//! as editors do (VS Code drops it from the document model), it is removed
//! before the text is sent to a server, columns on the first line count from
//! after it, and an edit written back keeps it ([`strip_bom`]).

/// The encoding of a position's `character`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PositionEncoding {
    /// `character` counts UTF-8 bytes.
    Utf8,
    /// `character` counts UTF-16 code units: LSP's default.
    #[default]
    Utf16,
    /// `character` counts Unicode code points.
    Utf32,
}

impl PositionEncoding {
    /// The encoding a server announced in `capabilities.positionEncoding`; absent or unknown = UTF-16.
    pub fn from_lsp(kind: Option<&str>) -> PositionEncoding {
        match kind {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    /// LSP's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// The text without a leading UTF-8 byte order mark, and whether it had one.
pub fn strip_bom(text: &str) -> (&str, bool) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// A file's text as servers see it: UTF-8, without a byte order mark.
pub async fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    let text = tokio::fs::read_to_string(path).await?;
    Ok(match strip_bom(&text) {
        (rest, true) => rest.to_string(),
        (_, false) => text,
    })
}

/// The lines of a text without their terminators (`\n`, `\r\n`, `\r`).
/// A text ending in a terminator has an empty last line, as LSP counts them.
pub fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// The byte offset of each line's start in `text` (same line breaking as [`lines`]).
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut out = vec![0];
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => out.push(i + 1),
            b'\r' => {
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                out.push(i + 1);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A byte offset into `line` as a `character` in `encoding`. An offset past
/// the end or inside a character counts up to the character boundary before it.
pub fn to_lsp_column(line: &str, byte: usize, encoding: PositionEncoding) -> u32 {
    let mut units = 0usize;
    for (at, c) in line.char_indices() {
        if at + c.len_utf8() > byte {
            break;
        }
        units += encoding.units(c);
    }
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// A `character` in `encoding` as a byte offset into `line`. A column past the
/// end of the line is the line's end (LSP: "defaults back to the line length");
/// one inside a character (half a surrogate pair) is that character's start.
pub fn from_lsp_column(line: &str, character: u32, encoding: PositionEncoding) -> usize {
    let wanted = character as usize;
    let mut units = 0usize;
    for (at, c) in line.char_indices() {
        let next = units + encoding.units(c);
        if next > wanted {
            return at;
        }
        units = next;
    }
    line.len()
}

/// The 1-indexed column, counted in characters (Unicode scalar values), of a byte offset into `line`.
pub fn char_column(line: &str, byte: usize) -> usize {
    line[..byte.min(line.len())].chars().count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_round_trip_in_each_encoding() {
        // tab, a 2-byte char, a non-BMP char (4 UTF-8 bytes, 2 UTF-16 units), then `name`.
        let line = "\té😀 name";
        let byte = line.find("name").unwrap_or(0);
        assert_eq!(byte, 1 + 2 + 4 + 1);
        assert_eq!(to_lsp_column(line, byte, PositionEncoding::Utf8), 8);
        assert_eq!(to_lsp_column(line, byte, PositionEncoding::Utf16), 5);
        assert_eq!(to_lsp_column(line, byte, PositionEncoding::Utf32), 4);
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            assert_eq!(from_lsp_column(line, to_lsp_column(line, byte, enc), enc), byte, "{enc:?}");
        }
        assert_eq!(from_lsp_column(line, 99, PositionEncoding::Utf16), line.len());
        // Half a surrogate pair lands on the character's start.
        assert_eq!(from_lsp_column(line, 3, PositionEncoding::Utf16), 3);
        assert_eq!(char_column(line, byte), 5);
    }

    #[test]
    fn lines_split_on_every_terminator() {
        assert_eq!(lines("a\r\nb\rc\nd"), vec!["a", "b", "c", "d"]);
        assert_eq!(lines("a\n"), vec!["a", ""]);
        assert_eq!(line_starts("a\r\nb\rc\nd"), vec![0, 3, 5, 7]);
    }
}
