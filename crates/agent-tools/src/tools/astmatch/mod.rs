//! `ast_grep`, `ast_edit` and `resolve`: structural search and staged rewrite
//! over the `astmatch` crate.
//!
//! Registered only when a run wires a working directory and a set of
//! tree-sitter grammars ([`AstmatchWiring`]). The three tools share one
//! [`astmatch::EditStore`], which lives as long as the registry (one run). This
//! module formats results and converts arguments; it does not match or rewrite.
//!
//! The walks run on blocking threads. While one runs, progress says how many
//! files it has looked at; a dropped call (cancellation) stops its walk
//! through astmatch's `WalkControl`, and a stopped `ast_edit` stages nothing.
//! `resolve`'s write runs on its blocking thread to the end, so a cancelled
//! accept is written all or nothing, never half.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use astmatch::{EditStore, Lang, ParseCache, SearchOptions, WalkControl};

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::registry::RegistryBuilder;
use crate::tier::Tier;
use crate::tool::{CallContext, CallPreview, Reply, Tool};
use crate::workspace::Workspace;

mod input;
mod output;
mod words;

pub use input::*;
pub use output::*;
use words::*;

/// The resources behind the structural tools: a working directory and the
/// grammars (tree-sitter parsers) the run may use.
#[derive(Debug, Clone)]
pub struct AstmatchWiring {
    /// The run's working directory; every path argument resolves inside it.
    pub workspace: Workspace,
    /// The grammars wired; a language outside this set is refused at call time.
    pub languages: Vec<Lang>,
    /// The cap, in bytes, of the parse trees kept between the run's searches (a file
    /// whose bytes are unchanged is not parsed again); `0` keeps none.
    /// Default [`astmatch::DEFAULT_CACHE_BYTES`] (256 MiB).
    pub parse_cache_bytes: usize,
    /// Files larger than this many bytes are skipped by a directory's walk (and counted
    /// as too large); a file named as `path` is refused with an error that names the
    /// limit. Default [`astmatch::DEFAULT_MAX_FILE_BYTES`] (64 MiB); the `agent-tools`
    /// binary sets it from `search.max_file_bytes`.
    pub max_file_bytes: u64,
    /// Parse trees shared with other runs (a [`crate::Host`]'s cache, under the host's
    /// one cap); when set, `parse_cache_bytes` is not used. `None`: the run's own cache.
    pub shared_cache: Option<Arc<ParseCache>>,
}

impl AstmatchWiring {
    /// Every shipped grammar, in `workspace`, with the default parse cache.
    pub fn new(workspace: Workspace) -> AstmatchWiring {
        AstmatchWiring {
            workspace,
            languages: Lang::ALL.to_vec(),
            parse_cache_bytes: astmatch::DEFAULT_CACHE_BYTES,
            max_file_bytes: astmatch::DEFAULT_MAX_FILE_BYTES,
            shared_cache: None,
        }
    }
}

impl RegistryBuilder {
    /// Wires structural search and staged rewrite: registers `ast_grep`,
    /// `ast_edit` and `resolve`, which share one edit store for the run.
    pub fn with_astmatch(self, wiring: AstmatchWiring) -> RegistryBuilder {
        let cache = match &wiring.shared_cache {
            Some(cache) => Arc::clone(cache),
            None => Arc::new(ParseCache::new(wiring.parse_cache_bytes)),
        };
        let shared = Arc::new(Shared { wiring, store: EditStore::new(), cache });
        self.register(AstGrep(Arc::clone(&shared))).register(AstEdit(Arc::clone(&shared))).register(Resolve(shared))
    }
}

struct Shared {
    wiring: AstmatchWiring,
    store: EditStore,
    /// Parse trees shared by the run's searches and stagings.
    cache: Arc<ParseCache>,
}

struct AstGrep(Arc<Shared>);

struct AstEdit(Arc<Shared>);

struct Resolve(Arc<Shared>);

impl Tool for AstGrep {
    type Input = AstGrepInput;
    type Output = AstGrepOutput;
    const NAME: &'static str = "ast_grep";
    const TIER: Tier = Tier::Read;

    async fn call(&self, input: AstGrepInput, cx: &CallContext) -> Result<Reply<AstGrepOutput>> {
        let shared = Arc::clone(&self.0);
        let control = Arc::new(WalkControl::new());
        let walk = Arc::clone(&control);
        walking(Self::NAME, cx, control, move || {
            let scope = shared.scope(input.path.as_deref(), input.language)?;
            if input.max_results == 0 {
                return Err("max_results must be at least 1 (all matches are counted either way)".to_owned());
            }
            let options = SearchOptions {
                lang: input.language.map(Language::lang),
                max_results: usize::try_from(input.max_results).unwrap_or(usize::MAX),
                max_file_bytes: shared.wiring.max_file_bytes,
                cache: Some(Arc::clone(&shared.cache)),
                control: Some(walk),
                ..SearchOptions::default()
            };
            astmatch::search(shared.root(), &scope, &input.pattern, &options)
                .map(|report| AstGrepOutput::new(&report, &input.pattern, &shared.cache))
                .map_err(|e| error_text(&e))
        })
        .await
    }
}

impl Tool for AstEdit {
    type Input = AstEditInput;
    type Output = AstEditOutput;
    const NAME: &'static str = "ast_edit";
    const TIER: Tier = Tier::Write;
    // It only stages: nothing is written until `resolve` accepts.
    const DESTRUCTIVE: bool = false;

