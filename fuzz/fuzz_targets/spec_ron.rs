//! The spec RON: the first byte picks which of the four spec files the
//! rest replaces (the other three stay the built-in ones); the loader must
//! refuse a bad spec with a located `SpecError`, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_spec::{Spec, SpecSources};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Some(text) = xir_fuzz::text(rest) else { return };
    let mut sources = SpecSources::builtin();
    let slot = match which % 4 {
        0 => &mut sources.types,
        1 => &mut sources.opcodes,
        2 => &mut sources.registers,
        _ => &mut sources.dialects,
    };
    slot.1 = text.to_string();
    if let Err(e) = Spec::load(sources) {
        let _ = e.to_string();
    }
});
