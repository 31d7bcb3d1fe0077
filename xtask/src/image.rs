//! `cargo xtask image`: the container image of `deploy/Containerfile`, built offline with podman.
//!
//! The image is `FROM scratch` plus a Debian bookworm root filesystem that `mmdebstrap` makes from
//! Debian's archive ([`ROOTFS_PACKAGES`]), the `agent-tools` binary, and pyright from setup's npm
//! install. The root filesystem is cached as `.tools/image/rootfs-KEY.tar`, KEY a hash of
//! everything that makes it (suite, mirrors, packages, options), so a changed list makes a new one
//! and an unchanged one is reused (setup makes it once). The build context is laid out in
//! `.tools/image/context/`.
//!
//! `--bench` times container start to the first answered tool call over MCP HTTP, under runc and
//! under gVisor (runsc), with the official MCP Python SDK from setup's venv (`xtask/python/first_call.py`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use crate::{NPM_SERVERS, run_quiet, tools_dir, venv_bin, workspace_root};

/// The Debian suite of the root filesystem: the host's, so a binary built here runs inside.
pub const ROOTFS_SUITE: &str = "bookworm";
/// Debian's archive and its security updates.
pub const ROOTFS_MIRRORS: &[&str] = &[
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
];
/// What the tools drive inside the container, from Debian: Python for `eval` and pyright's
/// checks, debugpy for `debug`, node for JavaScript cells and pyright, tini as PID 1.
pub const ROOTFS_PACKAGES: &[&str] = &["python3", "python3-debugpy", "nodejs", "tini"];
/// mmdebstrap's options besides the packages: no documentation but the copyrights, and the
/// image's user (uid 1000, `agent`) with its home and the workspace it owns.
const ROOTFS_OPTIONS: &[&str] = &[
    "--variant=apt",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--customize-hook=echo 'agent:x:1000:1000:agent-tools:/home/agent:/usr/sbin/nologin' >> \"$1/etc/passwd\"",
    "--customize-hook=echo 'agent:x:1000:' >> \"$1/etc/group\"",
    "--customize-hook=mkdir -p \"$1/home/agent\" \"$1/workspace\" && chown 1000:1000 \"$1/home/agent\" \"$1/workspace\"",
];
/// The image's name when `--tag` is not given.
pub const DEFAULT_TAG: &str = "localhost/agent-tools:latest";
/// The port the image serves on.
pub const PORT: u16 = 7420;

/// `cargo xtask image [--binary PATH] [--tag TAG] [--bench [--runs N]]`.
pub fn run(args: &[&str]) -> Result<()> {
    let mut binary = None;
    let mut tag = DEFAULT_TAG.to_owned();
    let mut bench = false;
    let mut runs = 5usize;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--binary" => binary = Some(PathBuf::from(rest.next().context("--binary needs a path")?)),
            "--tag" => (*rest.next().context("--tag needs a name")?).clone_into(&mut tag),
            "--bench" => bench = true,
            "--runs" => runs = rest.next().context("--runs needs a number")?.parse().context("--runs")?,
            other => bail!("cargo xtask image: unknown argument `{other}`"),
        }
    }
    let binary = match binary {
        Some(binary) => binary,
        None => release_binary()?,
    };
    build(&binary, &tag)?;
    if bench {
        bench_first_call(&tag, runs)?;
    }
    Ok(())
}

/// `cargo build --release -p agent-tools-cli`, and the binary it made.
fn release_binary() -> Result<PathBuf> {
    let started = Instant::now();
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--package", "agent-tools-cli", "--bin", "agent-tools"])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .status()?;
    if !status.success() {
        bail!("cargo build --release -p agent-tools-cli failed ({status})");
    }
    println!("image: built the release binary ({:.1}s)", started.elapsed().as_secs_f64());
    Ok(workspace_root().join("target/release/agent-tools"))
}

/// Builds the image `tag` from `binary`: the root filesystem (cached), the context, `podman build`.
pub fn build(binary: &Path, tag: &str) -> Result<()> {
    let started = Instant::now();
    let rootfs = rootfs()?;
    let context = tools_dir().join("image").join("context");
    lay_out_context(&context, &rootfs, binary)?;
    let containerfile = workspace_root().join("deploy/Containerfile");
    let previous = image_id(tag);
    run_quiet(
        Command::new("podman").args(["build", "--quiet", "--tag", tag, "--file"]).arg(&containerfile).arg(&context),
    )?;
    // The image the tag named before, now untagged, goes (kept while a container uses it).
    if let Some(previous) = previous.filter(|id| Some(id) != image_id(tag).as_ref()) {
        let _ = Command::new("podman").args(["rmi", &previous]).output();
    }
    let size = run_quiet(Command::new("podman").args(["image", "inspect", "--format", "{{.Size}}", tag]))?;
    let size: u64 = String::from_utf8_lossy(&size.stdout).trim().parse().unwrap_or(0);
    println!(
        "image: {tag} built in {:.1}s ({} MB; root filesystem {})",
        started.elapsed().as_secs_f64(),
        size / 1_000_000,
        rootfs.display()
    );
    Ok(())
}

