//! `cargo xtask trials`, the `lsp_rename` part: randomized all-or-nothing
//! trials of a rename's `WorkspaceEdit` planned and written as
//! `Supervisor::rename` does (`lsp_supervisor::trials`), with no server.
//!
//! Each trial generates a tree of `.fix` files and a `WorkspaceEdit` of the
//! shapes servers send: text edits on some files, and maybe a file renamed,
//! one created in a new directory (then filled by a text edit) and one
//! deleted. It plans the edit, then, as in `trials.rs`, picks no fault, a
//! fault in the writer, or a change to a random file between the plan and the
//! write (the window in which a rename asks the server about leftovers), writes,
//! and checks by content hashes that every path the edit touches is all old or
//! all new, and that the result says which.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use lsp_supervisor::trials::fault::{self, ENOSPC, Fault, Op};
use lsp_supervisor::{Error, path_to_uri};
use serde_json::{Value, json};

use crate::trials::{Change, Figures, Options, Scenario, Trial, hash, pick, run_with};

/// Runs `options.count` trials of `lsp_rename`'s write from `options.seed`.
pub fn run_trials(options: &Options) -> Result<Figures> {
    run_with(options, one)
}

fn one(rng: &mut fastrand::Rng) -> Result<Trial> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?.join("tree");
    let outside = dir.path().canonicalize()?.join("outside");
    std::fs::create_dir_all(&outside)?;
    let dirs = ["", "src/", "src/deep/"];
    // Relative path → content; `None`: absent.
    let mut old: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    for i in 0..rng.usize(2..=8) {
        let path = PathBuf::from(format!("{}f{i}.fix", dirs[rng.usize(..dirs.len())]));
        let content: String = (0..rng.usize(1..=5)).map(|j| format!("use old {j}\n")).collect();
        std::fs::create_dir_all(root.join(&path).parent().unwrap_or(&root))?;
        std::fs::write(root.join(&path), &content)?;
        old.insert(path, Some(content));
    }
    let originals: Vec<PathBuf> = old.keys().cloned().collect();
    let mut new = old.clone();
    let uri = |path: &Path| path_to_uri(&root.join(path));
    let range = |line: usize, from: usize, to: usize| json!({ "start": { "line": line, "character": from }, "end": { "line": line, "character": to } });
    let mut changes: Vec<Value> = Vec::new();
    for path in &originals {
        if rng.usize(..10) >= 6 && !(changes.is_empty() && path == originals.last().unwrap_or(path)) {
            continue;
        }
        let Some(Some(text)) = new.get(path).cloned() else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let chosen: Vec<usize> = (0..lines.len()).filter(|_| rng.bool()).collect();
        let chosen = if chosen.is_empty() { vec![0] } else { chosen };
        let edits: Vec<Value> = chosen.iter().map(|&j| json!({ "range": range(j, 4, 7), "newText": "new" })).collect();
        changes.push(json!({ "textDocument": { "uri": uri(path), "version": 1 }, "edits": edits }));
        let text: String = lines
            .iter()
            .enumerate()
            .map(|(j, line)| {
                if chosen.contains(&j) { format!("{}\n", line.replacen("old", "new", 1)) } else { format!("{line}\n") }
            })
            .collect();
        new.insert(path.clone(), Some(text));
    }
    let mut renamed = None;
    if rng.usize(..10) < 4 {
        let from = originals[rng.usize(..originals.len())].clone();
        let to = from.with_file_name(format!("renamed_{}", from.file_name().and_then(|n| n.to_str()).unwrap_or("x")));
        changes.push(json!({ "kind": "rename", "oldUri": uri(&from), "newUri": uri(&to) }));
        let content = new.insert(from.clone(), None).flatten();
        old.insert(to.clone(), None);
        new.insert(to, content);
        renamed = Some(from);
    }
    if rng.usize(..10) < 4 {
        let made = PathBuf::from(format!("made/sub{}/new.fix", rng.usize(..3)));
        changes.push(json!({ "kind": "create", "uri": uri(&made) }));
        changes.push(json!({ "textDocument": { "uri": uri(&made), "version": null },
            "edits": [{ "range": range(0, 0, 0), "newText": "def new\n" }] }));
        old.insert(made.clone(), None);
        new.insert(made, Some("def new\n".to_string()));
    }
    if rng.usize(..10) < 3 {
        let gone = originals[rng.usize(..originals.len())].clone();
        if Some(&gone) != renamed.as_ref() {
            changes.push(json!({ "kind": "delete", "uri": uri(&gone) }));
            new.insert(gone, None);
        }
    }
    let edit = json!({ "documentChanges": changes });
    let touched: BTreeSet<PathBuf> = old.keys().filter(|p| old[*p] != new[*p]).cloned().collect();
    let mut problems = Vec::new();
    let planned = lsp_supervisor::trials::plan(&root, &edit).context("planning")?;

    let scenario = pick(rng, &originals, touched.len());
    let mut old_hash: BTreeMap<PathBuf, Option<u64>> =
        old.iter().map(|(p, c)| (p.clone(), c.as_ref().map(|c| hash(c.as_bytes())))).collect();
    let mut new_hash: BTreeMap<PathBuf, Option<u64>> =
        new.iter().map(|(p, c)| (p.clone(), c.as_ref().map(|c| hash(c.as_bytes())))).collect();
    if let Scenario::Concurrent { file, change } = &scenario {
        let path = root.join(file);
        let content = old[file].clone().unwrap_or_default();
        let now = match change {
            Change::Content => {
                let changed = format!("{content}use old 9\n");
                std::fs::write(&path, &changed)?;
                Some(hash(changed.as_bytes()))
            }
            Change::Deleted => {
                std::fs::remove_file(&path)?;
                None
            }
            Change::SymlinkSame | Change::SymlinkOther => {
                let target = outside.join("target");
                let linked = if *change == Change::SymlinkSame { content } else { format!("{content}\n") };
                std::fs::write(&target, &linked)?;
                std::fs::remove_file(&path)?;
                std::os::unix::fs::symlink(&target, &path)?;
                Some(hash(linked.as_bytes()))
            }
        };
        old_hash.insert(file.clone(), now);
        if !touched.contains(file) {
            new_hash.insert(file.clone(), now);
        }
    }

    let guard = match &scenario {
        Scenario::Fault(f) => Some(fault::inject(f.clone())),
        _ => None,
    };
    let result = planned.commit();
    let fired = guard.as_ref().and_then(fault::Injected::fired);
    drop(guard);

    let now = |p: &Path| -> Option<u64> { std::fs::read(root.join(p)).ok().map(|b| hash(&b)) };
    let (mut olds, mut news, mut neither) = (0, 0, 0);
    for path in &touched {
        let is = now(path);
        if is == old_hash[path] {
            olds += 1;
        } else if is == new_hash[path] {
            news += 1;
        } else {
            neither += 1;
        }
    }
    let (all_old, all_new) = (olds == touched.len(), news == touched.len());
    let partial = !all_old && !all_new;
    if partial {
        problems.push(format!("{olds} touched path(s) old, {news} new, {neither} neither, of {}", touched.len()));
    }
    for path in old.keys().filter(|p| !touched.contains(*p)) {
        if now(path) != old_hash[path] {
            problems.push(format!("{} was not touched and changed", path.display()));
        }
    }
    let strays = strays(&root, &old)?;
    if !strays.is_empty() {
        problems.push(format!("left behind: {strays:?}"));
    }
    if all_old && !all_new && root.join("made").exists() {
        problems.push("the directory made for a new file was left".to_string());
    }

    let outcome = match &result {
        Ok(_) => "accepted",
        Err(Error::EditRefused(_)) => "refused (conflict)",
        Err(Error::EditFailed(_)) => "failed (write failed)",
        Err(_) => "other error",
    };
    let (mut fault_not_hit, mut absorbed) = (false, false);
    let accepted = |problems: &mut Vec<String>, written: &[(PathBuf, lsp_supervisor::FileChange)]| {
        let written: BTreeSet<PathBuf> =
            written.iter().map(|(p, _)| p.strip_prefix(&root).unwrap_or(p).to_path_buf()).collect();
        if written != touched {
            problems.push(format!("written {written:?}, expected {touched:?}"));
        }
        if !all_new {
            problems.push("written, and the paths are not all new".to_string());
        }
    };
    match (&scenario, &result) {
        (Scenario::NoFault, Ok(written)) => accepted(&mut problems, written),
        (Scenario::Fault(f), Ok(written)) => {
            accepted(&mut problems, written);
            match &fired {
                None => fault_not_hit = true,
                Some(hit) if matches!(f, Fault::ReadOnly { .. }) || hit.op == Op::Link => absorbed = true,
                Some(hit) => problems.push(format!("written, though {:?} on {} failed", hit.op, hit.path.display())),
            }
        }
        (Scenario::Fault(f), Err(Error::EditFailed(message))) => {
            check_failure(f, fired.as_ref(), &root, message, &mut problems);
            if !message.contains("nothing changed") {
                problems.push(format!("the error says not all was put back: {message}"));
            }
            if !all_old {
                problems.push("failed, and the paths are not all old".to_string());
            }
        }
        (Scenario::Concurrent { file, .. }, Ok(written)) if !touched.contains(file) => accepted(&mut problems, written),
        (Scenario::Concurrent { file, .. }, Err(Error::EditRefused(message))) if touched.contains(file) => {
            let expected = format!("{} changed on disk while the rename was planned", file.display());
            if message != &expected {
                problems.push(format!("the refusal `{message}` does not name only {}", file.display()));
            }
            if !all_old {
                problems.push("refused, and the paths are not all old".to_string());
            }
        }
        (_, Ok(_)) => problems.push("written, and it should not have been".to_string()),
        (_, Err(e)) => problems.push(format!("unexpected error: {e}")),
    }
    Ok(Trial { scenario: scenario.name(), outcome, fault_not_hit, absorbed, partial, problems })
}

