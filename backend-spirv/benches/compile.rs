//! Criterion bench: the full path from XIR text to validated SPIR-V over the
//! corpus — parse, the shipped `spirv` pipeline (legalization + handoff),
//! emission, Vulkan 1.2 validation — at preset 0 and at preset 2 (which adds
//! the optimizer and a second validation).

use criterion::{criterion_group, criterion_main, Criterion};
use xir::pass::PassRegistry;
use xir::pipeline::{Loader, PassManager, Pipeline, RunOptions};
use xir_spirv::{compile, CompileOptions};

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    reg.declare_hook("callable_specialization", "SPIR-V callable policy");
    xir_passes::register_all(&mut reg);
    xir_spirv::register_passes(&mut reg);
    reg.bind_hook("callable_specialization", "callable_specialization").expect("backend pass registered");
    reg
}

/// The corpus kernels that fit the kernel ABI.
fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths {
        if p.extension().and_then(|e| e.to_str()) == Some("xir") {
            out.push((p.file_name().unwrap().to_string_lossy().to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
    out
}

fn text_to_spirv(pipeline: &Pipeline, src: &str, level: u8) -> Option<usize> {
    let mut m = xir::text::parse_module(src, "bench.xir").ok()?;
    let run = RunOptions { opt_level: level, ..RunOptions::default() };
    PassManager::new(pipeline, run).run(&mut m, &mut std::io::sink()).ok()?;
    let k = m.func_ids().find(|&f| m.func(f).is_kernel())?;
    let out = compile(&m, k, &CompileOptions { opt_level: level, ..Default::default() }).ok()?;
    Some(out.words.len())
}

fn bench(c: &mut Criterion) {
    let reg = registry();
    let pipeline = Loader::new(&reg)
        .with_search_dir(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pipelines")))
        .load("spirv")
        .expect("spirv pipeline loads");
    let kernels: Vec<(String, String)> =
        corpus().into_iter().filter(|(_, src)| text_to_spirv(&pipeline, src, 0).is_some()).collect();
    assert!(!kernels.is_empty());
    for level in [0u8, 2] {
        c.bench_function(&format!("corpus_text_to_validated_spirv_O{level} ({} kernels)", kernels.len()), |b| {
            b.iter(|| {
                let mut words = 0;
                for (_, src) in &kernels {
                    words += text_to_spirv(&pipeline, src, level).expect("compiled before");
                }
                words
            })
        });
    }
    c.bench_function("saxpy_text_to_validated_spirv_O0", |b| {
        let src = &kernels.iter().find(|(n, _)| n == "saxpy.xir").expect("saxpy in corpus").1;
        b.iter(|| text_to_spirv(&pipeline, src, 0))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
