//! Scaling check of the memory / SSA passes (run with
//! `cargo test --release -p xir-passes --test memory_scaling -- --ignored --nocapture`):
//! one generated kernel of about 10^3, 10^4, 10^5 and 10^6 instructions
//! goes through the legalization spine; each step's best-of-3 time is
//! printed in ns per instruction. The assertion is a guard against
//! quadratic behaviour (which would grow 1000x from 10^3 to 10^6), not a
//! benchmark: cache effects alone grow the per-instruction cost of even a
//! plain scan several times on the largest size.

use std::time::Instant;

use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::testgen::programs::{lower, Ast, BinOp, CmpOp, Cond, Expr, Stmt};

const MINE: &[&str] =
    &["promote_ref_arg", "inline", "reg2mem", "mem2reg", "fix_self_referential", "phi_cleanup", "dce"];

/// `n` copies of an if/else and a counted loop with a conditional break.
fn body(n: usize) -> Vec<Stmt> {
    let mut v = Vec::new();
    for k in 0..n {
        let e = Expr::Bin(BinOp::Add, Box::new(Expr::Var(k as u8)), Box::new(Expr::Lit(k as u32)));
        let c = Cond::Cmp(CmpOp::Lt, 0, Expr::Var(k as u8 + 1), Expr::Lit(7));
        v.push(Stmt::If(c.clone(), vec![Stmt::Assign(k as u8, e.clone())], vec![Stmt::Assign(k as u8 + 2, e.clone())]));
        v.push(Stmt::For(2, vec![Stmt::Assign(k as u8 + 1, e.clone()), Stmt::Break(c), Stmt::Write(1, e)]));
    }
    v
}

#[test]
#[ignore]
fn per_instruction_cost_stays_flat() {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let steps = [
        "promote_ref_arg",
        "dce",
        "destructure_cfg",
        "inline",
        "reg2mem",
        "restructure_cfg",
        "mem2reg",
        "audit_reg2mem_spills",
        "fix_self_referential",
        "phi_cleanup",
    ];
    let mut first: Vec<f64> = Vec::new();
    for n in [30usize, 300, 3000, 30000] {
        let a = Ast { callables: vec![], kernel: body(n), dispatch: 4, input: vec![1; 16], scalar: 3 };
        let mut m = lower(&a).module;
        let mut line = format!("{:>8} insts:", m.inst_count());
        let mut costs = Vec::new();
        for step in steps {
            let Some(decl) = reg.get(step) else { continue };
            let pass = (decl.create)(None).unwrap();
            let mut cache = AnalysisCache::default();
            let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
            let size = m.inst_count().max(1) as f64;
            let mut best = f64::MAX;
            for _ in 0..3 {
                let mut c = m.clone();
                let t = Instant::now();
                pass.run(&mut c, &mut cx).unwrap();
                best = best.min(t.elapsed().as_nanos() as f64 / size);
            }
            pass.run(&mut m, &mut cx).unwrap();
            line += &format!(" {step}={best:.0}");
            costs.push((step, best));
        }
        eprintln!("{line}");
        if first.is_empty() {
            first = costs.iter().map(|c| c.1).collect();
        } else {
            for ((step, c), f) in costs.iter().zip(&first) {
                if MINE.contains(step) {
                    assert!(*c < 50.0 * f.max(100.0), "{step}: {c:.0} ns/inst vs {f:.0} at 10^3");
                }
            }
        }
    }
}
