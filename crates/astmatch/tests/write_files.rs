//! `write_files`: a set of writes and removals, checked against what was read,
//! all or nothing, with the files already changed put back when a step fails.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use astmatch::{Error, FileWrite, write_files, write_files_with};

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

#[test]
fn a_failing_step_puts_back_every_file_already_changed() {
    // Fail at each step in turn: the tree must come out exactly as it went in.
    for fail_at in 1..=4 {
        let dir = project();
        let root = dir.path();
        let before = tree(root);
        let mut calls = 0;
        let mut step = |path: &Path, content: Option<&[u8]>| {
            calls += 1;
            if calls == fail_at {
                return Err(std::io::Error::other("disk full"));
            }
            match content {
                Some(content) => {
                    fs::create_dir_all(path.parent().unwrap())?;
                    fs::write(path, content)
                }
                None => fs::remove_file(path),
            }
        };
        let err = write_files_with(
            &[
                file(root, "b.txt", Some("b\n"), None),
                file(root, "a.txt", Some("a\n"), Some("A\n")),
                file(root, "new/c.txt", None, Some("c\n")),
                file(root, "d.txt", None, Some("d\n")),
            ],
            &mut step,
        )
        .unwrap_err();
        // Writes come before removals: a.txt, new/c.txt, d.txt, then b.txt.
        let expected_path = ["a.txt", "new/c.txt", "d.txt", "b.txt"][fail_at - 1];
        match &err {
            Error::WriteFailed { path, restored, unrestored, .. } => {
                assert_eq!(path, Path::new(expected_path));
                assert_eq!(*restored, fail_at - 1);
                assert!(unrestored.is_empty());
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("disk full") && err.to_string().contains("nothing changed"), "{err}");
        assert_eq!(tree(root), before, "failing at step {fail_at}");
    }
}
