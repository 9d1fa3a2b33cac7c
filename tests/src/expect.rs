//! Hand-computed expectations for every corpus kernel's outputs: one
//! function per kernel, named after it, that panics with the buffer and
//! element when an output differs. They check any run of the kernel — the
//! interpreter on the corpus module, on a module transformed by passes, or a
//! device run converted to interpreter outputs — so every stage is held to
//! the same values. [`ALL`] lists them; a test proves it covers the corpus.
//!
//! Values are exact (bit patterns for floats, NaN payloads aside) except
//! where a comment says otherwise (`normalize` and transcendental ops).

use crate::{same_f32, same_f64, Outputs};

/// A kernel's check: panics when a run's outputs are wrong.
pub type Check = fn(&Outputs);

/// Every kernel's check, by kernel name.
pub const ALL: &[(&str, Check)] = &[
    ("saxpy", saxpy),
    ("reduce_block", reduce_block),
    ("prefix_sum", prefix_sum),
    ("histogram", histogram),
    ("mandelbrot", mandelbrot),
    ("matmul", matmul),
    ("bitonic_sort", bitonic_sort),
    ("break_continue", break_continue),
    ("switch", switch),
    ("nested_loops", nested_loops),
    ("callables", callables),
    ("scalar_widths", scalar_widths),
    ("narrow_storage", narrow_storage),
    ("vector_ops", vector_ops),
    ("matrix_ops", matrix_ops),
    ("struct_gep", struct_gep),
    ("early_return", early_return),
    ("round_bits", round_bits),
    ("fma_contract", fma_contract),
    ("int64", int64),
    ("select_minmax", select_minmax),
    ("do_while", do_while),
    ("byte_buffer", byte_buffer),
    ("atomics", atomics),
    ("bytecode_vm", bytecode_vm),
    ("simple_loop_continue", simple_loop_continue),
    ("float_math", float_math),
    ("unusual_shapes", unusual_shapes),
    ("texture_rw", texture_rw),
    ("byte_pack", byte_pack),
    ("bool_pack", bool_pack),
    ("warp_reduce", warp_reduce),
    ("ballot_compact", ballot_compact),
    ("warp_scan", warp_scan),
    ("volatile_buffer", volatile_buffer),
    ("partial_write", partial_write),
];

/// The autodiff kernels (`tests/autodiff/`, outside the corpus: every
/// corpus consumer would have to run the `autodiff` pass first) and their
/// analytic gradients.
pub const AUTODIFF: &[(&str, Check)] = &[("ad_loss", ad_loss), ("ad_mlp", ad_mlp), ("ad_ray_sphere", ad_ray_sphere)];

/// Check a run of corpus kernel `name`; panics when the kernel has no
/// expectations.
pub fn check(name: &str, o: &Outputs) {
    let (_, f) = ALL.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no expectations for `{name}`"));
    f(o)
}

/// Bit-exact comparison of float outputs (any NaN matches any NaN), naming
/// the first differing element.
pub fn assert_f32s(name: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same_f32(*g, *w), "{name}[{i}] = {g:?} ({:#010x}), want {w:?} ({:#010x})", g.to_bits(), w.to_bits());
    }
}

pub fn saxpy(o: &Outputs) {
    let y = o.f32s("y");
    assert_eq!(y.len(), 60);
    // 2.5 * -0.0 + 0.0 is +0.0; 2.5 * -0.0 + -0.0 is -0.0.
    assert_eq!(y[0].to_bits(), 0.0f32.to_bits());
    assert_eq!(y[4].to_bits(), (-0.0f32).to_bits());
    assert!(y[1].is_nan() && y[5].is_nan(), "NaN inputs give NaN");
    assert!(y[2].is_nan(), "2.5 * inf + -inf is NaN");
    assert_eq!(y[3], -13.25);
    assert_eq!(y[59], 112.75);
    for (i, &yi) in y.iter().enumerate().skip(6) {
        let x = i as f32 * 0.5 - 8.0;
        assert!(same_f32(yi, 2.5 * x + i as f32), "y[{i}] = {yi}");
    }
}

pub fn reduce_block(o: &Outputs) {
    // Block b sums 64b .. 64b + 63; the last block holds 0xffffffff instead of 255.
    assert_eq!(o.u32s("out"), vec![2016, 6112, 10208, 14048]);
}

pub fn prefix_sum(o: &Outputs) {
    let got = o.u32s("out");
    let mut x: Vec<u32> = (0..128).map(|i| i % 7 + 1).collect();
    x[127] = u32::MAX;
    let mut want = Vec::new();
    for block in x.chunks(64) {
        let mut acc = 0u32;
        for &v in block {
            acc = acc.wrapping_add(v);
            want.push(acc);
        }
    }
    assert_eq!(&got[..7], &[1, 3, 6, 10, 15, 21, 28]);
    assert_eq!(got[63], 253, "9 full cycles of 1..7 (252) plus 1");
    assert_eq!(got, want);
}

