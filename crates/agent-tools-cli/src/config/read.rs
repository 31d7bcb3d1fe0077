//! Reading one layer: the file's tables walked by key with their spans (the
//! `toml` crate's spanned tree, which keeps each value's text as written, so a
//! refusal quotes `1e10` or `0x10` as given), or a variable's or flag's key and
//! text; each key handed to its field ([`Layer::read`]). A refusal names the
//! place, the key, what was expected and what was found; an unknown key gets
//! the nearest known one.

use std::ops::Range;

use anyhow::anyhow;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::settings::{Layer, Settings};
use super::source::{Origin, Source};

/// A value as one layer gives it, and where from.
pub struct Given<'a> {
    pub origin: Origin<'a>,
    /// Where its key is in the file (a value's source is its key's line); nothing for a text.
    key_span: Range<usize>,
    pub raw: Raw<'a>,
}

/// A value of the file, or the text of a variable or flag.
#[derive(Clone, Copy)]
pub enum Raw<'a> {
    Toml(&'a Spanned<DeValue<'a>>),
    Text(&'a str),
}

impl Given<'_> {
    /// Where a refusal of this value points.
    pub fn place(&self) -> String {
        match self.raw {
            Raw::Toml(value) => self.origin.place(&value.span()),
            Raw::Text(_) => self.origin.place(&(0..0)),
        }
    }

    /// What was found, as a refusal says it.
    pub fn found(&self) -> String {
        match self.raw {
            Raw::Toml(value) => describe(value.get_ref()),
            Raw::Text(text) => format!("{text:?}"),
        }
    }

    pub fn source(&self) -> Source {
        self.origin.source(&self.key_span)
    }

    /// `PLACE: KEY: expected EXPECTED, found WHAT WAS FOUND`.
    pub fn refuse(&self, key: &str, expected: &str) -> anyhow::Error {
        refuse(&self.place(), key, expected, &self.found())
    }
}

pub fn refuse(place: &str, key: &str, expected: &str, found: &str) -> anyhow::Error {
    anyhow!("{place}: {key}: expected {expected}, found {found}")
}

/// A TOML value as a refusal names it: `the string "soon"`, `the integer 0x10`, `an array`.
pub fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("the string {:?}", s.as_ref()),
        DeValue::Integer(i) => format!("the integer {}", i.as_str()),
        DeValue::Float(x) => format!("the float {}", x.as_str()),
        DeValue::Boolean(b) => format!("the boolean {b}"),
        DeValue::Datetime(d) => format!("the datetime {d}"),
        DeValue::Array(_) => "an array".to_owned(),
        DeValue::Table(_) => "a table".to_owned(),
    }
}

pub fn integer(value: &DeValue<'_>) -> Option<i64> {
    let DeValue::Integer(i) = value else { return None };
    i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok()
}

pub fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Float(x) => x.as_str().replace('_', "").parse().ok(),
        _ => integer(value).map(|i| i as f64),
    }
}

/// The items of an array of strings, or `None`.
pub fn string_items(value: &DeValue<'_>) -> Option<Vec<String>> {
    let DeValue::Array(items) = value else { return None };
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

/// An entry's array of strings (`args = ["--stdio"]`).
pub fn strings(origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<Vec<String>> {
    let bad = || refuse(&origin.place(&value.span()), key, "an array of strings", &describe(value.get_ref()));
    let DeValue::Array(items) = value.get_ref() else { return Err(bad()) };
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(refuse(&origin.place(&item.span()), key, "a string", &describe(other))),
        })
        .collect()
}

/// An entry's non-empty string (`name = "zls"`).
pub fn string(origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<String> {
    match value.get_ref() {
        DeValue::String(s) if !s.trim().is_empty() => Ok(s.to_string()),
        other => Err(refuse(&origin.place(&value.span()), key, "a non-empty string", &describe(other))),
    }
}

/// A TOML value as JSON (what goes to a server or an adapter as JSON).
pub fn json(value: &DeValue<'_>) -> serde_json::Value {
    match value {
        DeValue::String(s) => serde_json::Value::String(s.to_string()),
        DeValue::Integer(_) => integer(value).map_or(serde_json::Value::Null, serde_json::Value::from),
        DeValue::Float(_) => number(value).map_or(serde_json::Value::Null, serde_json::Value::from),
        DeValue::Boolean(b) => serde_json::Value::Bool(*b),
        DeValue::Datetime(d) => serde_json::Value::String(d.to_string()),
        DeValue::Array(items) => items.iter().map(|i| json(i.get_ref())).collect(),
        DeValue::Table(table) => table
            .iter()
            .map(|(k, v)| (k.get_ref().to_string(), json(v.get_ref())))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// The nearest of `known` to `word`, when near enough to be a likely typo.
pub fn nearest<'a, S: AsRef<str>>(word: &str, known: &'a [S]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k.as_ref()), k.as_ref()))
        .min()
        .filter(|(distance, k)| *distance <= (k.len().max(word.len()) / 2).max(2))
        .map(|(_, k)| k)
}

