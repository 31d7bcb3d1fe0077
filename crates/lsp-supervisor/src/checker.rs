//! `diagnostics` with `"*"`: the language's own project checker, run and
//! parsed into the same [`Diagnostic`] shape (columns as the checker counts
//! them, converted to 1-indexed characters).
//!
//! | language | command |
//! |---|---|
//! | rust | `cargo check --message-format=json` (rustc's JSON diagnostics) |
//! | typescript, javascript | `tsc --noEmit --pretty false` |
//! | python | `pyright --outputjson` |
//! | go | `go vet ./...` |
//!
//! A checker runs only where its project really is (`Cargo.toml`;
//! `tsconfig.json`/`jsconfig.json`, or a `package.json` that depends on
//! `typescript`; a Python project file; `go.mod`/`go.work`): a nested
//! `package.json` of a C project's tooling is not a TypeScript project. A
//! checker that fails without a diagnostic says so with the tail of its stderr
//! (or stdout, where it writes its errors), and the other checkers' findings still stand.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Serialize;
use serde_json::Value;

use crate::detect::find_root;
use crate::encoding::{char_column, lines};
use crate::error::{Error, Result};
use crate::results::{Diagnostic, Location, Severity};
use crate::spec::Language;
use crate::supervisor::Supervisor;

/// What a project checker found.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectDiagnostics {
    /// The language checked.
    pub language: Language,
    /// The command line that ran.
    pub command: String,
    /// Where it ran.
    pub root: PathBuf,
    /// What it reported, each once, with no server named.
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the checker itself succeeded (exit status 0).
    pub success: bool,
    /// Why the checker failed without reporting a diagnostic (its exit status
    /// and the tail of its stderr), when it did: its list says nothing then.
    pub failure: Option<String>,
    /// That its output was cut at [`SupervisorConfig::checker_output_limit`](crate::SupervisorConfig)
    /// (`its stdout was cut at N bytes (M written)`), when it was: its list then holds only
    /// what came before the cut.
    pub cut: Option<String>,
}

/// Lines of a failed checker's output shown.
const TAIL_LINES: usize = 20;

/// The last [`TAIL_LINES`] non-empty lines of `text`.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// Whether `dir` holds a project that `language`'s checker checks.
fn is_project(language: Language, dir: &Path) -> bool {
    let has = |name: &str| dir.join(name).is_file();
    match language {
        Language::Rust => has("Cargo.toml"),
        Language::TypeScript | Language::JavaScript => {
            has("tsconfig.json") || has("jsconfig.json") || depends_on_typescript(&dir.join("package.json"))
        }
        Language::Python => crate::spec::ServerSpec::builtin()
            .iter()
            .find(|s| s.id == "pyright")
            .is_some_and(|s| s.root_markers.iter().any(|m| has(m))),
        Language::Go => has("go.mod") || has("go.work"),
        _ => false,
    }
}

/// Whether a `package.json` lists `typescript` among its (dev, peer) dependencies.
fn depends_on_typescript(package_json: &Path) -> bool {
    let Some(value) = std::fs::read(package_json).ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok()) else {
        return false;
    };
    ["dependencies", "devDependencies", "peerDependencies"]
        .iter()
        .any(|k| value.get(k).and_then(|d| d.get("typescript")).is_some())
}

