//! The approval policy as data: tier × configuration × remembered grants →
//! allow, ask or deny, strictest rule winning.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use agent_tools::{Action, ApprovalPolicy, CallFacts, Decision, Rule, SessionGrants, Tier, decide};

/// Decides a call of `tool` at `tier` touching `paths`.
fn check(tool: &str, tier: Tier, paths: &[&str], policy: &ApprovalPolicy, grants: &SessionGrants, expected: Decision) {
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let call = CallFacts { tool, tier, paths: &paths };
    assert_eq!(
        decide(&call, policy, grants),
        expected,
        "{tool} ({tier}) on {paths:?} under {policy:?} with {grants:?}"
    );
}

fn deny(reason: &str) -> Decision {
    Decision::Deny { reason: reason.to_owned() }
}

fn none() -> SessionGrants {
    SessionGrants::default()
}

#[test]
fn default_policy_allows_read_and_asks_write_and_exec() {
    let policy = ApprovalPolicy::default();
    check("ast_grep", Tier::Read, &[], &policy, &none(), Decision::Allow);
    check("ast_edit", Tier::Write, &["src"], &policy, &none(), Decision::Ask);
    check("resolve", Tier::Write, &["a.py"], &policy, &none(), Decision::Ask);
    check("eval", Tier::Exec, &[], &policy, &none(), Decision::Ask);
}

#[test]
fn nothing_decides_means_ask() {
    let policy = ApprovalPolicy::empty();
    for tier in Tier::ALL {
        check("any", tier, &[], &policy, &none(), Decision::Ask);
    }
    // A rule about another tool, tier or path decides nothing.
    let policy = ApprovalPolicy::empty()
        .with(Rule::tool("other", Action::Allow))
        .with(Rule::tier(Tier::Exec, Action::Allow))
        .with(Rule::path("docs", Action::Allow));
    check("resolve", Tier::Write, &["src/a.rs"], &policy, &none(), Decision::Ask);
}

#[test]
fn tool_and_tier_rules() {
    let policy = ApprovalPolicy::default().with(Rule::tool("ast_edit", Action::Allow));
    check("ast_edit", Tier::Write, &["."], &policy, &none(), Decision::Allow);
    check("resolve", Tier::Write, &["a.py"], &policy, &none(), Decision::Ask);

    let policy = ApprovalPolicy::default().with(Rule::tier(Tier::Exec, Action::Deny));
    check("eval", Tier::Exec, &[], &policy, &none(), deny("the host's policy denies exec-tier tools"));
    check("ast_grep", Tier::Read, &[], &policy, &none(), Decision::Allow);

    check("eval", Tier::Exec, &[], &ApprovalPolicy::allow_all(), &none(), Decision::Allow);
}

#[test]
fn strictest_rule_wins() {
    // allow (tier) + ask (tool) → ask
    let policy = ApprovalPolicy::allow_all().with(Rule::tool("resolve", Action::Ask));
    check("resolve", Tier::Write, &["a.py"], &policy, &none(), Decision::Ask);
    check("ast_edit", Tier::Write, &["a.py"], &policy, &none(), Decision::Allow);
    // allow (tool) + deny (tier) → deny
    let policy =
        ApprovalPolicy::default().with(Rule::tool("eval", Action::Allow)).with(Rule::tier(Tier::Exec, Action::Deny));
    check("eval", Tier::Exec, &[], &policy, &none(), deny("the host's policy denies exec-tier tools"));
    // allow (tier) + deny (path) → deny; the order of rules does not matter
    let policy =
        ApprovalPolicy::empty().with(Rule::path("secrets", Action::Deny)).with(Rule::tier(Tier::Write, Action::Allow));
    check(
        "resolve",
        Tier::Write,
        &["src/a.py", "secrets/key.py"],
        &policy,
        &none(),
        deny("the host's policy denies paths under secrets"),
    );
    check("resolve", Tier::Write, &["src/a.py"], &policy, &none(), Decision::Allow);
    // ask (path) + allow (tool) → ask
    let policy = ApprovalPolicy::empty().with(Rule::tool("resolve", Action::Allow)).with(Rule::path("ci", Action::Ask));
    check("resolve", Tier::Write, &["ci/run.sh"], &policy, &none(), Decision::Ask);
}

#[test]
fn path_rules_compare_whole_components_and_cover_every_path() {
    let policy = ApprovalPolicy::default().with(Rule::path("src", Action::Allow));
    check("resolve", Tier::Write, &["src/a.rs", "./src/b/c.rs"], &policy, &none(), Decision::Allow);
    // One path outside the prefix: the allow does not cover the call.
    check("resolve", Tier::Write, &["src/a.rs", "tests/t.rs"], &policy, &none(), Decision::Ask);
    check("resolve", Tier::Write, &["srcx/a.rs"], &policy, &none(), Decision::Ask);
    // A call with no paths is outside every path rule.
    check("eval", Tier::Exec, &[], &policy, &none(), Decision::Ask);

    let policy = ApprovalPolicy::allow_all().with(Rule::path("secrets/", Action::Deny));
    // An edit over the whole tree overlaps the denied prefix.
    check("ast_edit", Tier::Write, &["."], &policy, &none(), deny("the host's policy denies paths under secrets/"));
    check("ast_edit", Tier::Write, &["src"], &policy, &none(), Decision::Allow);
}

#[test]
fn session_grants_allow_what_was_granted_and_never_override_deny() {
    let mut tool_grant = none();
    tool_grant.tools.insert("eval".to_owned());
    let policy = ApprovalPolicy::default();
    check("eval", Tier::Exec, &[], &policy, &tool_grant, Decision::Allow);
    check("resolve", Tier::Write, &["a.py"], &policy, &tool_grant, Decision::Ask);
    // A configured ask is answered by the grant; a configured deny is not.
    let ask = ApprovalPolicy::default().with(Rule::tool("eval", Action::Ask));
    check("eval", Tier::Exec, &[], &ask, &tool_grant, Decision::Allow);
    let denied = ApprovalPolicy::default().with(Rule::tier(Tier::Exec, Action::Deny));
    check("eval", Tier::Exec, &[], &denied, &tool_grant, deny("the host's policy denies exec-tier tools"));

    let mut path_grant = none();
    path_grant.paths.insert(("resolve".to_owned(), PathBuf::from("src/a.py")));
    path_grant.paths.insert(("resolve".to_owned(), PathBuf::from("src/b.py")));
    check("resolve", Tier::Write, &["./src/a.py", "src/b.py"], &policy, &path_grant, Decision::Allow);
    // A path not granted, or the same path for another tool, still asks.
    check("resolve", Tier::Write, &["src/a.py", "src/c.py"], &policy, &path_grant, Decision::Ask);
    check("ast_edit", Tier::Write, &["src/a.py"], &policy, &path_grant, Decision::Ask);
}

#[test]
fn granting_remembers_paths_where_the_call_has_them() {
    let paths = vec![PathBuf::from("./src/a.py")];
    let mut grants = none();
    grants.grant(&CallFacts { tool: "resolve", tier: Tier::Write, paths: &paths });
    grants.grant(&CallFacts { tool: "eval", tier: Tier::Exec, paths: &[] });
    assert_eq!(grants.tools.iter().collect::<Vec<_>>(), ["eval"]);
    assert_eq!(grants.paths.iter().collect::<Vec<_>>(), [&("resolve".to_owned(), PathBuf::from("src/a.py"))]);
}
