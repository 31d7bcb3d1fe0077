//! Which files a server's own configuration leaves out of its project, so a
//! rename or a reference search can say which files it did not look at.
//!
//! Read per server, as the server reads it:
//! - pyright: `pyrightconfig.json`, else `[tool.pyright]` of `pyproject.toml`,
//!   at the server's root: `include` (default: the root) and `exclude`
//!   (default `**/node_modules`, `**/__pycache__`, `**/.*`), paths and globs
//!   relative to the root (pyright's "Configuration" docs);
//! - typescript-language-server: the root's `tsconfig.json`/`jsconfig.json`
//!   (JSON with comments) — `files`, `include` (default `**/*` without `files`),
//!   `exclude` (default `node_modules`, `bower_components`, `jspm_packages` and
//!   `outDir`), and the projects its `references` name, each the same way;
//! - gopls: the modules of the workspace (`go.work`'s `use`, else the root's
//!   `go.mod`); a file whose nearest `go.mod` is another module's is outside;
//! - clangd: with a `compile_commands.json`, a source file it does not list
//!   (headers are taken in through the sources, so they are never said to be outside).
//!
//! Other servers, and files the rules cannot decide, count as covered.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why `path` lies outside what `server`'s configuration at `root` covers, if it does.
pub(crate) fn excluded(server: &str, root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    match server {
        "pyright" => pyright(root, rel),
        "typescript-language-server" => typescript(root, path),
        "gopls" => go(root, path),
        "clangd" => clangd(root, path),
        _ => None,
    }
}

/// For a reference search: how many files of the server's languages under
/// its root its configuration leaves out, and why (the first reason), so
/// uses there are known not to have been searched.
pub(crate) fn left_out(server: &crate::server::Server) -> Option<String> {
    // A compilation database is read per file: too slow for a whole tree.
    if !matches!(server.spec.id, "pyright" | "typescript-language-server" | "gopls") {
        return None;
    }
    let mut count = 0;
    let mut first = None;
    for entry in ignore::WalkBuilder::new(&server.root).require_git(false).build().flatten() {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !crate::spec::Language::from_path(path).is_some_and(|l| server.spec.languages.contains(&l))
        {
            continue;
        }
        if let Some(why) = excluded(server.spec.id, &server.root, path) {
            count += 1;
            first.get_or_insert(why);
        }
    }
    let why = first?;
    Some(format!(
        "{count} {} under {} not searched: {why}",
        if count == 1 { "file" } else { "files" },
        server.root.display()
    ))
}

/// A glob matcher for a configuration's path patterns: a plain path also
/// matches everything below it.
fn patterns(base: &Path, list: &[String]) -> globset::GlobSet {
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in list {
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let full = if Path::new(pattern).is_absolute() {
            pattern.to_string()
        } else {
            base.join(pattern).to_string_lossy().into_owned()
        };
        for p in [full.clone(), format!("{full}/**")] {
            if let Ok(glob) = globset::GlobBuilder::new(&p).literal_separator(true).build() {
                builder.add(glob);
            }
        }
    }
    builder.build().unwrap_or_else(|_| globset::GlobSet::empty())
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
}

fn pyright(root: &Path, rel: &Path) -> Option<String> {
    let (config, source) = if let Ok(text) = std::fs::read_to_string(root.join("pyrightconfig.json")) {
        (crate::detect::parse_jsonc(&text)?, "pyrightconfig.json")
    } else {
        let text = std::fs::read_to_string(root.join("pyproject.toml")).ok()?;
        let table: toml::Table = text.parse().ok()?;
        let pyright = table.get("tool").and_then(|t| t.get("pyright"))?;
        (serde_json::to_value(pyright).ok()?, "[tool.pyright] in pyproject.toml")
    };
    let path = root.join(rel);
    if let Some(include) = strings(config.get("include"))
        && !patterns(root, &include).is_match(&path)
    {
        return Some(format!("pyright's configuration ({source}) includes only {}", include.join(", ")));
    }
    let exclude = strings(config.get("exclude"))
        .unwrap_or_else(|| vec!["**/node_modules".into(), "**/__pycache__".into(), "**/.*".into()]);
    patterns(root, &exclude)
        .is_match(&path)
        .then(|| format!("pyright's configuration ({source}) excludes them ({})", exclude.join(", ")))
}