impl Supervisor {
    async fn run_checker(&self, language: Language, root: &Path) -> Result<ProjectDiagnostics> {
        // Inside a prefix's container, the checker is the container's own: its PATH stands, and
        // the program is looked up there (the project's directories first, as on the host).
        let inside = self.config().enclosure.as_ref().filter(|enclosure| enclosure.looks_inside());
        let which = |name: &str| match inside {
            Some(inside) => {
                let candidates =
                    ["node_modules/.bin/", ".venv/bin/", "venv/bin/", ""].map(|dir| format!("{dir}{name}"));
                inside.locate(&candidates.each_ref().map(String::as_str)).map_err(|e| Error::Checker(e.to_string()))
            }
            None => {
                Ok(which::which_in(name, Some(crate::detect::search_path(root, &self.config().extra_path)), root).ok())
            }
        };
        let (program, args): (PathBuf, Vec<&str>) = match language {
            Language::Rust => (
                match inside {
                    Some(_) => which("cargo")?.ok_or_else(|| Error::Checker(missing_inside("cargo", inside)))?,
                    None => PathBuf::from("cargo"),
                },
                vec!["check", "--message-format=json", "--quiet", "--all-targets"],
            ),
            Language::TypeScript | Language::JavaScript => (
                which("tsc")?.ok_or_else(|| match inside {
                    Some(_) => Error::Checker(missing_inside("tsc", inside)),
                    None => Error::Checker("no `tsc` found (node_modules/.bin or PATH); install typescript".into()),
                })?,
                vec!["--noEmit", "--pretty", "false"],
            ),
            Language::Python => (
                which("pyright")?.ok_or_else(|| match inside {
                    Some(_) => Error::Checker(missing_inside("pyright", inside)),
                    None => Error::Checker(
                        "no `pyright` found (node_modules/.bin, .venv/bin or PATH); install pyright".into(),
                    ),
                })?,
                vec!["--outputjson"],
            ),
            Language::Go => (
                match inside {
                    Some(_) => which("go")?.ok_or_else(|| Error::Checker(missing_inside("go", inside)))?,
                    None => PathBuf::from("go"),
                },
                vec!["vet", "./..."],
            ),
            other => {
                return Err(Error::Checker(format!(
                    "there is no project checker for {other}; ask for one file's diagnostics instead"
                )));
            }
        };
        let command = format!("{} {}", program.display(), args.join(" "));
        let mut plain = std::process::Command::new(&program);
        plain.args(&args).current_dir(root);
        if inside.is_none() {
            plain.env("PATH", crate::detect::search_path(root, &self.config().extra_path));
        }
        // A checker runs the project's code (build scripts, proc macros): inside the enclosure.
        if let Some(enclosure) = &self.config().enclosure {
            plain = enclosure.enclose(&plain).map_err(|e| Error::Checker(format!("`{command}`: {e}")))?;
        }
        let mut run = tokio::process::Command::from(plain);
        run.stdin(Stdio::null()).kill_on_drop(true);
        let run = enclosure::capture::output(&mut run, self.config().checker_output_limit);
        let out = match tokio::time::timeout(self.config().checker_timeout, run).await {
            Err(_) => {
                return Err(Error::Checker(format!(
                    "`{command}` did not finish within {} s (timed out)",
                    self.config().checker_timeout.as_secs()
                )));
            }
            Ok(Err(e)) => return Err(Error::Checker(format!("could not run `{command}`: {e}"))),
            Ok(Ok(out)) => out,
        };
        let (stdout, stderr) = (out.stdout.text(), out.stderr.text());
        let mut diagnostics = match language {
            Language::Rust => parse_cargo(&stdout, root),
            Language::Python => parse_pyright(&stdout),
            Language::Go => parse_colon_lines(&stderr, root),
            _ => parse_tsc(&stdout, root),
        };
        // The same message for several targets (`--all-targets` checks a binary and its tests) is one finding.
        let mut seen = std::collections::HashSet::new();
        diagnostics.retain(|d| {
            seen.insert((
                d.location.path.clone(),
                d.location.line,
                d.location.column,
                d.code.clone(),
                d.message.clone(),
            ))
        });
        let failed = (!out.status.success() && diagnostics.is_empty()).then(|| {
            let said = if stderr.trim().is_empty() { tail(&stdout) } else { tail(&stderr) };
            let said =
                if said.is_empty() { "it printed nothing".to_string() } else { format!("it ended with:\n{said}") };
            format!("`{command}` in {} failed ({}) without a diagnostic; {said}", root.display(), out.status)
        });
        // What was cut may have held findings: the list is not the whole answer, and says so.
        let cut: Vec<String> =
            [out.stdout.cut_note("stdout"), out.stderr.cut_note("stderr")].into_iter().flatten().collect();
        let cut = (!cut.is_empty()).then(|| {
            format!(
                "`{command}` in {}: {}; the diagnostics listed are those read before the cut",
                root.display(),
                cut.join(", ")
            )
        });
        let failure = match (failed, &cut) {
            (Some(failed), Some(cut)) => Some(format!("{failed}\n{cut}")),
            (failed, _) => failed,
        };
        Ok(ProjectDiagnostics {
            language,
            command,
            root: root.to_path_buf(),
            diagnostics,
            success: out.status.success(),
            failure,
            cut,
        })
    }
}

