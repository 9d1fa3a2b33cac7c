//! Behaviour of the reference interpreter, one kernel per case, written in
//! XIR text: exact results (bit patterns where they matter) and located
//! errors.

use serde_json::{json, Value as Json};
use xir::interp::{run_kernel, run_kernel_with, InterpError, Options, Outputs};
use xir::text::parse_module;

fn run(src: &str, inputs: Json) -> Result<Outputs, InterpError> {
    let m = parse_module(src, "test.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let inputs = serde_json::from_value(inputs).expect("inputs");
    run_kernel(&m, k, &inputs).map_err(|e| e.with_file("test.xir"))
}

fn ok(src: &str, inputs: Json) -> Outputs {
    run(src, inputs).unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

fn err(src: &str, inputs: Json) -> String {
    match run(src, inputs) {
        Ok(o) => panic!("expected an error, got {}", o.to_json()),
        Err(e) => e.to_string(),
    }
}

fn buf(o: &Outputs, name: &str) -> Json {
    o.buffers.get(name).cloned().unwrap_or_else(|| panic!("no buffer `{name}`"))
}

const SAXPY: &str = r#"
kernel @saxpy(%a: f32, %x: buffer<f32>, %y: buffer<f32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %n = buffer.size %x : u32
  %ok = lt %i, %n : bool
  if %ok, true ^body, false ^done, merge ^done
^body:
  %xi = buffer.read %x, %i : f32
  %yi = buffer.read %y, %i : f32
  %ax = mul %a, %xi : f32
  %r = add %ax, %yi : f32
  buffer.write %y, %i, %r
  br target ^done
^done:
  return
}
"#;

#[test]
fn saxpy_with_partial_last_block() {
    // 7 threads in blocks of 4: the eighth thread of the second block does not run.
    let o = ok(
        SAXPY,
        json!({"dispatch": [7, 1, 1], "args": {"a": 2.5, "x": [1, 2, 3, 4, 5, 6, 7],
               "y": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]}}),
    );
    assert_eq!(buf(&o, "y"), json!([3.0, 5.5, 8.0, 10.5, 13.0, 15.5, 18.0]));
    assert_eq!(buf(&o, "x"), json!([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]));
}

#[test]
fn dispatch_option_overrides_inputs() {
    let m = parse_module(SAXPY, "t.xir").unwrap();
    let inputs = serde_json::from_value(json!({"dispatch": [4, 1, 1],
        "args": {"a": 1.0, "x": {"fill": 1.0, "len": 4}, "y": {"fill": 0.0, "len": 4}}}))
    .unwrap();
    let opts = Options { dispatch: Some([2, 1, 1]), ..Options::default() };
    let o = run_kernel_with(&m, m.find_function("saxpy").unwrap(), &inputs, &opts).unwrap();
    assert_eq!(buf(&o, "y"), json!([1.0, 1.0, 0.0, 0.0]));
}

const REDUCE: &str = r#"
kernel @reduce(%x: buffer<u32>, %out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %sh = alloca.shared : array<u32, 8>
  %s = alloca : u32
  %tid = extract $thread_id, u32 0 : u32
  %gid = extract $dispatch_id, u32 0 : u32
  %bid = extract $block_id, u32 0 : u32
  %v = buffer.read %x, %gid : u32
  %slot = gep %sh, %tid : u32
  store %slot, %v
  sync_block
  store %s, u32 4
  loop prepare ^prep, body ^body, update ^step, merge ^end
^prep:
  %sv = load %s : u32
  %more = gt %sv, u32 0 : bool
  cond_br %more, true ^body, false ^end
^body:
  %sv1 = load %s : u32
  %act = lt %tid, %sv1 : bool
  if %act, true ^add, false ^bar, merge ^bar
^add:
  %o = add %tid, %sv1 : u32
  %po = gep %sh, %o : u32
  %a = load %po : u32
  %b = load %slot : u32
  %sum = add %a, %b : u32
  store %slot, %sum
  br target ^bar
^bar:
  sync_block
  br target ^step
^step:
  %sv2 = load %s : u32
  %h = shr %sv2, u32 1 : u32
  store %s, %h
  br target ^prep
^end:
  %first = eq %tid, u32 0 : bool
  if %first, true ^w, false ^done, merge ^done
^w:
  %p0 = gep %sh, u32 0 : u32
  %t = load %p0 : u32
  buffer.write %out, %bid, %t
  br target ^done
^done:
  return
}
"#;

#[test]
fn shared_memory_reduction_with_barriers() {
    let x: Vec<u32> = (1..=16).map(|i| i * i).collect();
    let o = ok(REDUCE, json!({"dispatch": [16, 1, 1], "args": {"x": x, "out": [0, 0]}}));
    let s0: u32 = (1..=8).map(|i| i * i).sum();
    let s1: u32 = (9..=16).map(|i| i * i).sum();
    assert_eq!(buf(&o, "out"), json!([s0, s1]));
}

#[test]
fn barrier_not_reached_by_every_thread_is_an_error() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %c = lt %t, u32 2 : bool
  if %c, true ^wait, false ^done, merge ^done
^wait:
  sync_block
  br target ^done
^done:
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert!(e.contains("barrier not reached by every thread of the block"), "{e}");
    assert!(e.starts_with("test.xir:8:3: error: [interp]"), "{e}");
}

