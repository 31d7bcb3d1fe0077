//! Runs one search and prints the count and time:
//! `cargo run --release -p astmatch --example search -- LANG 'PATTERN' DIR [--no-prefilter]`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lang = astmatch::Lang::from_id(&args[1]).unwrap();
    let dir = std::path::Path::new(&args[3]);
    let prefilter = !args.iter().any(|a| a == "--no-prefilter");
    let options = astmatch::SearchOptions { lang: Some(lang), max_results: 5, prefilter, ..Default::default() };
    let start = std::time::Instant::now();
    let report = astmatch::search(dir, dir, &args[2], &options).unwrap();
    println!(
        "{} matches in {} files ({} searched, {} skipped) in {:?}, context {}",
        report.total,
        report.files_matched,
        report.files_searched,
        report.skipped.total(),
        start.elapsed(),
        report.context
    );
    for m in &report.matches {
        println!("{}:{}:{}: {}", m.file.display(), m.line, m.column, m.text.lines().next().unwrap_or(""));
    }
}
