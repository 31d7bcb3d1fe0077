//! Fault injection for the file writer ([`crate::write_files`]), for trials
//! and tests only.
//!
//! Every file-system step the writer takes (writing a temporary file, linking
//! a backup, renaming, removing) first passes `point`. In a normal build
//! `point` is an empty inline function: the seam costs nothing and nothing can
//! reach it. With the `fault-injection` feature, a [`Fault`] set on the current
//! thread with [`inject`] makes one of those steps fail (or changes a file
//! right before it), and [`Injected::fired`] tells which step it hit. The
//! feature is off by default; `xtask` turns it on for `cargo xtask trials`
//! (through astmatch's and lsp-supervisor's features of the same name), and
//! this crate's own tests through a dev-dependency on itself.

#[cfg(not(feature = "fault-injection"))]
use std::path::Path;

/// A kind of file-system step of the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Writing content (a temporary file, or a copy of a file kept to restore it).
    Write,
    /// Keeping a file's old content as a hard link beside it, to restore it.
    Link,
    /// Renaming a file into place (or back into place).
    Rename,
    /// Removing a file.
    Remove,
}

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn point(_op: Op, _path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(feature = "fault-injection")]
pub use imp::*;

#[cfg(feature = "fault-injection")]
mod imp {
    use std::cell::RefCell;
    use std::path::{Path, PathBuf};

    use super::Op;

    /// `ENOSPC` (no space left on device), the same number on Linux and macOS.
    pub const ENOSPC: i32 = 28;
    /// `EACCES` (permission denied), the same number on Linux and macOS.
    pub const EACCES: i32 = 13;

    /// What to do to the writer's steps on this thread. Steps are counted from
    /// 1 in the order the writer takes them, every kind together.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Fault {
        /// The `at`-th step fails with the OS error `errno`, and only it.
        FailStep {
            /// The step's number, counted from 1 over every kind.
            at: usize,
            /// The raw OS error the step fails with, such as [`ENOSPC`] or [`EACCES`].
            errno: i32,
        },
        /// The `at`-th step of kind `op` fails with `errno`, and only it.
        FailOp {
            /// The kind of step counted.
            op: Op,
            /// The step's number among the steps of kind `op`, counted from 1.
            at: usize,
            /// The raw OS error the step fails with, such as [`ENOSPC`] or [`EACCES`].
            errno: i32,
        },
        /// From the `at`-th step on, every [`Op::Write`] fails with `ENOSPC`: the
        /// disk is full, and stays full while the writer restores.
        DiskFull {
            /// The step from which on every write fails, counted from 1 over every kind.
            at: usize,
        },
        /// Right before the `at`-th step, the file it is about (the file, not
        /// the temporary one beside it) is made read-only, as another process might.
        ReadOnly {
            /// The step's number, counted from 1 over every kind; the step itself
            /// then runs as usual.
            at: usize,
        },
    }

    /// The step a fault hit: its number, kind and the path it was about.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Fired {
        /// The step's number, counted from 1 over every kind.
        pub step: usize,
        /// The kind of step.
        pub op: Op,
        /// The file the step was about (its [`FileWrite::path`](crate::FileWrite::path),
        /// not the temporary file beside it).
        pub path: PathBuf,
    }

    #[derive(Default)]
    struct State {
        fault: Option<Fault>,
        steps: usize,
        ops: Vec<(Op, usize)>,
        fired: Option<Fired>,
    }

    thread_local! {
        static STATE: RefCell<State> = RefCell::new(State::default());
    }

    /// Sets `fault` for the writer's steps on this thread until the guard is dropped.
    pub fn inject(fault: Fault) -> Injected {
        STATE.with(|s| *s.borrow_mut() = State { fault: Some(fault), ..State::default() });
        Injected(())
    }

    /// Counts the writer's steps on this thread, failing none (to learn how many a write takes).
    pub fn count() -> Injected {
        STATE.with(|s| *s.borrow_mut() = State::default());
        Injected(())
    }

    /// While it lives, a fault (or a count) is set; dropped, none is.
    #[must_use = "the fault is withdrawn when this is dropped"]
    pub struct Injected(());

    impl Injected {
        /// The first step the fault hit, if it hit one.
        pub fn fired(&self) -> Option<Fired> {
            STATE.with(|s| s.borrow().fired.clone())
        }

        /// Steps taken since the fault was set.
        pub fn steps(&self) -> usize {
            STATE.with(|s| s.borrow().steps)
        }
    }

    impl Drop for Injected {
        fn drop(&mut self) {
            STATE.with(|s| *s.borrow_mut() = State::default());
        }
    }

    pub(crate) fn point(op: Op, path: &Path) -> std::io::Result<()> {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.steps += 1;
            let step = s.steps;
            let of_kind = match s.ops.iter_mut().find(|(o, _)| *o == op) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    s.ops.push((op, 1));
                    1
                }
            };
            let hit = |s: &mut State| {
                if s.fired.is_none() {
                    s.fired = Some(Fired { step, op, path: path.to_path_buf() });
                }
            };
            match s.fault.clone() {
                Some(Fault::FailStep { at, errno }) if at == step => {
                    hit(&mut s);
                    Err(std::io::Error::from_raw_os_error(errno))
                }
                Some(Fault::FailOp { op: kind, at, errno }) if kind == op && at == of_kind => {
                    hit(&mut s);
                    Err(std::io::Error::from_raw_os_error(errno))
                }
                Some(Fault::DiskFull { at }) if step >= at && op == Op::Write => {
                    hit(&mut s);
                    Err(std::io::Error::from_raw_os_error(ENOSPC))
                }
                Some(Fault::ReadOnly { at }) if at == step => {
                    hit(&mut s);
                    if let Ok(meta) = std::fs::metadata(path) {
                        let mut permissions = meta.permissions();
                        permissions.set_readonly(true);
                        let _ = std::fs::set_permissions(path, permissions);
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        })
    }
}