#[test]
fn threads_at_different_barriers_is_an_error() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %c = eq %t, u32 0 : bool
  if %c, true ^a, false ^b, merge ^done
^a:
  sync_block
  br target ^done
^b:
  sync_block
  br target ^done
^done:
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert!(e.contains("wait at different barriers"), "{e}");
}

#[test]
fn atomic_histogram_on_buffer_and_shared_memory() {
    // Global histogram of x % 4 plus a per-block shared counter of all threads.
    let src = r#"
kernel @hist(%x: buffer<u32>, %h: buffer<u32>, %n: buffer<u32>, %old: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %cnt = alloca.shared : u32
  %t = extract $thread_id, u32 0 : u32
  %g = extract $dispatch_id, u32 0 : u32
  %first = eq %t, u32 0 : bool
  if %first, true ^init, false ^go, merge ^go
^init:
  store %cnt, u32 0
  br target ^go
^go:
  sync_block
  %v = buffer.read %x, %g : u32
  %bin = mod %v, u32 4 : u32
  %prev = atomic.fetch_add %h, u32 1, %bin : u32
  %mine = atomic.fetch_add %cnt, u32 1 : u32
  buffer.write %old, %g, %mine
  sync_block
  if %first, true ^out, false ^done, merge ^done
^out:
  %total = load %cnt : u32
  %b = extract $block_id, u32 0 : u32
  buffer.write %n, %b, %total
  br target ^done
^done:
  return
}
"#;
    let x: Vec<u32> = (0..16).map(|i| i * 7 + 3).collect();
    let mut expect = [0u32; 4];
    for v in &x {
        expect[(v % 4) as usize] += 1;
    }
    let o = ok(
        src,
        json!({"dispatch": [16, 1, 1], "args": {"x": x, "h": [0, 0, 0, 0], "n": [0, 0],
               "old": {"fill": 99, "len": 16}}}),
    );
    assert_eq!(buf(&o, "h"), json!(expect));
    assert_eq!(buf(&o, "n"), json!([8, 8]));
    // fetch_add returns the old value: each block hands out 0..8 exactly once.
    let mut olds: Vec<u64> = buf(&o, "old").as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    olds.sort();
    assert_eq!(olds, (0..8).flat_map(|i| [i, i]).collect::<Vec<u64>>());
}

#[test]
fn float_atomics_and_compare_exchange() {
    let src = r#"
kernel @k(%f: buffer<f32>, %u: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %o = atomic.fetch_add %f, f32 0.5, u32 0 : f32
  %m = atomic.fetch_max %f, f32 -1.0, u32 1 : f32
  %c = atomic.compare_exchange %u, u32 7, u32 9, u32 0 : u32
  %d = atomic.compare_exchange %u, u32 8, u32 1, u32 1 : u32
  %x = atomic.exchange %u, u32 5, u32 2 : u32
  return
}
"#;
    let o = ok(src, json!({"args": {"f": [1.0, "-inf"], "u": [7, 3, 0]}}));
    assert_eq!(buf(&o, "f"), json!([3.0, -1.0]));
    assert_eq!(buf(&o, "u"), json!([9, 3, 5]));
}

#[test]
fn callable_with_reference_argument_aliases_the_callers_lvalue() {
    let src = r#"
callable @bump(%p: ref u32, %by: u32) -> u32 {
^entry:
  %v = load %p : u32
  %n = add %v, %by : u32
  store %p, %n
  return %v
}

callable @fact(%n: u32) -> u32 {
^entry:
  %z = le %n, u32 1 : bool
  if %z, true ^one, false ^rec, merge ^m
^one:
  return u32 1
^rec:
  %m = sub %n, u32 1 : u32
  %r = call @fact, %m : u32
  %p = mul %n, %r : u32
  return %p
^m:
  unreachable
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %arr = alloca : array<u32, 3>
  %e1 = gep %arr, u32 1 : u32
  store %e1, u32 10
  %old = call @bump, %e1, u32 5 : u32
  %old2 = call @bump, %e1, u32 1 : u32
  %v = load %e1 : u32
  %f = call @fact, u32 6 : u32
  %p0 = gep %out, u32 0 : u32
  store %p0, %old
  buffer.write %out, u32 1, %old2
  buffer.write %out, u32 2, %v
  buffer.write %out, u32 3, %f
  return
}
"#;
    let o = ok(src, json!({"args": {"out": [0, 0, 0, 0]}}));
    assert_eq!(buf(&o, "out"), json!([10, 15, 16, 720]));
}

