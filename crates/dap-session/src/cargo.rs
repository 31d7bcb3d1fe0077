//! A Rust test binary to debug: `cargo test --no-run --message-format=json`
//! builds the package's test targets, and the one whose source is the file
//! asked for (or the only one) is what lldb runs, with the test's name as
//! its argument.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::error::{Error, Result};
use enclosure::capture;

/// Bytes of cargo's output read per pipe: 64 MiB (67 108 864). Its JSON messages for a
/// workspace of hundreds of crates take a few MB; a build script or proc macro that
/// prints without end must not fill this process, so the rest is dropped as it arrives
/// and a refusal says so.
const BUILD_OUTPUT_CAP: usize = 64 << 20;

/// Builds the tests of the Cargo package at or above `program` and returns
/// the test executable to run: the one built from `program` when it is a
/// source file (`src/lib.rs`, `tests/parse.rs`), else the only one.
pub async fn test_binary(
    program: &Path,
    cwd: &Path,
    timeout: Duration,
    enclosure: Option<&enclosure::Enclosure>,
) -> Result<PathBuf> {
    let manifest_dir = package_dir(program).ok_or_else(|| {
        Error::Invalid(format!("{} is not inside a Cargo package (no Cargo.toml above it)", program.display()))
    })?;
    let mut plain = std::process::Command::new("cargo");
    plain.args(["test", "--no-run", "--message-format=json", "--manifest-path"]).arg(manifest_dir.join("Cargo.toml"));
    plain.current_dir(cwd);
    // The build runs the project's build scripts and proc macros: inside the enclosure too.
    if let Some(enclosure) = enclosure {
        plain = enclosure.enclose(&plain).map_err(|e| Error::Invalid(e.to_string()))?;
    }
    let mut command = tokio::process::Command::from(plain);
    command.stdin(std::process::Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(timeout, capture::output(&mut command, BUILD_OUTPUT_CAP))
        .await
        .map_err(|_| Error::Invalid(format!("`cargo test --no-run` did not finish within {} s", timeout.as_secs())))?
        .map_err(|e| Error::Invalid(format!("`cargo test --no-run` does not run: {e}")))?;
    let stdout = output.stdout.text();
    // Said with every refusal below: what was cut may have held what was looked for.
    let cut: String = [output.stdout.cut_note("stdout"), output.stderr.cut_note("stderr")]
        .into_iter()
        .flatten()
        .map(|note| format!("; {note}"))
        .collect();
    if !output.status.success() {
        // With JSON messages the compiler's errors are on stdout, rendered; stderr has only cargo's summary.
        let mut errors = compiler_errors(&stdout);
        let stderr = output.stderr.text();
        let tail: Vec<&str> = stderr.lines().rev().filter(|l| !l.trim().is_empty()).take(6).collect();
        errors.extend(tail.into_iter().rev().map(str::to_owned));
        return Err(Error::Invalid(format!(
            "`cargo test --no-run` failed ({}{cut}):\n{}",
            output.status,
            errors.join("\n")
        )));
    }
    let built = test_executables(&stdout);
    let source = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    if program.is_file() {
        if let Some((_, executable)) = built.iter().find(|(src, _)| src == &source) {
            return Ok(executable.clone());
        }
        return Err(Error::Invalid(format!(
            "no test target of the package is built from {}; its test targets are: {}{cut}",
            program.display(),
            listing(&built)
        )));
    }
    match built.as_slice() {
        [(_, executable)] => Ok(executable.clone()),
        [] => Err(Error::Invalid(format!("`cargo test --no-run` built no test executable{cut}"))),
        _ => Err(Error::Invalid(format!(
            "the package has several test targets; name the source file of the one to debug: {}{cut}",
            listing(&built)
        ))),
    }
}

/// The nearest directory with a `Cargo.toml`, from `program` (a file or directory) up.
fn package_dir(program: &Path) -> Option<PathBuf> {
    let start = if program.is_dir() { program } else { program.parent()? };
    start.ancestors().find(|dir| dir.join("Cargo.toml").is_file()).map(Path::to_path_buf)
}

/// The rendered text of the first compiler errors in cargo's JSON messages (at most 5).
fn compiler_errors(messages: &str) -> Vec<String> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .filter_map(|m| m["message"]["rendered"].as_str().map(|r| r.trim_end().to_owned()))
        .take(5)
        .collect()
}

/// (source file, executable) of every test target in cargo's JSON messages.
fn test_executables(messages: &str) -> Vec<(PathBuf, PathBuf)> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == true)
        .filter_map(|m| {
            let executable = m["executable"].as_str()?;
            let source = m["target"]["src_path"].as_str()?;
            let source = std::fs::canonicalize(source).unwrap_or_else(|_| PathBuf::from(source));
            Some((source, PathBuf::from(executable)))
        })
        .collect()
}

fn listing(built: &[(PathBuf, PathBuf)]) -> String {
    built.iter().map(|(source, _)| source.display().to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_errors_are_read_rendered_from_cargos_messages() {
        let messages = [
            r#"{"reason":"compiler-message","message":{"level":"warning","rendered":"warning: unused"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"error","rendered":"error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5\n"}}"#,
        ]
        .join("\n");
        assert_eq!(compiler_errors(&messages), ["error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5"]);
    }

    #[test]
    fn test_executables_are_read_from_cargos_messages() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"src_path":"/p/src/lib.rs"},"profile":{"test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"src_path":"/p/src/lib.rs"},"profile":{"test":true},"executable":"/t/debug/deps/calc-1"}"#,
            r#"{"reason":"compiler-artifact","target":{"src_path":"/p/tests/add.rs"},"profile":{"test":true},"executable":"/t/debug/deps/add-2"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(
            test_executables(&messages),
            vec![
                (PathBuf::from("/p/src/lib.rs"), PathBuf::from("/t/debug/deps/calc-1")),
                (PathBuf::from("/p/tests/add.rs"), PathBuf::from("/t/debug/deps/add-2")),
            ]
        );
    }
}