    fn preview(&self, input: &AstEditInput) -> CallPreview {
        let path = input.path.as_deref().map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
        let place = if path == "." { "the whole workspace".to_owned() } else { path.to_owned() };
        CallPreview {
            summary: Some(format!(
                "stage a rewrite of `{}` into `{}` in {place} (nothing is written until resolve accepts it)",
                input.pattern, input.rewrite
            )),
            paths: vec![PathBuf::from(path)],
        }
    }

    async fn call(&self, input: AstEditInput, cx: &CallContext) -> Result<Reply<AstEditOutput>> {
        let shared = Arc::clone(&self.0);
        let control = Arc::new(WalkControl::new());
        let walk = Arc::clone(&control);
        walking(Self::NAME, cx, control, move || {
            let scope = shared.scope(input.path.as_deref(), input.language)?;
            let options = SearchOptions {
                lang: input.language.map(Language::lang),
                max_file_bytes: shared.wiring.max_file_bytes,
                cache: Some(Arc::clone(&shared.cache)),
                control: Some(walk),
                ..SearchOptions::default()
            };
            let staged = shared.store.stage(shared.root(), &scope, &input.pattern, &input.rewrite, &options);
            staged.map(|staged| AstEditOutput::new(&staged)).map_err(|e| error_text(&e))
        })
        .await
    }
}

impl Tool for Resolve {
    type Input = ResolveInput;
    type Output = ResolveOutput;
    const NAME: &'static str = "resolve";
    const TIER: Tier = Tier::Write;

    fn preview(&self, input: &ResolveInput) -> CallPreview {
        let id = input.edit_id.trim();
        let Some(files) = self.0.store.pending_files(id) else {
            return CallPreview {
                summary: Some(format!("{} edit '{id}', which is not staged", verb(input.action))),
                paths: Vec::new(),
            };
        };
        let names: Vec<String> = files.iter().map(|f| slash(f)).collect();
        let summary = match input.action {
            ResolveAction::Accept => format!("write edit {id}, changing {} file(s): {}", names.len(), names.join(", ")),
            ResolveAction::Discard => format!("discard edit {id} (writes nothing): {}", names.join(", ")),
        };
        CallPreview { summary: Some(summary), paths: files }
    }

    async fn call(&self, input: ResolveInput, _cx: &CallContext) -> Result<Reply<ResolveOutput>> {
        let shared = Arc::clone(&self.0);
        blocking(Self::NAME, move || {
            let id = input.edit_id.trim().to_owned();
            match input.action {
                ResolveAction::Accept => {
                    shared.store.accept(&id).map_err(|e| e.to_string()).map(|accepted| ResolveOutput {
                        action: ResolveAction::Accept,
                        replacements: accepted.replacements,
                        files: accepted.files.iter().map(|f| slash(f)).collect(),
                        edit_id: id,
                    })
                }
                ResolveAction::Discard => shared.store.discard(&id).map_err(|e| e.to_string()).map(|()| {
                    ResolveOutput { edit_id: id, action: ResolveAction::Discard, replacements: 0, files: Vec::new() }
                }),
            }
        })
        .await
    }
}

impl Shared {
    fn root(&self) -> &Path {
        self.wiring.workspace.root()
    }

    /// The search scope, or the error result to return: the path resolved in
    /// the workspace, and the language (given or inferred) among those wired.
    fn scope(&self, path: Option<&str>, language: Option<Language>) -> std::result::Result<PathBuf, String> {
        let scope = match path {
            Some(path) => self.wiring.workspace.resolve(path).map_err(|e| e.to_string())?,
            None => self.root().to_path_buf(),
        };
        let lang = match language {
            Some(language) => Some(language.lang()),
            None if scope.is_file() => match Lang::from_path(&scope) {
                Some(lang) => Some(lang),
                // Said here rather than by astmatch, so the path is shown as the model gave it.
                None => {
                    return Err(format!(
                        "language is required: '{}' has no known extension; known languages: {}",
                        slash(self.wiring.workspace.relative(&scope)),
                        Lang::known_ids()
                    ));
                }
            },
            None => None,
        };
        if let Some(lang) = lang
            && !self.wiring.languages.contains(&lang)
        {
            let wired: Vec<&str> = self.wiring.languages.iter().map(|l| l.id()).collect();
            return Err(format!("language {lang} is not wired in this run; available: {}", wired.join(", ")));
        }
        Ok(scope)
    }
}

/// Runs blocking, CPU-bound work (parsing, walking, writing) off the async runtime.
async fn blocking<T: Send + 'static>(tool: &'static str, work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| Error::TaskFailed { tool, message: e.to_string() })
}

/// Stops a walk when the call that started it is dropped (cancelled).
struct StopOnDrop(Arc<WalkControl>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs a walk on a blocking thread, reporting how many files it has
/// looked at every second; dropped, it stops the walk (a staging then
/// stages nothing).
async fn walking<T: Send + 'static>(
    tool: &'static str,
    cx: &CallContext,
    control: Arc<WalkControl>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    let _stop = StopOnDrop(Arc::clone(&control));
    let mut handle = tokio::task::spawn_blocking(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            joined = &mut handle => {
                return joined.map_err(|e| Error::TaskFailed { tool, message: e.to_string() });
            }
            _ = tick.tick(), if cx.wants_progress() => {
                cx.progress(Progress::message(format!("{} files looked at so far", control.files_visited())));
            }
        }
    }
}
