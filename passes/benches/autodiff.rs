//! Cost of the `autodiff` pass as a scope grows: one kernel whose scope
//! marks four f32 variables and computes a chain of `n` arithmetic
//! instructions over them (a deterministic mix of add / sub / mul / sin /
//! exp / tanh / fma, with a store to and a load from a variable every 16
//! instructions), then runs `backward` and reads the four gradients;
//! reported per instruction of the scope (criterion throughput).
//!
//! `XIR_BENCH_SIZES=1000,100000` overrides the list of `n`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::Module;

/// A kernel with one scope of about `n` instructions.
fn kernel(n: usize) -> String {
    const OPS: &[&str] = &["add", "sub", "mul", "sin", "add", "mul", "exp", "tanh", "fma"];
    let mut s = String::from("kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n");
    for k in 0..4 {
        s += &format!("  %x{k} = buffer.read %in, u32 {k} : f32\n  %v{k} = alloca : f32\n  store %v{k}, %x{k}\n");
    }
    s += "  autodiff.scope body ^body, merge ^done\n^body:\n";
    for k in 0..4 {
        s += &format!("  autodiff.requires_gradient %v{k}\n");
    }
    let mut names: Vec<String> = Vec::new();
    for k in 0..4 {
        s += &format!("  %a{k} = load %v{k} : f32\n");
        names.push(format!("%a{k}"));
    }
    let mut seed = 0x2545_f491u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..n {
        let op = OPS[(next() % OPS.len() as u64) as usize];
        // Recent values mostly, so the chain stays deep.
        let pick = |r: u64, names: &Vec<String>| names[names.len() - 1 - (r as usize % names.len().min(8))].clone();
        let (a, b, c) = (pick(next(), &names), pick(next(), &names), pick(next(), &names));
        let r = format!("%t{i}");
        match op {
            "sin" | "exp" | "tanh" => s += &format!("  %s{i} = mul {a}, f32 0.125 : f32\n  {r} = {op} %s{i} : f32\n"),
            "fma" => s += &format!("  {r} = fma {a}, {b}, {c} : f32\n"),
            _ => s += &format!("  {r} = {op} {a}, {b} : f32\n"),
        }
        names.push(r.clone());
        if i % 16 == 15 {
            let v = (i / 16) % 4;
            s += &format!("  store %v{v}, {r}\n  %l{i} = load %v{v} : f32\n");
            names.push(format!("%l{i}"));
        }
    }
    s += &format!("  autodiff.backward {}\n", names.last().expect("values"));
    for k in 0..4 {
        s += &format!("  %g{k} = autodiff.gradient %v{k} : f32\n  buffer.write %out, u32 {k}, %g{k}\n");
    }
    s += "  br target ^done\n^done:\n  return\n}\n";
    s
}

fn sizes() -> Vec<usize> {
    match std::env::var("XIR_BENCH_SIZES") {
        Ok(v) => v.split(',').filter_map(|t| t.trim().parse().ok()).collect(),
        Err(_) => vec![1_000, 10_000, 100_000],
    }
}

fn bench(c: &mut Criterion) {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let pass = (reg.get("autodiff").expect("registered").create)(None).expect("default options");
    let mut g = c.benchmark_group("autodiff");
    g.sample_size(10);
    for n in sizes() {
        let m: Module = xir::text::parse_module(&kernel(n), "bench.xir").expect("generated kernel parses");
        let insts = m.inst_count();
        let mut probe = m.clone();
        let mut cache = AnalysisCache::default();
        let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
        pass.run(&mut probe, &mut cx).expect("runs");
        println!("n = {n}: {insts} insts -> {}", probe.inst_count());
        g.throughput(Throughput::Elements(insts as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |bch, m| {
            bch.iter_batched(
                || m.clone(),
                |mut m| {
                    let mut cache = AnalysisCache::default();
                    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
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
