//! The run's configuration: `agent-tools.toml` at the root (or `--config
//! FILE`; `--no-config` skips the root's), environment variables
//! `AGENT_TOOLS_<SECTION>_<KEY>`, and flags (`--set section.key=value`, `--lsp
//! LANG=SERVER`, `serve --vibe-fast-cmd`/`--vibe-good-cmd`), merged with the
//! precedence flag > environment > file > built-in default; every value keeps
//! where it came from, for `agent-tools config`.
//!
//! Every setting is declared once, typed, in `settings.rs`; the rest comes from
//! that declaration (`define.rs`). Each layer is read whole (`read.rs`: the
//! file walked with its spans, or a variable's or flag's text), then merged
//! over the layers below it. The lists (`[[lsp.server]]`, `[[debug.adapter]]`,
//! `[[approval.rule]]`) are replaced whole by a higher layer (an env var or
//! `--set` holding a TOML array of inline tables), not merged entry by entry.
//! A `[[lsp.server]]` entry may define a language of its own; once the layers
//! are merged, those languages are defined process-wide ([`Language::define`]),
//! so `lsp.servers.LANG` and routing by extension know them.
//!
//! This module only reads and checks; `wiring.rs` turns the typed settings
//! into the leaf crates' configurations.
//!
//! [`Language::define`]: lsp_supervisor::Language::define

mod adapter;
mod define;
#[cfg(test)]
mod docs;
mod env;
mod field;
mod flags;
mod read;
mod render;
mod rule;
mod server;
mod settings;
mod source;
mod value;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use lsp_supervisor::Language;
use serde::Serialize;
use toml::de::DeTable;

pub use adapter::CustomAdapter;
pub use define::{Key, Row};
pub use env::env_var;
pub use field::{Entry, Servers};
pub use flags::Flags;
pub use rule::RuleEntry;
pub use server::{CustomServer, NewLanguage, server_set, server_specs};
pub use settings::{
    ApprovalSettings, AskSettings, DebugSettings, EnclosureSettings, EvalSettings, LspSettings, SearchSettings,
    Settings, VibeSettings,
};
pub use source::{Source, Sourced};
pub use value::{Directory, EnclosureMode, Seconds};

use read::{Reader, nearest};
use settings::Layer;
use source::{Origin, line_column};

/// The file looked for at the run's root.
pub const FILE_NAME: &str = "agent-tools.toml";

/// Which file is in force, and why none is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// This file was read.
    Read(PathBuf),
    /// None at the root.
    Absent(PathBuf),
    /// `--no-config`.
    Skipped,
}

impl fmt::Display for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileState::Read(path) => write!(f, "{}", path.display()),
            FileState::Absent(path) => write!(f, "none ({} does not exist; built-in defaults)", path.display()),
            FileState::Skipped => f.write_str("none (--no-config)"),
        }
    }
}

/// The effective configuration: the file in force, and every setting.
#[derive(Debug, Clone)]
pub struct Config {
    /// The configuration file read, or why none was.
    pub file: FileState,
    /// Every setting's value in force, with its source.
    pub settings: Settings,
}

impl Config {
    /// Reads the file (`--config`, else `<root>/agent-tools.toml` unless
    /// `--no-config`), then the environment, then the flags, each over the
    /// ones before, and checks the lot.
    pub fn load(root: &Path, flags: &Flags) -> anyhow::Result<Config> {
        let mut settings = Settings::defaults();

        let path = match &flags.file {
            Some(path) => Some(path.clone()),
            None if flags.no_config => None,
            None => Some(root.join(FILE_NAME)),
        };
        let file = match path {
            None => FileState::Skipped,
            Some(path) if flags.file.is_none() && !path.exists() => FileState::Absent(path),
            Some(path) => {
                settings.merge(file_layer(&settings, &path)?);
                FileState::Read(path)
            }
        };

        // The environment's lists first: a language an `[[lsp.server]]` entry
        // defines has its `lsp.servers.LANG` too. They are read in the order
        // they always were, `[[lsp.server]]` first.
        let mut reader = Reader::new(&settings);
        let mut lists = reader.lists().to_vec();
        lists.sort_by_key(|key| key != LspSettings::server.as_str());
        let mut layer = Layer::default();
        env::read(&mut reader, &mut layer, &lists)?;
        settings.merge(layer);
        let defined: Vec<String> =
            settings.lsp.server.iter().filter_map(|s| s.language.as_ref()).map(|l| l.id.clone()).collect();
        for id in &defined {
            settings.lsp.servers.adopt(id);
        }
        let mut reader = Reader::new(&settings);
        let mut layer = Layer::default();
        let scalars = reader.scalars().to_vec();
        env::read(&mut reader, &mut layer, &scalars)?;
        settings.merge(layer);
        env::warn_near_misses(&reader);

        let mut layer = Layer::default();
        for (key, text, flag) in &flags.sets {
            reader.text(&mut layer, Origin::Flag { flag }, key, text)?;
        }
        settings.merge(layer);

        // An interpreter given as a relative path is the root's (`.venv/bin/python`);
        // a bare name stays a name.
        settings.resolve(root);
        server::define_languages(&mut settings.lsp.server)?;

        let config = Config { file, settings };
        config.check_servers()?;
        config.check_enclosure()?;
        Ok(config)
    }

