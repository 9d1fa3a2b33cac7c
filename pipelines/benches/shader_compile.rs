//! Criterion bench, in one run: each WGSL corpus kernel (`tests/wgsl`)
//! compiled in process by naga's own path (parse, validate, SPIR-V writer)
//! and by ours (naga's parse and validation, lowering to the AST, ast2xir,
//! the shipped `spirv` pipeline, handoff, planning, emission, SPIRV-Tools
//! validation) at -O0. `scripts/shader-bench.sh` prints the ratio table
//! BENCHMARKS.md records.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use xir::pipeline::{PassManager, RunOptions};
use xir_frontend::{Language, Overrides, Source};

fn shaders() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/wgsl");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("wgsl"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

fn bench(c: &mut Criterion) {
    let reg = xir_pipelines::registry();
    let pipeline = xir_pipelines::loader(&reg, None).load("spirv").expect("the shipped spirv pipeline");
    for (name, text) in shaders() {
        let mut g = c.benchmark_group(format!("wgsl_to_spirv/{name}"));
        g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(20);
        g.bench_function("naga", |b| {
            b.iter(|| xir_frontend::oracle::naga_spirv(&text, Language::Wgsl, &name).expect("naga compiles it"))
        });
        g.bench_function("ours", |b| {
            b.iter(|| {
                let src = Source { path: &name, text: &text, language: Language::Wgsl };
                let mut m = xir_frontend::compile(&src, &Overrides::new()).expect("the front end takes it");
                PassManager::new(&pipeline, RunOptions::default())
                    .run(&mut m, &mut std::io::sink())
                    .expect("legalizes");
                xir_pipelines::backend::compile(&m, None, 0, false, None).expect("compiles")
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
