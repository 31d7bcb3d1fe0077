//! A reader that hands out a stream in chunks of given sizes, as a pipe may.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The chunk sizes and the stream of a stream target's input: a count byte `k`
/// (0 to 15), `k` size bytes (each a chunk of 1 to 256 bytes, used in turn), the
/// stream. With `k` = 0 the stream is read one byte at a time.
pub(crate) fn split(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&count, rest)) = data.split_first() else { return (vec![1], data) };
    let count = usize::from(count % 16).min(rest.len());
    let (sizes, stream) = rest.split_at(count);
    let sizes: Vec<usize> = sizes.iter().map(|&b| usize::from(b) + 1).collect();
    (if sizes.is_empty() { vec![1] } else { sizes }, stream)
}

/// An [`AsyncRead`] over `data` that returns at most the next chunk size per read.
pub(crate) struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl Chunked {
    pub(crate) fn new(data: &[u8], sizes: &[usize]) -> Chunked {
        Chunked { data: data.to_vec(), at: 0, sizes: sizes.to_vec(), turn: 0 }
    }

    /// The chunks this reader hands out, in order.
    pub(crate) fn chunks(data: &[u8], sizes: &[usize]) -> Vec<Vec<u8>> {
        let mut chunks = Vec::new();
        let mut at = 0;
        for size in sizes.iter().cycle() {
            if at >= data.len() {
                break;
            }
            let end = (at + size).min(data.len());
            chunks.push(data[at..end].to_vec());
            at = end;
        }
        chunks
    }
}

impl AsyncRead for Chunked {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let size = self.sizes[self.turn % self.sizes.len()];
        let end = (self.at + size.min(buf.remaining())).min(self.data.len());
        let at = self.at;
        buf.put_slice(&self.data[at..end]);
        self.at = end;
        self.turn += 1;
        Poll::Ready(Ok(()))
    }
}
