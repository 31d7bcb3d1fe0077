//! The five `vibe_*` tools through a read surface, over a roster whose workers
//! are real `sh -c` processes.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use agent_tools::{Registry, Surface, Tier};
use serde_json::{Value, json};
use vibe_roster::{CommandConfig, CommandRunner, CommandSpec, Roster, RosterConfig};

fn surface(fast: &str, good: &str) -> Surface {
    let mut config = CommandConfig::new(CommandSpec::shell(fast), CommandSpec::shell(good));
    config.grace = Duration::from_millis(200);
    let roster = Roster::new(Arc::new(CommandRunner::new(config)), RosterConfig::default());
    Arc::new(Registry::builder().with_vibe_roster(roster).build().unwrap()).surface(Tier::Read)
}

async fn call(surface: &Surface, tool: &str, args: Value) -> agent_tools::ToolResult {
    surface.call(tool, args).await.unwrap()
}

#[test]
fn registered_only_in_vibe_mode_and_all_read_tier() {
    let registry = Arc::new(Registry::builder().build().unwrap());
    assert!(registry.specs().next().is_none());
    let surface = surface("cat", "cat");
    let listed: Vec<(&str, Tier)> = surface.list().iter().map(|s| (s.name, s.tier)).collect();
    assert_eq!(
        listed,
        [
            ("vibe_spawn", Tier::Read),
            ("vibe_send", Tier::Read),
            ("vibe_wait", Tier::Read),
            ("vibe_kill", Tier::Read),
            ("vibe_list", Tier::Read),
        ]
    );
}

