//! The surface: tier gate, unknown tools, bad arguments, the lock that
//! keeps calls of a non-parallel-safe tool apart, progress to a host's sink,
//! and cancellation (a dropped call) freeing the lock.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use agent_tools::{
    AstmatchWiring, CallContext, Pacing, Progress, ProgressSink, Refusal, Registry, Reply, Result, Text, Tier, Tool,
    Workspace,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

fn registry(dir: &tempfile::TempDir) -> Arc<Registry> {
    let workspace = Workspace::new(dir.path()).unwrap();
    Arc::new(Registry::builder().with_astmatch(AstmatchWiring::new(workspace)).build().unwrap())
}

fn names(registry: &Arc<Registry>, cap: Tier) -> Vec<&'static str> {
    registry.surface(cap).list().iter().map(|s| s.name).collect()
}

#[test]
fn cap_decides_what_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(&dir);
    assert_eq!(names(&registry, Tier::Read), ["ast_grep"]);
    assert_eq!(names(&registry, Tier::Write), ["ast_grep", "ast_edit", "resolve"]);
    assert_eq!(names(&registry, Tier::Exec), ["ast_grep", "ast_edit", "resolve"]);
}

#[tokio::test]
async fn call_above_cap_is_refused_with_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "foo(1)\n").unwrap();
    let surface = registry(&dir).surface(Tier::Read);
    let args = json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "a.py"});
    let result = surface.call("ast_edit", args.clone()).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.text, "refused: ast_edit is write tier; this surface is capped at read");
    let refused = surface.try_call("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await.unwrap();
    assert_eq!(refused, Err(Refusal::AboveCap { name: "resolve", tier: Tier::Write, cap: Tier::Read }));
    // Nothing was staged: the same call through a write surface gets the first id.
    let staged = registry(&dir).surface(Tier::Write).call("ast_edit", args).await.unwrap();
    assert_eq!(staged.structured.unwrap()["edit_id"], "edit_1");
}

#[tokio::test]
async fn unknown_tool_lists_the_available_ones() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(&dir);
    let result = registry.surface(Tier::Read).call("grep", json!({})).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.text, "unknown tool 'grep'; available tools: ast_grep");
    let result = registry.surface(Tier::Exec).call("lsp", json!({})).await.unwrap();
    assert_eq!(result.text, "unknown tool 'lsp'; available tools: ast_grep, ast_edit, resolve");
}

#[tokio::test]
async fn bad_arguments_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let surface = registry(&dir).surface(Tier::Exec);
    let cases = [
        ("ast_grep", json!({}), "invalid arguments for ast_grep: missing field `pattern`"),
        (
            "ast_grep",
            json!({"pattern": "f()", "max_results": "ten"}),
            "invalid arguments for ast_grep: `max_results`: invalid type: string \"ten\", expected u32",
        ),
        (
            "ast_grep",
            json!({"pattern": "f()", "language": "cobol"}),
            "invalid arguments for ast_grep: `language`: unknown language 'cobol'; known languages: bash, c, cpp, dart, go, java, javascript, json, python, rust, tsx, typescript",
        ),
        (
            "ast_grep",
            json!({"pattern": "f()", "lang": "rust"}),
            "invalid arguments for ast_grep: unknown field `lang`, expected one of `pattern`, `path`, `language`, `max_results`",
        ),
        ("ast_edit", json!({"pattern": "f()"}), "invalid arguments for ast_edit: missing field `rewrite`"),
        (
            "resolve",
            json!({"edit_id": "edit_1", "action": "apply"}),
            "invalid arguments for resolve: `action`: unknown variant `apply`, expected `accept` or `discard`",
        ),
        ("resolve", json!(["edit_1"]), "invalid arguments for resolve: arguments must be a JSON object"),
    ];
    for (tool, args, expected) in cases {
        let result = surface.call(tool, args).await.unwrap();
        assert!(result.is_error, "{tool}: {}", result.text);
        assert_eq!(result.text, expected);
    }
}

/// A test-only tool that waits on a gate and counts how many of its calls are inside at once.
struct Gated<const SAFE: bool> {
    gate: Arc<tokio::sync::Semaphore>,
    inside: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

/// Waits for the test to open the gate.
#[derive(Deserialize, JsonSchema)]
struct GatedInput {}

impl<const SAFE: bool> Tool for Gated<SAFE> {
    type Input = GatedInput;
    type Output = Text;
    const NAME: &'static str = "gated";
    const TIER: Tier = Tier::Exec;
    const PARALLEL_SAFE: bool = SAFE;

