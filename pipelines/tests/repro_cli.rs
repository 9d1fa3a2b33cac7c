//! The reproducers written after the pass manager, for `xir-reduce`
//! (docs/reduce.md): the backend's validation failure (`xir-opt`,
//! `xir-run --vulkan`) and `xir-run --compare`'s mismatch write a
//! directory and print the replay and reduce commands, exact text with the
//! directory's path normalized. The failures are planted by the backend's
//! debug-only hooks (`xir_spirv::debug_invalid`), as no real one is known.

use std::path::Path;
use std::process::{Command, Output};

fn corpus(name: &str) -> String {
    format!("{}/../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The note line of `o`'s stderr, `dir` written as `DIR`.
fn note(o: &Output, dir: &Path) -> String {
    let err = stderr(o);
    let line = err.lines().find(|l| l.starts_with("note: reproducer")).unwrap_or_else(|| panic!("no note in:\n{err}"));
    line.replace(&dir.display().to_string(), "DIR")
}

fn device_or_skip() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING REPRODUCER RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

#[test]
fn xir_opt_writes_a_reproducer_for_a_validation_failure() {
    if !cfg!(debug_assertions) {
        return eprintln!("skipped: the planted failure exists in debug builds only");
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repro");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("bitonic_sort.xir"), "--pipeline", "spirv", "--emit", "spirv-asm", "--reproducer-dir"])
        .arg(&dir)
        .env("XIR_DEBUG_INVALID_SPIRV", "bit_xor")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("EntryPoint cannot appear before the memory model instruction"), "{}", stderr(&o));
    assert_eq!(
        note(&o, &dir),
        "note: reproducer written to DIR; replay with: xir-opt DIR/input.xir --pipeline spirv --emit spirv-asm; \
         reduce with: xir-reduce DIR -o reduced.xir"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("failure.txt")).unwrap(),
        "// What failed, for xir-reduce (docs/reduce.md).\nsignature: spirv-val\n\
         text: EntryPoint cannot appear before the memory model instruction\nkernel: bitonic_sort\n\
         pipeline: spirv\nopt-level: 0\n"
    );
    // The module before the pipeline, as text.
    let m = xir::text::parse_module(&std::fs::read_to_string(corpus("bitonic_sort.xir")).unwrap(), "b").unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("input.xir")).unwrap(), xir::text::print_module(&m));
    // Without the planted failure there is neither failure nor reproducer.
    let clean = tmp.path().join("clean");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("bitonic_sort.xir"), "--pipeline", "spirv", "--emit", "spirv-asm", "-o", "/dev/null"])
        .arg("--reproducer-dir")
        .arg(&clean)
        .env_remove("XIR_DEBUG_INVALID_SPIRV")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!clean.exists());
}

#[test]
fn xir_run_writes_reproducers_for_a_validation_failure_and_a_mismatch() {
    if !cfg!(debug_assertions) {
        return eprintln!("skipped: the planted failures exist in debug builds only");
    }
    if !device_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("invalid");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([&corpus("bitonic_sort.xir"), "--inputs", &corpus("bitonic_sort.inputs.json"), "--vulkan"])
        .arg("--reproducer-dir")
        .arg(&dir)
        .env("XIR_DEBUG_INVALID_SPIRV", "bit_xor")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        note(&o, &dir),
        "note: reproducer written to DIR; replay with: xir-opt DIR/input.xir --pipeline spirv --emit spirv-asm; \
         reduce with: xir-reduce DIR -o reduced.xir"
    );
    assert!(dir.join("input.xir").is_file() && dir.join("failure.txt").is_file());

    let dir = tmp.path().join("mismatch");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([&corpus("prefix_sum.xir"), "--inputs", &corpus("prefix_sum.inputs.json"), "--compare"])
        .args(["--opt-level", "1", "--reproducer-dir"])
        .arg(&dir)
        .env("XIR_DEBUG_MISCOMPILE_SPIRV", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("mismatch (interpreter vs Vulkan): `out`[1]: 3 != 1 (allowed: exact)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        note(&o, &dir),
        "note: reproducer written to DIR; replay with: xir-run DIR/input.xir --inputs DIR/inputs.json --compare \
         --kernel prefix_sum --pipeline spirv --opt-level 1; reduce with: xir-reduce DIR -o reduced.xir"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("failure.txt")).unwrap(),
        "// What failed, for xir-reduce (docs/reduce.md).\nsignature: mismatch-vulkan\nkernel: prefix_sum\n\
         pipeline: spirv\nopt-level: 1\n"
    );
    // The inputs as the run used them: the file's, with its dispatch size.
    let inputs = xir::interp::Inputs::from_json(&std::fs::read_to_string(dir.join("inputs.json")).unwrap()).unwrap();
    let given =
        xir::interp::Inputs::from_json(&std::fs::read_to_string(corpus("prefix_sum.inputs.json")).unwrap()).unwrap();
    assert_eq!(inputs, given.clone().with_dispatch(given.dispatch.unwrap()));
}
