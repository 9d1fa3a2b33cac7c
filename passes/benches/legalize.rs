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
//! lowering (`xir::testgen::programs::lower`, which uses the `Builder`), so
//! the IR grows linearly with the number of constructs.
//!
//! Each pass is measured on the IR in the dialect it consumes: for every
//! size, the pipeline's passes as `-O1` runs them (`OptGroup`s above level
//! 1, the SSA and loop-rotation groups of `-O2` / `-O3`, are not part of
//! it) are run once in order, and the input of each is kept for that
//! pass's measurement (cloned per iteration, the clone not timed). That first run is also a probe: a pass whose single run exceeds
//! `XIR_BENCH_LIMIT_S` (default 30 s) is reported as too slow instead of
//! being sampled, and a size whose predicted prefix cost exceeds the limit
//! stops there. `XIR_BENCH_SIZES=1000,10000` restricts the sizes (under
//! `cargo test` the default is the smallest only);
//! `XIR_PIPELINES_DIR` overrides where `spirv-legalize.ron` is found (for
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

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::pipeline::{PassManager, RunOptions};
use xir::Module;

/// `--features mimalloc` measures with mimalloc as the global allocator
/// (freed memory stays mapped for reuse instead of going back to the kernel
/// and being faulted in again); without it, the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ALLOCATOR: &str = if cfg!(feature = "mimalloc") { "mimalloc" } else { "system" };

const SIZES: &[usize] = &[1_000, 10_000, 100_000, 1_000_000];

#[path = "common/scaling.rs"]
mod scaling;
use scaling::{generate, pipeline, steps_at};

/// Passes of the `-O2` / `-O3` groups measured as extra rows (`opt_<name>`),
/// in this order, from the IR where those groups run.
const OPT_ROWS: &[&str] = &["sccp", "cvp", "licm", "indvar_simplify", "loop_rotation"];

/// The opt level whose pass sequence is measured pass by pass.
const OPT_LEVEL: u8 = 1;

/// Runs one pass; returns its statistics as `name=value` pairs (the probe
/// prints them, so that how much work a pass did is visible by size).
fn run_pass(p: &dyn xir::pass::Pass, name: &str, m: &mut Module) -> String {
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: OPT_LEVEL, fast_math: false };
    match p.run(m, &mut cx) {
        Ok(out) => out.stats.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
        Err(e) => panic!("{name} failed: {e}\n{}", xir::diag::render(&e.diagnostics)),
    }
}

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

