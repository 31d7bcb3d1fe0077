//! Frames exchanged with a driver: one JSON object per line, tagged by `t`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Host to kernel.
#[derive(Debug, Serialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum HostFrame<'a> {
    Exec {
        id: u64,
        count: u32,
        code: &'a str,
        sync: &'a str,
    },
    /// Stdio mode only: the host's SIGINT reaches the prefix's client, not the kernel.
    Interrupt,
    ToolReply {
        id: u64,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<serde_json::Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// Kernel to host.
#[derive(Debug, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum KernelFrame {
    Ready {
        version: String,
        executable: String,
    },
    Stream {
        name: String,
        text: String,
    },
    Display {
        data: BTreeMap<String, String>,
    },
    Result {
        data: BTreeMap<String, String>,
    },
    Error {
        ename: String,
        evalue: String,
        traceback: Vec<String>,
    },
    Tool {
        id: u64,
        name: String,
        #[serde(default)]
        args: serde_json::Value,
    },
    Done {
        id: u64,
        status: String,
    },
}

/// The one-line programs that read the driver from fd 3 and run it.
pub(crate) const PYTHON_BOOTSTRAP: &str =
    "import io,json;_kernel_in=io.open(3,'rb');exec(compile(json.loads(_kernel_in.readline()),'<kernel>','exec'))";
pub(crate) const NODE_BOOTSTRAP: &str = "(()=>{const fs=require('fs');const c=Buffer.alloc(65536);let b=Buffer.alloc(0);for(;;){let n;try{n=fs.readSync(3,c)}catch(e){if(e.code==='EAGAIN')continue;throw e}if(n===0)process.exit(0);b=Buffer.concat([b,c.subarray(0,n)]);if(c.subarray(0,n).includes(10))break}require('vm').runInThisContext(JSON.parse(b.toString('utf8')),{filename:'kernel-driver.js'})(require,(s)=>import(s))})()";

/// Stdio mode: `sh -c STDIO_SHIM INTERPRETER FLAG BOOTSTRAP` moves the frames
/// from stdin and stdout to fds 3 and 4, empties stdin and sends fd 1 to fd 2.
pub(crate) const STDIO_SHIM: &str = r#"exec 3<&0 4>&1 </dev/null 1>&2; exec "$0" "$@""#;

pub(crate) const PYTHON_DRIVER: &str = include_str!("../drivers/python.py");
pub(crate) const NODE_DRIVER: &str = include_str!("../drivers/node.js");
