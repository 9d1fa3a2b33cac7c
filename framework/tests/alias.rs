//! Alias analysis (may / must / no alias, mod/ref) and convergence regions on
//! small parsed functions, and both as salsa queries that re-run only for the
//! edited function.

use xir::analysis::{AliasAnalysis, AliasResult, Convergence};
use xir::db::Session;
use xir::{text::parse_module, Function, Module, Value};

use AliasResult::*;

fn parse(src: &str) -> Module {
    parse_module(src, "test.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

fn named(f: &Function, name: &str) -> Value {
    if let Some(k) = f.args.iter().position(|a| a.md.name.as_deref() == Some(name)) {
        return Value::Arg(k as u32);
    }
    f.all_insts()
        .find(|(_, i)| f.inst_name(*i) == Some(name))
        .map(|(_, i)| Value::Inst(i))
        .unwrap_or_else(|| panic!("no %{name}"))
}

const LOCALS: &str = r#"
kernel @k(%buf: buffer<f32>, %other: buffer<f32>, %i: u32, %j: u32) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<f32, 4>
  %b = alloca : array<f32, 4>
  %s = alloca : struct<align 4>{f32, vec<f32, 2>}
  %a0 = gep %a, u32 0 : f32
  %a0b = gep %a, i32 0 : f32
  %a1 = gep %a, u32 1 : f32
  %ai = gep %a, %i : f32
  %ai2 = gep %a, %i : f32
  %aj = gep %a, %j : f32
  %b0 = gep %b, u32 0 : f32
  %s1 = gep %s, u32 1 : vec<f32, 2>
  %s1y = gep %s1, u32 1 : f32
  %s1y2 = gep %s, u32 1, u32 1 : f32
  %s0 = gep %s, u32 0 : f32
  %r0 = buffer.read %buf, u32 0 : f32
  %r1 = buffer.read %buf, u32 1 : f32
  %r0b = buffer.read %buf, u32 0 : f32
  %ri = buffer.read %buf, %i : f32
  %o0 = buffer.read %other, u32 0 : f32
  %l = load %a0 : f32
  return
}
"#;

#[test]
fn allocas_and_constant_geps() {
    let m = parse(LOCALS);
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let q = |x: &str, y: &str| aa.alias(named(f, x), named(f, y));
    assert_eq!(q("a", "b"), NoAlias, "distinct allocas");
    assert_eq!(q("a0", "b0"), NoAlias, "geps off distinct allocas");
    assert_eq!(q("a0", "a1"), NoAlias, "distinct constant indices");
    assert_eq!(q("a0", "a0b"), MustAlias, "same constant, different integer types");
    assert_eq!(q("ai", "ai2"), MustAlias, "same SSA index");
    assert_eq!(q("ai", "aj"), MayAlias, "different dynamic indices");
    assert_eq!(q("ai", "a1"), MayAlias, "dynamic against constant");
    assert_eq!(q("a", "a1"), MayAlias, "an aggregate contains its element");
    assert_eq!(q("s1y", "s1y2"), MustAlias, "a gep chain equals the flat gep");
    assert_eq!(q("s1y", "s0"), NoAlias, "different struct members");
    assert_eq!(q("a", "a"), MustAlias);
    // `sub_path`: where an element lies inside its container.
    let loc = |x: &str| *aa.location(named(f, x)).unwrap();
    assert_eq!(aa.sub_path(&loc("s"), &loc("s1y")).unwrap().as_slice(), &[1, 1]);
    assert_eq!(aa.sub_path(&loc("s1"), &loc("s1y")).unwrap().as_slice(), &[1]);
    assert!(aa.sub_path(&loc("s0"), &loc("s1y")).is_none());
    assert!(aa.sub_path(&loc("a"), &loc("ai")).is_none(), "dynamic offsets are not sub-paths");
}

#[test]
fn buffer_elements() {
    let m = parse(LOCALS);
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let acc = |x: &str| *aa.access(named(f, x).as_inst().unwrap()).unwrap();
    let q = |x: &str, y: &str| aa.alias_locations(&acc(x), &acc(y));
    assert_eq!(q("r0", "r1"), NoAlias, "distinct constant elements");
    assert_eq!(q("r0", "r0b"), MustAlias);
    assert_eq!(q("r0", "ri"), MayAlias);
    assert_eq!(q("r0", "o0"), MayAlias, "two buffer arguments may be one resource");
    assert_eq!(q("r0", "l"), NoAlias, "a buffer is not a local slot");
    assert_eq!(acc("l"), *aa.location(named(f, "a0")).unwrap(), "a load accesses its address");
}

#[test]
fn the_buffer_arguments_of_a_noalias_kernel_are_disjoint() {
    let m = parse(&LOCALS.replace("block_size(1, 1, 1) {", "block_size(1, 1, 1) noalias {"));
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let acc = |x: &str| *aa.access(named(f, x).as_inst().unwrap()).unwrap();
    let q = |x: &str, y: &str| aa.alias_locations(&acc(x), &acc(y));
    assert_eq!(q("r0", "o0"), NoAlias, "distinct arguments of a noalias kernel");
    assert_eq!(q("ri", "o0"), NoAlias, "whatever the index");
    // One buffer is still one buffer.
    assert_eq!(q("r0", "r0b"), MustAlias);
    assert_eq!(q("r0", "ri"), MayAlias);
}

const REFS: &str = r#"
callable @c(%p: ref f32, %q: ref f32, %u: ref u32, %st: ref struct<align 4>{f32, u32}) -> void {
^entry:
  %loc = alloca : f32
  %sh = alloca.shared : f32
  %sh2 = alloca.shared : f32
  %st0 = gep %st, u32 0 : f32
  %st1 = gep %st, u32 1 : u32
  return
}
"#;

#[test]
fn reference_arguments_alias_by_type() {
    let m = parse(REFS);
    let fid = m.find_function("c").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let q = |x: &str, y: &str| aa.alias(named(f, x), named(f, y));
    assert_eq!(q("p", "q"), MayAlias, "two references of one type");
    assert_eq!(q("p", "u"), NoAlias, "f32 and u32 objects never overlap");
    assert_eq!(q("p", "st"), MayAlias, "an f32 may be a member of the struct");
    assert_eq!(q("p", "st0"), MayAlias);
    assert_eq!(q("p", "st1"), NoAlias, "the u32 member is not an f32");
    assert_eq!(q("u", "st1"), MayAlias);
    assert_eq!(q("st0", "st1"), NoAlias);
    assert_eq!(q("loc", "p"), NoAlias, "a callee's own slot is not its caller's");
    assert_eq!(q("sh", "p"), MayAlias, "a caller may pass shared memory");
    assert_eq!(q("sh", "sh2"), NoAlias);
    assert_eq!(q("sh", "loc"), NoAlias);
}

const EFFECTS: &str = r#"
callable @touch(%r: ref u32) -> void {
^entry:
  store %r, u32 1
  return
}

kernel @k(%buf: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %x = alloca : u32
  %y = alloca : u32
  %sh = alloca.shared : u32
  %ld = load %x : u32
  call @touch, %x
  sync_block
  %old = atomic.fetch_add %y, u32 1 : u32
  %bo = atomic.fetch_add %buf, u32 0, u32 1 : u32
  %sum = add %ld, %old : u32
  return
}
"#;

#[test]
fn mod_ref_is_conservative_for_memory_other_threads_see() {
    let m = parse(EFFECTS);
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let loc = |x: &str| *aa.location(named(f, x)).unwrap();
    let inst = |op: xir::Opcode| f.all_insts().find(|&(_, i)| f.inst(i).opcode == op).unwrap().1;
    let call = inst(xir::Opcode::Call);
    let barrier = inst(xir::Opcode::SyncBlock);
    let atomic = named(f, "old").as_inst().unwrap();
    let buffer_atomic = named(f, "bo").as_inst().unwrap();
    let ld = named(f, "ld").as_inst().unwrap();
    let sum = named(f, "sum").as_inst().unwrap();
    let (x, y, sh) = (loc("x"), loc("y"), loc("sh"));
    assert!(aa.mod_ref(f, call, &x).writes, "the call is passed %x");
    assert!(!aa.mod_ref(f, call, &y).writes && !aa.mod_ref(f, call, &y).reads, "%y does not escape");
    assert!(aa.mod_ref(f, call, &sh).writes, "a callee may reach shared memory");
    assert!(aa.mod_ref(f, barrier, &sh).writes, "other threads' writes become visible");
    assert!(!aa.mod_ref(f, barrier, &x).writes, "private slots are the thread's own");
    assert!(aa.mod_ref(f, atomic, &y).writes && aa.mod_ref(f, atomic, &y).reads);
    assert!(!aa.mod_ref(f, atomic, &x).writes, "an atomic on %y leaves %x alone");
    assert!(aa.mod_ref(f, buffer_atomic, &sh).writes, "atomics synchronize: shared memory may change");
    assert!(aa.mod_ref(f, ld, &x).reads && !aa.mod_ref(f, ld, &x).writes);
    assert!(!aa.mod_ref(f, ld, &y).reads);
    assert_eq!(aa.mod_ref(f, sum, &sh), xir::analysis::ModRef::NONE, "arithmetic touches no memory");
    // The opcode-only shortcut scans use agrees with the per-location answer:
    // where it says "nothing", no instruction touches any location; and it
    // does not claim the memory operations above.
    for (_, i) in f.all_insts() {
        if AliasAnalysis::never_mod_ref(f.opcode(i)) {
            for l in [&x, &y, &sh] {
                assert_eq!(aa.mod_ref(f, i, l), xir::analysis::ModRef::NONE, "{i}");
            }
        }
    }
    assert!(AliasAnalysis::never_mod_ref(xir::Opcode::Add));
    for i in [call, barrier, atomic, buffer_atomic, ld] {
        assert!(!AliasAnalysis::never_mod_ref(f.opcode(i)), "{:?}", f.opcode(i));
    }
    assert!(!AliasAnalysis::never_mod_ref(xir::Opcode::Store));
}

const DIVERGENT: &str = r#"
kernel @k(%buf: buffer<u32>, %n: u32) block_size(64, 1, 1) {
^entry:
  %tid = extract $thread_id, u32 0 : u32
  %c = lt %tid, u32 8 : bool
  %u = lt %n, u32 8 : bool
  if %c, true ^then, false ^join, merge ^join
^then:
  sync_block
  br target ^join
^join:
  if %u, true ^uthen, false ^ujoin, merge ^ujoin
^uthen:
  sync_block
  br target ^ujoin
^ujoin:
  if %c, true ^ret, false ^tail, merge ^tail
^ret:
  return
^tail:
  buffer.write %buf, %tid, %n
  return
}
"#;

#[test]
fn convergence_regions_follow_divergent_branches() {
    let m = parse(DIVERGENT);
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let c = Convergence::compute(&m, fid);
    let b = f.blocks();
    let (entry, then, join, uthen, ujoin, ret, tail) = (b[0], b[1], b[2], b[3], b[4], b[5], b[6]);
    assert!(c.is_converged(entry));
    assert!(!c.is_converged(then), "under a thread-dependent branch");
    assert!(c.is_converged(join), "threads reconverge at the post-dominator");
    assert!(c.is_converged(uthen), "a uniform branch keeps threads together");
    assert!(c.is_converged(ujoin));
    assert!(!c.is_converged(ret) && !c.is_converged(tail), "no reconvergence after a divergent early return");
    assert_eq!(c.reconvergence_point(entry), Some(join));
    assert_eq!(c.reconvergence_point(join), None, "a uniform branch opens no region");
    assert_eq!(c.regions().len(), 2);
    let last = &c.regions()[1];
    assert_eq!((last.branch, last.reconverge), (ujoin, None));
    assert_eq!(last.blocks.len(), 2);
    let barriers = c.barriers_under_divergence(f);
    assert_eq!(barriers.len(), 1, "only the barrier under %c");
    assert_eq!(f.parent(barriers[0]), Some(then));
}

fn module(factor: &str) -> String {
    format!(
        "callable @a(%p: ref u32, %q: ref u32) -> void {{\n^entry:\n  store %p, u32 {factor}\n  return\n}}\n\n\
         callable @b(%p: ref u32, %q: ref f32) -> void {{\n^entry:\n  store %p, u32 1\n  return\n}}\n"
    )
}

#[test]
fn alias_and_convergence_are_salsa_queries() {
    let mut s = Session::new("m.xir", "identity", None);
    s.update(&module("1"));
    let (a, b) = (s.function("a").unwrap(), s.function("b").unwrap());
    let aa = xir::db::alias_analysis(s.db(), a).clone().expect("@a has a body");
    assert_eq!(aa.alias(Value::Arg(0), Value::Arg(1)), MayAlias);
    let ab = xir::db::alias_analysis(s.db(), b).clone().expect("@b has a body");
    assert_eq!(ab.alias(Value::Arg(0), Value::Arg(1)), NoAlias);
    let conv = xir::db::convergence(s.db(), a).clone().expect("@a has a body");
    assert!(conv.regions().is_empty());
    xir::db::convergence(s.db(), b);
    s.take_executed();

    // Asking again runs nothing; an edit of @a re-runs only @a's queries.
    xir::db::alias_analysis(s.db(), a);
    xir::db::convergence(s.db(), b);
    assert!(s.take_executed().is_empty());
    s.update(&module("2"));
    s.take_executed();
    xir::db::alias_analysis(s.db(), a);
    xir::db::alias_analysis(s.db(), b);
    xir::db::convergence(s.db(), a);
    xir::db::convergence(s.db(), b);
    let executed = s.take_executed();
    // (An update parses nothing: @a's parse re-runs when first asked.)
    assert_eq!(
        executed,
        ["parse_function(@a)", "alias_analysis(@a)", "uniformity(@a)", "convergence(@a)"],
        "{executed:?}"
    );
}

/// A gep laid out before the alloca it indexes (the defining block comes
/// later in the layout but dominates the use): the analysis still roots the
/// gep at that alloca, as it does when the layout follows dominance.
#[test]
fn a_forward_reference_in_the_layout_is_located() {
    const FORWARD: &str = r#"
kernel @k(%i: u32) block_size(1, 1, 1) {
^entry:
  br target ^def
^use:
  %a1 = gep %a, u32 1 : f32
  %a0 = gep %a, u32 0 : f32
  %ai = gep %a, %i : f32
  %b0 = gep %b, u32 0 : f32
  return
^def:
  %a = alloca : array<f32, 4>
  %b = alloca : array<f32, 4>
  br target ^use
}
"#;
    let m = parse(FORWARD);
    assert!(xir::verify::verify_module(&m).is_empty(), "{}", xir::diag::render(&xir::verify::verify_module(&m)));
    let fid = m.find_function("k").unwrap();
    let f = m.func(fid);
    let aa = AliasAnalysis::compute(&m, fid);
    let q = |x: &str, y: &str| aa.alias(named(f, x), named(f, y));
    assert_eq!(q("a0", "a1"), NoAlias, "constant geps off one alloca");
    assert_eq!(q("a0", "b0"), NoAlias, "geps off distinct allocas");
    assert_eq!(q("ai", "a1"), MayAlias, "a dynamic index");
    assert_eq!(q("a0", "a"), MayAlias, "an element and its whole array");
}
