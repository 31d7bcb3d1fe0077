//! Splits a raw stdout/stderr byte stream into text and sync markers.
//!
//! After each cell the driver writes a marker to the program's real fds 1 and
//! 2; once the host has seen it on both, everything a child process wrote
//! before the cell ended has arrived. Plain data in, data out.

/// A piece of a raw stream, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Sync,
}

pub(crate) struct SyncScanner {
    marker: Vec<u8>,
    pending: Vec<u8>,
}

impl SyncScanner {
    pub(crate) fn new(marker: &str) -> Self {
        SyncScanner { marker: marker.as_bytes().to_vec(), pending: Vec::new() }
    }

    /// Feeds bytes; returns the complete pieces. Bytes that may be the start
    /// of a marker or of a UTF-8 character are held back.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<Piece> {
        self.pending.extend_from_slice(bytes);
        let mut pieces = Vec::new();
        while let Some(at) = memchr::memmem::find(&self.pending, &self.marker) {
            let text: Vec<u8> = self.pending.drain(..at).collect();
            self.pending.drain(..self.marker.len());
            if !text.is_empty() {
                pieces.push(Piece::Text(String::from_utf8_lossy(&text).into_owned()));
            }
            pieces.push(Piece::Sync);
        }
        let keep = self.partial_marker_len();
        let mut split = self.pending.len() - keep;
        split -= incomplete_utf8_tail(&self.pending[..split]);
        if split > 0 {
            let text: Vec<u8> = self.pending.drain(..split).collect();
            pieces.push(Piece::Text(String::from_utf8_lossy(&text).into_owned()));
        }
        pieces
    }

    /// Whatever is held back, at end of stream.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        Some(text)
    }

    fn partial_marker_len(&self) -> usize {
        let max = self.marker.len().saturating_sub(1).min(self.pending.len());
        (1..=max).rev().find(|&n| self.pending.ends_with(&self.marker[..n])).unwrap_or(0)
    }
}

/// How many trailing bytes form the start of an incomplete UTF-8 character.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let width = match byte {
            b if b & 0xE0 == 0xC0 => 2,
            b if b & 0xF0 == 0xE0 => 3,
            b if b & 0xF8 == 0xF0 => 4,
            _ => 1,
        };
        return if width > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(marker: &str, chunks: &[&[u8]]) -> Vec<Piece> {
        let mut scanner = SyncScanner::new(marker);
        let mut pieces: Vec<Piece> = chunks.iter().flat_map(|chunk| scanner.push(chunk)).collect();
        if let Some(rest) = scanner.finish() {
            pieces.push(Piece::Text(rest));
        }
        // Merge adjacent text so the checks do not depend on chunking.
        let mut merged: Vec<Piece> = Vec::new();
        for piece in pieces {
            match (merged.last_mut(), piece) {
                (Some(Piece::Text(prev)), Piece::Text(next)) => prev.push_str(&next),
                (_, piece) => merged.push(piece),
            }
        }
        merged
    }

    #[test]
    fn marker_split_across_chunks() {
        let got = run("<M>", &[b"ab<", b"M", b">cd"]);
        assert_eq!(got, vec![Piece::Text("ab".into()), Piece::Sync, Piece::Text("cd".into())]);
    }

    #[test]
    fn utf8_split_across_chunks() {
        let emoji = "é🎉".as_bytes();
        let got = run("<M>", &[&emoji[..1], &emoji[1..3], &emoji[3..], b"<M>"]);
        assert_eq!(got, vec![Piece::Text("é🎉".into()), Piece::Sync]);
    }

    #[test]
    fn near_miss_is_text() {
        let got = run("<M>", &[b"<N><M", b"x"]);
        assert_eq!(got, vec![Piece::Text("<N><Mx".into())]);
    }

    #[test]
    fn two_markers() {
        let got = run("<M>", &[b"<M><M>z"]);
        assert_eq!(got, vec![Piece::Sync, Piece::Sync, Piece::Text("z".into())]);
    }
}
