//! The facade: the server-bound built-in tools of an AI coding-agent run, as
//! JSON schemas to show a model and a dispatcher for the model's calls.
//!
//! A runtime wires the resources its run has into a [`Registry`] (for example
//! [`RegistryBuilder::with_astmatch`] for `ast_grep`, `ast_edit` and `resolve`);
//! a tool exists only when its resource is wired. A [`Surface`] is a view of the
//! registry capped at a [`Tier`]: it lists only the tools at or below the cap
//! and refuses calls above it. Tools are written against the typed [`Tool`]
//! trait, whose `Input` type's doc comment is the tool's description.
//!
//! This crate holds no domain logic: matching, rewriting, language servers,
//! debuggers and kernels live in the leaf crates, which know nothing of tool
//! calling. Approval past the cap is a pure policy ([`decide`]) plus a gate
//! wired with [`RegistryBuilder::with_approval`]; it never prints.
#![warn(missing_docs)]

pub mod approval;
mod error;
mod gate;
mod host;
mod progress;
mod refusal;
mod registry;
mod result;
mod schema;
mod scope;
mod surface;
mod tier;
mod tool;
pub mod tools;
mod workspace;

pub use crate::approval::{Action, ApprovalPolicy, CallFacts, Decision, Rule, Scope, SessionGrants, decide};
pub use crate::error::{Error, Result};
pub use crate::gate::{ALLOW_ONCE, ALLOW_SESSION, ApprovalWiring, DENY, permission_card};
#[cfg(feature = "lsp")]
pub use crate::host::RunLsp;
pub use crate::host::{Host, HostConfig, Run, RunSpec};
pub use crate::progress::{Pacing, Progress, ProgressSink, WAITING_FOR_USER};
pub use crate::refusal::Refusal;
pub use crate::registry::{Registry, RegistryBuilder};
pub use crate::result::{Image, ToolResult};
pub use crate::schema::{input_schema, output_schema};
pub use crate::scope::{CapturedScope, TaskScope};
pub use crate::surface::Surface;
pub use crate::tier::{ParseTierError, Tier};
pub use crate::tool::{
    CallContext, CallPreview, CallerFuture, DynTool, Reply, Text, Tool, ToolCaller, ToolFuture, ToolSpec, Words,
    to_result,
};
#[cfg(feature = "ask")]
pub use crate::tools::ask_user::QuestionWiring;
#[cfg(feature = "search")]
pub use crate::tools::astmatch::AstmatchWiring;
#[cfg(feature = "debug")]
pub use crate::tools::debug::DebugWiring;
#[cfg(feature = "lsp")]
pub use crate::tools::diagnostics::{DiagnosticsOnWrite, WithDiagnostics, WriteReport};
#[cfg(feature = "eval")]
pub use crate::tools::kernel::KernelWiring;
#[cfg(feature = "lsp")]
pub use crate::tools::lsp::{LspCaps, LspWiring};
pub use crate::workspace::{PathError, Workspace, resolve_path, resolve_path_for_write};

// The leaf crates behind the toolsets, for the types their wirings take (a
// `Supervisor`, a `Roster`, a `QuestionPort`), so a host needs no other dependency.
#[cfg(feature = "search")]
pub use astmatch;
#[cfg(feature = "debug")]
pub use dap_session;
#[cfg(feature = "eval")]
pub use kernel;
#[cfg(feature = "lsp")]
pub use lsp_supervisor;
pub use question_port;
#[cfg(feature = "vibe")]
pub use vibe_roster;

/// The Rust examples of `README.md`, run as doctests (`cargo test -p agent-tools --doc`),
/// so the quick start a newcomer copies compiles and does what it says.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of `docs/tools.md`, run as doctests like the README's.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/tools.md")]
pub struct ToolsDocDoctests;
