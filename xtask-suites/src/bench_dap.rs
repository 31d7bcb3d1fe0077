//! `cargo xtask bench dap`: the step round trip through `dap-session` against
//! the same requests sent by a minimal raw DAP client to the same adapter
//! (debugpy on `.tools/venv/bin/python`, or lldb-dap), side by side in one run.
//!
//! One step is `next` → its response and the `stopped` event → `stackTrace`
//! (one frame) → its response: what `step_over` does to say where it stopped.
//! Both sides step through the same loop from the same breakpoint, in the same
//! (xtask-suites) build; rounds alternate. Timing is printed, never asserted.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use dap_session::{AdapterId, DebugConfig, DebugSupervisor, LaunchSpec, Resume, RunOutcome};
use serde_json::{Value, json};

use crate::bench::median;
use crate::setup::venv_bin;

/// How the benchmark runs.
pub(crate) struct Options {
    /// Rounds, each running ours then the raw client (default 3).
    rounds: usize,
    /// Steps timed per round (default 100).
    steps: usize,
    adapter: AdapterId,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { rounds: 3, steps: 100, adapter: AdapterId::Debugpy };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            let value = *it.next().with_context(|| format!("{arg} takes a value"))?;
            match arg {
                "--rounds" => options.rounds = value.parse::<usize>()?.max(1),
                "--steps" => options.steps = value.parse::<usize>()?.max(1),
                "--adapter" => {
                    options.adapter = match value {
                        "debugpy" => AdapterId::Debugpy,
                        "lldb" => AdapterId::Lldb,
                        _ => bail!("--adapter is debugpy or lldb"),
                    }
                }
                _ => bail!("unknown option `{arg}` (use --rounds N, --steps N, --adapter debugpy|lldb)"),
            }
        }
        Ok(options)
    }
}

const PYTHON_PROGRAM: &str = "total = 0\nfor i in range(10000000):\n    total += i\n    total -= 1\nprint(total)\n";
const C_PROGRAM: &str = "#include <stdio.h>\nint main(void) {\n    long total = 0;\n    for (long i = 0; i < 10000000; i++) {\n        total += i;\n        total -= 1;\n    }\n    printf(\"%ld\\n\", total);\n    return 0;\n}\n";

