//! Every kernel of the shared corpus (`tests/corpus/*.xir` with its
//! `*.inputs.json`) runs to completion in the interpreter, twice with equal
//! outputs (the interpreter is deterministic).

use std::path::PathBuf;

use xir::interp::{run_kernel, Inputs};
use xir::text::parse_module;

#[test]
fn corpus_kernels_run_without_error() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "xir"))
        .collect();
    paths.sort();
    let mut ran = 0;
    let mut failures = Vec::new();
    for p in &paths {
        let inputs_path = p.with_extension("inputs.json");
        let Ok(inputs_text) = std::fs::read_to_string(&inputs_path) else { continue };
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(p).unwrap();
        let m = parse_module(&src, &name).unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
        let inputs = Inputs::from_json(&inputs_text).unwrap_or_else(|e| panic!("{name}: bad inputs: {e}"));
        let kernel = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
        match run_kernel(&m, kernel, &inputs) {
            Ok(out) => {
                let again = run_kernel(&m, kernel, &inputs).expect("second run");
                assert_eq!(out, again, "{name}: two runs differ");
                ran += 1;
            }
            Err(e) => failures.push(format!("{}", e.with_file(name))),
        }
    }
    assert!(failures.is_empty(), "corpus kernels failed:\n{}", failures.join("\n"));
    assert!(ran > 0, "no corpus kernel found in {}", dir.display());
}
