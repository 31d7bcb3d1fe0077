//! Randomized all-or-nothing trials of `resolve`'s write (here) and of
//! `lsp_rename`'s (`trials_rename.rs`, the same writer); `trial_parts.rs` runs
//! them as `cargo xtask trials`.
//!
//! Each trial generates a tree of Rust or Python files with random calls to
//! `old_call(..)` (and decoys that must not change), stages the rewrite
//! `old_call($A)` → `new_call($A)` with [`astmatch::EditStore::stage`], then
//! picks one of: no fault; a fault in the writer through `astmatch::fault`
//! (a step failing with ENOSPC or EACCES, a rename failing, the disk staying
//! full from some step on, a file made read-only midway); or a change to a
//! random file between staging and accept (its content changed, the file
//! deleted, or replaced by a symlink to the same or other content). Then it
//! accepts and checks, by content hashes of every file, that the staged files
//! are all old or all new, that the result says which (accepted: all new;
//! refused or failed: all old, the error naming the file and the cause), that
//! no other file changed and that the writer left nothing behind. An edit whose
//! write failed is accepted once more without the fault, and must then apply.
//!
//! Everything random comes from one seeded `fastrand::Rng`, so a seed replays a run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use astmatch::fault::{self, EACCES, ENOSPC, Fault, Op};
use astmatch::{EditStore, Error, Lang, SearchOptions};

/// How a run is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub count: usize,
    pub seed: u64,
    /// One part only; every part when `None`.
    pub only: Option<Part>,
}

/// Which part of the trials: `resolve`, `lsp_rename` on generated edits, `lsp_rename` through the fixture server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Resolve,
    Rename,
    RenameServer,
}

impl Options {
    pub fn parse(args: &[&str]) -> Result<Options> {
        let mut options = Options { count: 1000, seed: fastrand::u64(..), only: None };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let value = |name: &str, v: Option<&&str>| -> Result<u64> {
                v.with_context(|| format!("{name} needs a number"))?
                    .parse()
                    .with_context(|| format!("{name} needs a number"))
            };
            match *arg {
                "--count" => options.count = usize::try_from(value("--count", args.next())?)?,
                "--seed" => options.seed = value("--seed", args.next())?,
                "--only" => {
                    options.only = match args.next() {
                        Some(&"resolve") => Some(Part::Resolve),
                        Some(&"rename") => Some(Part::Rename),
                        Some(&"rename-server") => Some(Part::RenameServer),
                        _ => bail!("--only needs resolve, rename or rename-server"),
                    }
                }
                other => bail!(
                    "unknown option `{other}` (expected --count N, --seed S, --only resolve|rename|rename-server)"
                ),
            }
        }
        Ok(options)
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Figures {
    pub trials: usize,
    /// Trials per scenario.
    pub scenarios: BTreeMap<&'static str, usize>,
    /// Trials per outcome: `accepted`, `refused (conflict)`, `failed (write failed)`, `other error`.
    pub outcomes: BTreeMap<&'static str, usize>,
    /// Faults set that the write never reached (fewer steps than the one chosen).
    pub faults_not_hit: usize,
    /// Faults the write went around and still applied everything: a read-only
    /// file (replaced by a rename all the same), a failed link (a copy kept instead).
    pub faults_absorbed: usize,
    /// Trials that left some staged files new and others old (or a file neither).
    pub partial: usize,
    /// Trials whose result did not say what happened, or that changed another
    /// file or left a file behind.
    pub wrong: usize,
    /// The first few problems, each with its trial number.
    pub problems: Vec<String>,
}

impl Figures {
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "scenarios:");
        for (name, n) in &self.scenarios {
            let _ = writeln!(out, "  {name:<34} {n:>6}");
        }
        let _ = writeln!(out, "outcomes:");
        for (name, n) in &self.outcomes {
            let _ = writeln!(out, "  {name:<34} {n:>6}");
        }
        let _ = writeln!(out, "faults set but not reached: {}", self.faults_not_hit);
        let _ = writeln!(out, "faults gone around (all applied): {}", self.faults_absorbed);
        let _ = writeln!(out, "partial applications: {}", self.partial);
        let _ = writeln!(out, "wrong results: {}", self.wrong);
        for problem in &self.problems {
            let _ = writeln!(out, "  {problem}");
        }
        out
    }
}