pub fn histogram(o: &Outputs) {
    let hist = o.u32s("hist");
    let mut want = vec![0u32; 17];
    for i in 0..128u32 {
        let v = i * 7 % 23;
        want[(v & 15) as usize] += 1;
        if v >= 16 {
            want[16] += 1;
        }
    }
    assert_eq!(hist[..16].iter().sum::<u32>(), 128);
    assert_eq!(hist, want);
}

fn mandelbrot_reference(x: u32, y: u32, max_iter: u32) -> u32 {
    let cr = x as f32 * 0.1875 - 2.0;
    let ci = y as f32 * 0.1875 - 1.5;
    let (mut zr, mut zi, mut n) = (0.0f32, 0.0f32, 0);
    while n < max_iter {
        let (aa, bb) = (zr * zr, zi * zi);
        if aa + bb > 4.0 {
            break;
        }
        let ab = zr * zi;
        zi = ab + ab + ci;
        zr = aa - bb + cr;
        n += 1;
    }
    n
}

pub fn mandelbrot(o: &Outputs) {
    let got = o.u32s("out");
    assert_eq!(got[0], 1, "c = -2 - 1.5i escapes after one step");
    assert_eq!(got[8 * 16 + 10], 50, "c = -0.125 stays bounded");
    let want: Vec<u32> = (0..256).map(|i| mandelbrot_reference(i % 16, i / 16, 50)).collect();
    assert_eq!(got, want);
}

pub fn matmul(o: &Outputs) {
    #[rustfmt::skip]
    let m = [1.0, 2.0, 3.0, 4.0, 10.0, 12.0, 14.0, 16.0, 28.0, 32.0, 36.0, 40.0, -2.5, -3.0, -3.5, -4.0];
    assert_f32s("out", &o.f32s("out"), &m);
    assert_f32s("mv", &o.f32s("mv"), &[45.75, 52.5, 59.25, 66.0]);
    assert_f32s("dots", &o.f32s("dots"), &[7.0, 34.0, 88.0, -8.5]);
}

pub fn bitonic_sort(o: &Outputs) {
    let got = o.u32s("data");
    let mut want: Vec<u32> = (0..64u64).map(|i| ((i * 37 + 11) % 64 * 1000003 % (1 << 32)) as u32).collect();
    want[5] = 0;
    want[17] = u32::MAX;
    want[40] = want[41];
    want[63] = 7;
    want.sort();
    assert_eq!(got[0], 0);
    assert_eq!(got[63], u32::MAX);
    assert_eq!(got, want);
}

pub fn break_continue(o: &Outputs) {
    assert_eq!(o.u32s("sums"), vec![75, 627, 0, 3075]);
    assert_eq!(o.u32s("visited"), vec![16, 11, 1, 16]);
}

pub fn switch(o: &Outputs) {
    let got = o.i32s("out");
    let signed = [10, 11, 12, 13, -5, 7, -3, 10];
    let unsigned = [20, 21, 22, -1, -1, 20, -1, 22];
    let wide = [30, 31, 32, 0, 1, -2, -1, 0];
    for t in 0..8 {
        assert_eq!(got[3 * t..3 * t + 3], [signed[t], unsigned[t], wide[t]], "thread {t}");
    }
}

pub fn nested_loops(o: &Outputs) {
    let got = o.i32s("out");
    let mut img: Vec<i32> = (0..64).map(|i| (i * 29) % 17 - 8).collect();
    img[0] = i32::MAX;
    img[63] = i32::MIN;
    let w = [1, 2, 1, 2, -12, 2, 1, 2, 1];
    for y in 0..8i32 {
        for x in 0..8i32 {
            let mut acc = 0i32;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let p = img[((y + dy).clamp(0, 7) * 8 + (x + dx).clamp(0, 7)) as usize];
                    acc = acc.wrapping_add(p.wrapping_mul(w[((dy + 1) * 3 + dx + 1) as usize]));
                }
            }
            assert_eq!(got[(y * 8 + x) as usize], acc, "pixel ({x}, {y})");
        }
    }
}

pub fn callables(o: &Outputs) {
    let sums = o.f32s("sums");
    assert_eq!(sums[0], 30.0);
    assert_eq!(sums[1], 0.3125);
    assert_eq!(sums[2], f32::INFINITY);
    assert!(sums[3].is_nan());
    let pairs = o.u32s("pairs");
    for t in 0..4u32 {
        let b = 4 * t as usize;
        assert_eq!(pairs[b..b + 4], [t + 100, t, 4 * t, 7], "thread {t}");
    }
}