/// The id of the image `tag` names, if any.
fn image_id(tag: &str) -> Option<String> {
    let out = Command::new("podman").args(["image", "inspect", "--format", "{{.Id}}", tag]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The cached root filesystem's path for the current package list (it may not exist yet).
pub fn rootfs_path() -> PathBuf {
    tools_dir().join("image").join(format!("rootfs-{:016x}.tar", rootfs_key()))
}

/// FNV-1a (64 bits) over what makes the root filesystem: stable across Rust versions, unlike `DefaultHasher`.
fn rootfs_key() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let parts =
        std::iter::once(ROOTFS_SUITE).chain(ROOTFS_MIRRORS.iter().copied()).chain(ROOTFS_PACKAGES.iter().copied());
    for part in parts.chain(ROOTFS_OPTIONS.iter().copied()) {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The cached root filesystem, made by mmdebstrap when missing (about a minute, 300 MB).
pub fn rootfs() -> Result<PathBuf> {
    let path = rootfs_path();
    if path.is_file() {
        return Ok(path);
    }
    let started = Instant::now();
    let dir = path.parent().context("the rootfs path has a parent")?;
    std::fs::create_dir_all(dir)?;
    let partial = path.with_extension("partial.tar");
    run_quiet(
        Command::new("mmdebstrap")
            .args(["--quiet", "--format=tar"])
            .args(ROOTFS_OPTIONS)
            .arg(format!("--include={}", ROOTFS_PACKAGES.join(",")))
            .arg(ROOTFS_SUITE)
            .arg(&partial)
            .args(ROOTFS_MIRRORS),
    )?;
    std::fs::rename(&partial, &path)?;
    // Older tarballs (another package list) are of no further use.
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("rootfs-") && entry.path() != path && entry.path().is_file() {
            std::fs::remove_file(entry.path())?;
        }
    }
    println!("image: root filesystem made by mmdebstrap in {:.1}s", started.elapsed().as_secs_f64());
    Ok(path)
}

/// setup's check: the root filesystem for the current list is cached.
pub fn check_rootfs() -> Option<String> {
    let path = rootfs_path();
    let size = std::fs::metadata(&path).ok()?.len();
    Some(format!("{} ({} MB)", path.display(), size / 1_000_000))
}

/// setup's install.
pub fn install_rootfs() -> Result<()> {
    rootfs().map(drop)
}

/// The build context: the root filesystem (hard-linked), the binary, pyright and its commands, the probe.
fn lay_out_context(context: &Path, rootfs: &Path, binary: &Path) -> Result<()> {
    if context.exists() {
        std::fs::remove_dir_all(context)?;
    }
    std::fs::create_dir_all(context.join("node_modules"))?;
    std::fs::create_dir_all(context.join("bin"))?;
    if std::fs::hard_link(rootfs, context.join("rootfs.tar")).is_err() {
        std::fs::copy(rootfs, context.join("rootfs.tar"))?;
    }
    // Stripped: the binary's line tables serve backtraces on this machine, not in the image.
    run_quiet(Command::new("strip").arg("-o").arg(context.join("agent-tools")).arg(binary))
        .with_context(|| format!("cannot strip {}", binary.display()))?;
    let (name, version) = NPM_SERVERS.iter().find(|(name, _)| *name == "pyright").context("pyright is pinned")?;
    let pyright = tools_dir().join("node/node_modules").join(name);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(pyright.join("package.json")).with_context(|| {
            format!("{} is missing: run `cargo xtask setup` (it installs pyright from npm)", pyright.display())
        })?)?;
    if manifest["version"] != *version {
        bail!("{} is pyright {}, not {version}: run `cargo xtask setup`", pyright.display(), manifest["version"]);
    }
    run_quiet(Command::new("cp").arg("-a").arg(&pyright).arg(context.join("node_modules")))?;
    std::fs::copy(workspace_root().join("deploy/probe.py"), context.join("probe.py"))?;
    for (command, script) in [("pyright", "index.js"), ("pyright-langserver", "langserver.index.js")] {
        std::os::unix::fs::symlink(
            format!("/usr/local/lib/node_modules/pyright/{script}"),
            context.join("bin").join(command),
        )?;
    }
    Ok(())
}

/// A container runtime podman runs the image under, with what each needs on this machine.
pub struct Runtime {
    /// Its name in the start benchmark's output and for [`runtime`]: `runc` or `gvisor`.
    pub name: &'static str,
    /// podman's global options (before `run`).
    pub global: &'static [&'static str],
    /// `podman run`'s options.
    pub run: &'static [&'static str],
}

