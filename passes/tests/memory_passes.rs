//! Memory / SSA pass checks that are not one pipeline's output (those are
//! file tests under `tests/filetests/`): `fix_self_referential` on raw
//! fixtures against the invariant it establishes, the post-restructure
//! dialect chain, and `inline` refusing recursion with the module unchanged.

use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::{Module, Opcode};

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    reg
}

fn parse(src: &str) -> Module {
    xir::text::parse_module(src, "test.xir").unwrap_or_else(|d| panic!("parse failed:\n{}", xir::diag::render(&d)))
}

/// Run pass `name` with default options; check verifier and dialect after.
fn run(m: &mut Module, name: &str, input_dialect: &str) -> Result<xir::pass::PassOutcome, xir::pass::PassError> {
    run_expect(m, name, input_dialect, None)
}

/// As `run`, checking `expect` instead of the declared output dialect
/// (mem2reg on raw CFG gives raw CFG with Phis).
fn run_expect(
    m: &mut Module,
    name: &str,
    input_dialect: &str,
    expect: Option<&str>,
) -> Result<xir::pass::PassOutcome, xir::pass::PassError> {
    let reg = registry();
    let decl = reg.get(name).unwrap_or_else(|| panic!("pass `{name}` is registered"));
    let pass = (decl.create)(None).expect("default options");
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    let out = pass.run(m, &mut cx)?;
    let diags = xir::verify::verify_module(m);
    assert!(diags.is_empty(), "verifier after {name}:\n{}\n{}", xir::diag::render(&diags), xir::text::print_module(m));
    let produced = expect.unwrap_or_else(|| decl.info.produced_from(input_dialect).unwrap_or(input_dialect));
    let d = xir_spec::spec().dialect(produced).expect("dialect exists");
    let diags = xir::dialect::check_module(m, d);
    assert!(
        diags.is_empty(),
        "dialect {produced} after {name}:\n{}\n{}",
        xir::diag::render(&diags),
        xir::text::print_module(m)
    );
    Ok(out)
}

fn count(m: &Module, op: Opcode) -> usize {
    m.functions.iter().map(|f| f.all_insts().filter(|&(_, i)| f.inst(i).opcode == op).count()).sum()
}

// Check that fix_self_referential cuts a genuine Phi cycle with a copy, so
// the audited dialect's invariant holds.
#[test]
fn fix_self_referential_cuts_phi_cycles() {
    let src = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %a = phi [%n, ^entry], [%b, ^latch] : u32
  %c = lt %a, u32 3 : bool
  cond_br %c, true ^body, false ^exit
^body:
  %d = eq %a, u32 1 : bool
  cond_br %d, true ^inc, false ^latch
^inc:
  %a1 = add %a, u32 1 : u32
  br target ^latch
^latch:
  %b = phi [%a, ^body], [%a1, ^inc] : u32
  br target ^head
^exit:
  buffer.write %out, u32 0, %a
  return
}
"#;
    let mut m = parse(src);
    let d = xir_spec::spec().dialect("xir.restructured.audited").unwrap();
    let before = xir::dialect::invariants::lookup("no_self_referential_values").unwrap()(&m);
    assert!(!before.is_empty(), "fixture has a Phi cycle");
    let reg = registry();
    let pass = (reg.get("fix_self_referential").unwrap().create)(None).unwrap();
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    pass.run(&mut m, &mut cx).unwrap();
    assert!(xir::verify::verify_module(&m).is_empty());
    let after = xir::dialect::invariants::lookup("no_self_referential_values").unwrap()(&m);
    assert!(after.is_empty(), "{}", xir::diag::render(&after));
    assert_eq!(count(&m, Opcode::Select), 1);
    let _ = d;
}

// Check that a cut back edge whose predecessor branches into the Phi's
// block twice (both arms of one cond_br) gets the same copy on both
// incomings: a Phi's entries from one predecessor must agree. (Found by the
// random Vulkan differential test at -O2.)
#[test]
fn fix_self_referential_copies_once_per_predecessor_edge_pair() {
    let src = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %a = phi [%n, ^entry], [%a, ^latch], [%a, ^latch] : u32
  %c = lt %a, u32 3 : bool
  cond_br %c, true ^latch, false ^exit
^latch:
  %d = eq %n, u32 7 : bool
  cond_br %d, true ^head, false ^head
^exit:
  buffer.write %out, u32 0, %a
  return
}
"#;
    let mut m = parse(src);
    assert!(xir::verify::verify_module(&m).is_empty(), "fixture is valid");
    let reg = registry();
    let pass = (reg.get("fix_self_referential").unwrap().create)(None).unwrap();
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    pass.run(&mut m, &mut cx).unwrap();
    let errors = xir::verify::verify_module(&m);
    assert!(errors.is_empty(), "{}", xir::diag::render(&errors));
    let after = xir::dialect::invariants::lookup("no_self_referential_values").unwrap()(&m);
    assert!(after.is_empty(), "{}", xir::diag::render(&after));
}

// Check that the post-restructure dialect chain matches the pass contracts:
// mem2reg -> audit_reg2mem_spills -> fix_self_referential.
#[test]
fn boundary_dialect_chain_is_consistent() {
    let reg = registry();
    let spec = xir_spec::spec();
    // The dialect `p` leaves IR in when it receives `from`.
    let after = |p: &str, from: &str| {
        let d = reg.get(p).unwrap().info.produced_from(from).unwrap_or_else(|| panic!("{p} keeps {from}"));
        spec.dialect(d).unwrap_or_else(|| panic!("{p} produces unknown dialect {d}"))
    };
    let m2r = after("mem2reg", "xir.restructured");
    let audited = after("audit_reg2mem_spills", &m2r.name);
    let consumes_ok = |p: &str, d: &xir_spec::Dialect| {
        reg.get(p).unwrap().info.consumes.iter().any(|c| d.refines(spec.dialect(c).unwrap()))
    };
    assert!(consumes_ok("audit_reg2mem_spills", m2r));
    assert!(consumes_ok("fix_self_referential", audited));
    assert!(!consumes_ok("fix_self_referential", m2r), "fix needs the audit first");
    assert_eq!(after("fix_self_referential", &audited.name).name, "xir.restructured.audited");
}

// Check that inline refuses recursion before changing anything, naming the
// call site.
#[test]
fn inline_refuses_recursion() {
    let src = r#"
callable @f(%n: u32) -> u32 {
^entry:
  %c = eq %n, u32 0 : bool
  cond_br %c, true ^done, false ^rec
^done:
  return u32 1
^rec:
  %m = sub %n, u32 1 : u32
  %r = call @f, %m : u32
  return %r
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %r = call @f, u32 3 : u32
  buffer.write %out, u32 0, %r
  return
}
"#;
    let mut m = parse(src);
    let before = xir::text::print_module(&m);
    let err = run(&mut m, "inline", "xir.raw").unwrap_err();
    assert_eq!(err.diagnostics.len(), 2, "{}", xir::diag::render(&err.diagnostics));
    assert!(err.diagnostics.iter().all(|d| d.rule == "inline-recursion" && d.inst.is_some()));
    assert_eq!(xir::text::print_module(&m), before, "nothing changed");
}
