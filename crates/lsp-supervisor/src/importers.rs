//! The files that import a written file, found by reading the sources under a
//! server's root: Python `import`/`from` statements (absolute, package-relative
//! and a sibling's bare `import name`), TypeScript/JavaScript relative module
//! specifiers (`from "./x"`, `import("./x")`, `require("./x")`, extension and
//! `index` resolved as the compiler does), and C/C++ `#include`s (followed
//! through headers, so the translation units that include a header by way of
//! another, or through a source that another includes, are found too).
//!
//! Re-exports are followed, name by name and transitively (at most
//! [`MAX_REEXPORT_DEPTH`] modules deep): a Python module that binds names from
//! the written one (`from .core import f`, `from pkg.core import *`, `from pkg
//! import core`, as a package's `__init__.py` does) passes them on to the
//! files that import those names from it (`from pkg import f`, `from pkg
//! import *`) or the module itself (`import pkg`); a script's `export * from
//! "./core"` or `export { f } from "./core"` passes them on to its importers
//! (`import { f } from "./lib"`, a default or namespace import, `import()`,
//! `require()`).
//!
//! For servers that report only the files they have open (pyright in
//! `openFilesOnly` mode, clangd, tsserver), these are the other files a write
//! can break. It is a text scan, not a build: path aliases and bare package
//! specifiers (TypeScript `paths`, `node_modules`), include directories other
//! than the including file's own and the root, and names a module passes on
//! other than by an import statement (`f = core.f`) are not followed. Rust and
//! Go need no scan: rust-analyzer and gopls publish every file a change
//! affects, `pub use` included.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::detect::normalize;
use crate::spec::Language;

/// Files larger than this are not read (bytes).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// How many re-exporting modules deep a chain of re-exports is followed.
const MAX_REEXPORT_DEPTH: usize = 8;

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
            let parsed = read_each(&sources, |source, text| python_statements_of(root, source, text));
            // A statement can name a module only by its last name: the files, by the last names they import.
            let mut by_key: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
            for (i, (_, statements)) in parsed.iter().enumerate() {
                let mut keys: Vec<&str> = statements.iter().flat_map(PyStatement::keys).collect();
                keys.sort_unstable();
                keys.dedup();
                for key in keys {
                    by_key.entry(key).or_default().push(i);
                }
            }
            let names = python_module_names(root, written);
            let mut direct = Vec::new();
            for (source, statements) in &parsed {
                if statements.iter().any(|st| st.imports(written, &names, source)) {
                    found.insert(source.clone());
                    direct.push((source.clone(), python_reexports(statements, written, &names, source)));
                }
            }
            follow_reexports(direct, &mut found, |target, exported| {
                let names = python_module_names(root, target);
                let candidates = py_key(target).and_then(|key| by_key.get(key)).map(Vec::as_slice).unwrap_or_default();
                candidates
                    .iter()
                    .filter_map(|&i| {
                        let (source, statements) = &parsed[i];
                        python_through(statements, target, &names, source, exported).map(|e| (source.clone(), e))
                    })
                    .collect()
            });
        }
        Language::TypeScript | Language::JavaScript => {
            let parsed = read_each(&sources, |_, text| text.to_owned());
            let mut direct = Vec::new();
            for (source, text) in &parsed {
                let clauses = script_clauses(text);
                if clauses.iter().any(|c| script_resolves_to(source, &c.spec, written)) {
                    found.insert(source.clone());
                    direct.push((source.clone(), script_reexports(&clauses, source, written, &Exported::All)));
                }
            }
            follow_reexports(direct, &mut found, |target, exported| {
                parsed
                    .iter()
                    .filter_map(|(source, text)| {
                        script_through(&script_clauses(text), source, target, exported).map(|e| (source.clone(), e))
                    })
                    .collect()
            });
        }
        Language::C | Language::Cpp => {
            // Each source's includes, then a walk back from the written file
            // through the headers that include it.
            let includes = read_each(&sources, |_, text| c_includes(text));
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

/// `each` of every source's text, read and worked on by as many threads as
/// the machine has cores, in the sources' order; a source that cannot be read
/// as UTF-8 text is left out.
pub(crate) fn read_each<T: Send>(sources: &[PathBuf], each: impl Fn(&Path, &str) -> T + Sync) -> Vec<(PathBuf, T)> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let chunk = sources.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                let each = &each;
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|s| std::fs::read_to_string(s).ok().map(|t| (s.clone(), each(s, &t))))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        // A reader that panicked is not "no importers": its panic goes on to the caller.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// The names a module passes on from the written one: all of them (`from
/// core import *`, `export * from "./core"`), or those bound here, by the
/// name they have in this module.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Exported {
    All,
    Names(BTreeSet<String>),
}

