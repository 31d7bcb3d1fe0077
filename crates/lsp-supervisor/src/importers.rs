//! The files that import a written file, found by reading the sources under a
//! server's root: Python `import`/`from` statements (absolute, package-relative
//! and a sibling's bare `import name`), TypeScript/JavaScript relative module
//! specifiers (`from "./x"`, `import("./x")`, `require("./x")`, extension and
//! `index` resolved as the compiler does), and C/C++ `#include`s (followed
//! through headers, so the translation units that include a header by way of
//! another, or through a source that another includes, are found too).
//!
//! For servers that report only the files they have open (pyright in
//! `openFilesOnly` mode, clangd, tsserver), these are the other files a write
//! can break. It is a text scan, not a build: path aliases and bare package
//! specifiers (TypeScript `paths`, `node_modules`), include directories other
//! than the including file's own and the root, and re-exports (a Python
//! `__init__.py` or a TypeScript `index.ts` that re-exports the written module)
//! are not followed.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::detect::normalize;
use crate::spec::Language;

/// Files larger than this are not read (bytes).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The importers of `written` under `root`, nearest first (the written
/// file's directory, then by distance, then by path), without the written
/// files themselves. `all_written` are every file of the write: none of them
/// counts as an importer.
pub(crate) fn importers(root: &Path, written: &Path, all_written: &[PathBuf]) -> Vec<PathBuf> {
    let Some(language) = Language::from_path(written).filter(|l| !l.is_custom()) else { return Vec::new() };
    let family = family(language);
    let sources: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| e.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES))
        .map(ignore::DirEntry::into_path)
        .filter(|p| Language::from_path(p).is_some_and(|l| family.contains(&l)))
        .collect();
    let mut found: BTreeSet<PathBuf> = BTreeSet::new();
    match language {
        Language::Python => {
            let names = python_module_names(root, written);
            for source in &sources {
                if let Ok(text) = std::fs::read_to_string(source)
                    && python_imports(root, source, &text).iter().any(|m| m.matches(written, &names, source))
                {
                    found.insert(source.clone());
                }
            }
        }
        Language::TypeScript | Language::JavaScript => {
            for source in &sources {
                if let Ok(text) = std::fs::read_to_string(source)
                    && script_specifiers(&text).iter().any(|s| script_resolves_to(source, s, written))
                {
                    found.insert(source.clone());
                }
            }
        }
        Language::C | Language::Cpp => {
            // Each source's includes, then a walk back from the written file
            // through the headers that include it.
            let includes: Vec<(PathBuf, Vec<String>)> = sources
                .iter()
                .filter_map(|s| std::fs::read_to_string(s).ok().map(|t| (s.clone(), c_includes(&t))))
                .collect();
            let mut queue = VecDeque::from([written.to_path_buf()]);
            let mut seen: HashSet<PathBuf> = HashSet::from([written.to_path_buf()]);
            while let Some(target) = queue.pop_front() {
                for (source, specs) in &includes {
                    if seen.contains(source) || !specs.iter().any(|s| c_resolves_to(root, source, s, &target)) {
                        continue;
                    }
                    seen.insert(source.clone());
                    // A source included in turn (an amalgamation's `#include "parser.c"`) passes it on.
                    queue.push_back(source.clone());
                    if !is_c_header(source) {
                        found.insert(source.clone());
                    }
                }
            }
        }
        Language::Rust | Language::Go | Language::Fixture | Language::Custom(_) => {}
    }
    let home = written.parent().unwrap_or(root);
    let mut out: Vec<PathBuf> = found.into_iter().filter(|p| !all_written.contains(p)).collect();
    out.sort_by_key(|p| (distance(home, p.parent().unwrap_or(root)), p.clone()));
    out
}

/// The languages whose files can import a file of `language`.
fn family(language: Language) -> &'static [Language] {
    match language {
        Language::TypeScript | Language::JavaScript => &[Language::TypeScript, Language::JavaScript],
        Language::C | Language::Cpp => &[Language::C, Language::Cpp],
        Language::Python => &[Language::Python],
        Language::Rust => &[Language::Rust],
        Language::Go => &[Language::Go],
        Language::Fixture => &[Language::Fixture],
        // Nothing is known of how its files import each other.
        Language::Custom(_) => &[],
    }
}

