//! SPIR-V bytes through the SPIR-V front end: the magic number and words,
//! SPIRV-Tools' validation, the nesting bound, naga's SPIR-V front end, then
//! the lowering. A refusal is one diagnostic naming the file; a module the
//! front end produces must verify, and goes on through every shipped
//! pipeline and the backend.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    xir_fuzz::spirv(data, "fuzz.spv");
});