/// Runs `options.count` trials of `Supervisor::rename` itself against the
/// fixture language server, from `options.seed`.
pub fn run_server_trials(options: &Options) -> Result<Figures> {
    fixture_server()?;
    run_with(options, one_with_server)
}

/// The fixture language server's directory (beside this executable, or above its `deps/`).
fn fixture_server() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let mut dir = exe.parent().context("the executable's directory")?.to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    if !dir.join("fixture-lsp-server").is_file() {
        anyhow::bail!("{} has no fixture-lsp-server: run `cargo xtask fixtures` first", dir.display());
    }
    Ok(dir)
}

/// One rename through a supervisor and the fixture server (`FIXTURE_LSP_RENAME_FILES=1`: the file
/// named after the symbol is renamed too), with no fault or a fault in the writer. A change between
/// the plan and the write has no way in here (the rename plans and writes in one call); the
/// generated-edit trials above cover it.
fn one_with_server(rng: &mut fastrand::Rng) -> Result<Trial> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    std::fs::write(root.join("fixture.toml"), "")?;
    let name = ["alpha", "widget", "total"][rng.usize(..3)];
    let new_name = format!("{name}_{}", rng.u32(..100));
    let dirs = ["", "src/", "src/deep/"];
    let declaring = PathBuf::from(format!("{}{name}.fix", dirs[rng.usize(..dirs.len())]));
    let moved = declaring.with_file_name(format!("{new_name}.fix"));
    let mut old: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    let mut new: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    old.insert(declaring.clone(), Some(format!("def {name}\n{name} again\n")));
    new.insert(declaring.clone(), None);
    old.insert(moved.clone(), None);
    new.insert(moved, Some(format!("def {new_name}\n{new_name} again\n")));
    for i in 0..rng.usize(1..=6) {
        let path = PathBuf::from(format!("{}f{i}.fix", dirs[rng.usize(..dirs.len())]));
        let (mut before, mut after) = (String::new(), String::new());
        for _ in 0..rng.usize(1..=4) {
            match rng.usize(..3) {
                0 => {
                    before.push_str(&format!("use {name}\n"));
                    after.push_str(&format!("use {new_name}\n"));
                }
                1 => {
                    before.push_str(&format!("{name}x is another word\n"));
                    after.push_str(&format!("{name}x is another word\n"));
                }
                _ => {
                    before.push_str("plain\n");
                    after.push_str("plain\n");
                }
            }
        }
        old.insert(path.clone(), Some(before));
        new.insert(path, Some(after));
    }
    for (path, content) in &old {
        if let Some(content) = content {
            std::fs::create_dir_all(root.join(path).parent().unwrap_or(&root))?;
            std::fs::write(root.join(path), content)?;
        }
    }
    let touched: BTreeSet<PathBuf> = old.keys().filter(|p| old[*p] != new[*p]).cloned().collect();
    let at = rng.usize(1..=3 * touched.len());
    let scenario = match rng.usize(..7) {
        0 | 1 => Scenario::NoFault,
        2 => Scenario::Fault(Fault::FailStep { at, errno: ENOSPC }),
        3 => Scenario::Fault(Fault::FailStep { at, errno: fault::EACCES }),
        4 => Scenario::Fault(Fault::FailOp { op: Op::Rename, at: rng.usize(1..=touched.len()), errno: fault::EACCES }),
        5 => Scenario::Fault(Fault::DiskFull { at }),
        _ => Scenario::Fault(Fault::ReadOnly { at }),
    };

    let mut config = lsp_supervisor::SupervisorConfig::new(&root);
    config.extra_path.push(fixture_server()?);
    config.request_timeout = std::time::Duration::from_secs(10);
    config.watch = false;
    for spec in &mut config.servers {
        if spec.id == "fixture" {
            spec.env = vec![("FIXTURE_LSP_RENAME_FILES".to_string(), "1".to_string())];
            // The fixture server reads the disk for every request: there is no load to wait for.
            spec.load_grace = std::time::Duration::ZERO;
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let supervisor = lsp_supervisor::Supervisor::new(config);
    // The rename runs on this thread, so the fault (set per thread) reaches its write.
    let guard = match &scenario {
        Scenario::Fault(f) => Some(fault::inject(f.clone())),
        _ => None,
    };
    let result = runtime.block_on(supervisor.rename(&root.join(&declaring), 1, name, &new_name));
    let fired = guard.as_ref().and_then(fault::Injected::fired);
    drop(guard);
    runtime.block_on(async move { drop(supervisor) });

    let hashes = |map: &BTreeMap<PathBuf, Option<String>>| -> BTreeMap<PathBuf, Option<u64>> {
        map.iter().map(|(p, c)| (p.clone(), c.as_ref().map(|c| hash(c.as_bytes())))).collect()
    };
    let (old_hash, new_hash) = (hashes(&old), hashes(&new));
    let now = |p: &Path| -> Option<u64> { std::fs::read(root.join(p)).ok().map(|b| hash(&b)) };
    let (mut olds, mut news) = (0, 0);
    for path in &touched {
        let is = now(path);
        olds += usize::from(is == old_hash[path]);
        news += usize::from(is == new_hash[path]);
    }
    let (all_old, all_new) = (olds == touched.len(), news == touched.len());
    let partial = !all_old && !all_new;
    let mut problems = Vec::new();
    if partial {
        problems.push(format!("{olds} touched path(s) old, {news} new, of {}", touched.len()));
    }
    for path in old.keys().filter(|p| !touched.contains(*p)) {
        if now(path) != old_hash[path] {
            problems.push(format!("{} was not touched and changed", path.display()));
        }
    }
    let mut known = old.clone();
    known.insert(PathBuf::from("fixture.toml"), Some(String::new()));
    let strays = strays(&root, &known)?;
    if !strays.is_empty() {
        problems.push(format!("left behind: {strays:?}"));
    }
    let outcome = match &result {
        Ok(_) => "accepted",
        Err(Error::EditRefused(_)) => "refused (conflict)",
        Err(Error::EditFailed(_)) => "failed (write failed)",
        Err(_) => "other error",
    };
    let (mut fault_not_hit, mut absorbed) = (false, false);
    match (&scenario, &result) {
        (_, Ok(renamed)) => {
            let written: BTreeSet<PathBuf> =
                renamed.files.iter().map(|f| f.path.strip_prefix(&root).unwrap_or(&f.path).to_path_buf()).collect();
            if written != touched {
                problems.push(format!("renamed {written:?}, expected {touched:?}"));
            }
            if !all_new {
                problems.push("renamed, and the paths are not all new".to_string());
            }
            match (&scenario, &fired) {
                (Scenario::Fault(_), None) => fault_not_hit = true,
                (Scenario::Fault(Fault::ReadOnly { .. }), Some(_)) => absorbed = true,
                (Scenario::Fault(_), Some(hit)) if hit.op == Op::Link => absorbed = true,
                (Scenario::Fault(_), Some(hit)) => {
                    problems.push(format!("renamed, though {:?} on {} failed", hit.op, hit.path.display()));
                }
                _ => {}
            }
        }
        (Scenario::Fault(f), Err(Error::EditFailed(message))) => {
            check_failure(f, fired.as_ref(), &root, message, &mut problems);
            if !all_old {
                problems.push("failed, and the paths are not all old".to_string());
            }
        }
        (_, Err(e)) => problems.push(format!("unexpected error: {e}")),
    }
    Ok(Trial { scenario: scenario.name(), outcome, fault_not_hit, absorbed, partial, problems })
}

/// Checks that a failed write's error names the file the fault hit and the OS error it raised.
fn check_failure(f: &Fault, fired: Option<&fault::Fired>, root: &Path, message: &str, problems: &mut Vec<String>) {
    let errno = match f {
        Fault::FailStep { errno, .. } | Fault::FailOp { errno, .. } => *errno,
        _ => ENOSPC,
    };
    let cause = std::io::Error::from_raw_os_error(errno).to_string();
    match fired {
        Some(hit) => {
            let shown = hit.path.strip_prefix(root).unwrap_or(&hit.path).display().to_string();
            if !message.contains(&format!("write failed on {shown}: {cause}")) {
                problems.push(format!("the error `{message}` does not name {shown} and `{cause}`"));
            }
        }
        None => problems.push(format!("failed, and no fault hit: {message}")),
    }
}

/// Files under `root` that are none of the paths the trial knows: what a writer left behind.
fn strays(root: &Path, known: &BTreeMap<PathBuf, Option<String>>) -> Result<Vec<PathBuf>> {
    crate::trials::unknown_files(root, |relative| known.contains_key(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hundred renames through the supervisor and the fixture server (which
    /// `cargo xtask fixtures` builds), with faults: none partial or wrong.
    #[test]
    fn a_hundred_renames_through_the_fixture_server_apply_all_or_nothing() -> Result<()> {
        let figures = run_server_trials(&Options { count: 100, seed: 20_261_202, only: None })?;
        assert_eq!((figures.partial, figures.wrong), (0, 0), "{}", figures.render());
        assert_eq!(figures.scenarios.len(), 6, "{}", figures.render());
        for outcome in ["accepted", "failed (write failed)"] {
            assert!(figures.outcomes.get(outcome).is_some_and(|n| *n > 0), "{outcome}: {}", figures.render());
        }
        assert_eq!(figures.outcomes.get("other error"), None, "{}", figures.render());
        Ok(())
    }

    /// A hundred trials of a rename's write from a fixed seed: no partial
    /// application, no wrong result, and every outcome among them.
    #[test]
    fn a_hundred_rename_trials_apply_all_or_nothing() -> Result<()> {
        let figures = run_trials(&Options { count: 100, seed: 20_261_202, only: None })?;
        assert_eq!((figures.partial, figures.wrong), (0, 0), "{}", figures.render());
        assert_eq!(figures.scenarios.len(), 10, "{}", figures.render());
        for outcome in ["accepted", "refused (conflict)", "failed (write failed)"] {
            assert!(figures.outcomes.get(outcome).is_some_and(|n| *n > 0), "{outcome}: {}", figures.render());
        }
        assert_eq!(figures.outcomes.get("other error"), None, "{}", figures.render());
        Ok(())
    }
}