pub fn scalar_widths(o: &Outputs) {
    assert_eq!(o.i32s("oi"), vec![-128, 127, -5536, -4285, -5, i32::MIN, -134217728, -128, 200, -1, -2]);
    #[rustfmt::skip]
    let ou = vec![44, 144, 28, 0, 1, u32::MAX, 268435455, 4294967168, 255, 0x8000_0000, 0x3c00];
    assert_eq!(o.u32s("ou"), ou);
    assert_eq!(o.i64s("ol"), vec![3_000_000_000, 4294967295, -2147483648, -10_000_000_000]);
    assert_f32s("of", &o.f32s("of"), &[1.0, 1.0 + 1.0 / 512.0, f32::INFINITY, 2048.0, 0.3, 4294967296.0]);
    let od = o.f64s("od");
    let want = [0.1f64 + 0.2, 1.00048828125, 9007199254740992.0, 1.001953125];
    for (i, (g, w)) in od.iter().zip(want).enumerate() {
        assert!(same_f64(*g, w), "od[{i}] = {g}, want {w}");
    }
}

pub fn narrow_storage(o: &Outputs) {
    assert_eq!(o.u8s("bytes"), vec![0, 3, 255, 2, 44, 88, 253, 128]);
    assert_eq!(o.i16s("shorts"), vec![0, -1, 1, -32767, -32768, 32767, -1234, 4321]);
    // f16 bits: 2, -1, -0, inf, inf (65536), inf (131008), 2^-13, NaN
    let h = o.f16_bits("halves");
    assert_eq!(h[..7], [0x4000, 0xbc00, 0x8000, 0x7c00, 0x7c00, 0x7c00, 0x0800]);
    assert!(h[7] & 0x7c00 == 0x7c00 && h[7] & 0x03ff != 0, "NaN stays NaN: {:#06x}", h[7]);
    #[rustfmt::skip]
    let wide = vec![1, 4, 0, 3, u64::MAX - 1, 37037036704, 27021597764222980, 22];
    assert_eq!(o.u64s("wide"), wide);
}

pub fn vector_ops(o: &Outputs) {
    let f = o.f32s("out");
    #[rustfmt::skip]
    let exact = [(0, 13.0), (1, 6.0), (2, 9.0), (3, -8.0), (4, 0.0), (5, 5.0), (7, 8.0), (8, 1.0),
                 (9, 105.5), (10, 8.0), (11, 1.0), (12, 0.0), (13, 1.0)];
    for (i, w) in exact {
        assert!(same_f32(f[i], w), "out[{i}] = {}, want {w}", f[i]);
    }
    // normalize((4, 0, 3)).z = 3 / 5, within one ulp however it is computed.
    assert!((f[6] - 0.6).abs() <= f32::EPSILON, "normalize: {}", f[6]);
    assert_eq!(o.i32s("ints"), vec![i32::MIN, i32::MAX, -1]);
}

pub fn matrix_ops(o: &Outputs) {
    let f = o.f32s("out");
    assert_f32s("out", &f, &[1.0, 25.0, 0.25, 1.0, 16.0, -2.0, 6.0, 4.0, 5.0, 0.0, 5.0, 0.0]);
}

pub fn struct_gep(o: &Outputs) {
    let nan = f32::NAN;
    assert_f32s("out", &o.f32s("out"), &[12.25, 1.5, 13.25, -0.0, 14.25, nan, 15.25, -2.25]);
    assert_eq!(o.u32s("tags"), vec![106, 98, 99, 222]);
    // The atomic on member 1 of each record added 1000 (wrapping).
    let recs = o.json("recs");
    let tags: Vec<u64> = recs.iter().map(|r| r[1].as_u64().expect("u32 member")).collect();
    assert_eq!(tags, vec![1007, 999, 1000, 1123]);
    assert_eq!(recs[0][0], serde_json::json!(1.5), "member 0 untouched");
    assert_eq!(recs[1][0], serde_json::json!("-0.0"), "member 0 untouched");
}

pub fn early_return(o: &Outputs) {
    assert_eq!(o.u32s("pos"), vec![3, u32::MAX, 0, 7]);
    let copy = o.u32s("copy");
    assert_eq!(copy[..2], [7, 0], "thread 0 copies keys[3] and returns at keys[4] == 0");
    assert!(copy[8..16].iter().all(|&c| c == 0), "thread 1 returned before copying");
    assert_eq!(copy[16..21], [5, 9, 2, 7, 0]);
    assert_eq!(copy[24..26], [8, 0]);
    assert_eq!(o.u32s("done"), vec![0, 0, 0, 1], "only thread 3 leaves the loop normally");
}

fn c_round(x: f32) -> f32 {
    x.round() // Rust's round is C round: halfway away from zero.
}

