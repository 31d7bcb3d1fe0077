//! `apply_patch`: the `*** Begin Patch` format parsed and applied (placement,
//! line endings, loose matches, refusals), the tool over a real directory (all
//! or nothing, add/delete/move, escapes), `edit` on CRLF files, and round trips over real code read in place —
//! the Python standard library and the cargo registry — with patches made by
//! `similar` from real changes.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_tools::tools::files::{ApplyPatch, ApplyPatchInput};
use agent_tools::tools::patch::{self, Section};
use agent_tools::{Registry, Tier, Tool as _, ToolResult, Workspace};
use serde_json::json;

// ---------------------------------------------------------------------------
// The format: parsing.

fn hunks_of(body: &str) -> Vec<patch::Hunk> {
    let text = format!("*** Begin Patch\n*** Update File: f.txt\n{body}\n*** End Patch\n");
    match patch::parse(&text).unwrap().sections.remove(0) {
        Section::Update { hunks, .. } => hunks,
        other => panic!("{other:?}"),
    }
}

/// Parses `text` and expects the error `expected` (its Display).
fn check_parse_error(text: &str, expected: &str) {
    assert_eq!(patch::parse(text).unwrap_err().to_string(), expected, "patch:\n{text}");
}

#[test]
fn parses_every_section_kind() {
    let text = "\
*** Begin Patch
*** Add File: src/new.py
+def f():
+    return 1
+
*** Delete File: old.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-    print(\"Hi\")
+    print(\"Hello\")
*** Update File: tail.txt
@@
 last
+after
*** End of File
*** End Patch";
    let parsed = patch::parse(text).unwrap();
    let paths: Vec<&str> = parsed.sections.iter().map(Section::path).collect();
    assert_eq!(paths, ["src/new.py", "old.txt", "src/app.py", "tail.txt"]);
    assert_eq!(
        parsed.sections[0],
        Section::Add {
            path: "src/new.py".into(),
            lines: vec!["def f():".into(), "    return 1".into(), "".into()],
            at: 2
        }
    );
    let Section::Update { move_to, hunks, at, .. } = &parsed.sections[2] else { panic!() };
    assert_eq!((move_to.as_deref(), *at), (Some("src/main.py"), 7));
    assert_eq!(hunks[0].anchor.as_deref(), Some("def greet():"));
    assert_eq!(
        hunks[0].lines,
        [patch::Line::Removed("    print(\"Hi\")".into()), patch::Line::Added("    print(\"Hello\")".into())]
    );
    let Section::Update { hunks, .. } = &parsed.sections[3] else { panic!() };
    assert!(hunks[0].end_of_file && hunks[0].anchor.is_none());
}

#[test]
fn parsing_is_lenient_where_models_slip() {
    // A here-document wrapper, blank lines and padded markers, CRLF patch text.
    let text = "<<'EOF'\r\n\r\n  *** Begin Patch \r\n\r\n*** Update File:  a.py \r\n x\r\n-y\r\n+z\r\n\r\n*** End Patch\r\nEOF\r\n";
    let parsed = patch::parse(text).unwrap();
    let Section::Update { path, hunks, .. } = &parsed.sections[0] else { panic!() };
    assert_eq!(path, "a.py");
    // The first hunk may omit `@@`; the bare blank line before the end marker is a trailing blank.
    assert_eq!((hunks.len(), hunks[0].anchor.as_deref(), hunks[0].trailing_blank), (1, None, 1));
    // A git-style range is dropped, the text after it kept.
    assert_eq!(hunks_of("@@ -12,7 +12,8 @@ def f():\n-a\n+b")[0].anchor.as_deref(), Some("def f():"));
    assert_eq!(hunks_of("@@ -1 +1 @@\n-a\n+b")[0].anchor, None);
    assert_eq!(hunks_of("@@ -> not a range\n-a\n+b")[0].anchor.as_deref(), Some("-> not a range"));
    // git's no-newline marker is skipped; two hunks split at the second `@@`.
    let hunks = hunks_of("@@\n-a\n\\ No newline at end of file\n+b\n@@ g\n c");
    assert_eq!(hunks.len(), 2);
    assert_eq!(hunks[0].lines, [patch::Line::Removed("a".into()), patch::Line::Added("b".into())]);
    // A bare empty line in the middle of a hunk is an empty context line.
    assert_eq!(hunks_of("@@\n a\n\n-b")[0].lines[1], patch::Line::Context(String::new()));
}

#[test]
fn parse_errors_name_the_line() {
    check_parse_error("", "line 1: the patch is empty; it must start with '*** Begin Patch'");
    check_parse_error("--- a/x\n+++ b/x\n", "line 1: the patch must start with '*** Begin Patch', not '--- a/x'");
    check_parse_error(
        "*** Begin Patch\n*** Add File: a\n+x\n",
        "line 3: the patch must end with '*** End Patch' (was it cut off?)",
    );
    check_parse_error("*** Begin Patch\n*** End Patch", "line 1: the patch has no sections; nothing to do");
    check_parse_error(
        "*** Begin Patch\n*** Update File: a\n*** End Patch",
        "line 2: '*** Update File: a' has no hunks; each change starts with '@@'",
    );
    check_parse_error(
        "*** Begin Patch\n*** Update File: a\n@@\n\tx = 1\n*** End Patch",
        "line 4: '\tx = 1': every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added); an empty context line is ' ' or nothing",
    );
    check_parse_error(
        "*** Begin Patch\n*** Add File: a\n+x\n\n+y\n*** End Patch",
        "line 5: expected a section header ('*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH'), found '+y' (in an Add File section every line starts with '+', an empty line too)",
    );
    check_parse_error(
        "*** Begin Patch\n*** Rename File: a\n*** End Patch",
        "line 2: unknown marker '*** Rename File: a'; a section starts with '*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH'",
    );
    check_parse_error(
        "*** Begin Patch\n*** Delete File:   \n*** End Patch",
        "line 2: '*** Delete File:' names no path",
    );
    check_parse_error(
        "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch",
        "line 4: '*** End of File' must follow a hunk's lines",
    );
    check_parse_error("*** Begin Patch\n*** Update File: a\n@@\n\n*** End Patch", "line 3: this hunk has no lines");
}

// ---------------------------------------------------------------------------
// The format: where hunks apply, and what the text becomes.

/// Applies the hunks of `body` (an Update section's lines) to `original` and
/// expects `expected` and exactly the notes `notes`.
fn check_apply(original: &str, body: &str, expected: &str, notes: &[&str]) {
    let applied = patch::apply_hunks(original, &hunks_of(body)).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(applied.text, expected, "body:\n{body}");
    assert_eq!(applied.notes, notes, "body:\n{body}");
}

/// Expects the hunks of `body` to be refused with (hunk number, message).
fn check_refused(original: &str, body: &str, hunk: usize, message: &str) {
    let err = patch::apply_hunks(original, &hunks_of(body)).unwrap_err();
    assert_eq!((err.hunk, err.message.as_str()), (hunk, message), "body:\n{body}");
}

const TWO_FUNCTIONS: &str = "def a():\n    x = 1\n    return x\n\ndef b():\n    x = 1\n    return x\n";

#[test]
fn hunks_are_placed_in_order_by_their_lines() {
    check_apply("a\nb\nc\n", "@@\n a\n-b\n+B\n c", "a\nB\nc\n", &[]);
    // Two hunks, the second looked for after the first.
    check_apply("a\nb\nc\nd\ne\n", "@@\n a\n-b\n+B\n@@\n d\n-e\n+E", "a\nB\nc\nd\nE\n", &[]);
    // The first match wins, and the result says the lines occur again.
    check_apply(
        TWO_FUNCTIONS,
        "@@\n     x = 1\n-    return x\n+    return x + 1",
        "def a():\n    x = 1\n    return x + 1\n\ndef b():\n    x = 1\n    return x\n",
        &["hunk 1 was applied at line 2, the first match; its lines also occur at line 6"],
    );
    // An @@ line picks the function; the search starts there.
    check_apply(
        TWO_FUNCTIONS,
        "@@ def b():\n     x = 1\n-    return x\n+    return x + 1",
        "def a():\n    x = 1\n    return x\n\ndef b():\n    x = 1\n    return x + 1\n",
        &[],
    );
    // ... and may be the hunk's own first context line.
    check_apply(
        TWO_FUNCTIONS,
        "@@ def b():\n def b():\n-    x = 1\n+    x = 2",
        &TWO_FUNCTIONS.replacen("b():\n    x = 1", "b():\n    x = 2", 1),
        &[],
    );
    // End of File: the occurrence at the end.
    check_apply("x\ny\nx\ny\n", "@@\n x\n-y\n+z\n*** End of File", "x\ny\nx\nz\n", &[]);
    // A hunk of only added lines: after its @@ line, else at the end.
    check_apply(
        TWO_FUNCTIONS,
        "@@ def b():\n+    \"\"\"B.\"\"\"",
        &TWO_FUNCTIONS.replace("def b():\n", "def b():\n    \"\"\"B.\"\"\"\n"),
        &[],
    );
    check_apply("a\n", "@@\n+b\n+c", "a\nb\nc\n", &[]);
    check_apply("", "@@\n+first", "first\n", &[]);
    // Removing every line leaves an empty file.
    check_apply("a\nb\n", "@@\n-a\n-b", "", &[]);
}

#[test]
fn loose_matches_keep_the_files_own_lines_and_say_so() {
    // Trailing spaces in the file: the file's context line stays as it was.
    check_apply(
        "a  \nb\n",
        "@@\n a\n-b\n+B",
        "a  \nB\n",
        &["hunk 1 matched at line 1 only with trailing whitespace ignored; the file's own context lines were kept"],
    );
    // Tabs in the file, spaces in the hunk.
    check_apply(
        "if x:\n\ty = 1\n\tz = 2\n",
        "@@\n if x:\n-    y = 1\n+\ty = 3\n     z = 2",
        "if x:\n\ty = 3\n\tz = 2\n",
        &[
            "hunk 1 matched at line 1 only with indentation ignored; the file's own context lines were kept, added lines are as the patch gave them",
        ],
    );
    // An exact match anywhere is preferred to a loose one earlier.
    check_apply("a \nb\na\nb\n", "@@\n a\n-b\n+B", "a \nb\na\nB\n", &[]);
}

#[test]
fn line_endings_final_newline_and_bom_are_kept() {
    // CRLF stays CRLF, added lines get it too.
    check_apply("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2\n c", "a\r\nB\r\nB2\r\nc\r\n", &[]);
    // A mixed file keeps each kept line's own ending; added lines get the commoner one.
    check_apply("a\r\nb\nc\r\nd\r\n", "@@\n b\n+x", "a\r\nb\nx\r\nc\r\nd\r\n", &[]);
    // No final newline: none after the change either, wherever the last line now is.
    check_apply("a\nb", "@@\n a\n-b\n+B", "a\nB", &[]);
    check_apply("a\nb", "@@\n b\n+c\n*** End of File", "a\nb\nc", &[]);
    check_apply("a\nb\n", "@@\n b\n+c\n*** End of File", "a\nb\nc\n", &[]);
    check_apply("a\nb", "@@\n a\n-b", "a", &[]);
    // A byte-order mark stays in front and does not stop the first line matching.
    check_apply("\u{feff}a\nb\n", "@@\n a\n-b\n+B", "\u{feff}a\nB\n", &[]);
}

#[test]
fn blank_lines_in_hunks() {
    // A bare empty line is an empty context line...
    check_apply("a\n\nb\n", "@@\n a\n\n-b\n+B", "a\n\nB\n", &[]);
    // ...and bare empty lines ending a hunk are dropped when it does not match with them.
    check_apply("a\nb\nc\n", "@@\n a\n-b\n+B\n\n", "a\nB\nc\n", &[]);
}

#[test]
fn mixed_line_endings_come_back_byte_for_byte() {
    // CRLF, LF and lone-CR lines: each untouched line keeps its own ending; a
    // replaced line keeps the ending of the line it replaces, and a pure
    // addition takes the commonest (CRLF here: 3 of 6).
    const MIXED: &str = "a\r\nb\nc\rd\r\ne\r\nf\n";
    check_apply(MIXED, "@@\n b\n-c\n+C\n+C2\n d", "a\r\nb\nC\rC2\r\nd\r\ne\r\nf\n", &[]);
    // A changed line next to a lone CR: the CR stays where it was.
    check_apply(MIXED, "@@\n c\n-d\n+D", "a\r\nb\nc\rD\r\ne\r\nf\n", &[]);
    // A file of lone CRs only (old Mac text) is patched line by line.
    check_apply("a\rb\rc\r", "@@\n a\n-b\n+B\n c", "a\rB\rc\r", &[]);
    // On a tie the added line takes LF.
    check_apply("a\r\nb\nc\r", "@@\n a\n+x", "a\r\nx\nb\nc\r", &[]);
}

#[test]
fn a_replaced_line_keeps_the_ending_of_the_line_it_replaces() {
    // OpenAI Codex's scenario `tool_preserves_untouched_mixed_line_endings`:
    // CRLF and LF tie, so a pure addition would take LF, but `three` ends in
    // CRLF and `THREE`, which replaces it, does too.
    const CODEX: &str = "one\r\ntwo\nthree\r\nfour\n";
    check_apply(CODEX, "@@\n two\n-three\n+THREE\n four", "one\r\ntwo\nTHREE\r\nfour\n", &[]);
    // The LF line of the same file stays LF when replaced.
    check_apply(CODEX, "@@\n one\n-two\n+TWO\n three", "one\r\nTWO\nthree\r\nfour\n", &[]);
    // Two lines for two: each keeps its own; a third added line is a pure
    // addition and takes the commonest ending (LF on this tie).
    check_apply(CODEX, "@@\n-two\n-three\n+2\n+3\n+3b", "one\r\n2\n3\r\n3b\nfour\n", &[]);
    // Runs are paired separately: context between them ends a run.
    check_apply("a\rb\r\nc\nd\r\n", "@@\n-a\n+A\n b\n-c\n+C\n+C2", "A\rb\r\nC\nC2\r\nd\r\n", &[]);
    // A removed line with no replacement gives its ending to nobody.
    check_apply(CODEX, "@@\n one\n-two\n three\n+3b", "one\r\nthree\r\n3b\nfour\n", &[]);
    // The last line without a final newline, replaced by two: no newline at the end still.
    check_apply("a\r\nb", "@@\n a\n-b\n+B\n+B2", "a\r\nB\r\nB2", &[]);
}

#[test]
fn a_pure_addition_before_other_hunks_goes_at_the_end() {
    // As Codex does: appended at the end of the file, and the next hunk looked
    // for from where the one before ended (here the start).
    check_apply("a\nb\nc\n", "@@\n+z\n@@\n a\n-b\n+B", "a\nB\nc\nz\n", &[]);
    // Two of them stay in the patch's order, after every other change.
    check_apply("a\nb\nc\n", "@@\n+y\n@@\n a\n-b\n+B\n@@\n+z\n@@\n-c\n+C", "a\nB\nC\ny\nz\n", &[]);
    // A missing final newline stays missing.
    check_apply("a\nb", "@@\n+z\n@@\n-a\n+A", "A\nb\nz", &[]);
    // With an @@ line it goes right after that line, and the next hunk comes after it.
    check_apply(
        "def a():\n    x\ndef b():\n    y\n",
        "@@ def a():\n+    \"\"\"A.\"\"\"\n@@\n-    y\n+    z",
        "def a():\n    \"\"\"A.\"\"\"\n    x\ndef b():\n    z\n",
        &[],
    );
}

#[test]
fn typographic_punctuation_matches_last_and_is_named() {
    const KEPT: &str = "; the file's own context lines were kept, added lines are as the patch gave them";
    // An en dash in the file, `-` in the patch: the second hunk matches on the last rung.
    check_apply(
        "def f():\n    return 1\n\n# Range 1\u{2013}10\nlimit = 10\n",
        "@@\n def f():\n-    return 1\n+    return 2\n@@\n # Range 1-10\n-limit = 10\n+limit = 20",
        "def f():\n    return 2\n\n# Range 1\u{2013}10\nlimit = 20\n",
        &[&format!("hunk 2 matched at line 4 only after normalising an en dash on line 4{KEPT}")],
    );
    // A non-breaking hyphen in a removed line.
    check_apply(
        "co\u{2011}op = True\nend\n",
        "@@\n-co-op = True\n+co_op = True\n end",
        "co_op = True\nend\n",
        &[&format!("hunk 1 matched at line 1 only after normalising a non-breaking hyphen on line 1{KEPT}")],
    );
    // Curly quotes in the file, straight ones in the patch: the context line keeps its curly quotes.
    check_apply(
        "msg = \u{201c}don\u{2019}t\u{201d}\nend\n",
        "@@\n msg = \"don't\"\n-end\n+END",
        "msg = \u{201c}don\u{2019}t\u{201d}\nEND\n",
        &[&format!(
            "hunk 1 matched at line 1 only after normalising a left double quote, a right single quote and a right double quote on line 1{KEPT}"
        )],
    );
    // A non-breaking space in the file where the patch has a space.
    check_apply(
        "x\u{a0}= 1\ny = 2\n",
        "@@\n x = 1\n-y = 2\n+y = 3",
        "x\u{a0}= 1\ny = 3\n",
        &[&format!("hunk 1 matched at line 1 only after normalising a non-breaking space on line 1{KEPT}")],
    );
    // The other way round: the typographic character is in the patch.
    check_apply(
        "a - b\nc\n",
        "@@\n a \u{2013} b\n-c\n+C",
        "a - b\nC\n",
        &[&format!("hunk 1 matched at line 1 only after normalising an en dash in the patch on line 1{KEPT}")],
    );
    // An exact match further down is preferred to a normalised one earlier.
    check_apply("a \u{2013} b\nc\na - b\nc\n", "@@\n a - b\n-c\n+C", "a \u{2013} b\nc\na - b\nC\n", &[]);
    // With a lone-CR line in the context: its CR and curly quotes are kept.
    check_apply(
        "x = \u{2018}a\u{2019}\ry\rz\r",
        "@@\n x = 'a'\n-y\n+Y\n z",
        "x = \u{2018}a\u{2019}\rY\rz\r",
        &[&format!(
            "hunk 1 matched at line 1 only after normalising a left single quote and a right single quote on line 1{KEPT}"
        )],
    );
}

#[test]
fn a_hunk_that_does_not_match_says_where_and_why() {
    check_refused(
        TWO_FUNCTIONS,
        "@@\n def a():\n-    x = 2",
        1,
        "its context and removed lines do not occur in the file; the nearest is at line 1, where 1 of its 2 lines match, then the file has `x = 1` where the hunk has `x = 2`",
    );
    check_refused(TWO_FUNCTIONS, "@@ def c():\n-    x = 1", 1, "its @@ line `def c():` is not in the file");
    // Hunks out of order.
    check_refused(
        TWO_FUNCTIONS,
        "@@ def b():\n-    return x\n+    return 2\n@@\n def a():\n-    x = 1",
        2,
        "its context and removed lines do not occur in the file after the previous hunk (which ends at line 7); they occur at line 1, before that — hunks must come in file order, each after the one before",
    );
    check_refused(
        "x\ny\nz\n",
        "@@\n x\n-y\n*** End of File",
        1,
        "its context and removed lines do not occur in the file at the end of the file; they occur at line 1, which is not the end of the file",
    );
    check_refused(
        "a\nb\n",
        "@@\n b\n-c",
        1,
        "its context and removed lines do not occur in the file; the nearest is at line 2, where 1 of its 2 lines match, then the file ends there",
    );
}

// ---------------------------------------------------------------------------
// The tool over a directory.

fn registry(root: &Path) -> Arc<Registry> {
    let workspace = Workspace::new(root).unwrap();
    Arc::new(Registry::builder().with_file_tools(workspace).build().unwrap())
}

async fn apply(root: &Path, patch: &str) -> ToolResult {
    registry(root).surface(Tier::Write).call("apply_patch", json!({ "patch": patch })).await.unwrap()
}

/// Every file under `root` with its bytes, relative and sorted: the whole tree.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else if path.is_file() {
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/app.py"), "def greet():\n    print(\"Hi\")\n    return None\n").unwrap();
    std::fs::write(dir.path().join("src/util.py"), "def double(x):\r\n    return x * 2\r\n").unwrap();
    std::fs::write(dir.path().join("old.txt"), "old\nlines\n").unwrap();
    dir
}

fn read(root: &Path, name: &str) -> String {
    std::fs::read_to_string(root.join(name)).unwrap()
}

#[tokio::test]
async fn adds_deletes_updates_and_moves_in_one_patch() {
    let dir = project();
    let root = dir.path();
    let result = apply(
        root,
        "*** Begin Patch
*** Add File: pkg/new.py
+NAME = \"new\"
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-    print(\"Hi\")
+    print(\"Hello\")
+    print(\"again\")
*** Update File: ./src/util.py
@@
 def double(x):
-    return x * 2
+    return 2 * x
*** Delete File: old.txt
*** End Patch",
    )
    .await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.text,
        "added pkg/new.py (+1)\nmoved src/app.py \u{2192} src/main.py (+2 \u{2212}1)\nupdated src/util.py (+1 \u{2212}1)\ndeleted old.txt (\u{2212}2)"
    );
    assert_eq!(
        result.structured.unwrap(),
        json!({
            "files": [
                { "action": "added", "path": "pkg/new.py", "added": 1 },
                { "action": "moved", "path": "src/main.py", "from": "src/app.py", "added": 2, "removed": 1 },
                { "action": "updated", "path": "src/util.py", "added": 1, "removed": 1 },
                { "action": "deleted", "path": "old.txt", "added": 0, "removed": 2 },
            ],
            "notes": [],
        })
    );
    let names: Vec<String> = tree(root).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["pkg/new.py", "src/main.py", "src/util.py"]);
    assert_eq!(read(root, "pkg/new.py"), "NAME = \"new\"\n");
    assert_eq!(
        read(root, "src/main.py"),
        "def greet():\n    print(\"Hello\")\n    print(\"again\")\n    return None\n"
    );
    // CRLF kept.
    assert_eq!(read(root, "src/util.py"), "def double(x):\r\n    return 2 * x\r\n");
}

#[tokio::test]
async fn later_sections_see_earlier_ones() {
    let dir = project();
    let root = dir.path();
    let result = apply(
        root,
        "*** Begin Patch\n*** Delete File: old.txt\n*** Add File: old.txt\n+new\n*** Update File: old.txt\n@@\n new\n+more\n*** Update File: src/app.py\n*** Move to: src/b.py\n*** End Patch",
    )
    .await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.text,
        "deleted old.txt (\u{2212}2)\nadded old.txt (+1)\nupdated old.txt (+1 \u{2212}0)\nmoved src/app.py \u{2192} src/b.py"
    );
    assert_eq!(read(root, "old.txt"), "new\nmore\n");
    assert!(!root.join("src/app.py").exists());
    assert_eq!(read(root, "src/b.py"), "def greet():\n    print(\"Hi\")\n    return None\n");
}

/// A patch that must be refused: `expected` is the whole error text, and the
/// tree must be byte for byte as before.
async fn check_tool_refuses(patch: &str, expected: &str) {
    let dir = project();
    let root = dir.path();
    let before = tree(root);
    let result = apply(root, patch).await;
    assert!(result.is_error, "{}", result.text);
    assert_eq!(result.text, expected, "patch:\n{patch}");
    assert_eq!(tree(root), before, "the refused patch wrote something:\n{patch}");
}

#[tokio::test]
async fn refusals_write_nothing() {
    // Each patch starts with sections that would succeed.
    let setup = "*** Begin Patch\n*** Add File: a.py\n+a\n*** Add File: b.py\n+b\n*** Delete File: old.txt\n";
    check_tool_refuses(
        &format!("{setup}*** Add File: src/app.py\n+again\n*** End Patch"),
        "refused: Add File: src/app.py: src/app.py already exists; use Update File to change it, or Delete File first; nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Update File: c.py\n@@\n-x\n*** End Patch"),
        "refused: Update File: c.py: c.py does not exist; use Add File to create it; nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Delete File: c.py\n*** End Patch"),
        "refused: Delete File: c.py: c.py does not exist; nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Update File: old.txt\n@@\n old\n*** End Patch"),
        "refused: Update File: old.txt: old.txt was deleted or moved away earlier in this patch; use Add File to create it; nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Update File: a.py\n*** Move to: src/util.py\n*** End Patch"),
        "refused: Move to: src/util.py: src/util.py already exists; a move does not replace a file (Delete File it first); nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Update File: a.py\n*** Move to: b.py\n*** End Patch"),
        "refused: Move to: b.py: b.py already exists; a move does not replace a file (Delete File it first); nothing was written",
    )
    .await;
    check_tool_refuses(
        &format!("{setup}*** Delete File: src\n*** End Patch"),
        "refused: Delete File: src: 'src' is a directory; nothing was written",
    )
    .await;
}