#[test]
fn runaway_recursion_hits_the_depth_limit() {
    let src = r#"
callable @f(%n: u32) -> u32 {
^entry:
  %r = call @f, %n : u32
  return %r
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %r = call @f, u32 1 : u32
  buffer.write %out, u32 0, %r
  return
}
"#;
    let e = err(src, json!({"args": {"out": [0]}}));
    assert!(e.contains("call depth limit of 64 exceeded"), "{e}");
    assert!(e.contains("(in @f, "), "{e}");
}

#[test]
fn integer_division_by_zero_is_located() {
    let src = r#"
kernel @k(%x: buffer<i32>) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %x, %t : i32
  %q = div i32 7, %v : i32
  buffer.write %x, %t, %q
  return
}
"#;
    let e = err(src, json!({"args": {"x": [2, 0]}}));
    assert_eq!(e, "test.xir:6:3: error: [interp] integer division by zero (in @k, bb0, inst2)");
    // Signed MIN / -1 and MIN % -1 overflow (undefined in SPIR-V): errors too, at i32 and i64.
    for (op, what) in [("div", "division"), ("mod", "remainder")] {
        let e = err(
            &src.replace("div i32 7, %v", &format!("{op} i32 -2147483648, %v")),
            json!({"dispatch": [1, 1, 1], "args": {"x": [-1]}}),
        );
        let want = format!("signed integer {what} overflows: -2147483648 by -1 (i32) (in @k, bb0, inst2)");
        assert_eq!(e, format!("test.xir:6:3: error: [interp] {want}"));
        let wide = src.replace("i32", "i64").replace("div i64 7, %v", &format!("{op} i64 -9223372036854775808, %v"));
        let e = err(&wide, json!({"dispatch": [1, 1, 1], "args": {"x": [-1]}}));
        let want = format!("signed integer {what} overflows: -9223372036854775808 by -1 (i64) (in @k, bb0, inst2)");
        assert_eq!(e, format!("test.xir:6:3: error: [interp] {want}"));
    }
    // One above MIN divides.
    let o = ok(
        &src.replace("div i32 7, %v", "div i32 -2147483647, %v"),
        json!({"dispatch": [1, 1, 1], "args": {"x": [-1]}}),
    );
    assert_eq!(buf(&o, "x"), json!([2147483647]));
}

#[test]
fn out_of_bounds_buffer_and_array_indices_are_errors() {
    let src = r#"
kernel @k(%x: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %x, u32 3 : u32
  return
}
"#;
    let e = err(src, json!({"args": {"x": [1, 2, 3]}}));
    assert!(e.contains("index 3 out of bounds (length 3)") && e.contains("test.xir:4:3"), "{e}");
    let src = r#"
kernel @k(%x: buffer<u32>, %i: u32) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<u32, 2>
  %p = gep %a, %i : u32
  store %p, u32 1
  return
}
"#;
    let e = err(src, json!({"args": {"x": [], "i": 2}}));
    assert!(e.contains("index 2 out of bounds (length 2)") && e.contains("test.xir:6:3"), "{e}");
}

#[test]
fn reading_uninitialized_memory_is_an_error() {
    let src = r#"
kernel @k(%x: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : u32
  %v = load %a : u32
  buffer.write %x, u32 0, %v
  return
}
"#;
    let e = err(src, json!({"args": {"x": [0]}}));
    assert_eq!(e, "test.xir:5:3: error: [interp] read of uninitialized memory (in @k, bb0, inst1)");
    // A partly written vector loads; using the unwritten lane is the error.
    let src = r#"
kernel @k(%x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : vec<f32, 2>
  %l0 = gep %a, u32 0 : f32
  store %l0, f32 1.0
  %v = load %a : vec<f32, 2>
  %e0 = extract %v, u32 0 : f32
  buffer.write %x, u32 0, %e0
  %e1 = extract %v, u32 1 : f32
  %s = add %e1, f32 1.0 : f32
  return
}
"#;
    let e = err(src, json!({"args": {"x": [0.0]}}));
    assert!(e.contains("use of an undefined value") && e.contains("test.xir:11:3"), "{e}");
}

