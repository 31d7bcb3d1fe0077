//! Rewrite cases and corpora shared by `rewrite_differential.rs` and `reparse_sweep.rs`.
//!
//! Every corpus is real code no one here wrote, read in place: the cargo registry's
//! unpacked crate sources, the Python standard library and two packages of the
//! tools' venv (pandas, matplotlib), TypeScript's `lib*.d.ts`, the JavaScript that
//! `cargo xtask setup` installs under `.tools/node/node_modules`, and Go's
//! standard library. Nothing is copied into the repository and nothing is written.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use astmatch::Lang;

/// One rewrite: every match of `pattern` becomes `rewrite`.
pub struct RewriteCase {
    pub lang: Lang,
    pub pattern: &'static str,
    pub rewrite: &'static str,
}

const fn case(lang: Lang, pattern: &'static str, rewrite: &'static str) -> RewriteCase {
    RewriteCase { lang, pattern, rewrite }
}

/// The languages the cases cover, in the order they run.
pub const LANGS: &[Lang] = &[Lang::Rust, Lang::Python, Lang::TypeScript, Lang::JavaScript, Lang::Go];

/// The cases. Templates are written with four-space indentation (a tab in Go), as a
/// person would type them. Each template is valid wherever its pattern can match, so a
/// rewritten file that no longer parses is the rewrite's fault, not the template's.
pub const REWRITE_CASES: &[RewriteCase] = &[
    // Rust
    case(Lang::Rust, "$X.unwrap()", "$X.expect(\"x\")"),
    // Multi-line receivers and closures placed mid-line.
    case(Lang::Rust, "$X.map($F)", "map_all($X, $F)"),
    case(Lang::Rust, "Box::new($X)", "Rc::new($X)"),
    case(Lang::Rust, "return Err($E);", "return Err($E.into());"),
    case(Lang::Rust, "$A.len() == 0", "$A.is_empty()"),
    // A multi-line template around `$$$` bodies that hold comments. The `match` is wrapped in
    // a block so that the rewrite stays valid where the `if let` is an `else if let`.
    case(
        Lang::Rust,
        "if let Some($X) = $Y { $$$B } else { $$$C }",
        "{\n    match $Y {\n        Some($X) => {\n            $$$B\n        }\n        None => {\n            $$$C\n        }\n    }\n}",
    ),
    case(Lang::Rust, "unsafe { $$$B }", "unsafe {\n    // SAFETY: rewritten\n    $$$B\n}"),
    // Python
    case(Lang::Python, "len($X)", "size($X)"),
    case(Lang::Python, "self.$A = $B", "self.$A: object = $B"),
    case(Lang::Python, "return $X", "return ($X)"),
    case(Lang::Python, "print($$$A)", "print($$$A, flush=True)"),
    case(Lang::Python, "raise $E", "raise $E from None"),
    case(Lang::Python, "$A.append($B)", "$A.extend([$B])"),
    case(Lang::Python, "with $C:\n    $$$B", "with $C:  # rewritten\n    $$$B"),
    case(Lang::Python, "with $C: $$$B", "try:\n    with $C:\n        $$$B\nfinally:\n    pass"),
    case(Lang::Python, "if $A: $$$B", "if ($A):\n    $$$B"),
    case(Lang::Python, "for $K, $V in $D.items(): $$$B", "for $K, $V in list($D.items()):\n    $$$B"),
    // TypeScript (declaration files, full of multi-line doc comments)
    case(Lang::TypeScript, "declare var $N: $T;", "declare const $N: $T;"),
    case(
        Lang::TypeScript,
        "interface $I extends $$$B { $$$M }",
        "interface $I extends $$$B {\n    // rewritten\n    $$$M\n}",
    ),
    case(Lang::TypeScript, "declare function $F($$$A): $R;", "declare function $F(\n    $$$A\n): $R;"),
    case(Lang::TypeScript, "type $N = $T;", "type $N =\n    $T;"),
    case(Lang::TypeScript, "declare namespace $N { $$$B }", "declare namespace $N {\n    $$$B\n}\n// end of $N"),
    // JavaScript
    case(Lang::JavaScript, "setTimeout($F, $T)", "globalThis.setTimeout($F, $T)"),
    case(Lang::JavaScript, "throw new Error($M)", "throw Object.assign(new Error($M), { rewritten: true })"),
    case(Lang::JavaScript, "function $F($$$P) { $$$B }", "async function $F($$$P) {\n    $$$B\n}"),
    // Template literals, some multi-line, into a multi-line template.
    case(Lang::JavaScript, "$A.push($B)", "$A.push(\n    $B,\n)"),
    case(Lang::JavaScript, "new Promise($F)", "new globalThis.Promise($F)"),
    case(Lang::JavaScript, "$A.forEach($B)", "Array.prototype.forEach.call($A, $B)"),
    case(Lang::JavaScript, "JSON.stringify($X)", "JSON.stringify($X, null, 2)"),
    case(Lang::JavaScript, "if ($C) { $$$B } else { $$$E }", "if (!($C)) {\n    $$$E\n} else {\n    $$$B\n}"),
    // Go (tab-indented, with raw backtick strings)
    // The `for` is wrapped in a block so that the rewrite stays valid where the `if` is an `else if`.
    case(Lang::Go, "if $C { $$$B }", "{\n\tfor $C {\n\t\t$$$B\n\t}\n}"),
    // (`$T.Errorf($$$A)` is left out: ast-grep parses it as a type conversion and finds nothing.)
    case(Lang::Go, "$T.Errorf($F, $$$A)", "$T.Fatalf($F, $$$A)"),
    // Raw backtick strings, some of them multi-line, moved into a call.
    case(Lang::Go, "New($N).Parse($S)", "New($N).Parse(strings.TrimSpace($S))"),
    case(Lang::Go, "fmt.Sprintf($F, $$$A)", "fmt.Sprint(fmt.Sprintf($F, $$$A))"),
    // Multi-line closures into a multi-line template.
    case(Lang::Go, "$X.Run($N, $F)", "$X.Run(\n\t$N,\n\t$F,\n)"),
    case(Lang::Go, "return $X, nil", "return $X, error(nil)"),
    case(Lang::Go, "$X == nil", "nil == $X"),
    case(Lang::Go, "for $K, $V := range $M { $$$B }", "for $K, $V := range $M {\n\t// rewritten\n\t$$$B\n}"),
];

