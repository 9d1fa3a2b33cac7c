//! `--diagnostics=human|short|json` of `xir-opt` and `xir-run` as processes
//! (docs/diagnostics.md): the default human form shows the source line and
//! a caret, the short form is one line per diagnostic, the JSON form one
//! object per line with rule and span; the exit code does not depend on
//! the form.

mod common;
use common::scratch;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn xir_opt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xir-opt")).args(args).output().expect("xir-opt runs")
}

fn xir_run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xir-run")).args(args).output().expect("xir-run runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON lines of `o`'s stderr, parsed.
fn json(o: &Output) -> Vec<Value> {
    stderr(o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// `(rule, file, line, column)` of a JSON diagnostic.
fn at(d: &Value) -> (&str, &str, u64, u64) {
    (
        d["rule"].as_str().unwrap(),
        d["file"].as_str().unwrap(),
        d["line"].as_u64().unwrap(),
        d["column"].as_u64().unwrap(),
    )
}

const DOM: &str =
    "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add %y, %y : i32\n  %y = add i32 1, i32 2 : i32\n  return\n}\n";

#[test]
fn the_default_form_shows_the_source_line_and_a_caret() {
    let dir = scratch("human");
    let f =
        write(&dir, "bad.xir", "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = frob i32 1 : i32\n  return\n}\n");
    let o = xir_opt(&[&f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error[parse]: unknown opcode `frob`
  ┌─ {f}:3:8
  │
3 │   %x = frob i32 1 : i32
  │        ^^^^
  │
  = in @k

"
        )
    );
}

#[test]
fn stdin_input_shows_its_source_line_too() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("xir-opt runs");
    let text = "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = frob i32 1 : i32\n  return\n}\n";
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error[parse]: unknown opcode `frob`
  ┌─ <stdin>:3:8
  │
3 │   %x = frob i32 1 : i32
  │        ^^^^
  │
  = in @k

"
    );
}

#[test]
fn a_verifier_error_in_each_form() {
    let dir = scratch("verify");
    let f = write(&dir, "dom.xir", DOM);
    let human = xir_opt(&[&f, "--diagnostics=human"]);
    let short = xir_opt(&[&f, "--diagnostics=short"]);
    let json_o = xir_opt(&[&f, "--diagnostics=json"]);
    for o in [&human, &short, &json_o] {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    }
    // The human form labels the definition the use is not dominated by.
    assert!(
        stderr(&human).contains(
            "3 │   %x = add %y, %y : i32
  │   ^^^^^^^^^^^^^^^^^^^^^
4 │   %y = add i32 1, i32 2 : i32
  │   --------------------------- inst1 is defined here, in bb0
"
        ),
        "{}",
        stderr(&human)
    );
    let lines: Vec<String> = stderr(&short).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(&format!("{f}:3:3: error: [ssa-dominance] operand 0 uses inst1")), "{}", lines[0]);
    let d = json(&json_o);
    assert_eq!(d.len(), 2);
    assert_eq!(at(&d[0]), ("ssa-dominance", f.as_str(), 3, 3));
    assert_eq!((d[0]["end_line"].as_u64(), d[0]["end_column"].as_u64()), (Some(3), Some(24)));
    assert_eq!(
        (d[0]["function"].as_str(), d[0]["block"].as_str(), d[0]["inst"].as_str()),
        (Some("k"), Some("bb0"), Some("inst0"))
    );
    let label = &d[0]["labels"][0];
    assert_eq!(
        (label["line"].as_u64(), label["column"].as_u64(), label["end_column"].as_u64()),
        (Some(4), Some(3), Some(30))
    );
    assert_eq!(at(&d[1]), ("ssa-dominance", f.as_str(), 3, 3));
}

#[test]
fn a_pipeline_error_carries_its_fix() {
    let dir = scratch("pipeline");
    let p = write(
        &dir,
        "p.ron",
        "(\n    name: \"p\",\n    input: \"xir.structured\",\n    output: \"xir.structured\",\n    steps: [Pass(\"const_fld\")],\n)\n",
    );
    let o = xir_opt(&["--check-pipeline", &p]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error[pipeline]: unknown pass `const_fld`; did you mean `const_fold`?
  ┌─ {p}:5:18
  │
5 │     steps: [Pass(\"const_fld\")],
  │                  ^^^^^^^^^^^
  │
  = help: did you mean `const_fold`?

"
        )
    );
    let o = xir_opt(&["--check-pipeline", &p, "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    let d = json(&o);
    assert_eq!(d.len(), 1);
    assert_eq!(at(&d[0]), ("pipeline", p.as_str(), 5, 18));
    let fix = &d[0]["fixes"][0];
    assert_eq!(fix["replacement"], "const_fold");
    assert_eq!(
        (fix["line"].as_u64(), fix["column"].as_u64(), fix["end_column"].as_u64()),
        (Some(5), Some(19), Some(28))
    );
    // The short form is the loader's own line.
    let o = xir_opt(&["--check-pipeline", &p, "--diagnostics=short"]);
    assert_eq!(stderr(&o), format!("{p}:5:18: error: unknown pass `const_fld`; did you mean `const_fold`?\n"));
}

#[test]
fn xir_run_reports_in_the_chosen_form() {
    let dir = scratch("run");
    let f = write(&dir, "dom.xir", DOM);
    let inputs = write(&dir, "in.json", "{}");
    let o = xir_run(&[&f, "--inputs", &inputs, "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let d = json(&o);
    assert_eq!(d.len(), 2);
    assert_eq!(at(&d[0]), ("ssa-dominance", f.as_str(), 3, 3));
    let o = xir_run(&[&f, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("error[ssa-dominance]: operand 0 uses inst1"), "{}", stderr(&o));
    // A malformed inputs file is located too.
    let bad = write(&dir, "bad.json", "{\n  \"args\": [1]\n}\n");
    let o = xir_run(&[&f, "--inputs", &bad, "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    let d = json(&o);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["rule"], "inputs");
    assert_eq!(d[0]["file"].as_str(), Some(bad.as_str()));
    assert_eq!((d[0]["line"].as_u64(), d[0]["column"].as_u64()), (Some(2), Some(10)));
}

#[test]
fn an_unknown_form_is_a_usage_error() {
    let o = xir_opt(&["x.xir", "--diagnostics=xml"]);
    assert_eq!(o.status.code(), Some(2));
}
