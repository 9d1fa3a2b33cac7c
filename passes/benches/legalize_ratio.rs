//! The scaling criterion of issue 4, measured in pairs: for every row of
//! the legalization bench (`benches/legalize.rs`, same inputs, same rows),
//! how many times the cost per instruction at 10^6 instructions is the cost
//! per instruction at 10^3.
//!
//! Why not criterion's two figures divided: the two sizes are minutes apart
//! there, and on a shared host (the lent device is a VM whose cores change
//! speed by up to 1.7x from one minute to the next, measured 2026-12-02) the
//! quotient of two separately taken medians moves more than the effect.
//! Here each round times one run at 10^6 and, right next to it, as many
//! runs at 10^3 as take the same time, and divides the two; the order
//! alternates between rounds. A slow stretch of the host then falls on both
//! sides of most quotients, and the median over the rounds is what is
//! reported, with the quartiles.
//!
//! Each run's input is a fresh untimed clone, and its output is dropped
//! after the timer stops (as in the criterion bench): the timed region is
//! exactly the row's `run`. ns / inst divides by the generated module's
//! instruction count, like the criterion bench.
//!
//! `XIR_RATIO_ROUNDS` (default 15) sets the rounds per row, `XIR_RATIO_SIZES`
//! (default `1000,1000000`) the two sizes, `XIR_RATIO_FILTER` a substring a
//! row's label must contain, and `XIR_PIPELINE_DIR` where
//! `spirv-legalize.ron` is found. Under `cargo test` (no `--bench`
//! argument) it runs the rows at 300 and 1000 instructions with 3 rounds,
//! so the test run checks that it works.
//!
//! Prints one markdown table on stdout; progress goes to stderr.

use std::time::{Duration, Instant};

use xir::pass::PassRegistry;
use xir::Module;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ALLOCATOR: &str = if cfg!(feature = "mimalloc") { "mimalloc" } else { "system" };

#[path = "common/rows.rs"]
mod rows;
#[path = "common/scaling.rs"]
mod scaling;
use rows::{Row, RowVisitor};

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// One timed run of `row` on a fresh clone of `input`.
fn timed_run(row: &Row, input: &Module) -> Duration {
    let mut m = input.clone();
    let t = Instant::now();
    row.run(&mut m);
    let took = t.elapsed();
    drop(m);
    took
}

/// One timed copy of `input` (the baseline row), dropped untimed.
fn timed_clone(input: &Module) -> Duration {
    let t = Instant::now();
    let m = input.clone();
    let took = t.elapsed();
    drop(m);
    took
}

/// The median of the per-run times of as many runs as fill `budget` (at
/// least `min_runs`).
fn median_of_runs(run: &impl Fn() -> Duration, budget: Duration, min_runs: usize) -> Duration {
    let mut times = Vec::new();
    let mut spent = Duration::ZERO;
    while times.len() < min_runs || spent < budget {
        let t = run();
        spent += t;
        times.push(t);
    }
    times.sort();
    times[times.len() / 2]
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

struct Pairs {
    rounds: usize,
    filter: String,
    /// Instructions of the two generated modules (the ns / inst divisors).
    insts: [usize; 2],
}

impl Pairs {
    /// Measures one row in `self.rounds` pairs; `run(k)` times one run on
    /// input `k` (0: the small size, 1: the large one). Prints a table row.
    fn measure(&self, label: &str, run: impl Fn(usize) -> Duration) {
        let per_inst = |d: Duration, k: usize| d.as_nanos() as f64 / self.insts[k] as f64;
        let (small, large) = (|| run(0), || run(1));
        // An untimed warm-up of both sizes.
        large();
        median_of_runs(&small, Duration::ZERO, 3);
        let (mut ratios, mut smalls, mut larges) = (Vec::new(), Vec::new(), Vec::new());
        let mut last_large = Duration::ZERO;
        for round in 0..self.rounds {
            // Even rounds time the large size first, odd ones the small
            // size first (for about as long as the last large run).
            let (s, l) = if round % 2 == 0 {
                let l = large();
                (median_of_runs(&small, l, 5), l)
            } else {
                let s = median_of_runs(&small, last_large, 5);
                (s, large())
            };
            last_large = l;
            let (s, l) = (per_inst(s, 0), per_inst(l, 1));
            smalls.push(s);
            larges.push(l);
            ratios.push(l / s);
        }
        for v in [&mut ratios, &mut smalls, &mut larges] {
            v.sort_by(f64::total_cmp);
        }
        println!(
            "| `{label}` | {:.1} | {:.1} | **{:.2}** | {:.2} - {:.2} | {:.2} | {} |",
            quantile(&smalls, 0.5),
            quantile(&larges, 0.5),
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            ratios[ratios.len() - 1],
            self.rounds
        );
        eprintln!("done {label}");
    }
}

impl RowVisitor for Pairs {
    fn visit(&mut self, row: &Row, inputs: &[Module], _probes: &[rows::Probe]) {
        if row.label.contains(&self.filter) {
            self.measure(&row.label, |k| timed_run(row, &inputs[k]));
        }
    }
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let default_sizes = if bench_mode { "1000,1000000" } else { "300,1000" };
    let sizes: Vec<usize> = std::env::var("XIR_RATIO_SIZES")
        .unwrap_or_else(|_| default_sizes.into())
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    let [a, b] = sizes[..] else { panic!("XIR_RATIO_SIZES needs two sizes, got {sizes:?}") };
    let rounds = env_or("XIR_RATIO_ROUNDS", if bench_mode { 15 } else { 3 }).max(1);
    let filter = std::env::var("XIR_RATIO_FILTER").unwrap_or_default();
    let t = Instant::now();
    let modules = [scaling::generate(a), scaling::generate(b)];
    let insts = [modules[0].inst_count(), modules[1].inst_count()];
    eprintln!("global allocator: {ALLOCATOR}; sizes {insts:?} instructions, generated in {:.2?}", t.elapsed());
    let pipe = scaling::pipeline();
    let mut opt_reg = PassRegistry::new();
    xir_passes::register_all(&mut opt_reg);
    println!("ns / inst at {} and {} instructions; ratio = the second over the first, per round", insts[0], insts[1]);
    println!();
    println!("| row | {a} ns/inst | {b} ns/inst | median ratio | quartiles | max | rounds |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut pairs = Pairs { rounds, filter, insts };
    if "baseline_module_clone".contains(&pairs.filter) {
        pairs.measure("baseline_module_clone", |k| timed_clone(&modules[k]));
    }
    rows::walk(&pipe, &opt_reg, &modules, &mut pairs);
}
