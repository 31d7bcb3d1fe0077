//! Jupyter's output model for one cell, and the collector that caps it.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;

use crate::OutputLimits;

/// A MIME bundle: MIME type to value. Binary types (`image/png`,
/// `image/jpeg`) hold base64 text, as in Jupyter's notebook format.
pub type MimeBundle = BTreeMap<String, String>;

/// Sees every piece of stream text a cell writes, as it arrives (for a
/// host's progress reports: the last line printed). Called on the task that
/// runs the cell; it must not block.
pub type OutputObserver = std::sync::Arc<dyn Fn(StreamName, &str) + Send + Sync>;

/// Which stream a piece of text was written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StreamName::Stdout => "stdout",
            StreamName::Stderr => "stderr",
        })
    }
}

/// One output of a cell, in the order it was produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Text written to stdout or stderr (adjacent writes merged).
    Stream {
        /// The stream written to.
        name: StreamName,
        /// What was written, possibly cut ([`Cut::stream_chars`]).
        text: String,
    },
    /// A `display()` call, or a figure shown or left open.
    Display {
        /// The output in each of its MIME types.
        data: MimeBundle,
    },
    /// The value of the cell's last expression.
    Result {
        /// The value in each of its MIME types.
        data: MimeBundle,
    },
    /// The exception that ended the cell; `traceback` lines point into the
    /// cell (`<cell N>` in Python, `cell-N` in JavaScript).
    Error {
        /// The exception's type name (`ValueError`, `TypeError`).
        ename: String,
        /// The exception's message.
        evalue: String,
        /// The traceback's entries, each without its trailing newline; an entry
        /// may hold several lines (a Python frame and its source line).
        traceback: Vec<String>,
    },
}

/// How much of a cell's output was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cut {
    /// Characters of stream text not kept.
    pub stream_chars: usize,
    /// MIME values dropped for being too long.
    pub mime_values: usize,
    /// Rich outputs (display data, results) dropped past the cap.
    pub rich_outputs: usize,
    /// Bytes of frames skipped unread for being over the frame limit (a cell that wrote
    /// to the frame pipe itself, or an image of many megabytes).
    pub frame_bytes: u64,
}

impl Cut {
    /// Whether nothing was cut.
    pub fn is_empty(&self) -> bool {
        *self == Cut::default()
    }
}

/// A decoded image from a display or result bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png` or `image/jpeg`.
    pub mime: String,
    /// The image's bytes, decoded from the bundle's base64.
    pub data: Vec<u8>,
    /// Pixel size read from a PNG header, when the image is a PNG.
    pub size: Option<(u32, u32)>,
}

impl Image {
    pub(crate) fn from_bundle(data: &MimeBundle) -> Vec<Image> {
        ["image/png", "image/jpeg"]
            .iter()
            .filter_map(|mime| {
                let encoded = data.get(*mime)?;
                let cleaned: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
                let bytes = base64::engine::general_purpose::STANDARD.decode(cleaned).ok()?;
                let size = png_size(&bytes);
                Some(Image { mime: (*mime).to_owned(), data: bytes, size })
            })
            .collect()
    }
}

/// Width and height from a PNG's IHDR chunk.
pub(crate) fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let height = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    Some((width, height))
}

/// Accumulates one cell's outputs under [`OutputLimits`].
#[derive(Debug)]
pub(crate) struct Collector {
    limits: OutputLimits,
    outputs: Vec<Output>,
    stream_chars: usize,
    rich: usize,
    cut: Cut,
    /// The most recent cut stream text, at most `tail_chars` characters.
    tail: Vec<(StreamName, String)>,
    tail_chars: usize,
    /// Notes of skipped frames, shown at the end whatever the stream cap.
    notes: Vec<String>,
}