pub fn round_bits(o: &Outputs) {
    let inputs: [f32; 12] =
        [2.5, -2.5, 0.5, -0.5, 1.5, -0.4, -0.0, 8388609.0, f32::NAN, f32::INFINITY, -1.75, f32::from_bits(0x3effffff)];
    let fo = o.f32s("fo");
    for (t, &x) in inputs.iter().enumerate() {
        let want = [c_round(x), x.round_ties_even(), x.floor(), x.ceil(), x.trunc(), x - x.floor()];
        assert_f32s(&format!("fo[thread {t}]"), &fo[6 * t..6 * t + 6], &want);
    }
    // The classic traps, spelled out.
    assert_eq!(fo[0], 3.0, "round(2.5)");
    assert_eq!(fo[1], 2.0, "rint(2.5)");
    assert_eq!(fo[6], -3.0, "round(-2.5)");
    assert_eq!(fo[5 * 6].to_bits(), (-0.0f32).to_bits(), "round(-0.4) is -0.0");
    assert_eq!(fo[11 * 6], 0.0, "round(0.49999997) is 0, not floor(x + 0.5) = 1");
    assert_eq!(fo[10 * 6 + 5], 0.25, "fract(-1.75) = x - floor(x)");
    let flags = o.u32s("flags");
    assert_eq!(flags[..8], [0, 4, 0, 4, 0, 4, 4, 0]);
    assert_eq!(flags[8] & 3, 1, "NaN");
    assert_eq!(flags[9..], [2, 4, 0]);
    let u: [u32; 12] =
        [0, 1, 1 << 31, u32::MAX, 0x00f0f000, 0x12345678, 2, 0x80000001, 0xffff, 3, 0x55555555, 0xdeadbeef];
    let uo = o.u32s("uo");
    for (t, &v) in u.iter().enumerate() {
        let want = [
            v.leading_zeros(),
            v.trailing_zeros(),
            v.count_ones(),
            v.reverse_bits(),
            v.rotate_left(4),
            v.rotate_right(4),
            !v,
            v << 1,
        ];
        assert_eq!(uo[8 * t..8 * t + 8], want, "bits of {v:#x}");
    }
    assert_eq!(uo[..2], [32, 32], "clz(0) = ctz(0) = 32");
}

