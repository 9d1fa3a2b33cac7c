//! The autodiff kernels (`tests/autodiff/`: a loss over a buffer, a
//! ray-sphere hit's gradient, one MLP layer's backward pass), held to their
//! analytic gradients three ways: the interpreter's own autodiff (forward
//! mode, docs/autodiff.md), the `autodiff` pass's output run on the
//! interpreter (the shipped `spirv-legalize` pipeline at -O0 and -O2), and
//! that output compiled and run on Vulkan (lavapipe in CI). The Vulkan
//! results are also compared with the interpreter's, element by element,
//! within 1e-4 relative error (docs/autodiff.md, "Precision").

use std::path::Path;

use xir_tests::device::device;
use xir_tests::expect::AUTODIFF;
use xir_tests::{inputs, kernel_id, kernels_in, parse, run_module, Outputs};

fn kernels() -> Vec<xir_tests::CorpusKernel> {
    let ks = kernels_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("autodiff"));
    let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, AUTODIFF.iter().map(|(n, _)| *n).collect::<Vec<_>>(), "every kernel has expectations");
    ks
}

fn check(name: &str, o: &Outputs) {
    let (_, f) = AUTODIFF.iter().find(|(n, _)| *n == name).expect("listed");
    f(o)
}

#[test]
fn the_interpreter_gives_the_analytic_gradients() {
    for k in kernels() {
        let m = parse(&k);
        check(&k.name, &run_module(&m, &k));
    }
}

#[test]
fn the_pass_gives_the_analytic_gradients_at_every_level() {
    for k in kernels() {
        for opt_level in [0u8, 2] {
            let m = parse(&k);
            let name = m.func(kernel_id(&m, &k)).name.clone();
            let (legal, _, _) = xir_pipelines::backend::legalize_and_compile(&m, Some(&name), opt_level, false)
                .unwrap_or_else(|e| panic!("{} -O{opt_level}: {e}", k.name));
            let text = xir::text::print_module(&legal);
            assert!(!text.contains("autodiff."), "{}: no autodiff instruction is left", k.name);
            check(&k.name, &run_module(&legal, &k));
        }
    }
}

#[test]
fn vulkan_gives_the_analytic_gradients_and_the_interpreters() {
    let Some(dev) = device() else { return };
    for k in kernels() {
        let m = parse(&k);
        let interp = run_module(&m, &k);
        for opt_level in [0u8, 2] {
            let (vk, ns) = xir_tests::device::run_on_vulkan(&dev, &m, kernel_id(&m, &k), &inputs(&k), opt_level)
                .unwrap_or_else(|e| panic!("{} -O{opt_level}: {e}", k.name));
            eprintln!("{} -O{opt_level} on {}: {:.1} us", k.name, dev.name, ns.unwrap_or(0.0) / 1e3);
            let vk = Outputs { name: k.name.clone(), raw: vk };
            check(&k.name, &vk);
            for (buf, _) in AUTODIFF_BUFFERS.iter().filter(|(n, _)| n.starts_with(&format!("{}.", k.name))) {
                let b = buf.split_once('.').expect("kernel.buffer").1;
                let (a, v) = (interp.f32s(b), vk.f32s(b));
                for (i, (x, y)) in a.iter().zip(&v).enumerate() {
                    let tol = 1e-4 * x.abs().max(1.0);
                    assert!((x - y).abs() <= tol, "{} -O{opt_level}: {b}[{i}]: interpreter {x}, Vulkan {y}", k.name);
                }
            }
        }
    }
}

/// The float outputs compared between the interpreter and Vulkan.
const AUTODIFF_BUFFERS: &[(&str, ())] = &[
    ("ad_loss.loss", ()),
    ("ad_loss.dw", ()),
    ("ad_loss.db", ()),
    ("ad_ray_sphere.t", ()),
    ("ad_ray_sphere.dc", ()),
    ("ad_ray_sphere.drad", ()),
    ("ad_mlp.dw", ()),
    ("ad_mlp.db", ()),
    ("ad_mlp.dx", ()),
];
