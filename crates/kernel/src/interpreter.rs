//! Finding the project's own interpreter for each language.
//!
//! Python: the configured override, else `.venv/bin/python`, then
//! `venv/bin/python` under the root, then `python3` on `PATH`. JavaScript: the
//! configured override, else `node` on `PATH`. The project's interpreter is
//! used so that the packages the user installed (pandas, matplotlib) are there.

use std::env;
use std::path::{Path, PathBuf};

use crate::{Error, KernelConfig, Language, Result};

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
    pub language: Language,
    pub program: PathBuf,
    pub source: InterpreterSource,
}

/// What discovery found for one language, for a status report.
#[derive(Debug, Clone)]
pub struct InterpreterReport {
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
        return Ok(Interpreter { language, program, source: InterpreterSource::Configured });
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
        return Ok(Interpreter { language, program, source: InterpreterSource::Path });
    }
    tried.push(format!("{name} on PATH"));
    Err(Error::InterpreterNotFound { language, tried: tried.join(", ") })
}

/// Discovery results for every language, for `status`.
pub fn interpreter_reports(config: &KernelConfig) -> Vec<InterpreterReport> {
    Language::ALL
        .iter()
        .map(|&language| InterpreterReport {
            language,
            found: find_interpreter(language, config).map_err(|error| error.to_string()),
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
