//! GLSL compute shaders through the front end (naga's GLSL parser), with
//! the oracles of the WGSL target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    xir_fuzz::shader(text, xir_frontend::Language::Glsl, "fuzz.comp");
});