/// Run one unary float op over bit patterns and return the result bits.
fn unary_f32(op: &str, inputs: &[u32]) -> Vec<u32> {
    let src = format!(
        r#"
kernel @k(%x: buffer<u32>) block_size(1, 1, 1) {{
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %b = buffer.read %x, %i : u32
  %f = cast.bitwise %b : f32
  %r = {op} %f : f32
  %o = cast.bitwise %r : u32
  buffer.write %x, %i, %o
  return
}}
"#
    );
    let o = ok(&src, json!({"dispatch": [inputs.len(), 1, 1], "args": {"x": inputs}}));
    buf(&o, "x").as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

#[test]
fn c_round_is_exact_around_one_half() {
    let below_half = 0.5f32.next_down();
    let above_half = 0.5f32.next_up();
    let cases: Vec<f32> = vec![
        below_half,
        0.5,
        above_half,
        -below_half,
        -0.5,
        -above_half,
        1.5f32.next_down(),
        1.5,
        2.5,
        -2.5,
        0.0,
        -0.0,
        8388609.0,
        f32::INFINITY,
    ];
    let expect: Vec<f32> =
        vec![0.0, 1.0, 1.0, -0.0, -1.0, -1.0, 1.0, 2.0, 3.0, -3.0, 0.0, -0.0, 8388609.0, f32::INFINITY];
    let bits: Vec<u32> = cases.iter().map(|f| f.to_bits()).collect();
    let got = unary_f32("round", &bits);
    assert_eq!(got, expect.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    // rint: ties to even.
    let got = unary_f32("rint", &[0.5f32.to_bits(), 1.5f32.to_bits(), 2.5f32.to_bits(), (-0.5f32).to_bits()]);
    assert_eq!(got, vec![0.0f32.to_bits(), 2.0f32.to_bits(), 2.0f32.to_bits(), (-0.0f32).to_bits()]);
}

#[test]
fn bit_counting_ops_are_exact() {
    let src = r#"
kernel @k(%x: buffer<u32>, %o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %x, %i : u32
  %a = clz %v : u32
  %b = ctz %v : u32
  %c = popcount %v : u32
  %d = reverse %v : u32
  %base = mul %i, u32 4 : u32
  buffer.write %o, %base, %a
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, %b
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %c
  %b3 = add %base, u32 3 : u32
  buffer.write %o, %b3, %d
  return
}
"#;
    let xs: [u32; 5] = [0, 1, 0x8000_0000, 0xffff_ffff, 0x1234_5678];
    let o = ok(src, json!({"dispatch": [5, 1, 1], "args": {"x": xs, "o": {"fill": 0, "len": 20}}}));
    let expect: Vec<u32> =
        xs.iter().flat_map(|&v| [v.leading_zeros(), v.trailing_zeros(), v.count_ones(), v.reverse_bits()]).collect();
    assert_eq!(buf(&o, "o"), json!(expect));
    assert_eq!(&expect[..4], &[32, 32, 0, 0]);
}

#[test]
fn shift_amounts_are_taken_modulo_the_width() {
    let src = r#"
kernel @k(%u: buffer<u32>, %s: buffer<i32>, %w: buffer<u64>, %b: buffer<u8>) block_size(1, 1, 1) {
^entry:
  %a = shl u32 1, u32 33 : u32
  buffer.write %u, u32 0, %a
  %c = shr u32 0x80000000, u32 63 : u32
  buffer.write %u, u32 1, %c
  %r = rotl u32 0x80000001, u32 36 : u32
  buffer.write %u, u32 2, %r
  %d = shr i32 -8, i32 35 : i32
  buffer.write %s, u32 0, %d
  %e = shl i32 1, i32 -1 : i32
  buffer.write %s, u32 1, %e
  %f = shl u64 1, u64 65 : u64
  buffer.write %w, u32 0, %f
  %g = shl u8 0x81, u32 9 : u8
  buffer.write %b, u32 0, %g
  %h = rotr u8 0x01, u8 1 : u8
  buffer.write %b, u32 1, %h
  return
}
"#;
    let o = ok(src, json!({"args": {"u": [0, 0, 0], "s": [0, 0], "w": [0], "b": [0, 0]}}));
    assert_eq!(buf(&o, "u"), json!([2, 1, 0x18]));
    assert_eq!(buf(&o, "s"), json!([-1, -2147483648]));
    assert_eq!(buf(&o, "w"), json!([2]));
    assert_eq!(buf(&o, "b"), json!([2, 0x80]));
}

#[test]
fn nan_and_signed_zero_through_min_max_copysign() {
    let src = r#"
kernel @k(%a: buffer<f32>, %b: buffer<f32>, %o: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %a, %i : f32
  %y = buffer.read %b, %i : f32
  %mn = min %x, %y : f32
  %mx = max %x, %y : f32
  %cs = copysign %x, %y : f32
  %base = mul %i, u32 3 : u32
  buffer.write %o, %base, %mn
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, %mx
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %cs
  return
}
"#;
    let o = ok(
        src,
        json!({"dispatch": [4, 1, 1], "args": {
            "a": ["nan", "-0.0", 0.0, "0x7fc00001"],
            "b": [1.5, 0.0, "-0.0", "-inf"],
            "o": {"fill": 0, "len": 12}}}),
    );
    // minNum ignores a quiet NaN; min(-0, +0) = -0 and max = +0 either way round;
    // copysign moves only the sign bit, NaN payloads included.
    assert_eq!(
        buf(&o, "o"),
        json!([1.5, 1.5, "nan", "-0.0", 0.0, 0.0, "-0.0", 0.0, "-0.0", "-inf", "-inf", "0xffc00001"])
    );
}

#[test]
fn comparisons_with_nan_are_ordered_except_ne() {
    let src = r#"
kernel @k(%o: buffer<bool>) block_size(1, 1, 1) {
^entry:
  %n = cast.bitwise u32 0x7fc00000 : f32
  %a = eq %n, %n : bool
  %b = ne %n, %n : bool
  %c = lt %n, f32 1.0 : bool
  %d = ge %n, f32 1.0 : bool
  %e = eq f32 0.0, f32 -0.0 : bool
  buffer.write %o, u32 0, %a
  buffer.write %o, u32 1, %b
  buffer.write %o, u32 2, %c
  buffer.write %o, u32 3, %d
  buffer.write %o, u32 4, %e
  return
}
"#;
    let o = ok(src, json!({"args": {"o": {"fill": false, "len": 5}}}));
    assert_eq!(buf(&o, "o"), json!([false, true, false, false, true]));
}

#[test]
fn static_casts_saturate_wrap_and_convert_bools() {
    let src = r#"
kernel @k(%i: buffer<i32>, %u: buffer<u8>, %f: buffer<f32>, %b: buffer<bool>) block_size(1, 1, 1) {
^entry:
  %a = cast.static f32 3.9e9 : i32
  buffer.write %i, u32 0, %a
  %n = cast.bitwise u32 0x7fc00000 : f32
  %c = cast.static %n : i32
  buffer.write %i, u32 1, %c
  %d = cast.static f32 -2.7 : i32
  buffer.write %i, u32 2, %d
  %e = cast.static i32 300 : u8
  buffer.write %u, u32 0, %e
  %g = cast.static i32 -1 : u8
  buffer.write %u, u32 1, %g
  %h = cast.static u32 16777217 : f32
  buffer.write %f, u32 0, %h
  %t = cast.static bool true : f32
  buffer.write %f, u32 1, %t
  %z = cast.static f32 -0.0 : bool
  buffer.write %b, u32 0, %z
  %nb = cast.static %n : bool
  buffer.write %b, u32 1, %nb
  return
}
"#;
    let o = ok(src, json!({"args": {"i": [0, 0, 0], "u": [0, 0], "f": [0, 0], "b": [true, false]}}));
    assert_eq!(buf(&o, "i"), json!([2147483647, 0, -2]));
    assert_eq!(buf(&o, "u"), json!([44, 255]));
    assert_eq!(buf(&o, "f"), json!([16777216.0, 1.0]));
    assert_eq!(buf(&o, "b"), json!([false, true]));
}

#[test]
fn phis_are_evaluated_simultaneously_on_the_edge_taken() {
    // A raw-CFG loop that swaps two phis each iteration (a, b) <- (b, a + b).
    let src = r#"
kernel @fib(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %a = phi [u32 0, ^entry], [%b, ^head] : u32
  %b = phi [u32 1, ^entry], [%s, ^head] : u32
  %k = phi [u32 0, ^entry], [%k1, ^head] : u32
  %s = add %a, %b : u32
  %k1 = add %k, u32 1 : u32
  %more = lt %k1, u32 10 : bool
  cond_br %more, true ^head, false ^exit
^exit:
  buffer.write %o, u32 0, %a
  buffer.write %o, u32 1, %b
  return
}
"#;
    let o = ok(src, json!({"args": {"o": [0, 0]}}));
    assert_eq!(buf(&o, "o"), json!([34, 55]));
}

#[test]
fn print_and_assert() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %v = cast.static %t : f32
  print "thread {} has {}", %t, %v
  %ok = lt %t, u32 1 : bool
  assert "only thread 0 may pass", %ok
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert!(e.contains("assertion failed: only thread 0 may pass"), "{e}");
    let o = ok(&src.replace("lt %t, u32 1", "lt %t, u32 2"), json!({"args": {"o": [0]}}));
    assert_eq!(o.printed, vec!["thread 0 has 0".to_string(), "thread 1 has 1".to_string()]);
}

/// The run's limits are global: steps count over all threads, printed
/// bytes over all lines, and the dispatch is bounded before anything runs.
#[test]
fn step_print_and_thread_limits_hold_for_the_whole_run() {
    // 64 threads of 32 steps each: no thread reaches 1000, the run does.
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(64, 1, 1) {
^entry:
  br target ^head
^head:
  %k = phi [u32 0, ^entry], [%k1, ^head] : u32
  %k1 = add %k, u32 1 : u32
  %more = lt %k1, u32 10 : bool
  cond_br %more, true ^head, false ^exit
^exit:
  return
}
"#;
    let m = parse_module(src, "test.xir").unwrap();
    let k = m.func_ids().next().unwrap();
    let inputs = serde_json::from_value(json!({"args": {"o": [0]}})).unwrap();
    let run = |opts: Options| run_kernel_with(&m, k, &inputs, &opts);
    let e = run(Options { max_steps: 1000, ..Options::default() }).unwrap_err();
    assert_eq!(e.message, "step limit of 1000 instructions for the run exceeded (infinite loop?)");
    // Step 1001 is thread 31's 9th (1000 = 31 * 32 + 8).
    assert_eq!(e.thread, Some([31, 0, 0]));
    assert!(run(Options { max_steps: 2048, ..Options::default() }).is_ok());
    let e = run(Options { dispatch: Some([128, 1, 1]), max_threads: 100, ..Options::default() }).unwrap_err();
    assert_eq!(e.message, "a dispatch of 128 threads ([128, 1, 1]) exceeds the limit of 100 (the max-threads option)");
    // A grid whose thread count does not fit in 64 bits is refused the same way, not an overflow.
    let huge = [u32::MAX; 3];
    let e = run(Options { dispatch: Some(huge), ..Options::default() }).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "a dispatch of {} threads ({huge:?}) exceeds the limit of 16777216 (the max-threads option)",
            u128::from(u32::MAX).pow(3)
        )
    );
    // Ten lines of 4 bytes ("k=0\n"): 20 bytes hold five.
    let printing = parse_module(&src.replace("  %k1 = add", "  print \"k={}\", %k\n  %k1 = add"), "test.xir").unwrap();
    let one = Options { dispatch: Some([1, 1, 1]), max_print_bytes: 20, ..Options::default() };
    let e = run_kernel_with(&printing, k, &inputs, &one).unwrap_err();
    assert_eq!(e.message, "printed output exceeds the limit of 20 bytes (the max-print-bytes option)");
    let o = run_kernel_with(&printing, k, &inputs, &Options { max_print_bytes: 40, ..one }).unwrap();
    assert_eq!(o.printed.len(), 10);
}

