//! Corpus kernels that are already in `xir.spirv` form (structured, SSA or
//! memory-form locals, no break/continue) compile directly, without the
//! legalization pipeline, and validate at every preset. Kernels that still
//! need legalization must be rejected by the handoff with a diagnostic, never
//! a panic.

mod common;

use common::*;

#[test]
fn every_corpus_kernel_compiles_or_is_rejected_with_a_diagnostic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut compiled = Vec::new();
    let mut rejected = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths {
        if p.extension().and_then(|e| e.to_str()) != Some("xir") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let m = parse(&src);
        let k = kernel_of(&m);
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        eprintln!("compiling {name}");
        match xir_spirv::compile(&m, k, &opts(0, false)) {
            Ok(_) => {
                compile_all_presets(&src);
                compiled.push(name);
            }
            Err(d) => {
                assert!(!d.is_empty());
                rejected.push(format!("{name}: {}", xir::diag::render(&d[..1])));
            }
        }
    }
    eprintln!("compiled: {compiled:?}\nrejected:\n{}", rejected.join(""));
    for r in &rejected {
        // Only the legalization pipeline's jobs (break/continue lowering, callable
        // specialization) or the push-constant limit of the ABI may reject.
        let ok = r.contains("`break` is not allowed")
            || r.contains("`continue` is not allowed")
            || r.contains("callable_specialization")
            || r.contains("bytes of push constants");
        assert!(ok, "unexpected rejection: {r}");
    }
    assert!(compiled.len() >= 10, "too few corpus kernels compile directly: {compiled:?}");
}
