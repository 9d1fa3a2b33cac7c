//! Heap of the `spirv-legalize` pipeline per instruction: the parsed input
//! module's footprint by part of the core (`Module::footprint`), the peak
//! heap of the whole pipeline run by the pass manager, and the passes with
//! the highest peaks (each run once, in order, on the previous one's
//! output, as `opt_scaling` does). A counting global allocator measures;
//! the input is the legalize bench's generated kernel, printed and parsed
//! again so that it is what a reader hands the pipeline.
//!
//! `cargo run --release -p xir-passes --example pipeline_memory -- 10000 100000 1000000`
//! (sizes in instructions; default 10^4 and 10^5). `XIR_MEMORY_OPT=N` sets
//! the opt level (default 0). BENCHMARKS.md, "Memory per instruction".

use xir::pass::{AnalysisCache, PassContext};
use xir::pipeline::{PassManager, RunOptions};

#[path = "../benches/common/scaling.rs"]
mod scaling;
use scaling::{generate, pipeline, steps_at};

#[global_allocator]
static ALLOC: xir_testgen::heap::Counting = xir_testgen::heap::Counting;

/// `f`'s result and the peak heap above the heap at its start.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let (r, peak, _) = xir_testgen::heap::measure(f);
    (r, peak)
}

fn main() {
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000];
    }
    let opt_level: u8 = std::env::var("XIR_MEMORY_OPT").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let pipe = pipeline();
    let names: Vec<&str> = xir::Footprint::default().parts().iter().map(|(n, _)| *n).collect();
    println!("input footprint, B/inst:");
    println!("| instructions | total | {} |", names.join(" | "));
    println!("|---:|---:|{}", "---:|".repeat(names.len()));
    let mut runs = Vec::new();
    for &n in &sizes {
        let text = xir::text::print_module(&generate(n));
        let m = xir::text::parse_module(&text, "generated.xir").expect("the generated text parses");
        drop(text);
        let count = m.inst_count();
        let fp = m.footprint();
        let per = |b: usize| b as f64 / count as f64;
        let cells: Vec<String> = fp.parts().iter().map(|(_, b)| format!("{:.1}", per(*b))).collect();
        println!("| {count} | {:.1} | {} |", per(fp.total()), cells.join(" | "));
        runs.push((m, count));
    }
    println!();
    println!("`spirv-legalize` at -O{opt_level}, B per input instruction:");
    println!(
        "| instructions | input kept | pipeline peak (input + transient) | output kept | top pass peaks (transient) |"
    );
    println!("|---:|---:|---:|---:|---|");
    for (m, count) in runs {
        let per = |b: usize| b as f64 / count as f64;
        let input = m.footprint().total();
        // The pass manager's run, as the drivers run it.
        let mut whole = m.clone();
        let options = RunOptions { opt_level, ..Default::default() };
        let (result, peak) = peak_during(|| PassManager::new(&pipe, options).run(&mut whole, &mut std::io::sink()));
        if let Err(e) = result {
            panic!("the pipeline fails: {}", xir::diag::render(&e.diagnostics));
        }
        let output = whole.footprint().total();
        drop(whole);
        // Each pass once, on the previous output: which ones peak.
        let mut cur = m;
        let mut peaks: Vec<(String, usize)> = Vec::new();
        for step in steps_at(&pipe.steps, opt_level) {
            let mut cache = AnalysisCache::default();
            let mut cx = PassContext { analyses: &mut cache, opt_level, fast_math: false };
            let (r, p) = peak_during(|| step.pass.run(&mut cur, &mut cx));
            if let Err(e) = r {
                panic!("{} fails: {e}", step.name);
            }
            peaks.push((step.name.clone(), p));
        }
        peaks.sort_by_key(|p| std::cmp::Reverse(p.1));
        let top: Vec<String> = peaks.iter().take(3).map(|(name, p)| format!("{name} {:.0}", per(*p))).collect();
        println!(
            "| {count} | {:.0} | {:.0} | {:.0} | {} |",
            per(input),
            per(input + peak),
            per(output),
            top.join(", ")
        );
    }
}
