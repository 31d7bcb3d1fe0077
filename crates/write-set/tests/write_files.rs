//! `write_files`: a set of writes and removals, checked against what was read,
//! all or nothing, with the files already changed put back when a step fails.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use write_set::fault::{self, Fault, Op};
use write_set::{Error, FileWrite, write_files};

fn file(root: &Path, name: &str, before: Option<&str>, after: Option<&str>) -> FileWrite {
    FileWrite {
        path: root.join(name),
        shown: PathBuf::from(name),
        before: before.map(|s| s.as_bytes().to_vec()),
        after: after.map(|s| s.as_bytes().to_vec()),
    }
}

/// Every file under `root`, relative, with its content: the whole state of a tree.
fn tree(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                out.push((format!("{name}/"), String::new()));
                stack.push(path);
            } else {
                out.push((name, fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    fs::write(dir.path().join("b.txt"), "b\n").unwrap();
    dir
}

#[test]
fn writes_creates_and_removes() {
    let dir = project();
    let root = dir.path();
    write_files(&[
        file(root, "a.txt", Some("a\n"), Some("A\n")),
        file(root, "b.txt", Some("b\n"), None),
        file(root, "new/deep/c.txt", None, Some("c\n")),
    ])
    .unwrap();
    assert_eq!(
        tree(root),
        [
            ("a.txt".to_string(), "A\n".to_string()),
            ("new/".to_string(), String::new()),
            ("new/deep/".to_string(), String::new()),
            ("new/deep/c.txt".to_string(), "c\n".to_string()),
        ]
    );
}

#[cfg(unix)]
#[test]
fn permissions_are_kept_and_a_new_file_is_not_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project();
    let root = dir.path();
    fs::set_permissions(root.join("a.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    write_files(&[file(root, "a.txt", Some("a\n"), Some("A\n")), file(root, "c.txt", None, Some("c\n"))]).unwrap();
    assert_eq!(fs::metadata(root.join("a.txt")).unwrap().permissions().mode() & 0o777, 0o755);
    // Whatever the umask, a new file is readable by its owner's group or others
    // unless the umask says otherwise; it is never the temporary file's 0600 by accident.
    let plain = root.join("plain.txt");
    fs::write(&plain, "").unwrap();
    let expected = fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
    assert_eq!(fs::metadata(root.join("c.txt")).unwrap().permissions().mode() & 0o777, expected);
}

#[test]
fn a_file_that_changed_since_it_was_read_refuses_all() {
    let dir = project();
    let root = dir.path();
    let before = tree(root);
    let err = write_files(&[
        file(root, "a.txt", Some("a\n"), Some("A\n")),
        file(root, "b.txt", Some("stale\n"), Some("B\n")),
        // Said to be absent, but there.
        file(root, "a.txt", None, Some("x\n")),
    ])
    .unwrap_err();
    assert!(
        matches!(&err, Error::Conflict { files } if files == &[PathBuf::from("b.txt"), PathBuf::from("a.txt")]),
        "{err}"
    );
    assert_eq!(tree(root), before);
}

/// The set the failure tests write: a removal first (done last), a change, a
/// new file in a new directory and a new file.
fn mixed(root: &Path) -> Vec<FileWrite> {
    vec![
        file(root, "b.txt", Some("b\n"), None),
        file(root, "a.txt", Some("a\n"), Some("A\n")),
        file(root, "new/c.txt", None, Some("c\n")),
        file(root, "d.txt", None, Some("d\n")),
    ]
}

/// How many file-system steps writing [`mixed`] takes.
fn steps_of_mixed() -> usize {
    let dir = project();
    let counted = fault::count();
    write_files(&mixed(dir.path())).unwrap();
    counted.steps()
}

fn after_mixed() -> Vec<(String, String)> {
    [("a.txt", "A\n"), ("d.txt", "d\n"), ("new/", ""), ("new/c.txt", "c\n")]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .to_vec()
}

#[test]
fn a_failing_step_puts_back_every_file_already_changed() {
    // Fail each step in turn: the tree must come out exactly as it went in, or,
    // where the writer goes around the failure, entirely written.
    let steps = steps_of_mixed();
    // Per file: its new content written, its old one kept (a removal too), then a rename or a removal.
    assert_eq!(steps, 9);
    for at in 1..=steps {
        let dir = project();
        let root = dir.path();
        let before = tree(root);
        let injected = fault::inject(Fault::FailStep { at, errno: fault::ENOSPC });
        let result = write_files(&mixed(root));
        let hit = injected.fired().unwrap();
        drop(injected);
        if hit.op == Op::Link {
            // Keeping the old file as a link failed: it is kept as a copy instead.
            result.unwrap();
            assert_eq!(tree(root), after_mixed(), "failing step {at}");
            continue;
        }
        let err = result.unwrap_err();
        match &err {
            Error::WriteFailed { path, unrestored, source, .. } => {
                assert_eq!(root.join(path), hit.path, "failing step {at}");
                assert_eq!(source.raw_os_error(), Some(fault::ENOSPC));
                assert!(unrestored.is_empty());
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("No space left on device") && err.to_string().contains("nothing changed"));
        assert_eq!(tree(root), before, "failing step {at}");
    }
}

#[test]
fn a_failing_rename_puts_back_the_files_renamed_before_it() {
    // Writes come before removals: a.txt, new/c.txt, d.txt are renamed into place, then b.txt removed.
    for (at, expected_path) in [(1, "a.txt"), (2, "new/c.txt"), (3, "d.txt")] {
        let dir = project();
        let root = dir.path();
        let before = tree(root);
        let _fault = fault::inject(Fault::FailOp { op: Op::Rename, at, errno: fault::EACCES });
        let err = write_files(&mixed(root)).unwrap_err();
        match &err {
            Error::WriteFailed { path, restored, unrestored, .. } => {
                assert_eq!(path, Path::new(expected_path));
                assert_eq!(*restored, at - 1);
                assert!(unrestored.is_empty());
            }
            other => panic!("{other}"),
        }
        assert_eq!(tree(root), before, "failing rename {at}");
    }
}

/// Found by `cargo xtask trials` (in astmatch, before the writer was shared): a disk that filled up midway and stayed full
/// left files half-applied, since putting a file back wrote it again. Now the
/// old files are kept beside the new ones before any rename, and putting them
/// back writes nothing.
#[test]
fn a_disk_that_fills_up_midway_leaves_every_file_as_it_was() {
    let steps = steps_of_mixed();
    for at in 1..=steps {
        let dir = project();
        let root = dir.path();
        let before = tree(root);
        let injected = fault::inject(Fault::DiskFull { at });
        let result = write_files(&mixed(root));
        let hit = injected.fired();
        drop(injected);
        match (hit, result) {
            (Some(_), Err(Error::WriteFailed { unrestored, source, .. })) => {
                assert!(unrestored.is_empty(), "disk full from step {at}: {unrestored:?}");
                assert_eq!(source.raw_os_error(), Some(fault::ENOSPC));
                assert_eq!(tree(root), before, "disk full from step {at}");
            }
            // Past the last write nothing more is written: the set is renamed into place.
            (None, Ok(())) => assert_eq!(tree(root), after_mixed(), "disk full from step {at}"),
            (hit, result) => panic!("disk full from step {at}: {hit:?} {result:?}"),
        }
    }
}

/// Found by `cargo xtask trials` (in astmatch, before the writer was shared): a file replaced by a symlink to the same
/// content passed the check, and the write replaced the link.
#[cfg(unix)]
#[test]
fn a_file_replaced_by_a_symlink_refuses_all_even_with_the_same_content() {
    let dir = project();
    let root = dir.path();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("a.txt");
    fs::write(&target, "a\n").unwrap();
    fs::remove_file(root.join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&target, root.join("a.txt")).unwrap();
    let err =
        write_files(&[file(root, "a.txt", Some("a\n"), Some("A\n")), file(root, "b.txt", Some("b\n"), Some("B\n"))])
            .unwrap_err();
    assert!(matches!(&err, Error::Conflict { files } if files == &[PathBuf::from("a.txt")]), "{err}");
    assert!(fs::symlink_metadata(root.join("a.txt")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(&target).unwrap(), "a\n");
    assert_eq!(fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
}

#[test]
fn nothing_is_left_beside_the_files() {
    let dir = project();
    let root = dir.path();
    write_files(&mixed(root)).unwrap();
    // `tree` lists every entry, hidden ones too: no temporary or kept file remains.
    assert_eq!(tree(root), after_mixed());
}
