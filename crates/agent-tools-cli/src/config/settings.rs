//! Every setting, once: `name: Type = default` under its doc comment, in its
//! section. The key is `section.name`, the variable `AGENT_TOOLS_SECTION_NAME`,
//! the doc is what `agent-tools config --json` and the table in docs/config.md
//! say of it, and the type says what a value must be ([`Value`](super::value::Value)).
//! Defaults are the leaf crates' own, read from their configurations, never written twice.
//! A section's lists of tables (`[[lsp.server]]`) come last in it.

use std::path::PathBuf;

use agent_tools::{Action, LspCaps};
use dap_session::DebugConfig;
use kernel::KernelConfig;
use lsp_supervisor::{Language, SupervisorConfig};
use vibe_roster::RosterConfig;

use super::adapter::CustomAdapter;
use super::define::settings;
use super::field::{Servers, Tables};
use super::rule::RuleEntry;
use super::server::CustomServer;
use super::value::{Directory, EnclosureMode, Seconds};

/// The leaf crates' defaults, which the settings' are.
struct Leaf {
    kernel: KernelConfig,
    debug: DebugConfig,
    lsp: SupervisorConfig,
    caps: LspCaps,
    roster: RosterConfig,
}

impl Leaf {
    fn new() -> Leaf {
        Leaf {
            kernel: KernelConfig::new("."),
            debug: DebugConfig::default(),
            lsp: SupervisorConfig::new("."),
            caps: LspCaps::default(),
            roster: RosterConfig::default(),
        }
    }
}