#[tokio::test]
async fn spawn_wait_send_list() {
    let surface = surface("tr a-z A-Z", "rev");
    let spawned = call(&surface, "vibe_spawn", json!({"brief": "hello", "label": "shout"})).await;
    assert!(!spawned.is_error, "{}", spawned.text);
    let id = spawned.structured.as_ref().unwrap()["id"].as_str().unwrap().to_owned();
    assert_eq!(id, "w1");
    assert!(spawned.text.starts_with("spawned w1 (shout, fast): "), "{}", spawned.text);

    let waited = call(&surface, "vibe_wait", json!({"worker_id": id})).await;
    assert!(!waited.is_error);
    let value = waited.structured.unwrap();
    assert_eq!((value["status"].as_str(), value["settled"].as_bool()), (Some("done"), Some(true)));
    assert!(waited.text.ends_with("\nresult:\nHELLO"), "{}", waited.text);

    let sent = call(&surface, "vibe_send", json!({"worker_id": "w1", "message": "again"})).await;
    assert!(sent.text.starts_with("sent to w1: run 2 "), "{}", sent.text);
    let waited = call(&surface, "vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 30})).await;
    assert_eq!(waited.structured.unwrap()["last_result"], "HELLO\n\nAGAIN");

    call(&surface, "vibe_spawn", json!({"brief": "abc", "label": "reverse", "tier": "good"})).await;
    call(&surface, "vibe_wait", json!({"worker_id": "w2"})).await;
    let list = call(&surface, "vibe_list", json!({})).await;
    let rows: Vec<Vec<&str>> = list.text.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0], ["id", "label", "tier", "status", "runs", "elapsed", "last", "result"]);
    assert_eq!((rows[1][0], rows[1][1], rows[1][2], rows[1][3], rows[1][4]), ("w1", "shout", "fast", "done", "2"));
    assert_eq!((rows[2][0], rows[2][2], rows[2][3], rows[2][6]), ("w2", "good", "done", "cba"));
    assert_eq!(list.structured.unwrap()["workers"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn wait_times_out_and_kill_stops() {
    let surface = surface("exec sleep 1000", "cat");
    call(&surface, "vibe_spawn", json!({"brief": "nap", "label": "sleeper"})).await;
    let waited = call(&surface, "vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 0.1})).await;
    assert!(!waited.is_error);
    assert!(waited.text.starts_with("w1 is still running after waiting 0.1s"), "{}", waited.text);
    assert_eq!(waited.structured.unwrap()["settled"], false);

    let killed = call(&surface, "vibe_kill", json!({"worker_id": "w1"})).await;
    assert_eq!(
        killed.text,
        "w1 killed: its processes are stopped (its process group, and any process that left it but kept the run's environment)"
    );
    let again = call(&surface, "vibe_kill", json!({"worker_id": "w1"})).await;
    assert_eq!(again.text, "w1 had already settled (killed); nothing to stop");
}

#[tokio::test]
async fn failures_and_bad_arguments_are_errors_the_model_reads() {
    let surface = surface("echo oops >&2; exit 4", "cat");
    call(&surface, "vibe_spawn", json!({"brief": "x", "label": "bad"})).await;
    let waited = call(&surface, "vibe_wait", json!({"worker_id": "w1"})).await;
    assert!(!waited.is_error, "a failed worker is data, not a failed call");
    assert!(waited.text.starts_with("w1 failed after "), "{}", waited.text);
    assert!(waited.text.contains("\nerror: exit status 4; stderr tail:\noops\n"), "{}", waited.text);

    let unknown = call(&surface, "vibe_wait", json!({"worker_id": "w9"})).await;
    assert!(unknown.is_error);
    assert_eq!(unknown.text, "no worker 'w9' (known: w1)");
    let tier = call(&surface, "vibe_spawn", json!({"brief": "x", "label": "y", "tier": "best"})).await;
    assert!(tier.is_error);
    let timeout = call(&surface, "vibe_wait", json!({"worker_id": "w1", "timeout_seconds": -1})).await;
    assert!(timeout.is_error);
    let empty = call(&surface, "vibe_spawn", json!({"brief": " ", "label": "y"})).await;
    assert_eq!((empty.is_error, empty.text.as_str()), (true, "the brief is empty"));
    let list = call(&surface, "vibe_list", json!({"all": true})).await;
    assert!(list.is_error);
}

/// `vibe_wait` reports the worker's status while it waits; cancelled (its
/// future dropped), it returns and the worker runs on to its result.
#[tokio::test]
async fn a_cancelled_wait_returns_and_the_worker_runs_on() {
    let pacing = agent_tools::Pacing {
        first_after: Duration::from_millis(50),
        min_interval: Duration::from_millis(20),
        heartbeat: Duration::from_millis(200),
    };
    let surface = surface("sleep 2; echo finished", "cat").with_pacing(pacing);
    call(&surface, "vibe_spawn", json!({"brief": "nap", "label": "napper"})).await;
    let heard = Arc::new(tokio::sync::Notify::new());
    let sink = {
        let heard = heard.clone();
        agent_tools::ProgressSink::new(move |p| {
            if p.message.contains("waiting for w1: running for") {
                heard.notify_one();
            }
        })
    };
    tokio::select! {
        result = surface.call_with_progress("vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 60}), Some(sink)) => {
            panic!("the wait ended by itself: {:?}", result.map(|r| r.text))
        }
        () = heard.notified() => {}
    }
    let listed = call(&surface, "vibe_list", json!({})).await;
    assert_eq!(listed.structured.unwrap()["workers"][0]["status"], "running");
    let waited = call(&surface, "vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 30})).await;
    assert_eq!(waited.structured.unwrap()["last_result"], "finished\n");
}

/// Each tool's text and structured value, as the golden transcript (times scrubbed).
#[tokio::test]
async fn transcript() {
    let surface = surface("tr a-z A-Z", "echo oops >&2; exit 4");
    let mut transcript = crate::golden::Transcript::new(&[]);
    let calls = [
        ("vibe_spawn", json!({"brief": "hello", "label": "shout"})),
        ("vibe_wait", json!({"worker_id": "w1"})),
        ("vibe_send", json!({"worker_id": "w1", "message": "again"})),
        ("vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 30})),
        ("vibe_spawn", json!({"brief": "x", "label": "bad", "tier": "good"})),
        ("vibe_wait", json!({"worker_id": "w2"})),
        ("vibe_list", json!({})),
        ("vibe_kill", json!({"worker_id": "w1"})),
        ("vibe_wait", json!({"worker_id": "w9"})),
        ("vibe_spawn", json!({"brief": " ", "label": "y"})),
    ];
    for (tool, args) in calls {
        let result = call(&surface, tool, args.clone()).await;
        transcript.record(tool, &args, &result);
    }
    insta::assert_snapshot!(transcript.finish());
}
