//! Scaling of the legalization spine (issue 4, item 5): every pass of
//! `pipelines/spirv-legalize.ron`, alone and as the whole pipeline, on
//! generated structured kernels of 10^3 to 10^6 instructions, reported per
//! instruction (criterion throughput in elements = instructions of the
//! generated module).
//!
//! The kernel is a long sequence of small constructs nested at most three
//! deep (if/else diamonds, switches with and without `break`, counted loops
//! with conditional `break` / `continue`, do-while loops with an early
//! `return`, locals, arithmetic, buffer reads and writes, calls of callables
//! with value and reference arguments), built by the test generator's
//! lowering (`xir_testgen::programs::lower`, which uses the `Builder`), so
//! the IR grows linearly with the number of constructs.
//!
//! Each row is measured at every size before the next row starts, so a
//! row's 10^3 and 10^6 figures are taken seconds apart, not minutes (on a
//! machine whose speed drifts, that drift would otherwise enter their
//! ratio). Each pass is measured on the IR in the dialect it consumes: for
//! every size, the pipeline's passes as `-O1` runs them (`OptGroup`s above
//! level 1, the SSA and loop-rotation groups of `-O2` / `-O3`, are not
//! part of it) are run once in order, and the input of each is kept for
//! that pass's measurement (cloned per iteration, the clone not timed).
//! That first run is also a probe: a pass whose single run exceeds
//! `XIR_BENCH_LIMIT_S` (default 30 s) is reported as too slow instead of
//! being sampled, and a size whose run a row's smaller sizes predict to
//! exceed four times the limit stops there for that row and the rest of
//! its chain. `XIR_BENCH_SIZES=1000,10000` restricts the sizes (under
//! `cargo test` the default is the smallest only);
//! `XIR_PIPELINE_DIR` overrides where `spirv-legalize.ron` is found (for
//! running the built bench binary on another machine);
//! `XIR_BENCH_MEASURE_S` sets criterion's measurement time per benchmark
//! (default 2 s; every benchmark still takes its 10 samples, so the large
//! sizes are unaffected and the small ones simply run fewer iterations).
//!
//! The rows `opt_sccp`, `opt_cvp`, `opt_licm`, `opt_indvar_simplify` and
//! `opt_loop_rotation` measure those passes of the `-O2` / `-O3` groups,
//! each once in that order from the IR where the groups run (the input of
//! `reg2mem`); the rest of those groups (`gvn` among them) is not measured.
//!
//! `baseline_module_clone` (a copy of the generated module) is the linear,
//! memory-bound reference: its per-instruction cost grows with size only
//! through the memory hierarchy.
//!
//! The registry is `register_all` plus an unbound `callable_specialization`
//! hook (a no-op), without the SPIR-V backend, so the bench builds without
//! SPIRV-Tools.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use xir::pass::PassRegistry;
use xir::Module;

/// `--features mimalloc` measures with mimalloc as the global allocator
/// (freed memory stays mapped for reuse instead of going back to the kernel
/// and being faulted in again); without it, the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ALLOCATOR: &str = if cfg!(feature = "mimalloc") { "mimalloc" } else { "system" };

const SIZES: &[usize] = &[1_000, 10_000, 100_000, 1_000_000];

#[path = "common/rows.rs"]
mod rows;
#[path = "common/scaling.rs"]
mod scaling;
use rows::{Row, RowVisitor};
use scaling::{generate, pipeline};

fn limit() -> Duration {
    let s = std::env::var("XIR_BENCH_LIMIT_S").ok().and_then(|s| s.parse().ok()).unwrap_or(30.0);
    Duration::from_secs_f64(s)
}

/// The sizes to run. Under `cargo test` (criterion's test mode: no
/// `--bench` argument) only the smallest, so the test run checks that every
/// step of the bench works without building 10^6-instruction modules (a few
/// GB of copies in a debug build).
fn sizes() -> Vec<usize> {
    match std::env::var("XIR_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if !std::env::args().any(|a| a == "--bench") => SIZES[..1].to_vec(),
        Err(_) => SIZES.to_vec(),
    }
}

