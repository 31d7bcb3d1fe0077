//! `cargo xtask faults`: the fault suite, one table of rows over the fixture
//! language server (`faults_lsp.rs`), the fixture debug adapter
//! (`faults_dap.rs`), the real Python kernel (`faults_kernel.rs`), the
//! roster's command workers (`faults_vibe.rs`), and a kernel inside a real
//! container under runc and gVisor (`faults_engine.rs`).
//!
//! Each row injects one fault, makes one tool call through the facade's
//! `Surface` (what the model would see), and checks four things:
//! 1. **ends**: the call returns within its budget (the timeout the row sets)
//!    plus a margin, with the error or answer the row expects — never an empty
//!    answer and never a success the fault should have prevented;
//! 2. **no leftovers**: no process of the fault is left, checked by pid and by
//!    process group of every process the row saw, and by a marker in the
//!    environment (`AGENT_TOOLS_FAULT_ROW`, inherited by every process the row
//!    starts, so one that left its group by `setsid` is found too) — once after
//!    the call (the processes of a healthy restart excepted) and once after the
//!    row's resources are shut down (none excepted);
//! 3. **next works**: the next call of the same tool gets its right answer;
//! 4. **status**: what the tool's status says afterwards is true (restarts,
//!    the last exit, a dead or a new kernel, a stopped worker).
//!
//! The table is `rows()`; `cargo xtask faults` runs every row in turn and
//! prints it, and `cargo test -p xtask-suites` runs the same rows (with a wider
//! margin, since timing must not decide a test: there a call fails check 1
//! only when it hangs well past its budget).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::fault_row::{Ctx, Report, Row, Verdict};

/// How a run is asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rows whose system or fault contains this text only.
    pub only: Option<String>,
}

impl Options {
    pub fn parse(args: &[&str]) -> Result<Options> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match *arg {
                "--only" => options.only = Some(args.next().context("--only needs a text")?.to_string()),
                other => bail!("unknown option `{other}` (expected --only TEXT)"),
            }
        }
        Ok(options)
    }
}

/// The whole table.
pub fn rows() -> Vec<Row> {
    let mut rows = crate::faults_lsp::rows();
    rows.extend(crate::faults_dap::rows());
    rows.extend(crate::faults_kernel::rows());
    rows.extend(crate::faults_vibe::rows());
    rows.extend(crate::faults_engine::rows());
    rows
}

/// The fixture binaries' directory: beside this executable, or above its `deps/`.
pub fn fixture_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let mut dir = exe.parent().context("no executable directory")?.to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    for binary in ["fixture-lsp-server", "fixture-dap-adapter"] {
        if !dir.join(binary).is_file() {
            bail!("{} has no {binary}: run `cargo xtask fixtures` first", dir.display());
        }
    }
    Ok(dir)
}

/// Runs the rows (those `options` selects) one after the other, each with a fresh marker.
pub fn run_rows(options: &Options, margin: Duration) -> Result<Vec<(usize, Report)>> {
    let bin_dir = fixture_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rows = rows();
    let mut out = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        if let Some(only) = &options.only
            && !row.system.contains(only.as_str())
            && !row.fault.contains(only.as_str())
        {
            continue;
        }
        let ctx = Ctx { marker: marker(index), margin, bin_dir: bin_dir.clone() };
        let report = runtime.block_on((row.run)(ctx)).unwrap_or_else(|error| Report {
            ends: Some(Err(format!("the row could not run: {error:#}"))),
            ..Report::default()
        });
        out.push((index, report));
    }
    Ok(out)
}

fn marker(index: usize) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("row{index}-{}-{nanos}", std::process::id())
}

/// The table as text: one line per row, then the totals.
pub fn render(results: &[(usize, Report)]) -> String {
    let rows = rows();
    let mut out = String::new();
    let mark = |v: &Option<Verdict>| match v {
        Some(Ok(())) => "pass",
        Some(Err(_)) => "FAIL",
        None => "—",
    };
    let _ = writeln!(
        out,
        "{:<18} {:<47} {:<66} {:>6} {:>6}  {:<5} {:<5} {:<5} {:<5}",
        "system", "fault", "call → expected", "ms", "budget", "ends", "procs", "next", "status"
    );
    for (index, report) in results {
        let row = &rows[*index];
        let _ = writeln!(
            out,
            "{:<18} {:<47} {:<66} {:>6} {:>6}  {:<5} {:<5} {:<5} {:<5}",
            row.system,
            row.fault,
            format!("{} → {}", row.call, row.expected),
            report.elapsed.as_millis(),
            report.budget.as_millis(),
            mark(&report.ends),
            mark(&report.no_leftovers),
            mark(&report.next_works),
            mark(&report.status),
        );
        for (name, verdict) in ["ends", "procs", "next", "status"].iter().zip(report.verdicts()) {
            match verdict {
                Some(Err(why)) => {
                    let _ = writeln!(out, "    {name}: {why}");
                }
                None => {
                    let _ = writeln!(out, "    {name}: not reached");
                }
                Some(Ok(())) => {}
            }
        }
    }
    let passed = results.iter().filter(|(_, r)| r.passed()).count();
    let leaked: usize = results.iter().map(|(_, r)| r.leaked.len()).sum();
    let _ = writeln!(out, "\nrows passed: {passed}/{}; processes leaked: {leaked}", results.len());
    if let Some((slowest, report)) = results.iter().max_by_key(|(_, r)| r.elapsed) {
        let total: Duration = results.iter().map(|(_, r)| r.elapsed).sum();
        let _ = writeln!(
            out,
            "faulty calls: {} ms in all, slowest {} ms ({}: {})",
            total.as_millis(),
            report.elapsed.as_millis(),
            rows[*slowest].system,
            rows[*slowest].fault
        );
    }
    out
}

/// `cargo xtask faults`: runs the table, prints it, fails if a row failed.
pub fn run(options: &Options) -> Result<()> {
    let started = Instant::now();
    let results = run_rows(options, Duration::from_secs(2))?;
    print!("{}", render(&results));
    println!("wall time: {:.1} s", started.elapsed().as_secs_f64());
    let failed: Vec<String> = results
        .iter()
        .filter(|(_, r)| !r.passed())
        .map(|(i, _)| {
            let rows = rows();
            format!("{}: {}", rows[*i].system, rows[*i].fault)
        })
        .collect();
    if !failed.is_empty() {
        bail!("{} row(s) failed: {}", failed.len(), failed.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of the table passes all four checks, and no process is left.
    /// The margin is wide: a call fails check 1 here only when it hangs.
    #[test]
    fn every_fault_row_passes_all_four_checks() -> Result<()> {
        let results = run_rows(&Options::default(), Duration::from_secs(20))?;
        let table = render(&results);
        assert_eq!(results.len(), rows().len(), "{table}");
        assert!(results.iter().all(|(_, r)| r.passed()), "{table}");
        assert!(results.iter().all(|(_, r)| r.leaked.is_empty()), "{table}");
        Ok(())
    }
}