fn bench(c: &mut Criterion) {
    eprintln!("global allocator: {ALLOCATOR}");
    let pipe = pipeline();
    let steps = steps_at(&pipe.steps, OPT_LEVEL);
    let limit = limit();
    // Probe times per step (passes, then the two pipelines), by size.
    let mut probes: Vec<Vec<(usize, Duration)>> = vec![Vec::new(); steps.len() + 2 + OPT_ROWS.len()];
    let mut opt_reg = PassRegistry::new();
    xir_passes::register_all(&mut opt_reg);
    let mut group = c.benchmark_group("legalize");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let measure = std::env::var("XIR_BENCH_MEASURE_S").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    group.warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs_f64(measure));
    for n in sizes() {
        let t = Instant::now();
        let module = generate(n);
        let insts = module.inst_count();
        eprintln!("size {n}: {insts} instructions, generated in {:.2?}", t.elapsed());
        group.throughput(Throughput::Elements(insts as u64));
        // The memory-bound linear baseline: one copy of the module (every
        // table walked and allocated once), to tell cache effects at large
        // sizes from superlinear algorithms.
        group.bench_with_input(BenchmarkId::new("baseline_module_clone", n), &module, |bch, module| {
            bch.iter_batched(|| (), |()| module.clone(), BatchSize::PerIteration)
        });
        let mut cur = module.clone();
        // The IR where `-O2` / `-O3` run their optional groups (the input of
        // `reg2mem`), for the `opt_*` rows below.
        let mut opt_input: Option<Module> = None;
        // A pass that occurs more than once in the pipeline (phi_cleanup and
        // dce sit in two of its included groups) is labelled by occurrence.
        let mut occurrences: std::collections::HashMap<&str, usize> = Default::default();
        for (k, step) in steps.iter().enumerate() {
            let nth = occurrences.entry(step.name.as_str()).or_default();
            *nth += 1;
            let label = if *nth == 1 { step.name.clone() } else { format!("{}#{nth}", step.name) };
            if let Some(predicted) = predict(&probes[k], n) {
                if predicted > 4.0 * limit.as_secs_f64() {
                    eprintln!(
                        "PROBE {} n={n}: SKIPPED, predicted {predicted:.0} s per run; later passes lack input",
                        step.name
                    );
                    break;
                }
            }
            let input = cur.clone();
            if step.name == "reg2mem" {
                opt_input = Some(input.clone());
            }
            let t = Instant::now();
            let stats = run_pass(step.pass.as_ref(), &step.name, &mut cur);
            let took = t.elapsed();
            eprintln!(
                "PROBE {} n={n}: {:.3?} single run, {:.1} ns/inst, {} -> {} instructions; {stats}",
                step.name,
                took,
                took.as_nanos() as f64 / insts as f64,
                input.inst_count(),
                cur.inst_count()
            );
            probes[k].push((n, took));
            if took > limit {
                eprintln!("PROBE {} n={n}: TOO SLOW to sample (limit {limit:?})", step.name);
                continue;
            }
            group.bench_with_input(BenchmarkId::new(label.as_str(), n), &input, |bch, input| {
                bch.iter_batched(
                    || input.clone(),
                    |mut m| {
                        run_pass(step.pass.as_ref(), &step.name, &mut m);
                        m
                    },
                    BatchSize::PerIteration,
                )
            });
            drop(input);
        }
        drop(cur);
        // The near-linear passes of the -O2 / -O3 groups, each once in this
        // order on the previous one's output, starting where the groups run
        // (`gvn` and the rest of `ssa.ron` are not measured: see
        // BENCHMARKS.md).
        if let Some(mut cur) = opt_input.take() {
            for (k, name) in OPT_ROWS.iter().enumerate() {
                let slot = steps.len() + 2 + k;
                let label = format!("opt_{name}");
                if let Some(predicted) = predict(&probes[slot], n) {
                    if predicted > 4.0 * limit.as_secs_f64() {
                        eprintln!("PROBE {label} n={n}: SKIPPED, predicted {predicted:.0} s per run");
                        break;
                    }
                }
                let pass = (opt_reg.get(name).expect("registered").create)(None).expect("default options");
                let input = cur.clone();
                let t = Instant::now();
                run_pass(pass.as_ref(), name, &mut cur);
                let took = t.elapsed();
                eprintln!(
                    "PROBE {label} n={n}: {took:.3?} single run, {:.1} ns/inst, {} -> {} instructions",
                    took.as_nanos() as f64 / insts as f64,
                    input.inst_count(),
                    cur.inst_count()
                );
                probes[slot].push((n, took));
                if took > limit {
                    eprintln!("PROBE {label} n={n}: TOO SLOW to sample (limit {limit:?})");
                    continue;
                }
                group.bench_with_input(BenchmarkId::new(label.as_str(), n), &input, |bch, input| {
                    bch.iter_batched(
                        || input.clone(),
                        |mut m| {
                            run_pass(pass.as_ref(), name, &mut m);
                            m
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
        for (slot, opt_level) in [(steps.len(), 0u8), (steps.len() + 1, 1)] {
            let name = format!("pipeline_O{opt_level}");
            let opts = RunOptions { opt_level, ..RunOptions::default() };
            let mut m = module.clone();
            let t = Instant::now();
            if let Err(e) = PassManager::new(&pipe, opts.clone()).run(&mut m, &mut std::io::sink()) {
                panic!("{name}: {e}");
            }
            let took = t.elapsed();
            drop(m);
            eprintln!(
                "PROBE {name} n={n}: {took:.3?} single run, {:.1} ns/inst",
                took.as_nanos() as f64 / insts as f64
            );
            probes[slot].push((n, took));
            if took > limit {
                eprintln!("PROBE {name} n={n}: TOO SLOW to sample (limit {limit:?})");
                continue;
            }
            group.bench_with_input(BenchmarkId::new(name.as_str(), n), &module, |bch, module| {
                bch.iter_batched(
                    || module.clone(),
                    |mut m| {
                        PassManager::new(&pipe, opts.clone()).run(&mut m, &mut std::io::sink()).expect("pipeline runs");
                        m
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
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