impl Exported {
    fn contains(&self, name: &str) -> bool {
        match self {
            Exported::All => true,
            Exported::Names(names) => names.contains(name),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Exported::Names(n) if n.is_empty())
    }

    /// Adds `other`; whether anything was new.
    fn absorb(&mut self, other: &Exported) -> bool {
        match (&mut *self, other) {
            (Exported::All, _) => false,
            (_, Exported::All) => {
                *self = Exported::All;
                true
            }
            (Exported::Names(mine), Exported::Names(theirs)) => {
                let before = mine.len();
                mine.extend(theirs.iter().cloned());
                mine.len() > before
            }
        }
    }
}

/// From the re-exporters found so far (`start`: each file with the names it
/// passes on), the files that import those names from them, added to `found`,
/// breadth first: `through(module, exported)` gives the files that import
/// `exported` from `module`, each with what it passes on in turn. A module is
/// followed again only when it is reached with names it did not pass on
/// before, and no chain is followed more than [`MAX_REEXPORT_DEPTH`] deep.
fn follow_reexports(
    start: Vec<(PathBuf, Exported)>,
    found: &mut BTreeSet<PathBuf>,
    through: impl Fn(&Path, &Exported) -> Vec<(PathBuf, Exported)>,
) {
    let mut passed: std::collections::HashMap<PathBuf, Exported> = std::collections::HashMap::new();
    let mut queue: VecDeque<(PathBuf, Exported, usize)> = VecDeque::new();
    for (module, exported) in start {
        if !exported.is_empty() {
            passed.insert(module.clone(), exported.clone());
            queue.push_back((module, exported, 1));
        }
    }
    while let Some((module, exported, depth)) = queue.pop_front() {
        for (importer, passes) in through(&module, &exported) {
            found.insert(importer.clone());
            if depth >= MAX_REEXPORT_DEPTH || passes.is_empty() || importer == module {
                continue;
            }
            let grew = match passed.get_mut(&importer) {
                Some(known) => known.absorb(&passes),
                None => {
                    passed.insert(importer.clone(), passes.clone());
                    true
                }
            };
            if grew {
                queue.push_back((importer, passes, depth + 1));
            }
        }
    }
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
enum PyModule {
    /// `import a.b` or `from a.b import c` (`a.b`; `a.b.c` is the name's own).
    Absolute(String),
    /// `from .x import y` (the files it may be, resolved against the importing file's directory).
    Relative(Vec<PathBuf>),
}

impl PyModule {
    /// Whether this is `target` (`names`: its dotted names), imported from `importer`.
    fn is(&self, target: &Path, names: &[String], importer: &Path) -> bool {
        match self {
            PyModule::Absolute(module) => {
                names.contains(module)
                    // A script beside the module imports it by its bare name.
                    || (importer.parent() == target.parent()
                        && target.file_stem().and_then(|s| s.to_str()) == Some(module.as_str()))
            }
            PyModule::Relative(files) => files.iter().any(|f| f == target),
        }
    }
}

/// One name of a `from … import` list.
#[derive(Debug, PartialEq, Eq)]
struct PyName {
    /// As the imported module has it.
    name: String,
    /// As the importing module binds it (`name as bound`).
    bound: String,
    /// The submodule it may be (`from a import b`: `a.b`).
    module: PyModule,
}

/// One import statement: `import module` (not `from`, no names), or `from
/// module import names` (or `*`).
#[derive(Debug, PartialEq, Eq)]
struct PyStatement {
    module: PyModule,
    from: bool,
    star: bool,
    names: Vec<PyName>,
}

/// The last name a module file is imported by: its stem, or its package's
/// name for an `__init__.py`.
fn py_key(path: &Path) -> Option<&str> {
    match path.file_stem()?.to_str()? {
        "__init__" => path.parent()?.file_name()?.to_str(),
        stem => Some(stem),
    }
}

impl PyModule {
    /// The last names it may be imported by ([`py_key`]).
    fn keys(&self) -> Vec<&str> {
        match self {
            PyModule::Absolute(module) => module.rsplit('.').next().into_iter().collect(),
            PyModule::Relative(files) => files.iter().filter_map(|f| py_key(f)).collect(),
        }
    }
}

impl PyStatement {
    /// The last names of every module it may import, the names' own included.
    fn keys(&self) -> Vec<&str> {
        let mut keys = self.module.keys();
        keys.extend(self.names.iter().flat_map(|n| n.module.keys()));
        keys
    }

    /// Whether it imports `target` (`names`: its dotted names): the module, or one of the names as a submodule.
    fn imports(&self, target: &Path, names: &[String], importer: &Path) -> bool {
        self.module.is(target, names, importer) || self.names.iter().any(|n| n.module.is(target, names, importer))
    }
}

/// What the module with `statements` (at `source`) passes on from `written`:
/// the names it binds from it, and the name it binds it to as a submodule.
fn python_reexports(statements: &[PyStatement], written: &Path, names: &[String], source: &Path) -> Exported {
    let mut out = Exported::Names(BTreeSet::new());
    for st in statements.iter().filter(|st| st.from) {
        if st.module.is(written, names, source) {
            if st.star {
                return Exported::All;
            }
            out.absorb(&Exported::Names(st.names.iter().map(|n| n.bound.clone()).collect()));
        } else {
            let bound = st.names.iter().filter(|n| n.module.is(written, names, source)).map(|n| n.bound.clone());
            out.absorb(&Exported::Names(bound.collect()));
        }
    }
    out
}

/// Whether the module with `statements` (at `source`) imports one of
/// `exported` from `target` (`names`: its dotted names), or `target` itself
/// (`import pkg`), and if so what it passes on in turn.
fn python_through(
    statements: &[PyStatement],
    target: &Path,
    names: &[String],
    source: &Path,
    exported: &Exported,
) -> Option<Exported> {
    let mut imports = false;
    let mut passes = Exported::Names(BTreeSet::new());
    for st in statements.iter().filter(|st| st.module.is(target, names, source)) {
        if !st.from {
            imports = true;
        } else if st.star {
            imports = true;
            passes.absorb(exported);
        } else {
            let bound: BTreeSet<String> =
                st.names.iter().filter(|n| exported.contains(&n.name)).map(|n| n.bound.clone()).collect();
            imports |= !bound.is_empty();
            passes.absorb(&Exported::Names(bound));
        }
    }
    imports.then_some(passes)
}

/// The import statements of a Python source (comments and strings on the
/// statement's lines aside; continuation lines and parenthesised name lists
/// joined).
fn python_statements_of(root: &Path, path: &Path, text: &str) -> Vec<PyStatement> {
    let dir = path.parent().unwrap_or(root);
    let mut out = Vec::new();
    for statement in python_statements(text) {
        let statement = statement.trim();
        if let Some(rest) = statement.strip_prefix("import ") {
            for item in rest.split(',') {
                let module = item.split_whitespace().next().unwrap_or("");
                if !module.is_empty() {
                    out.push(PyStatement {
                        module: PyModule::Absolute(module.to_string()),
                        from: false,
                        star: false,
                        names: Vec::new(),
                    });
                }
            }
        } else if let Some(rest) = statement.strip_prefix("from ") {
            let Some((module, list)) = rest.split_once(" import ") else { continue };
            let module = module.trim();
            let mut star = false;
            let mut names: Vec<(String, String)> = Vec::new();
            for item in list.trim().trim_start_matches('(').trim_end_matches(')').split(',') {
                let words: Vec<&str> = item.split_whitespace().collect();
                match words.as_slice() {
                    ["*"] => star = true,
                    [name, "as", bound] => names.push((name.to_string(), bound.to_string())),
                    [name, ..] => names.push((name.to_string(), name.to_string())),
                    [] => {}
                }
            }
            let dots = module.chars().take_while(|c| *c == '.').count();
            if dots == 0 {
                let names = names
                    .into_iter()
                    .map(|(name, bound)| PyName { module: PyModule::Absolute(format!("{module}.{name}")), name, bound })
                    .collect();
                out.push(PyStatement { module: PyModule::Absolute(module.to_string()), from: true, star, names });
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
            let names = names
                .into_iter()
                .map(|(name, bound)| PyName {
                    module: PyModule::Relative(vec![
                        base.join(format!("{name}.py")),
                        base.join(&name).join("__init__.py"),
                    ]),
                    name,
                    bound,
                })
                .collect();
            out.push(PyStatement { module: PyModule::Relative(files), from: true, star, names });
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

/// How a script names a module.
#[derive(Debug, PartialEq, Eq)]
enum ScriptUse {
    /// `import { a, b as c } from "x"`: `(a, c)`, `(b, c)`.
    Named(Vec<(String, String)>),
    /// A default or namespace import, `import "x"`, `import("x")`, `require("x")`.
    Whole,
    /// `export * from "x"`.
    ExportAll,
    /// `export { a, b as c } from "x"`.
    ExportNamed(Vec<(String, String)>),
    /// `export * as ns from "x"`.
    ExportNamespace(String),
}

/// One module specifier a script names, and how.
#[derive(Debug, PartialEq, Eq)]
struct ScriptClause {
    spec: String,
    used: ScriptUse,
}

/// The module specifiers a script names: `… from "x"`, `import "x"`,
/// `import("x")`, `require("x")`, each with what the statement takes from it.
fn script_clauses(text: &str) -> Vec<ScriptClause> {
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
                let used = match before.strip_suffix("from") {
                    Some(head) if ends_with_word(before, "from") => script_use(head),
                    _ => ScriptUse::Whole,
                };
                out.push(ScriptClause { spec: spec.to_string(), used });
            }
        }
    }
    out
}

/// What `import … from` or `export … from` takes, from the text before `from`.
fn script_use(head: &str) -> ScriptUse {
    let keyword = |word: &str| {
        head.match_indices(word)
            .filter(|(at, _)| {
                let before_ok =
                    !head[..*at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
                let after_ok = !head[at + word.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
                before_ok && after_ok
            })
            .map(|(at, _)| at)
            .last()
    };
    let (import, export) = (keyword("import"), keyword("export"));
    let (is_export, at) = match (import, export) {
        (Some(i), Some(e)) if e > i => (true, e),
        (Some(i), _) => (false, i),
        (None, Some(e)) => (true, e),
        (None, None) => return ScriptUse::Whole,
    };
    let clause = head[at + "import".len()..].trim();
    let clause = clause.strip_prefix("type ").map(str::trim_start).unwrap_or(clause);
    let list = |c: &str| -> Option<Vec<(String, String)>> {
        let inner = c.strip_prefix('{')?.strip_suffix('}')?;
        Some(
            inner
                .split(',')
                .filter_map(|item| {
                    let words: Vec<&str> = item.split_whitespace().skip_while(|w| *w == "type").collect();
                    match words.as_slice() {
                        [name, "as", bound] => Some((name.to_string(), bound.to_string())),
                        [name, ..] => Some((name.to_string(), name.to_string())),
                        [] => None,
                    }
                })
                .collect(),
        )
    };
    if is_export {
        if clause == "*" {
            return ScriptUse::ExportAll;
        }
        if let Some(ns) = clause.strip_prefix('*').map(str::trim_start).and_then(|c| c.strip_prefix("as ")) {
            return ScriptUse::ExportNamespace(ns.trim().to_string());
        }
        return list(clause).map_or(ScriptUse::ExportAll, ScriptUse::ExportNamed);
    }
    list(clause).map_or(ScriptUse::Whole, ScriptUse::Named)
}

/// What the script with `clauses` (at `source`) passes on of `exported`
/// from `target`.
fn script_reexports(clauses: &[ScriptClause], source: &Path, target: &Path, exported: &Exported) -> Exported {
    let mut out = Exported::Names(BTreeSet::new());
    for clause in clauses.iter().filter(|c| script_resolves_to(source, &c.spec, target)) {
        match &clause.used {
            ScriptUse::ExportAll => {
                out.absorb(exported);
            }
            ScriptUse::ExportNamed(names) => {
                let bound = names.iter().filter(|(n, _)| exported.contains(n)).map(|(_, b)| b.clone());
                out.absorb(&Exported::Names(bound.collect()));
            }
            ScriptUse::ExportNamespace(ns) => {
                out.absorb(&Exported::Names(BTreeSet::from([ns.clone()])));
            }
            ScriptUse::Named(_) | ScriptUse::Whole => {}
        }
    }
    out
}

/// Whether the script with `clauses` (at `source`) takes one of `exported`
/// from `target`, and if so what it passes on in turn.
fn script_through(clauses: &[ScriptClause], source: &Path, target: &Path, exported: &Exported) -> Option<Exported> {
    let imports = clauses.iter().filter(|c| script_resolves_to(source, &c.spec, target)).any(|c| match &c.used {
        ScriptUse::Whole | ScriptUse::ExportAll | ScriptUse::ExportNamespace(_) => true,
        ScriptUse::Named(names) | ScriptUse::ExportNamed(names) => names.iter().any(|(n, _)| exported.contains(n)),
    });
    imports.then(|| script_reexports(clauses, source, target, exported))
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

    fn found(files: &[(&str, &str)], written: &str) -> Vec<String> {
        let (_dir, root) = tree(files);
        let written = root.join(written);
        importers(&root, &written, std::slice::from_ref(&written))
            .iter()
            .map(|p| p.strip_prefix(&root).map(|p| p.display().to_string()).unwrap_or_default())
            .collect()
    }

    fn check(files: &[(&str, &str)], written: &str, expected: &[&str]) {
        assert_eq!(found(files, written), expected);
    }

    /// A re-export case: its name, the files it adds to (or puts in place of)
    /// the common ones, and the importers expected.
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);

    fn check_cases(common: &[(&str, &str)], cases: &[Case<'_>], written: &str) {
        for (name, extra, expected) in cases {
            let mut files = common.to_vec();
            for file in *extra {
                files.retain(|(p, _)| p != &file.0);
                files.push(*file);
            }
            assert_eq!(found(&files, written), *expected, "{name}");
        }
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
    fn python_reexports_reach_the_importers_of_the_reexporting_module() {
        let core = ("pkg/core.py", "def f(x): ...\ndef g(): ...\n");
        let app = ("app.py", "from pkg import f\n");
        let cases: &[Case<'_>] = &[
            ("package-relative", &[("pkg/__init__.py", "from .core import f\n")], &["pkg/__init__.py", "app.py"]),
            ("absolute", &[("pkg/__init__.py", "from pkg.core import f\n")], &["pkg/__init__.py", "app.py"]),
            (
                "star and __all__",
                &[("pkg/__init__.py", "from .core import *\n__all__ = [\"f\"]\n")],
                &["pkg/__init__.py", "app.py"],
            ),
            (
                "renamed",
                &[("pkg/__init__.py", "from .core import f as f\n"), ("app.py", "from pkg import (\n    f,\n)\n")],
                &["pkg/__init__.py", "app.py"],
            ),
            // `app.py` takes a name the package does not have from `core`.
            ("other name", &[("pkg/__init__.py", "from .core import g\n")], &["pkg/__init__.py"]),
            (
                "the module itself",
                &[("pkg/__init__.py", "from . import core\n"), ("app.py", "from pkg import core\n")],
                &["pkg/__init__.py", "app.py"],
            ),
            (
                "import of the package",
                &[("pkg/__init__.py", "from .core import f\n"), ("app.py", "import pkg\n")],
                &["pkg/__init__.py", "app.py"],
            ),
            (
                "two packages deep",
                &[
                    ("pkg/__init__.py", "from .core import f as h\n"),
                    ("top/__init__.py", "from pkg import *\n"),
                    ("app.py", "from top import h\n"),
                    ("miss.py", "from top import f\n"),
                ],
                &["pkg/__init__.py", "app.py", "top/__init__.py"],
            ),
            (
                "a cycle",
                &[
                    ("pkg/__init__.py", "from .core import f\nfrom .other import f\n"),
                    ("pkg/other.py", "from pkg import f\n"),
                ],
                &["pkg/__init__.py", "pkg/other.py", "app.py"],
            ),
        ];
        check_cases(&[core, app, ("pkg/__init__.py", "")], cases, "pkg/core.py");
    }

    #[test]
    fn script_reexports_reach_the_importers_of_the_reexporting_module() {
        let core = ("lib/core.ts", "export function f(x: number) {}\nexport function g() {}\n");
        let main = ("main.ts", "import { f } from \"./lib\";\n");
        let cases: &[Case<'_>] = &[
            ("export star", &[("lib/index.ts", "export * from \"./core\";\n")], &["lib/index.ts", "main.ts"]),
            ("export named", &[("lib/index.ts", "export { f } from './core';\n")], &["lib/index.ts", "main.ts"]),
            (
                "export renamed",
                &[("lib/index.ts", "export { g as f } from \"./core.js\";\n")],
                &["lib/index.ts", "main.ts"],
            ),
            ("other name", &[("lib/index.ts", "export { g } from \"./core\";\n")], &["lib/index.ts"]),
            (
                "namespace",
                &[
                    ("lib/index.ts", "export * as core from \"./core\";\n"),
                    ("main.ts", "import { core } from \"./lib\";\n"),
                ],
                &["lib/index.ts", "main.ts"],
            ),
            (
                "default and require",
                &[
                    ("lib/index.ts", "export {\n  type f,\n} from \"./core\";\n"),
                    ("main.ts", "import lib from \"./lib\";\n"),
                    ("old.js", "const lib = require(\"./lib\");\n"),
                ],
                &["lib/index.ts", "main.ts", "old.js"],
            ),
            (
                "two barrels deep",
                &[
                    ("lib/index.ts", "export * from \"./core\";\n"),
                    ("api/index.ts", "export { f as run } from \"../lib\";\n"),
                    ("main.ts", "import { run } from \"./api\";\n"),
                    ("miss.ts", "import { f } from \"./api\";\n"),
                ],
                &["lib/index.ts", "main.ts", "api/index.ts"],
            ),
            (
                "a cycle",
                &[
                    ("lib/index.ts", "export * from \"./core\";\nexport * from \"./more\";\n"),
                    ("lib/more.ts", "export * from \".\";\n"),
                ],
                &["lib/index.ts", "lib/more.ts", "main.ts"],
            ),
        ];
        check_cases(&[core, main], cases, "lib/core.ts");
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