#[test]
fn infinite_loop_hits_the_step_limit() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  simple_loop body ^b, merge ^m
^b:
  br target ^b
^m:
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert!(e.contains("step limit"), "{e}");
}

#[test]
fn input_errors_name_the_argument() {
    let e = err(SAXPY, json!({"args": {"a": 1.0, "x": [1.0]}}));
    assert!(e.contains("no input for argument `y`"), "{e}");
    let e = err(SAXPY, json!({"args": {"a": 1.0, "x": [1.0], "y": [1.0], "z": 1}}));
    assert!(e.contains("input `z` names no argument"), "{e}");
    let e = err(SAXPY, json!({"args": {"a": "one", "x": [1.0], "y": [1.0]}}));
    assert!(e.contains("argument `a`: expected a float"), "{e}");
}

#[test]
fn first_mismatch_is_bit_exact_with_a_tolerance_hook() {
    let inputs = |x1: f64| json!({"dispatch": [3, 1, 1], "args": {"a": 1.0, "x": [1.0, x1, 3.0], "y": [0, 0, 0]}});
    let a = ok(SAXPY, inputs(2.0));
    let b = ok(SAXPY, inputs(2.5));
    assert_eq!(a.first_mismatch(&a.clone(), |_, _| false), None);
    let m = a.first_mismatch(&b, |_, _| false).expect("a mismatch");
    assert_eq!((m.buffer.as_str(), m.index, m.left, m.right), ("x", 1, json!(2.0), json!(2.5)));
    let close = |l: &Json, r: &Json| (l.as_f64().unwrap() - r.as_f64().unwrap()).abs() <= 0.5;
    assert_eq!(a.first_mismatch(&b, close), None);
    // -0.0 and 0.0 differ bit-exactly.
    let z = ok(SAXPY, json!({"dispatch": [1, 1, 1], "args": {"a": 1.0, "x": ["-0.0"], "y": ["-0.0"]}}));
    let p = ok(SAXPY, json!({"dispatch": [1, 1, 1], "args": {"a": 1.0, "x": ["-0.0"], "y": [0.0]}}));
    assert_eq!(buf(&z, "y"), json!(["-0.0"]));
    let m = z.first_mismatch(&p, |_, _| false).expect("signed zeros differ");
    assert_eq!((m.buffer.as_str(), m.index), ("y", 0));
    // The `close` tolerance accepts signed zeros, any NaN pair and small errors.
    assert_eq!(z.first_mismatch(&p, xir::interp::close(0.0, 0.0)), None);
    let near = xir::interp::close(1e-6, 0.0);
    assert!(near(&json!("nan"), &json!("0xffc00001")) && near(&json!([1.0, "inf"]), &json!([1.0000001, "inf"])));
    assert!(
        !near(&json!(1_000_000), &json!(1_000_001))
            && !near(&json!(1.0), &json!(1.001))
            && !near(&json!("nan"), &json!(1.0))
            && !near(&json!("inf"), &json!("-inf"))
    );
}

