//! Empty: it makes `[build-dependencies]` count, so that the host's syn is resolved with the
//! features maturin's builds give it (see Cargo.toml).

fn main() {}
