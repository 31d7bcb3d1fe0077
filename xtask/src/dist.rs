//! `cargo xtask dist`: the Linux wheel a release publishes, built here and checked as a
//! user without a toolchain would meet it.
//!
//! 1. maturin builds `crates/agent-tools-py` with the release profile, linked by zig
//!    (PyPI's `ziglang`) against glibc 2.28, so the wheel is `manylinux_2_28` whatever
//!    this machine's glibc: the platform the release workflow's maturin-action builds.
//! 2. `auditwheel show` says which policy the wheel meets; anything newer than 2.28 fails.
//! 3. A fresh venv with `PATH` holding no Rust toolchain installs the wheel from the file,
//!    and the time from `pip install` to the first answered call is measured: `agent-tools
//!    call ast_grep`, then `agent-tools serve` answering MCP `initialize`, then `import agent_tools`
//!    and a call through `Run`.
//!
//! The wheel is left in `target/dist/`; the figures are printed.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use crate::setup::venv_bin;
use crate::{run_quiet, workspace_root};

/// The glibc the wheel is built against, as maturin and auditwheel name the policy.
const MANYLINUX: &str = "manylinux_2_28";

/// Builds the wheel into `target/dist/`, checks its manylinux policy, installs it
/// into a fresh venv and times the first calls, printing the figures.
///
/// # Errors
/// maturin or auditwheel missing from setup's venv, a failed build, a wheel that
/// needs a glibc newer than 2.28, or an installed package whose calls do not answer.
pub fn run() -> Result<()> {
    let root = workspace_root();
    let out = root.join("target/dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("cannot empty {}", out.display()))?;
    }
    std::fs::create_dir_all(&out)?;
    for (what, program) in [("maturin", "maturin"), ("auditwheel", "auditwheel")] {
        if !venv_bin(program).exists() {
            bail!("{what} is missing from .tools/venv: run `cargo xtask setup`");
        }
    }

    println!("dist: building the wheel (release profile, zig, {MANYLINUX}) …");
    let started = Instant::now();
    run_quiet(
        Command::new(venv_bin("maturin"))
            .args(["build", "--release", "--locked", "--zig", "--compatibility", MANYLINUX, "--out"])
            .arg(&out)
            .arg("--manifest-path")
            .arg(root.join("crates/agent-tools-py/Cargo.toml"))
            // maturin runs zig as `python -m ziglang`, with the venv's python.
            .env("PATH", path_with(&[venv_bin("python").parent().unwrap_or(Path::new("."))]))
            .current_dir(&root),
    )?;
    let built = started.elapsed();
    let wheel = one_wheel(&out)?;
    let size = std::fs::metadata(&wheel)?.len();
    println!(
        "dist: {} ({:.1} MB), built in {:.0} s",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        size as f64 / 1e6,
        built.as_secs_f64()
    );

    let shown = stdout(run_quiet(Command::new(venv_bin("auditwheel")).arg("show").arg(&wheel))?);
    let policy = policy(&shown).with_context(|| format!("auditwheel named no policy:\n{shown}"))?;
    println!("dist: auditwheel: {policy}");
    if !older_or_equal(&policy, MANYLINUX) {
        bail!("the wheel needs {policy}, newer than {MANYLINUX}:\n{shown}");
    }

    check_installed(&wheel, &out)
}

