//! `[[lsp.server]]`: a new language server, or (named like a built-in one) a
//! change to it; an entry may define a language of its own (`language`,
//! `extensions`, `language_id`), defined process-wide once the layers are
//! merged ([`Language::define`]). [`server_specs`] applies the entries to the
//! built-in table.

use std::ops::Range;
use std::path::Path;

use lsp_supervisor::{Language, ServerSpec};
use serde::Serialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::field::ListEntry;
use super::read::{describe, json, refuse, string, strings, unknown};
use super::source::{Origin, Source};

/// A `[[lsp.server]]` entry: a new server, or (named like a built-in one) a
/// change to it; fields left out keep the built-in's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CustomServer {
    /// The server's id: a built-in one's (`clangd`) to change it, else a new
    /// one, which `lsp.servers.LANG` and `--lsp LANG=SERVER` name.
    pub name: String,
    /// The program to run, in place of the built-in's; required for a new server.
    pub command: Option<String>,
    /// The arguments that start it on stdio, in place of the built-in's.
    pub args: Option<Vec<String>>,
    /// From `languages` and the languages of `extensions` (with `language`, the new one).
    #[serde(serialize_with = "language_ids")]
    pub languages: Vec<Language>,
    /// A language of its own the entry defines (`language`, `extensions`, `language_id`).
    pub language: Option<NewLanguage>,
    /// Languages other entries of the list define, defined (and moved to
    /// `languages`) once the layers are merged.
    #[serde(skip)]
    pending: Vec<String>,
    /// Files or directories whose presence makes a directory a root for the
    /// server, in place of the built-in's; at least one for a new server.
    pub root_markers: Option<Vec<String>>,
    /// The arguments of the probe that shows the binary runs (`--version`), in
    /// place of the built-in's.
    pub probe_args: Option<Vec<String>>,
    /// The LSP `initializationOptions` (a TOML table, as JSON), in place of the built-in's.
    pub initialization_options: Option<serde_json::Value>,
    /// What `workspace/configuration` answers (a TOML table, as JSON), in place
    /// of the built-in's.
    pub settings: Option<serde_json::Value>,
    /// Variables set for the server's process, added to the built-in's.
    pub env: Vec<(String, String)>,
    /// Whether this server runs in the run's enclosure (over `enclosure.language_servers`).
    pub enclosed: Option<bool>,
    /// The built-in languages it helps by default: beside each one's primary
    /// server, its diagnostics and code actions are added to the primary's, as
    /// ruff's are to pyright's. A new server that helps goes after the
    /// built-in ones, so it is a language's primary only where none of theirs is usable.
    #[serde(serialize_with = "language_ids_of", skip_serializing_if = "Option::is_none")]
    pub helps: Option<Vec<Language>>,
    /// Where the entry was read: its line and column in the file, or the
    /// variable or flag that gave the list.
    pub source: Source,
}

/// A language a `[[lsp.server]]` entry defines: its id, its files' extensions
/// (without the dot) and the LSP `languageId` its files are opened with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewLanguage {
    /// The language's name (`zig`), as `lsp.servers.LANG` and `--lsp LANG=SERVER` name it.
    pub id: String,
    /// Its files' extensions, without the dot (`zig`, `zon`).
    pub extensions: Vec<String>,
    /// The LSP `languageId` its files are opened with; the language's name by default.
    pub language_id: String,
}

fn language_ids<S: serde::Serializer>(languages: &[Language], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(languages.iter().map(|l| l.id()))
}

fn language_ids_of<S: serde::Serializer>(languages: &Option<Vec<Language>>, s: S) -> Result<S::Ok, S::Error> {
    language_ids(languages.as_deref().unwrap_or_default(), s)
}

impl ListEntry for CustomServer {
    fn read_all(origin: Origin<'_>, entries: &[(Range<usize>, &DeTable<'_>)]) -> anyhow::Result<Vec<Self>> {
        let declared: Vec<NewLanguage> = entries.iter().filter_map(|(_, t)| declared_languages(t)).collect();
        entries.iter().map(|(span, t)| server(origin, span, t, &declared)).collect()
    }
}

