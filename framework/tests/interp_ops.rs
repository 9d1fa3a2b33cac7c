//! Interpreter semantics of vector, matrix, aggregate, narrow-float and
//! byte-buffer operations, and of multi-way branches: exact expected values.

use serde_json::{json, Value as Json};
use xir::interp::{run_kernel, Outputs};
use xir::text::parse_module;

fn run(src: &str, inputs: Json) -> Result<Outputs, String> {
    let m = parse_module(src, "ops.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    run_kernel(&m, k, &serde_json::from_value(inputs).unwrap()).map_err(|e| e.with_file("ops.xir").to_string())
}

fn out(src: &str, inputs: Json, name: &str) -> Json {
    let o = run(src, inputs).unwrap_or_else(|e| panic!("{e}"));
    o.buffers[name].clone()
}

#[test]
fn vector_geometry_and_reductions() {
    let src = r#"
kernel @k(%a: vec<f32, 3>, %b: vec<f32, 3>, %o: buffer<f32>, %v: buffer<vec<f32, 3>>) block_size(1, 1, 1) {
^entry:
  %d = dot %a, %b : f32
  buffer.write %o, u32 0, %d
  %l = length %b : f32
  buffer.write %o, u32 1, %l
  %l2 = length_squared %a : f32
  buffer.write %o, u32 2, %l2
  %s = reduce_sum %a : f32
  buffer.write %o, u32 3, %s
  %p = reduce_product %a : f32
  buffer.write %o, u32 4, %p
  %mn = reduce_min %b : f32
  buffer.write %o, u32 5, %mn
  %c = cross %a, %b : vec<f32, 3>
  buffer.write %v, u32 0, %c
  %n = normalize %b : vec<f32, 3>
  buffer.write %v, u32 1, %n
  %r = reflect %a, %n : vec<f32, 3>
  buffer.write %v, u32 2, %r
  %f = faceforward %a, %b, %a : vec<f32, 3>
  buffer.write %v, u32 3, %f
  %lt = lt %a, %b : vec<bool, 3>
  %sel = select %lt, %a, %b : vec<f32, 3>
  buffer.write %v, u32 4, %sel
  %any = any %lt : bool
  %all = all %lt : bool
  %fa = cast.static %any : f32
  %fl = cast.static %all : f32
  buffer.write %o, u32 6, %fa
  buffer.write %o, u32 7, %fl
  return
}
"#;
    let inputs = json!({"args": {"a": [1.0, 2.0, 3.0], "b": [0.0, 3.0, 4.0],
        "o": {"fill": 0, "len": 8}, "v": {"fill": [0, 0, 0], "len": 5}}});
    let o = run(src, inputs).unwrap();
    assert_eq!(o.buffers["o"], json!([18.0, 5.0, 14.0, 6.0, 6.0, 0.0, 1.0, 0.0]));
    // cross(a, b) = (2*4 - 3*3, 3*0 - 1*4, 1*3 - 2*0); normalize(b) = (0, 0.6, 0.8);
    // reflect(a, n) = a - 2*dot(n, a)*n with dot = 3.6 (in f32 arithmetic).
    let (n1, n2) = (3.0f32 / 5.0, 4.0f32 / 5.0);
    let dn = 2.0f32 * (0.0 * 1.0 + n1 * 2.0 + n2 * 3.0);
    let refl = json!([1.0, (2.0f32 - dn * n1) as f64, (3.0f32 - dn * n2) as f64]);
    assert_eq!(
        o.buffers["v"],
        json!([[-1.0, -4.0, 3.0], [0.0, n1 as f64, n2 as f64], refl, [-1.0, -2.0, -3.0], [0.0, 2.0, 3.0]])
    );
}

#[test]
fn matrix_algebra_is_column_major() {
    let src = r#"
kernel @k(%m: mat<f32, 2>, %u: vec<f32, 2>, %o: buffer<mat<f32, 2>>, %v: buffer<vec<f32, 2>>, %s: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %mm = matrix_linalg_mul %m, %m : mat<f32, 2>
  buffer.write %o, u32 0, %mm
  %t = matrix_transpose %m : mat<f32, 2>
  buffer.write %o, u32 1, %t
  %inv = matrix_inverse %m : mat<f32, 2>
  buffer.write %o, u32 2, %inv
  %op = outer_product %u, %u : mat<f32, 2>
  buffer.write %o, u32 3, %op
  %mv = matrix_linalg_mul %m, %u : vec<f32, 2>
  buffer.write %v, u32 0, %mv
  %vm = matrix_linalg_mul %u, %m : vec<f32, 2>
  buffer.write %v, u32 1, %vm
  %det = matrix_determinant %m : f32
  buffer.write %s, u32 0, %det
  return
}
"#;
    // m = [[1, 2], [3, 4]] as columns: m = | 1 3 |
    //                                      | 2 4 |
    let o = run(
        src,
        json!({"args": {"m": [[1.0, 2.0], [3.0, 4.0]], "u": [1.0, 10.0],
            "o": {"fill": [[0, 0], [0, 0]], "len": 4}, "v": {"fill": [0, 0], "len": 2}, "s": [0]}}),
    )
    .unwrap();
    assert_eq!(
        o.buffers["o"],
        json!([
            [[7.0, 10.0], [15.0, 22.0]],
            [[1.0, 3.0], [2.0, 4.0]],
            [[-2.0, 1.0], [1.5, -0.5]],
            [[1.0, 10.0], [10.0, 100.0]]
        ])
    );
    assert_eq!(o.buffers["v"], json!([[31.0, 42.0], [21.0, 43.0]]));
    assert_eq!(o.buffers["s"], json!([-2.0]));
}

#[test]
fn aggregates_structs_and_dynamic_extract() {
    let src = r#"
kernel @k(%s: buffer<struct<align 4>{f32, array<u32, 3>}>, %i: u32, %o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %e = buffer.read %s, u32 0 : struct<align 4>{f32, array<u32, 3>}
  %x = extract %e, u32 1, %i : u32
  buffer.write %o, u32 0, %x
  %e2 = insert %e, u32 99, u32 1, u32 0 : struct<align 4>{f32, array<u32, 3>}
  buffer.write %s, u32 1, %e2
  %p = gep %s, u32 0, u32 1, u32 2 : u32
  store %p, u32 7
  %f = gep %s, u32 0, u32 0 : f32
  %fv = load %f : f32
  %fn = neg %fv : f32
  store %f, %fn
  %vec = aggregate u32 1, u32 2, u32 3, u32 4 : vec<u32, 4>
  %sh = shuffle %vec, u32 3, u32 0 : vec<u32, 2>
  %y = extract %sh, u32 0 : u32
  buffer.write %o, u32 1, %y
  %bad = extract %vec, %i : u32
  return
}
"#;
    let inputs = |i: u32| json!({"args": {"s": [[1.5, [10, 20, 30]], [0.0, [0, 0, 0]]], "i": i, "o": [0, 0]}});
    let o = run(src, inputs(2)).unwrap();
    assert_eq!(o.buffers["s"], json!([[-1.5, [10, 20, 7]], [1.5, [99, 20, 30]]]));
    assert_eq!(o.buffers["o"], json!([30, 4]));
    let e = run(src, inputs(4)).unwrap_err();
    assert!(e.contains("index 4 out of bounds (length 3)") && e.contains("ops.xir:5:3"), "{e}");
}

/// Found by the spec-driven generator: a `shuffle` of one lane has the
/// element type (the verifier's `shuffle_lanes`), but the interpreter gave
/// a one-lane vector, so the next scalar operation failed with "operand
/// shapes differ".
#[test]
fn shuffle_of_one_lane_is_a_scalar() {
    let src = r#"
kernel @k(%o: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %v = aggregate i32 5, i32 -3 : vec<i32, 2>
  %x = shuffle %v, u32 1 : i32
  %y = shl %x, i32 2 : i32
  buffer.write %o, u32 0, %y
  return
}
"#;
    assert_eq!(out(src, json!({"args": {"o": [0]}}), "o"), json!([-12]));
}

#[test]
fn half_precision_rounds_once_per_operation() {
    let src = r#"
kernel @k(%h: buffer<f16>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %h, u32 0 : f16
  %b = buffer.read %h, u32 1 : f16
  %s = add %a, %b : f16
  buffer.write %h, u32 2, %s
  %m = mul %a, %a : f16
  buffer.write %h, u32 3, %m
  %big = mul %b, f16 0x7bff : f16
  buffer.write %h, u32 4, %big
  %w = cast.static %a : f32
  %back = cast.static f32 65520.0 : f16
  buffer.write %h, u32 5, %back
  return
}
"#;
    // 1 + 2^-11 is not representable: 1 + 2^-10 (0x3c01) plus 2^-11 ties to even.
    let o = out(src, json!({"args": {"h": ["0x3c01", "0x1000", 0, 0, 0, 0]}}), "h");
    let a = half::f16::from_bits(0x3c01);
    let b = half::f16::from_bits(0x1000);
    let s = half::f16::from_f64(a.to_f64() + b.to_f64());
    let m = half::f16::from_f64(a.to_f64() * a.to_f64());
    let big = half::f16::from_f64(b.to_f64() * 65504.0);
    assert_eq!(o, json!([a.to_f64(), b.to_f64(), s.to_f64(), m.to_f64(), big.to_f64(), "inf"]));
}

#[test]
fn fp8_converts_but_does_not_compute() {
    let src = r#"
kernel @k(%f: buffer<f32>, %q: buffer<fp8e4m3>, %r: buffer<fp8e5m2>) block_size(1, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %f, %i : f32
  %a = cast.static %x : fp8e4m3
  buffer.write %q, %i, %a
  %b = cast.static %x : fp8e5m2
  buffer.write %r, %i, %b
  %back = cast.static %a : f32
  buffer.write %f, %i, %back
  return
}
"#;
    let o = run(
        src,
        json!({"dispatch": [6, 1, 1], "args": {"f": [1.0, 0.3, 448.0, 500.0, -0.0, "nan"],
            "q": {"fill": 0, "len": 6}, "r": {"fill": 0, "len": 6}}}),
    )
    .unwrap();
    // E4M3: 0.3 -> 0.3125 (1.010 x 2^-2); 500 overflows to NaN (no infinity).
    assert_eq!(o.buffers["q"], json!([1.0, 0.3125, 448.0, "nan", "-0.0", "nan"]));
    // E5M2: 0.3 -> 0.3125 (1.01 x 2^-2); 448 -> 448; 500 -> 512.
    assert_eq!(o.buffers["r"], json!([1.0, 0.3125, 448.0, 512.0, "-0.0", "nan"]));
    assert_eq!(o.buffers["f"], json!([1.0, 0.3125, 448.0, "nan", "-0.0", "nan"]));
    let bad = src
        .replace("%back = cast.static %a : f32", "%back0 = add %a, %a : fp8e4m3\n  %back = cast.static %back0 : f32");
    let e = run(&bad, json!({"args": {"f": [1.0], "q": [0], "r": [0]}})).unwrap_err();
    assert!(e.contains("fp8 arithmetic is not supported"), "{e}");
}

#[test]
fn byte_buffer_uses_host_layout() {
    let src = r#"
kernel @k(%raw: byte_buffer, %o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = byte_buffer.read %raw, u32 0 : vec<u16, 2>
  %hi = extract %v, u32 1 : u16
  %w = cast.static %hi : u32
  buffer.write %o, u32 0, %w
  %s = aggregate u32 0xdeadbeef, f32 1.0 : struct<align 4>{u32, f32}
  byte_buffer.write %raw, u32 4, %s
  %n = byte_buffer.size %raw : u32
  buffer.write %o, u32 1, %n
  %x = byte_buffer.read %raw, u32 12 : u32
  return
}
"#;
    let e =
        run(src, json!({"args": {"raw": {"bytes": [1, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0]}, "o": [0, 0]}})).unwrap_err();
    assert!(e.contains("4 bytes at offset 12 out of bounds (length 12)"), "{e}");
    let o = run(src, json!({"args": {"raw": {"fill": 0, "len": 16}, "o": [0, 0]}})).unwrap();
    assert_eq!(o.buffers["raw"], json!({"bytes": [0, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0x80, 0x3f, 0, 0, 0, 0]}));
    assert_eq!(o.buffers["o"], json!([0, 16]));
}

#[test]
fn switch_and_br_indexed_match_in_the_selector_width() {
    let src = r#"
kernel @k(%x: buffer<i32>, %o: buffer<i32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %x, %t : i32
  switch %v, merge ^m, default ^d, case -1 ^neg, case 7 ^seven
^neg:
  buffer.write %o, %t, i32 100
  br target ^m
^seven:
  buffer.write %o, %t, i32 107
  break target ^m
^d:
  buffer.write %o, %t, i32 0
  br target ^m
^m:
  %b = cast.static %v : u8
  br_indexed %b, default ^out, case 255 ^wrapped
^wrapped:
  %old = buffer.read %o, %t : i32
  %n = add %old, i32 1000 : i32
  buffer.write %o, %t, %n
  br target ^out
^out:
  return
}
"#;
    let o = out(src, json!({"args": {"x": [-1, 7, 255, 3], "o": [9, 9, 9, 9]}}), "o");
    assert_eq!(o, json!([1100, 107, 1000, 0]));
}

#[test]
fn integer_widths_wrap_and_u64_round_trips_as_strings() {
    let src = r#"
kernel @k(%a: buffer<u64>, %b: buffer<i8>, %c: buffer<i64>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %a, u32 0 : u64
  %y = add %x, u64 2 : u64
  buffer.write %a, u32 1, %y
  %p = buffer.read %b, u32 0 : i8
  %q = mul %p, i8 2 : i8
  buffer.write %b, u32 1, %q
  %r = div %p, i8 -3 : i8
  buffer.write %b, u32 2, %r
  %m = mod i64 -7, i64 3 : i64
  buffer.write %c, u32 0, %m
  %n = abs i64 -9223372036854775808 : i64
  buffer.write %c, u32 1, %n
  return
}
"#;
    let o = run(src, json!({"args": {"a": ["18446744073709551615", 0], "b": [-128, 0, 0], "c": [0, 0]}})).unwrap();
    assert_eq!(o.buffers["a"], json!(["18446744073709551615", 1]));
    // MIN / -1 is an error (interp.rs); MIN / -3 truncates toward zero.
    assert_eq!(o.buffers["b"], json!([-128, 0, 42]));
    assert_eq!(o.buffers["c"], json!([-1, "-9223372036854775808"]));
}

#[test]
fn unsupported_opcodes_are_named() {
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = quad.ddx f32 1.0 : f32
  return
}
"#;
    let e = run(src, json!({"args": {"o": [0]}})).unwrap_err();
    assert!(e.contains("the interpreter does not support `quad.ddx`"), "{e}");
}