/// Runs `options.count` trials of `resolve` from `options.seed`.
pub fn run_trials(options: &Options) -> Result<Figures> {
    run_with(options, one)
}

/// Runs `options.count` trials of `one` from `options.seed`.
pub(crate) fn run_with(options: &Options, one: fn(&mut fastrand::Rng) -> Result<Trial>) -> Result<Figures> {
    let mut rng = fastrand::Rng::with_seed(options.seed);
    let mut figures = Figures::default();
    for n in 1..=options.count {
        let trial = one(&mut rng).with_context(|| format!("trial {n} (seed {})", options.seed))?;
        figures.trials += 1;
        *figures.scenarios.entry(trial.scenario).or_default() += 1;
        *figures.outcomes.entry(trial.outcome).or_default() += 1;
        figures.faults_not_hit += usize::from(trial.fault_not_hit);
        figures.faults_absorbed += usize::from(trial.absorbed);
        figures.partial += usize::from(trial.partial);
        figures.wrong += usize::from(!trial.problems.is_empty() && !trial.partial);
        for problem in trial.problems {
            if figures.problems.len() < 20 {
                figures.problems.push(format!("trial {n} ({}): {problem}", trial.scenario));
            }
        }
    }
    Ok(figures)
}

/// A trial's verdict.
pub(crate) struct Trial {
    pub(crate) scenario: &'static str,
    pub(crate) outcome: &'static str,
    pub(crate) fault_not_hit: bool,
    pub(crate) absorbed: bool,
    pub(crate) partial: bool,
    pub(crate) problems: Vec<String>,
}

/// What happens between staging and accept, or during accept.
#[derive(Debug, Clone)]
pub(crate) enum Scenario {
    NoFault,
    Fault(Fault),
    Concurrent { file: PathBuf, change: Change },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Content,
    Deleted,
    SymlinkSame,
    SymlinkOther,
}

impl Scenario {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Scenario::NoFault => "no fault",
            Scenario::Fault(Fault::FailStep { errno: ENOSPC, .. }) => "fault: a step fails (ENOSPC)",
            Scenario::Fault(Fault::FailStep { .. }) => "fault: a step fails (EACCES)",
            Scenario::Fault(Fault::FailOp { .. }) => "fault: a rename fails (EACCES)",
            Scenario::Fault(Fault::DiskFull { .. }) => "fault: disk full from a step on",
            Scenario::Fault(Fault::ReadOnly { .. }) => "fault: a file made read-only",
            Scenario::Concurrent { change: Change::Content, .. } => "concurrent: content changed",
            Scenario::Concurrent { change: Change::Deleted, .. } => "concurrent: file deleted",
            Scenario::Concurrent { change: Change::SymlinkSame, .. } => "concurrent: symlink, same content",
            Scenario::Concurrent { change: Change::SymlinkOther, .. } => "concurrent: symlink, other content",
        }
    }
}

/// A generated source file: its path (relative), its text, and its text once rewritten.
struct Source {
    path: PathBuf,
    old: String,
    new: String,
}

