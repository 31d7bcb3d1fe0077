//! A roster of background workers that a run directs: spawn one with a brief,
//! send it more, wait for it, kill it, list them all.
//!
//! [`Roster`] keeps each [`Worker`]'s id, label, [`Tier`] (`fast` or `good`),
//! brief, [`Status`], run count, times and last result. [`Roster::spawn`]
//! returns at once; [`Roster::send`] appends to the brief and re-runs (stopping
//! a running worker first); [`Roster::wait`] returns when the worker settles or
//! its timeout passes, never later than a hard deadline; [`Roster::kill`] stops
//! the worker's whole process tree within a hard deadline.
//!
//! What a run *is* sits behind the [`Runner`] trait. [`CommandRunner`], the
//! default, starts a configured command per tier in its own process group with
//! the brief on stdin, takes stdout as the result and the exit status as done
//! or failed, and on stop signals the whole group (SIGTERM, then SIGKILL after
//! a grace), so grandchildren and workers that ignore SIGTERM do not outlive it.
//!
//! This crate knows nothing of tool calling, JSON schemas or approval tiers
//! (its [`Tier`] is the worker's grade, not an approval tier). It needs a tokio
//! runtime and is Unix-only.
#![warn(missing_docs)]

mod command;
mod error;
mod roster;
mod runner;
mod worker;

pub use crate::command::{CommandConfig, CommandRunner, CommandSpec};
pub use crate::error::{Error, Result};
pub use crate::roster::{Roster, RosterConfig, Waited};
pub use crate::runner::{Activity, BoxFuture, RunControl, RunOutcome, RunRequest, Runner, StopSignal};
pub use crate::worker::{Spawn, Status, Tier, Worker};