/// How much of each corpus: a few directories for the comparison with ast-grep,
/// all of them for the re-parse sweep.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Sample,
    All,
}

/// Registry crates, by name; the version `Cargo.lock` pins is used ([`rust_dirs`]).
const RUST_SAMPLE: &[&str] = &["serde", "serde_json", "regex-syntax", "memchr", "ignore"];
const RUST_ALL: &[&str] = &["serde", "serde_json", "regex-syntax", "memchr", "ignore", "tokio", "syn", "clap_builder"];
/// When fewer of the wanted crates are present, the first locked crates (by name) make up the number.
const MIN_RUST_CRATES: usize = 4;

const PYTHON_STDLIB_SAMPLE: &[&str] = &["json", "email", "logging", "concurrent", "http"];
const PYTHON_STDLIB_ALL: &[&str] = &[
    "asyncio",
    "email",
    "json",
    "unittest",
    "importlib",
    "http",
    "logging",
    "concurrent",
    "xml",
    "urllib",
    "multiprocessing",
];
/// Subpackages of the venv's site-packages.
const SITE_SAMPLE: &[&str] = &["pandas/io/formats", "pandas/plotting", "matplotlib/axes", "matplotlib/tri"];
const SITE_ALL: &[&str] = &[
    "pandas/io",
    "pandas/plotting",
    "pandas/tseries",
    "pandas/util",
    "pandas/_config",
    "matplotlib/axes",
    "matplotlib/backends",
    "matplotlib/tri",
    "matplotlib/projections",
    "matplotlib/_api",
];

/// Under `.tools/node/node_modules`.
const JS_SAMPLE: &[&str] = &["typescript-language-server/lib"];
const JS_ALL: &[&str] = &["typescript-language-server/lib", "pyright/dist", "typescript/lib"];

/// Under `$(go env GOROOT)/src`.
const GO_SAMPLE: &[&str] = &["fmt", "encoding/json", "go/parser", "text/template"];
const GO_ALL: &[&str] = &["fmt", "encoding/json", "go/parser", "text/template", "net/http"];

pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

pub fn ast_grep() -> PathBuf {
    std::env::var_os("AST_GREP").map(PathBuf::from).unwrap_or_else(|| workspace_root().join(".tools/venv/bin/ast-grep"))
}

/// Fails under CI, otherwise prints what is missing; returns whether to go on.
pub fn require(test: &str, what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    let message = format!("{test}: {what} is missing; run `cargo xtask setup` to install it");
    assert!(std::env::var("CI").map_or(true, |v| v != "true"), "{message}");
    eprintln!("{message} (skipping the test)");
    false
}

/// What a language's corpus is, for messages.
pub fn corpus_name(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "the cargo registry's crate sources",
        Lang::Python => "the Python standard library and the venv's pandas/matplotlib",
        Lang::TypeScript => "TypeScript's lib files (.tools/node/node_modules/typescript/lib)",
        Lang::JavaScript => "the JavaScript under .tools/node/node_modules",
        Lang::Go => "Go's standard library ($(go env GOROOT)/src)",
        _ => "a corpus",
    }
}

