//! Every corpus kernel through the shipped `spirv` pipeline
//! (`pipelines/spirv.ron`: spirv-legalize with this backend's
//! `callable_specialization` bound to its hook, then `spirv_handoff`), then
//! compiled at presets 0..=3 (and with fast math at 0 and 2); every module validates for Vulkan 1.2 before
//! and after optimization. The only accepted rejection is the ABI's
//! push-constant limit, reported with a diagnostic.

mod common;

use common::*;
use xir::pipeline::{Loader, PassManager, RunOptions};

#[test]
fn corpus_through_the_spirv_pipeline_validates_at_every_preset() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let reg = registry();
    let pipeline = Loader::new(&reg)
        .with_search_dir(std::path::PathBuf::from(format!("{root}/pipelines")))
        .load("spirv")
        .unwrap_or_else(|e| panic!("spirv pipeline loads: {e}"));
    let mut paths: Vec<_> =
        std::fs::read_dir(format!("{root}/tests/corpus")).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut done = Vec::new();
    let mut failures = Vec::new();
    for p in paths.iter().filter(|p| p.extension().and_then(|e| e.to_str()) == Some("xir")) {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(p).unwrap();
        for (level, fast_math) in [(0u8, false), (1, false), (2, false), (3, false), (0, true), (2, true)] {
            let mut m = parse(&src);
            let run = RunOptions { opt_level: level, fast_math, ..RunOptions::default() };
            if let Err(e) = PassManager::new(&pipeline, run).run(&mut m, &mut std::io::sink()) {
                failures.push(format!("{name} @O{level}: pipeline: {e}"));
                break;
            }
            let k = kernel_of(&m);
            match xir_spirv::compile(&m, k, &opts(level, fast_math)) {
                Ok(out) => {
                    xir_spirv::validate::validate(&out.words_unoptimized).unwrap();
                    xir_spirv::validate::validate(&out.words).unwrap();
                    if level > 0 {
                        assert_eq!(out.opt, xir_spirv::validate::OptOutcome::Optimized, "{name} @O{level}");
                    }
                }
                Err(d) => {
                    let msg = xir::diag::render(&d);
                    if !msg.contains("bytes of push constants") {
                        failures.push(format!("{name} @O{level}: {msg}"));
                    }
                    break;
                }
            }
            if level == 2 && fast_math {
                done.push(name.clone());
            }
        }
    }
    eprintln!("compiled at O0..O3: {done:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(done.len() >= 20, "{done:?}");
}
