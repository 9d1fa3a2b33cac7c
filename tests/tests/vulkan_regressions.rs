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
