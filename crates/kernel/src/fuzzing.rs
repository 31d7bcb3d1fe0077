//! For the fuzz targets only (the `fuzzing` feature): the kernel's readers run
//! over any bytes, with no process.

use tokio::io::AsyncRead;
use tokio::sync::mpsc;

use crate::OutputLimits;
use crate::StreamName;
use crate::output::{Collector, Cut, Output};
use crate::process::{EVENTS_QUEUED, Event, MAX_FRAME_BYTES, spawn_frame_reader};
use crate::protocol::KernelFrame;
use crate::scanner::{Piece, SyncScanner};

/// One frame as the reader gave it: the decoded frame (its `Debug` text), or why the line
/// is not a frame.
pub type FrameLine = Result<String, String>;

/// Runs the driver's frame reader over `stream` to its end, then hands the frames a cell
/// would see to an output collector with `limits`, as a running cell does. Returns every
/// line read, and the collector's outputs and cut.
pub async fn read_frames<R>(stream: R, limits: OutputLimits) -> (Vec<FrameLine>, Vec<Output>, Cut)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (sender, mut receiver) = mpsc::channel(EVENTS_QUEUED);
    spawn_frame_reader(stream, sender);
    let mut lines = Vec::new();
    let mut collector = Collector::new(limits);
    while let Some(event) = receiver.recv().await {
        match event {
            Event::Frame(frame) => {
                lines.push(Ok(format!("{frame:?}")));
                match frame {
                    KernelFrame::Stream { name, text } => {
                        let name = if name == "stderr" { StreamName::Stderr } else { StreamName::Stdout };
                        collector.stream(name, &text);
                    }
                    KernelFrame::Display { data } => collector.display(data, false),
                    KernelFrame::Result { data } => collector.display(data, true),
                    KernelFrame::Error { ename, evalue, traceback } => collector.error(ename, evalue, traceback),
                    KernelFrame::Ready { .. } | KernelFrame::Tool { .. } | KernelFrame::Done { .. } => {}
                }
            }
            Event::BadFrame(error) => lines.push(Err(error)),
            Event::FrameSkipped { bytes, ended: true } => {
                lines.push(Err(format!("a line of {bytes} bytes skipped")));
                collector.frame_skipped(bytes, MAX_FRAME_BYTES);
            }
            Event::FrameSkipped { ended: false, .. } => {}
            Event::FramesClosed => break,
            Event::Raw(..) | Event::Sync(..) => {}
        }
    }
    let (outputs, cut) = collector.finish();
    (lines, outputs, cut)
}

/// A piece of a raw stream: text, or `None` for a sync marker.
pub type RawPiece = Option<String>;

/// Runs the raw-stream scanner for `marker` over `chunks` in order, then its end of stream.
pub fn scan(marker: &str, chunks: &[&[u8]]) -> Vec<RawPiece> {
    let mut scanner = SyncScanner::new(marker);
    let mut pieces: Vec<RawPiece> = Vec::new();
    for chunk in chunks {
        pieces.extend(scanner.push(chunk).into_iter().map(|piece| match piece {
            Piece::Text(text) => Some(text),
            Piece::Sync => None,
        }));
    }
    pieces.extend(scanner.finish().map(Some));
    pieces
}
