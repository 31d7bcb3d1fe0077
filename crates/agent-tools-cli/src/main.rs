//! The `agent-tools` binary: the command of [`agent_tools_cli::command`], whose
//! exit status it returns.
#![warn(missing_docs)]

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(agent_tools_cli::command::main(std::env::args_os()))
}