#[tokio::test]
async fn escapes_and_symlinks_out_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("work")).unwrap();
    std::fs::create_dir_all(base.join("out")).unwrap();
    std::fs::write(base.join("out/secret.py"), "secret\n").unwrap();
    std::os::unix::fs::symlink(base.join("out"), base.join("work/link")).unwrap();
    let root = base.join("work");
    let before = tree(&base);
    for (patch_path, reason) in [
        ("../out/secret.py", "path '../out/secret.py' escapes the working directory ROOT".to_string()),
        ("sub/../../out/secret.py", "path 'sub/../../out/secret.py' escapes the working directory ROOT".to_string()),
        (
            &*base.join("out/secret.py").display().to_string(),
            format!("path '{}' is outside the working directory ROOT", base.join("out/secret.py").display()),
        ),
        (
            "link/secret.py",
            format!(
                "path 'link/secret.py' goes through a symlink to {}, outside the working directory ROOT",
                base.join("out/secret.py").display()
            ),
        ),
    ] {
        let reason = reason.replace("ROOT", &root.display().to_string());
        // After a section that would succeed, as a delete, an update, an add and a move's destination.
        for (section, marker) in [
            (format!("*** Delete File: {patch_path}"), "Delete File:"),
            (format!("*** Update File: {patch_path}\n@@\n-secret\n+mine"), "Update File:"),
            (format!("*** Add File: {patch_path}.new\n+x"), "Add File:"),
            (format!("*** Update File: a.py\n*** Move to: {patch_path}.new"), "Move to:"),
        ] {
            let patch = format!("*** Begin Patch\n*** Add File: a.py\n+a\n{section}\n*** End Patch");
            let result = apply(&root, &patch).await;
            let shown = if marker == "Add File:" || marker == "Move to:" {
                format!("{patch_path}.new")
            } else {
                patch_path.to_string()
            };
            let reason =
                if shown == patch_path { reason.clone() } else { reason.replace("secret.py", "secret.py.new") };
            assert_eq!(result.text, format!("refused: {marker} {shown}: {reason}; nothing was written"));
            assert_eq!(tree(&base), before);
        }
    }
}