#[test]
fn an_alloca_in_a_loop_is_one_variable_per_call() {
    // The alloca runs each iteration; the variable keeps its value, so the
    // counter counts, exactly as with the alloca hoisted to the entry block.
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %i = alloca : u32
  store %i, u32 0
  simple_loop body ^b, merge ^m
^b:
  %acc = alloca : u32
  %iv = load %i : u32
  %first = eq %iv, u32 0 : bool
  if %first, true ^init, false ^go, merge ^go
^init:
  store %acc, u32 100
  br target ^go
^go:
  %a = load %acc : u32
  %a1 = add %a, %iv : u32
  store %acc, %a1
  %i1 = add %iv, u32 1 : u32
  store %i, %i1
  %more = lt %i1, u32 4 : bool
  if %more, true ^again, false ^out, merge ^out
^again:
  continue target ^b
^out:
  break target ^m
^m:
  %r = load %acc : u32
  buffer.write %o, u32 0, %r
  return
}
"#;
    let o = ok(src, json!({"args": {"o": [0]}}));
    assert_eq!(buf(&o, "o"), json!([106]));
}

#[test]
fn external_calls_and_kernel_reference_arguments() {
    let src = r#"
extern @host(%x: f32) -> f32

kernel @k(%r: ref u32, %o: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %v = load %r : u32
  %t = extract $thread_id, u32 0 : u32
  %w = add %v, %t : u32
  store %r, %w
  %v2 = load %r : u32
  buffer.write %o, %t, %v2
  %z = eq %t, u32 5 : bool
  if %z, true ^call, false ^done, merge ^done
^call:
  %h = call @host, f32 1.0 : f32
  br target ^done
^done:
  return
}
"#;
    // Each thread has its own copy of the reference argument.
    let o = ok(src, json!({"args": {"r": 40, "o": [0, 0]}}));
    assert_eq!(buf(&o, "o"), json!([40, 41]));
    let e = err(&src.replace("u32 5", "u32 1"), json!({"args": {"r": 40, "o": [0, 0]}}));
    assert!(e.contains("call to external function @host"), "{e}");
}

