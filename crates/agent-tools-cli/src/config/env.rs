//! The environment layer: every key is also a variable,
//! `AGENT_TOOLS_<SECTION>_<KEY>` (`eval.timeout_s` → `AGENT_TOOLS_EVAL_TIMEOUT_S`).

use anyhow::bail;

use super::read::Reader;
use super::settings::Layer;
use super::source::Origin;

/// The environment variable of a key: `eval.timeout_s` → `AGENT_TOOLS_EVAL_TIMEOUT_S`.
pub fn env_var(key: &str) -> String {
    format!("AGENT_TOOLS_{}", key.replace('.', "_").to_uppercase())
}

/// Reads the variables of `keys` into `layer`.
pub fn read(reader: &mut Reader, layer: &mut Layer, keys: &[String]) -> anyhow::Result<()> {
    for key in keys {
        let var = env_var(key);
        match std::env::var(&var) {
            Ok(text) => reader.text(layer, Origin::Env { var: &var }, key, &text)?,
            Err(std::env::VarError::NotPresent) => {}
            Err(std::env::VarError::NotUnicode(_)) => bail!("environment variable {var}: {key}: not UTF-8"),
        }
    }
    Ok(())
}

/// A variable one typo away from a setting is most likely meant as it: said
/// on stderr, not refused (other `AGENT_TOOLS_*` variables, such as
/// `AGENT_TOOLS_LOG`, are not settings).
pub fn warn_near_misses(reader: &Reader) {
    let vars: Vec<String> = reader.all().map(|k| env_var(k)).collect();
    for (var, _) in std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))) {
        if var.starts_with("AGENT_TOOLS_")
            && !vars.contains(&var)
            && let Some(near) = vars
                .iter()
                .find(|known| strsim::damerau_levenshtein(&var, known) <= 2)
                .filter(|_| var != "AGENT_TOOLS_LOG")
        {
            crate::eprint(&format!("agent-tools: ignoring {var}, not a setting; did you mean {near}?"));
        }
    }
}