#[tokio::test]
async fn a_hunk_that_does_not_match_refuses_the_whole_patch() {
    let dir = project();
    let root = dir.path();
    let app = std::fs::read(root.join("src/app.py")).unwrap();
    let util = std::fs::read(root.join("src/util.py")).unwrap();
    let result = apply(
        root,
        "*** Begin Patch
*** Update File: src/util.py
@@
-    return x * 2
+    return 2 * x
*** Update File: src/app.py
@@ def greet():
     print(\"Hi\")
-    return 0
+    return 1
*** End Patch",
    )
    .await;
    assert!(result.is_error);
    assert_eq!(
        result.text,
        "refused: hunk 1 of src/app.py (patch line 7) does not match: its context and removed lines do not occur in the file after its @@ line (line 1); the nearest is at line 2, where 1 of its 2 lines match, then the file has `return None` where the hunk has `return 0`. The hunk begins:
    @@ def greet():
         print(\"Hi\")
    -    return 0
    +    return 1
nothing was written"
    );
    // Both files byte for byte as they were, the one whose hunk matched too.
    assert_eq!(std::fs::read(root.join("src/app.py")).unwrap(), app);
    assert_eq!(std::fs::read(root.join("src/util.py")).unwrap(), util);
}

#[tokio::test]
async fn a_patch_that_does_not_parse_is_refused() {
    let dir = project();
    let result = apply(dir.path(), "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x\n").await;
    assert_eq!(
        result.text,
        "refused: the patch does not parse: line 4: the patch must end with '*** End Patch' (was it cut off?); nothing was written"
    );
}

#[test]
fn preview_names_every_path_a_move_destination_included() {
    let dir = project();
    let tool = ApplyPatch(Workspace::new(dir.path()).unwrap());
    let input = ApplyPatchInput {
        patch: "*** Begin Patch\n*** Add File: n.py\n+x\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n-a\n+b\n+c\n*** Delete File: old.txt\n*** Update File: n.py\n@@\n+y\n*** End Patch".into(),
    };
    let preview = tool.preview(&input);
    assert_eq!(preview.paths, ["n.py", "src/app.py", "src/main.py", "old.txt"].map(PathBuf::from));
    assert_eq!(
        preview.summary.as_deref(),
        Some(
            "add n.py (+1)\nmove src/app.py \u{2192} src/main.py (+2 \u{2212}1)\ndelete old.txt\nupdate n.py (+1 \u{2212}0)"
        )
    );
    let bad = tool.preview(&ApplyPatchInput { patch: "nope".into() });
    assert!(bad.paths.is_empty());
}

#[test]
fn listed_as_a_destructive_write_tool() {
    let dir = project();
    let registry = registry(dir.path());
    let spec = registry.spec("apply_patch").unwrap();
    assert_eq!((spec.tier, spec.destructive), (Tier::Write, true));
    let read_surface = registry.surface(Tier::Read);
    assert!(read_surface.list().iter().all(|s| s.name != "apply_patch"));
}

#[tokio::test]
async fn a_mixed_file_patched_loosely_through_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let original = "first\r\nsecond\nthird\r// Range 1\u{2013}10\r\nlimit = 10\r\nlast\n";
    std::fs::write(root.join("f.txt"), original).unwrap();
    let result = apply(
        root,
        "*** Begin Patch\n*** Update File: f.txt\n@@\n+appended\n@@\n first\n-second\n+SECOND\n@@\n // Range 1-10\n-limit = 10\n+limit = 20\n*** End Patch",
    )
    .await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.text,
        "updated f.txt (+3 \u{2212}2)\nnote: f.txt: hunk 3 matched at line 4 only after normalising an en dash on line 4; the file's own context lines were kept, added lines are as the patch gave them"
    );
    assert_eq!(
        std::fs::read(root.join("f.txt")).unwrap(),
        "first\r\nSECOND\nthird\r// Range 1\u{2013}10\r\nlimit = 20\r\nlast\nappended\r\n".as_bytes()
    );
}

