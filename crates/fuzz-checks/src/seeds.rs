//! Seed inputs per target, made from real code on this machine (read in place) and
//! from well-formed protocol streams: `cargo xtask fuzz` writes them into the corpus,
//! and the tests run every check over them.

use std::path::{Path, PathBuf};
use std::process::Command;

use astmatch::Lang;

/// The seed inputs of the target named `target` (none for an unknown name).
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "pattern_match" | "rewrite_stage" => code_seeds(target == "rewrite_stage"),
        "lsp_frames" => stream_seeds(&lsp_stream()),
        "dap_frames" => stream_seeds(&dap_stream()),
        "kernel_frames" => stream_seeds(&kernel_stream()),
        "dap_state" => vec![
            vec![9, 1, 0, 0, 9, 2, 10, 1, 10, 2, 7, 0, 10, 1, 0, 0, 10, 1, 4, 39, 5, 17, 3, 0, 10, 1],
            vec![0, 1, 9, 0x83, 10, 0x83, 1, 0, 0, 1, 10, 0x83, 2, 130, 6, 0, 0, 1, 10, 3],
        ],
        "root_paths" => [
            "file.txt",
            "dir/sub/inner.txt",
            "link_in/sub",
            "link_out/canary.txt",
            "link_abs_out",
            "link_loop",
            "link_chain/sub/inner.txt",
            "dangling_in",
            "dangling_out",
            "dangling_abs_out",
            "dangling_chain",
            "dir/up/outside/canary.txt",
            "dir/self/self/sub",
            "../root/file.txt",
            "dir/../../outside",
            "new/deeper.txt",
        ]
        .iter()
        .flat_map(|path| (0..3u8).map(move |selector| [&[selector][..], path.as_bytes()].concat()))
        .collect(),
        "config" => CONFIG_SEEDS.iter().map(|seed| seed.as_bytes().to_vec()).collect(),
        _ => Vec::new(),
    }
}

/// The workspace root, where `.tools/` is.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap_or(Path::new(".")).to_path_buf()
}

/// The unpacked crates of the cargo registry.
fn registry_src_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .unwrap_or_default();
    std::fs::read_dir(home.join("registry").join("src"))
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default()
}

/// Real files per language: (language, files) for the languages with code on this machine.
fn real_files() -> Vec<(Lang, Vec<PathBuf>)> {
    let python_stdlib = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .unwrap_or_default();
    let go_root = Command::new("go")
        .args(["env", "GOROOT"])
        .output()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .unwrap_or_default();
    let python_headers = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
        .output()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .unwrap_or_default();
    let mut rust_dirs: Vec<PathBuf> = Vec::new();
    for registry in registry_src_dirs() {
        for name in ["serde_json-", "regex-", "similar-", "tokio-1"] {
            let found = std::fs::read_dir(&registry)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(name)));
            rust_dirs.extend(found.map(|p| p.join("src")));
        }
    }
    let node_modules = workspace_root().join(".tools").join("node").join("node_modules");
    let mut found: Vec<(Lang, Vec<PathBuf>)> = vec![
        (Lang::Python, files_under(&[python_stdlib], "py", 40)),
        (Lang::Rust, files_under(&rust_dirs, "rs", 40)),
        (Lang::TypeScript, files_under(&[workspace_root().join(".tools/node/node_modules/typescript/lib")], "ts", 20)),
        (Lang::JavaScript, files_under(std::slice::from_ref(&node_modules), "js", 30)),
        (Lang::Json, files_under(&[node_modules], "json", 10)),
        (Lang::Go, files_under(&[go_root.join("src").join("strings"), go_root.join("src").join("flag")], "go", 30)),
        (Lang::C, files_under(&[python_headers], "h", 30)),
    ];
    found.retain(|(_, files)| !files.is_empty());
    found
}

fn files_under(dirs: &[PathBuf], extension: &str, limit: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let walk = ignore::WalkBuilder::new(dir).standard_filters(false).sort_by_file_path(Ord::cmp).build();
        for entry in walk.flatten() {
            if entry.path().extension().and_then(|e| e.to_str()) == Some(extension)
                && entry.metadata().is_ok_and(|m| m.is_file() && m.len() > 200)
            {
                files.push(entry.into_path());
            }
            if files.len() >= limit {
                return files;
            }
        }
    }
    files
}

/// Patterns and templates per language, of the shapes agents write.
fn patterns(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::Python => &[
            ("$F($$$A)", "$F($$$A, extra=1)"),
            ("$A.$B", "$B.$A"),
            ("if $C:\n    $$$B", "if not ($C):\n    pass\n$$$B"),
            ("return $X", "return ($X)"),
            ("def $N($$$P):\n    $$$B", "def $N($$$P):\n    # moved\n    $$$B"),
        ],
        Lang::Rust => &[
            ("$F($$$A)", "$F($$$A)?"),
            ("$A.unwrap()", "$A.expect(\"checked\")"),
            ("let $P = $E;", "let $P: _ = $E;"),
            ("match $E { $$$A }", "match ($E) { $$$A }"),
        ],
        Lang::TypeScript | Lang::JavaScript => &[
            ("$F($$$A)", "await $F($$$A)"),
            ("const $N = $V", "let $N = $V"),
            ("$A.$B", "$A?.$B"),
            ("function $N($$$P) { $$$B }", "const $N = ($$$P) => { $$$B }"),
        ],
        Lang::Go => {
            &[("$F($$$A)", "must($F($$$A))"), ("if $C { $$$B }", "if !($C) { $$$B }"), ("$A := $B", "var $A = $B")]
        }
        Lang::C => &[("$F($$$A)", "(void)$F($$$A)"), ("#define $N $V", "#define $N ($V)"), ("$T $N;", "$T $N = 0;")],
        _ => &[("$A", "$A"), ("{ $$$A }", "[ $$$A ]"), ("\"$K\": $V", "\"$K\": [$V]")],
    }
}

