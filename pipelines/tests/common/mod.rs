//! The drivers as processes, for the CLI tests: each run gets the one-line
//! diagnostics unless its arguments choose a form, and the JSON form reads
//! back as (rule, file, line, column); each test's scratch directory is
//! removed when the test ends.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// A test's scratch directory, removed with its contents when dropped (at
/// the end of the test, passed or failed), so runs leave nothing behind.
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

/// A new, empty scratch directory named after `tag`.
pub fn scratch(tag: &str) -> Scratch {
    Scratch(tempfile::Builder::new().prefix(&format!("xir-{tag}-")).tempdir().expect("a scratch directory"))
}

fn driver(exe: &str, args: &[&str]) -> Output {
    let mut c = Command::new(exe);
    if !args.iter().any(|a| a.starts_with("--diagnostics")) {
        c.arg("--diagnostics=short");
    }
    c.args(args).output().unwrap_or_else(|e| panic!("{exe} runs: {e}"))
}

/// `xir-opt` with the one-line diagnostics (`--diagnostics=short`:
/// `file:line:col: error: [rule] message`) unless `args` choose a form.
pub fn xir_opt(args: &[&str]) -> Output {
    driver(env!("CARGO_BIN_EXE_xir-opt"), args)
}

/// `xir-run`, like `xir_opt`.
pub fn xir_run(args: &[&str]) -> Output {
    driver(env!("CARGO_BIN_EXE_xir-run"), args)
}

/// The `--diagnostics=json` lines of `o`'s stderr as (rule, file, line, column).
pub fn json_at(o: &Output) -> Vec<(String, String, u64, u64)> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("file"), v["line"].as_u64().unwrap_or(0), v["column"].as_u64().unwrap_or(0))
        })
        .collect()
}
