//! Scalar evolution (`xir::analysis::scev`) on hand-written loops: add
//! recurrences of header Phis and of values derived from them, invariants,
//! what stays unknown, exact trip counts (constant, guarded symbolic,
//! modular for `ne`) and the cases where no count is claimed; the same
//! facts on structured SSA and through the salsa query.

use xir::analysis::scev::{self, Scev, TripCount};
use xir::analysis::{LoopForest, ScalarEvolution};
use xir::{Module, Opcode, Value};

fn parse(src: &str) -> Module {
    xir::text::parse_module(src, "t.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

fn analyze(m: &Module) -> (LoopForest, ScalarEvolution) {
    scev::analyze_function(m, &m.functions[0]).expect("reducible")
}

/// The instruction named `name` in the first function.
fn named(m: &Module, name: &str) -> Value {
    let f = &m.functions[0];
    let i = f.all_insts().map(|(_, i)| i).find(|&i| f.inst_name(i) == Some(name)).expect("named value");
    Value::Inst(i)
}

/// `(konst, [(atom name or "?", coef)])` of a Lin, for readable asserts.
fn show(m: &Module, l: &scev::Lin) -> String {
    let f = &m.functions[0];
    let mut s = format!("{}", l.konst);
    for (v, c) in &l.terms {
        let n = match v {
            Value::Inst(i) => f.inst_name(*i).unwrap_or("?").to_string(),
            Value::Arg(a) => format!("arg{a}"),
            other => format!("{other:?}"),
        };
        s.push_str(&format!(" + {c}*{n}"));
    }
    s
}

fn evo(m: &Module, name: &str) -> String {
    let (forest, se) = analyze(m);
    let f = &m.functions[0];
    match se.loops[0].get(m, f, &forest, 0, named(m, name)) {
        Scev::AddRec { start, step } => format!("{{{},+,{}}}", show(m, &start), show(m, &step)),
        Scev::Invariant(l) => format!("inv({})", show(m, &l)),
        Scev::Unknown => "unknown".into(),
    }
}

fn trip(m: &Module) -> Option<TripCount> {
    analyze(m).1.loops[0].trip.clone()
}

/// A raw-CFG while loop; `CMP` / `BOUND` / `STEP` / `START` are substituted.
const WHILE: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32, %s: u32) block_size(1, 1, 1) {
^entry:
  %inv = mul %n, u32 3 : u32
  br target ^head
^head:
  %i = phi [START, ^entry], [%i1, ^latch] : u32
  %j = phi [u32 5, ^entry], [%j1, ^latch] : u32
  %x = phi [u32 0, ^entry], [%x1, ^latch] : u32
  %c = CMP %i, BOUND : bool
  cond_br %c, true ^body, false ^exit
^body:
  %d = mul %i, u32 4 : u32
  %e = sub %d, %inv : u32
  %f = shl %j, u32 1 : u32
  %g = bit_xor %i, u32 1 : u32
  %x1 = add %x, %i : u32
  buffer.write %out, %i, %e
  br target ^latch
^latch:
  %i1 = add %i, STEP : u32
  %j1 = add %j, u32 3 : u32
  br target ^head
^exit:
  return
}
"#;

fn while_loop(cmp: &str, bound: &str, step: &str, start: &str) -> Module {
    parse(&WHILE.replace("CMP", cmp).replace("BOUND", bound).replace("STEP", step).replace("START", start))
}

#[test]
fn header_phis_and_affine_values_are_add_recurrences() {
    let m = while_loop("lt", "%n", "u32 1", "u32 0");
    let (_, se) = analyze(&m);
    assert_eq!(se.loops.len(), 1);
    let ivs: Vec<_> = se.loops[0].ivs.iter().map(|iv| m.functions[0].inst_name(iv.phi).unwrap()).collect();
    assert_eq!(ivs, ["i", "j"], "x accumulates i: not an add recurrence");
    assert_eq!(evo(&m, "i"), "{0,+,1}");
    assert_eq!(evo(&m, "j"), "{5,+,3}");
    assert_eq!(evo(&m, "i1"), "{1,+,1}");
    // 4*i - 3n: the invariant enters the start.
    assert_eq!(evo(&m, "d"), "{0,+,4}");
    let e = evo(&m, "e");
    assert!(e.starts_with("{0 + ") && e.ends_with("*inv,+,4}"), "{e}");
    assert_eq!(evo(&m, "f"), "{10,+,6}");
    assert_eq!(evo(&m, "g"), "unknown");
    assert_eq!(evo(&m, "x"), "unknown");
    assert_eq!(evo(&m, "x1"), "unknown");
    assert_eq!(evo(&m, "inv"), "inv(0 + 1*inv)");
}

#[test]
fn loop_shape_facts() {
    let m = while_loop("lt", "%n", "u32 1", "u32 0");
    let (_, se) = analyze(&m);
    let f = &m.functions[0];
    let label = |b: xir::Block| f.block_name(b).map(str::to_string);
    let l = &se.loops[0];
    assert_eq!(label(l.header).as_deref(), Some("head"));
    assert_eq!(label(l.preheader.unwrap()).as_deref(), Some("entry"));
    assert_eq!(label(l.latch.unwrap()).as_deref(), Some("latch"));
    assert_eq!(l.exits.len(), 1);
}

#[test]
fn constant_trip_counts_are_exact() {
    // 0..10 step 1: 10 back edges.
    assert_eq!(trip(&while_loop("lt", "u32 10", "u32 1", "u32 0")).unwrap().constant(), Some(10));
    // 0..=10 step 1.
    assert_eq!(trip(&while_loop("le", "u32 10", "u32 1", "u32 0")).unwrap().constant(), Some(11));
    // 0..10 step 3: i = 0, 3, 6, 9.
    assert_eq!(trip(&while_loop("lt", "u32 10", "u32 3", "u32 0")).unwrap().constant(), Some(4));
    // Never entered.
    assert_eq!(trip(&while_loop("lt", "u32 0", "u32 1", "u32 7")).unwrap().constant(), Some(0));
    // i != 7 from 1 step 2 wraps around the whole ring: (7-1) * inv(2)? 2 is
    // even, so only exact division counts: 3.
    assert_eq!(trip(&while_loop("ne", "u32 7", "u32 2", "u32 1")).unwrap().constant(), Some(3));
    // Counting down with gt: 10, 8, 6, 4, 2 > 1.
    assert_eq!(trip(&while_loop("gt", "u32 1", "u32 4294967294", "u32 10")).unwrap().constant(), Some(5));
}

#[test]
fn no_count_where_the_recurrence_may_wrap() {
    // i < 4294967295 step 2 from 0: passes the bound only by wrapping.
    assert!(trip(&while_loop("lt", "u32 4294967295", "u32 2", "u32 0")).is_none());
    // Symbolic bound with step 2: i may wrap before reaching n.
    assert!(trip(&while_loop("lt", "%n", "u32 2", "u32 0")).is_none());
    // Wrong direction: counting down while below the bound.
    assert!(trip(&while_loop("lt", "%n", "u32 4294967295", "u32 0")).is_none());
}

#[test]
fn symbolic_trip_counts_carry_their_guard() {
    let m = while_loop("lt", "%n", "u32 1", "%s");
    let t = trip(&m).unwrap();
    let g = t.guard.as_ref().expect("guarded");
    assert_eq!(g.op, Opcode::Lt);
    assert_eq!(show(&m, &t.count), format!("0 + 1*arg1 + {}*arg2", u32::MAX));
    assert_eq!(show(&m, &g.lhs), "0 + 1*arg2");
    assert_eq!(show(&m, &g.rhs), "0 + 1*arg1");
    assert_eq!(t.constant(), None);
    // `ne` with an odd step: (n - s) * inverse(3) modulo 2^32, no guard.
    let m = while_loop("ne", "%n", "u32 3", "u32 0");
    let t = trip(&m).unwrap();
    assert!(t.guard.is_none());
    assert_eq!(show(&m, &t.count), "0 + 2863311531*arg1");
    assert_eq!(3u32.wrapping_mul(2863311531), 1);
}

#[test]
fn a_loop_with_two_exits_has_no_trip_count() {
    let src =
        WHILE.replace("CMP", "lt").replace("BOUND", "%n").replace("STEP", "u32 1").replace("START", "u32 0").replace(
            "  buffer.write %out, %i, %e\n  br target ^latch",
            "  buffer.write %out, %i, %e\n  %stop = eq %e, u32 9 : bool\n  cond_br %stop, true ^exit, false ^latch",
        );
    let m = parse(&src);
    assert!(trip(&m).is_none());
    assert_eq!(evo(&m, "i"), "{0,+,1}", "recurrences do not need a single exit");
}

#[test]
fn structured_ssa_loops_are_analyzed_too() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  %i = phi [u32 2, ^entry], [%i1, ^step] : u32
  %c = lt %i, u32 20 : bool
  cond_br %c, true ^body, false ^done
^body:
  buffer.write %out, %i, %i
  br target ^step
^step:
  %i1 = add %i, u32 2 : u32
  br target ^prep
^done:
  return
}
"#;
    let m = parse(src);
    assert_eq!(evo(&m, "i"), "{2,+,2}");
    assert_eq!(trip(&m).unwrap().constant(), Some(9));
}

