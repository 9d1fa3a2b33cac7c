//! The field-level analyses on small parsed functions, with exact results:
//! aggregate field bitmasks (leaf numbering, gep paths, dynamic indices),
//! pointer usage (kill / touch / live across blocks and loops) and lexical
//! scopes (construct tree, innermost construct, regions).

use xir::{
    analysis::{Cfg, FieldMasks, LexicalScopes, PointerUsage, ScopeKind},
    text::parse_module,
    Block, Function, Inst, Module,
};

fn parse(src: &str) -> Module {
    let m = parse_module(src, "test.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    let diags = xir::verify::verify_module(&m);
    assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
    m
}

/// The store number `k` (in layout order) into the address named `addr`.
fn store_to(f: &Function, addr: &str, k: usize) -> Inst {
    let a = xir::Value::Inst(named(f, addr));
    let stores = f.blocks().iter().flat_map(|&b| f.block(b).insts().iter().copied());
    stores
        .filter(|&i| f.opcode(i) == xir::Opcode::Store && f.inst(i).operands[0] == a)
        .nth(k)
        .unwrap_or_else(|| panic!("no store {k} to %{addr}"))
}

fn named(f: &Function, name: &str) -> Inst {
    f.all_insts().find(|(_, i)| f.inst_name(*i) == Some(name)).map(|(_, i)| i).unwrap_or_else(|| panic!("no %{name}"))
}

/// Block `name` of `f`, whose blocks are `names` in layout order (the IR
/// keeps no block names).
fn block(f: &Function, names: &[&str], name: &str) -> Block {
    f.blocks()[names.iter().position(|&n| n == name).unwrap_or_else(|| panic!("no ^{name}"))]
}

const FIELDS: &str = r#"
kernel @k(%out: buffer<f32>, %i: u32) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{f32, array<vec<f32, 2>, 3>, mat<f32, 2>}
  %t = alloca : array<f32, 2000>
  %a = gep %s, u32 1, u32 2 : vec<f32, 2>
  %b = gep %a, u32 1 : f32
  %d = gep %s, u32 1, %i : vec<f32, 2>
  %e = gep %s, u32 1, %i, u32 0 : f32
  %m = gep %s, u32 2, u32 1 : vec<f32, 2>
  %t5 = gep %t, u32 5 : f32
  store %b, f32 1.0
  store %d, vec<f32, 2> [2.0, 3.0]
  %x = load %e : f32
  %y = load %t5 : f32
  %z = add %x, %y : f32
  buffer.write %out, u32 0, %z
  return
}
"#;

#[test]
fn leaves_are_numbered_depth_first_and_paths_map_to_them() {
    let m = parse(FIELDS);
    let f = m.func(m.find_function("k").unwrap());
    let fm = FieldMasks::compute(&m, f);
    let acc = |n: &str| {
        let a = fm.access(named(f, n)).unwrap();
        (a.mask.ones(), a.exact)
    };
    // f32 = 0; array<vec2, 3> = 1..=6 (element k: 1+2k, 2+2k); mat2 = 7..=10
    // (column k: 7+2k, 8+2k).
    assert_eq!(acc("s"), ((0..11).collect::<Vec<u32>>(), true));
    assert_eq!(acc("a"), (vec![5, 6], true));
    assert_eq!(acc("b"), (vec![6], true));
    assert_eq!(acc("d"), (vec![1, 2, 3, 4, 5, 6], false), "a dynamic index covers its whole level");
    assert_eq!(acc("e"), (vec![1, 3, 5], false));
    assert_eq!(acc("m"), (vec![9, 10], true));
    let s = fm.root(named(f, "s")).unwrap();
    assert_eq!((s.leaves, s.escapes), (11, false));
    assert_eq!(s.read.ones(), [1, 3, 5]);
    assert_eq!(s.written.ones(), [1, 2, 3, 4, 5, 6]);
    // 2000 leaves is over the limit: one coarse leaf, and a member access
    // is not exact.
    let t = fm.root(named(f, "t")).unwrap();
    assert_eq!((t.leaves, t.read.ones()), (1, vec![0]));
    assert_eq!(acc("t5"), (vec![0], false));
    assert_eq!(fm.roots().len(), 2);
}