/// Seeds for the text targets: a piece of each real file (at most 2 KB, cut at a line)
/// with each of its language's patterns.
fn code_seeds(with_template: bool) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (lang, files) in real_files() {
        let selector = Lang::ALL.iter().position(|&l| l == lang).and_then(|i| u8::try_from(i).ok()).unwrap_or(0);
        for (n, file) in files.iter().enumerate() {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            let mut cut = text.len().min(2048);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let piece = text[..cut].rfind('\n').map_or(&text[..cut], |at| &text[..=at]);
            let all = patterns(lang);
            let (pattern, template) = all[n % all.len()];
            let mut seed = vec![selector];
            seed.extend_from_slice(pattern.as_bytes());
            seed.push(0);
            if with_template {
                seed.extend_from_slice(template.as_bytes());
                seed.push(0);
            }
            seed.extend_from_slice(piece.as_bytes());
            seeds.push(seed);
        }
    }
    seeds
}

/// Seeds for a stream target: the stream read a byte at a time, in a few chunkings, and whole.
fn stream_seeds(stream: &[u8]) -> Vec<Vec<u8>> {
    [&[0u8][..], &[3, 6, 12, 0], &[2, 255, 40], &[1, 255]].iter().map(|split| [*split, stream].concat()).collect()
}

fn framed(bodies: &[&str]) -> Vec<u8> {
    bodies.iter().flat_map(|body| format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()).collect()
}

fn lsp_stream() -> Vec<u8> {
    framed(&[
        r#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"renameProvider":true}}}"#,
        r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///r/a.py","diagnostics":[{"range":{"start":{"line":0,"character":4},"end":{"line":0,"character":9}},"message":"é"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","method":"workspace/configuration","params":{"items":[{"section":"python"}]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32801,"message":"content modified"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
    ])
}

fn dap_stream() -> Vec<u8> {
    framed(&[
        r#"{"seq":1,"type":"response","request_seq":1,"success":true,"command":"initialize","body":{"supportsConfigurationDoneRequest":true}}"#,
        r#"{"seq":2,"type":"event","event":"initialized"}"#,
        r#"{"seq":3,"type":"event","event":"stopped","body":{"reason":"breakpoint","threadId":1,"allThreadsStopped":true}}"#,
        r#"{"seq":4,"type":"request","command":"runInTerminal","arguments":{"args":["python3","x.py"]}}"#,
        r#"{"seq":5,"type":"response","request_seq":9,"success":false,"command":"evaluate","message":"name 'y' is not defined","body":{"error":{"id":2,"format":"no {x}","variables":{"x":"y"}}}}"#,
        r#"{"seq":6,"type":"event","event":"output","body":{"category":"stdout","output":"hé\n"}}"#,
    ])
}

fn kernel_stream() -> Vec<u8> {
    let frames = [
        r#"{"t":"ready","version":"3.11.2","executable":"/usr/bin/python3"}"#,
        r#"{"t":"stream","name":"stdout","text":"hello, wörld\n"}"#,
        r#"{"t":"display","data":{"text/plain":"<Figure>","image/png":"iVBORw0KGgo="}}"#,
        r#"{"t":"result","data":{"text/plain":"42","text/html":"<b>42</b>"}}"#,
        r#"{"t":"error","ename":"ZeroDivisionError","evalue":"division by zero","traceback":["Traceback","  line 1"]}"#,
        r#"{"t":"tool","id":7,"name":"ast_grep","args":{"pattern":"$F()"}}"#,
        r#"{"t":"done","id":1,"status":"ok"}"#,
        "not json",
    ];
    let mut stream = frames.join("\n").into_bytes();
    stream.push(b'\n');
    stream.push(0);
    stream.extend_from_slice("printed by a child\n\u{1}kernel-sync-1-ab\u{1}\nafter ✓\n".as_bytes());
    stream
}

/// Configuration files: every section and list, well-formed and not.
const CONFIG_SEEDS: &[&str] = &[
    "[eval]\ntimeout_s = 120\npython = \".venv/bin/python\"\nnode = \"/usr/bin/node\"\n\n[debug]\nttl_s = 900\nrun_timeout_s = 60\n",
    "[[debug.adapter]]\nname = \"netcoredbg\"\ncommand = \"netcoredbg\"\nargs = [\"--interpreter=vscode\"]\ntransport = \"stdio\"\nextensions = [\"cs\"]\nmarkers = [\"*.csproj\"]\n",
    "[lsp]\nreferences_cap = 10\n[lsp.servers]\npython = \"pyright\"\n\n[[lsp.server]]\nname = \"zls\"\ncommand = \"zls\"\nlanguage = \"zig\"\nextensions = [\"zig\"]\nlanguage_id = \"zig\"\n",
    "[approval]\nread = \"allow\"\nwrite = \"ask\"\n\n[[approval.rule]]\ntool = \"write\"\naction = \"deny\"\n",
    "[vibe]\nfast_cmd = \"sh -c 'echo $PROMPT'\"\ndefault_wait_s = 5\n",
    "[eval]\ntimeout_s = \"soon\"\n",
    "[eval]\ntimeout = 3\n",
    "[eval\ntimeout_s = 1",
    "eval.timeout_s = 1e400\n[debug]\nttl_s = -1\n",
    "[[lsp.server]]\nname = \"x\"\nlanguages = [\"rust\", \"klingon\"]\n",
    "\u{feff}[eval]\r\ntimeout_s = 60 # é\r\n",
];