#[test]
fn warp_operations_see_the_lanes_waiting_together() {
    // 40 threads: warp 0 has lanes 0..32, warp 1 lanes 0..8 (threads 32..40).
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(40, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %base = mul %t, u32 6 : u32
  %s = warp.active_sum %t : u32
  buffer.write %o, %base, %s
  %p = warp.prefix_sum %t : u32
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, %p
  %r = warp.read_lane %t, u32 3 : u32
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %r
  %m3 = mod %t, u32 3 : u32
  %z = eq %m3, u32 0 : bool
  %mask = warp.active_bit_mask %z : u32
  %b3 = add %base, u32 3 : u32
  buffer.write %o, %b3, %mask
  %b4 = add %base, u32 4 : u32
  %odd = bit_and %t, u32 1 : u32
  %even = eq %odd, u32 0 : bool
  if %even, true ^e, false ^done, merge ^done
^e:
  %c = warp.active_count_bits %even : u32
  %first = warp.read_first_active_lane %t : u32
  %both = add %c, %first : u32
  buffer.write %o, %b4, %both
  br target ^done
^done:
  %b5 = add %base, u32 5 : u32
  buffer.write %o, %b5, $warp_lane_id
  return
}
"#;
    let o = out(src, json!({"args": {"o": {"fill": 0, "len": 240}}}), "o");
    let o: Vec<u64> = o.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    for t in 0..40u64 {
        let (w0, wl) = if t < 32 { (0, 32) } else { (32, 8) };
        let row = &o[(t * 6) as usize..(t * 6 + 6) as usize];
        assert_eq!(row[0], (w0..w0 + wl).sum::<u64>(), "sum t={t}");
        assert_eq!(row[1], (w0..t).sum::<u64>(), "prefix t={t}");
        assert_eq!(row[2], w0 + 3, "read_lane t={t}");
        let mask: u64 = (w0..w0 + wl).filter(|x| x % 3 == 0).map(|x| 1u64 << (x - w0)).sum();
        assert_eq!(row[3], mask, "ballot t={t}");
        let evens = (w0..w0 + wl).filter(|x| x % 2 == 0).count() as u64;
        assert_eq!(row[4], if t % 2 == 0 { evens + w0 } else { 0 }, "divergent t={t}");
        assert_eq!(row[5], t - w0, "lane t={t}");
    }
}