// ---------------------------------------------------------------------------
// `edit`: in a CRLF file, `\n` in old_string and new_string stands for CRLF.

async fn edit(root: &Path, args: serde_json::Value) -> ToolResult {
    registry(root).surface(Tier::Write).call("edit", args).await.unwrap()
}

/// Edits `f.txt` holding `original` and expects the file's bytes `expected`
/// (unchanged on an error) and the result text `text`.
async fn check_edit(original: &str, args: serde_json::Value, expected: &str, text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("f.txt"), original).unwrap();
    let mut args = args;
    args["path"] = json!("f.txt");
    let result = edit(root, args.clone()).await;
    assert_eq!(result.text, text, "{args}");
    assert_eq!(String::from_utf8(std::fs::read(root.join("f.txt")).unwrap()).unwrap(), expected, "{args}");
}

#[tokio::test]
async fn edit_writes_new_line_breaks_with_the_replaced_texts_ending() {
    // An exact match in a CRLF file, a multi-line new_string: CRLF lines come out.
    check_edit(
        "a\r\nb\r\nc\r\n",
        json!({ "old_string": "b", "new_string": "B\nB2" }),
        "a\r\nB\r\nB2\r\nc\r\n",
        "replaced 1 occurrence in f.txt (new_string's line breaks written as CRLF, as the text it replaces ends)",
    )
    .await;
    // old_string given with CRLF: new_string's bare `\n` follows it; a `\r\n` stays one.
    check_edit(
        "a\r\nb\r\nc\r\n",
        json!({ "old_string": "b\r\n", "new_string": "B\r\nB2\n" }),
        "a\r\nB\r\nB2\r\nc\r\n",
        "replaced 1 occurrence in f.txt (new_string's line breaks written as CRLF, as the text it replaces ends)",
    )
    .await;
    // A mixed file: each occurrence takes the ending of its own line.
    check_edit(
        "x\r\nx\nx\r\n",
        json!({ "old_string": "x", "new_string": "y\nz", "replace_all": true }),
        "y\r\nz\r\ny\nz\ny\r\nz\r\n",
        "replaced 3 occurrences in f.txt (new_string's line breaks written as CRLF, as the text it replaces ends)",
    )
    .await;
    // A last line without an ending: the file's commonest (CR here).
    check_edit(
        "a\rb\rc",
        json!({ "old_string": "c", "new_string": "c\nd" }),
        "a\rb\rc\rd",
        "replaced 1 occurrence in f.txt (new_string's line breaks written as CR, as the text it replaces ends)",
    )
    .await;
    // An LF line, or a new_string without line breaks: written as given, nothing said.
    check_edit(
        "a\r\nb\nc\r\nd\n",
        json!({ "old_string": "b", "new_string": "B\nB2" }),
        "a\r\nB\nB2\nc\r\nd\n",
        "replaced 1 occurrence in f.txt",
    )
    .await;
}