/// The corpus directories of `lang` that exist on this machine.
pub fn corpus_dirs(lang: Lang, scale: Scale) -> Vec<PathBuf> {
    let pick = |sample: &'static [&'static str], all: &'static [&'static str]| match scale {
        Scale::Sample => sample,
        Scale::All => all,
    };
    let mut dirs = match lang {
        Lang::Rust => rust_dirs(pick(RUST_SAMPLE, RUST_ALL)),
        Lang::Python => {
            let mut dirs = Vec::new();
            if let Some(stdlib) = python_stdlib() {
                dirs.extend(pick(PYTHON_STDLIB_SAMPLE, PYTHON_STDLIB_ALL).iter().map(|p| stdlib.join(p)));
            }
            if let Some(site) = site_packages() {
                dirs.extend(pick(SITE_SAMPLE, SITE_ALL).iter().map(|p| site.join(p)));
            }
            dirs
        }
        Lang::TypeScript => vec![workspace_root().join(".tools/node/node_modules/typescript/lib")],
        Lang::JavaScript => {
            let modules = workspace_root().join(".tools/node/node_modules");
            pick(JS_SAMPLE, JS_ALL).iter().map(|p| modules.join(p)).collect()
        }
        Lang::Go => match go_src() {
            Some(src) => pick(GO_SAMPLE, GO_ALL).iter().map(|p| src.join(p)).collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    dirs.retain(|d| d.is_dir());
    dirs
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"))
}

/// `(crate name, version dir)` for every crate this workspace's `Cargo.lock` pins from a
/// registry and whose sources are unpacked, sorted by name and then by version.
///
/// Only locked versions count: `cargo fetch` (setup) unpacks exactly these, so every
/// machine searches the same files, whatever else the registry holds. A `cargo install`
/// or a language server indexing a crate unpacks more there (another crate, or a newer
/// version of one of ours), and a corpus taken from the whole registry drifted with it.
pub fn registry_crates() -> Vec<(String, PathBuf)> {
    let Ok(lock) = std::fs::read_to_string(workspace_root().join("Cargo.lock")) else { return Vec::new() };
    let Ok(indexes) = std::fs::read_dir(cargo_home().join("registry/src")) else { return Vec::new() };
    let indexes: Vec<PathBuf> = indexes.flatten().map(|e| e.path()).collect();
    let mut crates = Vec::new();
    for package in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            package.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix(" = \"")?.strip_suffix('"'))
        };
        let (Some(name), Some(version), Some(source)) = (field("name"), field("version"), field("source")) else {
            continue;
        };
        if !source.starts_with("registry+") {
            continue;
        }
        let dir_name = format!("{name}-{version}");
        if let Some(dir) = indexes.iter().map(|index| index.join(&dir_name)).find(|dir| dir.is_dir()) {
            crates.push((name.to_owned(), version_key(version), dir));
        }
    }
    crates.sort();
    crates.into_iter().map(|(name, _, dir)| (name, dir)).collect()
}

/// A version's numbers, for ordering (`1.0.99` before `1.0.154`); a pre-release tag is ignored.
fn version_key(version: &str) -> Vec<u64> {
    version.split(['-', '+']).next().unwrap_or("").split('.').map(|n| n.parse().unwrap_or(0)).collect()
}

/// The `src` directories of the `wanted` crates (the newest locked version of each), then
/// the first locked crates by name until there are [`MIN_RUST_CRATES`].
pub fn rust_dirs(wanted: &[&str]) -> Vec<PathBuf> {
    let crates = registry_crates();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for wanted in wanted {
        if let Some((_, dir)) = crates.iter().rfind(|(name, _)| name == wanted) {
            dirs.push(dir.join("src"));
        }
    }
    for (_, dir) in &crates {
        if dirs.len() >= MIN_RUST_CRATES {
            break;
        }
        if !dirs.iter().any(|d| d.parent() == Some(dir.as_path())) {
            dirs.push(dir.join("src"));
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs
}

fn python_stdlib() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .ok()?;
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    stdlib.is_dir().then_some(stdlib)
}

/// The tools' venv site-packages (`.tools/venv/lib/python3*/site-packages`).
fn site_packages() -> Option<PathBuf> {
    let lib = workspace_root().join(".tools/venv/lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found.pop()
}

fn go_src() -> Option<PathBuf> {
    let out = Command::new("go").args(["env", "GOROOT"]).output().ok()?;
    let src = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("src");
    src.is_dir().then_some(src)
}
