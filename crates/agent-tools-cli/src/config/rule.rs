//! `[[approval.rule]]`: a rule of the approval policy, for a tier, a tool or a path.

use std::ops::Range;
use std::path::PathBuf;

use agent_tools::{Action, Rule, Tier};
use serde::Serialize;
use toml::de::DeTable;

use super::field::ListEntry;
use super::read::{refuse, string, unknown};
use super::source::{Origin, Source};
use super::value::{Value, action};

/// An `[[approval.rule]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct RuleEntry {
    /// `tier read`, `tool write`, `path src/`.
    pub scope: String,
    /// The action as written: `allow`, `ask` or `deny`.
    pub action: String,
    /// The rule the policy applies, read from `scope` and `action`.
    #[serde(skip)]
    pub rule: Rule,
    /// Where the entry was read: its line and column in the file, or the
    /// variable or flag that gave the list.
    pub source: Source,
}

impl ListEntry for RuleEntry {
    fn read_all(origin: Origin<'_>, entries: &[(Range<usize>, &DeTable<'_>)]) -> anyhow::Result<Vec<Self>> {
        entries.iter().map(|(span, t)| rule(origin, span, t)).collect()
    }
}

const RULE_KEYS: &[&str] = &["tier", "tool", "path", "action"];

fn rule(origin: Origin<'_>, span: &Range<usize>, table: &DeTable<'_>) -> anyhow::Result<RuleEntry> {
    let mut scope: Option<(String, agent_tools::Scope)> = None;
    let mut act: Option<(String, Action)> = None;
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("approval.rule.{word}");
        let place = origin.place(&value.span());
        let text = string(origin, &key, value)?;
        let this = match word {
            "tier" => {
                let tier: Tier =
                    text.parse().map_err(|_| refuse(&place, &key, "read, write or exec", &format!("{text:?}")))?;
                agent_tools::Scope::Tier(tier)
            }
            "tool" => agent_tools::Scope::Tool(text.clone()),
            "path" => agent_tools::Scope::Path(PathBuf::from(&text)),
            "action" => {
                let a = action(&text)
                    .ok_or_else(|| refuse(&place, &key, <Option<Action> as Value>::EXPECTED, &format!("{text:?}")))?;
                act = Some((text, a));
                continue;
            }
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, RULE_KEYS)),
        };
        if let Some((other, _)) = &scope {
            return Err(refuse(&place, &key, "one of tier, tool or path per rule", &format!("{other} and {word}")));
        }
        scope = Some((format!("{word} {text}"), this));
    }
    let place = origin.place(span);
    let (scope_text, scope) = scope.ok_or_else(|| refuse(&place, "approval.rule", "a tier, tool or path", "none"))?;
    let (action_text, action) =
        act.ok_or_else(|| refuse(&place, "approval.rule.action", "allow, ask or deny", "none"))?;
    Ok(RuleEntry { scope: scope_text, action: action_text, rule: Rule { scope, action }, source: origin.source(span) })
}