impl Collector {
    pub(crate) fn new(limits: OutputLimits) -> Self {
        Collector {
            limits,
            outputs: Vec::new(),
            stream_chars: 0,
            rich: 0,
            cut: Cut::default(),
            tail: Vec::new(),
            tail_chars: 0,
            notes: Vec::new(),
        }
    }

    pub(crate) fn stream(&mut self, name: StreamName, text: &str) {
        if text.is_empty() {
            return;
        }
        let room = self.limits.max_stream_chars.saturating_sub(self.stream_chars);
        let chars = text.chars().count();
        if chars <= room {
            self.stream_chars += chars;
            self.push_stream(name, text);
            return;
        }
        let split = text.char_indices().nth(room).map_or(text.len(), |(at, _)| at);
        if room > 0 {
            self.stream_chars += room;
            self.push_stream(name, &text[..split]);
        }
        let rest = &text[split..];
        self.cut.stream_chars += chars - room;
        self.keep_tail(name, rest);
    }

    fn push_stream(&mut self, name: StreamName, text: &str) {
        if let Some(Output::Stream { name: last, text: existing }) = self.outputs.last_mut()
            && *last == name
        {
            existing.push_str(text);
            return;
        }
        self.outputs.push(Output::Stream { name, text: text.to_owned() });
    }

    fn keep_tail(&mut self, name: StreamName, text: &str) {
        let limit = self.limits.tail_chars;
        if limit == 0 {
            return;
        }
        // Of a piece as long as the tail or longer, only its end survives: cut it from the end,
        // so a flood of output costs the tail's length per piece, not the piece's.
        let text = match text.char_indices().rev().nth(limit - 1) {
            Some((at, _)) => {
                self.tail.clear();
                self.tail_chars = 0;
                &text[at..]
            }
            None => text,
        };
        match self.tail.last_mut() {
            Some((last, existing)) if *last == name => existing.push_str(text),
            _ => self.tail.push((name, text.to_owned())),
        }
        self.tail_chars += text.chars().count();
        while self.tail_chars > limit {
            let excess = self.tail_chars - limit;
            let Some((_, first)) = self.tail.first_mut() else { break };
            let first_chars = first.chars().count();
            if first_chars <= excess {
                self.tail_chars -= first_chars;
                self.tail.remove(0);
            } else {
                let at = first.char_indices().nth(excess).map_or(first.len(), |(at, _)| at);
                first.drain(..at);
                self.tail_chars -= excess;
            }
        }
    }

    pub(crate) fn display(&mut self, data: MimeBundle, result: bool) {
        if self.rich >= self.limits.max_rich_outputs {
            self.cut.rich_outputs += 1;
            return;
        }
        self.rich += 1;
        let data = self.cap_bundle(data);
        self.outputs.push(if result { Output::Result { data } } else { Output::Display { data } });
    }

    fn cap_bundle(&mut self, mut data: MimeBundle) -> MimeBundle {
        let max = self.limits.max_mime_chars;
        let long: Vec<String> = data
            .iter()
            .filter(|(mime, value)| mime.as_str() != "text/plain" && !mime.starts_with("image/") && value.len() > max)
            .map(|(mime, _)| mime.clone())
            .collect();
        for mime in long {
            data.remove(&mime);
            self.cut.mime_values += 1;
        }
        if let Some(plain) = data.get_mut("text/plain") {
            let chars = plain.chars().count();
            if chars > max {
                let at = plain.char_indices().nth(max).map_or(plain.len(), |(at, _)| at);
                plain.truncate(at);
                plain.push_str(&format!("\n[… {} more characters cut]", chars - max));
                self.cut.mime_values += 1;
            }
        }
        data
    }

    /// A frame of `bytes` was skipped unread, being over `limit` bytes.
    pub(crate) fn frame_skipped(&mut self, bytes: u64, limit: usize) {
        self.cut.frame_bytes += bytes;
        self.notes.push(format!(
            "[output cut at {limit} bytes: a kernel frame of {bytes} bytes, over the frame limit, was skipped unread]\n"
        ));
    }