/// Benchmarks every row at every size in turn (a row's sizes back to back,
/// so that they are measured under the same machine conditions), after
/// probing each size with a single run.
struct Sampler<'g, 'c> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    /// The generated sizes, ascending, and the instructions of each
    /// generated module (the ns / inst divisor).
    sizes: Vec<usize>,
    insts: Vec<usize>,
    limit: Duration,
}

impl RowVisitor for Sampler<'_, '_> {
    fn admit_input(&mut self, row: &Row, k: usize, probes: &[rows::Probe]) -> bool {
        let seen: Vec<(usize, Duration)> = self.sizes.iter().zip(probes).map(|(&n, p)| (n, p.took)).collect();
        let Some(predicted) = predict(&seen, self.sizes[k]) else { return true };
        if predicted <= 4.0 * self.limit.as_secs_f64() {
            return true;
        }
        let rest = if row.is_chained() { "; later rows of its chain lack this size and larger ones" } else { "" };
        eprintln!("PROBE {} n={}: SKIPPED, predicted {predicted:.3} s per run{rest}", row.label, self.sizes[k]);
        false
    }

    fn visit(&mut self, row: &Row, inputs: &[Module], probes: &[rows::Probe]) {
        for (k, (input, p)) in inputs.iter().zip(probes).enumerate() {
            let (n, insts) = (self.sizes[k], self.insts[k]);
            eprintln!(
                "PROBE {} n={n}: {:.3?} single run, {:.1} ns/inst, {} -> {} instructions; {}",
                row.label,
                p.took,
                p.took.as_nanos() as f64 / insts as f64,
                p.insts_before,
                p.insts_after,
                p.stats
            );
            if p.took > self.limit {
                eprintln!("PROBE {} n={n}: TOO SLOW to sample (limit {:?})", row.label, self.limit);
                continue;
            }
            self.group.throughput(Throughput::Elements(insts as u64));
            self.group.bench_with_input(BenchmarkId::new(row.label.as_str(), n), input, |bch, input| {
                bch.iter_batched(
                    || input.clone(),
                    |mut m| {
                        row.run(&mut m);
                        m
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
}

fn bench(c: &mut Criterion) {
    eprintln!("global allocator: {ALLOCATOR}");
    let pipe = pipeline();
    let mut opt_reg = PassRegistry::new();
    xir_passes::register_all(&mut opt_reg);
    let mut group = c.benchmark_group("legalize");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let measure = std::env::var("XIR_BENCH_MEASURE_S").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    group.warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs_f64(measure));
    let mut sizes = sizes();
    sizes.sort_unstable();
    let modules: Vec<Module> = sizes
        .iter()
        .map(|&n| {
            let t = Instant::now();
            let module = generate(n);
            eprintln!("size {n}: {} instructions, generated in {:.2?}", module.inst_count(), t.elapsed());
            module
        })
        .collect();
    let insts: Vec<usize> = modules.iter().map(Module::inst_count).collect();
    // The memory-bound linear baseline: one copy of the module (every
    // table walked and allocated once), to tell cache effects at large
    // sizes from superlinear algorithms.
    for ((&n, module), &count) in sizes.iter().zip(&modules).zip(&insts) {
        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(BenchmarkId::new("baseline_module_clone", n), module, |bch, module| {
            bch.iter_batched(|| (), |()| module.clone(), BatchSize::PerIteration)
        });
    }
    let mut sampler = Sampler { group: &mut group, sizes, insts, limit: limit() };
    rows::walk(&pipe, &opt_reg, &modules, &mut sampler);
    group.finish();
}

/// Predicted seconds of one run at size `n`, extrapolating the growth seen
/// between the last two probes (exponent clamped to 1..=3; linear growth
/// when there is a single probe).
fn predict(probes: &[(usize, Duration)], n: usize) -> Option<f64> {
    let &(ln, lt) = probes.last()?;
    let e = match probes.len() {
        0 | 1 => 1.0,
        len => {
            let (pn, pt) = probes[len - 2];
            let r = lt.as_secs_f64().max(1e-9) / pt.as_secs_f64().max(1e-9);
            (r.ln() / (ln as f64 / pn as f64).ln()).clamp(1.0, 3.0)
        }
    };
    Some(lt.as_secs_f64() * (n as f64 / ln as f64).powf(e))
}

criterion_group!(benches, bench);
criterion_main!(benches);