    async fn call(&self, _input: GatedInput, _cx: &CallContext) -> Result<Reply<Text>> {
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.gate.acquire().await.unwrap().forget();
        self.inside.fetch_sub(1, Ordering::SeqCst);
        Ok(Ok(Text::new("done")))
    }
}

/// Polls a future once, so a test can see where it stopped without timing.
async fn poll_once<F: Future>(future: &mut Pin<Box<F>>) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

/// Starts two calls of the tool, each polled once while the gate is shut; returns
/// how many were inside the tool then, and the most ever inside at once.
async fn two_calls<const SAFE: bool>() -> (usize, usize) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let tool = Gated::<SAFE> { gate: Arc::clone(&gate), inside: Arc::clone(&inside), most: Arc::clone(&most) };
    let registry = Arc::new(Registry::builder().register(tool).build().unwrap());
    assert_eq!(registry.parallel_safe("gated"), Some(SAFE));
    let surface = registry.surface(Tier::Exec);
    let mut first = Box::pin(surface.call("gated", json!({})));
    let mut second = Box::pin(surface.call("gated", json!({})));
    assert!(poll_once(&mut first).await.is_pending());
    assert!(poll_once(&mut second).await.is_pending());
    let inside_while_shut = inside.load(Ordering::SeqCst);
    gate.add_permits(2);
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.unwrap().text, "done");
    assert_eq!(b.unwrap().text, "done");
    (inside_while_shut, most.load(Ordering::SeqCst))
}

#[tokio::test]
async fn non_parallel_safe_tool_runs_one_call_at_a_time() {
    assert_eq!(two_calls::<false>().await, (1, 1));
}

#[tokio::test]
async fn parallel_safe_tool_runs_calls_together() {
    assert_eq!(two_calls::<true>().await, (2, 2));
}

#[test]
fn a_name_registered_twice_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let wiring = AstmatchWiring::new(Workspace::new(dir.path()).unwrap());
    let error = Registry::builder().with_astmatch(wiring.clone()).with_astmatch(wiring).build().unwrap_err();
    assert_eq!(error.to_string(), "tool 'ast_grep' is registered twice");
}

#[test]
fn tiers_are_ordered_and_parse() {
    assert!(Tier::Read < Tier::Write && Tier::Write < Tier::Exec);
    assert_eq!("write".parse::<Tier>().unwrap(), Tier::Write);
    assert_eq!("root".parse::<Tier>().unwrap_err().to_string(), "unknown tier 'root'; expected read, write or exec");
    assert_eq!(serde_json::to_value(Tier::Exec).unwrap(), json!("exec"));
}

/// A test-only tool that reports a few steps, a few milliseconds apart.
struct Stepping;

/// Reports its steps.
#[derive(Deserialize, JsonSchema)]
struct SteppingInput {}

impl Tool for Stepping {
    type Input = SteppingInput;
    type Output = Text;
    const NAME: &'static str = "stepping";
    const TIER: Tier = Tier::Read;

    async fn call(&self, _input: SteppingInput, cx: &CallContext) -> Result<Reply<Text>> {
        for step in 1..=3 {
            cx.progress(Progress {
                message: format!("step {step}"),
                progress: Some(f64::from(step)),
                total: Some(3.0),
            });
            tokio::time::sleep(Duration::from_millis(120)).await;
        }
        Ok(Ok(Text::new("stepped")))
    }
}

fn quick_pacing() -> Pacing {
    Pacing {
        first_after: Duration::from_millis(50),
        min_interval: Duration::from_millis(20),
        heartbeat: Duration::from_millis(100),
    }
}

#[tokio::test(start_paused = true)]
async fn progress_reaches_the_host_paced_and_never_after_the_call() {
    let registry = Arc::new(Registry::builder().register(Stepping).build().unwrap());
    let surface = registry.surface(Tier::Read).with_pacing(quick_pacing());
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = {
        let seen = seen.clone();
        ProgressSink::new(move |p| seen.lock().unwrap().push(p))
    };
    let result = surface.call_with_progress("stepping", json!({}), Some(sink)).await.unwrap();
    assert_eq!(result.text, "stepped");
    let at_return = seen.lock().unwrap().clone();
    // The tool's own numbers travel with its message, after the time run.
    assert_eq!(
        at_return.first(),
        Some(&Progress { message: "0 s: step 1".into(), progress: Some(1.0), total: Some(3.0) })
    );
    assert!(at_return.iter().any(|p| p.message == "0 s: step 3"), "{at_return:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(seen.lock().unwrap().len(), at_return.len(), "nothing after the call returned");

    // Without a sink the same call reports nothing, anywhere.
    assert_eq!(surface.call("stepping", json!({})).await.unwrap().text, "stepped");
}

#[tokio::test]
async fn a_dropped_call_releases_the_lock_of_a_non_parallel_safe_tool() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let tool = Gated::<false> { gate: Arc::clone(&gate), inside: Arc::clone(&inside), most: Arc::clone(&most) };
    let registry = Arc::new(Registry::builder().register(tool).build().unwrap());
    let surface = registry.surface(Tier::Exec);
    let mut first = Box::pin(surface.call("gated", json!({})));
    assert!(poll_once(&mut first).await.is_pending());
    assert_eq!(inside.load(Ordering::SeqCst), 1);
    // Cancelled: the future is dropped inside the tool, holding the lock.
    drop(first);
    let mut second = Box::pin(surface.call("gated", json!({})));
    assert!(poll_once(&mut second).await.is_pending());
    assert_eq!(inside.load(Ordering::SeqCst), 2, "the second call got in: the lock was released");
    gate.add_permits(1);
    assert_eq!(second.await.unwrap().text, "done");
}