settings! {
    let leaf = Leaf::new();

    /// `[eval]`: the kernels of `eval`.
    eval: EvalSettings, EvalLayer {
        /// a cell is interrupted after this long without output
        timeout_s: Seconds = leaf.kernel.inactivity_timeout.into(),
        /// after an interrupt, how long before the kernel is killed
        interrupt_grace_s: Seconds = leaf.kernel.interrupt_grace.into(),
        /// how long a kernel may take to start
        start_timeout_s: Seconds = leaf.kernel.start_timeout.into(),
        /// the Python interpreter (unset: the project's .venv or venv, then python3 on PATH)
        python: Option<PathBuf> = None,
        /// the node interpreter (unset: node on PATH)
        node: Option<PathBuf> = None,
        /// stream text kept per cell, in characters
        max_output_chars: usize = leaf.kernel.limits.max_stream_chars,
        /// rich outputs kept per cell
        max_rich_outputs: usize = leaf.kernel.limits.max_rich_outputs,
    }

    /// `[debug]`: the sessions of `debug`.
    debug: DebugSettings, DebugLayer {
        /// the Python that runs debugpy (unset: the project's venv, then PATH)
        python: Option<PathBuf> = None,
        /// a debug session's hard lifetime
        ttl_s: Seconds = leaf.debug.ttl.into(),
        /// how long launch, continue and the steps wait for a stop
        run_timeout_s: Seconds = leaf.debug.limits.run_timeout.into(),
        /// how long one adapter request may go unanswered, and an attach to a port its whole handshake
        request_timeout_s: Seconds = leaf.debug.limits.request_timeout.into(),
        /// how long an adapter's start-up may take
        start_timeout_s: Seconds = leaf.debug.limits.start_timeout.into(),
        /// debuggee output kept, in characters
        output_chars: usize = leaf.debug.limits.output_limit,
        /// frames returned by stack
        stack_cap: usize = leaf.debug.limits.stack_cap,
        /// children returned by variables
        variables_cap: usize = leaf.debug.limits.variables_cap,
        /// a debug adapter of your own, or changes to a built-in one
        adapter: Tables<CustomAdapter> = Tables::none(),
    }

    /// `[lsp]`: the language servers, and what `lsp` shows.
    lsp: LspSettings, LspLayer {
        /// timeout of each language server request
        request_timeout_s: Seconds = leaf.lsp.request_timeout.into(),
        /// timeout of a server's initialize
        init_timeout_s: Seconds = leaf.lsp.init_timeout.into(),
        /// how long diagnostics are waited for after a write
        diagnostics_timeout_s: Seconds = leaf.lsp.diagnostics_timeout.into(),
        /// serve --http: how long a language server no run uses is kept running for the next run (read from the host's configuration)
        idle_s: Seconds = lsp_supervisor::ServerPool::DEFAULT_IDLE.into(),
        /// references returned by lsp references
        references_cap: usize = leaf.caps.references,
        /// symbols returned by an lsp symbols search (query)
        symbols_cap: usize = leaf.caps.workspace_symbols,
        /// symbols returned by a file's lsp outline
        outline_cap: usize = leaf.caps.document_symbols,
        /// the server for this language, then its helpers after a + (pyright+ruff: navigation from pyright, diagnostics and code actions from both; unset: the first usable, custom servers first, with the built-in helpers that are usable)
        servers: Servers = Servers::per_language(Language::ALL.iter().map(|l| l.id())),
        /// a language server of your own, or changes to a built-in one
        server: Tables<CustomServer> = Tables::none(),
    }

    /// `[search]`: the walks of `ast_grep` and `ast_edit`.
    search: SearchSettings, SearchLayer {
        /// files larger than this many bytes are skipped by a directory's search and refused when named as its path
        max_file_bytes: usize = usize::try_from(astmatch::DEFAULT_MAX_FILE_BYTES).unwrap_or(usize::MAX),
        /// the directory of parse trees kept on disk: a later search, in this process or another, loads a file's tree instead of parsing it while the file's bytes are the same (unset: $XDG_CACHE_HOME/agent-tools/trees, else ~/.cache/agent-tools/trees)
        tree_store: Option<Directory> = None,
        /// the cap of the tree store, in MiB (0: no store)
        tree_store_mb: Option<usize> = usize::try_from(astmatch::DEFAULT_STORE_BYTES >> 20).ok(),
    }

    /// `[ask]`: questions of `serve`.
    ask: AskSettings, AskLayer {
        /// how long a question of serve on MCP 2026-07-28 waits for the client's retry with the answer
        timeout_s: Seconds = crate::rounds::QUESTION_TIMEOUT.into(),
    }

    /// `[approval]`: the policy of `--ask`.
    approval: ApprovalSettings, ApprovalLayer {
        /// what --ask does with read tools (unset: ask)
        read: Option<Action> = Some(Action::Allow),
        /// what --ask does with write tools (unset: ask)
        write: Option<Action> = None,
        /// what --ask does with exec tools (unset: ask)
        exec: Option<Action> = None,
        /// a rule of the policy: a tier, tool or path, and its action
        rule: Tables<RuleEntry> = Tables::none(),
    }

    /// `[vibe]`: the workers of `serve --vibe`.
    vibe: VibeSettings, VibeLayer {
        /// the sh -c command line of fast workers (serve --vibe)
        fast_cmd: Option<String> = None,
        /// the sh -c command line of good workers (serve --vibe)
        good_cmd: Option<String> = None,
        /// a worker's run is stopped after this long (0: no limit)
        run_timeout_s: Option<Seconds> = leaf.roster.run_timeout.map(Seconds::from),
        /// workers running at once; the rest queue
        max_running: usize = leaf.roster.max_running,
        /// vibe_wait's timeout when none is given
        default_wait_s: Seconds = leaf.roster.default_wait.into(),
        /// the cap on every vibe_wait
        max_wait_s: Seconds = leaf.roster.max_wait.into(),
    }

    /// `[host]`: the runs of `serve --http`.
    host: HostSettings, HostLayer {
        /// serve --http: a run opened through POST /runs with no request and no call running for this long is closed as DELETE closes it (0: never; read from the host's configuration)
        run_idle_s: Option<Seconds> = None,
        /// serve --http: the language servers' resident memory together, in MiB, over which servers no run uses are stopped before lsp.idle_s, least recently used first (0 or unset: no budget)
        lsp_memory_mb: Option<usize> = None,
        /// serve --http: further Host header values a request may carry besides loopback names and the bound address, e.g. a pod's service name; "*" allows any, and needs a token
        allowed_hosts: Vec<String> = Vec::new(),
    }

    /// `[enclosure]`: where the project's code runs.
    enclosure: EnclosureSettings, EnclosureLayer {
        /// where the project's code runs: none (the host), bwrap (a sandbox), command (through enclosure.prefix)
        mode: EnclosureMode = EnclosureMode::None,
        /// whether a bwrap sandbox keeps the network
        network: bool = false,
        /// mode command: the argv put before every command, e.g. ["docker", "exec", "-i", "app"]
        prefix: Vec<String> = Vec::new(),
        /// bwrap: extra paths visible read-only
        ro_paths: Vec<PathBuf> = Vec::new(),
        /// bwrap: extra paths visible writable
        rw_paths: Vec<PathBuf> = Vec::new(),
        /// extra NAME=VALUE variables set inside
        env: Vec<(String, String)> = Vec::new(),
        /// whether language servers run in the enclosure too (some need the network or a cache outside the root)
        language_servers: bool = false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_number_is_positive() {
        for entry in Settings::defaults().entries() {
            if let Some(n) = entry.value.as_f64() {
                assert!(n > 0.0, "{}", entry.key);
            }
        }
    }
}