pub fn fma_contract(o: &Outputs) {
    let tiny = 2f32.powi(-24);
    let f = o.f32s("out");
    assert_eq!(f[0].to_bits(), 0, "a * b + c rounds the product first");
    assert_eq!(f[1], tiny, "fma rounds once");
    assert_f32s("out", &f, &[0.0, tiny, 7.0, 7.0, 0.0, tiny - 2f32.powi(-47), f32::NAN, f32::NEG_INFINITY]);
    assert_eq!(o.f64s("out64"), vec![0.0, 2f64.powi(-54)]);
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

pub fn int64(o: &Outputs) {
    let mixed = o.u64s("mixed");
    assert_eq!(mixed[0], 0xe220a8397b1dcdaf, "the first splitmix64 output from state 0");
    let seeds = [0, 1, u64::MAX, 11400714819323198485];
    assert_eq!(mixed, seeds.map(splitmix64).to_vec());
    let s = o.i64s("signed_out");
    assert_eq!(s[..6], [1317624576693539401, -1, -8388608, 0, 1, i64::MIN]);
    assert_eq!(s[12..18], [-3, 1, 0, 22 << 36, 1, 22]);
    for (t, a) in [i64::MIN, -1000000000007, 22, (1 << 40) - 1].into_iter().enumerate() {
        let want = [a / -7, a % -7, a >> 40, a.wrapping_shl(36), 1, a.wrapping_abs()];
        assert_eq!(s[6 * t..6 * t + 6], want, "thread {t}");
    }
}

pub fn select_minmax(o: &Outputs) {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    #[rustfmt::skip]
    let fo = [
        1.0, 2.0, 1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, -1.0, 1.0, 1.0, 1.0,      // min/max(NaN, 1) = 1; clamp(NaN) = min(max(NaN, -1), 1)
        -3.0, -3.0, -1.0, nan, 0.0, 1.0,
        0.5, 0.5, 0.5, 0.5, 0.5, 1.0,
        -1.0, 2.0, 1.0, -1.0, 1.0, 1.0,
        -inf, 0.0, -1.0, -inf, 0.0, 0.0,
        -0.5, 1.5, -0.5, -0.5, 1.0, 0.0,
        7.0, inf, 1.0, 7.0, 1.0, 0.0,
    ];
    assert_f32s("fo", &o.f32s("fo"), &fo);
    #[rustfmt::skip]
    let io = vec![
        -5, 0, 0, 0,  -5, -5, -5, 5,  i32::MIN, -5, -100, i32::MIN,  -5, i32::MAX, 100, i32::MAX,
        -101, -5, -100, 101,  -5, 100, 100, 100,  -5, 7, 7, 7,  -6, -5, -6, 6,
    ];
    assert_eq!(o.i32s("io"), io);
    #[rustfmt::skip]
    let uo = vec![
        0, 10, 10,  999, 999, 1004,  1000, 1001, 1006,  1000, 4000000000, 4000000005,
        5, 10, 10,  10, 10, 15,  1000, 4000000000, 4000000006,  6, 10, 12,
    ];
    assert_eq!(o.u32s("uo"), uo);
}

fn collatz_steps(mut n: u32) -> u32 {
    let mut steps = 0;
    loop {
        n = if n.is_multiple_of(2) { n / 2 } else { 3 * n + 1 };
        steps += 1;
        if n == 1 {
            return steps;
        }
    }
}

pub fn do_while(o: &Outputs) {
    let got = o.u32s("steps");
    assert_eq!(got, vec![3, 1, 7, 8, 16, 111, 118, 178]);
    let starts = [1, 2, 3, 6, 7, 27, 97, 871];
    assert_eq!(got, starts.map(collatz_steps).to_vec());
}

pub fn byte_buffer(o: &Outputs) {
    assert_eq!(o.u32s("words"), vec![0xdeadbeef, 1, 0x3f800000, (-2.5f32).to_bits()]);
    let raw = o.bytes("raw");
    let words: Vec<u32> = raw.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // -6.26e18 + 1 == -6.26e18; denormal + 1 == 1; 1 + 1 == 2; -2.5 + 1 == -1.5
    assert_eq!(words, vec![0xdeadbeef, 0x3f800000, 0x40000000, (-1.5f32).to_bits()]);
}

pub fn byte_pack(o: &Outputs) {
    let raw = o.bytes("raw");
    assert_eq!(raw.len(), 196);
    for t in 0..64u32 {
        assert_eq!(raw[t as usize], (7 * t + 3) as u8, "byte {t}");
        let off = 64 + 2 * t as usize;
        assert_eq!(u16::from_le_bytes([raw[off], raw[off + 1]]), (1000 * t + 1) as u16, "half at {off}");
    }
    assert_eq!(raw[192..], [0xaa; 4], "never written");
}

pub fn bool_pack(o: &Outputs) {
    let src = |t: usize| t.is_multiple_of(3) || t % 7 == 1;
    let b = |j: &serde_json::Value| j.as_bool().unwrap_or_else(|| panic!("{j} is not a bool"));
    let flip: Vec<bool> = o.json("flip").iter().map(b).collect();
    let want: Vec<bool> = (0..64).map(|t| !src(t)).chain([true, false, true, true]).collect();
    assert_eq!(flip, want, "flip");
    let pair = o.json("pair");
    assert_eq!(pair.len(), 64);
    for (t, p) in pair.iter().enumerate() {
        assert_eq!((b(&p[0]), b(&p[1])), (src(t), src(63 - t)), "pair[{t}]");
    }
    let rec = o.json("rec");
    assert_eq!(rec.len(), 64);
    for (t, r) in rec.iter().enumerate() {
        let c = r[2].as_u64().expect("u16 member");
        assert_eq!((b(&r[0]), b(&r[1]), c), (src(t), t % 2 != 0, (1001 * t as u64) % 65536), "rec[{t}]");
    }
}

pub fn partial_write(o: &Outputs) {
    let ps = o.json("ps");
    assert_eq!(ps.len(), 32);
    for (k, p) in ps.iter().enumerate() {
        let lane = |j: usize| if j == k % 3 { k as f64 + 0.5 } else { -1.0 };
        let want = serde_json::json!([[lane(0), lane(1), lane(2)], k + 100]);
        assert_eq!(p, &want, "ps[{k}]");
    }
    let rec = o.json("rec");
    assert_eq!(rec.len(), 32);
    for (k, r) in rec.iter().enumerate() {
        assert_eq!(r, &serde_json::json!([k % 3 == 1, true, 3 * k]), "rec[{k}]");
    }
    let lanes = o.json("lanes");
    assert_eq!(lanes.len(), 16);
    for (q, l) in lanes.iter().enumerate() {
        assert_eq!(l, &serde_json::json!([28 * q + 1, 28 * q + 8, 28 * q + 15, 28 * q + 22]), "lanes[{q}]");
    }
    let pairs = o.json("pairs");
    assert_eq!(pairs.len(), 64);
    for (t, p) in pairs.iter().enumerate() {
        assert_eq!(p, &serde_json::json!([t % 3 == 0, true]), "pairs[{t}]");
    }
}

pub fn atomics(o: &Outputs) {
    let c = o.u32s("c");
    let xor = (0..64u32).fold(0, |acc, id| acc ^ (1000 - id));
    assert_eq!(c[..8], [64, 63, 937, u32::MAX, xor, 0xe000_0000, 100u32.wrapping_sub(128), 69]);
    // c[8] ends 7; every exchange but the first saw 7.
    assert_eq!(c[8..], [7, 7 * 63, 64]);
}

pub fn bytecode_vm(o: &Outputs) {
    // 46341^2 wraps; sum 1..5 through a loop of jumps; a bad opcode; a
    // program that never halts.
    assert_eq!(o.i32s("out"), vec![46341i32.wrapping_mul(46341), 15, 0xdeadbeefu32 as i32, -1]);
    assert_eq!(o.u32s("steps"), vec![4, 51, 7777, 64]);
}

fn odd_digits(mut n: u32) -> u32 {
    let mut count = 0;
    loop {
        count += n % 10 % 2;
        n /= 10;
        if n == 0 {
            return count;
        }
    }
}

pub fn simple_loop_continue(o: &Outputs) {
    let got = o.u32s("odd");
    assert_eq!(got, vec![7, 9, 0, 9]);
    let nums: [u32; 16] = [0, 13579, 2468, 1000000001, u32::MAX, 7, 10, 11, 2, 4, 6, 8, 9, 99, 999, 90909];
    let want: Vec<u32> = nums.chunks(4).map(|c| c.iter().map(|&n| odd_digits(n)).sum()).collect();
    assert_eq!(got, want);
}

/// Within `ulps` units in the last place (same sign).
fn near_f32(a: f32, b: f32, ulps: u32) -> bool {
    same_f32(a, b) || (a.is_sign_negative() == b.is_sign_negative() && a.to_bits().abs_diff(b.to_bits()) <= ulps)
}

pub fn float_math(o: &Outputs) {
    let f = o.f32s("out");
    // Correctly rounded or exact by definition.
    assert_eq!(f[0], 2f32.sqrt());
    assert_eq!(f[0].to_bits(), 0x3fb504f3);
    assert_eq!(f[1..7], [1.5, 0.5, 0.0, 1024.0, -3.0, 0.25]);
    assert_eq!(f[7..9], [0.0, 1.0], "sin(0), cos(0)");
    // Transcendental: within 2 ulps of the correctly rounded value.
    assert!(near_f32(f[9], std::f32::consts::FRAC_PI_4, 2), "atan2(1, 1) = {}", f[9]);
    assert!(near_f32(f[10], 6f32.sqrt(), 2), "length = {}", f[10]);
    let d = o.f64s("out64");
    assert_eq!(d[0], 2f64.sqrt());
    assert_eq!(d[1], 2.0000000000000004, "sqrt(2)^2 rounds up");
}

pub fn unusual_shapes(o: &Outputs) {
    let got = o.i32s("out");
    let sign = [-1, 0, 1, 1, -1, 1, 1, 1];
    let class = [400, 100, 200, 300, 100, 400, 400, 300];
    // x > 10 ? x : 2x, with i32::MIN * 2 wrapping to 0
    let y = [-10, 0, 10, 14, 0, i32::MAX, 6, 20];
    for t in 0..8 {
        assert_eq!(got[3 * t..3 * t + 3], [sign[t], class[t], y[t]], "thread {t}");
    }
}

pub fn texture_rw(o: &Outputs) {
    use serde_json::json;
    let f = |v: f64| if v == 0.0 && v.is_sign_negative() { json!("-0.0") } else { json!(v) };
    // src texel k = [k, k/4, -1.5, 100 + k], scaled by [2, -1, 0.5, 1] in place.
    let src: Vec<_> =
        (0..8).map(|k| k as f64).map(|k| json!([f(2.0 * k), f(-k / 4.0), f(-0.75), f(100.0 + k)])).collect();
    assert_eq!(o.raw.buffers["src"], json!({"size": [4, 2], "texels": src}));
    // dst (x, y) = [r as u32, 4y + x, x, u32::MAX] with r = 4y + x.
    let dst: Vec<_> = (0..8u32).map(|k| json!([k, k, k % 4, u32::MAX])).collect();
    assert_eq!(o.raw.buffers["dst"], json!({"size": [4, 2], "texels": dst}));
    // vol is filled with 5; thread (x, y) writes [-x, y, i32::MIN, 7] at (x, 1, y).
    let mut vol = vec![json!([5, 5, 5, 5]); 24];
    for y in 0..2i32 {
        for x in 0..4i32 {
            vol[(x + 4 * (1 + 3 * y)) as usize] = json!([-x, y, i32::MIN, 7]);
        }
    }
    assert_eq!(o.raw.buffers["vol"], json!({"size": [4, 3, 2], "texels": vol}));
    // sizes: src at level 0; vol at level 1 (max(s >> 1, 1)); dst at level 40 (1).
    assert_eq!(o.u32s("sizes"), vec![4, 2, 2, 1, 1, 1]);
}

/// The `x` input of a corpus kernel, as u32s (the warp kernels' inputs are
/// irregular on purpose; their expectations are sequential folds of them).
fn corpus_x(json: &str) -> Vec<u32> {
    let v: serde_json::Value = serde_json::from_str(json).expect("corpus inputs parse");
    v["args"]["x"].as_array().expect("x is a list").iter().map(|e| e.as_u64().expect("u32") as u32).collect()
}

/// Per block of 64: the reductions of its elements, whatever the warp size.
pub fn warp_reduce(o: &Outputs) {
    let x = corpus_x(include_str!("../corpus/warp_reduce.inputs.json"));
    assert_eq!(x.len(), 250);
    let (mut out, mut sout) = (Vec::new(), Vec::new());
    for b in x.chunks(64) {
        let all = b.iter().all(|&v| v < 1 << 31) as u32;
        let any = b.contains(&7) as u32;
        out.extend([
            b.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
            *b.iter().max().unwrap(),
            *b.iter().min().unwrap(),
            b.iter().fold(0, |a, &v| a | v),
            b.iter().fold(u32::MAX, |a, &v| a & v),
            b.iter().fold(0, |a, &v| a ^ v),
            b.iter().filter(|&&v| v % 2 == 1).count() as u32,
            all | any << 1,
        ]);
        sout.extend([b.iter().map(|&v| v as i32).min().unwrap(), b.iter().map(|&v| v as i32).max().unwrap()]);
    }
    // Block 0 holds 0, 7 and u32::MAX: any, not all; block 1 is all small with a 7;
    // block 2 is all small without one; block 3 holds 2^31.
    assert_eq!(out[7..32].iter().step_by(8).copied().collect::<Vec<_>>(), [2, 3, 1, 0]);
    assert_eq!(o.u32s("out"), out);
    assert_eq!(o.i32s("sout"), sout);
}

/// Per block of 64: the elements that are not multiples of 3, in order.
pub fn ballot_compact(o: &Outputs) {
    let x = corpus_x(include_str!("../corpus/ballot_compact.inputs.json"));
    let mut out = vec![0u32; 256];
    let mut kept = Vec::new();
    for (b, chunk) in x.chunks(64).enumerate() {
        let k: Vec<u32> = chunk.iter().copied().filter(|v| v % 3 != 0).collect();
        out[64 * b..64 * b + k.len()].copy_from_slice(&k);
        kept.push(k.len() as u32);
    }
    assert_eq!(kept, [37, 37, 43, 32]);
    assert_eq!(o.u32s("kept"), kept);
    assert_eq!(o.u32s("out"), out);
    assert_eq!(o.u32s("out2"), out);
}

/// Per block of 64: exclusive and inclusive wrapping sums of x, and the
/// exclusive wrapping u64 product of x | 1.
pub fn warp_scan(o: &Outputs) {
    let x = corpus_x(include_str!("../corpus/warp_scan.inputs.json"));
    let (mut excl, mut incl, mut prod) = (Vec::new(), Vec::new(), Vec::new());
    for b in x.chunks(64) {
        let (mut s, mut p) = (0u32, 1u64);
        for &v in b {
            excl.push(s);
            s = s.wrapping_add(v);
            incl.push(s);
            prod.push(p);
            p = p.wrapping_mul(u64::from(v | 1));
        }
    }
    assert_eq!(&incl[..2], &[u32::MAX, 0], "x[0] = u32::MAX, x[1] = 1 wraps to 0");
    assert_eq!(o.u32s("excl"), excl);
    assert_eq!(o.u32s("incl"), incl);
    assert_eq!(o.u64s("prod"), prod);
}

pub fn volatile_buffer(o: &Outputs) {
    let data = |t: u32| t.wrapping_mul(2654435761);
    let flag: Vec<u32> = (0..64).map(|t| data(t) ^ 0xa5a5_a5a5).collect();
    assert_eq!(o.u32s("flag"), flag, "flag");
    let b = |j: &serde_json::Value| j.as_bool().unwrap_or_else(|| panic!("{j} is not a bool"));
    let seen: Vec<bool> = o.json("seen").iter().map(b).collect();
    assert_eq!(seen, flag.iter().map(|f| f % 2 == 1).collect::<Vec<_>>(), "seen");
    // Six bumps x * 3 + k, k = 1, 2, 1, 2, 1, 2, from 0xffffffff - 7t (wrapping).
    let acc: Vec<u32> = (0..64u32)
        .map(|t| [1u32, 2, 1, 2, 1, 2].iter().fold(u32::MAX - 7 * t, |x, k| x.wrapping_mul(3).wrapping_add(*k)))
        .collect();
    assert_eq!(o.u32s("acc"), acc, "acc");
    assert_eq!(acc[0], 0u32.wrapping_sub(274), "0xffffffff is -1: six bumps of -1 give -274");
    let out: Vec<u32> = acc.iter().zip(&flag).map(|(a, f)| a.wrapping_add(*f)).collect();
    assert_eq!(o.u32s("out"), out, "out");
}

/// Gradients agree with the analytic ones within `tol` relative error
/// (transcendentals round differently on devices; docs/autodiff.md,
/// "Precision").
fn assert_close(name: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((f64::from(g) - w).abs() <= tol * w.abs().max(1.0), "{name}[{i}] = {g}, want {w}");
    }
}

