//! Throughput and memory of the text format: parse and print of generated
//! modules of 10^4, 10^5 and 10^6 instructions (built with the `Builder`,
//! deterministically), reported per instruction. A counting global
//! allocator measures the peak heap while parsing and printing and the heap
//! a parsed module retains; `XIR_BENCH_QUICK=1` skips criterion and prints
//! only the summary tables (used to fill BENCHMARKS.md), `XIR_BENCH_MEMORY=1`
//! only the memory table. A second shape
//! names every value alike, as a legalized module is after mem2reg (where
//! the printer once spent quadratic time finding `.k` suffixes).

use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput};
use xir::text::json::to_json;
use xir::text::{parse_module, print_module};
use xir::{Builder, FunctionKind, Metadata, Module, Opcode, TypeTable};
use xir_testgen::heap::measure;

#[global_allocator]
static ALLOC: xir_testgen::heap::Counting = xir_testgen::heap::Counting;

/// Instructions per function of the generated modules.
const PER_FUNCTION: usize = 10_000;

/// A module of about `n` instructions: kernels of straight-line arithmetic,
/// memory traffic and constants, with an if-diamond (and a phi) every 16
/// instructions; half the values named, each differently.
fn generate(n: usize) -> Module {
    generate_named(n, false)
}

/// Like `generate`, but the arithmetic values of each kernel all carry the
/// name `x`: the duplicate names of a legalized module.
fn generate_legalized(n: usize) -> Module {
    generate_named(n, true)
}

fn generate_named(n: usize, duplicates: bool) -> Module {
    let mut m = Module::new();
    m.intern_register_types();
    let mut left = n;
    let mut k = 0;
    while left > 0 {
        let fid = m.add_function(xir::Function::new(
            format!("kernel{k}"),
            FunctionKind::Kernel { block_size: [64, 1, 1], whole_blocks: false, noalias: false },
            TypeTable::VOID,
        ));
        let budget = left.min(PER_FUNCTION);
        let mut b = Builder::new(&mut m, fid);
        let arg = b.function().add_arg(TypeTable::F32, xir::ArgKind::Value, Metadata::named("a"));
        let entry = b.create_block();
        b.switch_to(entry);
        let slot = b.alloca(TypeTable::F32);
        let mut acc = arg;
        let mut emitted = 1;
        let mut i = 0u32;
        while emitted + 16 < budget {
            for _ in 0..4 {
                let c = b.module.const_f32(i as f32 * 0.5);
                let x = if duplicates {
                    b.named("x", Opcode::Mul, TypeTable::F32, &[acc, c])
                } else if i.is_multiple_of(2) {
                    b.named(&format!("x{i}"), Opcode::Mul, TypeTable::F32, &[acc, c])
                } else {
                    b.binary(Opcode::Add, acc, c)
                };
                b.store(slot, x);
                acc = b.load(slot);
                i += 1;
            }
            let zero = b.module.const_f32(0.0);
            let cond = b.compare(Opcode::Lt, acc, zero);
            let (t, f, merge) = (b.create_block(), b.create_block(), b.create_block());
            b.if_(cond, t, f, merge);
            b.switch_to(t);
            let neg = b.op(Opcode::Neg, TypeTable::F32, &[acc], &[]);
            b.br(merge);
            b.switch_to(f);
            b.br(merge);
            b.switch_to(merge);
            acc = b.phi(TypeTable::F32, &[(neg, t), (acc, f)]);
            emitted += 4 * 3 + 6;
        }
        b.ret(None);
        left = left.saturating_sub(emitted + 1);
        k += 1;
    }
    m
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("text");
    g.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        let m = generate(n);
        let count = m.inst_count() as u64;
        let src = print_module(&m);
        g.throughput(Throughput::Elements(count));
        g.bench_with_input(BenchmarkId::new("parse", n), &src, |b, src| {
            b.iter(|| parse_module(src, "bench.xir").expect("generated text parses"))
        });
        g.bench_with_input(BenchmarkId::new("print", n), &m, |b, m| b.iter(|| print_module(m)));
        g.bench_with_input(BenchmarkId::new("verify", n), &m, |b, m| b.iter(|| xir::verify::verify_module(m)));
        let legal = generate_legalized(n);
        g.bench_with_input(BenchmarkId::new("print_legalized", n), &legal, |b, m| b.iter(|| print_module(m)));
        g.bench_with_input(BenchmarkId::new("json_legalized", n), &legal, |b, m| b.iter(|| to_json(m)));
    }
    g.finish();
}

