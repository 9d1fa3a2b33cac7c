//! Integer ranges (`xir::analysis::int_range`) on hand-written functions:
//! counted loops bounded by their trip count, a Phi shifted down each
//! round, thread indices below the block size, masks, and what stays the
//! whole type (a wrapping add, a loop with no constant trip count).

use xir::analysis::int_range::{IntRanges, Interval};
use xir::analysis::{Cfg, DomTree};
use xir::{Module, Value};

fn parse(src: &str) -> Module {
    xir::text::parse_module(src, "t.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

fn ranges(m: &Module) -> IntRanges {
    let f = &m.functions[0];
    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    IntRanges::compute(m, f, &cfg, &dom)
}

/// The interval of the instruction named `name` in the first function.
fn of(m: &Module, r: &IntRanges, name: &str) -> Option<Interval> {
    let f = &m.functions[0];
    let i = f.all_insts().map(|(_, i)| i).find(|&i| f.inst_name(i) == Some(name)).expect("named value");
    r.get(m, f, Value::Inst(i))
}

const U32: Interval = (0, u32::MAX as i128);

#[test]
fn counted_loop_bounds_its_induction_variable() {
    let m = parse(
        "kernel @k(%o: buffer<u32>) block_size(8, 1, 1) {
^e:
  br target ^h
^h:
  %i = phi [i32 -1, ^e], [%n, ^b] : i32
  %c = le %i, i32 1 : bool
  cond_br %c, true ^b, false ^x
^b:
  %n = add %i, i32 1 : i32
  %w = mul %n, i32 3 : i32
  br target ^h
^x:
  return
}
",
    );
    let r = ranges(&m);
    // -1, 0, 1, 2: the header runs four times (the last one leaves).
    assert_eq!(of(&m, &r, "i"), Some((-1, 2)));
    // In the body `%i <= 1` (the branch into it): `%n` is at most 2.
    assert_eq!(of(&m, &r, "n"), Some((0, 2)));
    assert_eq!(of(&m, &r, "w"), Some((0, 6)));
}

#[test]
fn a_counted_loop_whose_last_value_wraps_has_no_bound() {
    // i8 from 120 by 4 while i < 127: 120, 124, 128 wraps: SCEV claims no
    // trip count, and the widened Phi is the whole type.
    let m = parse(
        "kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^e:
  br target ^h
^h:
  %i = phi [i8 120, ^e], [%n, ^b] : i8
  %c = lt %i, i8 127 : bool
  cond_br %c, true ^b, false ^x
^b:
  %n = add %i, i8 4 : i8
  br target ^h
^x:
  return
}
",
    );
    let r = ranges(&m);
    assert_eq!(of(&m, &r, "i"), Some((-128, 127)));
}

#[test]
fn shifted_down_phi_and_thread_index() {
    let m = parse(
        "kernel @k(%o: buffer<u32>) block_size(64, 2, 1) {
^e:
  %t = extract $thread_id, u32 0 : u32
  %y = extract $thread_id, u32 1 : u32
  %g = extract $dispatch_id, u32 0 : u32
  %x = bit_xor %t, u32 5 : u32
  %q = bit_or %t, u32 64 : u32
  br target ^h
^h:
  %s = phi [u32 32, ^e], [%n, ^b] : u32
  %c = gt %s, u32 0 : bool
  cond_br %c, true ^b, false ^x
^b:
  %n = shr %s, u32 1 : u32
  %p = add %t, %s : u32
  br target ^h
^x:
  return
}
",
    );
    let r = ranges(&m);
    assert_eq!(of(&m, &r, "t"), Some((0, 63)));
    assert_eq!(of(&m, &r, "y"), Some((0, 1)));
    assert_eq!(of(&m, &r, "g"), Some(U32));
    assert_eq!(of(&m, &r, "x"), Some((0, 63)));
    assert_eq!(of(&m, &r, "q"), Some((64, 127)));
    assert_eq!(of(&m, &r, "s"), Some((0, 32)));
    assert_eq!(of(&m, &r, "n"), Some((0, 16)));
    // `%s > 0` in the body.
    assert_eq!(of(&m, &r, "p"), Some((1, 95)));
}

#[test]
fn thread_index_of_a_callable_is_unknown() {
    // A callable may run under any block size.
    let m = parse(
        "callable @f() -> u32 {
^e:
  %t = extract $thread_id, u32 0 : u32
  return %t
}
",
    );
    let r = ranges(&m);
    assert_eq!(of(&m, &r, "t"), Some(U32));
}