/// Run at `warp_size` lanes per warp.
fn out_at(src: &str, inputs: Json, name: &str, warp_size: u32) -> Result<Json, String> {
    let m = parse_module(src, "t.xir").map_err(|d| format!("{d:?}"))?;
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).unwrap();
    let i: xir::interp::Inputs = serde_json::from_value(inputs).unwrap();
    let opts = xir::interp::Options { warp_size, ..Default::default() };
    xir::interp::run_kernel_with(&m, k, &i, &opts).map(|o| o.buffers[name].clone()).map_err(|e| e.to_string())
}

#[test]
fn the_warp_size_splits_blocks_and_ballots_spread_over_words() {
    // 96 threads; each writes its lane, the warp size, its warp's sum and
    // the four words of the ballot of "thread id is a multiple of 3".
    let src = r#"
kernel @k(%o: buffer<u32>) block_size(96, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %base = mul %t, u32 7 : u32
  buffer.write %o, %base, $warp_lane_id
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, $warp_size
  %s = warp.active_sum %t : u32
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %s
  %m3 = mod %t, u32 3 : u32
  %z = eq %m3, u32 0 : bool
  %mask = warp.active_bit_mask %z : vec<u32, 4>
  %w0 = extract %mask, u32 0 : u32
  %w1 = extract %mask, u32 1 : u32
  %w2 = extract %mask, u32 2 : u32
  %w3 = extract %mask, u32 3 : u32
  %b3 = add %base, u32 3 : u32
  buffer.write %o, %b3, %w0
  %b4 = add %base, u32 4 : u32
  buffer.write %o, %b4, %w1
  %b5 = add %base, u32 5 : u32
  buffer.write %o, %b5, %w2
  %b6 = add %base, u32 6 : u32
  buffer.write %o, %b6, %w3
  return
}
"#;
    for size in [1u64, 8, 32, 64, 128] {
        let o = out_at(src, json!({"args": {"o": {"fill": 0, "len": 96 * 7}}}), "o", size as u32).unwrap();
        let o: Vec<u64> = o.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        for t in 0..96u64 {
            let row = &o[(t * 7) as usize..(t * 7 + 7) as usize];
            let w0 = t / size * size;
            let lanes = w0..(w0 + size).min(96);
            assert_eq!(row[0], t % size, "lane t={t} size={size}");
            assert_eq!(row[1], size);
            assert_eq!(row[2], lanes.clone().sum::<u64>(), "sum t={t} size={size}");
            let mut words = [0u64; 4];
            for x in lanes.filter(|x| x % 3 == 0) {
                words[((x - w0) / 32) as usize] |= 1 << ((x - w0) % 32);
            }
            assert_eq!(row[3..], words, "ballot t={t} size={size}");
        }
    }
    for bad in [0, 3, 256] {
        let e = out_at(src, json!({"args": {"o": {"fill": 0, "len": 96 * 7}}}), "o", bad).unwrap_err();
        assert!(e.contains(&format!("a warp size of {bad} lanes")), "{e}");
    }
}

