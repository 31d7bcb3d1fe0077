//! The `settings!` macro: from one declaration per key (`name: Type = default`
//! under its doc comment, in its section) it makes everything else, so adding
//! a setting is one field:
//!
//! - `Settings`, a struct per section holding each value beside its source,
//!   read by the code as typed fields (`settings.lsp.outline_cap`);
//! - the section's keys as constants (`VibeSettings::fast_cmd`), for the flags that set one;
//! - `Layer`, what one layer says, and `Layer::read`, which hands a key to its field;
//! - `Settings::defaults`, `merge` (a layer over the ones below), `resolve`
//!   (relative paths made the root's), `keys` (for hints and the environment),
//!   `entries` (what `agent-tools config` lists) and `rows` (the docs' table).
//!
//! How each field is read, merged and shown is its type's ([`Setting`](super::field::Setting)).

use std::fmt;

/// A setting's key, `section.name`, as the definition makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(pub(crate) &'static str);

impl Key {
    /// The key as text, `section.name` (`eval.timeout_s`).
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// What of `rest` (a key without its section) is below the field `name`:
/// `Some(None)` for the field's own key, `Some(Some("zig"))` for `name.zig`.
pub(crate) fn below<'a>(rest: &'a str, name: &str) -> Option<Option<&'a str>> {
    match rest.strip_prefix(name)? {
        "" => Some(None),
        more => more.strip_prefix('.').map(Some),
    }
}

/// A doc comment's lines as one line.
pub(crate) fn doc(lines: &[&str]) -> String {
    lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" ")
}

/// A row of the table of settings in docs/config.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The key as the table shows it: `eval.timeout_s`, `lsp.servers.LANG`
    /// for a value per language, `[[lsp.server]]` for a list of tables.
    pub key: String,
    /// What a value must be, as a refusal words it (`a positive number of seconds`).
    pub expected: &'static str,
    /// The default as the table shows it: strings quoted, `(unset)` for none,
    /// `none` for a list of tables.
    pub default: String,
    /// The environment variable that sets it, `AGENT_TOOLS_` and the key in
    /// capitals with `_` for `.` (`AGENT_TOOLS_EVAL_TIMEOUT_S`).
    pub env: String,
    /// The setting's doc comment, its lines joined by spaces.
    pub doc: String,
}

macro_rules! settings {
    (
        let $leaf:ident = $leaf_init:expr;
        $(
            $(#[doc = $section_doc:literal])*
            $section:ident: $Section:ident, $SectionLayer:ident {
                $(
                    $(#[doc = $doc:literal])+
                    $field:ident: $ty:ty = $default:expr,
                )*
            }
        )*
    ) => {
        /// Every setting of a run, by section, each value beside where it came from.
        #[derive(Debug, Clone)]
        pub struct Settings {
            $( $(#[doc = $section_doc])* pub $section: $Section, )*
        }

        $(
            $(#[doc = $section_doc])*
            #[derive(Debug, Clone)]
            pub struct $Section {
                $( $(#[doc = $doc])+ pub $field: <$ty as $crate::config::field::Setting>::Held, )*
            }

            /// The keys, for the flags that set one.
            #[allow(non_upper_case_globals)]
            impl $Section {
                $(
                    #[doc = concat!("`", stringify!($section), ".", stringify!($field), "`")]
                    pub const $field: $crate::config::define::Key =
                        $crate::config::define::Key(concat!(stringify!($section), ".", stringify!($field)));
                )*
            }

            #[derive(Default)]
            pub(crate) struct $SectionLayer {
                $( $field: <$ty as $crate::config::field::Setting>::Layer, )*
            }
        )*

        /// What one layer (the file, the environment or the flags) says.
        #[derive(Default)]
        pub(crate) struct Layer {
            $( $section: $SectionLayer, )*
        }

        impl Layer {
            /// Reads `key`'s value into the field that takes the key; `None` when none does.
            pub(crate) fn read(
                &mut self,
                key: &str,
                given: $crate::config::read::Given<'_>,
            ) -> Option<anyhow::Result<()>> {
                use $crate::config::field::Setting;
                let (section, rest) = key.split_once('.')?;
                $(
                    if section == stringify!($section) {
                        $(
                            if let Some(below) = $crate::config::define::below(rest, stringify!($field))
                                && <$ty as Setting>::takes(below)
                            {
                                return Some(<$ty as Setting>::read(&mut self.$section.$field, key, given));
                            }
                        )*
                    }
                )*
                None
            }
        }

        impl Settings {
            /// The built-in defaults.
            pub(crate) fn defaults() -> Settings {
                use $crate::config::field::Setting;
                let $leaf = $leaf_init;
                Settings { $( $section: $Section { $( $field: <$ty as Setting>::hold($default), )* }, )* }
            }

            /// `layer` over what the layers below it said.
            pub(crate) fn merge(&mut self, layer: Layer) {
                use $crate::config::field::Setting;
                $( $( <$ty as Setting>::merge(&mut self.$section.$field, layer.$section.$field); )* )*
            }

            /// Paths given relative, made `root`'s.
            pub(crate) fn resolve(&mut self, root: &std::path::Path) {
                use $crate::config::field::Setting;
                $( $( <$ty as Setting>::resolve(&mut self.$section.$field, root); )* )*
            }

            /// Every key: those of one value, in order (with the languages
            /// adopted), and those of the lists.
            pub(crate) fn keys(&self) -> (Vec<String>, Vec<String>) {
                use $crate::config::field::Setting;
                let (mut keys, mut lists) = (Vec::new(), Vec::new());
                $( $(
                    let these = <$ty as Setting>::keys(&self.$section.$field, concat!(stringify!($section), ".", stringify!($field)));
                    if <$ty as Setting>::LIST { lists.extend(these) } else { keys.extend(these) }
                )* )*
                (keys, lists)
            }

            /// Every value, as `agent-tools config` lists them.
            pub fn entries(&self) -> Vec<$crate::config::field::Entry> {
                use $crate::config::field::Setting;
                let (mut out, mut tail) = (Vec::new(), Vec::new());
                $( $(
                    <$ty as Setting>::entries(
                        &self.$section.$field,
                        concat!(stringify!($section), ".", stringify!($field)),
                        &$crate::config::define::doc(&[$($doc),+]),
                        &mut out,
                        &mut tail,
                    );
                )* )*
                out.extend(tail);
                out
            }

            /// The table of settings of docs/config.md, a row per field.
            pub fn rows() -> Vec<$crate::config::define::Row> {
                use $crate::config::field::Setting;
                let defaults = Settings::defaults();
                let mut rows = Vec::new();
                $( $(
                    let key = concat!(stringify!($section), ".", stringify!($field));
                    let (shown, expected, default) = <$ty as Setting>::row(&defaults.$section.$field, key);
                    rows.push($crate::config::define::Row {
                        env: $crate::config::env::env_var(shown.trim_matches(['[', ']'])),
                        key: shown,
                        expected,
                        default,
                        doc: $crate::config::define::doc(&[$($doc),+]),
                    });
                )* )*
                rows
            }
        }
    };
}

pub(crate) use settings;
