//! The types a setting can have: what a value of the file, a variable or a
//! flag must be to be taken, what a refusal says was expected, and how the
//! value shows in `agent-tools config --json` (the text form is the same value).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_tools::Action;
use serde_json::json;
use toml::de::DeValue;

use super::read::{integer, number, string_items};

/// A setting's type.
pub trait Value: Clone + std::fmt::Debug {
    /// What a refusal says was expected: "a positive number of seconds".
    const EXPECTED: &'static str;

    /// A value of the file; `None` when it is not one of this type.
    fn from_toml(value: &DeValue<'_>) -> Option<Self>;

    /// A variable's or a flag's text.
    fn from_text(text: &str) -> Option<Self>;

    /// The value as `config --json` shows it.
    fn json(&self) -> serde_json::Value;

    /// Makes a path given relative the root's, once the layers are merged.
    fn resolve(&mut self, _root: &Path) {}
}

/// A positive number of seconds, as given (`1.5`), below 10⁹.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seconds(f64);

impl Seconds {
    /// The number of seconds as a [`Duration`].
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }

    fn positive(n: f64) -> Option<Seconds> {
        (n.is_finite() && n > 0.0 && n < 1e9).then_some(Seconds(n))
    }
}

impl From<Duration> for Seconds {
    fn from(duration: Duration) -> Seconds {
        Seconds(duration.as_secs_f64())
    }
}

impl Value for Seconds {
    const EXPECTED: &'static str = "a positive number of seconds";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        number(value).and_then(Seconds::positive)
    }

    fn from_text(text: &str) -> Option<Self> {
        text.trim().parse().ok().and_then(Seconds::positive)
    }

    fn json(&self) -> serde_json::Value {
        json!(self.0)
    }
}

/// A limit in seconds; 0 (shown unset) for none.
impl Value for Option<Seconds> {
    const EXPECTED: &'static str = "a number of seconds (0 for no limit)";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        number(value).and_then(|n| if n == 0.0 { Some(None) } else { Seconds::positive(n).map(Some) })
    }

    fn from_text(text: &str) -> Option<Self> {
        let n: f64 = text.trim().parse().ok()?;
        if n == 0.0 { Some(None) } else { Seconds::positive(n).map(Some) }
    }

    fn json(&self) -> serde_json::Value {
        self.map_or(serde_json::Value::Null, |s| s.json())
    }
}

/// A count: a positive whole number.
impl Value for usize {
    const EXPECTED: &'static str = "a positive whole number";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        integer(value).filter(|n| *n > 0).and_then(|n| usize::try_from(n).ok())
    }

    fn from_text(text: &str) -> Option<Self> {
        text.trim().parse::<i64>().ok().filter(|n| *n > 0).and_then(|n| usize::try_from(n).ok())
    }

    fn json(&self) -> serde_json::Value {
        json!(self)
    }
}

/// A count that may be unset: a positive whole number, or 0 for none.
impl Value for Option<usize> {
    const EXPECTED: &'static str = "a whole number (0 for none)";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        integer(value).filter(|n| *n >= 0).and_then(|n| usize::try_from(n).ok()).map(|n| (n > 0).then_some(n))
    }

    fn from_text(text: &str) -> Option<Self> {
        text.trim()
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .and_then(|n| usize::try_from(n).ok())
            .map(|n| (n > 0).then_some(n))
    }

    fn json(&self) -> serde_json::Value {
        self.map_or(serde_json::Value::Null, |n| json!(n))
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.trim().is_empty()).then_some(text)
}

/// A non-empty string, unset by default.
impl Value for Option<String> {
    const EXPECTED: &'static str = "a non-empty string";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        let DeValue::String(s) = value else { return None };
        non_empty(s).map(|s| Some(s.to_owned()))
    }

    fn from_text(text: &str) -> Option<Self> {
        non_empty(text).map(|s| Some(s.to_owned()))
    }

    fn json(&self) -> serde_json::Value {
        json!(self)
    }
}

/// A program: a bare name is looked up on `PATH`; a path with a `/` is the root's when relative.
impl Value for Option<PathBuf> {
    const EXPECTED: &'static str = "a non-empty string";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        Option::<String>::from_toml(value).map(|s| s.map(PathBuf::from))
    }

    fn from_text(text: &str) -> Option<Self> {
        Option::<String>::from_text(text).map(|s| s.map(PathBuf::from))
    }

    fn json(&self) -> serde_json::Value {
        json!(self.as_ref().map(|p| p.display().to_string()))
    }

    fn resolve(&mut self, root: &Path) {
        if let Some(path) = self
            && path.to_string_lossy().contains('/')
            && path.is_relative()
        {
            *path = root.join(&*path);
        }
    }
}

/// A directory: `~/…` is in the home directory, and a relative path is the root's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory(PathBuf);

impl Directory {
    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    fn new(text: &str) -> Directory {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
        match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Directory(PathBuf::from(home).join(rest)),
            _ => Directory(PathBuf::from(text)),
        }
    }
}