#[test]
fn the_salsa_query_matches_the_plain_function() {
    let src = WHILE.replace("CMP", "lt").replace("BOUND", "u32 10").replace("STEP", "u32 1").replace("START", "u32 0");
    let mut s = xir::db::Session::new("m.xir", "identity", None);
    s.update(&src);
    let k = s.function("k").unwrap();
    let via_db = xir::db::scalar_evolution(s.db(), k).clone().expect("has loops");
    let m = parse(&src);
    assert_eq!(via_db.loops.len(), 1);
    assert_eq!(via_db.loops[0].trip.as_ref().and_then(TripCount::constant), Some(10));
    assert_eq!(via_db.loops[0].ivs.len(), analyze(&m).1.loops[0].ivs.len());
}

#[test]
fn the_salsa_query_reruns_only_for_the_edited_function() {
    let k = WHILE.replace("CMP", "lt").replace("BOUND", "u32 10").replace("STEP", "u32 1").replace("START", "u32 0");
    let other = |factor: &str| {
        format!("callable @g(%x: u32) -> u32 {{\n^entry:\n  %y = mul %x, u32 {factor} : u32\n  return %y\n}}\n")
    };
    let mut s = xir::db::Session::new("m.xir", "identity", None);
    s.update(&format!("{k}\n{}", other("2")));
    for name in ["k", "g"] {
        let f = s.function(name).unwrap();
        xir::db::scalar_evolution(s.db(), f);
    }
    s.take_executed();
    // Editing @g re-runs @g's analysis only; @k's comes from the memo.
    s.update(&format!("{k}\n{}", other("3")));
    for name in ["k", "g"] {
        let f = s.function(name).unwrap();
        xir::db::scalar_evolution(s.db(), f);
    }
    let executed = s.take_executed();
    assert!(executed.contains(&"scalar_evolution(@g)".to_string()), "{executed:?}");
    assert!(!executed.iter().any(|e| e.ends_with("(@k)")), "{executed:?}");
}
