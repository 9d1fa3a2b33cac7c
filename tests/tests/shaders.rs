//! WGSL and GLSL shaders end to end: through every shipped pipeline that
//! takes structured XIR (verifying after each pass, the results unchanged
//! on the interpreter), and on Vulkan at -O0, -O2 and -O3 against the
//! interpreter (within Vulkan's precision, as `xir-run --compare`).
//! A shader of the shader corpus also gives the same outputs as the XIR
//! kernel it mirrors, on every buffer both have.

use xir::pipeline::{PassManager, RunOptions};
use xir_tests::device::{device, same};
use xir_tests::shaders::{compile, kernel, shaders};

#[test]
fn every_shader_keeps_its_results_through_every_shipped_pipeline() {
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let structured = xir_spec::spec().dialect("xir.structured").expect("declared");
    let mut ran = 0;
    for s in shaders() {
        let m = compile(&s);
        let want = xir::interp::run_kernel(&m, kernel(&m), &s.inputs).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        for (name, _) in xir_pipelines::SHIPPED {
            let p = loader.load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let input = xir_spec::spec().dialect(&p.input).expect("a known dialect");
            if !structured.refines(input) {
                continue;
            }
            let mut after = m.clone();
            let opts = RunOptions { verify_each: true, ..RunOptions::default() };
            PassManager::new(&p, opts)
                .run(&mut after, &mut std::io::sink())
                .unwrap_or_else(|e| panic!("{} through {name}: {e}", s.name));
            let k = after.find_function(&m.func(kernel(&m)).name).expect("the kernel stays");
            let got = xir::interp::run_kernel(&after, k, &s.inputs).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert_eq!(got, want, "{} changed its results through `{name}`", s.name);
            ran += 1;
        }
    }
    assert!(ran > 0);
}

#[test]
fn every_corpus_twin_gives_the_xir_kernels_outputs() {
    let mut twins = 0;
    for s in shaders() {
        let Some(twin) = &s.twin else { continue };
        let m = compile(&s);
        let got = xir::interp::run_kernel(&m, kernel(&m), &s.inputs).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        let k = xir_tests::kernel(twin);
        let want = xir_tests::run(&k);
        let twin_inputs = xir_tests::inputs(&k);
        let mut compared = 0;
        for (buf, w) in &want.raw.buffers {
            // A twin with inputs of its own may hold a buffer in another
            // encoding (a byte buffer as u32 words); those are compared by
            // the twin's own expectations, not here.
            if s.inputs.args.get(buf) != twin_inputs.args.get(buf) {
                continue;
            }
            if let Some(g) = got.buffers.get(buf) {
                assert_eq!(g, w, "{}: buffer `{buf}` differs from {twin}.xir's", s.name);
                compared += 1;
            }
        }
        assert!(compared > 0, "{}: no buffer in common with {twin}.xir", s.name);
        twins += 1;
    }
    eprintln!("{twins} corpus twins checked");
}

#[test]
fn every_shader_matches_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    let mut failures = Vec::new();
    for s in shaders() {
        let m = compile(&s);
        let k = kernel(&m);
        let opts = xir::interp::Options { precision: Some(xir::interp::Precision::default()), ..Default::default() };
        let interp =
            xir::interp::run_kernel_with(&m, k, &s.inputs, &opts).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        for opt_level in [0u8, 2, 3] {
            let r = xir_tests::device::run_on_vulkan(&dev, &m, k, &s.inputs, opt_level)
                .and_then(|(vk, _)| interp.compare_bounded(&vk, same).mismatch.map_or(Ok(()), |m| Err(m.to_string())));
            if let Err(e) = r {
                failures.push(format!("{} -O{opt_level}: {e}", s.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
