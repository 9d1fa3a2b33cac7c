//! Times every pass of `pipelines/spirv-legalize.ron` at `-O3` (its
//! optional `-O1` / `-O2` / `-O3` groups included) once, on the legalize
//! bench's generated kernels, and prints nanoseconds per instruction and
//! the peak resident set. It exists to check the scaling of the `-O2` /
//! `-O3` passes (`sccp`, `cvp`, `indvar_simplify`, `loop_rotation`,
//! `licm`, ...) quickly, without criterion's sampling.
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

use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::pipeline::{Loader, PassStep, Pipeline, Step};
use xir::testgen::programs::{lower, Ast, BinOp, CmpOp, Cond, Expr, Stmt, INPUT_LEN};
use xir::Module;

const OPT_LEVEL: u8 = 3;

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}
fn bin(o: BinOp, x: Expr, y: Expr) -> Expr {
    Expr::Bin(o, b(x), b(y))
}
fn cmp(o: CmpOp, ty: u8, x: Expr, y: Expr) -> Cond {
    Cond::Cmp(o, ty, x, y)
}

/// One construct group of the kernel; `i` varies variables and literals.
fn chunk(i: u32) -> Vec<Stmt> {
    use BinOp::*;
    use Expr::*;
    let k = (i % 4) as u8;
    let mut s = vec![
        Stmt::Assign(k, bin(Add, Var(k), bin(Mul, Tid, Lit(i)))),
        // An if/else diamond; the else arm holds a switch.
        Stmt::If(
            cmp(CmpOp::Lt, 0, Var(k), Lit(100 + i)),
            vec![Stmt::Assign(k + 1, DivC(false, b(Var(k)), 3)), Stmt::Write((i % 4) as u8, Var(k + 1))],
            vec![Stmt::Switch(
                bin(Xor, Var(k), Scalar),
                vec![
                    (
                        0,
                        vec![Stmt::Assign(
                            2,
                            Select(Box::new(cmp(CmpOp::Le, 2, Var(2), Lit(i))), b(Var(2)), b(Lit(1))),
                        )],
                        true,
                    ),
                    (1, vec![Stmt::Write(1, Read(b(Var(0))))], false),
                    (2, vec![], true),
                ],
                vec![Stmt::Assign(3, bin(Or, Var(3), Lit(4)))],
            )],
        ),
        // A counted loop with conditional break / continue and a call.
        Stmt::For(
            3,
            vec![
                Stmt::Assign(0, bin(Add, Var(0), Read(b(Var(1))))),
                Stmt::If(
                    cmp(CmpOp::Eq, 0, bin(And, Var(0), Lit(7)), Lit(3)),
                    vec![Stmt::Break(cmp(CmpOp::Ne, 1, Var(1), Lit(0)))],
                    vec![Stmt::Continue(cmp(CmpOp::Lt, 2, Var(2), Lit(0)))],
                ),
                Stmt::Assign(1, Call(i as u8, b(Var(0)), b(Var(2)))),
            ],
        ),
    ];
    if i.is_multiple_of(2) {
        // A do-while loop with an early return.
        s.push(Stmt::DoWhile(
            2,
            vec![Stmt::Assign(2, bin(Mul, Var(2), Lit(3))), Stmt::Return(cmp(CmpOp::Eq, 0, Var(3), Lit(12345 + i)))],
        ));
    }
    s
}

fn ast(chunks: u32) -> Ast {
    use BinOp::*;
    use Expr::*;
    let callables = vec![
        // Reads its reference argument only (promote_ref_arg's case).
        vec![
            Stmt::Assign(0, bin(Add, Var(0), Var(2))),
            Stmt::If(cmp(CmpOp::Lt, 2, Var(1), Lit(5)), vec![Stmt::Assign(1, Lit(2))], vec![]),
        ],
        // Writes its reference argument and calls the first callable.
        vec![
            Stmt::Assign(2, bin(Mul, Var(0), Lit(3))),
            Stmt::For(2, vec![Stmt::Assign(0, Call(0, b(Var(0)), b(Var(1))))]),
        ],
    ];
    Ast {
        callables,
        kernel: (0..chunks).flat_map(chunk).collect(),
        dispatch: 4,
        input: (0..INPUT_LEN).collect(),
        scalar: 7,
    }
}

/// A verified `xir.structured` module of about `target` instructions.
fn generate(target: usize) -> Module {
    let one = lower(&ast(1)).module.inst_count();
    let per_chunk = (lower(&ast(3)).module.inst_count() - one) / 2;
    let chunks = (target.saturating_sub(one) / per_chunk + 1) as u32;
    let m = lower(&ast(chunks)).module;
    let diags = xir::verify::verify_module(&m);
    assert!(diags.is_empty(), "generated kernel fails to verify:\n{}", xir::diag::render(&diags));
    let structured = xir_spec::spec().dialect("xir.structured").expect("dialect xir.structured");
    let diags = xir::dialect::check_module(&m, structured);
    assert!(diags.is_empty(), "generated kernel is not in xir.structured:\n{}", xir::diag::render(&diags));
    m
}

fn pipeline() -> Pipeline {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    reg.declare_hook("callable_specialization", "SPIR-V callable specialization (unbound here)");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines/spirv-legalize.ron");
    match Loader::new(&reg).load_path(&path) {
        Ok(p) => p,
        Err(e) => panic!("{}: {:?}", path.display(), e.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
    }
}

/// The passes `PassManager` runs at `opt_level`, in order (each step of a
/// fixed-point group once).
fn steps_at(steps: &[Step], opt_level: u8) -> Vec<&PassStep> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::Pass(p) | Step::Hook { bound: Some(p), .. } => out.push(p),
            Step::Hook { bound: None, .. } => {}
            Step::OptGroup { min_level, .. } if *min_level > opt_level => {}
            Step::Include { steps, .. } | Step::OptGroup { steps, .. } | Step::FixedPoint { steps, .. } => {
                out.extend(steps_at(steps, opt_level))
            }
        }
    }
    out
}

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
