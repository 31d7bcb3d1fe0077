//! How closely a hunk's line fits a file's: the ladder of looser fits, from
//! equal as written to equal once typographic punctuation is read as ASCII.

/// How closely a hunk's lines matched the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Equal as written.
    Exact,
    /// Equal once trailing whitespace is ignored.
    IgnoringTrailingSpace,
    /// Equal once leading and trailing whitespace is ignored.
    IgnoringIndentation,
    /// Equal once leading and trailing whitespace is ignored and typographic
    /// dashes, quotes and spaces are read as ASCII ([`plain`]).
    IgnoringPunctuation,
}

pub(super) const LADDER: [Fit; 4] =
    [Fit::Exact, Fit::IgnoringTrailingSpace, Fit::IgnoringIndentation, Fit::IgnoringPunctuation];

/// The loosest rung, for the nearest partial match in an error.
pub(super) const LOOSEST: Fit = Fit::IgnoringPunctuation;

/// The ASCII character a typographic one stands for, and its name for notes;
/// `None` for any other character. The set is Codex's `seek_sequence`
/// normalisation: Unicode dashes and the minus sign, curly and low quotes, and
/// the non-breaking and fixed-width spaces.
pub(super) fn typographic(c: char) -> Option<(char, &'static str)> {
    Some(match c {
        '\u{2010}' => ('-', "a hyphen (U+2010)"),
        '\u{2011}' => ('-', "a non-breaking hyphen"),
        '\u{2012}' => ('-', "a figure dash"),
        '\u{2013}' => ('-', "an en dash"),
        '\u{2014}' => ('-', "an em dash"),
        '\u{2015}' => ('-', "a horizontal bar"),
        '\u{2212}' => ('-', "a minus sign"),
        '\u{2018}' => ('\'', "a left single quote"),
        '\u{2019}' => ('\'', "a right single quote"),
        '\u{201A}' => ('\'', "a low single quote"),
        '\u{201B}' => ('\'', "a reversed single quote"),
        '\u{201C}' => ('"', "a left double quote"),
        '\u{201D}' => ('"', "a right double quote"),
        '\u{201E}' => ('"', "a low double quote"),
        '\u{201F}' => ('"', "a reversed double quote"),
        '\u{00A0}' => (' ', "a non-breaking space"),
        '\u{202F}' => (' ', "a narrow non-breaking space"),
        '\u{2002}' => (' ', "an en space"),
        '\u{2003}' => (' ', "an em space"),
        '\u{2004}'..='\u{2006}' | '\u{2008}' | '\u{205F}' => (' ', "a fixed-width space"),
        '\u{2007}' => (' ', "a figure space"),
        '\u{2009}' => (' ', "a thin space"),
        '\u{200A}' => (' ', "a hair space"),
        '\u{3000}' => (' ', "an ideographic space"),
        _ => return None,
    })
}

/// `c` as the punctuation-normalised rung reads it.
fn plain(c: char) -> char {
    typographic(c).map_or(c, |(ascii, _)| ascii)
}

impl Fit {
    pub(super) fn same(self, file: &str, hunk: &str) -> bool {
        match self {
            Fit::Exact => file == hunk,
            Fit::IgnoringTrailingSpace => file.trim_end() == hunk.trim_end(),
            Fit::IgnoringIndentation => file.trim() == hunk.trim(),
            Fit::IgnoringPunctuation => file.trim().chars().map(plain).eq(hunk.trim().chars().map(plain)),
        }
    }
}