/// How many steps up and down lead from directory `a` to directory `b`.
fn distance(a: &Path, b: &Path) -> usize {
    let common = a.components().zip(b.components()).take_while(|(x, y)| x == y).count();
    a.components().count() + b.components().count() - 2 * common
}

// Python

/// The dotted names under which `path` can be imported: from the outermost
/// package that holds it (the directories up from it that have an
/// `__init__.py`), from the root, and from `root/src`. A package's
/// `__init__.py` is imported as the package.
fn python_module_names(root: &Path, path: &Path) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    if path.file_stem().is_some_and(|s| s != "__init__")
        && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
    {
        parts.push(stem.to_string());
    }
    let mut names = Vec::new();
    let mut dir = path.parent();
    let mut packaged = parts.clone();
    while let Some(d) = dir
        && d.starts_with(root)
        && d.join("__init__.py").is_file()
    {
        if let Some(name) = d.file_name().and_then(|n| n.to_str()) {
            packaged.insert(0, name.to_string());
        }
        dir = d.parent();
    }
    names.push(packaged.join("."));
    for base in [root.to_path_buf(), root.join("src")] {
        if let Ok(rel) = path.with_extension("").strip_prefix(&base) {
            let mut rel: Vec<String> =
                rel.components().filter_map(|c| c.as_os_str().to_str()).map(str::to_string).collect();
            if rel.last().is_some_and(|l| l == "__init__") {
                rel.pop();
            }
            names.push(rel.join("."));
        }
    }
    names.retain(|n| !n.is_empty());
    names.dedup();
    names
}

/// One imported module, as a statement names it.
#[derive(Debug, PartialEq, Eq)]
enum PyImport {
    /// `import a.b` or `from a.b import c` (`a.b`, and `a.b.c`, which may be a module).
    Absolute(String),
    /// `from .x import y` (the files it may be, resolved against the importing file's directory).
    Relative(Vec<PathBuf>),
}

impl PyImport {
    fn matches(&self, written: &Path, names: &[String], importer: &Path) -> bool {
        match self {
            PyImport::Absolute(module) => {
                names.contains(module)
                    // A script beside the module imports it by its bare name.
                    || (importer.parent() == written.parent()
                        && written.file_stem().and_then(|s| s.to_str()) == Some(module.as_str()))
            }
            PyImport::Relative(files) => files.iter().any(|f| f == written),
        }
    }
}

/// The modules a Python source imports, statement by statement (comments and
/// strings on the statement's lines aside; continuation lines and
/// parenthesised name lists joined).
fn python_imports(root: &Path, path: &Path, text: &str) -> Vec<PyImport> {
    let dir = path.parent().unwrap_or(root);
    let mut out = Vec::new();
    for statement in python_statements(text) {
        let statement = statement.trim();
        if let Some(rest) = statement.strip_prefix("import ") {
            for item in rest.split(',') {
                let module = item.split_whitespace().next().unwrap_or("");
                if !module.is_empty() {
                    out.push(PyImport::Absolute(module.to_string()));
                }
            }
        } else if let Some(rest) = statement.strip_prefix("from ") {
            let Some((module, names)) = rest.split_once(" import ") else { continue };
            let module = module.trim();
            let names: Vec<&str> = names
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(',')
                .filter_map(|n| n.split_whitespace().next())
                .filter(|n| *n != "*")
                .collect();
            let dots = module.chars().take_while(|c| *c == '.').count();
            if dots == 0 {
                out.push(PyImport::Absolute(module.to_string()));
                out.extend(names.iter().map(|n| PyImport::Absolute(format!("{module}.{n}"))));
                continue;
            }
            let mut base = dir.to_path_buf();
            for _ in 1..dots {
                base.pop();
            }
            let rest = &module[dots..];
            // `from . import x` imports the package, `from .m import x` the module `m`.
            let mut files = vec![base.join("__init__.py")];
            if !rest.is_empty() {
                base = rest.split('.').fold(base, |b, part| b.join(part));
                files = vec![base.with_extension("py"), base.join("__init__.py")];
            }
            for name in names {
                files.push(base.join(format!("{name}.py")));
                files.push(base.join(name).join("__init__.py"));
            }
            out.push(PyImport::Relative(files));
        }
    }
    out
}