const USAGE: &str = r#"
callable @bump(%p: ref u32) -> void {
^entry:
  %v = load %p : u32
  %w = add %v, u32 1 : u32
  store %p, %w
  return
}

kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{u32, u32, u32}
  %esc = alloca : u32
  %s0 = gep %s, u32 0 : u32
  %s1 = gep %s, u32 1 : u32
  %s2 = gep %s, u32 2 : u32
  store %s, struct<align 4>{u32, u32, u32} [1, 2, 3]
  store %esc, u32 0
  call @bump, %esc
  %c = lt %n, u32 4 : bool
  cond_br %c, true ^left, false ^right
^left:
  store %s0, u32 7
  br target ^join
^right:
  store %s0, u32 8
  store %s1, u32 9
  br target ^join
^join:
  %r0 = load %s0 : u32
  %r1 = load %s1 : u32
  store %s2, u32 5
  %q = add %r0, %r1 : u32
  buffer.write %out, u32 0, %q
  return
}
"#;

const USAGE_BLOCKS: &[&str] = &["entry", "left", "right", "join"];

#[test]
fn pointer_usage_kills_touches_and_liveness_per_field() {
    let m = parse(USAGE);
    let f = m.func(m.find_function("k").unwrap());
    let fm = FieldMasks::compute(&m, f);
    let pu = PointerUsage::compute(f, &fm, &Cfg::compute(f));
    let s = named(f, "s");
    assert!(pu.tracks(s));
    assert!(!pu.tracks(named(f, "esc")), "passed to a call: escapes");
    assert!(fm.root(named(f, "esc")).unwrap().escapes);
    let at = |n: &str| match n {
        "whole" => store_to(f, "s", 0),
        "kill0" => store_to(f, "s0", 0),
        "kill0b" => store_to(f, "s0", 1),
        "kill1" => store_to(f, "s1", 0),
        "late" => store_to(f, "s2", 0),
        _ => named(f, n),
    };
    let usage = |n: &str| {
        let u = pu.usage(at(n)).unwrap();
        (u.kill.ones(), u.touch.ones(), u.read)
    };
    assert_eq!(usage("whole"), (vec![0, 1, 2], vec![], false));
    assert_eq!(usage("kill1"), (vec![1], vec![], false));
    assert_eq!(usage("r1"), (vec![], vec![1], true));
    let live = |n: &str| pu.live_after(at(n)).unwrap().ones();
    // Field 0 is overwritten on both paths; field 1 only on the right one;
    // field 2 is never read.
    assert_eq!(live("whole"), [1]);
    assert_eq!(live("kill0"), [0, 1]);
    assert_eq!(live("kill0b"), [0]);
    assert_eq!(live("r0"), [1]);
    assert_eq!(live("late"), Vec::<u32>::new());
    assert_eq!(pu.live_in(block(f, USAGE_BLOCKS, "join"), s).unwrap().ones(), [0, 1]);
    assert_eq!(pu.live_in(block(f, USAGE_BLOCKS, "right"), s).unwrap().ones(), Vec::<u32>::new());
    assert_eq!(pu.live_in(block(f, USAGE_BLOCKS, "left"), s).unwrap().ones(), [1]);
    assert_eq!(pu.live_out(block(f, USAGE_BLOCKS, "join"), s).unwrap().ones(), Vec::<u32>::new());
    let dead = vec![at("late")];
    assert_eq!(pu.dead_stores(), dead, "the whole store still feeds field 1 on the left path");
}

const LOOP_USAGE: &str = r#"
kernel @k(%out: buffer<u32>, %i: u32) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<u32, 4>
  store %a, array<u32, 4> [0, 0, 0, 0]
  %c0 = gep %a, u32 0 : u32
  %ci = gep %a, %i : u32
  br target ^head
^head:
  %v = load %c0 : u32
  store %ci, %v
  %again = lt %v, u32 10 : bool
  cond_br %again, true ^body, false ^exit
^body:
  %w = add %v, u32 1 : u32
  store %c0, %w
  br target ^head
