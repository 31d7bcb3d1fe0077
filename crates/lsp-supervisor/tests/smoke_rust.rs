#![allow(clippy::unwrap_used)]
mod common;

use lsp_supervisor::Language;

#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_smoke() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"smoke\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn helper() -> u32 { 1 }\n\nfn main() {\n    let x = helper();\n    println!(\"{x}\");\n}\n",
    )
    .unwrap();
    let Some(sup) = common::supervisor(&root, Language::Rust, "rust-analyzer").await else { return };
    let main = root.join("src/main.rs");
    let t = std::time::Instant::now();
    let nav = sup.definition(&main, 4, "helper").await.unwrap();
    eprintln!("definition {:?} in {:?}", nav.locations, t.elapsed());
    let d = sup.diagnostics(&main).await.unwrap();
    eprintln!("diagnostics {:?} in {:?}", d, t.elapsed());
    std::fs::write(
        &main,
        "fn helper() -> u32 { 1 }\n\nfn main() {\n    let x: String = helper();\n    println!(\"{x}\");\n}\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let d = sup.diagnostics_after_write(&main).await.unwrap();
    eprintln!("after write {:?} in {:?}", d, t.elapsed());
    eprintln!("status {:?}", sup.status().await);
    sup.shutdown().await;
}
