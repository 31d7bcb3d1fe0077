//! The languages a kernel can speak.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A kernel language; one kernel of each per conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// Python, run by the project's interpreter (`.venv`, `venv`, then `python3`).
    Python,
    /// JavaScript, run by `node`.
    JavaScript,
}

impl Language {
    /// Every language, Python first.
    pub const ALL: [Language; 2] = [Language::Python, Language::JavaScript];

    /// The lowercase name, as accepted by [`FromStr`]: `python` or `javascript`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Language::Python => 0,
            Language::JavaScript => 1,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Language {
    type Err = Error;

    /// Accepts `python`/`py` and `javascript`/`js`/`node`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "python" | "py" | "python3" => Ok(Language::Python),
            "javascript" | "js" | "node" => Ok(Language::JavaScript),
            _ => Err(Error::UnknownLanguage(s.to_owned())),
        }
    }
}
