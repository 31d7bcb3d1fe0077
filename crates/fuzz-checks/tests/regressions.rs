//! Every fuzz target's check over its seed inputs (real code read in place, and
//! well-formed protocol streams), and over every input the fuzzer ever crashed on
//! (`fixtures/fuzz/TARGET/*`), so a defect once found stays fixed.

use std::path::{Path, PathBuf};

use fuzz_checks::TARGETS;

fn fixtures(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fuzz").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn replay(target: &str, what: &str, input: &[u8]) {
    let check = TARGETS.iter().find(|t| t.name == target).map(|t| t.check);
    let Some(check) = check else { panic!("no target {target}") };
    if let Err(panic) = std::panic::catch_unwind(|| check(input)) {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        panic!("{target} failed on {what}: {message}");
    }
}

#[test]
fn every_target_holds_on_its_seeds() {
    for target in TARGETS {
        let seeds = fuzz_checks::seeds(target.name);
        assert!(seeds.len() >= 2, "{}: only {} seeds", target.name, seeds.len());
        for (n, seed) in seeds.iter().enumerate() {
            replay(target.name, &format!("seed {n}"), seed);
        }
    }
}

#[test]
fn the_code_seeds_are_real_code_in_several_languages() {
    // The text targets' seeds come from the Python standard library, the cargo registry,
    // TypeScript's lib, Go's standard library, the Python headers and node_modules.
    let seeds = fuzz_checks::seeds("rewrite_stage");
    let mut languages: Vec<u8> = seeds.iter().map(|seed| seed[0]).collect();
    languages.sort_unstable();
    languages.dedup();
    let required = if std::env::var_os("CI").is_some() { 6 } else { 2 };
    assert!(languages.len() >= required, "seeds in only {} languages", languages.len());
    assert!(seeds.len() >= 100, "only {} code seeds", seeds.len());
}

#[test]
fn every_input_the_fuzzer_crashed_on_now_passes() {
    for target in TARGETS {
        for file in fixtures(target.name) {
            let input = std::fs::read(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
            replay(target.name, &file.display().to_string(), &input);
        }
    }
}
