//! The approval policy: whether a call that passed the tier cap may run
//! ([`Decision::Allow`]), needs a human's yes ([`Decision::Ask`]), or is refused
//! ([`Decision::Deny`]).
//!
//! Plain data in, data out: [`decide`] takes what the call is (its tool, tier
//! and the paths it touches), the host's [`ApprovalPolicy`] and the
//! [`SessionGrants`] a human gave earlier in the run, and returns a decision.
//! It asks nobody and holds no state; the asking (a permission card through the
//! question port) and the remembering live in the surface.
//!
//! Rules of the decision (documented for users under "Approval: permission prompts"):
//! - every configured [`Rule`] that applies to the call is collected, and the
//!   strictest of their actions wins: deny > ask > allow;
//! - a deny is final; otherwise a session grant covering the call allows it
//!   (the human already said yes for the rest of the run);
//! - otherwise the strictest rule decides, and when no rule applies, ask.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use crate::tier::Tier;

/// What a rule, or the policy as a whole, says about a call. Ordered from the
/// most lenient to the strictest: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Run without asking.
    Allow,
    /// Ask the human first.
    Ask,
    /// Refuse.
    Deny,
}

/// What a rule is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every tool of this tier.
    Tier(Tier),
    /// The tool of this name.
    Tool(String),
    /// Calls touching paths under this prefix, relative to the working
    /// directory and compared by whole components (`src` covers `src/a.rs`,
    /// not `srcx/a.rs`). An `Allow` applies only when every path of the call
    /// is under the prefix; an `Ask` or `Deny` applies when any path of the
    /// call overlaps it (a call over the whole tree overlaps every prefix). A
    /// call with no paths is outside every path rule.
    Path(PathBuf),
}

/// One line of the host's configuration: a scope and what to do in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Which calls the rule is about.
    pub scope: Scope,
    /// What to do with them.
    pub action: Action,
}

impl Rule {
    /// A rule for every tool of `tier`.
    pub fn tier(tier: Tier, action: Action) -> Rule {
        Rule { scope: Scope::Tier(tier), action }
    }

    /// A rule for the tool called `name`.
    pub fn tool(name: impl Into<String>, action: Action) -> Rule {
        Rule { scope: Scope::Tool(name.into()), action }
    }

    /// A rule for paths under `prefix` (relative to the working directory).
    pub fn path(prefix: impl Into<PathBuf>, action: Action) -> Rule {
        Rule { scope: Scope::Path(prefix.into()), action }
    }
}

/// The host's approval configuration: a list of rules, strictest wins, and
/// ask when none applies.
///
/// [`ApprovalPolicy::default`] allows read-tier tools and has no other rule,
/// so write and exec tools ask; [`ApprovalPolicy::allow_all`] allows every
/// tier (what a surface without a policy does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPolicy {
    /// The rules, in no particular order: their order never matters.
    pub rules: Vec<Rule>,
}

impl Default for ApprovalPolicy {
    fn default() -> ApprovalPolicy {
        ApprovalPolicy { rules: vec![Rule::tier(Tier::Read, Action::Allow)] }
    }
}

impl ApprovalPolicy {
    /// A policy with no rules at all: every call asks.
    pub fn empty() -> ApprovalPolicy {
        ApprovalPolicy { rules: Vec::new() }
    }

    /// Every tier allowed.
    pub fn allow_all() -> ApprovalPolicy {
        ApprovalPolicy { rules: Tier::ALL.iter().map(|t| Rule::tier(*t, Action::Allow)).collect() }
    }

    /// The same policy with one more rule.
    pub fn with(mut self, rule: Rule) -> ApprovalPolicy {
        self.rules.push(rule);
        self
    }
}

/// "Allow for this session" answers given so far in a run: whole tools, and
/// (tool, path) pairs for tools whose calls name paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionGrants {
    /// Tools allowed for every call.
    pub tools: BTreeSet<String>,
    /// Paths allowed per tool, normalised relative paths.
    pub paths: BTreeSet<(String, PathBuf)>,
}

impl SessionGrants {
    /// Remembers a yes for this call: per path when it has paths, else for the whole tool.
    pub fn grant(&mut self, call: &CallFacts<'_>) {
        if call.paths.is_empty() {
            self.tools.insert(call.tool.to_owned());
        } else {
            for path in call.paths {
                self.paths.insert((call.tool.to_owned(), normalise(path)));
            }
        }
    }

    /// Whether earlier answers cover this call: the whole tool is granted, or
    /// the call has paths and each of them was granted for this tool.
    pub fn covers(&self, call: &CallFacts<'_>) -> bool {
        if self.tools.contains(call.tool) {
            return true;
        }
        !call.paths.is_empty() && call.paths.iter().all(|p| self.paths.contains(&(call.tool.to_owned(), normalise(p))))
    }
}

/// What the policy needs to know of one call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The tool's tier.
    pub tier: Tier,
    /// The paths the call touches, relative to the working directory (`.` or
    /// empty for the whole tree); empty when the tool names none.
    pub paths: &'a [PathBuf],
}

/// The policy's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Show a permission card and run it only on a yes.
    Ask,
    /// Refuse it; `reason` says which rule, for the model.
    Deny {
        /// The rule that denied it, worded for the model.
        reason: String,
    },
}

/// Decides one call; see the module documentation for the rules.
pub fn decide(call: &CallFacts<'_>, policy: &ApprovalPolicy, grants: &SessionGrants) -> Decision {
    let mut strictest: Option<&Rule> = None;
    for rule in policy.rules.iter().filter(|r| applies(r, call)) {
        if strictest.is_none_or(|s| rule.action > s.action) {
            strictest = Some(rule);
        }
    }
    match strictest {
        Some(rule) if rule.action == Action::Deny => {
            Decision::Deny { reason: format!("the host's policy denies {}", rule.scope) }
        }
        _ if grants.covers(call) => Decision::Allow,
        Some(rule) if rule.action == Action::Allow => Decision::Allow,
        _ => Decision::Ask,
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Tier(tier) => write!(f, "{tier}-tier tools"),
            Scope::Tool(name) => write!(f, "the tool {name}"),
            Scope::Path(prefix) => write!(f, "paths under {}", prefix.display()),
        }
    }
}

fn applies(rule: &Rule, call: &CallFacts<'_>) -> bool {
    match &rule.scope {
        Scope::Tier(tier) => *tier == call.tier,
        Scope::Tool(name) => name == call.tool,
        Scope::Path(prefix) => {
            let prefix = normalise(prefix);
            if call.paths.is_empty() {
                return false;
            }
            let mut paths = call.paths.iter().map(|p| normalise(p));
            match rule.action {
                Action::Allow => paths.all(|p| p.starts_with(&prefix)),
                Action::Ask | Action::Deny => paths.any(|p| p.starts_with(&prefix) || prefix.starts_with(&p)),
            }
        }
    }
}

/// Drops `.` components and a trailing slash, so `./src/` and `src` compare equal
/// and `.` becomes the empty path (the whole tree).
fn normalise(path: &Path) -> PathBuf {
    path.components().filter(|c| !matches!(c, Component::CurDir)).collect()
}
