//! The table of settings in docs/config.md, made from the definition: a unit
//! test checks the file holds it as made, and rewrites it with `UPDATE_EXPECT=1`.

use super::settings::Settings;

/// The line before the table in docs/config.md.
pub const BEGIN: &str = "<!-- the settings table: made by `Settings::rows` (crates/agent-tools-cli/src/config/settings.rs); \
                         UPDATE_EXPECT=1 cargo test -p agent-tools-cli --lib config::docs rewrites it -->";
/// The line after it.
pub const END: &str = "<!-- end of the settings table -->";

/// The table, in Markdown: a row per setting, in the definition's order.
pub fn table() -> String {
    let mut out =
        String::from("| key | type | default | environment variable | what it sets |\n|---|---|---|---|---|\n");
    for row in Settings::rows() {
        let default = if row.default.starts_with('(') || row.default == "none" {
            row.default
        } else {
            format!("`{}`", row.default)
        };
        out.push_str(&format!("| `{}` | {} | {default} | `{}` | {} |\n", row.key, row.expected, row.env, row.doc));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_docs_table_of_settings_is_the_one_the_definition_makes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
        let docs = std::fs::read_to_string(&path).unwrap();
        let start = docs.find(BEGIN).expect("docs/config.md has the settings table's first marker") + BEGIN.len() + 1;
        let end = start + docs[start..].find(END).expect("docs/config.md has the settings table's last marker");
        let made = table();
        if docs[start..end] == made {
            return;
        }
        if std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1") {
            std::fs::write(&path, format!("{}{made}{}", &docs[..start], &docs[end..])).unwrap();
            return;
        }
        panic!(
            "docs/config.md's settings table is not the one the definition makes; \
             UPDATE_EXPECT=1 cargo test -p agent-tools-cli --lib config::docs rewrites it. It should be:\n{made}"
        );
    }
}
