//! The approval gate through a surface, with the in-process channel port as
//! the human: allow once, allow for the session, deny, timeout, nobody there,
//! policy decisions without asking, and a cell's `tool()` call asking the same.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{
    ALLOW_ONCE, ALLOW_SESSION, Action, ApprovalPolicy, ApprovalWiring, AstmatchWiring, DENY, KernelWiring, Refusal,
    Registry, Rule, Surface, Tier, ToolResult, Workspace,
};
use question_port::{Answer, Card, ChannelConfig, QuestionReceiver, Unattended, channel};
use serde_json::{Value, json};

const APP: &str = "x = foo(1)\nfoo(2)\n";

/// A tempdir with `app.py`, and an exec surface over it gated by `policy`,
/// asking through a channel port.
fn setup(policy: ApprovalPolicy, config: ChannelConfig) -> (tempfile::TempDir, Surface, QuestionReceiver) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let (port, questions) = channel(config);
    let workspace = Workspace::new(dir.path()).unwrap();
    let registry = Registry::builder()
        .with_astmatch(AstmatchWiring::new(workspace))
        .with_approval(ApprovalWiring { policy, port: Arc::new(port) })
        .build()
        .unwrap();
    (dir, Arc::new(registry).surface(Tier::Exec), questions)
}

/// The default policy with staging allowed, so only `resolve` asks.
fn staging_allowed() -> ApprovalPolicy {
    ApprovalPolicy::default().with(Rule::tool("ast_edit", Action::Allow))
}

fn edit_args() -> Value {
    json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"})
}

fn accept(id: &str) -> Value {
    json!({"edit_id": id, "action": "accept"})
}

fn app(dir: &tempfile::TempDir) -> String {
    std::fs::read_to_string(dir.path().join("app.py")).unwrap()
}

/// Calls `tool` while the human answers the one card it shows with `label`;
/// returns the result and the card.
async fn call_answering(
    surface: &Surface,
    questions: &mut QuestionReceiver,
    tool: &str,
    args: Value,
    label: &str,
) -> (ToolResult, Card) {
    let label = label.to_owned();
    let (result, card) = tokio::join!(surface.call(tool, args), async {
        let mut q = questions.recv().await.unwrap();
        let card = q.card().clone();
        q.answer(Answer::choose([label])).unwrap();
        card
    });
    (result.unwrap(), card)
}

#[tokio::test]
async fn allow_once_runs_the_call_and_asks_again_next_time() {
    let (dir, surface, mut questions) = setup(staging_allowed(), ChannelConfig::default());
    let staged = surface.call("ast_edit", edit_args()).await.unwrap();
    assert!(!staged.is_error, "{}", staged.text);
    assert!(questions.try_recv().is_none(), "an allowed tool must not ask");

    let (result, card) = call_answering(&surface, &mut questions, "resolve", accept("edit_1"), ALLOW_ONCE).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(app(&dir), "x = bar(1)\nbar(2)\n");
    assert_eq!(card.question, "Allow resolve (write tier) to run?");
    assert_eq!(card.context.as_deref(), Some("write edit edit_1, changing 1 file(s): app.py\npaths: app.py"));
    let labels: Vec<&str> = card.options.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, [ALLOW_ONCE, ALLOW_SESSION, DENY]);
    assert!(!card.allow_free_text && !card.multi_select);

    // Once is once: the next resolve of the same file asks again.
    surface.call("ast_edit", json!({"pattern": "bar($X)", "rewrite": "baz($X)", "path": "app.py"})).await.unwrap();
    let (again, _) = call_answering(&surface, &mut questions, "resolve", accept("edit_2"), ALLOW_ONCE).await;
    assert!(!again.is_error, "{}", again.text);
    assert_eq!(app(&dir), "x = baz(1)\nbaz(2)\n");
    assert_eq!(surface.registry().session_grants().unwrap(), agent_tools::SessionGrants::default());
}

