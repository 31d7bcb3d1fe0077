//! `[[debug.adapter]]`: a new debug adapter, or (named like a built-in one) a change to it.

use std::ops::Range;

use serde::Serialize;
use toml::de::DeTable;

use super::field::ListEntry;
use super::read::{describe, json, refuse, string, strings, unknown};
use super::source::{Origin, Source};

/// A `[[debug.adapter]]` entry: a new adapter, or (named like a built-in
/// one) a change to it; fields left out keep the built-in's.
#[derive(Debug, Clone, Serialize)]
pub struct CustomAdapter {
    /// The adapter as the entry gives it (`name`, `command`, `args`, …).
    #[serde(flatten)]
    pub spec: dap_session::AdapterSpec,
    /// Where the entry was read: its line and column in the file, or the
    /// variable or flag that gave the list.
    pub source: Source,
}

impl ListEntry for CustomAdapter {
    fn read_all(origin: Origin<'_>, entries: &[(Range<usize>, &DeTable<'_>)]) -> anyhow::Result<Vec<Self>> {
        entries.iter().map(|(span, t)| adapter(origin, span, t)).collect()
    }
}

const ADAPTER_KEYS: &[&str] = &[
    "name",
    "command",
    "args",
    "probe_args",
    "transport",
    "markers",
    "extensions",
    "launch",
    "attach",
    "program_field",
];

fn adapter(origin: Origin<'_>, span: &Range<usize>, table: &DeTable<'_>) -> anyhow::Result<CustomAdapter> {
    let mut spec = dap_session::AdapterSpec::default();
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("debug.adapter.{word}");
        let place = origin.place(&value.span());
        match word {
            "name" => {
                let text = string(origin, &key, value)?;
                let builtin = dap_session::AdapterId::ALL.iter().map(|id| id.name()).collect::<Vec<_>>();
                if let Some(id) = dap_session::AdapterId::parse(&text).filter(|id| id.name() != text) {
                    let expected = format!(
                        "a new adapter's name, or a built-in one's as written ({}) to change it",
                        builtin.join(", ")
                    );
                    return Err(refuse(&place, &key, &expected, &format!("{text:?} (another name of {id})")));
                }
                spec.name = text;
            }
            "command" => spec.command = Some(string(origin, &key, value)?),
            "args" => spec.args = Some(strings(origin, &key, value)?),
            "probe_args" => spec.probe_args = Some(strings(origin, &key, value)?),
            "transport" => {
                let text = string(origin, &key, value).ok();
                spec.transport = Some(match text.as_deref() {
                    Some("stdio") => dap_session::Transport::Stdio,
                    Some("tcp") => dap_session::Transport::Tcp,
                    _ => {
                        let expected = "\"stdio\" or \"tcp\" (the adapter prints the address it listens on)";
                        return Err(refuse(&place, &key, expected, &describe(value.get_ref())));
                    }
                });
            }
            "markers" => spec.markers = Some(strings(origin, &key, value)?),
            "extensions" => {
                spec.extensions =
                    strings(origin, &key, value)?.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
            }
            "launch" | "attach" => {
                let serde_json::Value::Object(fields) = json(value.get_ref()) else {
                    let expected = format!("a table of fields for the DAP `{word}` request's arguments");
                    return Err(refuse(&place, &key, &expected, &describe(value.get_ref())));
                };
                if word == "launch" { spec.launch = fields } else { spec.attach = fields }
            }
            "program_field" => spec.program_field = Some(string(origin, &key, value)?),
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, ADAPTER_KEYS)),
        }
    }
    let place = origin.place(span);
    if spec.name.is_empty() {
        return Err(refuse(&place, "debug.adapter.name", "a name for the adapter", "none"));
    }
    if spec.id().is_custom() {
        if spec.command.is_none() {
            return Err(refuse(&place, "debug.adapter.command", "the program to run (a new adapter)", "none"));
        }
        if spec.markers.as_ref().is_none_or(|m| m.is_empty()) {
            return Err(refuse(&place, "debug.adapter.markers", "at least one root marker file", "none"));
        }
    }
    Ok(CustomAdapter { spec, source: origin.source(span) })
}