/// The wheel installed into a fresh venv with no Rust toolchain on `PATH`, and used.
fn check_installed(wheel: &Path, out: &Path) -> Result<()> {
    let venv = out.join("venv");
    run_quiet(Command::new(venv_bin("python")).args(["-m", "venv"]).arg(&venv))?;
    let bin = venv.join("bin");
    // Only the venv and the system's own directories: no cargo, rustc or rustup.
    let path = std::env::join_paths([bin.clone(), PathBuf::from("/usr/bin"), PathBuf::from("/bin")])?;
    for tool in ["cargo", "rustc"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).env("PATH", &path).output()?;
        if found.status.success() {
            bail!(
                "{tool} is on the check's PATH ({}): the check must run without a toolchain",
                found.stdout.escape_ascii()
            );
        }
    }
    let project = out.join("project");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("main.rs"), "fn main() {\n    let n: u8 = \"4\".parse().unwrap();\n}\n")?;
    let command = |program: &str| {
        let mut command = Command::new(bin.join(program));
        command.env("PATH", &path).env_remove("VIRTUAL_ENV").current_dir(&project);
        command
    };

    let started = Instant::now();
    run_quiet(
        command("python")
            .args(["-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check"])
            .arg(wheel),
    )?;
    let installed = started.elapsed();
    let call = ["call", "ast_grep", r#"{"pattern": "$X.unwrap()", "language": "rust"}"#];
    let found = stdout(run_quiet(command("agent-tools").args(call))?);
    let answered = started.elapsed();
    if !found.contains("main.rs:2:17: \"4\".parse().unwrap()") {
        bail!("the installed command's ast_grep did not find the call:\n{found}");
    }
    println!(
        "dist: pip install {:.1} s; first answered call (agent-tools call ast_grep) {:.1} s after the install began",
        installed.as_secs_f64(),
        answered.as_secs_f64()
    );

    let answer = initialize(command("agent-tools").args(["serve", "--cap", "read"]))?;
    if answer["result"]["serverInfo"]["name"] != "agent-tools" {
        bail!("`agent-tools serve` did not answer initialize as agent-tools: {answer}");
    }
    println!("dist: agent-tools serve answered MCP initialize ({})", answer["result"]["protocolVersion"]);
    let script = "import asyncio, agent_tools\n\
                  async def main():\n\
                  \x20   async with agent_tools.Run('.', cap='read') as run:\n\
                  \x20       r = await run.call('ast_grep', {'pattern': '$X.unwrap()', 'language': 'rust'})\n\
                  \x20       print(r.text.splitlines()[-1])\n\
                  asyncio.run(main())";
    let printed = stdout(run_quiet(command("python").args(["-c", script]))?);
    if !printed.contains("main.rs:2:17") {
        bail!("`import agent_tools` and a call through Run did not find the call:\n{printed}");
    }
    println!("dist: import agent_tools, Run.call('ast_grep') answered: {}", printed.trim());
    println!("dist: ok; the wheel is {}", wheel.display());
    Ok(())
}

fn stdout(out: std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `PATH` with `dirs` first.
fn path_with(dirs: &[&Path]) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let all = dirs.iter().map(|d| d.to_path_buf()).chain(std::env::split_paths(&rest));
    std::env::join_paths(all).unwrap_or(rest)
}

fn one_wheel(dir: &Path) -> Result<PathBuf> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [wheel] => Ok(wheel.clone()),
        _ => bail!("one wheel expected in {}, found {wheels:?}", dir.display()),
    }
}

/// The platform tag `auditwheel show` says the wheel is consistent with
/// (`manylinux_2_28_x86_64` → `manylinux_2_28`).
fn policy(shown: &str) -> Option<String> {
    let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    let tag = flat.split("consistent with the following platform tag: ").nth(1)?;
    let tag = tag.trim_start_matches(['"', '`', '\'']);
    let tag: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let arch = ["_x86_64", "_aarch64"].iter().find_map(|a| tag.strip_suffix(a)).unwrap_or(&tag);
    Some(arch.to_owned())
}

/// Whether `policy` (`manylinux_2_17`) asks no newer glibc than `limit` (`manylinux_2_28`).
fn older_or_equal(policy: &str, limit: &str) -> bool {
    let glibc = |p: &str| -> Option<(u32, u32)> {
        let mut parts = p.strip_prefix("manylinux_")?.split('_');
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    matches!((glibc(policy), glibc(limit)), (Some(p), Some(l)) if p <= l)
}

/// MCP `initialize` on the server `command` starts; its answer, once it has ended with stdin.
fn initialize(command: &mut Command) -> Result<serde_json::Value> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "dist", "version": "0"}}
    });
    let mut stdin = child.stdin.take().context("no stdin")?;
    writeln!(stdin, "{request}")?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
    drop(stdin);
    let status = child.wait()?;
    if !status.success() {
        bail!("agent-tools serve ended with {status}");
    }
    serde_json::from_str(&line).with_context(|| format!("not an MCP answer: {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auditwheels_answer_reads_as_a_policy() {
        let shown = "agent_tools_server-0.1.0-cp310-abi3-manylinux_2_28_x86_64.whl is consistent with the\n\
                     following platform tag: \"manylinux_2_28_x86_64\".\n\nThe wheel references external versioned symbols";
        assert_eq!(policy(shown).as_deref(), Some("manylinux_2_28"));
        assert!(older_or_equal("manylinux_2_17", MANYLINUX));
        assert!(older_or_equal("manylinux_2_28", MANYLINUX));
        assert!(!older_or_equal("manylinux_2_36", MANYLINUX));
        assert!(!older_or_equal("linux", MANYLINUX));
    }
}
