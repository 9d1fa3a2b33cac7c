//! Times every pass of `pipelines/spirv-legalize.ron` at `-O3` (its
//! optional `-O1` / `-O2` groups included) once, on the legalize
//! bench's generated kernels, and prints nanoseconds per instruction and
//! the peak resident set. It exists to check the scaling of the `-O2` /
//! `-O3` passes (`sccp`, `cvp`, `indvar_simplify`, `licm`, ...) quickly,
//! without criterion's sampling.
//!
//! `cargo run --release -p xir-passes --example opt_scaling -- 1000 10000 100000`
//! (sizes in instructions; default 1000 and 10000). `XIR_SCALING_ONLY=cvp,sccp`
//! prints only those passes (every pass still runs, to give the next one
//! its input); each printed pass is timed `XIR_SCALING_REPS` times (default
//! 3) on copies of its input, and the fastest run is reported.
//! `XIR_SCALING_SKIP=gvn` leaves those passes out (for sizes where they are
//! too slow; the later passes then see a different input).
//! `XIR_SCALING_DUMP=dir` writes the module after each printed pass to
//! `dir/<size>-<step>-<pass>.xir` (to compare two builds' results). The generator is the bench's (`passes/benches/legalize.rs`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use xir::pass::{AnalysisCache, PassContext};

const OPT_LEVEL: u8 = 3;

#[path = "../benches/common/scaling.rs"]
mod scaling;
use scaling::{generate, pipeline, steps_at};

/// Peak resident set of this process so far, in MiB (Linux; 0 elsewhere).
fn peak_rss_mib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn main() {
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000];
    }
    let only: Option<Vec<String>> =
        std::env::var("XIR_SCALING_ONLY").ok().map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    let reps: usize = std::env::var("XIR_SCALING_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let skip: Vec<String> = std::env::var("XIR_SCALING_SKIP")
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
        .unwrap_or_default();
    let dump = std::env::var_os("XIR_SCALING_DUMP").map(PathBuf::from);
    let pipe = pipeline();
    let steps = steps_at(&pipe.steps, OPT_LEVEL);
    for n in sizes {
        let mut m = generate(n);
        let insts = m.inst_count();
        println!("size {n}: {insts} instructions");
        for (k, step) in steps.iter().enumerate() {
            if skip.contains(&step.name) {
                continue;
            }
            let before = m.inst_count().max(1);
            let shown = only.as_ref().is_none_or(|o| o.contains(&step.name));
            // The fastest of `reps` runs on copies (shared machines are
            // noisy); the first run's output feeds the next pass.
            let mut dt = Duration::MAX;
            let mut output = None;
            for _ in 0..if shown { reps } else { 1 } {
                let mut copy = m.clone();
                let mut cache = AnalysisCache::default();
                let mut cx = PassContext { analyses: &mut cache, opt_level: OPT_LEVEL, fast_math: false };
                let t = Instant::now();
                if let Err(e) = step.pass.run(&mut copy, &mut cx) {
                    panic!("{} failed: {e}\n{}", step.name, xir::diag::render(&e.diagnostics));
                }
                dt = dt.min(t.elapsed());
                output.get_or_insert(copy);
            }
            m = output.expect("at least one run");
            if let (true, Some(dir)) = (shown, &dump) {
                let path = dir.join(format!("{n}-{k:02}-{}.xir", step.name));
                std::fs::write(&path, xir::text::print_module(&m)).expect("write the dump");
            }
            if shown {
                println!(
                    "  {:<32} {:>10.3} ms {:>9.1} ns/inst (input {before} insts, peak rss {} MiB)",
                    step.name,
                    dt.as_secs_f64() * 1e3,
                    dt.as_nanos() as f64 / before as f64,
                    peak_rss_mib()
                );
            }
        }
    }
}
