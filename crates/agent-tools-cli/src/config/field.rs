//! The shapes a field of a section can have, and what the definition
//! ([`settings!`](super::define)) asks of each: a value of a [`Value`] type
//! with its source; the server per language (`lsp.servers.LANG`, one key per
//! language); or a list of tables (`[[lsp.server]]`, [`Tables`]), replaced whole by a
//! higher layer.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::env::env_var;
use super::read::{Given, Raw, describe, refuse};
use super::source::{Origin, Source, Sourced};
use super::value::{Value, show};

/// A field of a section, as the definition declares it (`timeout_s: Seconds = …`).
pub trait Setting: Sized {
    /// What the settings hold: for a value, the value and its source.
    type Held: Clone + std::fmt::Debug;
    /// What one layer says about it; nothing by default.
    type Layer: Default;
    /// Whether it is a list of tables (the lists' keys come after the others').
    const LIST: bool = false;

    /// What the settings hold before any layer: the declared default, from the source `default`.
    fn hold(default: Self) -> Self::Held;

    /// Whether the field takes a key `below` its own (`Some("zig")` for
    /// `lsp.servers.zig`), or its own (`None`).
    fn takes(below: Option<&str>) -> bool {
        below.is_none()
    }

    /// Reads the value `given` for `key` into one layer.
    fn read(layer: &mut Self::Layer, key: &str, given: Given<'_>) -> anyhow::Result<()>;

    /// A higher layer over what is held.
    fn merge(held: &mut Self::Held, layer: Self::Layer);

    /// Makes paths given relative the root's.
    fn resolve(_held: &mut Self::Held, _root: &Path) {}

    /// The keys it answers to, for an unknown key's hint and the environment.
    fn keys(_held: &Self::Held, key: &str) -> Vec<String> {
        vec![key.to_owned()]
    }

    /// Its values, as `agent-tools config` lists them; the ones that go
    /// after every setting's (languages of a `[[lsp.server]]` entry's own) in `tail`.
    fn entries(held: &Self::Held, key: &str, doc: &str, out: &mut Vec<Entry>, tail: &mut Vec<Entry>);

    /// Its row of the table in docs/config.md: the key as shown, its type, its default.
    fn row(held: &Self::Held, key: &str) -> (String, &'static str, String);
}

/// One value of `agent-tools config`, with where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    /// The key, `section.name` (`eval.timeout_s`, `lsp.servers.rust`).
    pub key: String,
    /// The value in force, as `config --json` shows it.
    pub value: serde_json::Value,
    /// Where the value came from.
    pub source: Source,
    /// The environment variable that sets it.
    pub env: String,
    /// The setting's doc comment on one line.
    pub doc: String,
}

fn entry(key: &str, value: serde_json::Value, source: &Source, doc: &str) -> Entry {
    Entry { key: key.to_owned(), value, source: source.clone(), env: env_var(key), doc: doc.to_owned() }
}

impl<T: Value> Setting for T {
    type Held = Sourced<T>;
    type Layer = Option<Sourced<T>>;

    fn hold(default: T) -> Sourced<T> {
        Sourced { value: default, source: Source::Default }
    }

    fn read(layer: &mut Option<Sourced<T>>, key: &str, given: Given<'_>) -> anyhow::Result<()> {
        let value = match given.raw {
            Raw::Toml(value) => T::from_toml(value.get_ref()),
            Raw::Text(text) => T::from_text(text),
        };
        let value = value.ok_or_else(|| given.refuse(key, T::EXPECTED))?;
        *layer = Some(Sourced { value, source: given.source() });
        Ok(())
    }

    fn merge(held: &mut Sourced<T>, layer: Option<Sourced<T>>) {
        if let Some(value) = layer {
            *held = value;
        }
    }

    fn resolve(held: &mut Sourced<T>, root: &Path) {
        held.value.resolve(root);
    }

    fn entries(held: &Sourced<T>, key: &str, doc: &str, out: &mut Vec<Entry>, _: &mut Vec<Entry>) {
        out.push(entry(key, held.json(), &held.source, doc));
    }

    fn row(held: &Sourced<T>, key: &str) -> (String, &'static str, String) {
        (key.to_owned(), T::EXPECTED, show(&held.json()))
    }
}

/// The server chosen per language, `lsp.servers.LANG`: the built-in languages'
/// in their order, then the ones adopted since (a language a `[[lsp.server]]`
/// entry defines, or any key naming one, checked once the layers are merged).
#[derive(Debug, Clone, Default)]
pub struct Servers {
    chosen: Vec<(String, Sourced<Option<String>>)>,
    builtin: usize,
}

impl Servers {
    /// What a refusal says a server must be.
    const EXPECTED: &'static str = "a language server's id, then its helpers' after a + (a string)";
    /// The doc of a language adopted from the configuration.
    const ADOPTED: &'static str = "the server for this language (a language of a [[lsp.server]] entry's own)";

