//! FP8 (E4M3, E5M2) conversions on Vulkan against the interpreter, bit for
//! bit (any NaN equals any NaN): every code of both formats decoded to f32,
//! f16 and the other format; and f32, f64, i32 and u32 values encoded to
//! both formats — ties at every magnitude, the overflow boundaries, the
//! subnormal range, zeros, infinities, NaNs and a few thousand pseudo-random
//! f32 bit patterns. The backend carries FP8 as u8 bits and converts in
//! software (backend-spirv/src/emit/fp8.rs).

use xir_tests::device::{device, run_on_vulkan, same};

const KERNEL: &str = r#"
kernel @fp8(%e4: buffer<fp8e4m3>, %e5: buffer<fp8e5m2>, %x: buffer<f32>, %xd: buffer<f64>, %xi: buffer<i32>, %xu: buffer<u32>,
            %d4: buffer<f32>, %h4: buffer<f16>, %c45: buffer<fp8e5m2>, %d5: buffer<f32>, %h5: buffer<f16>, %c54: buffer<fp8e4m3>,
            %x4: buffer<fp8e4m3>, %x5: buffer<fp8e5m2>, %xd4: buffer<fp8e4m3>, %xd5: buffer<fp8e5m2>, %xi4: buffer<fp8e4m3>, %xu5: buffer<fp8e5m2>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %small = lt %t, u32 256 : bool
  if %small, true ^codes, false ^values, merge ^values
^codes:
  %a = buffer.read %e4, %t : fp8e4m3
  %af = cast.static %a : f32
  buffer.write %d4, %t, %af
  %ah = cast.static %a : f16
  buffer.write %h4, %t, %ah
  %a5 = cast.static %a : fp8e5m2
  buffer.write %c45, %t, %a5
  %b = buffer.read %e5, %t : fp8e5m2
  %bf = cast.static %b : f32
  buffer.write %d5, %t, %bf
  %bh = cast.static %b : f16
  buffer.write %h5, %t, %bh
  %b4 = cast.static %b : fp8e4m3
  buffer.write %c54, %t, %b4
  br target ^values
^values:
  %v = buffer.read %x, %t : f32
  %v4 = cast.static %v : fp8e4m3
  buffer.write %x4, %t, %v4
  %v5 = cast.static %v : fp8e5m2
  buffer.write %x5, %t, %v5
  %w = buffer.read %xd, %t : f64
  %w4 = cast.static %w : fp8e4m3
  buffer.write %xd4, %t, %w4
  %w5 = cast.static %w : fp8e5m2
  buffer.write %xd5, %t, %w5
  %i = buffer.read %xi, %t : i32
  %i4 = cast.static %i : fp8e4m3
  buffer.write %xi4, %t, %i4
  %u = buffer.read %xu, %t : u32
  %u5 = cast.static %u : fp8e5m2
  buffer.write %xu5, %t, %u5
  return
}
"#;

/// f32 values around every FP8 rounding decision, plus pseudo-random bits.
fn f32_cases(n: usize) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::new();
    for e in 100u32..=160 {
        for m in [
            0u32, 1, 0x0f_ffff, 0x10_0000, 0x10_0001, 0x20_0000, 0x3f_ffff, 0x40_0000, 0x40_0001, 0x7f_ffff, 0x08_0000,
            0x18_0000,
        ] {
            v.push((e << 23) | m);
        }
    }
    for special in [
        0u32,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x0000_0001,
        0x43e0_0000,
        0x43e8_0000,
        0x43f0_0000,
        0x4768_0000,
        0x4770_0000,
        0x4778_0000,
    ] {
        v.push(special);
        v.push(special ^ 0x8000_0000);
    }
    let mut s = 0x2545_f491u32;
    while v.len() < n {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v.push(s);
    }
    v.truncate(n);
    v
}

#[test]
fn fp8_conversions_match_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    let n = 4096usize;
    let bits = f32_cases(n);
    let codes: Vec<String> = (0..256).map(|c| format!("\"0x{c:02x}\"")).collect();
    let hex32: Vec<String> = bits.iter().map(|b| format!("\"0x{b:08x}\"")).collect();
    let hex64: Vec<String> =
        bits.iter().map(|&b| format!("\"0x{:016x}\"", (f32::from_bits(b) as f64 * 1.000000119).to_bits())).collect();
    let ints: Vec<String> = bits.iter().map(|&b| format!("{}", (b as i32) >> (b % 24))).collect();
    let uints: Vec<String> = bits.iter().map(|&b| format!("{}", b >> (b % 20))).collect();
    let zeros = |len: usize| format!("{{\"fill\": 0, \"len\": {len}}}");
    let json = format!(
        r#"{{"dispatch": [{n}, 1, 1], "args": {{"e4": [{c}], "e5": [{c}], "x": [{x}], "xd": [{xd}], "xi": [{xi}], "xu": [{xu}],
        "d4": {z256}, "h4": {z256}, "c45": {z256}, "d5": {z256}, "h5": {z256}, "c54": {z256},
        "x4": {zn}, "x5": {zn}, "xd4": {zn}, "xd5": {zn}, "xi4": {zn}, "xu5": {zn}}}}}"#,
        c = codes.join(","),
        x = hex32.join(","),
        xd = hex64.join(","),
        xi = ints.join(","),
        xu = uints.join(","),
        z256 = zeros(256),
        zn = zeros(n),
    );
    let m = xir_tests::parse_text(KERNEL, "fp8.xir");
    let kid = m.find_function("fp8").expect("kernel");
    let inp = xir::interp::Inputs::from_json(&json).expect("inputs");
    let want = xir::interp::run_kernel(&m, kid, &inp).expect("interpreter");
    for opt_level in [0u8, 2] {
        let (got, _) = run_on_vulkan(&dev, &m, kid, &inp, opt_level).unwrap_or_else(|e| panic!("-O{opt_level}: {e}"));
        for (name, w) in &want.buffers {
            let g = &got.buffers[name];
            let (Some(ws), Some(gs)) = (w.as_array(), g.as_array()) else { panic!("`{name}` is not an array") };
            if let Some(i) = (0..ws.len()).find(|&i| !same(&ws[i], &gs[i])) {
                let input = if i < 256 && name.len() == 2 || name.starts_with('c') {
                    format!("code 0x{i:02x}")
                } else {
                    format!("f32 bits 0x{:08x}", bits[i])
                };
                panic!("-O{opt_level} `{name}`[{i}] ({input}): interpreter {} != {} {}", ws[i], dev.name, gs[i]);
            }
        }
    }
}
