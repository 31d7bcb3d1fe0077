//! Finding the project's own interpreter for each language.
//!
//! Python: the configured override, else `.venv/bin/python`, then
//! `venv/bin/python` under the root, then `python3` on `PATH`. JavaScript: the
//! configured override, else `node` on `PATH`. The project's interpreter is
//! used so that the packages the user installed (pandas, matplotlib) are there.
//!
//! Through a prefix's container ([`enclosure::Enclosure::looks_inside`]) the
//! same places are looked at inside, where the kernel runs: the container's
//! own `PATH` and filesystem, not the host's ([`find_interpreter_in`]).

use std::env;
use std::path::{Path, PathBuf};

use crate::{Error, KernelConfig, Language, Result, Spawner};

/// Where an interpreter was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpreterSource {
    /// Set explicitly in [`KernelConfig`].
    Configured,
    /// A virtual environment inside the project (`.venv` or `venv`).
    ProjectVenv(String),
    /// Found on `PATH`.
    Path,
}

/// An interpreter the kernel would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The language it runs.
    pub language: Language,
    /// The interpreter's path where the kernel runs: on the host, or inside
    /// the container named by `inside`.
    pub program: PathBuf,
    /// Where discovery found it.
    pub source: InterpreterSource,
    /// Where it was looked up when not on the host: the enclosure's description
    /// (`command prefix \`podman exec -i app\``).
    pub inside: Option<String>,
}

/// What discovery found for one language, for a status report.
#[derive(Debug, Clone)]
pub struct InterpreterReport {
    /// The language looked for.
    pub language: Language,
    /// The interpreter, or why none was found.
    pub found: std::result::Result<Interpreter, String>,
}

/// Finds the interpreter for `language` under `config.root`.
///
/// Errors with [`Error::InterpreterNotFound`] naming every place tried.
pub fn find_interpreter(language: Language, config: &KernelConfig) -> Result<Interpreter> {
    let configured = match language {
        Language::Python => config.python.as_deref(),
        Language::JavaScript => config.node.as_deref(),
    };
    if let Some(program) = configured {
        let program = resolve_program(program, &config.root).ok_or_else(|| Error::InterpreterNotFound {
            language,
            tried: format!("configured {}", program.display()),
        })?;
        return Ok(Interpreter { language, program, source: InterpreterSource::Configured, inside: None });
    }
    let mut tried = Vec::new();
    if language == Language::Python {
        for venv in [".venv", "venv"] {
            let candidate = config.root.join(venv).join("bin").join("python");
            if is_executable(&candidate) {
                return Ok(Interpreter {
                    language,
                    program: candidate,
                    source: InterpreterSource::ProjectVenv(venv.to_owned()),
                    inside: None,
                });
            }
            tried.push(format!("{venv}/bin/python"));
        }
    }
    let name = match language {
        Language::Python => "python3",
        Language::JavaScript => "node",
    };
    if let Some(program) = search_path(name) {
        return Ok(Interpreter { language, program, source: InterpreterSource::Path, inside: None });
    }
    tried.push(format!("{name} on PATH"));
    Err(Error::InterpreterNotFound { language, tried: tried.join(", ") })
}

/// Finds the interpreter for `language` where `spawner` runs it: inside a
/// prefix's container (the same places, in the same order, asked through the
/// prefix), else on the host ([`find_interpreter`]).
///
/// Errors with [`Error::InterpreterNotFound`] naming every place tried, or
/// [`Error::Enclosure`] when the prefix could not be asked.
pub fn find_interpreter_in(language: Language, config: &KernelConfig, spawner: &dyn Spawner) -> Result<Interpreter> {
    let Some(enclosure) = spawner.inside() else { return find_interpreter(language, config) };
    let configured = match language {
        Language::Python => config.python.as_deref(),
        Language::JavaScript => config.node.as_deref(),
    };
    let candidates: Vec<String> = match (configured, language) {
        (Some(program), _) => vec![program.display().to_string()],
        (None, Language::Python) => [".venv/bin/python", "venv/bin/python", "python3"].map(str::to_owned).to_vec(),
        (None, Language::JavaScript) => vec!["node".to_owned()],
    };
    let inside = enclosure.describe();
    // A configured absolute path is the enclosure's own word: used as given, without a lookup.
    if let Some(program) = configured.filter(|program| program.is_absolute()) {
        let program = program.to_path_buf();
        return Ok(Interpreter { language, program, source: InterpreterSource::Configured, inside: Some(inside) });
    }
    let names: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let Some(program) = enclosure.locate(&names)? else {
        let tried = candidates
            .iter()
            .map(|c| if c.contains('/') { c.clone() } else { format!("{c} on PATH") })
            .collect::<Vec<_>>()
            .join(", ");
        let what = if configured.is_some() { "configured " } else { "" };
        return Err(Error::InterpreterNotFound { language, tried: format!("{what}{tried}, inside {inside}") });
    };
    let source = if configured.is_some() {
        InterpreterSource::Configured
    } else if let Some(venv) = [".venv", "venv"].into_iter().find(|venv| program.starts_with(config.root.join(venv))) {
        InterpreterSource::ProjectVenv(venv.to_owned())
    } else {
        InterpreterSource::Path
    };
    Ok(Interpreter { language, program, source, inside: Some(inside) })
}

/// Discovery results for every language, for `status`: where `spawner` runs kernels.
pub fn interpreter_reports(config: &KernelConfig, spawner: &dyn Spawner) -> Vec<InterpreterReport> {
    Language::ALL
        .iter()
        .map(|&language| InterpreterReport {
            language,
            found: find_interpreter_in(language, config, spawner).map_err(|error| error.to_string()),
        })
        .collect()
}

fn resolve_program(program: &Path, root: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        let path = if program.is_absolute() { program.to_path_buf() } else { root.join(program) };
        return is_executable(&path).then_some(path);
    }
    search_path(&program.to_string_lossy())
}

fn search_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0).unwrap_or(false)
}
