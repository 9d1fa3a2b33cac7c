//! WGSL through the front end: naga's parser and validator, then the
//! lowering to the kernel AST and XIR. A refusal is one located
//! diagnostic; a module the front end produces must verify, and goes on
//! through every shipped pipeline and the backend.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    xir_fuzz::shader(text, xir_frontend::Language::Wgsl, "fuzz.wgsl");
});