fn location(path: PathBuf, line: u32, column: u32, end_line: u32, end_column: u32) -> Location {
    let text = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| lines(&t).get(line.saturating_sub(1) as usize).map(|l| l.trim().to_string()))
        .unwrap_or_default();
    Location { path, line, column, end_line, end_column, text }
}

/// rustc's JSON: `{"reason":"compiler-message","message":{"level","message","code":{"code"},"spans":[{"is_primary","file_name","line_start","column_start",…}]}}`;
/// columns are 1-based characters.
fn parse_cargo(stdout: &str, root: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
        if value.get("reason").and_then(Value::as_str) != Some("compiler-message") {
            continue;
        }
        let message = &value["message"];
        let severity = match message.get("level").and_then(Value::as_str) {
            Some("error") | Some("error: internal compiler error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("note") | Some("help") => Severity::Information,
            _ => continue,
        };
        let Some(mut span) = message["spans"].as_array().and_then(|s| s.iter().find(|s| s["is_primary"] == true))
        else {
            continue;
        };
        // An error inside a macro from elsewhere (`format!` in std) belongs where the macro was called.
        while !root.join(span["file_name"].as_str().unwrap_or("")).starts_with(root) {
            match span.pointer("/expansion/span") {
                Some(call_site) if call_site.is_object() => span = call_site,
                _ => break,
            }
        }
        let num = |k: &str| span.get(k).and_then(Value::as_u64).unwrap_or(1) as u32;
        let path = root.join(span["file_name"].as_str().unwrap_or(""));
        out.push(Diagnostic {
            server: None,
            location: location(path, num("line_start"), num("column_start"), num("line_end"), num("column_end")),
            severity,
            code: message.pointer("/code/code").and_then(Value::as_str).map(str::to_string),
            source: Some("rustc".into()),
            message: message["message"].as_str().unwrap_or("").to_string(),
        });
    }
    out
}

/// pyright's `--outputjson`: `generalDiagnostics[]` with 0-based `range` in characters.
fn parse_pyright(stdout: &str) -> Vec<Diagnostic> {
    let Ok(value) = serde_json::from_str::<Value>(stdout) else { return Vec::new() };
    let mut out = Vec::new();
    for d in value["generalDiagnostics"].as_array().into_iter().flatten() {
        let num = |p: &str| d.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32 + 1;
        let severity = match d["severity"].as_str() {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => Severity::Information,
        };
        out.push(Diagnostic {
            server: None,
            location: location(
                PathBuf::from(d["file"].as_str().unwrap_or("")),
                num("/range/start/line"),
                num("/range/start/character"),
                num("/range/end/line"),
                num("/range/end/character"),
            ),
            severity,
            code: d["rule"].as_str().map(str::to_string),
            source: Some("pyright".into()),
            message: d["message"].as_str().unwrap_or("").to_string(),
        });
    }
    out
}

/// `tsc --pretty false`: `file(line,col): error TS2322: message`; columns are 1-based UTF-16 units.
fn parse_tsc(stdout: &str, root: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some((place, rest)) = line.split_once("): ") else { continue };
        let Some((file, position)) = place.rsplit_once('(') else { continue };
        let mut nums = position.split(',').filter_map(|n| n.trim().parse::<u32>().ok());
        let (Some(l), Some(c)) = (nums.next(), nums.next()) else { continue };
        let (severity, rest) = if let Some(r) = rest.strip_prefix("error ") {
            (Severity::Error, r)
        } else if let Some(r) = rest.strip_prefix("warning ") {
            (Severity::Warning, r)
        } else {
            continue;
        };
        let (code, message) = rest.split_once(": ").unwrap_or(("", rest));
        out.push(Diagnostic {
            server: None,
            location: location(root.join(file), l, c, l, c),
            severity,
            code: (!code.is_empty()).then(|| code.to_string()),
            source: Some("tsc".into()),
            message: message.to_string(),
        });
    }
    out
}

