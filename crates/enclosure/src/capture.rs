//! A command run to its end with its output read under a cap: `Command::output`, except
//! that stdout and stderr are read in 64 KiB chunks and only the first `cap` bytes of each
//! are kept, the rest counted and dropped as it arrives, so a child that writes without
//! end costs at most `cap` bytes per pipe. For the commands the subsystems run to their end
//! on the project's code: the project checkers, `cargo test --no-run`, the servers' and
//! adapters' probes.

use std::borrow::Cow;
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncRead, AsyncReadExt as _};

/// What one pipe carried: its first bytes, and how many it carried in all.
#[derive(Debug, Default)]
pub struct Captured {
    /// The pipe's first bytes, at most the cap given to [`output`] or [`read`].
    pub bytes: Vec<u8>,
    /// How many bytes the pipe carried in all, those dropped included.
    pub total: u64,
}

impl Captured {
    /// The kept bytes as text, invalid UTF-8 replaced by U+FFFD.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }

    /// `its stdout was cut at N bytes (M written)` when bytes were dropped.
    pub fn cut_note(&self, pipe: &str) -> Option<String> {
        (self.total > self.bytes.len() as u64)
            .then(|| format!("its {pipe} was cut at {} bytes ({} written)", self.bytes.len(), self.total))
    }
}

/// How a command ended and what it wrote.
#[derive(Debug)]
pub struct Output {
    /// How the command ended.
    pub status: ExitStatus,
    /// What it wrote on stdout, cut at the cap.
    pub stdout: Captured,
    /// What it wrote on stderr, cut at the cap.
    pub stderr: Captured,
}

/// Spawns `command` with stdout and stderr piped, reads both to their end keeping `cap`
/// bytes of each, and waits for its exit. Its stdin and `kill_on_drop` are the caller's.
pub async fn output(command: &mut tokio::process::Command, cap: usize) -> std::io::Result<Output> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (stdout, stderr, status) = tokio::join!(read(stdout, cap), read(stderr, cap), child.wait());
    Ok(Output { status: status?, stdout, stderr })
}

/// Reads `pipe` to its end (or an error), keeping its first `cap` bytes.
pub async fn read<R: AsyncRead + Unpin>(pipe: Option<R>, cap: usize) -> Captured {
    let mut captured = Captured::default();
    let Some(mut pipe) = pipe else { return captured };
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let n = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return captured,
            Ok(n) => n,
        };
        let room = cap.saturating_sub(captured.bytes.len()).min(n);
        captured.bytes.extend_from_slice(&buffer[..room]);
        captured.total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real child writes a gigabyte to each pipe: a megabyte of each is kept, the totals are
    /// counted, and this process's peak memory grows far less than what the child wrote.
    #[tokio::test]
    async fn a_gigabyte_on_each_pipe_keeps_the_cap_and_counts_the_rest() {
        let peak = || -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default().to_owned();
            line.split_whitespace().nth(1).and_then(|kb| kb.parse().ok()).unwrap_or(0)
        };
        let before = peak();
        let mut command = tokio::process::Command::new("sh");
        command.args([
            "-c",
            "head -c 1073741824 /dev/zero | tr '\\0' o; head -c 1073741824 /dev/zero | tr '\\0' e >&2; exit 3",
        ]);
        let out = match output(&mut command, 1 << 20).await {
            Ok(out) => out,
            Err(e) => panic!("sh: {e}"),
        };
        let grown = peak().saturating_sub(before);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!((out.stdout.bytes.len(), out.stdout.total), (1 << 20, 1 << 30));
        assert_eq!((out.stderr.bytes.len(), out.stderr.total), (1 << 20, 1 << 30));
        assert!(out.stdout.text().bytes().all(|b| b == b'o') && out.stderr.text().bytes().all(|b| b == b'e'));
        assert_eq!(
            out.stdout.cut_note("stdout").as_deref(),
            Some("its stdout was cut at 1048576 bytes (1073741824 written)")
        );
        assert!(grown < 64 * 1024, "peak memory grew by {grown} kB");
    }
}
