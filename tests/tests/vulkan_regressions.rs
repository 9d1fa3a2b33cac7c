//! Every fixture of `tests/regressions/` (kernels that once miscompiled on a
//! real device) on Vulkan at -O0 and -O2, compared with the interpreter bit
//! for bit (any NaN equals any NaN). On lavapipe they guard the lowering that
//! fixed them; on the H200 they reproduce the original failure if it returns.

use xir_tests::device::{device, run_on_vulkan, same};
use xir_tests::{inputs, kernel_id, kernels_in, parse, regressions_dir};

#[test]
fn regression_fixtures_match_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    let fixtures = kernels_in(&regressions_dir());
    assert!(fixtures.len() >= 3, "expected the regression fixtures, found {}", fixtures.len());
    let mut failures = Vec::new();
    for k in &fixtures {
        let m = parse(k);
        let kid = kernel_id(&m, k);
        let inp = inputs(k);
        let want = xir::interp::run_kernel(&m, kid, &inp).unwrap_or_else(|e| panic!("{}: interpreter: {e}", k.name));
        for opt_level in [0u8, 2] {
            match run_on_vulkan(&dev, &m, kid, &inp, opt_level) {
                Err(e) => failures.push(format!("{} -O{opt_level}: {e}", k.name)),
                Ok((got, _)) => {
                    for (name, w) in &want.buffers {
                        match got.buffers.get(name) {
                            Some(g) if same(w, g) => {}
                            g => failures
                                .push(format!("{} -O{opt_level} `{name}`: interpreter {w} != Vulkan {g:?}", k.name)),
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "on {}:\n{}", dev.name, failures.join("\n"));
    eprintln!("{} regression fixtures match on {}", fixtures.len(), dev.name);
}

/// Every f16 bit pattern widened to f32 and to f64 on Vulkan equals the
/// interpreter's exact widening (NaNs compare as NaNs): the guard for the
/// integer rebuild of halves (emit/instructions.rs, `widen_half`), scalar
/// and vector, through normal, subnormal, zero, infinite and NaN halves.
#[test]
fn every_half_widens_exactly_on_vulkan() {
    let Some(dev) = device() else { return };
    let src = r#"
kernel @widen(%h: buffer<f16>, %v: buffer<vec<f16, 3>>, %s: buffer<f32>, %d: buffer<f64>, %w: buffer<vec<f32, 3>>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %h, %t : f16
  %f = cast.static %x : f32
  buffer.write %s, %t, %f
  %g = cast.static %x : f64
  buffer.write %d, %t, %g
  %y = buffer.read %v, %t : vec<f16, 3>
  %z = cast.static %y : vec<f32, 3>
  buffer.write %w, %t, %z
  return
}
"#;
    let n = 1usize << 16;
    let halves: Vec<String> = (0..n).map(|b| format!("\"0x{b:04x}\"")).collect();
    let vecs: Vec<String> = (0..n)
        .map(|b| format!("[\"0x{:04x}\", \"0x{:04x}\", \"0x{:04x}\"]", b, (b * 7919) & 0xffff, b ^ 0x8000))
        .collect();
    let json = format!(
        r#"{{"dispatch": [{n}, 1, 1], "args": {{"h": [{}], "v": [{}], "s": {{"fill": 0, "len": {n}}}, "d": {{"fill": 0, "len": {n}}}, "w": {{"fill": [0, 0, 0], "len": {n}}}}}}}"#,
        halves.join(","),
        vecs.join(",")
    );
    let m = xir_tests::parse_text(src, "widen.xir");
    let kid = m.find_function("widen").expect("kernel");
    let inp = xir::interp::Inputs::from_json(&json).expect("inputs");
    let want = xir::interp::run_kernel(&m, kid, &inp).expect("interpreter");
    for opt_level in [0u8, 2] {
        let (got, _) = run_on_vulkan(&dev, &m, kid, &inp, opt_level).unwrap_or_else(|e| panic!("-O{opt_level}: {e}"));
        for name in ["s", "d", "w"] {
            let (w, g) = (&want.buffers[name], &got.buffers[name]);
            let (Some(ws), Some(gs)) = (w.as_array(), g.as_array()) else { panic!("`{name}` is not an array") };
            if let Some(i) = (0..ws.len()).find(|&i| !same(&ws[i], &gs[i])) {
                panic!("-O{opt_level} `{name}`[{i}] (half 0x{i:04x}): interpreter {} != {} {}", ws[i], dev.name, gs[i]);
            }
        }
    }
}