/// runc, and gVisor (runsc).
///
/// runc needs the limits given explicitly: without them it fails setting RLIMIT_NPROC ("error
/// setting rlimit type 7"). runsc runs with its own network stack off (`network=host`): its check
/// for the root network namespace misfires on newer kernels ("cannot run with network enabled in
/// root network namespace"), and host mode inside podman's network namespace still publishes only
/// the ports given with `-p`.
pub const RUNTIMES: &[Runtime] = &[
    Runtime {
        name: "runc",
        global: &["--runtime=runc"],
        run: &["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"],
    },
    Runtime { name: "gvisor", global: &["--runtime=runsc", "--runtime-flag=network=host"], run: &[] },
];

/// The runtime named `name` (`runc` or `gvisor`).
pub fn runtime(name: &str) -> Result<&'static Runtime> {
    RUNTIMES.iter().find(|r| r.name == name).with_context(|| format!("no runtime `{name}`: runc or gvisor"))
}

/// Times container start to the first answered tool call, `runs` times per runtime.
fn bench_first_call(tag: &str, runs: usize) -> Result<()> {
    let python = venv_bin("python");
    if !python.exists() {
        bail!("{} is missing: run `cargo xtask setup` (the MCP Python SDK times the call)", python.display());
    }
    let script = workspace_root().join("xtask/python/first_call.py");
    println!("image: container start to the first answered tool call (ast_grep over MCP HTTP), {runs} runs each");
    for runtime in RUNTIMES {
        let mut times = Vec::new();
        for i in 0..runs {
            let name = format!("agent-tools-bench-{}-{i}", std::process::id());
            let port = free_port()?;
            let args = serde_json::json!({
                "podman": podman_run_argv(runtime, tag, &name, port, "bench-token-0123456789abcdef", None),
                "url": format!("http://127.0.0.1:{port}/runs/default/mcp"),
                "token": "bench-token-0123456789abcdef",
            });
            let out = Command::new(&python).arg(&script).arg(args.to_string()).output();
            let _ = Command::new("podman").args(["rm", "--force", "--volumes", "--time", "2", &name]).output();
            let out = out?;
            if !out.status.success() {
                bail!("{}: {}", runtime.name, String::from_utf8_lossy(&out.stderr));
            }
            let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            times.push(report["first_call_ms"].as_f64().context("first_call_ms")?);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "image: {:<6} start to first call: median {median:.0} ms, min {:.0} ms, max {:.0} ms",
            runtime.name,
            times[0],
            times[times.len() - 1]
        );
    }
    Ok(())
}

/// `podman … run -d` of the image: named `name`, the token in the environment, port 7420 published
/// on 127.0.0.1:`port` only, `workspace` (a host directory) as the volume when given.
pub fn podman_run_argv(
    runtime: &Runtime,
    tag: &str,
    name: &str,
    port: u16,
    token: &str,
    workspace: Option<&Path>,
) -> Vec<String> {
    let mut argv: Vec<String> = vec!["podman".into()];
    argv.extend(runtime.global.iter().map(|s| (*s).to_owned()));
    argv.extend(["run", "--detach", "--name", name].map(str::to_owned));
    argv.extend(runtime.run.iter().map(|s| (*s).to_owned()));
    argv.extend(["--publish".to_owned(), format!("127.0.0.1:{port}:{PORT}")]);
    argv.extend(["--env".to_owned(), format!("AGENT_TOOLS_HOST_TOKEN={token}")]);
    if let Some(dir) = workspace {
        // `U`: the directory is chowned to the image's user (uid 1000), who writes there.
        argv.extend(["--volume".to_owned(), format!("{}:/workspace:U", dir.display())]);
    }
    argv.push(tag.to_owned());
    argv
}

/// A free loopback port (bound, read, released).
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