#[test]
fn malformed_instructions_are_reported_not_panicked_on() {
    use xir::{Builder, Function, FunctionKind, Module, Opcode, TypeTable};
    let mut m = Module::new();
    let f = m.add_function(Function::new(
        "k",
        FunctionKind::Kernel { block_size: [1, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::VOID,
    ));
    let one = m.const_u32(1);
    let mut b = Builder::new(&mut m, f);
    let entry = b.create_block();
    b.switch_to(entry);
    b.op(Opcode::Add, TypeTable::U32, &[one], &[]);
    b.op(Opcode::If, TypeTable::VOID, &[], &[]);
    let e = run_kernel(&m, f, &Default::default()).unwrap_err().to_string();
    assert_eq!(e, "<input>: error: [interp] `add` has too few operands or blocks (in @k, bb0, inst0)");
}

#[test]
fn huge_allocations_are_refused() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<u32, 1099511627776>
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert!(e.contains("larger than the interpreter's limit") && e.contains("test.xir:4:3"), "{e}");
}

/// A struct whose byte size overflows 64 bits (each field fits) is refused
/// like any value past the limit: its size saturates instead of wrapping
/// under the limit and overflowing an allocation.
#[test]
fn a_struct_whose_size_overflows_is_refused_not_a_panic() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : struct<align 4>{array<u32, 2305843009213693952>, array<u32, 2305843009213693952>}
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert_eq!(
        e,
        "test.xir:4:3: error: [interp] `alloca` needs a value larger than the interpreter's limit of 16777216 scalars \
         (in @k, bb0, inst0)"
    );
}

/// The interpreter's own limits, by name, before anything runs: threads per
/// block, shared memory, and a variable of 16 GiB per invocation.
#[test]
fn kernels_past_the_device_limits_are_refused_by_name() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(2048, 1, 1) {
^entry:
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert_eq!(
        e,
        "test.xir: error: [interp] @k: block size [2048, 1, 1] exceeds the limit of 1024 in dimension x (in @k)"
    );
    let shared = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca.shared : array<u32, 65536>
  return
}
"#;
    let e = err(shared, json!({"args": {"o": [0]}}));
    assert_eq!(
        e,
        "test.xir: error: [interp] @k: 262144 bytes of shared memory exceed the limit of 49152 bytes per block (in @k)"
    );
    let local = shared.replace("alloca.shared : array<u32, 65536>", "alloca : array<u32, 4294967295>");
    let e = err(&local, json!({"args": {"o": [0]}}));
    assert_eq!(
        e,
        "test.xir:4:3: error: [interp] `alloca` needs a value larger than the interpreter's limit of 16777216 scalars \
         (in @k, bb0, inst0)"
    );
}