#[tokio::test]
async fn edit_reads_newlines_as_the_files_crlf() {
    check_edit(
        "a\r\nb\r\nc\r\n",
        json!({ "old_string": "a\nb", "new_string": "A\nB\nB2" }),
        "A\r\nB\r\nB2\r\nc\r\n",
        "replaced 1 occurrence in f.txt (matched with the file's CRLF line endings)",
    )
    .await;
    check_edit(
        "x\r\ny\r\nx\r\ny\r\n",
        json!({ "old_string": "x\ny\n", "new_string": "z\n", "replace_all": true }),
        "z\r\nz\r\n",
        "replaced 2 occurrences in f.txt (matched with the file's CRLF line endings)",
    )
    .await;
    check_edit(
        "x\r\ny\r\nx\r\ny\r\n",
        json!({ "old_string": "x\ny", "new_string": "z" }),
        "x\r\ny\r\nx\r\ny\r\n",
        "old_string occurs 2 times in f.txt; give more surrounding text to make it unique, or set replace_all; nothing was changed",
    )
    .await;
    // An exact match needs no translation and says nothing.
    check_edit(
        "a\r\nb\r\n",
        json!({ "old_string": "b", "new_string": "B" }),
        "a\r\nB\r\n",
        "replaced 1 occurrence in f.txt",
    )
    .await;
    // An LF file: no translation, still refused when absent.
    check_edit(
        "a\nb\n",
        json!({ "old_string": "a\r\nb", "new_string": "x" }),
        "a\nb\n",
        "old_string does not occur in f.txt; nothing was changed",
    )
    .await;
    // The structured value carries the note too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\r\nb\r\n").unwrap();
    let result = edit(dir.path(), json!({ "path": "f.txt", "old_string": "a\nb", "new_string": "c" })).await;
    assert_eq!(
        result.structured.unwrap(),
        json!({ "path": "f.txt", "replacements": 1, "note": "matched with the file's CRLF line endings" })
    );
}

