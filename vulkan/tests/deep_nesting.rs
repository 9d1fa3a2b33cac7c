//! Deeply nested input through everything the drivers run on it: the text
//! parser and printer, the verifier, the interpreter, the shipped `spirv`
//! pipeline (destructure, restructure, mem2reg, ... verified after each
//! pass), the backend and Vulkan. 5,000 nested `if`s once overflowed the
//! stack in `restructure_cfg`'s recursive emitter (at about 4,500); every
//! walk must be iterative, or bounded with a located error.

mod common;

use common::*;
use xir_testgen::nesting::{nested_ifs, Form};

/// Run `f` on a thread with the main thread's stack (8 MiB), where the
/// drivers run.
fn on_main_sized_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(8 << 20).spawn(f).expect("thread").join().expect("no panic");
}

const INPUTS: &str = r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#;

/// 5,000 levels: every stage of the framework takes them. At -O0 SPIR-V's
/// cap on control-flow nesting (SPIRV-Tools' universal limit, 1023) makes
/// the backend refuse the module with the validator's error instead of
/// crashing; at -O3 the optimizations fold the ifs and it runs on Vulkan.
#[test]
fn five_thousand_nested_ifs_go_through_every_stage() {
    on_main_sized_stack(|| {
        let src = nested_ifs(5_000, Form::Structured);
        let m = parse(&src);
        let printed = xir::text::print_module(&m);
        assert_eq!(printed, src, "prints as written");
        let diags = xir::verify::verify_module(&m);
        assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
        let json = xir::text::json::to_json(&m);
        let back = xir::text::json::from_json(&json, "deep.json").expect("JSON reads back");
        assert_eq!(xir::text::print_module(&back), printed);
        let inputs = xir::interp::Inputs::from_json(INPUTS).expect("inputs");
        let want = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter");
        assert_eq!(want.buffers["out"], serde_json::json!([7, 7, 7, 0, 0, 0, 0, 0]));
        // -O3 runs every optimization the pipelines ship (the `ssa` group
        // among them) besides legalization.
        for level in [0u8, 3] {
            let legal = legalize(&src, level);
            let k = kernel_of(&legal);
            let after = xir::interp::run_kernel(&legal, k, &inputs).expect("interpreter after legalization");
            assert_eq!(want.first_mismatch(&after, |_, _| false), None, "-O{level}");
            let again = xir::text::print_module(&legal);
            assert_eq!(xir::text::print_module(&parse(&again)), again);
            match (level, xir_spirv::compile(&legal, k, &opts(level, false))) {
                (0, Ok(_)) => panic!("-O0: 5,000 nested constructs exceed SPIR-V's nesting limit"),
                (0, Err(d)) => {
                    let e = xir::diag::render(&d);
                    assert!(e.contains("Maximum Control Flow nesting depth exceeded"), "{e}");
                }
                // The optimizations fold the ifs on one condition together.
                (_, Ok(out)) => {
                    let Some(dev) = vulkan_device() else { continue };
                    let (got, _) = xir_vulkan::run_kernel(&dev, &legal, k, &out.words, &out.abi, &inputs, [8, 1, 1])
                        .expect("runs");
                    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
                }
                (_, Err(d)) => panic!("-O{level}: {}", xir::diag::render(&d)),
            }
        }
    });
}

/// Within SPIR-V's limit the nested ifs compile and run on Vulkan (300
/// levels: lavapipe takes minutes on a thousand).
#[test]
fn three_hundred_nested_ifs_run_on_vulkan() {
    on_main_sized_stack(|| {
        let src = nested_ifs(300, Form::Structured);
        let m = parse(&src);
        let inputs = xir::interp::Inputs::from_json(INPUTS).expect("inputs");
        let want = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter");
        let (legal, out) = through_spirv(&src, 0);
        let k = kernel_of(&legal);
        let Some(dev) = vulkan_device() else { return };
        let (got, _) = xir_vulkan::run_kernel(&dev, &legal, k, &out.words, &out.abi, &inputs, [8, 1, 1]).expect("runs");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None);
        assert_eq!(got.buffers["out"], serde_json::json!([7, 7, 7, 0, 0, 0, 0, 0]));
    });
}