    /// One unset entry per language.
    pub fn per_language<'a>(languages: impl IntoIterator<Item = &'a str>) -> Servers {
        let chosen: Vec<_> =
            languages.into_iter().map(|id| (id.to_owned(), Sourced { value: None, source: Source::Default })).collect();
        Servers { builtin: chosen.len(), chosen }
    }

    /// Every language's entry: its id, and the server set for it.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Sourced<Option<String>>)> {
        self.chosen.iter().map(|(id, server)| (id.as_str(), server))
    }

    /// An unset entry for a language, unless it has one.
    pub fn adopt(&mut self, id: &str) {
        if !self.chosen.iter().any(|(known, _)| known == id) {
            self.chosen.push((id.to_owned(), Sourced { value: None, source: Source::Default }));
        }
    }

    fn set(&mut self, id: &str, server: Sourced<Option<String>>) {
        match self.chosen.iter_mut().find(|(known, _)| known == id) {
            Some((_, slot)) => *slot = server,
            None => self.chosen.push((id.to_owned(), server)),
        }
    }
}

impl Setting for Servers {
    type Held = Servers;
    type Layer = Servers;

    fn hold(default: Servers) -> Servers {
        default
    }

    fn takes(below: Option<&str>) -> bool {
        below.is_some_and(|language| !language.is_empty() && !language.contains('.'))
    }

    fn read(layer: &mut Servers, key: &str, given: Given<'_>) -> anyhow::Result<()> {
        let text = match given.raw {
            Raw::Toml(value) => match value.get_ref() {
                DeValue::String(s) => Some(s.as_ref()),
                _ => None,
            },
            Raw::Text(text) => Some(text),
        };
        let server = text.filter(|t| !t.trim().is_empty()).ok_or_else(|| given.refuse(key, Servers::EXPECTED))?;
        let language = key.rsplit('.').next().unwrap_or(key);
        layer.set(language, Sourced { value: Some(server.to_owned()), source: given.source() });
        Ok(())
    }

    fn merge(held: &mut Servers, layer: Servers) {
        for (id, server) in layer.chosen {
            held.set(&id, server);
        }
    }

    fn keys(held: &Servers, key: &str) -> Vec<String> {
        held.chosen.iter().map(|(id, _)| format!("{key}.{id}")).collect()
    }

    fn entries(held: &Servers, key: &str, doc: &str, out: &mut Vec<Entry>, tail: &mut Vec<Entry>) {
        for (index, (id, server)) in held.chosen.iter().enumerate() {
            let json = serde_json::json!(server.value);
            if index < held.builtin {
                out.push(entry(&format!("{key}.{id}"), json, &server.source, doc));
            } else {
                tail.push(entry(&format!("{key}.{id}"), json, &server.source, Servers::ADOPTED));
            }
        }
    }

    fn row(_: &Servers, key: &str) -> (String, &'static str, String) {
        (format!("{key}.LANG"), Servers::EXPECTED, show(&serde_json::Value::Null))
    }
}

/// An entry of a list of tables (`[[lsp.server]]`), read with the list's other
/// entries (one may name a language another defines).
pub trait ListEntry: Clone + std::fmt::Debug {
    fn read_all(origin: Origin<'_>, entries: &[(Range<usize>, &DeTable<'_>)]) -> anyhow::Result<Vec<Self>>;
}

/// A list of tables, `[[section.name]]`: what the settings hold is a `Vec` of its entries.
#[derive(Debug, Clone)]
pub struct Tables<E>(Vec<E>);

impl<E> Tables<E> {
    /// No entries.
    pub fn none() -> Tables<E> {
        Tables(Vec::new())
    }
}

impl<E: ListEntry> Setting for Tables<E> {
    type Held = Vec<E>;
    type Layer = Option<Vec<E>>;
    const LIST: bool = true;

    fn hold(default: Tables<E>) -> Vec<E> {
        default.0
    }

    fn read(layer: &mut Option<Vec<E>>, key: &str, given: Given<'_>) -> anyhow::Result<()> {
        let parsed;
        let value = match given.raw {
            Raw::Toml(value) => value,
            Raw::Text(text) => {
                parsed = DeValue::parse(text).map_err(|e| {
                    refuse(&given.place(), key, "a TOML array of inline tables", &format!("{text:?} ({})", e.message()))
                })?;
                &parsed
            }
        };
        *layer = Some(list(given.origin, key, value)?);
        Ok(())
    }

    fn merge(held: &mut Vec<E>, layer: Option<Vec<E>>) {
        if let Some(list) = layer {
            *held = list;
        }
    }

    fn entries(_: &Vec<E>, _: &str, _: &str, _: &mut Vec<Entry>, _: &mut Vec<Entry>) {}

    fn row(_: &Vec<E>, key: &str) -> (String, &'static str, String) {
        (format!("[[{key}]]"), "an array of tables", "none".to_owned())
    }
}

fn list<E: ListEntry>(origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<Vec<E>> {
    let DeValue::Array(items) = value.get_ref() else {
        return Err(refuse(
            &origin.place(&value.span()),
            key,
            &format!("an array of tables ([[{key}]])"),
            &describe(value.get_ref()),
        ));
    };
    let mut entries = Vec::new();
    for item in items.iter() {
        let DeValue::Table(table) = item.get_ref() else {
            return Err(refuse(&origin.place(&item.span()), key, "a table", &describe(item.get_ref())));
        };
        entries.push((item.span(), table));
    }
    E::read_all(origin, &entries)
}
