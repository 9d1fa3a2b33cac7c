//! Structure-aware whole pipelines: the fuzz bytes choose a seed and a
//! size for xir-testgen's generators, so every input is a well-formed
//! module (XIR from `modules::generate`, WGSL from `wgslsmith`) and the
//! executions reach the passes and the backend instead of the parser's
//! refusals. The oracles are `whole_pipeline`'s; a generated module that
//! does not verify is a generator bug, and panics too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_testgen::{modules, wgslsmith};

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    let n = data.len().min(8);
    seed[..n].copy_from_slice(&data[..n]);
    let seed = u64::from_le_bytes(seed);
    let knob = |i: usize| data.get(8 + i).copied().unwrap_or(0) as usize;
    if knob(0) & 1 == 0 {
        let m = modules::generate(seed, 1 + knob(1) % 5, 1 + knob(2) % 24);
        let diags = xir::verify::verify_module(&m);
        assert!(
            !diags.iter().any(|d| d.is_error()),
            "a generated module does not verify:\n{}",
            xir::diag::render(&diags)
        );
        xir_fuzz::all_pipelines(&m);
    } else {
        let p = wgslsmith::generate(seed, &wgslsmith::Config::default());
        xir_fuzz::shader(&p.source, xir_frontend::Language::Wgsl, "generated.wgsl");
    }
});
