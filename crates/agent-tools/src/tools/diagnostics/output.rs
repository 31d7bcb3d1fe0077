//! What diagnostics on write adds to a write tool's value: each written
//! file's new diagnostics, and what each server says of the files the write
//! did not touch.

use schemars::JsonSchema;
use serde::Serialize;

use crate::tools::lsp::{DiagnosticOutput, HelperFailureOutput};

/// The fields diagnostics on write adds to a write tool's structured value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteDiagnosticsOutput {
    /// Each written file's new diagnostics.
    pub diagnostics: Vec<WrittenFileOutput>,
    /// What each server says of the files the write did not touch.
    pub other_files: Vec<OtherFilesOutput>,
}

/// Diagnostics on write: one written file's new diagnostics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WrittenFileOutput {
    /// The server answered.
    Checked {
        /// The file, relative to the working directory.
        path: String,
        /// The language's primary server.
        server: &'static str,
        /// The helpers that answered too; each diagnostic names its server.
        helpers: Vec<&'static str>,
        /// The helpers that did not answer (the status is then `pending`).
        helpers_failed: Vec<HelperFailureOutput>,
        /// `new`, `no new`, `unknown baseline` (what it had before could not be read) or `pending`.
        status: &'static str,
        /// Earlier diagnostics gone.
        fixed: usize,
        /// The diagnostics the write introduced.
        new: Vec<DiagnosticOutput>,
    },
    /// The write deleted it (`status`: `deleted`), no server is usable for
    /// its language (`unavailable`, with `why`), or asking failed (`failed`, with `error`).
    Unchecked {
        /// The file, relative to the working directory.
        path: String,
        /// `deleted`, `unavailable` or `failed`.
        status: &'static str,
        /// `unavailable`: the file's language.
        #[serde(skip_serializing_if = "Option::is_none")]
        language: Option<String>,
        /// `unavailable`: why no server is usable.
        #[serde(skip_serializing_if = "Option::is_none")]
        why: Option<String>,
        /// `failed`: what went wrong.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// `unavailable`: whether this run was told so before (the words say it once per language).
        #[serde(skip)]
        said_before: bool,
    },
}

/// Diagnostics on write: what one server says of the files the write did not touch.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OtherFilesOutput {
    /// The server's id.
    pub server: &'static str,
    /// How the server gives them: `published`, `importers` or `written_only`.
    pub way: OtherFilesWay,
    /// `new`, `no new`, `none` (nothing imports the file), `pending`, `not checked`, `failed`.
    pub status: &'static str,
    /// The written files this server serves, relative to the working directory.
    pub written: Vec<String>,
    /// New diagnostics in other files, in all.
    pub new_total: usize,
    /// Earlier diagnostics gone.
    pub fixed: usize,
    /// Other files looked at.
    pub looked_at: usize,
    /// `importers` only: the files that import the written one.
    pub importers: Option<usize>,
    /// `importers` only: how many of them were read.
    pub checked: Option<usize>,
    /// Importers the server's configuration leaves out, with why.
    pub outside_configuration: Vec<OutsideOutput>,
    /// Files whose diagnostics had not come when the wait ran out.
    pub pending: Vec<String>,
    /// Why nothing could be read (the server crashed), when so.
    pub error: Option<String>,
    /// The other files with new diagnostics.
    pub files: Vec<OtherFileOutput>,
}

/// How a server gives the diagnostics of files a write did not touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OtherFilesWay {
    /// It publishes every file a change affects (gopls; rust-analyzer through `cargo check`).
    Published,
    /// It reports open files only: the files importing the written one are opened and read.
    Importers,
    /// It checks each file on its own (pylsp, ruff): nothing is known of other files.
    WrittenOnly,
}

impl From<lsp_supervisor::OtherFiles> for OtherFilesWay {
    fn from(way: lsp_supervisor::OtherFiles) -> OtherFilesWay {
        match way {
            lsp_supervisor::OtherFiles::Published => OtherFilesWay::Published,
            lsp_supervisor::OtherFiles::Importers => OtherFilesWay::Importers,
            lsp_supervisor::OtherFiles::WrittenOnly => OtherFilesWay::WrittenOnly,
        }
    }
}

/// An importer the server's configuration leaves out.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutsideOutput {
    /// The importer, relative to the working directory.
    pub path: String,
    /// Why the configuration leaves it out.
    pub why: String,
}

/// One other file with new diagnostics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OtherFileOutput {
    /// The file, relative to the working directory.
    pub path: String,
    /// How many new diagnostics it has.
    pub new_count: usize,
    /// How many of its earlier diagnostics are gone.
    pub fixed: usize,
    /// Whether what it had before the write was known (else some may be older).
    pub baseline_known: bool,
    /// At most 100 listed.
    pub new: Vec<DiagnosticOutput>,
}
