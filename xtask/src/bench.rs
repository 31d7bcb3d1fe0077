use anyhow::{Result, bail};
pub(crate) struct Options;
impl Options {
    pub(crate) fn parse(_: &[&str]) -> Result<Self> {
        Ok(Options)
    }
}
pub(crate) fn run(_: &Options) -> Result<()> {
    bail!("bench astmatch: not written yet")
}
