//! Which servers exist, for which languages, found how: the built-in table,
//! and the languages a host defines for servers of its own ([`Language::define`]).

use std::path::Path;

use serde_json::{Value, json};

/// A language the supervisor routes files of: one of the built-in table's, or
/// one a host defines ([`Language::define`]) for a server of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// `.rs` files.
    Rust,
    /// `.py` and `.pyi` files.
    Python,
    /// `.ts`, `.tsx`, `.mts` and `.cts` files.
    TypeScript,
    /// `.js`, `.jsx`, `.mjs` and `.cjs` files.
    JavaScript,
    /// `.c` and `.h` files.
    C,
    /// `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh` and `.hxx` files.
    Cpp,
    /// `.go` files.
    Go,
    /// The toy language of the fixture server (`.fix` files); tests only.
    Fixture,
    /// A language the host defined, with its own extensions and `languageId`.
    Custom(CustomLanguage),
}

/// A host-defined language's handle: its id, interned (leaked once per id and
/// process), so [`Language`] stays `Copy`. Made only by [`Language::define`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomLanguage(&'static str);

/// A defined language's extensions and LSP `languageId`.
struct Definition {
    id: &'static str,
    extensions: Vec<String>,
    language_id: &'static str,
}

/// The languages defined in this process, in order of definition. A language
/// is routing data (which files go to which servers), read by every path
/// lookup of the crate and its callers, so it lives here rather than in one
/// supervisor's configuration.
static DEFINED: std::sync::RwLock<Vec<Definition>> = std::sync::RwLock::new(Vec::new());

fn defined() -> std::sync::RwLockReadGuard<'static, Vec<Definition>> {
    DEFINED.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The built-in languages' extensions (without the dot).
const EXTENSIONS: &[(&str, Language)] = &[
    ("rs", Language::Rust),
    ("py", Language::Python),
    ("pyi", Language::Python),
    ("ts", Language::TypeScript),
    ("tsx", Language::TypeScript),
    ("mts", Language::TypeScript),
    ("cts", Language::TypeScript),
    ("js", Language::JavaScript),
    ("jsx", Language::JavaScript),
    ("mjs", Language::JavaScript),
    ("cjs", Language::JavaScript),
    ("c", Language::C),
    ("h", Language::C),
    ("cc", Language::Cpp),
    ("cpp", Language::Cpp),
    ("cxx", Language::Cpp),
    ("hpp", Language::Cpp),
    ("hh", Language::Cpp),
    ("hxx", Language::Cpp),
    ("go", Language::Go),
    ("fix", Language::Fixture),
];

impl Language {
    /// Every built-in language, in display order ([`Language::all`] adds the defined ones).
    pub const ALL: [Language; 8] = [
        Language::Rust,
        Language::Python,
        Language::TypeScript,
        Language::JavaScript,
        Language::C,
        Language::Cpp,
        Language::Go,
        Language::Fixture,
    ];

    /// Every language: the built-in ones, then those defined, in order of definition.
    pub fn all() -> Vec<Language> {
        let mut all = Language::ALL.to_vec();
        all.extend(defined().iter().map(|d| Language::Custom(CustomLanguage(d.id))));
        all
    }

    /// Defines a language of the host's own (a configuration's server for
    /// Lua, Zig, Java): files whose extension (without the dot) is one of
    /// `extensions` are routed to the servers that list it, and opened with
    /// `language_id` as their LSP `languageId` (LSP "Text Document Item";
    /// default: `id`). Defining an id again replaces its extensions and
    /// `languageId`. Refused ([`Error::DefineLanguage`](crate::Error::DefineLanguage)):
    /// an empty id or one of a built-in language, no extensions, an extension
    /// a built-in language or another defined one has.
    pub fn define(id: &str, extensions: &[String], language_id: Option<&str>) -> crate::Result<Language> {
        let refuse = |why: String| crate::Error::DefineLanguage { id: id.to_owned(), why };
        if id.trim().is_empty() {
            return Err(refuse("a language needs a name".into()));
        }
        if Language::ALL.iter().any(|l| l.id() == id) {
            return Err(refuse("it is a built-in language".into()));
        }
        let extensions: Vec<String> = extensions.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
        if extensions.is_empty() || extensions.iter().any(String::is_empty) {
            return Err(refuse("a language needs its file extensions".into()));
        }
        let mut all = DEFINED.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for ext in &extensions {
            if let Some((_, owner)) = EXTENSIONS.iter().find(|(e, _)| e == ext) {
                return Err(refuse(format!(".{ext} files are {owner}'s")));
            }
            if let Some(other) = all.iter().find(|d| d.id != id && d.extensions.contains(ext)) {
                return Err(refuse(format!(".{ext} files are {}'s", other.id)));
            }
        }
        let language_id = language_id.unwrap_or(id);
        let definition = match all.iter().position(|d| d.id == id) {
            Some(index) => &mut all[index],
            None => {
                let id: &'static str = Box::leak(id.to_owned().into_boxed_str());
                all.push(Definition { id, extensions: Vec::new(), language_id: id });
                let last = all.len() - 1;
                &mut all[last]
            }
        };
        definition.extensions = extensions;
        if definition.language_id != language_id {
            definition.language_id = Box::leak(language_id.to_owned().into_boxed_str());
        }
        Ok(Language::Custom(CustomLanguage(definition.id)))
    }

