//! The golden transcripts' recorder: each toolset's module runs a fixed
//! script of calls over its fixtures and snapshots every call's text, error
//! flag and structured value (`snapshots/it__*__transcript.snap`), so a change
//! to how results are built shows every word a model reads that it changed.
//! What differs from run to run (the temporary root, process ids, timings) is
//! replaced by a placeholder.

use std::fmt::Write as _;
use std::path::Path;

use agent_tools::ToolResult;
use serde_json::Value;

/// Keys whose values differ from run to run, replaced wherever they occur.
const VARYING: &[&str] = &[
    "pid",
    "adapter_pid",
    "debuggee_pid",
    "executable",
    "version",
    "age_ms",
    "ttl_left_ms",
    "created_at",
    "started_at",
    "finished_at",
    "last_activity",
    "elapsed_seconds",
];

/// One toolset's transcript.
pub struct Transcript {
    roots: Vec<String>,
    out: String,
}

impl Transcript {
    /// A transcript whose calls run under `roots` (each written `[root]`, `[root2]`, …).
    pub fn new(roots: &[&Path]) -> Transcript {
        let mut all = Vec::new();
        for root in roots {
            all.push(root.display().to_string());
            if let Ok(real) = root.canonicalize() {
                all.push(real.display().to_string());
            }
        }
        // The longest first, so a root inside another is replaced whole.
        all.sort_by_key(|root| std::cmp::Reverse(root.len()));
        all.dedup();
        Transcript { roots: all, out: String::new() }
    }

    /// Records one call and what it returned.
    pub fn record(&mut self, tool: &str, args: &Value, result: &ToolResult) {
        let _ = writeln!(self.out, "## {tool} {args}");
        let _ = writeln!(self.out, "is_error: {}", result.is_error);
        let _ = writeln!(self.out, "images: {}", result.images.len());
        let _ = writeln!(self.out, "text:\n{}", self.scrub(&result.text));
        match &result.structured {
            None => {
                let _ = writeln!(self.out, "structured: none");
            }
            Some(value) => {
                let mut value = value.clone();
                scrub_varying(&mut value);
                let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
                let _ = writeln!(self.out, "structured:\n{}", self.scrub(&pretty));
            }
        }
        self.out.push('\n');
    }

    /// The transcript, for `insta::assert_snapshot!`.
    pub fn finish(self) -> String {
        self.out
    }

    fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for root in &self.roots {
            text = text.replace(root.as_str(), "[root]");
        }
        scrub_durations(&text)
    }
}

/// Durations in text (`0.4s`, `12 ms`, `3.25 ms`) become `[time]`: a number followed by
/// `s` or `ms` (with or without a space) and then no letter or digit.
fn scrub_durations(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_number =
            chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '.');
        if starts_number {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit() || chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit))
            {
                j += 1;
            }
            let mut unit = j;
            if chars.get(unit) == Some(&' ') {
                unit += 1;
            }
            let after = |k: usize| chars.get(k).is_none_or(|c| !c.is_alphanumeric());
            let end = if chars.get(unit) == Some(&'m') && chars.get(unit + 1) == Some(&'s') && after(unit + 2) {
                Some(unit + 2)
            } else if chars.get(unit) == Some(&'s') && after(unit + 1) {
                Some(unit + 1)
            } else {
                None
            };
            if let Some(end) = end {
                out.push_str("[time]");
                i = end;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

fn scrub_varying(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if VARYING.contains(&key.as_str()) && !inner.is_null() {
                    *inner = Value::String("[varies]".into());
                } else {
                    scrub_varying(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_varying),
        _ => {}
    }
}
