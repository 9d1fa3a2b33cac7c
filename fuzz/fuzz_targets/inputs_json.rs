//! Interpreter inputs JSON (`xir-run --inputs`): the reader must refuse bad
//! JSON typed; inputs it accepts are bound against corpus kernels of every
//! argument kind and run by the interpreter under small limits, which must
//! refuse ill-fitting inputs with an `InterpError`, never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use xir::interp::{Inputs, Options};
use xir::Module;

const KERNELS: [&str; 4] = [
    include_str!("../../tests/corpus/saxpy.xir"),
    include_str!("../../tests/corpus/byte_buffer.xir"),
    include_str!("../../tests/corpus/struct_gep.xir"),
    include_str!("../../tests/corpus/texture_rw.xir"),
];

fn modules() -> &'static [Module] {
    static M: OnceLock<Vec<Module>> = OnceLock::new();
    M.get_or_init(|| KERNELS.iter().map(|k| xir::text::parse_module(k, "k.xir").expect("corpus parses")).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    let Ok(inputs) = Inputs::from_json(text) else { return };
    let opts = Options { max_steps: 1 << 16, max_threads: 1 << 10, max_print_bytes: 1 << 12, ..Options::default() };
    for m in modules() {
        for k in m.func_ids().filter(|&f| m.func(f).is_kernel()) {
            if let Err(e) = xir::interp::run_kernel_with(m, k, &inputs, &opts) {
                let _ = e.to_string();
            }
        }
    }
});
