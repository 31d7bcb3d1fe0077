//! The benchmark's corpora: real code no one here wrote, tens of MB per language.
//!
//! - Rust: the `.rs` files under `src/` of the cargo registry's unpacked crates
//!   (library code, not tests or examples), copied to `.tools/corpus/rust`, without
//!   the generated FFI bindings of `windows*`, `linux-raw-sys` and `libc` (over
//!   150 MB that would otherwise be most of the corpus).
//! - Python: the standard library's `.py`/`.pyi` files, copied to
//!   `.tools/corpus/python`, without `site-packages` (which some installs keep inside it).
//! - TypeScript: TypeScript's own `lib` directory, in place (installed by setup).
//!
//! Copies are remade on every run so they follow the registry and the interpreter.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::setup::{registry_src_dirs, typescript_lib};
use crate::{run_quiet, tools_dir};

/// Registry crates left out of the Rust corpus: machine-generated FFI bindings.
const GENERATED: &[&str] = &["windows", "linux-raw-sys-", "libc-"];

pub(crate) struct Corpus {
    pub(crate) lang: astmatch::Lang,
    pub(crate) dir: PathBuf,
    pub(crate) what: String,
    pub(crate) files: usize,
    pub(crate) bytes: u64,
}

pub(crate) fn prepare() -> Result<Vec<Corpus>> {
    let root = tools_dir().join("corpus");
    let mut corpora = Vec::new();

    let rust = root.join("rust");
    fresh(&rust)?;
    let registries = registry_src_dirs();
    if registries.is_empty() {
        bail!("no cargo registry sources; run `cargo xtask setup`");
    }
    for registry in &registries {
        for entry in std::fs::read_dir(registry)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if GENERATED.iter().any(|g| name.starts_with(g)) {
                continue;
            }
            copy_tree(&entry.path().join("src"), &rust.join(&name).join("src"), &["rs"])?;
        }
    }
    corpora.push(summarise(
        astmatch::Lang::Rust,
        rust,
        "src/ of the cargo registry crates, without generated bindings",
    )?);

    let python = root.join("python");
    fresh(&python)?;
    let out =
        run_quiet(Command::new("python3").args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]))?;
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    copy_tree(&stdlib, &python, &["py", "pyi"])?;
    corpora.push(summarise(astmatch::Lang::Python, python, &format!("{} without site-packages", stdlib.display()))?);

    let ts = typescript_lib();
    if !ts.is_dir() {
        bail!("{} is missing; run `cargo xtask setup`", ts.display());
    }
    corpora.push(summarise(astmatch::Lang::TypeScript, ts, "TypeScript's lib")?);
    Ok(corpora)
}

fn fresh(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// Copies the files with one of `extensions` under `from` to `to`, keeping paths;
/// skips `site-packages` and symlinks.
fn copy_tree(from: &Path, to: &Path, extensions: &[&str]) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else { return Ok(()) };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if entry.file_name() != "site-packages" {
                copy_tree(&path, &to.join(entry.file_name()), extensions)?;
            }
        } else if kind.is_file() && path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e)) {
            std::fs::create_dir_all(to)?;
            std::fs::copy(&path, to.join(entry.file_name())).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

/// Counts the files of the language under `dir`, walked as the search walks it.
fn summarise(lang: astmatch::Lang, dir: PathBuf, what: &str) -> Result<Corpus> {
    let (mut files, mut bytes) = (0, 0);
    for entry in ignore::WalkBuilder::new(&dir).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) && astmatch::Lang::from_path(entry.path()) == Some(lang) {
            files += 1;
            bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    Ok(Corpus { lang, dir, what: what.to_string(), files, bytes })
}