^exit:
  %x = load %ci : u32
  buffer.write %out, u32 0, %x
  return
}
"#;

#[test]
fn pointer_usage_flows_around_loops_and_dynamic_stores_do_not_kill() {
    let m = parse(LOOP_USAGE);
    let f = m.func(m.find_function("k").unwrap());
    let fm = FieldMasks::compute(&m, f);
    let pu = PointerUsage::compute(f, &fm, &Cfg::compute(f));
    let at = |n: &str| match n {
        "first" => store_to(f, "a", 0),
        "dyn" => store_to(f, "ci", 0),
        _ => store_to(f, "c0", 0),
    };
    let dynamic = pu.usage(at("dyn")).unwrap();
    assert_eq!((dynamic.kill.ones(), dynamic.touch.ones()), (vec![], vec![0, 1, 2, 3]));
    let live = |n: &str| pu.live_after(at(n)).unwrap().ones();
    assert_eq!(live("first"), [0, 1, 2, 3]);
    assert_eq!(live("dyn"), [0, 1, 2, 3], "the loop comes back to read element 0");
    assert_eq!(live("back"), [0, 1, 2, 3]);
    assert_eq!(
        pu.live_in(block(f, &["entry", "head", "body", "exit"], "head"), named(f, "a")).unwrap().ones(),
        [0, 1, 2, 3]
    );
    assert!(pu.dead_stores().is_empty());
}

const SCOPES: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 4 : bool
  if %c, true ^then, false ^else, merge ^m
^then:
  simple_loop body ^body, merge ^after
^body:
  %d = lt %n, u32 2 : bool
  if %d, true ^inner, false ^after_inner, merge ^after_inner
^inner:
  buffer.write %out, u32 1, u32 1
  br target ^after_inner
^after_inner:
  break target ^after
^after:
  br target ^m
^else:
  br target ^m
^m:
  buffer.write %out, u32 0, u32 0
  return
}
"#;

#[test]
fn lexical_scopes_nest_constructs_and_give_their_regions() {
    let m = parse(SCOPES);
    let f = m.func(m.find_function("k").unwrap());
    let s = LexicalScopes::compute(f);
    const NAMES: &[&str] = &["entry", "then", "body", "inner", "after_inner", "after", "else", "m"];
    let b = |n: &str| block(f, NAMES, n);
    let summary: Vec<(Block, Block, bool, Option<usize>)> =
        s.constructs.iter().map(|c| (c.header, c.merge, matches!(c.kind, ScopeKind::Loop { .. }), c.parent)).collect();
    assert_eq!(
        summary,
        [
            (b("entry"), b("m"), false, None),
            (b("then"), b("after"), true, Some(0)),
            (b("body"), b("after_inner"), false, Some(1))
        ]
    );
    let innermost: Vec<Option<usize>> = ["entry", "then", "body", "inner", "after_inner", "after", "else", "m"]
        .iter()
        .map(|n| s.innermost(b(n)))
        .collect();
    assert_eq!(innermost, [None, Some(0), Some(1), Some(2), Some(1), Some(0), Some(0), None]);
    let names = |c: usize| {
        s.region(c).iter().map(|&x| NAMES[f.blocks().iter().position(|&y| y == x).unwrap()]).collect::<Vec<_>>()
    };
    assert_eq!(names(0), ["then", "body", "inner", "after_inner", "after", "else"]);
    assert_eq!(names(1), ["body", "inner", "after_inner"]);
    assert_eq!(names(2), ["inner"]);
    assert!(s.inside(b("inner"), 0) && !s.inside(b("m"), 0));
    assert_eq!(s.innermost_loop(b("inner")), Some(1));
    assert_eq!(s.enclosing_loop(2), Some(1));
    assert!(s.leaves(Some(2), b("after")), "a break to the loop's merge leaves the if");
}

#[test]
fn a_raw_cfg_has_no_scopes() {
    let m = parse(USAGE);
    let f = m.func(m.find_function("k").unwrap());
    let s = LexicalScopes::compute(f);
    assert!(s.constructs.is_empty());
    assert!(f.blocks().iter().all(|&x| s.visited(x) && s.innermost(x).is_none()));
}