// ---------------------------------------------------------------------------
// Real code, read in place: patches made by `similar` from real changes.

/// A patch for `path` taking `old` to `new`, as a model would write it: hunks
/// with 3 lines of context, plain `@@` headers, LF line ends.
fn patch_from_diff(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = format!("*** Begin Patch\n*** Update File: {path}\n");
    for group in diff.grouped_ops(3) {
        out.push_str("@@\n");
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let line = change.value();
                let line = line.strip_suffix('\n').unwrap_or(line);
                let line = line.strip_suffix('\r').unwrap_or(line);
                out.push(sign);
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str("*** End Patch\n");
    out
}

/// The Python standard library's `json/decoder.py`, found through the interpreter.
fn python_json_decoder() -> Option<PathBuf> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import json, os; print(os.path.join(os.path.dirname(json.__file__), 'decoder.py'))"])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    path.is_file().then_some(path)
}

/// Fails under CI, otherwise says what is missing; `None` skips the test.
#[allow(clippy::print_stderr)]
fn require<T>(found: Option<T>, what: &str) -> Option<T> {
    if found.is_none() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{what} is missing");
        eprintln!("{what} is missing here; skipping");
    }
    found
}

#[tokio::test]
async fn a_real_change_to_the_python_json_decoder() {
    let Some(source) = require(python_json_decoder(), "python3 with its json package") else { return };
    let old = std::fs::read_to_string(&source).unwrap();
    // A real change: `raw_decode` reports where the document ended, and the
    // error for a missing value names the position in a second place.
    let before = "            obj, end = self.scan_once(s, idx)
        except StopIteration as err:
            raise JSONDecodeError(\"Expecting value\", s, err.value) from None
";
    let after = "            obj, end = self.scan_once(s, idx)
            self.last_end = end
        except StopIteration as err:
            raise JSONDecodeError(\"Expecting value\", s, err.value) from err
";
    assert_eq!(old.matches(before).count(), 1, "decoder.py changed shape");
    // The removed line occurs three times in the file; only raw_decode's changes.
    assert_eq!(old.matches("err.value) from None").count(), 3, "decoder.py changed shape");
    let new = old.replace(before, after);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("decoder.py"), &old).unwrap();
    let result = apply(dir.path(), &patch_from_diff("decoder.py", &old, &new)).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(result.text, "updated decoder.py (+2 \u{2212}1)");
    assert_eq!(read(dir.path(), "decoder.py"), new);

    // The same change by hand, as a model writes it: an @@ line names the method.
    std::fs::write(dir.path().join("decoder.py"), &old).unwrap();
    let by_hand = "*** Begin Patch
*** Update File: decoder.py
@@     def raw_decode(self, s, idx=0):
         try:
             obj, end = self.scan_once(s, idx)
+            self.last_end = end
         except StopIteration as err:
-            raise JSONDecodeError(\"Expecting value\", s, err.value) from None
+            raise JSONDecodeError(\"Expecting value\", s, err.value) from err
         return obj, end
*** End Patch";
    let result = apply(dir.path(), by_hand).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(read(dir.path(), "decoder.py"), new);

    // As CRLF on disk, the same LF patch leaves a CRLF file.
    std::fs::write(dir.path().join("decoder.py"), old.replace('\n', "\r\n")).unwrap();
    let result = apply(dir.path(), by_hand).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(read(dir.path(), "decoder.py"), new.replace('\n', "\r\n"));
}

/// Rust sources from the cargo registry: a deterministic sample, read in place.
fn registry_sample(count: usize) -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else { return Vec::new() };
    let mut files = Vec::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && std::fs::metadata(&path).is_ok_and(|m| m.len() > 2_000 && m.len() < 200_000)
            {
                files.push(path);
            }
        }
    }
    files.sort();
    let step = (files.len() / count).max(1);
    files.into_iter().step_by(step).take(count).collect()
}