    /// The language of a file, by extension.
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        if let Some((_, language)) = EXTENSIONS.iter().find(|(e, _)| *e == ext) {
            return Some(*language);
        }
        defined().iter().find(|d| d.extensions.iter().any(|e| e == ext)).map(|d| Language::Custom(CustomLanguage(d.id)))
    }

    /// The file extensions of the language (without the dot).
    pub fn extensions(self) -> Vec<String> {
        match self {
            Language::Custom(CustomLanguage(id)) => {
                defined().iter().find(|d| d.id == id).map(|d| d.extensions.clone()).unwrap_or_default()
            }
            builtin => EXTENSIONS.iter().filter(|(_, l)| *l == builtin).map(|(e, _)| (*e).to_owned()).collect(),
        }
    }

    /// Whether the host defined it ([`Language::define`]).
    pub fn is_custom(self) -> bool {
        matches!(self, Language::Custom(_))
    }

    /// The name used in arguments and output.
    pub fn id(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Go => "go",
            Language::Fixture => "fixture",
            Language::Custom(CustomLanguage(id)) => id,
        }
    }

    /// A language by its [`Language::id`], built-in or defined.
    pub fn from_id(id: &str) -> Option<Language> {
        Language::all().into_iter().find(|l| l.id() == id)
    }

    /// The LSP `languageId` of a file (LSP "Text Document Item").
    pub fn language_id(self, path: &Path) -> &'static str {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match (self, ext) {
            (Language::TypeScript, "tsx") => "typescriptreact",
            (Language::JavaScript, "jsx") => "javascriptreact",
            (Language::Cpp, _) => "cpp",
            (Language::Custom(CustomLanguage(id)), _) => {
                defined().iter().find(|d| d.id == id).map_or(id, |d| d.language_id)
            }
            (lang, _) => lang.id(),
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for Language {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// How a server's root is chosen from a file: the way the language's
/// toolchain draws a project (see [`crate::detect`] for each rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRule {
    /// The nearest directory with a root marker.
    Nearest,
    /// The Cargo workspace that lists the package.
    CargoWorkspace,
    /// The `go.work` that uses the module, else the module.
    GoWork,
    /// The outermost compilation database that lists the file.
    CompileDatabase,
    /// The outermost `tsconfig.json` whose `references` reach the nearest project.
    TsconfigReferences,
    /// The nearest Python project file, with its `.venv`.
    PythonProject,
}

/// How a server's diagnostics of the files a write did not touch are had
/// after the write ([`crate::Supervisor::other_files_after_write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OtherFiles {
    /// It publishes every file a change affects, open or not (gopls;
    /// rust-analyzer, through the `cargo check` a save starts): what it
    /// published after the write, once it has settled, is taken.
    Published,
    /// It reports only the files it has open (pyright in `openFilesOnly`
    /// mode, clangd, tsserver): the files that import the written one (a text
    /// scan under its root) are opened before the write, and their
    /// diagnostics read as the written file's are.
    Importers,
    /// It checks each file on its own (pylsp, ruff): nothing is known of other files.
    WrittenOnly,
}