/// Defines the languages the entries define, process-wide (routing is by a
/// file's extension everywhere), then gives the entries that serve them their languages.
pub fn define_languages(servers: &mut [CustomServer]) -> anyhow::Result<()> {
    for server in servers.iter() {
        if let Some(new) = &server.language {
            Language::define(&new.id, &new.extensions, Some(&new.language_id))
                .map_err(|e| anyhow::anyhow!("{}: lsp.server.language: {e}", server.source))?;
        }
    }
    for server in servers {
        for id in std::mem::take(&mut server.pending) {
            if let Some(language) = Language::from_id(&id)
                && !server.languages.contains(&language)
            {
                server.languages.push(language);
            }
        }
    }
    Ok(())
}

/// The servers an `lsp.servers.LANG` value names: the primary, then its helpers
/// (`pyright+ruff`: navigation from pyright, diagnostics and code actions from both).
pub fn server_set(value: &str) -> Vec<&str> {
    value.split('+').map(str::trim).collect()
}

/// The language servers known: the built-in table with the `[[lsp.server]]`
/// entries applied. An entry named like a built-in server changes the fields
/// it gives; a new one goes first, so it is preferred for its languages over
/// the built-in ones (and over the new ones after it).
pub fn server_specs(servers: &[CustomServer]) -> Vec<ServerSpec> {
    // `ServerSpec` holds ids and markers as `&'static str` (its table is
    // static); a custom entry's live as long as the process, read once at start.
    fn leak(s: &str) -> &'static str {
        Box::leak(s.to_owned().into_boxed_str())
    }
    let mut specs = ServerSpec::builtin();
    // New servers go first, in the file's order among themselves; new helpers go last.
    let mut new = 0;
    for custom in servers {
        let index = match specs.iter().position(|s| s.id == custom.name) {
            Some(index) => index,
            None if custom.helps.as_ref().is_some_and(|h| !h.is_empty()) => {
                specs.push(ServerSpec::custom(leak(&custom.name), &custom.languages, "", &[], &[]));
                specs.len() - 1
            }
            None => {
                let spec = ServerSpec::custom(leak(&custom.name), &custom.languages, "", &[], &[]);
                specs.insert(new, spec);
                new += 1;
                new - 1
            }
        };
        let spec = &mut specs[index];
        if let Some(command) = &custom.command {
            spec.programs = vec![command.clone()];
        }
        if let Some(args) = &custom.args {
            spec.args = args.clone();
        }
        if !custom.languages.is_empty() {
            spec.languages = custom.languages.clone();
        }
        if let Some(markers) = &custom.root_markers {
            spec.root_markers = markers.iter().map(|m| leak(m)).collect();
        }
        if let Some(probe) = &custom.probe_args {
            spec.probe_args = probe.clone();
        }
        if let Some(helps) = &custom.helps {
            spec.helps = helps.clone();
        }
        if let Some(options) = &custom.initialization_options {
            spec.initialization_options = options.clone();
        }
        if let Some(settings) = &custom.settings {
            spec.settings = settings.clone();
        }
        spec.env.extend(custom.env.iter().cloned());
    }
    specs
}
const SERVER_KEYS: &[&str] = &[
    "name",
    "command",
    "args",
    "languages",
    "extensions",
    "language",
    "language_id",
    "root_markers",
    "probe_args",
    "initialization_options",
    "settings",
    "env",
    "enclosed",
    "helps",
];

/// The built-in language whose files have this extension, if one has.
fn builtin_language_of(ext: &str) -> Option<Language> {
    Language::from_path(Path::new(&format!("x.{ext}"))).filter(|l| !l.is_custom())
}

fn builtin_ids() -> String {
    Language::ALL.iter().map(|l| l.id()).collect::<Vec<_>>().join(", ")
}