/// Lanes that reach one callee instruction through different call sites
/// are different instances (maximal reconvergence): even lanes count
/// themselves through one call, odd lanes through the other.
pub const TWO_CALL_SITES: &str = include_str!("../../backend-spirv/tests/kernels/two_call_sites.xir");

#[test]
fn lanes_calling_from_different_sites_are_different_instances() {
    let o = out_at(TWO_CALL_SITES, json!({"args": {"o": {"fill": 0, "len": 64}}}), "o", 32).unwrap();
    let want: Vec<u64> = (0..64).map(|t| if t % 2 == 1 { 16 } else { 116 }).collect();
    assert_eq!(o, json!(want));
}

#[test]
fn storage_textures_read_write_and_size() {
    let src = r#"
kernel @k(%t: texture2d<f32>, %o: buffer<u32>) block_size(3, 2, 1) {
^entry:
  %id = extract $dispatch_id, u32 0 : u32
  %jd = extract $dispatch_id, u32 1 : u32
  %c = aggregate %id, %jd : vec<u32, 2>
  %v = texture.read %t, %c : vec<f32, 4>
  %x = extract %v, u32 0 : f32
  %y = add %x, f32 0.5 : f32
  %w = insert %v, %y, u32 3 : vec<f32, 4>
  texture.write %t, %c, %w
  %s = texture.size %t, u32 1 : vec<u32, 2>
  %s0 = extract %s, u32 0 : u32
  buffer.write %o, u32 0, %s0
  %far = aggregate u32 3, u32 0 : vec<u32, 2>
  %ok = lt %id, u32 9 : bool
  if %ok, true ^done, false ^bad, merge ^done
^bad:
  %r = texture.read %t, %far : vec<f32, 4>
  br target ^done
^done:
  return
}
"#;
    let texels: Vec<Json> = (0..6).map(|k| json!([k as f64, 0.0, 0.0, 0.0])).collect();
    let o = run(src, json!({"args": {"t": {"size": [3, 2], "texels": texels}, "o": [0]}})).unwrap();
    let expect: Vec<Json> = (0..6).map(|k| json!([k as f64, 0.0, 0.0, k as f64 + 0.5])).collect();
    assert_eq!(o.buffers["t"], json!({"size": [3, 2], "texels": expect}));
    assert_eq!(o.buffers["o"], json!([1]));
    let e = run(
        &src.replace("lt %id, u32 9", "lt %id, u32 2"),
        json!({"args": {"t": {"size": [3, 2], "fill": [0, 0, 0, 0]}, "o": [0]}}),
    )
    .unwrap_err();
    assert!(e.contains("texel coordinate 3 out of bounds (size 3) in dimension 0"), "{e}");
}

