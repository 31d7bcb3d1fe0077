//! Staged edits: preview, accept all or nothing, discard.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use astmatch::fault::{self, Fault, Op};
use astmatch::{EditStore, Error, Lang, SearchOptions};

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.py"), "foo(1)\nfoo(foo(2))\n").unwrap();
    fs::create_dir(dir.path().join("pkg")).unwrap();
    fs::write(dir.path().join("pkg/b.py"), "x = foo(3)\n").unwrap();
    fs::write(dir.path().join("pkg/c.py"), "nothing here\n").unwrap();
    dir
}

fn python() -> SearchOptions {
    SearchOptions { lang: Some(Lang::Python), ..SearchOptions::default() }
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

#[test]
fn stage_previews_and_writes_nothing() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    assert_eq!(staged.edit_id.as_deref(), Some("edit_1"));
    assert_eq!((staged.replacements, staged.matches, staged.files_searched), (4, 4, 3));
    let files: Vec<(String, usize)> =
        staged.files.iter().map(|f| (f.path.display().to_string(), f.replacements)).collect();
    assert_eq!(files, vec![("a.py".to_string(), 3), ("pkg/b.py".to_string(), 1)]);
    assert!(
        staged.files[0].diff.contains("-foo(1)\n-foo(foo(2))\n+bar(1)\n+bar(bar(2))\n"),
        "{}",
        staged.files[0].diff
    );
    assert!(staged.files[0].diff.starts_with("--- a/a.py\n+++ b/a.py\n"), "{}", staged.files[0].diff);
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
}

#[test]
fn accept_applies_exactly_the_preview() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    let accepted = store.accept(staged.edit_id.as_deref().unwrap()).unwrap();
    assert_eq!(accepted.replacements, 4);
    assert_eq!(accepted.files.len(), 2);
    assert_eq!(read(dir.path(), "a.py"), "bar(1)\nbar(bar(2))\n");
    assert_eq!(read(dir.path(), "pkg/b.py"), "x = bar(3)\n");
    // Nothing of the pattern is left behind.
    let again = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    assert_eq!((again.replacements, again.edit_id), (0, None));
}

#[test]
fn a_file_changed_after_staging_refuses_the_whole_change() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    fs::write(dir.path().join("pkg/b.py"), "x = foo(3)  # edited\n").unwrap();
    let err = store.accept(staged.edit_id.as_deref().unwrap()).unwrap_err();
    assert!(matches!(&err, Error::Conflict { files } if files == &[Path::new("pkg/b.py").to_path_buf()]), "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
    assert_eq!(read(dir.path(), "pkg/b.py"), "x = foo(3)  # edited\n");
}

#[test]
fn a_deleted_file_refuses_the_whole_change() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    fs::remove_file(dir.path().join("a.py")).unwrap();
    let err = store.accept(staged.edit_id.as_deref().unwrap()).unwrap_err();
    assert!(matches!(&err, Error::Conflict { files } if files == &[Path::new("a.py").to_path_buf()]), "{err}");
    assert_eq!(read(dir.path(), "pkg/b.py"), "x = foo(3)\n");
}

/// Found by `cargo xtask trials`: a staged file replaced by a symlink to the
/// same content was accepted, and the link replaced by a file.
#[cfg(unix)]
#[test]
fn a_file_replaced_by_a_symlink_refuses_the_whole_change() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("b.py");
    fs::write(&target, "x = foo(3)\n").unwrap();
    fs::remove_file(dir.path().join("pkg/b.py")).unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("pkg/b.py")).unwrap();
    let err = store.accept(staged.edit_id.as_deref().unwrap()).unwrap_err();
    assert!(matches!(&err, Error::Conflict { files } if files == &[Path::new("pkg/b.py").to_path_buf()]), "{err}");
    assert!(fs::symlink_metadata(dir.path().join("pkg/b.py")).unwrap().file_type().is_symlink());
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
    assert_eq!(fs::read_to_string(&target).unwrap(), "x = foo(3)\n");
}

#[test]
fn a_write_failure_midway_restores_the_files_already_written() {
    let dir = project();
    let store = EditStore::new();
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    let id = staged.edit_id.unwrap();
    // The second file's rename fails: the first, already renamed, is put back.
    let fault = fault::inject(Fault::FailOp { op: Op::Rename, at: 2, errno: fault::ENOSPC });
    let err = store.accept(&id).unwrap_err();
    drop(fault);
    assert!(matches!(&err, Error::WriteFailed(write_set::Error::WriteFailed { restored: 1, .. })), "{err}");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
    assert_eq!(read(dir.path(), "pkg/b.py"), "x = foo(3)\n");
    // Still staged: a later accept can succeed.
    store.accept(&id).unwrap();
    assert_eq!(read(dir.path(), "pkg/b.py"), "x = bar(3)\n");
}

#[test]
fn unknown_and_resolved_ids_are_errors() {
    let dir = project();
    let store = EditStore::new();
    assert!(matches!(store.accept("edit_9"), Err(Error::UnknownEdit { .. })));
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    let id = staged.edit_id.unwrap();
    store.discard(&id).unwrap();
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
    let err = store.accept(&id).unwrap_err();
    assert_eq!(err.to_string(), "unknown edit_id 'edit_1': it was never staged or is already resolved");
    assert!(matches!(store.discard(&id), Err(Error::UnknownEdit { .. })));
}

#[test]
fn unbound_metavariable_in_rewrite_is_an_error() {
    let dir = project();
    let err = EditStore::new().stage(dir.path(), dir.path(), "foo($X)", "bar($Y)", &python()).unwrap_err();
    assert_eq!(err.to_string(), "rewrite uses $Y, which the pattern does not bind (bound: X)");
}

#[test]
fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project();
    fs::set_permissions(dir.path().join("a.py"), fs::Permissions::from_mode(0o755)).unwrap();
    let store = EditStore::new();
    let staged =
        store.stage(dir.path(), &dir.path().join("a.py"), "foo($X)", "bar($X)", &SearchOptions::default()).unwrap();
    store.accept(staged.edit_id.as_deref().unwrap()).unwrap();
    let mode = fs::metadata(dir.path().join("a.py")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

/// A walk stopped through its control (its caller went away) stages
/// nothing and says so; an unstopped one counts the files it looked at.
#[test]
fn a_stopped_walk_stages_nothing_and_a_running_one_counts_its_files() {
    let dir = project();
    let store = EditStore::new();
    let control = std::sync::Arc::new(astmatch::WalkControl::new());
    let options = SearchOptions { control: Some(control.clone()), ..python() };
    let found = astmatch::search(dir.path(), dir.path(), "foo($X)", &options).unwrap();
    assert_eq!((found.total, control.files_visited()), (4, 3));

    control.stop();
    let stopped = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &options).unwrap_err();
    assert!(matches!(stopped, Error::Stopped), "{stopped}");
    assert!(matches!(astmatch::search(dir.path(), dir.path(), "foo($X)", &options), Err(Error::Stopped)));
    // Nothing was staged: the next staging gets the first id.
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "bar($X)", &python()).unwrap();
    assert_eq!(staged.edit_id.as_deref(), Some("edit_1"));
    assert_eq!(read(dir.path(), "a.py"), "foo(1)\nfoo(foo(2))\n");
}