/// A project in a temporary directory: the program, its source, the breakpoint line.
struct Target {
    root: PathBuf,
    source: PathBuf,
    program: PathBuf,
    line: u64,
    /// The adapter command line.
    command: Vec<PathBuf>,
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn target(adapter: AdapterId) -> Result<Target> {
    let dir = std::env::temp_dir().join(format!("xtask-bench-dap-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let root = dir.canonicalize()?;
    match adapter {
        AdapterId::Debugpy => {
            let python = venv_bin("python");
            if !python.exists() {
                bail!("{} is missing: run `cargo xtask setup`", python.display());
            }
            std::fs::write(root.join("requirements.txt"), "")?;
            let source = root.join("main.py");
            std::fs::write(&source, PYTHON_PROGRAM)?;
            let command = vec![python, "-m".into(), "debugpy.adapter".into()];
            Ok(Target { root, program: source.clone(), source, line: 3, command })
        }
        _ => {
            std::fs::write(root.join("CMakeLists.txt"), "project(bench C)\n")?;
            let source = root.join("main.c");
            std::fs::write(&source, C_PROGRAM)?;
            let program = root.join("bench");
            let status = Command::new("cc").arg("-g").arg("-O0").arg("-o").arg(&program).arg(&source).status()?;
            if !status.success() {
                bail!("cc failed");
            }
            let lldb = dap_session::find_in_path("lldb-dap-19", None)
                .or_else(|| dap_session::find_in_path("lldb-dap", None))
                .context("no lldb-dap on PATH: run `cargo xtask setup`")?;
            Ok(Target { root, source, program, line: 5, command: vec![lldb] })
        }
    }
}

pub(crate) fn run(options: &Options) -> Result<()> {
    let target = target(options.adapter)?;
    println!(
        "step round trip (next → stopped → stackTrace), {} steps × {} rounds, adapter {}: {}",
        options.steps,
        options.rounds,
        options.adapter,
        target.command.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut ours = Vec::new();
    let mut raw = Vec::new();
    for round in 1..=options.rounds {
        let a = runtime.block_on(ours_round(&target, options))?;
        let b = raw_round(&target, options)?;
        println!("round {round}: ours median {:.3} ms, raw {:.3} ms", median(&a), median(&b));
        ours.extend(a);
        raw.extend(b);
    }
    let (a, b) = (median(&ours), median(&raw));
    println!();
    println!(
        "median step: dap-session {a:.3} ms, raw client {b:.3} ms; difference {:+.3} ms (goal ≤ +2 ms), ratio {:.2}",
        a - b,
        a / b
    );
    Ok(())
}

async fn ours_round(target: &Target, options: &Options) -> Result<Vec<Duration>> {
    let mut config = DebugConfig::default();
    if options.adapter == AdapterId::Debugpy {
        config.detection.python = Some(target.command[0].clone());
    }
    let debug = DebugSupervisor::new(config);
    debug.set_breakpoints("bench", &target.source, &[target.line]).await?;
    let spec = LaunchSpec { adapter: Some(options.adapter), ..LaunchSpec::new(&target.root, &target.program) };
    let started = debug.launch("bench", spec).await?;
    if !matches!(started.outcome, RunOutcome::Stopped(_)) {
        bail!("ours did not stop at the breakpoint: {:?}", started.outcome);
    }
    let mut times = Vec::with_capacity(options.steps);
    for _ in 0..options.steps {
        let start = Instant::now();
        let outcome = debug.resume("bench", Resume::StepOver, None).await?;
        times.push(start.elapsed());
        match outcome {
            RunOutcome::Stopped(stop) if stop.location.is_some() => {}
            other => bail!("ours: a step ended with {other:?}"),
        }
    }
    debug.terminate("bench").await?;
    Ok(times)
}

/// A minimal blocking DAP client: framing, seq numbers, and a queue of what arrived.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    seq: u64,
    /// Messages read while waiting for something else.
    queue: VecDeque<Value>,
}

impl Raw {
    fn send(&mut self, command: &str, arguments: Value) -> Result<u64> {
        let seq = self.seq;
        self.seq += 1;
        let body = json!({ "seq": seq, "type": "request", "command": command, "arguments": arguments }).to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())?;
        self.stdin.flush()?;
        Ok(seq)
    }

    fn read(&mut self) -> Result<Value> {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("the adapter closed its stdout");
            }
            let line = line.trim_end();
            if line.is_empty() {
                if length > 0 {
                    break;
                }
                continue;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse()?;
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body)?;
        let message: Value = serde_json::from_slice(&body)?;
        if message["type"] == "request" {
            // Reverse requests: refuse, as dap-session does.
            let answer = json!({ "seq": self.seq, "type": "response", "request_seq": message["seq"], "success": false, "command": message["command"], "message": "not supported" }).to_string();
            self.seq += 1;
            write!(self.stdin, "Content-Length: {}\r\n\r\n{answer}", answer.len())?;
            self.stdin.flush()?;
        }
        Ok(message)
    }

    /// Waits for the message `wanted` accepts, keeping the others queued.
    fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Result<Value> {
        if let Some(index) = self.queue.iter().position(&wanted) {
            return Ok(self.queue.remove(index).unwrap_or_default());
        }
        loop {
            let message = self.read()?;
            if wanted(&message) {
                return Ok(message);
            }
            self.queue.push_back(message);
        }
    }

    fn response(&mut self, seq: u64) -> Result<Value> {
        let response = self.wait(|m| m["type"] == "response" && m["request_seq"] == seq)?;
        if response["success"] != true {
            bail!("{} failed: {}", response["command"], response["message"]);
        }
        Ok(response)
    }

    fn event(&mut self, name: &str) -> Result<Value> {
        self.wait(|m| m["type"] == "event" && m["event"] == name)
    }
}

fn raw_round(target: &Target, options: &Options) -> Result<Vec<Duration>> {
    let mut command = Command::new(&target.command[0]);
    command.args(&target.command[1..]).current_dir(&target.root);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = command.spawn()?;
    let stdin = child.stdin.take().context("no stdin")?;
    let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut raw = Raw { child, stdin, stdout, seq: 1, queue: VecDeque::new() };
    let initialize = raw.send(
        "initialize",
        json!({ "clientID": "raw", "adapterID": options.adapter.name(), "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path" }),
    )?;
    raw.response(initialize)?;
    let arguments = match options.adapter {
        AdapterId::Debugpy => {
            json!({ "program": target.program, "cwd": target.root, "console": "internalConsole", "redirectOutput": true, "justMyCode": true })
        }
        _ => json!({ "program": target.program, "cwd": target.root }),
    };
    let launch = raw.send("launch", arguments)?;
    raw.event("initialized")?;
    let breakpoints = raw.send(
        "setBreakpoints",
        json!({ "source": { "path": target.source }, "breakpoints": [{ "line": target.line }] }),
    )?;
    raw.response(breakpoints)?;
    let done = raw.send("configurationDone", json!({}))?;
    raw.response(done)?;
    raw.response(launch)?;
    let stopped = raw.event("stopped")?;
    let thread = stopped["body"]["threadId"].as_u64().unwrap_or(1);
    raw.queue.clear();
    let mut times = Vec::with_capacity(options.steps);
    for _ in 0..options.steps {
        let start = Instant::now();
        let next = raw.send("next", json!({ "threadId": thread }))?;
        raw.response(next)?;
        raw.event("stopped")?;
        let stack = raw.send("stackTrace", json!({ "threadId": thread, "startFrame": 0, "levels": 1 }))?;
        let frames = raw.response(stack)?;
        times.push(start.elapsed());
        if frames["body"]["stackFrames"][0]["line"].as_u64().is_none() {
            bail!("raw: no frame after a step");
        }
        raw.queue.clear();
    }
    let _ = raw.send("disconnect", json!({ "terminateDebuggee": true }));
    std::thread::sleep(Duration::from_millis(200));
    let _ = raw.child.kill();
    let _ = raw.child.wait();
    Ok(times)
}