#[test]
fn host_bytes_round_trip_through_the_element_encoding() {
    let m = parse_module(
        "kernel @k(%b: buffer<struct<align 16>{vec<f32, 3>, u32, bool}>) block_size(1, 1, 1) {\n^entry:\n  return\n}\n",
        "k.xir",
    )
    .unwrap();
    let f = m.find_function("k").unwrap();
    let xir::Type::Buffer(elem) = m.types.get(m.func(f).args[0].ty).clone() else { panic!("buffer") };
    let j = json!([[[1.0, "-0.0", "nan"], 7, true], [[0.5, 2.0, "inf"], 4294967295u32, false]]);
    let bytes = xir::interp::buffer_to_host_bytes(&m, elem, &j).unwrap();
    // vec3 takes 16 bytes (padded), then u32 at 16, bool at 20; stride 32.
    assert_eq!(bytes.len(), 64);
    assert_eq!(&bytes[16..21], &[7, 0, 0, 0, 1]);
    assert_eq!(&bytes[4..8], &(-0.0f32).to_bits().to_le_bytes());
    assert_eq!(xir::interp::buffer_from_host_bytes(&m, elem, &bytes).unwrap(), j);
}

#[test]
fn fp8_rounding_ties_subnormals_and_overflow_are_exact() {
    let src = r#"
kernel @k(%f: buffer<f32>, %q: buffer<u8>, %r: buffer<u8>) block_size(1, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %f, %i : f32
  %a = cast.static %x : fp8e4m3
  %ab = cast.bitwise %a : u8
  buffer.write %q, %i, %ab
  %b = cast.static %x : fp8e5m2
  %bb = cast.bitwise %b : u8
  buffer.write %r, %i, %bb
  return
}
"#;
    // 2^-9 is the smallest E4M3 subnormal; 2^-10 ties between 0 and it (to
    // even: 0); 3 * 2^-10 ties between codes 1 and 2 (to 2); 464 ties between
    // 448 (0x7e) and the NaN slot (to 448); 480 overflows. E5M2: 2^-16 is the
    // smallest subnormal; 61440 ties between 57344 (0x7b) and infinity (0x7c).
    let f = [2f32.powi(-9), 2f32.powi(-10), 3.0 * 2f32.powi(-10), 464.0, 480.0, 2f32.powi(-16), 61440.0, -57344.0];
    let o = run(
        src,
        json!({"dispatch": [8, 1, 1], "args": {"f": f, "q": {"fill": 0, "len": 8}, "r": {"fill": 0, "len": 8}}}),
    )
    .unwrap();
    assert_eq!(o.buffers["q"], json!([0x01, 0x00, 0x02, 0x7e, 0x7f, 0x00, 0x7f, 0xff]));
    // E5M2 codes: 2^-9 = exponent 6 (24), 2^-10 = 20, 1.5 * 2^-9 = 26, 464 -> 448
    // (95), 480 ties between 448 (95) and 512 (96, even).
    assert_eq!(o.buffers["r"], json!([24, 20, 26, 95, 96, 0x01, 0x7c, 0xfb]));
}

