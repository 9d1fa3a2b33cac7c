//! Focused tests of the memory / SSA passes on XIR text fixtures: each case
//! states its intent, runs one pass through the registry, then checks the
//! verifier, the produced dialect and the exact facts the pass promises.

use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::{Module, Opcode, SpillKind};

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

const RAW_DIAMOND: &str = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 4 : bool
  %a = add %t, u32 1 : u32
  cond_br %c, true ^l, false ^r
^l:
  %x = mul %a, u32 2 : u32
  br target ^m
^r:
  br target ^m
^m:
  %v = phi [%x, ^l], [u32 7, ^r] : u32
  %w = add %v, %a : u32
  buffer.write %out, %t, %w
  return
}
"#;

// Check that reg2mem leaves no Phi, tags one phi slot and the cross-block
// slots, and hoists every alloca into the entry block.
#[test]
fn reg2mem_demotes_phis_and_cross_block_values() {
    let mut m = parse(RAW_DIAMOND);
    run(&mut m, "reg2mem", "xir.raw").unwrap();
    assert_eq!(count(&m, Opcode::Phi), 0);
    let f = &m.functions[0];
    let entry = f.body().unwrap();
    let slots: Vec<_> = f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Alloca).collect();
    assert!(slots.iter().all(|&(b, _)| b == entry), "allocas hoisted");
    let kinds: Vec<_> = slots.iter().map(|&(_, i)| f.inst_md(i).spill).collect();
    assert_eq!(kinds.iter().filter(|k| **k == Some(SpillKind::Phi)).count(), 1);
    // %a (used in ^l and ^m), %t (used in ^m), %x (the phi's incoming moves to a store in ^l: local).
    assert_eq!(
        kinds.iter().filter(|k| **k == Some(SpillKind::CrossBlock)).count(),
        2,
        "{}",
        xir::text::print_module(&m)
    );
}

// Check that mem2reg undoes reg2mem: no slot left, one Phi named after the
// slot at the merge.
#[test]
fn mem2reg_recovers_ssa_after_reg2mem() {
    let mut m = parse(RAW_DIAMOND);
    run(&mut m, "reg2mem", "xir.raw").unwrap();
    run_expect(&mut m, "mem2reg", "xir.raw", Some("xir.raw")).unwrap();
    assert_eq!(count(&m, Opcode::Alloca), 0);
    assert_eq!(count(&m, Opcode::Load), 0);
    assert_eq!(count(&m, Opcode::Store), 0);
    assert_eq!(count(&m, Opcode::Phi), 1);
    let f = &m.functions[0];
    let phi = f.all_insts().find(|&(_, i)| f.inst(i).opcode == Opcode::Phi).unwrap().1;
    assert_eq!(f.inst_md(phi).name.as_deref(), Some("v"));
}

// Check that mem2reg leaves shared, GEP-addressed, by-reference and
// annotated slots alone, and promotes the plain one.
#[test]
fn mem2reg_respects_non_promotable_slots() {
    let src = r#"
callable @inc(%p: ref u32) -> void {
^entry:
  %v = load %p : u32
  %w = add %v, u32 1 : u32
  store %p, %w
  return
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %plain = alloca : u32
  %sh = alloca.shared : u32
  %arr = alloca : array<u32, 2>
  %byref = alloca : u32
  // no_promote
  %pinned = alloca : u32
  store %plain, u32 1
  store %sh, u32 2
  %e = gep %arr, u32 0 : u32
  store %e, u32 3
  store %byref, u32 4
  call @inc, %byref
  store %pinned, u32 5
  br target ^next
^next:
  %a = load %plain : u32
  %b = load %sh : u32
  %c = load %e : u32
  %d = load %byref : u32
  %g = load %pinned : u32
  %s1 = add %a, %b : u32
  %s2 = add %s1, %c : u32
  %s3 = add %s2, %d : u32
  %s4 = add %s3, %g : u32
  buffer.write %out, u32 0, %s4
  return
}
"#;
    let mut m = parse(src);
    let out = run_expect(&mut m, "mem2reg", "xir.structured", Some("xir.structured")).unwrap();
    assert!(out.stats.iter().any(|(k, v)| k == "promoted" && v == "1"), "{:?}", out.stats);
    assert_eq!(count(&m, Opcode::Alloca), 3, "array, by-ref and annotated slots stay");
    assert_eq!(count(&m, Opcode::AllocaShared), 1);
}

