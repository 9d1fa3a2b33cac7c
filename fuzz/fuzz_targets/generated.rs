//! Structure-aware whole pipelines: the fuzz bytes choose a generator and
//! drive it, so every input is a well-formed module (XIR from
//! `modules::generate`, from `spec_gen` — every pure opcode the spec
//! allows in `xir.structured`, the fuzz bytes as its tape — or WGSL from
//! `wgslsmith`) and the executions reach the passes and the backend
//! instead of the parser's refusals. The oracles are `whole_pipeline`'s; a
//! generated module that does not verify is a generator bug, and panics too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_testgen::{modules, spec_gen, wgslsmith};

fn must_verify(m: &xir::Module) {
    let diags = xir::verify::verify_module(m);
    assert!(!diags.iter().any(|d| d.is_error()), "a generated module does not verify:\n{}", xir::diag::render(&diags));
}

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    let n = data.len().min(8);
    seed[..n].copy_from_slice(&data[..n]);
    let seed = u64::from_le_bytes(seed);
    let knob = |i: usize| data.get(8 + i).copied().unwrap_or(0) as usize;
    match knob(0) % 3 {
        0 => {
            let m = modules::generate(seed, 1 + knob(1) % 5, 1 + knob(2) % 24);
            must_verify(&m);
            xir_fuzz::all_pipelines(&m);
        }
        1 => {
            let words: Vec<u32> = data
                .get(9..)
                .unwrap_or_default()
                .chunks(4)
                .map(|c| c.iter().rev().fold(0u32, |w, &b| w << 8 | b as u32))
                .collect();
            let plan = spec_gen::builtin_plan("xir.structured");
            let g = spec_gen::generate(plan, &words, knob(1) & 1 == 0, spec_gen::BLOCK, &[1; 16], seed as u32);
            must_verify(&g.program.module);
            xir_fuzz::all_pipelines(&g.program.module);
        }
        _ => {
            let p = wgslsmith::generate(seed, &wgslsmith::Config::default());
            xir_fuzz::shader(&p.source, xir_frontend::Language::Wgsl, "generated.wgsl");
        }
    }
});