#[test]
fn bindless_slots_hold_byte_buffers_and_textures() {
    let src = r#"
kernel @k(%h: bindless_array, %o: buffer<f32>, %u: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = bindless.buffer_read %h, u32 0, u32 1 : f32
  buffer.write %o, u32 0, %x
  %n = bindless.buffer_size %h, u32 0, u32 4 : u32
  buffer.write %u, u32 0, %n
  bindless.buffer_write %h, u32 0, u32 2, f32 9.0
  %c = aggregate u32 1, u32 0 : vec<u32, 2>
  %t = bindless.texture2d_read %h, u32 1, %c : vec<u32, 4>
  %t3 = extract %t, u32 3 : u32
  buffer.write %u, u32 1, %t3
  %s = bindless.texture2d_size %h, u32 1, u32 0 : vec<u32, 2>
  %s0 = extract %s, u32 0 : u32
  buffer.write %u, u32 2, %s0
  %b = bindless.byte_buffer_read %h, u32 3, u32 1 : u16
  %bw = cast.static %b : u32
  buffer.write %u, u32 3, %bw
  %e = bindless.buffer_read %h, u32 2, u32 0 : f32
  return
}
"#;
    let slots = json!({"slots": [
        {"f32": [0.5, 1.5, 2.5]},
        {"elem": "u32", "size": [2, 1], "texels": [[0, 0, 0, 0], [1, 2, 3, 4]]},
        null,
        {"bytes": [1, 2, 3]}
    ]});
    let e = run(src, json!({"args": {"h": slots, "o": [0], "u": [0, 0, 0, 0]}})).unwrap_err();
    assert!(e.contains("bindless slot 2 is empty") && e.contains("ops.xir:19:3"), "{e}");
    let ok_src = src.replace("  %e = bindless.buffer_read %h, u32 2, u32 0 : f32\n", "");
    let o = run(&ok_src, json!({"args": {"h": slots, "o": [0], "u": [0, 0, 0, 0]}})).unwrap();
    assert_eq!(o.buffers["o"], json!([1.5]));
    assert_eq!(o.buffers["u"], json!([3, 4, 2, 0x0302]));
    let nine = 9.0f32.to_le_bytes();
    assert_eq!(
        o.buffers["h"]["slots"][0],
        json!({"bytes": [0, 0, 0, 0x3f, 0, 0, 0xc0, 0x3f, nine[0], nine[1], nine[2], nine[3]]})
    );
    assert_eq!(o.buffers["h"]["slots"][2], Json::Null);
}