// Check that a loop counter is promoted to a header Phi with a back-edge
// incoming, and that a read before any write becomes undef.
#[test]
fn mem2reg_places_loop_phis() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %i = alloca : u32
  store %i, u32 0
  br target ^head
^head:
  %iv = load %i : u32
  %more = lt %iv, u32 10 : bool
  cond_br %more, true ^body, false ^exit
^body:
  %n = add %iv, u32 1 : u32
  store %i, %n
  br target ^head
^exit:
  %r = load %i : u32
  buffer.write %out, u32 0, %r
  return
}
"#;
    let mut m = parse(src);
    run_expect(&mut m, "mem2reg", "xir.raw", Some("xir.raw")).unwrap();
    assert_eq!(count(&m, Opcode::Phi), 1);
    assert_eq!(count(&m, Opcode::Alloca), 0);
}

// Check that the audit fails, naming the slot, when a spill slot survives,
// and passes on clean IR.
#[test]
fn audit_reports_surviving_spill_slots() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : array<u32, 2> !spill(cross_block)
  %e = gep %s, u32 1 : u32
  store %e, u32 3
  %v = load %e : u32
  buffer.write %out, u32 0, %v
  return
}
"#;
    let mut m = parse(src);
    let reg = registry();
    let pass = (reg.get("audit_reg2mem_spills").unwrap().create)(None).unwrap();
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    let err = pass.run(&mut m, &mut cx).unwrap_err();
    assert_eq!(err.diagnostics.len(), 1);
    let d = &err.diagnostics[0];
    assert!(d.message.contains("%s") && d.message.contains("cross_block"), "{d}");
    assert!(d.inst.is_some() && d.span.is_some(), "located: {d}");

    let mut clean = parse(RAW_DIAMOND);
    assert!(pass.run(&mut clean, &mut cx).is_ok());
}

// Check that dce folds a constant branch, drops the dead arm and its Phi
// incoming, removes dead arithmetic and a store-only slot.
#[test]
fn dce_folds_and_sweeps() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %dead = alloca : u32
  store %dead, u32 9
  %unused = mul u32 3, u32 4 : u32
  cond_br bool true, true ^l, false ^r
^l:
  br target ^m
^r:
  %x = add u32 1, u32 2 : u32
  br target ^m
^m:
  %v = phi [u32 5, ^l], [%x, ^r] : u32
  buffer.write %out, u32 0, %v
  return
}
"#;
    let mut m = parse(src);
    run(&mut m, "dce", "xir.raw").unwrap();
    let f = &m.functions[0];
    assert_eq!(f.blocks().len(), 3, "{}", xir::text::print_module(&m));
    assert_eq!(count(&m, Opcode::Alloca), 0);
    assert_eq!(count(&m, Opcode::Mul), 0);
    assert_eq!(count(&m, Opcode::CondBr), 0);
    let phi = f.all_insts().find(|&(_, i)| f.inst(i).opcode == Opcode::Phi).unwrap().1;
    assert_eq!(f.inst(phi).operands.len(), 1);
}

// Check that phi_cleanup removes a trivial Phi, a two-Phi cycle fed by one
// value, and a duplicate Phi.
#[test]
fn phi_cleanup_removes_redundant_and_duplicate_phis() {
    let src = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %a = phi [%n, ^entry], [%b, ^latch] : u32
  %a2 = phi [%n, ^entry], [%b, ^latch] : u32
  %c = lt %a, u32 3 : bool
  cond_br %c, true ^latch, false ^exit
^latch:
  %b = phi [%a, ^head] : u32
  br target ^head
^exit:
  %s = add %a, %a2 : u32
  buffer.write %out, u32 0, %s
  return
}
"#;
    let mut m = parse(src);
    run(&mut m, "phi_cleanup", "xir.raw").unwrap();
    assert_eq!(count(&m, Opcode::Phi), 0, "{}", xir::text::print_module(&m));
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