    pub(crate) fn error(&mut self, ename: String, evalue: String, traceback: Vec<String>) {
        self.outputs.push(Output::Error { ename, evalue, traceback });
    }

    /// The outputs, with the cut note and the kept tail appended.
    pub(crate) fn finish(mut self) -> (Vec<Output>, Cut) {
        if self.cut.stream_chars > 0 {
            let note = format!(
                "\n[… {} characters of output cut; the last {} follow …]\n",
                self.cut.stream_chars,
                self.tail_chars.min(self.cut.stream_chars)
            );
            self.outputs.push(Output::Stream { name: StreamName::Stderr, text: note });
            for (name, text) in std::mem::take(&mut self.tail) {
                self.outputs.push(Output::Stream { name, text });
            }
        }
        for note in std::mem::take(&mut self.notes) {
            self.outputs.push(Output::Stream { name: StreamName::Stderr, text: note });
        }
        (self.outputs, self.cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, tail: usize) -> OutputLimits {
        OutputLimits { max_stream_chars: max, tail_chars: tail, ..OutputLimits::default() }
    }

    fn texts(outputs: &[Output]) -> String {
        outputs
            .iter()
            .map(|output| match output {
                Output::Stream { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn adjacent_writes_merge() {
        let mut collector = Collector::new(limits(100, 10));
        collector.stream(StreamName::Stdout, "a");
        collector.stream(StreamName::Stdout, "b");
        collector.stream(StreamName::Stderr, "c");
        let (outputs, cut) = collector.finish();
        assert_eq!(outputs.len(), 2);
        assert!(cut.is_empty());
    }

    #[test]
    fn cut_keeps_head_note_and_tail() {
        let mut collector = Collector::new(limits(5, 3));
        for chunk in ["0123", "4567", "89é"] {
            collector.stream(StreamName::Stdout, chunk);
        }
        let (outputs, cut) = collector.finish();
        assert_eq!(cut.stream_chars, 6);
        let text = texts(&outputs);
        assert!(text.starts_with("01234\n[… 6 characters of output cut; the last 3 follow …]\n"), "{text}");
        assert!(text.ends_with("89é"), "{text}");
    }

    /// A piece longer than the tail replaces it with its own end; shorter ones after it follow on.
    #[test]
    fn a_long_piece_keeps_only_its_end_in_the_tail() {
        let mut collector = Collector::new(limits(2, 4));
        collector.stream(StreamName::Stdout, "ab");
        collector.stream(StreamName::Stderr, "xyz");
        collector.stream(StreamName::Stdout, "0123456789");
        assert_eq!(collector.tail, [(StreamName::Stdout, "6789".to_owned())]);
        collector.stream(StreamName::Stdout, "!");
        assert_eq!(collector.tail, [(StreamName::Stdout, "789!".to_owned())]);
        let (_, cut) = collector.finish();
        assert_eq!(cut.stream_chars, 14);
    }

    /// A skipped frame is noted after the stream cap's tail, with its size and the limit.
    #[test]
    fn a_skipped_frame_is_noted_at_the_end_whatever_the_cap() {
        let mut collector = Collector::new(limits(2, 2));
        collector.stream(StreamName::Stdout, "abcdef");
        collector.frame_skipped(1 << 30, 16 << 20);
        let (outputs, cut) = collector.finish();
        assert_eq!((cut.stream_chars, cut.frame_bytes), (4, 1 << 30));
        assert!(
            texts(&outputs).ends_with(
                "ef[output cut at 16777216 bytes: a kernel frame of 1073741824 bytes, over the frame limit, was skipped unread]\n"
            ),
            "{outputs:?}"
        );
    }

    #[test]
    fn png_header_size() {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend_from_slice(&640u32.to_be_bytes());
        bytes.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(png_size(&bytes), Some((640, 480)));
        assert_eq!(png_size(b"GIF89a"), None);
    }
}