/// How to find, start and talk to one language server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Its id (`rust-analyzer`, `pyright`, …).
    pub id: &'static str,
    /// The languages it serves.
    pub languages: Vec<Language>,
    /// Program names tried in order (versioned names where distributions use them).
    pub programs: Vec<String>,
    /// Arguments that start the server on stdio.
    pub args: Vec<String>,
    /// Arguments for the probe that shows the binary really runs (`--version`).
    pub probe_args: Vec<String>,
    /// A program beside the server's binary that the probe runs instead, for a
    /// server that has no probe of its own (`pyright-langserver` only starts).
    pub probe_sibling: Option<&'static str>,
    /// Files or directories whose presence in a directory makes it a root for this server.
    pub root_markers: Vec<&'static str>,
    /// How the root is chosen among the directories with markers.
    pub root_rule: RootRule,
    /// Whether the server keeps an index on disk beside the project
    /// (clangd's `.cache/clangd/index`), which is sent to a cache directory
    /// outside the root instead ([`crate::detect::launch_spec`]).
    pub index_outside_root: bool,
    /// Titles (prefixes) of progress that does not change the server's
    /// answers, so a request does not wait for it (rust-analyzer's `cargo
    /// check` on save). Diagnostics still wait for it.
    pub background_progress: Vec<&'static str>,
    /// Titles (prefixes) of progress during which the server's answers are
    /// right but may lack what that work produces (rust-analyzer building
    /// build scripts and proc macros, which can take minutes on a cold
    /// project): navigation answers then, with a note; a rename waits.
    pub partial_progress: Vec<&'static str>,
    /// The title of the progress that loads the project's files: answers are
    /// taken as partial only once it has ended (rust-analyzer's `Roots Scanned`).
    pub files_progress: Option<&'static str>,
    /// How long the first request may wait for the server's first load, when
    /// longer than [`crate::SupervisorConfig::request_timeout`]: a cold
    /// rust-analyzer reads every dependency's sources and analyses the crate
    /// graph before its first answer.
    pub first_load_timeout: Option<std::time::Duration>,
    /// `initializationOptions`.
    pub initialization_options: Value,
    /// What `workspace/configuration` answers, looked up by section (dotted path); `null` when absent.
    pub settings: Value,
    /// Environment variables set for the server process.
    pub env: Vec<(String, String)>,
    /// Environment variables set too when the server runs in a bwrap enclosure
    /// without network: rust-analyzer's `cargo metadata` then works offline
    /// (`CARGO_NET_OFFLINE=true`) over the registry already on disk, rather
    /// than fail on the network and leave the project unloaded.
    pub offline_env: Vec<(String, String)>,
    /// Whether the server may publish a file's diagnostics in several rounds
    /// (syntax first, then types) without progress: an empty publication then
    /// waits [`crate::SupervisorConfig::settle_empty`] for a later round.
    pub publishes_in_rounds: bool,
    /// Whether the server publishes a file's diagnostics again after a change
    /// that leaves them as they were. rust-analyzer does not (it publishes a
    /// file only when its list changed): silence after its check on save has
    /// ended, or after [`crate::SupervisorConfig::settle_empty`] without a
    /// check, means the last list stands.
    pub publishes_unchanged: bool,
    /// The `source` of the diagnostics the server answers a pull
    /// (`textDocument/diagnostic`) with, when it also pushes others of a check
    /// of its own (rust-analyzer: its own are `rust-analyzer`, `cargo check`'s
    /// are `rustc` or `clippy`). Its own are then pulled, exact for the text
    /// just sent, and the check's taken from its last push once the check has
    /// ended. Used when the server offers pulls, whether or not it is told the
    /// client pulls.
    pub pulled_source: Option<&'static str>,
    /// Whether to tell the server the client pulls diagnostics
    /// (`textDocument.diagnostic`). rust-analyzer answers a pull with its own
    /// diagnostics only and keeps pushing `cargo check`'s, so it is not told.
    pub advertise_pull: bool,
    /// Whether saving a changed file starts a check of the server's own
    /// (rust-analyzer runs `cargo check`): diagnostics after such a write wait
    /// for the check to begin (within 5 s) and end. Read it through [`ServerSpec::checks`].
    pub checks_on_save: bool,
    /// How long after its start the server is given to announce that it is
    /// loading (work-done progress; rust-analyzer's quiescence) before its
    /// answers are trusted. Default 2 s.
    pub load_grace: std::time::Duration,
    /// Files (relative to the root) one of which the server needs for a
    /// project-wide index; without any, it knows only the files it has open
    /// (clangd without `compile_commands.json`). Empty: always indexed.
    pub index_files: Vec<&'static str>,
    /// Whether files an edit of ours changed on disk are opened in the server
    /// afterwards: clangd's background index does not see files change on
    /// disk, while open files answer from their text at once.
    pub opens_changed_files: bool,
    /// Whether the server sends `experimental/serverStatus` with `quiescent`
    /// (rust-analyzer): it counts as loading from its start until it says it is quiescent.
    pub reports_quiescence: bool,
    /// Whether a rename is asked at the symbol's declaration when the cursor is
    /// on a use of it imported from another file: asked at such a use, the
    /// server would rename only locally (typescript-language-server adds
    /// `import { a as b }` when prefix and suffix text are on).
    pub renames_at_declaration: bool,
    /// How its diagnostics of other files than the written ones are had.
    pub other_files: OtherFiles,
    /// A `workspace/executeCommand` command that forwards a request to
    /// tsserver (typescript-language-server's `typescript.tsserverRequest`).
    /// When the server lists it, a file's diagnostics are asked of tsserver
    /// (`syntacticDiagnosticsSync`, `semanticDiagnosticsSync`,
    /// `suggestionDiagnosticsSync`) instead of waited for: the server publishes
    /// a kind's list only when it changes, so a file that stays clean after a
    /// write gets no publication at all.
    pub tsserver_request: Option<&'static str>,
    /// The languages it helps by default: beside the language's primary server
    /// (another one), when it is usable, its diagnostics and code actions are
    /// added to the primary's (ruff beside pyright). A language whose server is
    /// chosen ([`crate::SupervisorConfig::preferred`]) or whose helpers are named
    /// ([`crate::SupervisorConfig::helpers`]) takes no default helper.
    pub helps: Vec<Language>,
}

