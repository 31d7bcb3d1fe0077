//! Prints the tree-sitter tree of a snippet: `cargo run -p astmatch --example tree -- LANG 'CODE'`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lang = astmatch::Lang::from_id(&args[1]).unwrap();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).unwrap();
    let tree = parser.parse(&args[2], None).unwrap();
    println!("{}", tree.root_node().to_sexp());
}
