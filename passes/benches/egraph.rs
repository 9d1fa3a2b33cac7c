//! Cost of `algebraic_simplify` (the egg e-graph simplifier) as the pure
//! arithmetic of a block grows: one kernel with `blocks` blocks of `per_block`
//! u32 instructions each (a deterministic mix of add / sub / mul / bit ops /
//! shifts over three inputs, earlier results and small constants, so that
//! rules fire), reported per instruction (criterion throughput). The default
//! budgets apply, so large blocks end on the node limit rather than on
//! saturation; the stop reasons are printed once per size.
//!
//! `XIR_BENCH_SIZES=16x64,64x256` overrides the `blocks x per_block` list.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::Module;

/// A kernel of `blocks` blocks with `per_block` arithmetic instructions each.
fn kernel(blocks: usize, per_block: usize) -> String {
    const OPS: &[&str] = &["add", "sub", "mul", "bit_and", "bit_or", "bit_xor", "shl", "add", "sub"];
    let mut s = String::from("kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n");
    for k in 0..3 {
        s.push_str(&format!("  %x{k} = buffer.read %in, u32 {k} : u32\n"));
    }
    s.push_str("  br target ^b0\n");
    let mut seed = 0x2545_f491u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for b in 0..blocks {
        s.push_str(&format!("^b{b}:\n"));
        let mut names: Vec<String> = (0..3).map(|k| format!("%x{k}")).collect();
        for i in 0..per_block {
            let op = OPS[(next() % OPS.len() as u64) as usize];
            let a = names[(next() % names.len() as u64) as usize].clone();
            let r = next() % 4;
            let rhs = if r == 0 {
                format!("u32 {}", next() % 4)
            } else {
                names[(next() % names.len() as u64) as usize].clone()
            };
            let n = format!("%v{b}_{i}");
            s.push_str(&format!("  {n} = {op} {a}, {rhs} : u32\n"));
            names.push(n);
        }
        s.push_str(&format!("  buffer.write %out, u32 {b}, {}\n", names.last().unwrap()));
        if b + 1 < blocks {
            s.push_str(&format!("  br target ^b{}\n", b + 1));
        } else {
            s.push_str("  return\n");
        }
    }
    s.push_str("}\n");
    s
}

fn sizes() -> Vec<(usize, usize)> {
    let parse = |t: &str| {
        let (a, b) = t.split_once('x')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    match std::env::var("XIR_BENCH_SIZES") {
        Ok(v) => v.split(',').filter_map(parse).collect(),
        Err(_) => vec![(16, 16), (16, 64), (16, 256), (4, 1024)],
    }
}

fn bench(c: &mut Criterion) {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let pass = (reg.get("algebraic_simplify").expect("registered").create)(None).expect("default options");
    let mut g = c.benchmark_group("algebraic_simplify");
    g.sample_size(10);
    for (blocks, per_block) in sizes() {
        let m: Module =
            xir::text::parse_module(&kernel(blocks, per_block), "bench.xir").expect("generated kernel parses");
        let n = m.inst_count();
        // One run to report what the budgets did.
        let mut probe = m.clone();
        let mut cache = AnalysisCache::default();
        let mut cx = PassContext { analyses: &mut cache, opt_level: 2, fast_math: false };
        let out = pass.run(&mut probe, &mut cx).expect("runs");
        let stop = out.stats.iter().find(|(k, _)| k == "stop_reasons").map(|(_, v)| v.clone()).unwrap_or_default();
        println!("{blocks}x{per_block}: {n} insts -> {}, stop reasons: {stop}", probe.inst_count());
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(format!("{blocks}x{per_block}")), &m, |bch, m| {
            bch.iter_batched(
                || m.clone(),
                |mut m| {
                    let mut cache = AnalysisCache::default();
                    let mut cx = PassContext { analyses: &mut cache, opt_level: 2, fast_math: false };
                    pass.run(&mut m, &mut cx).expect("runs")
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
