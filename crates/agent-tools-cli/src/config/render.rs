//! `agent-tools config`: every value and where it came from, as text or JSON
//! (`--json`); the settings as their definition lists them, then the lists'
//! entries, each in its own words.

use std::fmt::Write as _;

use serde::Serialize;

use super::Config;
use super::adapter::CustomAdapter;
use super::field::Entry;
use super::rule::RuleEntry;
use super::server::CustomServer;
use super::value::show;

/// `config --json`.
#[derive(Serialize)]
struct Json<'a> {
    file: &'a super::FileState,
    settings: Vec<Entry>,
    lsp_servers: &'a [CustomServer],
    debug_adapters: &'a [CustomAdapter],
    approval_rules: &'a [RuleEntry],
}

impl Serialize for Config {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Json {
            file: &self.file,
            settings: self.settings.entries(),
            lsp_servers: &self.settings.lsp.server,
            debug_adapters: &self.settings.debug.adapter,
            approval_rules: &self.settings.approval.rule,
        }
        .serialize(s)
    }
}

impl Config {
    /// `agent-tools config`: every value and where it came from.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "configuration file: {}", self.file);
        let entries: Vec<(Entry, String)> = self
            .settings
            .entries()
            .into_iter()
            .map(|e| {
                let value = show(&e.value);
                (e, value)
            })
            .collect();
        let width = entries.iter().map(|(e, value)| e.key.len() + value.len()).max().unwrap_or(0) + 4;
        for (e, value) in &entries {
            let assignment = format!("{} = {value}", e.key);
            let _ = writeln!(out, "{assignment:<width$}  # {}", e.source);
        }
        for s in &self.settings.lsp.server {
            server(&mut out, s);
        }
        for a in &self.settings.debug.adapter {
            adapter(&mut out, a);
        }
        for r in &self.settings.approval.rule {
            let _ = writeln!(out, "[[approval.rule]] {} = {}  # {}", r.scope, r.action, r.source);
        }
        out
    }
}

fn server(out: &mut String, s: &CustomServer) {
    let command = s.command.as_deref().unwrap_or("(built-in command)");
    let langs: Vec<&str> = s.languages.iter().map(|l| l.id()).collect();
    let args = s.args.clone().unwrap_or_default().join(" ");
    let _ = writeln!(out, "[[lsp.server]] {} = {command} {args}  # {}", s.name, s.source);
    if !langs.is_empty() {
        let _ = writeln!(out, "    languages: {}", langs.join(", "));
    }
    if let Some(new) = &s.language {
        let extensions: Vec<String> = new.extensions.iter().map(|e| format!(".{e}")).collect();
        let _ = writeln!(
            out,
            "    language {} (its own): {}, languageId {}",
            new.id,
            extensions.join(" "),
            new.language_id
        );
    }
}

fn adapter(out: &mut String, a: &CustomAdapter) {
    let spec = &a.spec;
    let command = spec.command.as_deref().unwrap_or("(built-in command)");
    let args = spec.args.clone().unwrap_or_default().join(" ");
    let _ = writeln!(out, "[[debug.adapter]] {} = {command} {args}  # {}", spec.name, a.source);
    let mut facts = Vec::new();
    if let Some(transport) = spec.transport {
        facts.push(format!("transport {}", if transport == dap_session::Transport::Tcp { "tcp" } else { "stdio" }));
    }
    if let Some(markers) = &spec.markers {
        facts.push(format!("markers {}", markers.join(", ")));
    }
    if !spec.extensions.is_empty() {
        let extensions: Vec<String> = spec.extensions.iter().map(|e| format!(".{e}")).collect();
        facts.push(format!("programs {}", extensions.join(" ")));
    }
    if let Some(field) = &spec.program_field {
        facts.push(format!("program in `{field}`"));
    }
    for (request, fields) in [("launch", &spec.launch), ("attach", &spec.attach)] {
        if !fields.is_empty() {
            facts.push(format!("{request} {}", serde_json::Value::Object(fields.clone())));
        }
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "    {}", facts.join("; "));
    }
}
