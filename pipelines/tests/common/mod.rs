//! The drivers as processes, for the CLI tests: each run gets the one-line
//! diagnostics unless its arguments choose a form, and the JSON form reads
//! back as (rule, file, line, column).
#![allow(dead_code)]

use std::process::{Command, Output};

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
