//! The secrets table: a home with a canary at every well-known secret place
//! (`fixtures/enclosure/plant-secrets.sh`), whose toolchain directories
//! (`~/.cargo/bin`, `~/.local/bin`) are on `PATH`, and a process in the real
//! bubblewrap that tries to read every canary, list every directory, and find
//! the canary's text under every mount, in its environment and in every
//! `/proc/*/environ` (`fixtures/enclosure/probe-secrets.sh`). Also: what
//! `ro_paths` can and cannot widen, and the lists in docs/enclosure.md against the code's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use enclosure::{Bind, Enclosure, HOME_KEEP, Plan, Reason, SECRETS};

/// Whether bwrap works here; fails under `CI=true` when it does not.
fn bwrap_ready() -> bool {
    match Enclosure::bwrap("/").check() {
        Ok(()) => true,
        Err(error) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
            eprintln!("SKIPPED: {error}");
            false
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/enclosure").join(name).canonicalize().unwrap()
}

/// A planted home under the target directory (which the sandbox shows
/// read-only, so only the enclosure's own rules hide it), with its nonce.
struct Planted {
    base: PathBuf,
    home: PathBuf,
    root: PathBuf,
    nonce: String,
}

fn plant(name: &str) -> Planted {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("secrets-{name}"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let nonce = format!("{}-{}", std::process::id(), std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos());
    let status = Command::new("sh").arg(fixture("plant-secrets.sh")).arg(&base).arg(&nonce).status().unwrap();
    assert!(status.success());
    let base = base.canonicalize().unwrap();
    Planted { home: base.join("home"), root: base.join("project"), base, nonce }
}

impl Planted {
    /// The secret places a bind or the host's `/` shows, so masked rather than absent:
    /// the `.env` files above the root, unless the base is under the host's `/tmp`
    /// (a checkout there), which the sandbox replaces with its own; and the one at the
    /// top of the bound `~/.local/bin`.
    fn masked_places(&self) -> Vec<&'static str> {
        let mut places = vec![".env above the root", ".env.local above the root", ".env in ~/.local/bin"];
        if self.base.starts_with("/tmp") {
            places.drain(..2);
        }
        places
    }

    fn enclosure(&self) -> Enclosure {
        Enclosure { home: Some(self.home.clone()), ..Enclosure::bwrap(&self.root) }
    }

    /// `PATH` with the home's toolchain directories first, as most Rust and Python users have it.
    fn path(&self) -> String {
        format!("{}:{}:/usr/bin:/bin", self.home.join(".cargo/bin").display(), self.home.join(".local/bin").display())
    }

    /// Runs the probe in `enclosure`, with a canary also in the host's
    /// environment, and returns its report: (place, verdict) pairs.
    fn probe(&self, enclosure: &Enclosure) -> Vec<(String, String)> {
        let report = self.root.join("report.tsv");
        let _ = std::fs::remove_file(&report);
        // The probe runs from the root, which the sandbox shows wherever the checkout is.
        let probe = self.root.join("probe-secrets.sh");
        std::fs::copy(fixture("probe-secrets.sh"), &probe).unwrap();
        let mut command = Command::new("sh");
        command.arg(&probe).arg(&self.nonce).arg(self.root.join("secrets.tsv")).arg(&report);
        command.env("PATH", self.path()).current_dir(&self.root);
        let mut outer = enclosure.enclose(&command).unwrap();
        outer.env("CARGO_REGISTRY_TOKEN", format!("CANARY-{}", self.nonce));
        let output = outer.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        read_report(&report)
    }
}

fn read_report(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    text.lines().map(|line| line.split_once('\t').map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap()).collect()
}

/// The verdicts that keep a secret: not there at all, or a file's name with no content.
fn kept(verdict: &str) -> bool {
    verdict == "hidden" || verdict == "masked"
}

/// Every place of the report is hidden or masked, and no search found the text.
fn assert_all_hidden(report: &[(String, String)]) {
    let leaks: Vec<_> = report.iter().filter(|(_, verdict)| !kept(verdict)).collect::<Vec<_>>();
    assert!(leaks.is_empty(), "leaked: {leaks:?}");
    // The places planted, then the three searches.
    assert_eq!(report.len(), SECRETS.len() + 4 + 3, "{report:?}");
}

#[test]
fn no_secret_is_readable_with_the_toolchain_on_path() {
    if !bwrap_ready() {
        return;
    }
    let planted = plant("on-path");
    let report = planted.probe(&planted.enclosure());
    eprintln!("{}", report.iter().map(|(place, verdict)| format!("{place}\t{verdict}\n")).collect::<String>());
    assert_all_hidden(&report);
    // Only what the host's / or a bound directory shows is there at all, as an empty file.
    let masked: Vec<&str> = report.iter().filter(|(_, v)| v == "masked").map(|(p, _)| p.as_str()).collect();
    assert_eq!(masked, planted.masked_places());
    // The tools on that PATH still run: the one in ~/.cargo/bin, the pipx-style link in ~/.local/bin.
    let mut command = Command::new("sh");
    command.args(["-c", "cargo-tool; piped; ls -A ~/.cargo ~/.local"]).env("PATH", planted.path());
    let output = planted.enclosure().enclose(&command).unwrap().output().unwrap();
    let home = planted.home.display();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("cargo-tool\npiped\n{home}/.cargo:\nbin\nregistry\n\n{home}/.local:\nbin\nlib\nshare\n"),
        "{output:?}"
    );
}