/// A real file with lines changed, removed and added at fixed strides; each
/// changed or added line ends as its neighbour does (some registry files are CRLF).
fn churn(old: &str) -> String {
    let mut out = String::new();
    for (i, line) in old.split_inclusive('\n').enumerate() {
        let (text, ending) = match line.strip_suffix("\r\n") {
            Some(t) => (t, "\r\n"),
            None => match line.strip_suffix('\n') {
                Some(t) => (t, "\n"),
                None => (line, ""),
            },
        };
        match i % 29 {
            3 => continue,
            11 if !ending.is_empty() => out.push_str(&format!("{text} // changed{ending}")),
            19 if !ending.is_empty() => out.push_str(&format!("{line}    let inserted = {i};{ending}")),
            _ => out.push_str(line),
        }
    }
    out
}

#[tokio::test]
async fn round_trips_over_real_rust_sources() {
    let files = registry_sample(100);
    let Some(files) = require((!files.is_empty()).then_some(files), "the cargo registry's sources") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut exact, mut explained) = (0, 0);
    for source in &files {
        let Ok(old) = std::fs::read_to_string(source) else { continue };
        let new = churn(&old);
        if new == old {
            continue;
        }
        std::fs::write(dir.path().join("file.rs"), &old).unwrap();
        let result = apply(dir.path(), &patch_from_diff("file.rs", &old, &new)).await;
        assert!(!result.is_error, "{}: {}", source.display(), result.text);
        let got = read(dir.path(), "file.rs");
        if got == new {
            exact += 1;
        } else {
            // The first match was not the intended place: that is only allowed
            // when the result said the lines occur more than once.
            let notes = result.structured.as_ref().unwrap()["notes"].as_array().unwrap().len();
            assert!(notes > 0, "{}: applied elsewhere without a note:\n{}", source.display(), result.text);
            explained += 1;
        }
    }
    assert!(exact >= files.len() / 2, "only {exact} of {} round-tripped exactly ({explained} explained)", files.len());
}