impl Value for Option<Directory> {
    const EXPECTED: &'static str = "a directory (~/ is the home directory; a relative path is the root's)";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        Option::<String>::from_toml(value).map(|s| s.map(|s| Directory::new(&s)))
    }

    fn from_text(text: &str) -> Option<Self> {
        Option::<String>::from_text(text).map(|s| s.map(|s| Directory::new(&s)))
    }

    fn json(&self) -> serde_json::Value {
        json!(self.as_ref().map(|d| d.0.display().to_string()))
    }

    fn resolve(&mut self, root: &Path) {
        if let Some(Directory(path)) = self
            && path.is_relative()
        {
            *path = root.join(&*path);
        }
    }
}

/// `allow`, `ask` or `deny`; unset is undecided.
impl Value for Option<Action> {
    const EXPECTED: &'static str = "one of \"allow\", \"ask\", \"deny\"";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        let DeValue::String(s) = value else { return None };
        Self::from_text(s)
    }

    fn from_text(text: &str) -> Option<Self> {
        action(text).map(Some)
    }

    fn json(&self) -> serde_json::Value {
        json!(self.map(action_name))
    }
}

pub fn action(text: &str) -> Option<Action> {
    match text {
        "allow" => Some(Action::Allow),
        "ask" => Some(Action::Ask),
        "deny" => Some(Action::Deny),
        _ => None,
    }
}

fn action_name(action: Action) -> &'static str {
    match action {
        Action::Allow => "allow",
        Action::Ask => "ask",
        Action::Deny => "deny",
    }
}

/// Where the project's code runs, by the name the configuration gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnclosureMode {
    /// `none`: on the host.
    None,
    /// `bwrap`: a bubblewrap sandbox.
    Bwrap,
    /// `command`: through `enclosure.prefix`.
    Command,
}

impl EnclosureMode {
    const ALL: [EnclosureMode; 3] = [EnclosureMode::None, EnclosureMode::Bwrap, EnclosureMode::Command];

    /// The mode as the configuration writes it: `none`, `bwrap` or `command`.
    pub fn name(self) -> &'static str {
        match self {
            EnclosureMode::None => "none",
            EnclosureMode::Bwrap => "bwrap",
            EnclosureMode::Command => "command",
        }
    }
}

impl Value for EnclosureMode {
    const EXPECTED: &'static str = "one of \"none\", \"bwrap\", \"command\"";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        let DeValue::String(s) = value else { return None };
        Self::from_text(s)
    }

    fn from_text(text: &str) -> Option<Self> {
        EnclosureMode::ALL.into_iter().find(|mode| mode.name() == text)
    }

    fn json(&self) -> serde_json::Value {
        json!(self.name())
    }
}

impl Value for bool {
    const EXPECTED: &'static str = "true or false";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        match value {
            DeValue::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    fn from_text(text: &str) -> Option<Self> {
        match text.trim() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }

    fn json(&self) -> serde_json::Value {
        json!(self)
    }
}

/// A TOML array read from a variable's or flag's text (`["docker", "exec", "-i", "app"]`).
fn from_array_text<T: Value>(text: &str) -> Option<T> {
    DeValue::parse(text).ok().and_then(|value| T::from_toml(value.get_ref()))
}

/// An argv, or any array of strings.
impl Value for Vec<String> {
    const EXPECTED: &'static str = "an array of strings";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        string_items(value)
    }

    fn from_text(text: &str) -> Option<Self> {
        from_array_text(text)
    }

    fn json(&self) -> serde_json::Value {
        json!(self)
    }
}

/// Paths, each the root's when relative.
impl Value for Vec<PathBuf> {
    const EXPECTED: &'static str = "an array of strings";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        string_items(value).map(|items| items.into_iter().map(PathBuf::from).collect())
    }

    fn from_text(text: &str) -> Option<Self> {
        from_array_text(text)
    }

    fn json(&self) -> serde_json::Value {
        json!(self.iter().map(|p| p.display().to_string()).collect::<Vec<_>>())
    }

    fn resolve(&mut self, root: &Path) {
        for path in self.iter_mut().filter(|path| path.is_relative()) {
            *path = root.join(&*path);
        }
    }
}

/// Environment variables, given as `NAME=VALUE` strings.
impl Value for Vec<(String, String)> {
    const EXPECTED: &'static str = "an array of \"NAME=VALUE\" strings";

    fn from_toml(value: &DeValue<'_>) -> Option<Self> {
        string_items(value)?
            .iter()
            .map(|item| item.split_once('=').filter(|(name, _)| !name.is_empty()))
            .map(|pair| pair.map(|(name, value)| (name.to_owned(), value.to_owned())))
            .collect()
    }

    fn from_text(text: &str) -> Option<Self> {
        from_array_text(text)
    }

    fn json(&self) -> serde_json::Value {
        json!(self.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>())
    }
}

/// How `agent-tools config` shows a value: as its JSON would read in Rust
/// (`300`, `"allow"`, `["a", "b"]`), `(unset)` for none.
pub fn show(value: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match value {
        J::Null => "(unset)".to_owned(),
        J::Number(n) if n.is_f64() => n.as_f64().map(|f| f.to_string()).unwrap_or_default(),
        J::Number(n) => n.to_string(),
        J::Bool(b) => b.to_string(),
        J::String(s) => format!("{s:?}"),
        J::Array(items) => format!("{:?}", items.iter().map(|i| i.as_str().unwrap_or_default()).collect::<Vec<_>>()),
        J::Object(_) => value.to_string(),
    }
}
