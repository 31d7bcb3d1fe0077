//! Kernel configuration: where to run, which interpreter, how long to wait.

use std::path::PathBuf;
use std::time::Duration;

/// How a conversation's kernels are run. Build with [`KernelConfig::new`]
/// and adjust the public fields.
#[derive(Debug, Clone)]
pub struct KernelConfig {
    /// The project root: the kernels' working directory and where
    /// `.venv`/`venv` are looked for.
    pub root: PathBuf,
    /// An explicit Python interpreter, used instead of the discovery ladder.
    pub python: Option<PathBuf>,
    /// An explicit `node`, used instead of `node` on `PATH`.
    pub node: Option<PathBuf>,
    /// A cell is interrupted after this long without output (default 5 min);
    /// the clock stops while a bridged tool call is outstanding.
    pub inactivity_timeout: Duration,
    /// After an interrupt, how long the kernel has to stop before it is
    /// killed (default 3 s).
    pub interrupt_grace: Duration,
    /// How long a kernel may take to report ready (default 60 s).
    pub start_timeout: Duration,
    /// Caps on what one cell's result keeps.
    pub limits: OutputLimits,
    /// Extra environment variables for the kernel process.
    pub env: Vec<(String, String)>,
}

impl KernelConfig {
    /// Kernels for the project at `root`: interpreters discovered, a 5 min
    /// inactivity timeout, a 3 s interrupt grace, a 60 s start timeout,
    /// [`OutputLimits::default`] and no extra variables.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        KernelConfig {
            root: root.into(),
            python: None,
            node: None,
            inactivity_timeout: Duration::from_secs(300),
            interrupt_grace: Duration::from_secs(3),
            start_timeout: Duration::from_secs(60),
            limits: OutputLimits::default(),
            env: Vec::new(),
        }
    }
}

/// Caps on one cell's output. Text beyond `max_stream_chars` is cut, keeping
/// the head and the last `tail_chars`, with a note of how much was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Stream text kept in total, in characters (default 40 000).
    pub max_stream_chars: usize,
    /// Of the cut text, how many trailing characters are still shown (default 2 000).
    pub tail_chars: usize,
    /// Longest single MIME value kept, in characters (default 200 000); a
    /// longer one is dropped from the bundle.
    pub max_mime_chars: usize,
    /// Rich outputs (display data and results) kept (default 50).
    pub max_rich_outputs: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits { max_stream_chars: 40_000, tail_chars: 2_000, max_mime_chars: 200_000, max_rich_outputs: 50 }
    }
}