/// The logical lines of a Python source that may be import statements, with
/// `\` continuations and parenthesised lists joined and comments dropped.
fn python_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut open = false;
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("");
        if current.is_empty() {
            let start = code.trim_start();
            if !(start.starts_with("import ") || start.starts_with("from ")) {
                continue;
            }
        }
        let (code, continued) = match code.trim_end().strip_suffix('\\') {
            Some(code) => (code, true),
            None => (code, false),
        };
        current.push(' ');
        current.push_str(code);
        if code.contains('(') {
            open = true;
        }
        if code.contains(')') {
            open = false;
        }
        if !open && !continued {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    // `import a; import b` on one line.
    out.iter().flat_map(|s| s.split(';').map(str::to_string).collect::<Vec<_>>()).collect()
}

// TypeScript and JavaScript

/// The module specifiers a script names: `… from "x"`, `import "x"`,
/// `import("x")`, `require("x")`.
fn script_specifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices(['"', '\'', '`']) {
        let before = text[..at].trim_end();
        let quote = bytes[at];
        let names_module = ["from", "import", "import(", "require("].iter().any(|k| ends_with_word(before, k));
        if !names_module {
            continue;
        }
        let rest = &text[at + 1..];
        if let Some(end) = rest.find(quote as char) {
            let spec = &rest[..end];
            if !spec.contains('\n') {
                out.push(spec.to_string());
            }
        }
    }
    out
}

/// Whether `text` ends with the keyword `word`, not with a longer identifier ending so.
fn ends_with_word(text: &str, word: &str) -> bool {
    text.strip_suffix(word)
        .is_some_and(|head| !head.chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$'))
}

/// Whether the relative specifier `spec` in `importer` names `written`, as
/// TypeScript resolves it: the file itself, with a script extension, a `.js`
/// spelling of a `.ts` file, or a directory's `index`.
fn script_resolves_to(importer: &Path, spec: &str, written: &Path) -> bool {
    if !(spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..") {
        return false;
    }
    let Some(dir) = importer.parent() else { return false };
    let target = normalize(&dir.join(spec));
    const EXTENSIONS: [&str; 9] = ["ts", "tsx", "d.ts", "mts", "cts", "js", "jsx", "mjs", "cjs"];
    let mut candidates = vec![target.clone()];
    let stripped = ["js", "jsx", "mjs", "cjs"]
        .iter()
        .find(|e| target.extension().is_some_and(|x| x == **e))
        .map(|_| target.with_extension(""));
    for base in [Some(target.clone()), stripped].into_iter().flatten() {
        for ext in EXTENSIONS {
            candidates.push(PathBuf::from(format!("{}.{ext}", base.display())));
            candidates.push(base.join(format!("index.{ext}")));
        }
    }
    candidates.iter().any(|c| c == written)
}

// C and C++

fn is_c_header(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e, "h" | "hh" | "hpp" | "hxx"))
}

/// The paths a C/C++ source `#include`s.
fn c_includes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else { continue };
        let Some(rest) = rest.trim_start().strip_prefix("include") else { continue };
        let rest = rest.trim_start();
        let close = match rest.chars().next() {
            Some('"') => '"',
            Some('<') => '>',
            _ => continue,
        };
        if let Some(end) = rest[1..].find(close) {
            out.push(rest[1..1 + end].to_string());
        }
    }
    out
}

