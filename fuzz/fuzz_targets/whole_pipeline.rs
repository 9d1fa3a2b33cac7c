//! Whole pipelines on fuzzed IR: XIR text -> parse -> verify -> every
//! shipped pipeline with verification after each pass -> the backend ->
//! SPIRV-Tools validation (a module that passes the handoff and fails
//! validation panics the target: that is a backend bug).
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    let Ok(m) = xir::text::parse_module(text, FILE) else { return };
    if xir_fuzz::verifies(&m, FILE, text) {
        xir_fuzz::all_pipelines(&m);
    }
});