/// Huber loss of w x + b - y per element, and its gradient in w and b.
pub fn ad_loss(o: &Outputs) {
    let (w, b) = (1.5f32, -0.25f32);
    let x = [0.0f32, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, 0.25];
    let y = [0.0f32, 1.0, 1.0, 1.0, -3.0, -4.0, 4.0, 0.125];
    let (mut loss, mut dw, mut db) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..8 {
        let r = w * x[i] + b - y[i];
        let (l, dp) = if r.abs() <= 1.0 { (0.5 * r * r, r) } else { (r.abs() - 0.5, r.signum()) };
        loss.push(f64::from(l));
        dw.push(f64::from(dp * x[i]));
        db.push(f64::from(dp));
    }
    // Both sides of the kink are taken: |r| = 0.25 (quadratic) and 2.25
    // (linear, negative).
    assert_eq!(db[1], 0.25);
    assert_eq!(db[2], -1.0);
    assert_close("loss", &o.f32s("loss"), &loss, 1e-6);
    assert_close("dw", &o.f32s("dw"), &dw, 1e-6);
    assert_close("db", &o.f32s("db"), &db, 1e-6);
}

/// Hit distance of rays along +z from (x, 0.25, -5) at the sphere (c, rad),
/// and its gradient in c and rad: dt/dc = d - (oc - b d) / s,
/// dt/drad = -rad / s, with s = sqrt(disc); zero on a miss.
pub fn ad_ray_sphere(o: &Outputs) {
    let (c, rad) = ([0.5f64, 0.0, 1.0], 2.0f64);
    let (mut t, mut dc, mut drad) = (Vec::new(), Vec::new(), Vec::new());
    for x in [0.0f64, 1.5, -1.0, 4.0] {
        let oc = [x - c[0], 0.25 - c[1], -5.0 - c[2]];
        let b = oc[2];
        let disc = b * b - (oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2]) + rad * rad;
        if disc > 0.0 {
            let s = disc.sqrt();
            t.push(-b - s);
            dc.extend([-oc[0] / s, -oc[1] / s, 1.0 - (oc[2] - b) / s]);
            drad.push(-rad / s);
        } else {
            t.push(0.0);
            dc.extend([0.0; 3]);
            drad.push(0.0);
        }
    }
    assert_eq!(t[3], 0.0, "x = 4 misses");
    assert_close("t", &o.f32s("t"), &t, 1e-5);
    assert_close("dc", &o.f32s("dc"), &dc, 1e-5);
    assert_close("drad", &o.f32s("drad"), &drad, 1e-5);
}

