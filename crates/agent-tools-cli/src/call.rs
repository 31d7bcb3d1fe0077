//! `agent-tools call`: one tool call, in a run that ends with the command. What a later call
//! would need (a staged edit's `resolve`, a debug session) cannot outlive it: `--accept`
//! writes an `ast_edit` in the same command, and the results say what ends with it.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use agent_tools::Tier;
use anyhow::Context as _;

use crate::terminal::{CANCELLED, MISUSE, SUCCESS, TOOL_ERROR, clear_progress_line, print_result, terminal_progress};
use crate::wire::{RunPorts, Workers, one_shot_host, runtime, wire_run, workspace};
use crate::{config, eprint, wiring};

/// What `call` adds to an `ast_edit` preview: its `resolve` hint cannot be followed.
const ONE_SHOT_STAGED: &str = "\n(this command ends here, and the staged change with it: \
     nothing was written; run it again with --accept to write it, or use `agent-tools serve`, \
     where a later resolve can reach it)";

/// What `call` adds to a result that points to a later call the one-shot
/// process cannot serve: a debug session that ends with it.
fn one_shot_note(tool: &str, op: Option<&str>) -> Option<&'static str> {
    match tool {
        "debug" if matches!(op, Some("launch" | "attach")) => Some(
            "\n(this command ends here, and the debug session with it: a launched program is ended; \
             use `agent-tools serve` for a session across calls)",
        ),
        _ => None,
    }
}

/// `call`'s arguments, as the command line gives them.
pub(crate) struct Call {
    pub(crate) tool: String,
    pub(crate) args: String,
    pub(crate) root: Option<PathBuf>,
    pub(crate) cap: Tier,
    pub(crate) json: bool,
    pub(crate) ask: bool,
    pub(crate) accept: bool,
}

/// Runs one call and prints its result; the exit status says how it went.
pub(crate) fn call(call: Call, flags: &config::Flags) -> anyhow::Result<u8> {
    let Call { tool, args, root, cap, json, ask, accept } = call;
    if accept && tool != "ast_edit" {
        eprint("agent-tools: --accept is for ast_edit, whose staged change it writes in the same command");
        return Ok(MISUSE);
    }
    let args: serde_json::Value = serde_json::from_str(&args).context("the arguments are not valid JSON")?;
    let op = args.get("op").and_then(|o| o.as_str()).map(str::to_string);
    let workspace = workspace(root)?;
    let config = config::Config::load(workspace.root(), flags)?;
    let settings = &config.settings;
    let ports =
        RunPorts { question: wiring::terminal(), approval: ask.then(|| wiring::terminal_approval(settings).port) };
    let run = wire_run(workspace, settings, cap, ports, Workers::None, &one_shot_host(settings))?;
    let runtime = runtime()?;
    let surface = run.surface();
    let progress = std::io::stderr().is_terminal().then(terminal_progress);
    // Ctrl-C cancels the call as a client's cancellation does: its
    // future is dropped, which stops its work (an eval's kernel is
    // killed before the process exits). Blocking work already under way gets 3 s to
    // end: enough for `resolve`'s all-or-nothing write, and short, as
    // a terminal prompt (`ask_user`, `--ask`) blocks on stdin until then.
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = surface.try_call_with_progress(&tool, args, progress.clone()) => Some(outcome),
            Ok(()) = tokio::signal::ctrl_c() => None,
        }
    });
    if progress.is_some() {
        clear_progress_line();
    }
    let Some(outcome) = outcome else {
        eprint(&format!("agent-tools: {tool} cancelled (Ctrl-C)"));
        // The cancelled cell's interrupt → grace → kill runs on a task of its own; the
        // process must not exit before its kernel is gone, however loaded the machine.
        runtime.block_on(async {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), run.close()).await;
        });
        runtime.shutdown_timeout(std::time::Duration::from_secs(3));
        return Ok(CANCELLED);
    };
    match outcome? {
        Err(refusal) => {
            eprint(&refusal.to_string());
            Ok(MISUSE)
        }
        Ok(mut result) if !result.is_error && tool == "ast_edit" => {
            let edit_id = result.structured.as_ref().and_then(|s| s["edit_id"].as_str()).map(str::to_string);
            match edit_id {
                Some(edit_id) if accept => {
                    print_result(&result, json)?;
                    let resolve = serde_json::json!({ "edit_id": edit_id, "action": "accept" });
                    let accepted = runtime.block_on(surface.call_with_progress("resolve", resolve, None))?;
                    print_result(&accepted, json)?;
                    Ok(if accepted.is_error { TOOL_ERROR } else { SUCCESS })
                }
                Some(_) => {
                    // The staged change lives in this process: no later resolve can reach it.
                    result.text.push_str(ONE_SHOT_STAGED);
                    print_result(&result, json)?;
                    Ok(SUCCESS)
                }
                None => {
                    print_result(&result, json)?;
                    Ok(SUCCESS)
                }
            }
        }
        Ok(mut result) => {
            if !result.is_error
                && let Some(note) = one_shot_note(&tool, op.as_deref())
            {
                result.text.push_str(note);
            }
            print_result(&result, json)?;
            Ok(if result.is_error { TOOL_ERROR } else { SUCCESS })
        }
    }
}
