//! `xir-reduce` end to end: a planted crash (`debug.panic` that fires only
//! on a `bit_xor`) in a corpus kernel shrinks to the exact expected text,
//! and the CLI's error paths give the documented exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

const PIPELINE: &str =
    "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.panic\", (opcode: \"bit_xor\"))])";

fn pipeline_file(dir: &Path) -> PathBuf {
    let p = dir.join("p.ron");
    std::fs::write(&p, PIPELINE).unwrap();
    p
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xir-reduce")).args(args).output().unwrap()
}

#[test]
fn planted_crash_shrinks_to_the_expected_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let out = dir.path().join("out.xir");
    let o = cli(&[
        input.to_str().unwrap(),
        "--pipeline",
        p.to_str().unwrap(),
        "--panic",
        "deliberate panic",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), want);
    // The reduced module still holds the planted opcode, and none of the
    // original stores survives.
    let original = std::fs::read_to_string(&input).unwrap();
    assert!(original.contains("store "), "{original}");
    assert!(want.contains("bit_xor") && !want.contains("store "), "{want}");
}

#[test]
fn input_that_does_not_fail_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = cli(&[input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "no such message", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not fail as asked"), "{err}");
}

#[test]
fn bad_input_is_a_located_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.xir");
    std::fs::write(&bad, "kernel @k( {\n").unwrap();
    let o = cli(&[bad.to_str().unwrap(), "--verifier", "ssa-dominance"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.xir:1:"), "{err}");
}

#[test]
fn missing_signature_and_pipeline_are_errors() {
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = cli(&[input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no failure signature"));
    let o = cli(&[input.to_str().unwrap(), "--panic", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs --pipeline"));
}

#[test]
fn a_reproducer_directory_brings_its_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("tests/corpus/bitonic_sort.xir"), dir.path().join("input.xir")).unwrap();
    std::fs::write(dir.path().join("repro.ron"), PIPELINE).unwrap();
    let o = cli(&[dir.path().to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}
