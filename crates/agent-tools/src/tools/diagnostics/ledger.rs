//! The run's ledger of diagnostics: what each file had, so a write's result names only what
//! the write introduced, and what another file had right before it.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_supervisor::{Diagnostic, OtherFiles, OtherFilesReport};

/// (server, severity, code, message); the file is the map key. The server is in
/// it so that one server's report (other files are the primary's alone) is
/// compared with what that server reported before, not with its helpers'.
pub(super) type Key = (String, String, String, String);

pub(super) type Ledger = HashMap<PathBuf, Option<HashMap<Key, usize>>>;

pub(super) fn key(d: &Diagnostic) -> Key {
    (
        d.server.unwrap_or_default().to_string(),
        d.severity.as_str().to_string(),
        d.code.clone().unwrap_or_default(),
        d.message.clone(),
    )
}

pub(super) fn multiset(diagnostics: &[Diagnostic]) -> HashMap<Key, usize> {
    let mut out = HashMap::new();
    for d in diagnostics {
        *out.entry(key(d)).or_default() += 1;
    }
    out
}

/// The diagnostics of `now` beyond what `known` counts, in order.
pub(super) fn new_in(now: &[Diagnostic], known: &HashMap<Key, usize>) -> Vec<Diagnostic> {
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let mut new = Vec::new();
    for d in now {
        let k = key(d);
        let n = seen.entry(k.clone()).or_default();
        *n += 1;
        if *n > known.get(&k).copied().unwrap_or(0) {
            new.push(d.clone());
        }
    }
    new
}

/// The entries of `known` that `server` reported.
pub(super) fn only_of(known: HashMap<Key, usize>, server: &str) -> HashMap<Key, usize> {
    known.into_iter().filter(|(k, _)| k.0 == server).collect()
}

/// How many of `known` are no longer in `current`.
pub(super) fn gone(known: &HashMap<Key, usize>, current: &HashMap<Key, usize>) -> usize {
    known.iter().map(|(k, n)| n.saturating_sub(current.get(k).copied().unwrap_or(0))).sum()
}

/// What a write did to one other file.
#[derive(Debug, Clone, PartialEq)]
pub struct OtherFileReport {
    pub path: PathBuf,
    /// Diagnostics the write introduced.
    pub new: Vec<Diagnostic>,
    /// How many it had before and no longer has.
    pub fixed: usize,
    /// False when what it had before is unknown: every diagnostic it has is listed.
    pub baseline_known: bool,
}

/// What a write did to the other files one server tells of.
#[derive(Debug, Clone)]
pub struct OtherFilesOutcome {
    pub server: &'static str,
    pub way: OtherFiles,
    pub written: Vec<PathBuf>,
    /// The other files with new diagnostics, those with none left out.
    pub files: Vec<OtherFileReport>,
    /// How many other files were looked at (published anew, or importers read).
    pub looked_at: usize,
    pub fixed: usize,
    pub pending: Vec<PathBuf>,
    pub importers: usize,
    pub checked: usize,
    /// Importers read that the server's configuration leaves out, with why.
    pub outside: Vec<(PathBuf, String)>,
    pub complete: bool,
    pub error: Option<String>,
}

