//! `cargo xtask trials`: the parts of the trials (`resolve`'s write in `trials.rs`,
//! `lsp_rename`'s in `trials_rename.rs`) run in turn, their figures printed.

use anyhow::{Result, bail};

use crate::trials::{Figures, Options, Part};

/// Runs one part's trials.
type RunPart = fn(&Options) -> Result<Figures>;

/// `cargo xtask trials`: runs them and prints the figures; fails if any trial went wrong.
pub fn run(options: &Options) -> Result<()> {
    let mut failed = Vec::new();
    let parts: [(Part, &str, RunPart); 3] = [
        (Part::Resolve, "resolve", crate::trials::run_trials),
        (Part::Rename, "lsp_rename (generated edits)", crate::trials_rename::run_trials),
        (Part::RenameServer, "lsp_rename (fixture server)", crate::trials_rename::run_server_trials),
    ];
    for (part, name, run_part) in parts {
        if options.only.is_some_and(|only| only != part) {
            continue;
        }
        println!("{name} trials: {} with seed {}", options.count, options.seed);
        let started = std::time::Instant::now();
        let figures = run_part(options)?;
        print!("{}", figures.render());
        println!("wall time: {:.1} s\n", started.elapsed().as_secs_f64());
        if figures.partial > 0 || figures.wrong > 0 {
            failed
                .push(format!("{name}: {} partial application(s), {} wrong result(s)", figures.partial, figures.wrong));
        }
    }
    if !failed.is_empty() {
        bail!("{}; replay with --seed {}", failed.join("; "), options.seed);
    }
    Ok(())
}