/// The same probe in a gVisor container through `podman exec -i`, the home planted on the host
/// and the checkout mounted at its path: the container shows none of the host's places, so every
/// secret is absent (not even masked), and no canary of the host's environment gets in.
#[test]
fn no_secret_is_readable_in_a_gvisor_container() {
    use enclosure::engine::{Container, Runtime};
    let planted = plant("gvisor");
    let Some(container) = Container::for_test(Runtime::Runsc, &planted.root) else { return };
    let report = planted.probe(&container.enclosure());
    assert_all_hidden(&report);
    let masked: Vec<&str> = report.iter().filter(|(_, v)| v == "masked").map(|(p, _)| p.as_str()).collect();
    assert_eq!(masked, Vec::<&str>::new(), "{report:?}");
}

#[test]
fn the_plan_binds_exactly_the_toolchain_and_what_its_tools_need() {
    let planted = plant("plan");
    let mut command = Command::new("sh");
    command.env("PATH", planted.path());
    let plan = planted.enclosure().plan(&command).unwrap();
    let home = &planted.home;
    let venv = home.join(".local/share/pipx/venvs/piped");
    let ro = |path: PathBuf, reason| Bind { path, writable: false, reason };
    assert_eq!(
        plan,
        Plan {
            home: Some(home.clone()),
            before_root: vec![
                ro(home.join(".cargo/bin"), Reason::Toolchain),
                ro(home.join(".cargo/registry"), Reason::Toolchain),
                ro(home.join(".local/bin"), Reason::Toolchain),
                ro(home.join(".local/lib"), Reason::Toolchain),
                ro(venv.join("bin"), Reason::Tool),
                ro(venv.join("lib"), Reason::Tool),
                ro(venv.join("pyvenv.cfg"), Reason::Tool),
            ],
            after_root: Vec::new(),
            masks: plan.masks.clone(),
            widened: Vec::new(),
        }
    );
    // The secret places a bind or the host's / would show: a .env at the top of ~/.local/bin, two above the root.
    let mut masked: Vec<PathBuf> = plan.masks.iter().map(|mask| mask.path.clone()).collect();
    masked.sort();
    let mut expected = vec![planted.base.join(".env"), planted.base.join(".env.local"), home.join(".local/bin/.env")];
    if planted.base.starts_with("/tmp") {
        expected.drain(..2);
    }
    assert_eq!(masked, expected);
}