    /// Every `lsp.servers.LANG` names a server (built-in or custom) for LANG.
    fn check_servers(&self) -> anyhow::Result<()> {
        let specs = server_specs(&self.settings.lsp.server);
        for (id, chosen) in self.settings.lsp.servers.iter() {
            let Some(server) = &chosen.value else { continue };
            let place = match &chosen.source {
                Source::Flag(flag) if flag == "--lsp" => "--lsp".to_owned(),
                other => other.place(),
            };
            let Some(language) = Language::from_id(id) else {
                let known: Vec<&str> = Language::all().iter().map(|l| l.id()).collect();
                let hint = nearest(id, &known).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
                bail!(
                    "{place}: {}.{id}: {hint}unknown language {id:?} (known: {}; a [[lsp.server]] entry defines a new \
                     one with `language` and `extensions`)",
                    LspSettings::servers,
                    known.join(", ")
                );
            };
            let serving: Vec<&str> = specs.iter().filter(|s| s.languages.contains(&language)).map(|s| s.id).collect();
            let named = server_set(server);
            for (index, one) in named.iter().enumerate() {
                if one.is_empty() {
                    bail!(
                        "{place}: {}.{id}: {server:?} has an empty server name; write the primary, then each helper \
                         after a `+` (`pyright+ruff`)",
                        LspSettings::servers
                    );
                }
                if named[..index].contains(one) {
                    bail!("{place}: {}.{id}: {server:?} names {one} twice", LspSettings::servers);
                }
                if !serving.contains(one) {
                    bail!("{place}: no server {one:?} for {language}; known: {}", serving.join(", "));
                }
            }
        }
        Ok(())
    }

    /// `enclosure.mode = "command"` needs a prefix.
    fn check_enclosure(&self) -> anyhow::Result<()> {
        let enclosure = &self.settings.enclosure;
        if *enclosure.mode == EnclosureMode::Command && enclosure.prefix.is_empty() {
            bail!(
                "{}: {}: \"command\" needs {}, the argv that enters the enclosure \
                 (e.g. [\"docker\", \"exec\", \"-i\", \"CONTAINER\"])",
                enclosure.mode.source.place(),
                EnclosureSettings::mode,
                EnclosureSettings::prefix,
            );
        }
        Ok(())
    }
}

/// The file's layer: its text, checked to be UTF-8 and TOML, walked against the settings.
fn file_layer(settings: &Settings, path: &Path) -> anyhow::Result<Layer> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow!("cannot read the configuration file {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let (line, column) = line_column(&String::from_utf8_lossy(valid), valid.len());
        let byte = e.as_bytes()[valid.len()];
        anyhow!("{}:{line}:{column}: not UTF-8 (the byte 0x{byte:02X}); TOML files are UTF-8", path.display())
    })?;
    let origin = Origin::File { path, text: &text };
    let table = DeTable::parse(&text).map_err(|e| {
        let place = e.span().map_or_else(|| path.display().to_string(), |s| origin.place(&s));
        anyhow!("{place}: not valid TOML: {}", e.message())
    })?;
    let mut layer = Layer::default();
    Reader::new(settings).table(&mut layer, origin, "", table.get_ref())?;
    Ok(layer)
}