/// Folds one server's report on other files into the ledger: each file's
/// baseline is what it had right before the write (when that is known; else
/// the ledger's entry, else unknown); a complete report leaves each file's
/// entry as it is now.
pub(super) fn fold_other(ledger: &mut Ledger, report: OtherFilesReport) -> OtherFilesOutcome {
    let mut files = Vec::new();
    let mut fixed = 0;
    let looked_at = report.files.len();
    for file in report.files {
        let current = multiset(&file.now);
        let entry = ledger.get(&file.path).cloned().flatten();
        let baseline = match &file.before {
            Some(before) => Some(multiset(before)),
            None => entry.clone().map(|known| only_of(known, report.server)),
        };
        let known = baseline.clone().unwrap_or_default();
        let new = new_in(&file.now, &known);
        let file_fixed = gone(&known, &current);
        fixed += file_fixed;
        if report.complete {
            // The helpers' findings in the file stay as the ledger had them.
            let mut kept = current;
            for (k, n) in entry.unwrap_or_default() {
                if k.0 != report.server {
                    *kept.entry(k).or_default() += n;
                }
            }
            ledger.insert(file.path.clone(), Some(kept));
        }
        if !new.is_empty() {
            files.push(OtherFileReport { path: file.path, new, fixed: file_fixed, baseline_known: baseline.is_some() });
        }
    }
    OtherFilesOutcome {
        server: report.server,
        way: report.way,
        written: report.written,
        files,
        looked_at,
        fixed,
        pending: report.pending,
        importers: report.importers,
        checked: report.checked,
        outside: report.outside,
        complete: report.complete,
        error: report.error,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use lsp_supervisor::{Location, OtherFile, Severity};

    use super::super::words::{other_value, other_words};
    use super::*;
    use crate::workspace::Workspace;

    fn d(path: &str, line: u32, code: &str, message: &str) -> Diagnostic {
        let location =
            Location { path: PathBuf::from(path), line, column: 1, end_line: line, end_column: 2, text: String::new() };
        Diagnostic {
            server: Some("srv"),
            location,
            severity: Severity::Error,
            code: Some(code.into()),
            source: None,
            message: message.into(),
        }
    }

    fn report(way: OtherFiles, files: Vec<OtherFile>) -> OtherFilesReport {
        OtherFilesReport {
            server: "srv",
            way,
            written: vec![PathBuf::from("/r/lib.py")],
            files,
            pending: Vec::new(),
            importers: 2,
            checked: 2,
            outside: Vec::new(),
            complete: true,
            error: None,
        }
    }

    fn file(path: &str, before: Option<Vec<Diagnostic>>, now: Vec<Diagnostic>) -> OtherFile {
        OtherFile { path: PathBuf::from(path), before, now }
    }

    /// `(text, status)` of one report folded into `ledger`.
    fn check(ledger: &mut Ledger, r: OtherFilesReport) -> (String, String) {
        let ws = Workspace::new("/").unwrap_or_else(|e| panic!("{e}"));
        let outcome = fold_other(ledger, r);
        let mut budget = 3;
        let value = other_value(&ws, &outcome);
        (other_words(&value, &mut budget), value.status.to_string())
    }

    #[test]
    fn what_another_file_had_right_before_the_write_is_never_new() {
        let mut ledger = Ledger::new();
        let old = d("/r/a.py", 3, "E1", "old");
        let broken = d("/r/a.py", 9, "E2", "missing argument");
        // The old error moved; one identical to it is new, as is the broken call.
        let r = report(
            OtherFiles::Importers,
            vec![
                file(
                    "/r/a.py",
                    Some(vec![old.clone()]),
                    vec![old.clone(), d("/r/a.py", 4, "E1", "old"), broken.clone()],
                ),
                file("/r/b.py", Some(vec![old.clone()]), vec![]),
            ],
        );
        let (text, status) = check(&mut ledger, r);
        assert_eq!(status, "new");
        assert_eq!(
            text,
            "new diagnostics in 1 other file (srv; 2 files import r/lib.py): r/a.py (2); 1 earlier diagnostic gone:\n\
             r/a.py:4:1 error[E1]: old\nr/a.py:9:1 error[E2]: missing argument"
        );
        // The ledger now holds what each file has.
        assert_eq!(ledger[Path::new("/r/b.py")], Some(HashMap::new()));
        // Unknown before: the ledger's entry is the baseline.
        let r = report(OtherFiles::Published, vec![file("/r/a.py", None, vec![broken.clone(), old.clone()])]);
        let (text, status) = check(&mut ledger, r);
        assert_eq!(
            (text.as_str(), status.as_str()),
            ("no new diagnostics in other files (srv); 1 earlier diagnostic gone", "no new")
        );
        // Neither known: all listed, and said to be possibly older.
        let r = report(OtherFiles::Published, vec![file("/r/c.py", None, vec![broken])]);
        let (text, _) = check(&mut ledger, r);
        assert!(text.contains("(what r/c.py had before this write could not be read, so some may be older)"), "{text}");
    }

    #[test]
    fn listing_is_capped_with_the_count_in_all_and_pending_is_never_clean() {
        let mut ledger = Ledger::new();
        let now: Vec<Diagnostic> = (1..=5).map(|i| d("/r/a.go", i, "WrongArgCount", "not enough arguments")).collect();
        let (text, _) = check(&mut ledger, report(OtherFiles::Published, vec![file("/r/a.go", Some(vec![]), now)]));
        assert!(text.starts_with("new diagnostics in 1 other file (srv): r/a.go (5):\n"), "{text}");
        assert!(
            text.ends_with("r/a.go:3:1 error[WrongArgCount]: not enough arguments\n… 2 more in other files (5 in all)"),
            "{text}"
        );
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.complete, r.pending) = (false, vec![PathBuf::from("/r/b.py")]);
        let (text, status) = check(&mut ledger, r);
        assert_eq!(status, "pending");
        assert_eq!(text, "diagnostics of other files pending: srv had not answered for r/b.py when the wait ran out");
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.importers, r.checked) = (34, 20);
        assert_eq!(
            check(&mut ledger, r).0,
            "no new diagnostics in other files (srv; 34 files import r/lib.py, the nearest 20 read, 14 not)"
        );
        // An importer the server's configuration leaves out is named: what it says of it may not see the write.
        let mut r = report(OtherFiles::Importers, vec![]);
        r.outside = vec![(PathBuf::from("/r/tests/test_lib.py"), "pyright's configuration includes only src".into())];
        assert_eq!(
            check(&mut ledger, r).0,
            "no new diagnostics in other files (srv; 2 files import r/lib.py; not in its project: r/tests/test_lib.py \
             (pyright's configuration includes only src), so what srv says of it may not see this write)"
        );
        let mut r = report(OtherFiles::Importers, vec![]);
        (r.importers, r.checked) = (0, 0);
        assert_eq!(check(&mut ledger, r), ("no other file imports r/lib.py (srv)".to_string(), "none".to_string()));
        let r = report(OtherFiles::WrittenOnly, vec![]);
        assert_eq!(check(&mut ledger, r).0, "other files not checked: srv reports only the written file");
    }
}
