//! Criterion bench, in one run: each WGSL corpus kernel (`tests/wgsl`)
//! compiled in process by naga's own path (parse, validate, SPIR-V writer)
//! and by ours (naga's parse and validation, lowering to the AST, ast2xir,
//! the shipped `spirv` pipeline ending in the handoff, planning, emission,
//! SPIRV-Tools validation) at -O0; and, to split ours, the two parts of it
//! that are not our own work: naga's parse and validation
//! (`naga_parse`) and SPIRV-Tools' validation of the emitted module
//! (`spirv_tools`, which runs once per compilation at -O0).
//! `scripts/shader-bench.sh` prints the table BENCHMARKS.md records.
//!
//! naga's figures call naga directly, as a user of naga would, on this
//! thread: our front end's depth check and own thread (`xir_frontend::depth`)
//! are ours to pay, so they are in "ours" and in neither naga figure.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use xir::pipeline::RunOptions;
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

/// naga alone: parse, validate, overrides at their defaults, SPIR-V with
/// the options our oracle uses.
fn naga_alone(text: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(text).expect("naga parses it");
    let flags = naga::valid::ValidationFlags::all();
    let capabilities = xir_frontend::oracle::capabilities();
    let info = naga::valid::Validator::new(flags, capabilities).validate(&module).expect("valid");
    let constants = naga::back::PipelineConstants::default();
    let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
        .expect("overrides at their defaults");
    let options = xir_frontend::oracle::writer_options();
    naga::back::spv::write_vec(&module, &info, &options, None).expect("naga writes it")
}

/// naga's parse and validation as our front end runs them, its first part.
fn naga_parse(text: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(text).expect("naga parses it");
    let flags = naga::valid::ValidationFlags::all();
    let info = naga::valid::Validator::new(flags, naga::valid::Capabilities::all()).validate(&module).expect("valid");
    (module, info)
}

fn bench(c: &mut Criterion) {
    let reg = xir_pipelines::registry();
    let mut pipeline = xir_pipelines::loader(&reg, None).load("spirv").expect("the shipped spirv pipeline");
    for (name, text) in shaders() {
        let mut g = c.benchmark_group(format!("wgsl_to_spirv/{name}"));
        g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(20);
        g.bench_function("naga", |b| b.iter(|| naga_alone(&text)));
        g.bench_function("ours", |b| {
            b.iter(|| {
                let src = Source { path: &name, text: &text, language: Language::Wgsl };
                let mut m = xir_frontend::compile(&src, &Overrides::new()).expect("the front end takes it");
                let (_, handoffs) = xir_pipelines::backend::run_pipeline(
                    &mut pipeline,
                    RunOptions::default(),
                    &mut m,
                    &mut std::io::sink(),
                )
                .expect("legalizes");
                xir_pipelines::backend::compile_from(&handoffs, None, 0, false, None).expect("compiles")
            })
        });
        let src = Source { path: &name, text: &text, language: Language::Wgsl };
        g.bench_function("naga_parse", |b| b.iter(|| naga_parse(&text)));
        let mut m = xir_frontend::compile(&src, &Overrides::new()).expect("the front end takes it");
        let (_, handoffs) =
            xir_pipelines::backend::run_pipeline(&mut pipeline, RunOptions::default(), &mut m, &mut std::io::sink())
                .expect("legalizes");
        let words = xir_pipelines::backend::compile_from(&handoffs, None, 0, false, None).expect("compiles").1.words;
        g.bench_function("spirv_tools", |b| b.iter(|| xir_spirv::validate::validate(&words).expect("valid")));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