#[test]
fn interpolation_and_rounding_helpers_follow_their_formulas() {
    let src = r#"
kernel @k(%o: buffer<f32>, %d: buffer<f64>) block_size(1, 1, 1) {
^entry:
  %l = lerp f32 1.0, f32 3.0, f32 0.25 : f32
  buffer.write %o, u32 0, %l
  %s = smoothstep f32 0.0, f32 2.0, f32 0.5 : f32
  buffer.write %o, u32 1, %s
  %st = step f32 1.0, f32 0.5 : f32
  buffer.write %o, u32 2, %st
  %fr = fract f32 -1.25 : f32
  buffer.write %o, u32 3, %fr
  %sa = saturate f32 1.5 : f32
  buffer.write %o, u32 4, %sa
  %cl = clamp f32 -4.0, f32 -1.0, f32 1.0 : f32
  buffer.write %o, u32 5, %cl
  %fm = fma f32 0.1, f32 10.0, f32 -1.0 : f32
  buffer.write %o, u32 6, %fm
  %md = mod f32 -7.5, f32 2.0 : f32
  buffer.write %o, u32 7, %md
  %a = div f64 1.0, f64 3.0 : f64
  buffer.write %d, u32 0, %a
  %z = div f64 -1.0, f64 0.0 : f64
  buffer.write %d, u32 1, %z
  %r = round f64 -2.5 : f64
  buffer.write %d, u32 2, %r
  return
}
"#;
    let o = run(src, json!({"args": {"o": {"fill": 0, "len": 8}, "d": [0, 0, 0]}})).unwrap();
    // fma rounds once: 0.1f32 * 10 - 1 is the rounding error of 0.1f32, scaled.
    let fma = 0.1f32.mul_add(10.0, -1.0) as f64;
    assert_eq!(o.buffers["o"], json!([1.5, 0.15625, 0.0, 0.75, 1.0, -1.0, fma, -1.5]));
    assert_eq!(o.buffers["d"], json!([1.0 / 3.0, "-inf", -3.0]));
}