/// `go vet`: `path/file.go:12:5: message` (columns are 1-based bytes).
fn parse_colon_lines(text: &str, root: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.strip_prefix("vet: ").unwrap_or(line);
        let mut parts = line.splitn(4, ':');
        let (Some(file), Some(l), Some(c), Some(message)) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse::<u32>(), c.trim().parse::<usize>()) else { continue };
        let path = root.join(file.trim());
        let line_text = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| lines(&t).get(l as usize - 1).map(|s| s.to_string()))
            .unwrap_or_default();
        let column = u32::try_from(char_column(&line_text, c.saturating_sub(1))).unwrap_or(1);
        out.push(Diagnostic {
            server: None,
            location: location(path, l, column, l, column),
            severity: Severity::Error,
            code: None,
            source: Some("go vet".into()),
            message: message.trim().to_string(),
        });
    }
    out
}

/// Why a checker is missing inside a prefix's container.
fn missing_inside(name: &str, inside: Option<&enclosure::Enclosure>) -> String {
    let place = inside.map_or_else(String::new, |inside| format!(" inside {}", inside.describe()));
    format!("no `{name}` found{place} (the project's node_modules/.bin, .venv/bin, venv/bin, or its PATH there)")
}

/// [`Supervisor::project_diagnostics`].
pub(crate) async fn project_diagnostics(
    sup: &Supervisor,
    language: Option<Language>,
) -> Result<Vec<ProjectDiagnostics>> {
    let root = sup.config().root.clone();
    let languages = match language {
        Some(l) => vec![l],
        None => vec![Language::Rust, Language::TypeScript, Language::Python, Language::Go],
    };
    // Each language's projects: the workspace root when it has a marker, else the projects below it.
    let mut runs: Vec<(Language, PathBuf)> = Vec::new();
    for language in languages {
        let mut roots: Vec<PathBuf> = Vec::new();
        for spec in sup.config().servers.iter().filter(|s| s.languages.contains(&language)) {
            let found = match find_root(spec, &root, &root) {
                Some(r) => vec![r],
                None => crate::supervisor::project_roots(spec, &root),
            };
            for r in found {
                if is_project(language, &r) && !roots.contains(&r) {
                    roots.push(r);
                }
            }
        }
        runs.extend(roots.into_iter().map(|r| (language, r)));
    }
    if runs.is_empty() {
        let what = language.map(|l| l.id()).unwrap_or("any language");
        return Err(Error::Checker(format!(
            "no project checker applies for {what} at {} or up to 3 levels below: none of Cargo.toml, tsconfig.json (or a package.json that depends on typescript), pyproject.toml/setup.py/requirements.txt, go.mod is there",
            root.display()
        )));
    }
    let mut out = Vec::new();
    let single = runs.len() == 1;
    for (language, project) in runs {
        let run = sup.run_checker(language, &project).await?;
        // One checker's failure is the answer when it is the only one; else the others' stand.
        if single && let Some(failure) = &run.failure {
            return Err(Error::Checker(failure.clone()));
        }
        out.push(run);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checker_outputs_parse() {
        let root = Path::new("/p");
        let tsc = parse_tsc("src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n", root);
        assert_eq!(tsc.len(), 1);
        assert_eq!((tsc[0].location.line, tsc[0].location.column), (3, 7));
        assert_eq!(tsc[0].code.as_deref(), Some("TS2322"));
        assert_eq!(tsc[0].message, "Type 'string' is not assignable to type 'number'.");
        let vet = parse_colon_lines("# example\nvet: ./main.go:4:2: unreachable code\n", root);
        assert_eq!(vet.len(), 1);
        assert_eq!(vet[0].message, "unreachable code");
        let cargo = parse_cargo(
            r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"is_primary":true,"file_name":"src/main.rs","line_start":2,"column_start":5,"line_end":2,"column_end":9}]}}"#,
            root,
        );
        assert_eq!(cargo[0].code.as_deref(), Some("E0308"));
        assert_eq!(cargo[0].location.path, PathBuf::from("/p/src/main.rs"));
        // Inside std's `format!`: reported at the call site.
        let in_macro = parse_cargo(
            r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"is_primary":true,"file_name":"/rust/library/alloc/src/macros.rs","line_start":114,"column_start":13,"line_end":114,"column_end":20,"expansion":{"span":{"file_name":"src/main.rs","line_start":19,"column_start":5,"line_end":19,"column_end":30}}}]}}"#,
            root,
        );
        assert_eq!(
            (in_macro[0].location.path.clone(), in_macro[0].location.line),
            (PathBuf::from("/p/src/main.rs"), 19)
        );
    }
}