fn one(rng: &mut fastrand::Rng) -> Result<Trial> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("tree");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside)?;
    let lang = if rng.bool() { Lang::Rust } else { Lang::Python };
    let sources = generate(rng, lang);
    for source in &sources {
        let path = root.join(&source.path);
        std::fs::create_dir_all(path.parent().unwrap_or(&root))?;
        std::fs::write(&path, &source.old)?;
    }
    std::fs::write(root.join("NOTES.txt"), "old_call(1) in a file of no language\n")?;
    let store = EditStore::new();
    let options = SearchOptions { lang: Some(lang), ..SearchOptions::default() };
    let staged = store.stage(&root, &root, "old_call($A)", "new_call($A)", &options)?;
    let expected: BTreeSet<PathBuf> = sources.iter().filter(|s| s.old != s.new).map(|s| s.path.clone()).collect();
    let listed: BTreeSet<PathBuf> = staged.files.iter().map(|f| f.path.clone()).collect();
    let mut problems = Vec::new();
    if listed != expected {
        problems.push(format!("staged {listed:?}, expected {expected:?}"));
    }
    let Some(id) = staged.edit_id else { bail!("nothing staged (the generator always makes a match)") };

    let paths: Vec<PathBuf> = sources.iter().map(|s| s.path.clone()).collect();
    let scenario = pick(rng, &paths, expected.len());
    // What each file is to hold if the edit is refused (`old`) or applied (`new`); `None`: absent.
    let mut old: BTreeMap<PathBuf, Option<u64>> =
        sources.iter().map(|s| (s.path.clone(), Some(hash(s.old.as_bytes())))).collect();
    let mut new: BTreeMap<PathBuf, Option<u64>> =
        sources.iter().map(|s| (s.path.clone(), Some(hash(s.new.as_bytes())))).collect();
    let mut symlink = None;
    if let Scenario::Concurrent { file, change } = &scenario {
        let path = root.join(file);
        let source = sources.iter().find(|s| &s.path == file).context("a generated file")?;
        let now = match change {
            Change::Content => {
                // The same length, one byte different: a check by size alone would miss it.
                let mut bytes = source.old.clone().into_bytes();
                let at = rng.usize(..bytes.len());
                bytes[at] = if bytes[at] == b'#' { b'@' } else { b'#' };
                std::fs::write(&path, &bytes)?;
                Some(hash(&bytes))
            }
            Change::Deleted => {
                std::fs::remove_file(&path)?;
                None
            }
            Change::SymlinkSame | Change::SymlinkOther => {
                let target = outside.join("target");
                let content =
                    if *change == Change::SymlinkSame { source.old.clone() } else { format!("{}\n", source.old) };
                std::fs::write(&target, &content)?;
                std::fs::remove_file(&path)?;
                std::os::unix::fs::symlink(&target, &path)?;
                symlink = Some((file.clone(), target, hash(content.as_bytes())));
                Some(hash(content.as_bytes()))
            }
        };
        old.insert(file.clone(), now);
        if !expected.contains(file) {
            new.insert(file.clone(), now);
        }
    }

    let guard = match &scenario {
        Scenario::Fault(f) => Some(fault::inject(f.clone())),
        _ => None,
    };
    let result = store.accept(&id);
    let fired = guard.as_ref().and_then(fault::Injected::fired);
    drop(guard);

    let state = read_state(&root, &sources)?;
    let (olds, news, neither) = expected.iter().fold((0, 0, 0), |(o, n, x), f| {
        let now = state.get(f).copied().flatten();
        if now == old[f] {
            (o + 1, n, x)
        } else if now == new[f] {
            (o, n + 1, x)
        } else {
            (o, n, x + 1)
        }
    });
    let all_new = news == expected.len();
    let all_old = olds == expected.len();
    let partial = !all_new && !all_old;
    if partial {
        problems.push(format!("{olds} staged file(s) old, {news} new, {neither} neither, of {}", expected.len()));
    }
    // Files not staged must be as they were left (a concurrent change kept).
    for source in sources.iter().filter(|s| !expected.contains(&s.path)) {
        if state.get(&source.path).copied().flatten() != old[&source.path] {
            problems.push(format!("{} was not staged and changed", source.path.display()));
        }
    }
    if let Some((file, target, content)) = &symlink {
        let path = root.join(file);
        let still = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        let target_kept = std::fs::read(target).is_ok_and(|b| hash(&b) == *content);
        if expected.contains(file) && !still {
            problems.push(format!("the symlink {} was replaced", file.display()));
        }
        if !target_kept {
            problems.push("the symlink's target outside the tree was changed".to_string());
        }
    }
    let strays = strays(&root, &sources)?;
    if !strays.is_empty() {
        problems.push(format!("left behind: {strays:?}"));
    }

    let outcome = match &result {
        Ok(_) => "accepted",
        Err(Error::Conflict { .. }) => "refused (conflict)",
        Err(Error::WriteFailed(_)) => "failed (write failed)",
        Err(_) => "other error",
    };
    let (mut fault_not_hit, mut absorbed) = (false, false);
    match (&scenario, &result) {
        (Scenario::NoFault, Ok(accepted)) => check_accepted(&mut problems, accepted, &expected, all_new),
        (Scenario::Fault(f), Ok(accepted)) => {
            check_accepted(&mut problems, accepted, &expected, all_new);
            match &fired {
                None => fault_not_hit = true,
                // A read-only file is still replaced by a rename (and root may write anything);
                // a failed link is gone around by keeping a copy.
                Some(hit) if matches!(f, Fault::ReadOnly { .. }) || hit.op == Op::Link => absorbed = true,
                Some(hit) => problems.push(format!(
                    "accepted, though step {} ({:?} on {}) failed",
                    hit.step,
                    hit.op,
                    hit.path.display()
                )),
            }
        }
        (
            Scenario::Fault(f),
            Err(Error::WriteFailed(write_set::Error::WriteFailed { path, unrestored, source, .. })),
        ) => {
            let errno = match f {
                Fault::FailStep { errno, .. } | Fault::FailOp { errno, .. } => *errno,
                _ => ENOSPC,
            };
            match &fired {
                Some(hit) if hit.path == root.join(path) => {}
                Some(hit) => problems.push(format!(
                    "the error names {}, the fault hit {:?} on {}",
                    path.display(),
                    hit.op,
                    hit.path.display()
                )),
                None => problems.push("a write failed that no fault hit".to_string()),
            }
            if source.raw_os_error() != Some(errno) {
                problems.push(format!("the error's cause is `{source}`, not os error {errno}"));
            }
            if !unrestored.is_empty() {
                problems.push(format!("the error says {unrestored:?} could not be put back"));
            }
            if !all_old {
                problems.push("a write failed, and the files are not all old".to_string());
            }
            // Still staged; without the fault it applies.
            match store.accept(&id) {
                Ok(_) => {
                    let state = read_state(&root, &sources)?;
                    if expected.iter().any(|f| state.get(f).copied().flatten() != new[f]) {
                        problems.push("accepted again, and the files are not all new".to_string());
                    }
                }
                Err(e) => problems.push(format!("accepted again without the fault: {e}")),
            }
        }
        (Scenario::Concurrent { file, .. }, Ok(accepted)) if !expected.contains(file) => {
            check_accepted(&mut problems, accepted, &expected, all_new);
        }
        (Scenario::Concurrent { file, .. }, Err(Error::Conflict { files })) if expected.contains(file) => {
            if files != std::slice::from_ref(file) {
                problems.push(format!("the conflict names {files:?}, not {}", file.display()));
            }
            if !all_old {
                problems.push("refused, and the files are not all old".to_string());
            }
            if store.pending_ids().contains(&id) {
                problems.push("refused, and the edit is still staged".to_string());
            }
        }
        (_, Ok(_)) => problems.push("accepted, and it should not have been".to_string()),
        (_, Err(e)) => problems.push(format!("unexpected error: {e}")),
    }
    Ok(Trial { scenario: scenario.name(), outcome, fault_not_hit, absorbed, partial, problems })
}