/// Best of `runs` wall-clock times, in nanoseconds.
fn best_ns(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// The table for BENCHMARKS.md: time and heap per instruction.
fn summary() {
    println!("| instructions | text bytes/inst | parse ns/inst | print ns/inst | verify ns/inst | parse peak heap B/inst | parsed module B/inst | print peak heap B/inst | verify peak heap B/inst |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in [10_000usize, 100_000, 1_000_000] {
        let m = generate(n);
        let count = m.inst_count();
        let src = print_module(&m);
        let (parsed, parse_peak, kept) = measure(|| parse_module(&src, "bench.xir").expect("parses"));
        let ((), print_peak, _) = measure(|| drop(print_module(&m)));
        let (diags, verify_peak, _) = measure(|| xir::verify::verify_module(&m));
        assert!(diags.is_empty(), "the generated module verifies");
        assert_eq!(print_module(&parsed), src, "round trip");
        drop(parsed);
        let runs = if n >= 1_000_000 { 3 } else { 10 };
        let parse_ns = best_ns(runs, || drop(parse_module(&src, "bench.xir")));
        let print_ns = best_ns(runs, || drop(print_module(&m)));
        let verify_ns = best_ns(runs, || drop(xir::verify::verify_module(&m)));
        let per = |x: f64| x / count as f64;
        println!(
            "| {count} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            per(src.len() as f64),
            per(parse_ns),
            per(print_ns),
            per(verify_ns),
            per(parse_peak as f64),
            per(kept as f64),
            per(print_peak as f64),
            per(verify_peak as f64),
        );
    }
}

/// The legalized shape (every value of a kernel named `x`): print, parse
/// and JSON write per instruction, which must stay linear.
fn summary_legalized() {
    println!("| instructions, all named `x` | print ns/inst | parse ns/inst | JSON write ns/inst |");
    println!("|---:|---:|---:|---:|");
    for n in [10_000usize, 100_000, 1_000_000] {
        let m = generate_legalized(n);
        let count = m.inst_count();
        let src = print_module(&m);
        assert_eq!(print_module(&parse_module(&src, "bench.xir").expect("parses")), src, "round trip");
        let runs = if n >= 1_000_000 { 3 } else { 10 };
        let print_ns = best_ns(runs, || drop(print_module(&m)));
        let parse_ns = best_ns(runs, || drop(parse_module(&src, "bench.xir")));
        let json_ns = best_ns(runs, || drop(to_json(&m)));
        let per = |x: f64| x / count as f64;
        println!("| {count} | {:.0} | {:.0} | {:.0} |", per(print_ns), per(parse_ns), per(json_ns));
    }
}

/// Where a parsed module's heap goes, per instruction, by part of the core
/// (`Module::footprint`), and the core's account held against the counting
/// allocator: an account more than 2% off the measurement fails the bench.
fn summary_footprint() {
    let parts = xir::Footprint::default().parts();
    let names: Vec<&str> = parts.iter().map(|(n, _)| *n).collect();
    println!("| instructions | kept B/inst (allocator) | accounted | {} |", names.join(" | "));
    println!("|---:|---:|---:|{}", "---:|".repeat(names.len()));
    for n in [10_000usize, 100_000, 1_000_000] {
        let src = print_module(&generate(n));
        let (parsed, _, kept) = measure(|| parse_module(&src, "bench.xir").expect("parses"));
        let count = parsed.inst_count() as f64;
        let fp = parsed.footprint();
        let off = (fp.total() as f64 - kept as f64).abs() / kept as f64;
        assert!(
            off <= 0.02,
            "the footprint account ({}) is {:.1}% off the allocator ({kept})",
            fp.total(),
            100.0 * off
        );
        let cells: Vec<String> = fp.parts().iter().map(|(_, b)| format!("{:.1}", *b as f64 / count)).collect();
        println!(
            "| {} | {:.1} | {:.1} | {} |",
            parsed.inst_count(),
            kept as f64 / count,
            fp.total() as f64 / count,
            cells.join(" | ")
        );
    }
}

fn main() {
    summary_footprint();
    if std::env::var_os("XIR_BENCH_MEMORY").is_some() {
        return;
    }
    summary();
    summary_legalized();
    if std::env::var_os("XIR_BENCH_QUICK").is_none() {
        let mut c = Criterion::default().configure_from_args();
        bench(&mut c);
        c.final_summary();
    }
}