/// Texture inputs past the device's image size, or the interpreter's
/// texel budget, are refused by name before they are built.
#[test]
fn huge_texture_inputs_are_refused_by_name() {
    let src = r#"
kernel @k(%t: texture3d<f32>) block_size(1, 1, 1) {
^entry:
  return
}
"#;
    let fill = json!([0.0, 0.0, 0.0, 1.0]);
    let e = err(src, json!({"args": {"t": {"size": [4096, 1, 1], "fill": fill}}}));
    assert_eq!(
        e,
        "test.xir: error: [interp] argument `t`: texture size 4096 exceeds the limit of 2048 for a 3D texture (in @k)"
    );
    let e = err(src, json!({"args": {"t": {"size": [2048, 2048, 2], "fill": fill}}}));
    assert_eq!(
        e,
        "test.xir: error: [interp] argument `t`: a texture of 8388608 texels exceeds the interpreter's limit of \
         4194304 (in @k)"
    );
    ok(src, json!({"args": {"t": {"size": [2, 2, 2], "fill": fill}}}));
}

/// The local variables of a block's threads together stay under the
/// interpreter's memory limit: 2^24 scalars, so 16 threads holding a 2^20
/// array each across a barrier do not fit, 2 do.
#[test]
fn local_variables_of_a_block_share_one_memory_limit() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(16, 1, 1) {
^entry:
  %a = alloca : array<u32, 1048576>
  sync_block
  return
}
"#;
    let e = err(src, json!({"args": {"o": [0]}}));
    assert_eq!(
        e,
        "test.xir:4:3: error: [interp] the local variables of the block's threads exceed the interpreter's limit of \
         16777216 scalars (in @k, bb0, inst0)"
    );
    ok(&src.replace("block_size(16", "block_size(2"), json!({"args": {"o": [0]}}));
}

const WHOLE_BLOCKS: &str = include_str!("../../backend-spirv/tests/kernels/whole_blocks.xir");

#[test]
fn a_whole_blocks_kernel_runs_every_thread_of_the_rounded_up_blocks() {
    // 5 threads in blocks of 4: two whole blocks, eight threads, each seeing a dispatch size of 8.
    let o = ok(WHOLE_BLOCKS, json!({"dispatch": [5, 1, 1], "args": {"out": {"fill": 99, "len": 18}}}));
    assert_eq!(buf(&o, "out"), json!([8, 0, 8, 0, 8, 0, 8, 0, 8, 1, 8, 1, 8, 1, 8, 1, 99, 99]));
    // One block exactly (4): no rounding; one over (9 with blocks of 4 is 12): a third block.
    let o = ok(WHOLE_BLOCKS, json!({"dispatch": [4, 1, 1], "args": {"out": {"fill": 99, "len": 10}}}));
    assert_eq!(buf(&o, "out"), json!([4, 0, 4, 0, 4, 0, 4, 0, 99, 99]));
    let o = ok(WHOLE_BLOCKS, json!({"dispatch": [9, 1, 1], "args": {"out": {"fill": 99, "len": 24}}}));
    assert_eq!(
        buf(&o, "out"),
        json!([12, 0, 12, 0, 12, 0, 12, 0, 12, 1, 12, 1, 12, 1, 12, 1, 12, 2, 12, 2, 12, 2, 12, 2])
    );
    // A zero dimension runs no block.
    let o = ok(WHOLE_BLOCKS, json!({"dispatch": [0, 1, 1], "args": {"out": {"fill": 99, "len": 2}}}));
    assert_eq!(buf(&o, "out"), json!([99, 99]));
    // The same kernel checked at entry runs exactly the dispatched threads.
    let checked = WHOLE_BLOCKS.replace(" whole_blocks", "");
    let o = ok(&checked, json!({"dispatch": [5, 1, 1], "args": {"out": {"fill": 99, "len": 18}}}));
    assert_eq!(buf(&o, "out"), json!([5, 0, 5, 0, 5, 0, 5, 0, 5, 1, 99, 99, 99, 99, 99, 99, 99, 99]));
}

#[test]
fn a_whole_blocks_dispatch_past_u32_is_refused() {
    let e = err(WHOLE_BLOCKS, json!({"dispatch": [u32::MAX, 1, 1], "args": {"out": [0]}}));
    assert!(e.contains("in whole blocks of [4, 1, 1] overflows u32"), "{e}");
}

#[test]
fn whole_blocks_round_up_each_dimension() {
    use xir::interp::whole_block_dispatch;
    assert_eq!(whole_block_dispatch([5, 3, 1], [4, 2, 1]), Some([8, 4, 1]));
    assert_eq!(whole_block_dispatch([8, 2, 0], [4, 2, 1]), Some([8, 2, 0]));
    assert_eq!(whole_block_dispatch([u32::MAX - 3, 1, 1], [4, 1, 1]), Some([u32::MAX - 3, 1, 1]));
    assert_eq!(whole_block_dispatch([u32::MAX - 2, 1, 1], [4, 1, 1]), None);
}