#[tokio::test]
async fn allow_for_session_is_remembered_per_path() {
    let (dir, surface, mut questions) = setup(staging_allowed(), ChannelConfig::default());
    surface.call("ast_edit", edit_args()).await.unwrap();
    let (first, _) = call_answering(&surface, &mut questions, "resolve", accept("edit_1"), ALLOW_SESSION).await;
    assert!(!first.is_error, "{}", first.text);
    let grants = surface.registry().session_grants().unwrap();
    assert_eq!(grants.paths.into_iter().collect::<Vec<_>>(), [("resolve".to_owned(), PathBuf::from("app.py"))]);

    // The second resolve of the same file is not asked.
    surface.call("ast_edit", json!({"pattern": "bar($X)", "rewrite": "baz($X)", "path": "app.py"})).await.unwrap();
    let second = surface.call("resolve", accept("edit_2")).await.unwrap();
    assert!(!second.is_error, "{}", second.text);
    assert!(questions.try_recv().is_none(), "a granted call must not ask");
    assert_eq!(app(&dir), "x = baz(1)\nbaz(2)\n");
}

#[tokio::test]
async fn allow_for_session_without_paths_is_remembered_per_tool() {
    // ast_grep is read tier; with an empty policy even it asks, and it names no paths of its own.
    let (_dir, surface, mut questions) = setup(ApprovalPolicy::empty(), ChannelConfig::default());
    let args = json!({"pattern": "foo($X)", "language": "python"});
    let (first, card) = call_answering(&surface, &mut questions, "ast_grep", args.clone(), ALLOW_SESSION).await;
    assert!(!first.is_error, "{}", first.text);
    assert_eq!(card.context.as_deref(), Some(r#"arguments: {"language":"python","pattern":"foo($X)"}"#));
    let second = surface.call("ast_grep", args).await.unwrap();
    assert!(!second.is_error, "{}", second.text);
    assert!(questions.try_recv().is_none());
    assert_eq!(surface.registry().session_grants().unwrap().tools.into_iter().collect::<Vec<_>>(), ["ast_grep"]);
}

#[tokio::test]
async fn deny_refuses_and_the_file_is_unchanged() {
    let (dir, surface, mut questions) = setup(staging_allowed(), ChannelConfig::default());
    surface.call("ast_edit", edit_args()).await.unwrap();
    let (result, _) = call_answering(&surface, &mut questions, "resolve", accept("edit_1"), DENY).await;
    assert!(result.is_error);
    assert_eq!(
        result.text,
        "refused: resolve did not run, because the user denied it; do not retry the same call unchanged (do the task another way, or ask the user)"
    );
    assert_eq!(app(&dir), APP);
    // The edit is still staged: the tool did not run at all.
    let (discarded, _) = call_answering(
        &surface,
        &mut questions,
        "resolve",
        json!({"edit_id": "edit_1", "action": "discard"}),
        ALLOW_ONCE,
    )
    .await;
    assert!(!discarded.is_error, "{}", discarded.text);
}

#[tokio::test]
async fn skip_refuses() {
    let (dir, surface, mut questions) = setup(staging_allowed(), ChannelConfig::default());
    surface.call("ast_edit", edit_args()).await.unwrap();
    let (result, ()) = tokio::join!(surface.try_call("resolve", accept("edit_1")), async {
        questions.recv().await.unwrap().skip().unwrap();
    });
    assert_eq!(
        result.unwrap(),
        Err(Refusal::Denied {
            name: "resolve",
            reason: "the user did not approve it (the permission prompt was dismissed)".to_owned()
        })
    );
    assert_eq!(app(&dir), APP);
}

#[tokio::test]
async fn timeout_refuses() {
    let (dir, surface, mut questions) =
        setup(staging_allowed(), ChannelConfig { timeout: Some(Duration::from_millis(20)) });
    surface.call("ast_edit", edit_args()).await.unwrap();
    // The human side holds the question and never answers.
    let (result, _held) = tokio::join!(surface.try_call("resolve", accept("edit_1")), questions.recv());
    assert_eq!(
        result.unwrap(),
        Err(Refusal::Denied { name: "resolve", reason: "the permission prompt timed out with no answer".to_owned() })
    );
    assert_eq!(app(&dir), APP);
}

#[tokio::test]
async fn no_human_is_denied_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let registry = Registry::builder()
        .with_astmatch(AstmatchWiring::new(Workspace::new(dir.path()).unwrap()))
        .with_approval(ApprovalWiring { policy: staging_allowed(), port: Arc::new(Unattended) })
        .build()
        .unwrap();
    let surface = Arc::new(registry).surface(Tier::Exec);
    surface.call("ast_edit", edit_args()).await.unwrap();
    let result = surface.try_call("resolve", accept("edit_1")).await.unwrap();
    assert_eq!(
        result,
        Err(Refusal::Denied {
            name: "resolve",
            reason: "it needs a human's approval and no human is attached to give it".to_owned()
        })
    );
    assert_eq!(app(&dir), APP);

    // A channel whose receiver is gone is nobody too.
    let (_dir, surface, questions) = setup(staging_allowed(), ChannelConfig::default());
    drop(questions);
    surface.call("ast_edit", edit_args()).await.unwrap();
    let result = surface.call("resolve", accept("edit_1")).await.unwrap();
    assert!(result.is_error && result.text.contains("no human is attached"), "{}", result.text);
}

#[tokio::test]
async fn policy_decides_without_asking() {
    let policy = ApprovalPolicy::allow_all().with(Rule::path("app.py", Action::Deny));
    let (dir, surface, mut questions) = setup(policy, ChannelConfig::default());
    let staged = surface.call("ast_edit", edit_args()).await.unwrap();
    assert_eq!(
        staged.text,
        "refused: ast_edit did not run, because the host's policy denies paths under app.py; do not retry the same call unchanged (do the task another way, or ask the user)"
    );
    assert!(questions.try_recv().is_none());
    let read = surface.call("ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await.unwrap();
    assert!(!read.is_error, "{}", read.text);
    assert!(questions.try_recv().is_none());
    assert_eq!(app(&dir), APP);
}

#[tokio::test]
async fn without_a_policy_every_call_within_the_cap_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let registry =
        Registry::builder().with_astmatch(AstmatchWiring::new(Workspace::new(dir.path()).unwrap())).build().unwrap();
    let registry = Arc::new(registry);
    assert_eq!(registry.session_grants(), None);
    let surface = registry.surface(Tier::Write);
    surface.call("ast_edit", edit_args()).await.unwrap();
    let result = surface.call("resolve", accept("edit_1")).await.unwrap();
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(app(&dir), "x = bar(1)\nbar(2)\n");
}

#[tokio::test]
async fn bad_arguments_are_refused_before_asking() {
    let (_dir, surface, mut questions) = setup(ApprovalPolicy::default(), ChannelConfig::default());
    let result = surface.try_call("resolve", json!({"edit_id": "edit_1"})).await.unwrap();
    assert!(matches!(result, Err(Refusal::BadArguments { tool: "resolve", .. })), "{result:?}");
    assert!(questions.try_recv().is_none());
}

fn kernel_surface(root: &Path, port: question_port::ChannelPort) -> Surface {
    let mut config = kernel::KernelConfig::new(root);
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python");
    if venv.exists() {
        config.python = Some(venv);
    }
    // eval itself is allowed, so the only card is the one the cell's tool() call raises.
    let policy =
        ApprovalPolicy::default().with(Rule::tool("eval", Action::Allow)).with(Rule::tool("ast_edit", Action::Allow));
    let registry = Registry::builder()
        .with_astmatch(AstmatchWiring::new(Workspace::new(root).unwrap()))
        .with_kernels(KernelWiring::new(Arc::new(kernel::Kernels::new(config))))
        .with_approval(ApprovalWiring { policy, port: Arc::new(port) })
        .build()
        .unwrap();
    Arc::new(registry).surface(Tier::Exec)
}

#[tokio::test]
async fn a_cells_tool_call_asks_the_same_card() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let (port, mut questions) = channel(ChannelConfig::default());
    let surface = kernel_surface(dir.path(), port);
    let code = "e = tool('ast_edit', {'pattern': 'foo($X)', 'rewrite': 'bar($X)', 'path': 'app.py'})\ntry:\n    tool('resolve', {'edit_id': e['edit_id'], 'action': 'accept'})\n    print('accepted')\nexcept ToolError as err:\n    print('refused:', err)";
    let (result, card) =
        tokio::join!(surface.call("eval", json!({"code": code, "description": "stage and accept an edit"})), async {
            let mut q = questions.recv().await.unwrap();
            let card = q.card().clone();
            q.answer(Answer::choose([DENY])).unwrap();
            card
        });
    let result = result.unwrap();
    assert_eq!(card.question, "Allow resolve (write tier) to run?");
    assert!(
        result.text.contains("refused: refused: resolve did not run, because the user denied it"),
        "{}",
        result.text
    );
    assert_eq!(app(&dir), APP);
}