const CALLS: &str = r#"
callable @clampsum(%a: u32, %acc: ref u32) -> u32 {
^entry:
  %t = alloca : u32
  %c = lt %a, u32 10 : bool
  cond_br %c, true ^small, false ^big
^small:
  %v = load %acc : u32
  %w = add %v, %a : u32
  return %w
^big:
  return u32 10
}

callable @unused(%x: u32) -> u32 {
^entry:
  return %x
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %acc = alloca : u32
  store %acc, u32 5
  %r = call @clampsum, %t, %acc : u32
  %r2 = add %r, u32 1 : u32
  buffer.write %out, %t, %r2
  return
}
"#;

// Check that inline splices a multi-block callee with two returns, leaving
// no call and no Phi (the result goes through a slot).
#[test]
fn inline_multi_block_callee() {
    let mut m = parse(CALLS);
    run(&mut m, "inline", "xir.raw").unwrap();
    let k = &m.functions[m.find_function("k").unwrap().index()];
    assert_eq!(k.all_insts().filter(|&(_, i)| k.inst(i).opcode == Opcode::Call).count(), 0);
    assert_eq!(count(&m, Opcode::Phi), 0);
    assert_eq!(k.blocks().len(), 5, "{}", xir::text::print_module(&m));
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

// Check that promote_ref_arg turns a read-only reference into a value and
// loads at the call site, and keeps a written reference.
#[test]
fn promote_ref_arg_read_only_only() {
    let src = r#"
callable @get(%p: ref u32) -> u32 {
^entry:
  %v = load %p : u32
  return %v
}

callable @bump(%p: ref u32) -> void {
^entry:
  %v = load %p : u32
  %w = add %v, u32 1 : u32
  store %p, %w
  return
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = alloca : u32
  store %x, u32 4
  call @bump, %x
  %r = call @get, %x : u32
  buffer.write %out, u32 0, %r
  return
}
"#;
    let mut m = parse(src);
    run(&mut m, "promote_ref_arg", "xir.structured").unwrap();
    let get = &m.functions[m.find_function("get").unwrap().index()];
    let bump = &m.functions[m.find_function("bump").unwrap().index()];
    assert_eq!(get.args[0].kind, xir::ArgKind::Value);
    assert_eq!(bump.args[0].kind, xir::ArgKind::Reference);
    assert_eq!(get.inst_count(), 1, "the load is gone: {}", xir::text::print_module(&m));
}

// Check that a callable which writes a buffer keeps its reference argument
// (a value snapshot could differ from what it reads after its own write).
#[test]
fn promote_ref_arg_keeps_refs_of_writers() {
    let src = r#"
callable @peek(%p: ref u32, %b: buffer<u32>) -> u32 {
^entry:
  buffer.write %b, u32 0, u32 1
  %v = load %p : u32
  return %v
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = alloca : u32
  store %x, u32 4
  %r = call @peek, %x, %out : u32
  buffer.write %out, u32 1, %r
  return
}
"#;
    let mut m = parse(src);
    let out = run(&mut m, "promote_ref_arg", "xir.structured").unwrap();
    assert!(!out.changed);
}

// Check that unused_callable_removal drops exactly the unreachable callable.
#[test]
fn unused_callable_removal_keeps_reachable() {
    let mut m = parse(CALLS);
    run(&mut m, "unused_callable_removal", "xir.raw").unwrap();
    let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["clampsum", "k"]);
}

// Check that dce keeps a disconnected role block (the merge of an `if`
// whose arms both return) in structured IR, but removes a true orphan.
#[test]
fn dce_keeps_structured_role_blocks() {
    let src = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 3 : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  buffer.write %out, u32 0, u32 1
  return
^f:
  return
^m:
  buffer.write %out, u32 0, u32 2
  return
^orphan:
  return
}
"#;
    let mut m = parse(src);
    let out = run(&mut m, "dce", "xir.structured").unwrap();
    assert!(out.changed);
    let f = &m.functions[0];
    assert_eq!(f.blocks().len(), 4, "merge kept, orphan gone: {}", xir::text::print_module(&m));
    assert_eq!(count(&m, Opcode::BufferWrite), 2, "the merge keeps its payload");
}