pub fn unknown<S: AsRef<str>>(place: &str, key: &str, word: &str, known: &[S]) -> anyhow::Error {
    let hint = nearest(word, known).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    let known: Vec<&str> = known.iter().map(AsRef::as_ref).collect();
    anyhow!("{place}: unknown key `{key}`: {hint}(expected one of {}; found `{word}`)", known.join(", "))
}

/// Reads layers against the keys known: the settings' own, in their order,
/// with the languages adopted so far (`lsp.servers.LANG`), then the lists.
pub struct Reader {
    keys: Vec<String>,
    lists: Vec<String>,
}

impl Reader {
    pub fn new(settings: &Settings) -> Reader {
        let (keys, lists) = settings.keys();
        Reader { keys, lists }
    }

    /// The keys taking one value, as the environment is read.
    pub fn scalars(&self) -> &[String] {
        &self.keys
    }

    /// The lists' keys.
    pub fn lists(&self) -> &[String] {
        &self.lists
    }

    /// Every key: the scalars', then the lists'.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.keys.iter().chain(&self.lists)
    }

    /// The next component after `prefix` of every known key under it.
    fn children(&self, prefix: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for key in self.all() {
            let rest = if prefix.is_empty() {
                Some(key.as_str())
            } else {
                key.strip_prefix(prefix).and_then(|r| r.strip_prefix('.'))
            };
            if let Some(child) = rest.and_then(|r| r.split('.').next())
                && !out.iter().any(|c| c == child)
            {
                out.push(child.to_owned());
            }
        }
        out
    }

    /// A key a field took that was not known yet (`lsp.servers.LANG` for a language the built-in table lacks).
    fn adopt(&mut self, key: &str) {
        if !self.all().any(|k| k == key) {
            self.keys.push(key.to_owned());
        }
    }

    /// Walks one table of the file (or of an inline value) at `prefix`.
    pub fn table(
        &mut self,
        layer: &mut Layer,
        origin: Origin<'_>,
        prefix: &str,
        table: &DeTable<'_>,
    ) -> anyhow::Result<()> {
        for (name, value) in table.iter() {
            let word = name.get_ref().as_ref();
            let key = if prefix.is_empty() { word.to_owned() } else { format!("{prefix}.{word}") };
            if !self.value(layer, origin, &key, name.span(), value)? {
                let known = self.children(prefix);
                return Err(unknown(&origin.place(&name.span()), &key, word, &known));
            }
        }
        Ok(())
    }

    /// One key's value; `false` when the key is unknown (the caller words it).
    fn value(
        &mut self,
        layer: &mut Layer,
        origin: Origin<'_>,
        key: &str,
        key_span: Range<usize>,
        value: &Spanned<DeValue<'_>>,
    ) -> anyhow::Result<bool> {
        let given = Given { origin, key_span, raw: Raw::Toml(value) };
        if let Some(read) = layer.read(key, given) {
            self.adopt(key);
            return read.map(|()| true);
        }
        if self.children(key).is_empty() {
            return Ok(false);
        }
        match value.get_ref() {
            DeValue::Table(table) => self.table(layer, origin, key, table).map(|()| true),
            other => Err(refuse(&origin.place(&value.span()), key, &format!("a table ([{key}])"), &describe(other))),
        }
    }

    /// A key and its text, from a variable or a flag.
    pub fn text(&mut self, layer: &mut Layer, origin: Origin<'_>, key: &str, text: &str) -> anyhow::Result<()> {
        let place = origin.place(&(0..0));
        if let Some(read) = layer.read(key, Given { origin, key_span: 0..0, raw: Raw::Text(text) }) {
            self.adopt(key);
            return read;
        }
        let inside = self.children(key);
        if !inside.is_empty() {
            let expected = format!("a key inside [{key}] ({})", inside.join(", "));
            return Err(refuse(&place, key, &expected, "the section itself"));
        }
        let (prefix, word) = key.rsplit_once('.').unwrap_or(("", key));
        Err(unknown(&place, key, word, &self.children(prefix)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_key_is_suggested_only_when_near() {
        assert_eq!(nearest("timeout", &["timeout_s", "python", "node"]), Some("timeout_s"));
        assert_eq!(nearest("pyhton", &["timeout_s", "python", "node"]), Some("python"));
        assert_eq!(nearest("colour", &["timeout_s", "python", "node"]), None);
    }
}
