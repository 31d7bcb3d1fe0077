//! The flags that set configuration (`--config`, `--no-config`, `--set`,
//! `--lsp`, and the specific ones such as `--enclosure`), gathered before the
//! root is known and read as the highest layer.

use std::path::PathBuf;

use anyhow::bail;

use super::define::Key;
use super::settings::LspSettings;

/// The flags that set configuration.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--config FILE`.
    pub file: Option<PathBuf>,
    /// `--no-config`.
    pub no_config: bool,
    /// `(key, value, the flag as given)`, in order; later ones win.
    pub sets: Vec<(String, String, String)>,
}

impl Flags {
    /// `--set section.key=value`.
    pub fn set(&mut self, assignment: &str) -> anyhow::Result<()> {
        let Some((key, value)) = assignment.split_once('=') else {
            bail!("--set takes section.key=value (e.g. eval.timeout_s=60), not {assignment:?}");
        };
        self.sets.push((key.trim().to_owned(), value.to_owned(), format!("--set {assignment}")));
        Ok(())
    }

    /// `--lsp LANG=SERVER`, the flag form of `lsp.servers.LANG`.
    pub fn lsp(&mut self, choice: &str) -> anyhow::Result<()> {
        let Some((language, server)) = choice.split_once('=') else {
            bail!("--lsp takes LANG=SERVER (e.g. python=pylsp), not {choice:?}");
        };
        // The language may be one the configuration defines: checked once the layers are merged.
        let language = language.trim();
        if language.is_empty() || language.contains('.') {
            bail!("--lsp takes LANG=SERVER (e.g. python=pylsp), not {choice:?}");
        }
        self.sets.push((format!("{}.{language}", LspSettings::servers), server.trim().to_owned(), "--lsp".to_owned()));
        Ok(())
    }

    /// A specific flag that sets one key (`--enclosure` sets `EnclosureSettings::mode`).
    pub fn flag(&mut self, key: Key, value: &str, flag: &str) {
        self.sets.push((key.to_string(), value.to_owned(), flag.to_owned()));
    }
}