#[test]
fn building_vectors_from_undef_tracks_each_lane() {
    let src = r#"
kernel @k(%o: buffer<vec<f32, 3>>, %s: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v0 = insert undef vec<f32, 3>, f32 1.0, u32 0 : vec<f32, 3>
  %v1 = insert %v0, f32 2.0, u32 1 : vec<f32, 3>
  %x = extract %v1, u32 1 : f32
  buffer.write %s, u32 0, %x
  %v2 = insert %v1, f32 3.0, u32 2 : vec<f32, 3>
  buffer.write %o, u32 0, %v2
  buffer.write %o, u32 1, %v1
  return
}
"#;
    let e = run(src, json!({"args": {"o": {"fill": [0, 0, 0], "len": 2}, "s": [0]}})).unwrap_err();
    assert!(e.contains("write of an undefined value into a buffer") && e.contains("ops.xir:10:3"), "{e}");
    let fixed = src.replace("  buffer.write %o, u32 1, %v1\n", "");
    let o = run(&fixed, json!({"args": {"o": {"fill": [0, 0, 0], "len": 2}, "s": [0]}})).unwrap();
    assert_eq!(o.buffers["o"], json!([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]));
    assert_eq!(o.buffers["s"], json!([2.0]));
}

#[test]
fn argument_names_follow_the_printer_and_matrices_need_no_column_type() {
    use xir::{ArgKind, Builder, Function, FunctionKind, Metadata, Module, TypeTable};
    let mut m = Module::new();
    let mut k = Function::new(
        "k",
        FunctionKind::Kernel { block_size: [1, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::VOID,
    );
    let mat = m.types.matrix(TypeTable::F32, 2);
    let buf = m.types.buffer(mat);
    let a = k.add_arg(mat, ArgKind::Value, Metadata::named("x"));
    let o = k.add_arg(buf, ArgKind::Resource, Metadata::named("x"));
    k.add_arg(TypeTable::U32, ArgKind::Value, Metadata::default());
    k.add_arg(TypeTable::U32, ArgKind::Value, Metadata::named("has space"));
    let f = m.add_function(k);
    assert_eq!(xir::interp::arg_names(m.func(f)), vec!["x", "x.1", "0", "has_space"]);
    let zero = m.const_u32(0);
    let mut b = Builder::new(&mut m, f);
    let entry = b.create_block();
    b.switch_to(entry);
    let t = b.op(xir::Opcode::MatrixTranspose, mat, &[a], &[]);
    b.op(xir::Opcode::BufferWrite, TypeTable::VOID, &[o, zero, t], &[]);
    b.ret(None);
    let inputs = serde_json::from_value(
        json!({"args": {"x": [[1, 2], [3, 4]], "x.1": [[[0, 0], [0, 0]]], "0": 7, "has_space": 1}}),
    )
    .unwrap();
    let out = run_kernel(&m, f, &inputs).unwrap();
    assert_eq!(out.buffers["x.1"], json!([[[1.0, 3.0], [2.0, 4.0]]]));
    let bytes = xir::interp::buffer_to_host_bytes(&m, mat, &out.buffers["x.1"]).unwrap();
    assert_eq!(bytes.len(), 16);
    assert_eq!(xir::interp::buffer_from_host_bytes(&m, mat, &bytes).unwrap(), out.buffers["x.1"]);
}