/// Whether the TypeScript project of `config` (a tsconfig file) covers `path`,
/// following `references` (at most `depth` levels).
fn ts_covers(config: &Path, path: &Path, depth: usize) -> Option<bool> {
    let text = std::fs::read_to_string(config).ok()?;
    let value = crate::detect::parse_jsonc(&text)?;
    let base = config.parent()?;
    let files = strings(value.get("files"));
    let include =
        strings(value.get("include")).or_else(|| files.is_none().then(|| vec!["**/*".to_string()])).unwrap_or_default();
    let mut exclude = strings(value.get("exclude"))
        .unwrap_or_else(|| vec!["node_modules".into(), "bower_components".into(), "jspm_packages".into()]);
    if let Some(out_dir) = value.pointer("/compilerOptions/outDir").and_then(Value::as_str) {
        exclude.push(out_dir.to_string());
    }
    let listed = files.iter().flatten().any(|f| base.join(f) == path);
    if listed || (patterns(base, &include).is_match(path) && !patterns(base, &exclude).is_match(path)) {
        return Some(true);
    }
    if depth > 0 {
        for reference in value.get("references").and_then(Value::as_array).into_iter().flatten() {
            let Some(target) = reference.get("path").and_then(Value::as_str) else { continue };
            let target = base.join(target);
            let target = if target.is_dir() { target.join("tsconfig.json") } else { target };
            if ts_covers(&target, path, depth - 1) == Some(true) {
                return Some(true);
            }
        }
    }
    Some(false)
}

fn typescript(root: &Path, path: &Path) -> Option<String> {
    let config = ["tsconfig.json", "jsconfig.json"].iter().map(|n| root.join(n)).find(|p| p.is_file())?;
    let name = config.file_name()?.to_string_lossy().into_owned();
    (ts_covers(&config, path, 3) == Some(false)).then(|| {
        format!("they lie outside what the root's {name} includes (its files, include, exclude and references)")
    })
}

/// The directories of the workspace's Go modules: `go.work`'s `use`, else the root.
fn go_modules(root: &Path) -> Vec<PathBuf> {
    match std::fs::read_to_string(root.join("go.work")) {
        Ok(work) => crate::detect::go_work_uses(&work).into_iter().map(|dir| root.join(dir)).collect(),
        Err(_) if root.join("go.mod").is_file() => vec![root.to_path_buf()],
        Err(_) => Vec::new(),
    }
}

fn go(root: &Path, path: &Path) -> Option<String> {
    let modules: Vec<PathBuf> = go_modules(root).into_iter().map(|m| m.canonicalize().unwrap_or(m)).collect();
    if modules.is_empty() {
        return None;
    }
    let module = path.ancestors().skip(1).take_while(|d| d.starts_with(root)).find(|d| d.join("go.mod").is_file());
    match module {
        Some(m) if modules.iter().any(|k| k == m) => None,
        Some(m) => Some(format!(
            "they belong to the Go module in {}, which is not one of the workspace's (go.work's use, or the root's go.mod)",
            m.strip_prefix(root).unwrap_or(m).display()
        )),
        None => Some("no go.mod of the workspace lies above them".to_string()),
    }
}

fn clangd(root: &Path, path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?;
    if !matches!(ext, "c" | "cc" | "cpp" | "cxx" | "c++" | "m" | "mm") {
        return None;
    }
    let database =
        ["compile_commands.json", "build/compile_commands.json"].iter().map(|n| root.join(n)).find(|p| p.is_file())?;
    let entries: Value = serde_json::from_str(&std::fs::read_to_string(&database).ok()?).ok()?;
    let listed = entries.as_array()?.iter().any(|e| {
        let dir = Path::new(e.get("directory").and_then(Value::as_str).unwrap_or(""));
        let file = Path::new(e.get("file").and_then(Value::as_str).unwrap_or(""));
        let full = if file.is_absolute() { file.to_path_buf() } else { dir.join(file) };
        full == path || full.canonicalize().is_ok_and(|f| f == path)
    });
    (!listed).then(|| format!("{} does not list them", database.strip_prefix(root).unwrap_or(&database).display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_configuration_says_what_it_leaves_out() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::write(root.join("pyproject.toml"), "[tool.pyright]\ninclude = [\"src\"]\n")?;
        assert_eq!(excluded("pyright", &root, &root.join("src/pkg/utils.py")), None);
        let why = excluded("pyright", &root, &root.join("tests/test_utils.py")).unwrap_or_default();
        assert!(why.contains("includes only src"), "{why}");

        std::fs::write(root.join("tsconfig.json"), "{ \"include\": [\"source\"], // only the sources\n }")?;
        assert_eq!(excluded("typescript-language-server", &root, &root.join("source/index.ts")), None);
        assert!(excluded("typescript-language-server", &root, &root.join("test/main.ts")).is_some());

        std::fs::write(root.join("go.mod"), "module example.com/m\n")?;
        std::fs::create_dir_all(root.join("tools"))?;
        std::fs::write(root.join("tools/go.mod"), "module example.com/tools\n")?;
        assert_eq!(excluded("gopls", &root, &root.join("cmd/a.go")), None);
        assert!(excluded("gopls", &root, &root.join("tools/gen.go")).is_some_and(|w| w.contains("tools")));

        let db = serde_json::json!([{ "directory": root, "file": "a.c", "command": "cc -c a.c" }]);
        std::fs::write(root.join("compile_commands.json"), db.to_string())?;
        assert_eq!(excluded("clangd", &root, &root.join("a.c")), None);
        assert!(excluded("clangd", &root, &root.join("fuzz/b.c")).is_some());
        assert_eq!(excluded("clangd", &root, &root.join("a.h")), None);
        Ok(())
    }
}
