//! The generated input of the legalization scaling measurements, shared by
//! the criterion bench (`benches/legalize.rs`) and the quick
//! `examples/opt_scaling.rs`: one long structured kernel of about `target`
//! instructions (a repeated construct group, see the bench's doc), the
//! shipped `spirv-legalize` pipeline, and the passes it runs at an opt level.
//! Included by `#[path]` from both, so the two always measure the same input.

use std::path::PathBuf;

use xir::pass::PassRegistry;
use xir::pipeline::{Loader, PassStep, Pipeline, Step};
use xir::Module;
use xir_testgen::programs::{lower, Ast, BinOp, CmpOp, Cond, Expr, Stmt, INPUT_LEN};

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
pub fn generate(target: usize) -> Module {
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

/// `spirv-legalize.ron` (from `XIR_PIPELINE_DIR` when set, for runs on a
/// machine without the source tree's layout) with every pass registered and
/// the backend's hook left unbound.
pub fn pipeline() -> Pipeline {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    reg.declare_hook("callable_specialization", "SPIR-V callable specialization (unbound here)");
    let dir = std::env::var_os("XIR_PIPELINE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines"));
    let path = dir.join("spirv-legalize.ron");
    let loader = Loader::new(&reg);
    match loader.load_path(&path) {
        Ok(p) => p,
        Err(e) => panic!("{}: {:?}", path.display(), e.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
    }
}

/// The passes `PassManager` runs at `opt_level`, in order (each step of a
/// fixed-point group once).
pub fn steps_at(steps: &[Step], opt_level: u8) -> Vec<&PassStep> {
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
