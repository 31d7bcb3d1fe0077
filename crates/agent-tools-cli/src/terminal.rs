//! What the command writes and how it ends: its exit statuses, stdout (results only), and
//! the progress line on a terminal's stderr.

use agent_tools::{ProgressSink, ToolResult, WAITING_FOR_USER};

/// The exit status of a command that did what it was asked.
pub(crate) const SUCCESS: u8 = 0;
/// The exit status of a call whose tool reported an error.
pub(crate) const TOOL_ERROR: u8 = 1;
/// The exit status of a refused or misused command.
pub(crate) const MISUSE: u8 = 2;
/// The exit status of a call cancelled by Ctrl-C.
pub(crate) const CANCELLED: u8 = 130;

/// Progress on a terminal's stderr: one line, rewritten in place. Reports
/// while the user is asked are left out: the question is on this terminal.
pub(crate) fn terminal_progress() -> ProgressSink {
    ProgressSink::new(|report| {
        if !report.message.contains(WAITING_FOR_USER) {
            eprint_raw(&format!("\r\x1b[2K{}", report.message));
        }
    })
}

pub(crate) fn clear_progress_line() {
    eprint_raw("\r\x1b[2K");
}

pub(crate) fn print_result(result: &ToolResult, json: bool) -> anyhow::Result<()> {
    if json {
        let value = match (&result.structured, result.is_error) {
            (Some(value), _) => value.clone(),
            (None, true) => serde_json::json!({ "error": result.text }),
            (None, false) => serde_json::json!({ "text": result.text }),
        };
        print(&serde_json::to_string_pretty(&value)?);
    } else {
        let mut text = result.text.clone();
        for image in &result.images {
            text.push_str(&format!("\n[image {}, {} bytes base64]", image.mime, image.data_base64.len()));
        }
        print(&text);
    }
    Ok(())
}

/// The one place the command writes to stdout.
#[allow(clippy::print_stdout)]
pub(crate) fn print(text: &str) {
    use std::io::Write as _;
    // A closed pipe (`| head`) is the reader's choice, not an error to panic on.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Writes to stderr without a newline (the progress line).
fn eprint_raw(text: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