#[test]
fn ro_paths_above_a_secret_show_it_masked_and_only_naming_it_widens() {
    if !bwrap_ready() {
        return;
    }
    let planted = plant("ro-paths");
    // The whole home, read-only: every secret place reads empty.
    let whole = Enclosure { ro_paths: vec![planted.home.clone()], ..planted.enclosure() };
    let report = planted.probe(&whole);
    let unreadable = |report: &[(String, String)]| -> Vec<String> {
        report.iter().filter(|(_, v)| !kept(v)).map(|(p, _)| p.clone()).collect()
    };
    assert_eq!(unreadable(&report), Vec::<String>::new(), "{report:?}");
    // A masked directory lists as empty; a masked file keeps its name and reads empty.
    let verdict = |report: &[(String, String)], place: &str| {
        report.iter().find(|(p, _)| p == place).map(|(_, v)| v.clone()).unwrap()
    };
    assert_eq!(verdict(&report, "~/.ssh"), "hidden");
    assert_eq!(verdict(&report, "~/.netrc"), "masked");

    // Naming the file itself widens it, and only it.
    let credentials = planted.home.join(".cargo/credentials.toml");
    let named = Enclosure { ro_paths: vec![planted.home.join(".cargo"), credentials], ..planted.enclosure() };
    let report = planted.probe(&named);
    assert_eq!(unreadable(&report), ["~/.cargo/credentials.toml", "anywhere under /"], "{report:?}");
    assert_eq!(verdict(&report, "~/.cargo/config.toml"), "masked");

    // A path inside a secret directory, named: bound over the mask, which stays empty and read-only.
    let known_hosts = planted.home.join(".ssh/known_hosts");
    std::fs::write(&known_hosts, "example.org ssh-ed25519 AAAA\n").unwrap();
    let inside = Enclosure { ro_paths: vec![planted.home.clone(), known_hosts], ..planted.enclosure() };
    let mut command = Command::new("sh");
    command.args(["-c", "ls -A ~/.ssh; cat ~/.ssh/known_hosts; touch ~/.ssh/new 2>/dev/null || echo read-only"]);
    let output = inside.enclose(&command).unwrap().output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "known_hosts\nexample.org ssh-ed25519 AAAA\nread-only\n");
}

#[test]
fn a_root_that_holds_the_home_still_hides_its_secrets() {
    if !bwrap_ready() {
        return;
    }
    let planted = plant("root-home");
    let enclosure = Enclosure { home: Some(planted.home.clone()), ..Enclosure::bwrap(&planted.base) };
    let report = planted.probe(&enclosure);
    // .env files inside the root are the project's; every secret place of the home is masked.
    let leaks: Vec<_> = report
        .iter()
        .filter(|(place, _)| !place.contains(".env") && place != "anywhere under /")
        .filter(|(_, v)| !kept(v))
        .collect();
    assert_eq!(leaks, Vec::<&(String, String)>::new(), "{report:?}");
}

/// The lists in docs/enclosure.md (what is bound back, what a tool's directory brings,
/// what stays hidden) are the code's.
#[test]
fn the_docs_list_what_is_bound_and_what_is_hidden() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/enclosure.md")).unwrap();
    // The `code` items of the line that starts with `label`, between `from` and `to` (or its end).
    let listed = |label: &str, from: &str, to: &str, prefix: &str| -> Vec<String> {
        let line = docs.lines().map(str::trim_start).find(|line| line.starts_with(label));
        let line = line.unwrap_or_else(|| panic!("docs/enclosure.md has no line {label:?}"));
        let start = line.find(from).unwrap() + from.len();
        let end = if to.is_empty() { line.len() } else { start + line[start..].find(to).unwrap() };
        let items = line[start..end].split('`').skip(1).step_by(2);
        items.map(|item| item.strip_prefix(prefix).unwrap_or_else(|| panic!("{item}")).to_owned()).collect()
    };
    assert_eq!(listed("- Bound back from the home", ": ", "", "~/"), HOME_KEEP);
    assert_eq!(listed("- Always hidden", ": ", ";", "~/"), SECRETS);
    assert_eq!(listed("- A tool's own directory", " also ", " (", "P/"), enclosure::BIN_COMPANIONS);
}