/// One MLP layer's backward pass: with e = (y - t) (1 - y^2) and
/// y = tanh(W x + b): dW = e x^T, db = e, dx = W^T e.
pub fn ad_mlp(o: &Outputs) {
    let w = [[0.5, -0.25, 0.125, 0.0], [0.25, 0.5, -0.5, 0.25], [-0.125, 0.25, 0.5, -0.25], [0.0, 0.125, 0.25, 0.5]];
    let b = [0.1f32 as f64, -0.2f32 as f64, 0.05f32 as f64, 0.0];
    let xs = [1.0, -0.5, 0.25, 2.0, -1.0, 0.75, 1.5, -0.25];
    let ts = [0.5, 0.0, -0.25, 0.75, -0.5, 0.25, 0.5, 0.0];
    let (mut dw, mut db, mut dx) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..2 {
        let x = &xs[4 * i..4 * i + 4];
        let t = &ts[4 * i..4 * i + 4];
        let z: Vec<f64> = (0..4).map(|r| (0..4).map(|c| w[c][r] * x[c]).sum::<f64>() + b[r]).collect();
        let e: Vec<f64> = (0..4).map(|r| (z[r].tanh() - t[r]) * (1.0 - z[r].tanh() * z[r].tanh())).collect();
        for &xc in x {
            dw.extend(e.iter().map(|er| er * xc));
        }
        db.extend(&e);
        dx.extend((0..4).map(|c| (0..4).map(|r| w[c][r] * e[r]).sum::<f64>()));
    }
    assert_close("dw", &o.f32s("dw"), &dw, 1e-5);
    assert_close("db", &o.f32s("db"), &db, 1e-5);
    assert_close("dx", &o.f32s("dx"), &dx, 1e-5);
}
