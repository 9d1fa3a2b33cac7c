//! Criterion bench of the incremental session (`xir::db::Session`) on
//! generated modules of 1000 and 10000 functions (groups of three leaf
//! callables and one kernel calling them), in one run so the ratios to the
//! cold compile are measured together (BENCHMARKS.md, "Incremental"):
//!
//! - `check/*`: diagnostics only (parse and verify per function);
//! - `spirv/*`: diagnostics, then every affected kernel compiled by the
//!   shipped `spirv` pipeline with its callables and emitted as SPIR-V.
//!
//! Each has `cold` (a new session, the whole module), `edit` (one leaf
//! body changes, alternating between two versions) and `unchanged` (the
//! same text again).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use xir::db::Session;
use xir_pipelines::workspace::{compilers, Options};

/// `n` functions: for each group, three leaves and a kernel calling them.
/// The first leaf of the middle group multiplies by `factor`.
fn module(n: usize, factor: &str) -> String {
    let mut text = String::with_capacity(n * 220);
    let edited = n / 8;
    for g in 0..n / 4 {
        for j in 0..3 {
            let f = if g == edited && j == 0 { factor.to_string() } else { format!("{}.5", j + 1) };
            text.push_str(&format!(
                "callable @leaf{g}_{j}(%x: f32) -> f32 {{\n^entry:\n  %y = mul %x, f32 {f} : f32\n  \
                 %z = add %y, f32 1.0 : f32\n  return %z\n}}\n\n"
            ));
        }
        text.push_str(&format!(
            "kernel @k{g}(%out: buffer<f32>) block_size(64, 1, 1) {{\n^entry:\n  \
             %t = extract $dispatch_id, u32 0 : u32\n  %v = buffer.read %out, %t : f32\n  \
             %a = call @leaf{g}_0, %v : f32\n  %b = call @leaf{g}_1, %a : f32\n  \
             %c = call @leaf{g}_2, %b : f32\n  buffer.write %out, %t, %c\n  return\n}}\n\n"
        ));
    }
    text
}

fn spirv_session() -> Session {
    let reg = xir_pipelines::registry();
    let pipeline = xir_pipelines::loader(&reg, None).load("spirv").expect("the shipped spirv pipeline");
    let (compiler, emitter) = compilers(std::sync::Arc::new(pipeline), Options::default(), None);
    Session::new("bench.xir", "spirv", Some(compiler)).with_emitter(emitter)
}

/// Diagnose; with `emit`, compile and emit the kernels among `which`.
fn refresh(s: &mut Session, which: &[String], emit: bool) {
    assert!(s.diagnostics().is_empty());
    if emit {
        for k in which.iter().filter(|k| s.is_kernel(k)) {
            s.emitted(k).expect("a function").expect("compiles");
        }
    }
}

fn all(s: &Session) -> Vec<String> {
    s.function_names().map(String::from).collect()
}

fn bench(c: &mut Criterion) {
    for (mode, emit) in [("check", false), ("spirv", true)] {
        let mut g = c.benchmark_group(mode);
        g.sampling_mode(SamplingMode::Flat).sample_size(10).warm_up_time(Duration::from_millis(500));
        for n in [1000usize, 10000] {
            let (a, b) = (module(n, "2.0"), module(n, "3.0"));
            let new = || if emit { spirv_session() } else { Session::new("bench.xir", "", None) };
            g.measurement_time(Duration::from_secs(if emit { 20 } else { 5 }));
            g.bench_function(BenchmarkId::new("cold", n), |bench| {
                // The session's drop is not part of the compile.
                bench.iter_with_large_drop(|| {
                    let mut s = new();
                    s.update(&a);
                    let names = all(&s);
                    refresh(&mut s, &names, emit);
                    s
                })
            });
            let mut s = new();
            s.update(&a);
            let names = all(&s);
            refresh(&mut s, &names, emit);
            g.measurement_time(Duration::from_secs(3));
            let mut flip = false;
            g.bench_function(BenchmarkId::new("edit", n), |bench| {
                bench.iter(|| {
                    flip = !flip;
                    let r = s.update(if flip { &b } else { &a });
                    assert_eq!(r.changed.len(), 1);
                    refresh(&mut s, &r.affected, emit);
                })
            });
            let current = if flip { b.clone() } else { a.clone() };
            g.bench_function(BenchmarkId::new("unchanged", n), |bench| {
                bench.iter(|| {
                    let r = s.update(&current);
                    assert!(r.changed.is_empty());
                    refresh(&mut s, &r.affected, emit);
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
