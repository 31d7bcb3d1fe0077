//! Approval tiers: `read < write < exec`, a static property of each tool.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a tool may do; a surface's cap is the highest tier it shows.
///
/// Ordered: `Read < Write < Exec`. Serialized lowercase (`read`, `write`, `exec`);
/// [`FromStr`] accepts the same words, so a clap argument can parse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// No side effects.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    /// Every tier, lowest first.
    pub const ALL: [Tier; 3] = [Tier::Read, Tier::Write, Tier::Exec];

    /// The tier's word: `read`, `write` or `exec`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Exec => "exec",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not a tier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tier '{0}'; expected read, write or exec")]
pub struct ParseTierError(pub String);

impl FromStr for Tier {
    type Err = ParseTierError;

    fn from_str(s: &str) -> Result<Tier, ParseTierError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Tier::Read),
            "write" => Ok(Tier::Write),
            "exec" => Ok(Tier::Exec),
            _ => Err(ParseTierError(s.to_string())),
        }
    }
}
