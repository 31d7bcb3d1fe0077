//! IPython idioms rewritten into plain Python that calls the driver.
//!
//! `%%name args` on the first line turns the whole cell into one call;
//! `%name args`, `!cmd`, `x = !cmd` and `x = %name args` lines become calls,
//! keeping their indentation and their line number, so tracebacks still point
//! at the cell's own lines. Lines inside strings, brackets or after a
//! backslash continuation are left alone. `!pip …` is treated as `%pip …`.
//! Shell commands are passed through as written: no `{expr}` or `$name`
//! interpolation.

/// Rewrites the IPython idioms in a Python cell; plain code comes back as is.
pub fn rewrite_python(cell: &str) -> String {
    if let Some(rewritten) = cell_magic(cell) {
        return rewritten;
    }
    let mut scan = Scan::default();
    let mut out = String::with_capacity(cell.len());
    for (index, line) in cell.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        if scan.at_statement_start()
            && let Some(rewritten) = rewrite_line(line)
        {
            out.push_str(&rewritten);
            continue;
        }
        scan.line(line);
        out.push_str(line);
    }
    out
}

fn literal(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

fn cell_magic(cell: &str) -> Option<String> {
    let start = cell.len() - cell.trim_start_matches(['\n', '\r', ' ', '\t']).len();
    let first_line_start = cell[..start].rfind('\n').map_or(0, |at| at + 1);
    let rest = &cell[first_line_start..];
    let rest = rest.trim_start_matches([' ', '\t']);
    let header = rest.strip_prefix("%%")?;
    let (first, body) = header.split_once('\n').unwrap_or((header, ""));
    let first = first.trim_end_matches('\r');
    let (name, args) = split_name(first)?;
    Some(format!("__kernel__.cell_magic({}, {}, {})", literal(name), literal(args.trim()), literal(body)))
}

fn split_name(text: &str) -> Option<(&str, &str)> {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    (end > 0).then(|| (&text[..end], &text[end..]))
}

fn rewrite_line(line: &str) -> Option<String> {
    let body = line.trim_start_matches([' ', '\t']);
    let indent = &line[..line.len() - body.len()];
    let body_trimmed = body.trim_end_matches('\r');
    if let Some(call) = magic_call(body_trimmed, false) {
        return Some(format!("{indent}{call}"));
    }
    // `name = !cmd` and `name = %magic args`.
    let target_end = body_trimmed.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))?;
    if target_end == 0 {
        return None;
    }
    let target = &body_trimmed[..target_end];
    let after = body_trimmed[target_end..].trim_start();
    let value = after.strip_prefix('=')?;
    if value.starts_with('=') {
        return None;
    }
    let call = magic_call(value.trim_start(), true)?;
    Some(format!("{indent}{target} = {call}"))
}

fn magic_call(body: &str, capture: bool) -> Option<String> {
    if let Some(command) = body.strip_prefix('!') {
        let command = command.trim();
        if let Some(args) = command.strip_prefix("pip ").or_else(|| command.strip_prefix("pip3 ")) {
            return Some(format!("__kernel__.line_magic(\"pip\", {})", literal(args.trim())));
        }
        let function = if capture { "system_capture" } else { "system" };
        return Some(format!("__kernel__.{function}({})", literal(command)));
    }
    let magic = body.strip_prefix('%')?;
    if magic.starts_with('%') {
        return None;
    }
    let (name, args) = split_name(magic)?;
    Some(format!("__kernel__.line_magic({}, {})", literal(name), literal(args.trim())))
}

/// Tracks whether the next line starts a new statement.
#[derive(Default)]
struct Scan {
    triple: Option<char>,
    depth: i32,
    continued: bool,
}

impl Scan {
    fn at_statement_start(&self) -> bool {
        self.triple.is_none() && self.depth <= 0 && !self.continued
    }

    fn line(&mut self, line: &str) {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        self.continued = false;
        while i < chars.len() {
            let c = chars[i];
            if let Some(quote) = self.triple {
                if c == '\\' {
                    i += 2;
                    continue;
                }
                if c == quote && chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                    self.triple = None;
                    i += 3;
                    continue;
                }
                i += 1;
                continue;
            }
            match c {
                '#' => break,
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth -= 1,
                '\'' | '"' => {
                    if chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c) {
                        self.triple = Some(c);
                        i += 3;
                        continue;
                    }
                    i += 1;
                    while i < chars.len() && chars[i] != c {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                '\\' if i + 1 == chars.len() || (i + 2 == chars.len() && chars[i + 1] == '\r') => {
                    self.continued = true;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_python;

    fn check(input: &str, expected: &str) {
        assert_eq!(rewrite_python(input), expected, "input: {input:?}");
    }

    #[test]
    fn line_magics() {
        check("%cd /tmp", r#"__kernel__.line_magic("cd", "/tmp")"#);
        check("%pip install ./pkg", r#"__kernel__.line_magic("pip", "install ./pkg")"#);
        check("if x:\n    %time f()", "if x:\n    __kernel__.line_magic(\"time\", \"f()\")");
        check("files = %pwd", r#"files = __kernel__.line_magic("pwd", "")"#);
    }

    #[test]
    fn shell_lines() {
        check("!ls -la", r#"__kernel__.system("ls -la")"#);
        check("!pip install x", r#"__kernel__.line_magic("pip", "install x")"#);
        check("out = !echo \"hi\"", r#"out = __kernel__.system_capture("echo \"hi\"")"#);
        check("x = 1\n!cd /\nprint(x)", "x = 1\n__kernel__.system(\"cd /\")\nprint(x)");
    }

    #[test]
    fn cell_magics() {
        check("%%bash\necho hi\necho é", r#"__kernel__.cell_magic("bash", "", "echo hi\necho é")"#);
        check("\n%%timeit -n 3 x = 1\ny = x + 1", r#"__kernel__.cell_magic("timeit", "-n 3 x = 1", "y = x + 1")"#);
    }

    #[test]
    fn plain_code_untouched() {
        for code in [
            "s = (\"a %s\"\n     % x)",
            "s = \"\"\"\n%cd nowhere\n!rm -rf /\n\"\"\"",
            "y = 1 + \\\n!x",
            "a == !b",
            "x = 5 % 3",
            "print('%d' % 3)  # %cd",
        ] {
            check(code, code);
        }
    }
}
