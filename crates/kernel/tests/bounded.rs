//! Bounded reads from a real kernel: a cell that prints a gigabyte without a newline, on
//! its stdout or straight into the frame pipe, is cut, keeps its kernel's state, and costs
//! this process a bounded amount of memory (its peak resident size, `VmHWM`, read before
//! and after each cell).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "it/common/mod.rs"]
mod common;

use common::*;
use kernel::{CellStatus, Kernels};

/// One gigabyte (1 GiB), in bytes and in ASCII characters.
const GIB: u64 = 1 << 30;

/// The most this process's peak resident memory may grow during one of these cells: an
/// eighth of what the cell prints.
const GROWTH_KB: u64 = GIB / 8 / 1024;

/// The tests here measure one process's peak memory, so they run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// This process's peak resident memory (`VmHWM` in `/proc/self/status`), in kB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `code` in `language` after `setup`, checking the peak memory's growth during it.
async fn cell_within_memory(kernels: &Kernels, language: kernel::Language, code: &str) -> kernel::CellResult {
    let before = peak_kb();
    let result = run(kernels, language, code).await;
    let grown = peak_kb().saturating_sub(before);
    assert!(grown < GROWTH_KB, "peak memory grew by {grown} kB (limit {GROWTH_KB} kB): {}", result.text());
    result
}

#[tokio::test]
async fn a_gigabyte_printed_without_a_newline_is_cut_and_the_state_is_kept() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    py(&kernels, "x = 41").await;
    let code = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)";
    let result = cell_within_memory(&kernels, kernel::Language::Python, code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert!(!result.state_lost);
    // The cap is 40 000 characters: the rest of the gigabyte is cut, and the note says how much.
    let cut = GIB - 40_000;
    assert_eq!(result.cut.map(|c| c.stream_chars as u64), Some(cut));
    let text = result.text();
    assert!(text.contains(&format!("[… {cut} characters of output cut; the last 2000 follow …]")), "{text:.300}");
    assert!(text.len() < 100_000, "{} bytes of text", text.len());
    let next = py(&kernels, "x + 1").await;
    assert_eq!(result_text(&next).as_deref(), Some("42"), "{}", next.text());
}

#[tokio::test]
async fn a_gigabyte_written_into_the_frame_pipe_is_skipped_unread_and_the_state_is_kept() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    py(&kernels, "x = 41").await;
    // fd 4 is the driver's frame pipe: a line of a gigabyte that the driver never wrote.
    let code = "import os\nchunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    view = memoryview(chunk)\n    \
                while view:\n        view = view[os.write(4, view):]\nprint('wrote a gigabyte')";
    let result = cell_within_memory(&kernels, kernel::Language::Python, code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert!(!result.state_lost);
    assert_eq!(result.cut.map(|c| c.frame_bytes), Some(GIB));
    let text = result.text();
    assert!(text.contains("wrote a gigabyte"), "{text}");
    assert!(
        text.contains(&format!(
            "[output cut at 16777216 bytes: a kernel frame of {GIB} bytes, over the frame limit, was skipped unread]"
        )),
        "{text}"
    );
    let next = py(&kernels, "x + 1").await;
    assert_eq!(result_text(&next).as_deref(), Some("42"), "{}", next.text());
}

/// One `write` of a quarter gigabyte travels in pieces the frame limit allows.
#[tokio::test]
async fn one_huge_javascript_write_is_cut_and_the_state_is_kept() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    js(&kernels, "let kept = 41").await;
    let chars = GIB / 4;
    let result =
        cell_within_memory(&kernels, kernel::Language::JavaScript, "process.stdout.write('x'.repeat(2 ** 28))").await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert_eq!(result.cut.map(|c| (c.stream_chars as u64, c.frame_bytes)), Some((chars - 40_000, 0)));
    let next = js(&kernels, "kept + 1").await;
    assert_eq!(result_text(&next).as_deref(), Some("42"), "{}", next.text());
}