fn check_accepted(
    problems: &mut Vec<String>,
    accepted: &astmatch::Accepted,
    expected: &BTreeSet<PathBuf>,
    all_new: bool,
) {
    let files: BTreeSet<PathBuf> = accepted.files.iter().cloned().collect();
    if &files != expected {
        problems.push(format!("accepted names {files:?}, expected {expected:?}"));
    }
    if !all_new {
        problems.push("accepted, and the files are not all new".to_string());
    }
}

pub(crate) fn pick(rng: &mut fastrand::Rng, files: &[PathBuf], staged: usize) -> Scenario {
    // A fault at a step the write may take: it takes a few steps per staged file.
    let at = rng.usize(1..=3 * staged);
    match rng.usize(..9) {
        0 | 1 => Scenario::NoFault,
        2 => Scenario::Fault(Fault::FailStep { at, errno: ENOSPC }),
        3 => Scenario::Fault(Fault::FailStep { at, errno: EACCES }),
        4 => Scenario::Fault(Fault::FailOp { op: Op::Rename, at: rng.usize(1..=staged), errno: EACCES }),
        5 => Scenario::Fault(Fault::DiskFull { at }),
        6 => Scenario::Fault(Fault::ReadOnly { at }),
        _ => {
            let file = files[rng.usize(..files.len())].clone();
            let change = [Change::Content, Change::Deleted, Change::SymlinkSame, Change::SymlinkOther][rng.usize(..4)];
            Scenario::Concurrent { file, change }
        }
    }
}