#[test]
fn a_growing_phi_widens_and_wrapping_adds_are_whole() {
    let m = parse(
        "kernel @k(%o: buffer<u32>, %a: u32, %b: i32) block_size(1, 1, 1) {
^e:
  br target ^h
^h:
  %i = phi [u32 0, ^e], [%n, ^b] : u32
  %c = ne %i, %a : bool
  cond_br %c, true ^b, false ^x
^b:
  %n = add %i, u32 3 : u32
  br target ^h
^x:
  %m = bit_and %a, u32 7 : u32
  %w = add %m, u32 4294967289 : u32
  %v = add %m, u32 4294967288 : u32
  %r = mod %b, i32 8 : i32
  %s = bit_and %b, i32 12 : i32
  %d = div %a, u32 16 : u32
  %k = cast.bitwise %m : i32
  %z = cast.bitwise %a : i32
  return
}
",
    );
    let r = ranges(&m);
    assert_eq!(of(&m, &r, "i"), Some(U32));
    assert_eq!(of(&m, &r, "m"), Some((0, 7)));
    // 7 + 4294967289 is 2^32: one over, it wraps.
    assert_eq!(of(&m, &r, "w"), Some(U32));
    // 7 + 4294967288 is the largest u32: exact.
    assert_eq!(of(&m, &r, "v"), Some((4294967288, u32::MAX as i128)));
    assert_eq!(of(&m, &r, "r"), Some((-7, 7)));
    assert_eq!(of(&m, &r, "s"), Some((0, 12)));
    assert_eq!(of(&m, &r, "d"), Some((0, (u32::MAX / 16) as i128)));
    assert_eq!(of(&m, &r, "k"), Some((0, 7)));
    assert_eq!(of(&m, &r, "z"), Some((i32::MIN as i128, i32::MAX as i128)));
}

#[test]
fn the_salsa_query_matches_the_plain_function() {
    let src = "kernel @k(%o: buffer<u32>) block_size(16, 1, 1) {
^e:
  %t = extract $thread_id, u32 0 : u32
  br target ^h
^h:
  %i = phi [u32 0, ^e], [%n, ^b] : u32
  %c = lt %i, u32 10 : bool
  cond_br %c, true ^b, false ^x
^b:
  %n = add %i, u32 1 : u32
  %p = add %n, %t : u32
  br target ^h
^x:
  return
}
";
    let mut s = xir::db::Session::new("m.xir", "identity", None);
    s.update(src);
    let k = s.function("k").unwrap();
    let via_db = xir::db::int_ranges(s.db(), k).clone().expect("a body");
    let m = parse(src);
    let plain = ranges(&m);
    assert_eq!(via_db, plain);
    assert_eq!(of(&m, &plain, "i"), Some((0, 10)));
    // `%i < 10` in the body: `%n` in [1, 10].
    assert_eq!(of(&m, &plain, "p"), Some((1, 25)));
}

/// `bitonic_sort`'s loops: `k` doubles while `k <= BOUND`, the inner `j`
/// starts at `k >> 1` and halves; `tid ^ j` indexes 64 slots.
fn bitonic(bound: u32) -> Module {
    parse(&format!(
        "kernel @k(%o: buffer<u32>) block_size(64, 1, 1) {{
^e:
  %tid = extract $thread_id, u32 0 : u32
  br target ^h
^h:
  %k = phi [u32 2, ^e], [%k2, ^next] : u32
  %c = le %k, u32 {bound} : bool
  cond_br %c, true ^b, false ^x
^b:
  %j0 = shr %k, u32 1 : u32
  br target ^ih
^ih:
  %j = phi [%j0, ^b], [%j2, ^ib] : u32
  %ic = gt %j, u32 0 : bool
  cond_br %ic, true ^ib, false ^next
^ib:
  %partner = bit_xor %tid, %j : u32
  %j2 = shr %j, u32 1 : u32
  br target ^ih
^next:
  %k2 = shl %k, u32 1 : u32
  br target ^h
^x:
  return
}}
"
    ))
}

#[test]
fn operands_are_read_under_the_branches_that_dominate_them() {
    let m = bitonic(64);
    let r = ranges(&m);
    // `k <= 64` holds where `k >> 1` and `k << 1` are computed.
    assert_eq!(of(&m, &r, "j0"), Some((1, 32)));
    assert_eq!(of(&m, &r, "k2"), Some((4, 128)));
    assert_eq!(of(&m, &r, "k"), Some((2, 128)));
    assert_eq!(of(&m, &r, "j"), Some((0, 32)));
    assert_eq!(of(&m, &r, "partner"), Some((0, 63)));
    // One over: with `k <= 128`, `j` reaches 64 and `tid ^ j` 127.
    let m = bitonic(128);
    let r = ranges(&m);
    assert_eq!(of(&m, &r, "j"), Some((0, 64)));
    assert_eq!(of(&m, &r, "partner"), Some((0, 127)));
}