/// Whether `#include "spec"` in `source` names `target`: beside the source,
/// or under the root; otherwise when `target`'s path ends with `spec` (an
/// include directory we do not know) and no file beside the source is meant.
fn c_resolves_to(root: &Path, source: &Path, spec: &str, target: &Path) -> bool {
    let beside = source.parent().map(|d| normalize(&d.join(spec)));
    if beside.as_deref() == Some(target) {
        return true;
    }
    if beside.is_some_and(|b| b.is_file()) {
        return false;
    }
    if normalize(&root.join(spec)) == target {
        return true;
    }
    let spec = normalize(Path::new(spec));
    spec.components().next().is_some() && target.ends_with(&spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        }
        (dir, root)
    }

    fn check(files: &[(&str, &str)], written: &str, expected: &[&str]) {
        let (_dir, root) = tree(files);
        let written = root.join(written);
        let found: Vec<String> = importers(&root, &written, std::slice::from_ref(&written))
            .iter()
            .map(|p| p.strip_prefix(&root).map(|p| p.display().to_string()).unwrap_or_default())
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn python_absolute_relative_and_sibling_imports() {
        let files = [
            ("pkg/__init__.py", ""),
            ("pkg/shapes.py", "def area(): ...\n"),
            ("pkg/report.py", "from pkg.shapes import area\n"),
            ("pkg/rel.py", "from .shapes import area\n"),
            ("pkg/rel_pkg.py", "from . import shapes\n"),
            ("pkg/listed.py", "from pkg import (\n    other,\n    shapes,  # the one\n)\n"),
            ("pkg/plain.py", "import os, pkg.shapes as s\n"),
            ("pkg/sub/__init__.py", ""),
            ("pkg/sub/up.py", "from ..shapes import area\n"),
            (
                "pkg/unrelated.py",
                "from pkg.other import shapes_of\nimport shapes_extra\n# from pkg.shapes import area\n",
            ),
            ("pkg/other.py", "x = 'from pkg.shapes import area'\n"),
            ("tests/test_shapes.py", "from pkg.shapes import area\n"),
            ("scripts/shapes.py", ""),
            ("scripts/run.py", "import shapes\n"),
        ];
        check(
            &files,
            "pkg/shapes.py",
            &[
                "pkg/listed.py",
                "pkg/plain.py",
                "pkg/rel.py",
                "pkg/rel_pkg.py",
                "pkg/report.py",
                "pkg/sub/up.py",
                "tests/test_shapes.py",
            ],
        );
        // A bare `import shapes` is the sibling's.
        check(&files, "scripts/shapes.py", &["scripts/run.py"]);
        // A package's `__init__.py` is imported as the package.
        check(&files, "pkg/__init__.py", &["pkg/listed.py", "pkg/rel_pkg.py"]);
    }

    #[test]
    fn python_src_layout() {
        check(
            &[
                ("src/lib/core.py", ""),
                ("src/lib/api.py", "from lib.core import x\n"),
                ("tests/test_core.py", "import lib.core\n"),
            ],
            "src/lib/core.py",
            &["src/lib/api.py", "tests/test_core.py"],
        );
    }

    #[test]
    fn script_specifiers_resolve_as_typescript_does() {
        let files = [
            ("src/shapes.ts", "export const a = 1;\n"),
            ("src/main.ts", "import { a } from \"./shapes\";\n"),
            ("src/esm.ts", "import { a } from './shapes.js';\n"),
            ("src/multi.ts", "import {\n  a,\n} from \"./shapes\";\n"),
            ("src/lazy.js", "const m = await import('./shapes');\nconst r = require(\"./shapes\");\n"),
            ("src/reexport.ts", "export * from \"./shapes\";\n"),
            ("src/other.ts", "import { shapes } from \"shapes\";\nconst s = \"./shapes\";\n"),
            ("test/deep.test.ts", "import { a } from \"../src/shapes\";\n"),
            ("lib/index.ts", "export const b = 2;\n"),
            ("app.ts", "import { b } from \"./lib\";\n"),
        ];
        check(
            &files,
            "src/shapes.ts",
            &["src/esm.ts", "src/lazy.js", "src/main.ts", "src/multi.ts", "src/reexport.ts", "test/deep.test.ts"],
        );
        check(&files, "lib/index.ts", &["app.ts"]);
    }

    #[test]
    fn c_includes_through_headers() {
        check(
            &[
                ("shapes.h", "double area(void);\n"),
                ("more.h", "#include \"shapes.h\"\n"),
                ("main.c", "#include <stdio.h>\n#include \"shapes.h\"\n"),
                ("via.c", "#  include \"more.h\"\n"),
                ("lib/shapes.h", "int other(void);\n"),
                ("lib/own.c", "#include \"shapes.h\"\n"),
                ("src/nested.c", "#include \"../shapes.h\"\n"),
                ("src/rooted.cpp", "#include <shapes.h>\n"),
                ("none.c", "// #include \"shapes.h\" in a comment\nint x;\n"),
                ("all.c", "#include \"lib/own.c\"\n#include \"main.c\"\n"),
            ],
            "shapes.h",
            &["all.c", "main.c", "via.c", "src/nested.c", "src/rooted.cpp"],
        );
    }

    #[test]
    fn distance_orders_the_written_files_directory_first() {
        assert_eq!(distance(Path::new("/r/a"), Path::new("/r/a")), 0);
        assert_eq!(distance(Path::new("/r/a"), Path::new("/r/a/b")), 1);
        assert_eq!(distance(Path::new("/r/a"), Path::new("/r/c")), 2);
    }
}