impl ServerSpec {
    /// Whether the server runs its check on save and once loaded:
    /// [`ServerSpec::checks_on_save`], unless the initialization options turn
    /// it off (rust-analyzer's `checkOnSave = false`, as a configured server may).
    pub fn checks(&self) -> bool {
        self.checks_on_save && self.initialization_options.get("checkOnSave").and_then(Value::as_bool) != Some(false)
    }

    fn new(
        id: &'static str,
        languages: &[Language],
        programs: &[&str],
        args: &[&str],
        markers: &[&'static str],
    ) -> ServerSpec {
        ServerSpec {
            id,
            languages: languages.to_vec(),
            programs: programs.iter().map(|s| s.to_string()).collect(),
            args: args.iter().map(|s| s.to_string()).collect(),
            probe_args: vec!["--version".to_string()],
            probe_sibling: None,
            root_markers: markers.to_vec(),
            root_rule: RootRule::Nearest,
            index_outside_root: false,
            background_progress: Vec::new(),
            partial_progress: Vec::new(),
            files_progress: None,
            first_load_timeout: None,
            initialization_options: Value::Null,
            settings: Value::Null,
            env: Vec::new(),
            offline_env: Vec::new(),
            publishes_in_rounds: false,
            publishes_unchanged: true,
            pulled_source: None,
            advertise_pull: true,
            checks_on_save: false,
            load_grace: std::time::Duration::from_secs(2),
            index_files: Vec::new(),
            reports_quiescence: false,
            renames_at_declaration: false,
            opens_changed_files: false,
            other_files: OtherFiles::WrittenOnly,
            tsserver_request: None,
            helps: Vec::new(),
        }
    }

    /// A server the host describes (a configuration file's custom entry):
    /// `program` run with `args` on stdio, the nearest of `markers` as its
    /// root, `--version` as its probe, and none of the built-in servers'
    /// special needs.
    pub fn custom(
        id: &'static str,
        languages: &[Language],
        program: &str,
        args: &[&str],
        markers: &[&'static str],
    ) -> ServerSpec {
        ServerSpec::new(id, languages, &[program], args, markers)
    }

    /// The servers this crate knows, in order of preference per language.
    pub fn builtin() -> Vec<ServerSpec> {
        use Language::*;
        const PYTHON_MARKERS: &[&str] =
            &["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pyrightconfig.json", "Pipfile"];
        let mut rust_analyzer = ServerSpec::new("rust-analyzer", &[Rust], &["rust-analyzer"], &[], &["Cargo.toml"]);
        rust_analyzer.advertise_pull = false;
        rust_analyzer.checks_on_save = true;
        rust_analyzer.publishes_unchanged = false;
        rust_analyzer.pulled_source = Some("rust-analyzer");
        rust_analyzer.reports_quiescence = true;
        rust_analyzer.initialization_options = json!({ "checkOnSave": true, "cachePriming": { "enable": false } });
        rust_analyzer.root_rule = RootRule::CargoWorkspace;
        rust_analyzer.offline_env = vec![("CARGO_NET_OFFLINE".to_string(), "true".to_string())];
        // Its check on save (and on start, once loaded) is `cargo check`; it does not change answers.
        rust_analyzer.background_progress = vec!["cargo "];
        // Build scripts and proc macros take minutes to build on a cold project
        // (3 min 20 s for this workspace on 2 cores); navigation answers meanwhile.
        rust_analyzer.partial_progress =
            vec!["Building compile-time-deps", "Building build-artifacts", "Loading proc-macros"];
        rust_analyzer.files_progress = Some("Roots Scanned");
        // A cold start reads every dependency's sources before its first answer
        // (40 s for this workspace on a loaded 2-core machine).
        rust_analyzer.first_load_timeout = Some(std::time::Duration::from_secs(120));
        let mut pyright = ServerSpec::new("pyright", &[Python], &["pyright-langserver"], &["--stdio"], PYTHON_MARKERS);
        // pyright-langserver has no --version; `pyright` beside it has.
        pyright.probe_sibling = Some("pyright");
        pyright.root_rule = RootRule::PythonProject;
        pyright.settings = json!({ "python": { "analysis": { "diagnosticMode": "openFilesOnly" } } });
        let mut pylsp = ServerSpec::new("pylsp", &[Python], &["pylsp"], &[], PYTHON_MARKERS);
        pylsp.root_rule = RootRule::PythonProject;
        let mut ruff = ServerSpec::new("ruff", &[Python], &["ruff"], &["server"], PYTHON_MARKERS);
        ruff.root_rule = RootRule::PythonProject;
        // Editors run it beside the type checker: pyright offers no quick fix
        // for a lint (an unused import), ruff offers its own.
        ruff.helps = vec![Python];
        let mut tsls = ServerSpec::new(
            "typescript-language-server",
            &[TypeScript, JavaScript],
            &["typescript-language-server"],
            &["--stdio"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
        );
        let mut clangd = ServerSpec::new(
            "clangd",
            &[C, Cpp],
            &["clangd", "clangd-20", "clangd-19", "clangd-18", "clangd-17", "clangd-16", "clangd-15", "clangd-14"],
            &["--log=error"],
            &["compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt", "Makefile"],
        );
        // It publishes syntax, semantic and suggestion diagnostics as each kind
        // comes, and nothing for a kind whose list stays empty: ask tsserver.
        tsls.publishes_in_rounds = true;
        tsls.tsserver_request = Some("typescript.tsserverRequest");
        tsls.publishes_unchanged = false;
        // As editors set it: a rename keeps what other code sees, so a shorthand
        // property or destructuring keeps its key (`{ foo }` becomes `{ foo: bar }`)
        // and an import path is never renamed. Asked at a use of an imported name
        // it would then add a local alias (`import { a as b }`): the rename is
        // asked at the declaration instead.
        tsls.initialization_options = json!({ "preferences": {
            "providePrefixAndSuffixTextForRename": true,
            "allowRenameOfImportPath": false,
        } });
        tsls.renames_at_declaration = true;
        tsls.root_rule = RootRule::TsconfigReferences;
        // It announces loading the project only once a file is open, and a
        // loaded machine's node can take seconds to get there; it always announces it.
        tsls.load_grace = std::time::Duration::from_secs(10);
        clangd.index_files = vec!["compile_commands.json", "build/compile_commands.json"];
        clangd.opens_changed_files = true;
        clangd.root_rule = RootRule::CompileDatabase;
        clangd.index_outside_root = true;
        let mut gopls = ServerSpec::new("gopls", &[Go], &["gopls"], &[], &["go.work", "go.mod"]);
        gopls.probe_args = vec!["version".into()];
        gopls.root_rule = RootRule::GoWork;
        let mut fixture = ServerSpec::new("fixture", &[Fixture], &["fixture-lsp-server"], &[], &["fixture.toml"]);
        fixture.publishes_in_rounds = true;
        // Other files after a write: published by the server itself, or read
        // from the importers opened; pylsp and ruff check one file at a time.
        rust_analyzer.other_files = OtherFiles::Published;
        gopls.other_files = OtherFiles::Published;
        // It diagnoses the packages that depend on a changed one in a second
        // round, `diagnosticsDelay` after the change (250 ms to 1 s by version),
        // and nothing says when that round has ended; with no delay one round
        // publishes every affected file.
        gopls.initialization_options = json!({ "diagnosticsDelay": "0s" });
        pyright.other_files = OtherFiles::Importers;
        tsls.other_files = OtherFiles::Importers;
        clangd.other_files = OtherFiles::Importers;
        // Its diagnostics are each file's own: it publishes the changed file only, which is all a change affects.
        fixture.other_files = OtherFiles::Published;
        vec![rust_analyzer, pyright, pylsp, ruff, tsls, clangd, gopls, fixture]
    }

    /// Why the server has no project-wide index at `root`, if it has none.
    pub fn missing_index(&self, root: &std::path::Path) -> Option<String> {
        if self.index_files.is_empty() || self.index_files.iter().any(|f| root.join(f).is_file()) {
            return None;
        }
        Some(format!(
            "{} has no project index here (no {} in {}), so it knows only the files it has open",
            self.id,
            self.index_files.join(" or "),
            root.display()
        ))
    }

    /// The value of a `workspace/configuration` section (a dotted path into `settings`).
    pub fn setting(&self, section: Option<&str>) -> Value {
        let Some(section) = section.filter(|s| !s.is_empty()) else { return self.settings.clone() };
        let mut value = &self.settings;
        for part in section.split('.') {
            match value.get(part) {
                Some(v) => value = v,
                None => return Value::Null,
            }
        }
        value.clone()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_defined_language_routes_its_extensions_and_names_its_language_id() {
        let toy = Language::define("spec-toy", &["toy".into(), ".toys".into()], Some("toylang")).unwrap();
        assert_eq!(Language::from_path(Path::new("a/b.toy")), Some(toy));
        assert_eq!(Language::from_path(Path::new("b.toys")), Some(toy));
        assert_eq!(Language::from_id("spec-toy"), Some(toy));
        assert_eq!(toy.id(), "spec-toy");
        assert_eq!(toy.language_id(Path::new("b.toy")), "toylang");
        assert_eq!(toy.extensions(), ["toy", "toys"]);
        assert!(Language::all().contains(&toy));
        assert_eq!(serde_json::to_value(toy).unwrap(), "spec-toy");
        // Built-in routing is unchanged.
        assert_eq!(Language::from_path(Path::new("x.tsx")), Some(Language::TypeScript));
        assert_eq!(Language::Cpp.extensions(), ["cc", "cpp", "cxx", "hpp", "hh", "hxx"]);

        // Defined again: the same language, with the new extensions and languageId.
        let again = Language::define("spec-toy", &["toy".into()], None).unwrap();
        assert_eq!(again, toy);
        assert_eq!(Language::from_path(Path::new("b.toys")), None);
        assert_eq!(toy.language_id(Path::new("b.toy")), "spec-toy");
    }

    #[test]
    fn a_definition_that_would_take_another_languages_files_is_refused() {
        let refused = |id: &str, exts: &[&str]| {
            let exts: Vec<String> = exts.iter().map(|e| (*e).to_owned()).collect();
            Language::define(id, &exts, None).unwrap_err().to_string()
        };
        assert_eq!(refused("python", &["py3"]), "cannot define the language \"python\": it is a built-in language");
        assert_eq!(
            refused("spec-lua", &[]),
            "cannot define the language \"spec-lua\": a language needs its file extensions"
        );
        assert_eq!(refused("spec-hdr", &[".h"]), "cannot define the language \"spec-hdr\": .h files are c's");
        Language::define("spec-zig", &["zig".into()], None).unwrap();
        assert_eq!(refused("spec-zag", &["zig"]), "cannot define the language \"spec-zag\": .zig files are spec-zig's");
    }
}