/// Random source files: 2 to 12, in a few directories, each with 0 to 4 calls
/// to rewrite among decoys that must stay; at least one file has a call.
fn generate(rng: &mut fastrand::Rng, lang: Lang) -> Vec<Source> {
    let dirs = ["", "src/", "src/deep/", "lib/b/"];
    let count = rng.usize(2..=12);
    let mut out = Vec::new();
    for i in 0..count {
        let calls = if i == 0 { rng.usize(1..=4) } else { rng.usize(0..=4) };
        let mut old = String::new();
        for j in 0..calls + rng.usize(1..=3) {
            let arg = match rng.usize(..3) {
                0 => rng.u32(..1000).to_string(),
                1 => format!("v{}", rng.u32(..50)),
                _ => "\"text\"".to_string(),
            };
            let call = if j < calls { "old_call" } else { "old_caller" };
            match lang {
                Lang::Python => {
                    let _ =
                        write!(old, "def f{j}():\n    # mentions old_call\n    x = {call}({arg})\n    return x\n\n");
                }
                _ => {
                    let _ = write!(old, "fn f{j}() -> u32 {{\n    // mentions old_call\n    {call}({arg})\n}}\n\n");
                }
            }
        }
        let ext = if lang == Lang::Python { "py" } else { "rs" };
        let path = PathBuf::from(format!("{}m{i}.{ext}", dirs[rng.usize(..dirs.len())]));
        let new = old.replace("old_call(", "new_call(");
        out.push(Source { path, old, new });
    }
    out
}

pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// The hash of each generated file's content now, through a symlink too (`None`: absent).
fn read_state(root: &Path, sources: &[Source]) -> Result<BTreeMap<PathBuf, Option<u64>>> {
    let mut state = BTreeMap::new();
    for source in sources {
        let content = match std::fs::read(root.join(&source.path)) {
            Ok(bytes) => Some(hash(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", source.path.display())),
        };
        state.insert(source.path.clone(), content);
    }
    Ok(state)
}

/// Files under `root` that are neither generated nor the notes file: what a writer left behind.
fn strays(root: &Path, sources: &[Source]) -> Result<Vec<PathBuf>> {
    let known: BTreeSet<PathBuf> = sources.iter().map(|s| s.path.clone()).chain([PathBuf::from("NOTES.txt")]).collect();
    unknown_files(root, |relative| known.contains(relative))
}

/// Files under `root` (relative to it) that `known` does not know: what a writer left behind.
pub(crate) fn unknown_files(root: &Path, known: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(root)?.to_path_buf();
                if !known(&relative) {
                    out.push(relative);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hundred trials from a fixed seed: no partial application, no wrong
    /// result, and every kind of scenario and outcome among them.
    #[test]
    fn a_hundred_trials_apply_all_or_nothing() -> Result<()> {
        let figures = run_trials(&Options { count: 100, seed: 20_261_202, only: None })?;
        assert_eq!((figures.partial, figures.wrong), (0, 0), "{}", figures.render());
        assert_eq!(figures.trials, 100);
        assert_eq!(figures.scenarios.len(), 10, "{}", figures.render());
        for outcome in ["accepted", "refused (conflict)", "failed (write failed)"] {
            assert!(figures.outcomes.get(outcome).is_some_and(|n| *n > 0), "{outcome}: {}", figures.render());
        }
        assert_eq!(figures.outcomes.get("other error"), None, "{}", figures.render());
        Ok(())
    }

    /// The same seed gives the same run.
    #[test]
    fn a_seed_replays_a_run() -> Result<()> {
        let first = run_trials(&Options { count: 20, seed: 7, only: None })?;
        let again = run_trials(&Options { count: 20, seed: 7, only: None })?;
        assert_eq!(first.render(), again.render());
        Ok(())
    }
}