/// The language a `[[lsp.server]]` entry defines (`language` with its
/// `extensions`), looked at before the entries are read, so one entry can
/// serve a language another defines. What does not check is refused when its
/// entry is read.
fn declared_languages(table: &DeTable<'_>) -> Option<NewLanguage> {
    let text = |key: &str| match table.get(key).map(Spanned::get_ref) {
        Some(DeValue::String(s)) => Some(s.to_string()),
        _ => None,
    };
    let id = text("language")?;
    let extensions = match table.get("extensions").map(Spanned::get_ref) {
        Some(DeValue::Array(items)) => items
            .iter()
            .filter_map(|i| match i.get_ref() {
                DeValue::String(s) => Some(s.trim_start_matches('.').to_owned()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let language_id = text("language_id").unwrap_or_else(|| id.clone());
    Some(NewLanguage { id, extensions, language_id })
}

fn server(
    origin: Origin<'_>,
    span: &Range<usize>,
    table: &DeTable<'_>,
    declared: &[NewLanguage],
) -> anyhow::Result<CustomServer> {
    let mut out = CustomServer { source: origin.source(span), ..CustomServer::default() };
    // `extensions` are the new language's with `language`, else known languages': read after the loop.
    let mut extensions: Option<(Vec<String>, String)> = None;
    let mut new_language: Option<(String, String)> = None;
    let mut language_id: Option<(String, String)> = None;
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("lsp.server.{word}");
        let place = origin.place(&value.span());
        match word {
            "name" => out.name = string(origin, &key, value)?,
            "command" => out.command = Some(string(origin, &key, value)?),
            "args" => out.args = Some(strings(origin, &key, value)?),
            "root_markers" => out.root_markers = Some(strings(origin, &key, value)?),
            "probe_args" => out.probe_args = Some(strings(origin, &key, value)?),
            "helps" => {
                let mut helps = Vec::new();
                for id in strings(origin, &key, value)? {
                    match Language::from_id(&id).filter(|l| !l.is_custom()) {
                        Some(language) if !helps.contains(&language) => helps.push(language),
                        Some(_) => {}
                        None => {
                            let expected = format!("built-in language ids among {}", builtin_ids());
                            return Err(refuse(&place, &key, &expected, &format!("{id:?}")));
                        }
                    }
                }
                out.helps = Some(helps);
            }
            "enclosed" => match value.get_ref() {
                DeValue::Boolean(b) => out.enclosed = Some(*b),
                other => return Err(refuse(&place, &key, "true or false", &describe(other))),
            },
            "languages" => {
                for id in strings(origin, &key, value)? {
                    if let Some(language) = Language::from_id(&id).filter(|l| !l.is_custom()) {
                        if !out.languages.contains(&language) {
                            out.languages.push(language);
                        }
                    } else if declared.iter().any(|d| d.id == id) {
                        if !out.pending.contains(&id) {
                            out.pending.push(id);
                        }
                    } else {
                        let known: Vec<&str> = Language::ALL
                            .iter()
                            .map(|l| l.id())
                            .chain(declared.iter().map(|d| d.id.as_str()))
                            .collect();
                        let expected = format!(
                            "language ids among {} (a language of the server's own is defined with `language` and \
                             `extensions`)",
                            known.join(", ")
                        );
                        return Err(refuse(&place, &key, &expected, &format!("{id:?}")));
                    }
                }
            }
            "extensions" => {
                let list: Vec<String> =
                    strings(origin, &key, value)?.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
                extensions = Some((list, place));
            }
            "language" => new_language = Some((string(origin, &key, value)?, place)),
            "language_id" => language_id = Some((string(origin, &key, value)?, place)),
            "initialization_options" | "settings" => {
                let DeValue::Table(_) = value.get_ref() else {
                    return Err(refuse(&place, &key, "a table", &describe(value.get_ref())));
                };
                let v = Some(json(value.get_ref()));
                if word == "settings" { out.settings = v } else { out.initialization_options = v }
            }
            "env" => {
                let DeValue::Table(vars) = value.get_ref() else {
                    return Err(refuse(&place, &key, "a table of strings", &describe(value.get_ref())));
                };
                for (var, v) in vars.iter() {
                    out.env.push((var.get_ref().to_string(), string(origin, &format!("{key}.{}", var.get_ref()), v)?));
                }
            }
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, SERVER_KEYS)),
        }
    }
    let place = origin.place(span);
    match (new_language, extensions) {
        (Some((id, id_place)), extensions) => {
            if Language::from_id(&id).is_some_and(|l| !l.is_custom()) {
                let expected = format!(
                    "the name of a language of its own (not a built-in one: {}; those go in `languages`)",
                    builtin_ids()
                );
                return Err(refuse(&id_place, "lsp.server.language", &expected, &format!("{id:?}")));
            }
            let Some((extensions, ext_place)) = extensions.filter(|(e, _)| !e.is_empty()) else {
                return Err(refuse(&place, "lsp.server.extensions", &format!("the file extensions of {id}"), "none"));
            };
            for ext in &extensions {
                if let Some(owner) = builtin_language_of(ext) {
                    let expected = format!("extensions no built-in language has (.{ext} files are {owner}'s)");
                    return Err(refuse(&ext_place, "lsp.server.extensions", &expected, &format!("{ext:?}")));
                }
            }
            if let Some(other) = declared.iter().find(|d| d.id == id && d.extensions != extensions) {
                let expected = format!(
                    "the extensions another entry defines {id} with ({})",
                    other.extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(", ")
                );
                return Err(refuse(&ext_place, "lsp.server.extensions", &expected, &format!("{extensions:?}")));
            }
            let language_id = language_id.map_or_else(|| id.clone(), |(l, _)| l);
            if !out.pending.contains(&id) {
                out.pending.push(id.clone());
            }
            out.language = Some(NewLanguage { id, extensions, language_id });
        }
        (None, extensions) => {
            if let Some((_, lid_place)) = language_id {
                return Err(refuse(
                    &lid_place,
                    "lsp.server.language_id",
                    "`language_id` only beside `language` (a language the entry defines)",
                    "no `language`",
                ));
            }
            for (ext, ext_place) in extensions.iter().flat_map(|(list, place)| list.iter().map(move |e| (e, place))) {
                if let Some(language) = builtin_language_of(ext) {
                    if !out.languages.contains(&language) {
                        out.languages.push(language);
                    }
                } else if let Some(d) = declared.iter().find(|d| d.extensions.contains(ext)) {
                    if !out.pending.contains(&d.id) {
                        out.pending.push(d.id.clone());
                    }
                } else {
                    let known: Vec<&str> =
                        Language::ALL.iter().map(|l| l.id()).chain(declared.iter().map(|d| d.id.as_str())).collect();
                    let expected = format!(
                        "extensions of a known language ({}), or with `language`, of a language of the server's own",
                        known.join(", ")
                    );
                    return Err(refuse(ext_place, "lsp.server.extensions", &expected, &format!("{ext:?}")));
                }
            }
        }
    }
    if out.name.is_empty() {
        return Err(refuse(&place, "lsp.server.name", "a name for the server", "none"));
    }
    let builtin = lsp_supervisor::ServerSpec::builtin().into_iter().any(|s| s.id == out.name);
    if !builtin {
        if out.command.is_none() {
            return Err(refuse(&place, "lsp.server.command", "the program to run (a new server)", "none"));
        }
        if out.languages.is_empty() && out.pending.is_empty() {
            return Err(refuse(&place, "lsp.server.languages", "at least one language or extension", "none"));
        }
        if out.root_markers.as_ref().is_none_or(|m| m.is_empty()) {
            return Err(refuse(&place, "lsp.server.root_markers", "at least one root marker file", "none"));
        }
    }
    Ok(out)
}
