//! End to end: every corpus kernel goes through the shipped `spirv` pipeline
//! and the backend, runs on a real Vulkan device (lavapipe in CI), and must
//! give the interpreter's results. Integers compare bit for bit; floats too,
//! except where Vulkan's precision allows a device to differ: the
//! interpreter bounds each element by the operations on its data path
//! (`Outputs::compare_bounded`, the rule `xir-run --compare` uses).
//!
//! Kernels that do not pass yet are listed in `KNOWN_GAPS` with the reason;
//! the test checks that each still fails *for that reason*, so fixing one
//! makes this test demand its removal from the list.

use xir_tests::device::{device, same};
use xir_tests::{corpus, inputs, kernel_id, parse, CorpusKernel};
use xir_vulkan::Device;

/// Kernels that are known not to pass end to end, and the error text that
/// explains why.
/// (Empty: `matmul`, whose value arguments need 160 bytes, passes through the
/// argument block since the ABI gained it.)
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// The interpreter's outputs with the bound Vulkan's precision allows each
/// element (`xir::interp::Precision`, docs/vulkan.md "Precision"), its warps
/// as wide as the device's subgroups (docs/vulkan.md "Subgroups").
fn bounded_interp(k: &CorpusKernel, warp_size: u32) -> xir::interp::Outputs {
    bounded_interp_with(k, warp_size, xir::interp::Precision::default())
        .unwrap_or_else(|e| panic!("{} fails in the interpreter: {e}", k.name))
}

fn bounded_interp_with(
    k: &CorpusKernel,
    warp_size: u32,
    precision: xir::interp::Precision,
) -> Result<xir::interp::Outputs, String> {
    let m = parse(k);
    let opts = xir::interp::Options { precision: Some(precision), warp_size, ..Default::default() };
    xir::interp::run_kernel_with(&m, kernel_id(&m, k), &inputs(k), &opts).map_err(|e| e.to_string())
}

fn run_corpus_kernel(
    dev: &Device,
    k: &CorpusKernel,
    opt_level: u8,
) -> Result<(xir::interp::Outputs, Option<f64>), String> {
    let module = parse(k);
    xir_tests::device::run_on_vulkan(dev, &module, kernel_id(&module, k), &inputs(k), opt_level)
}

#[test]
fn every_corpus_kernel_matches_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    eprintln!("Vulkan device: {} ({}), subgroup size {}", dev.name, dev.driver, dev.subgroups.size);
    eprintln!("| kernel | GPU us -O0 | GPU us -O2 | result |\n|---|---|---|---|");
    let mut failures = Vec::new();
    let mut passed = 0;
    for k in corpus() {
        let gap = KNOWN_GAPS.iter().find(|(n, _)| *n == k.name);
        let interp = bounded_interp(&k, dev.subgroups.size);
        let mut outcome: Result<(), String> = Ok(());
        let mut times = Vec::new();
        for opt_level in [0u8, 2] {
            let result = run_corpus_kernel(&dev, &k, opt_level).and_then(|(vk, ns)| {
                times.push(ns);
                let c = interp.compare_bounded(&vk, same);
                if c.within > 0 {
                    eprintln!(
                        "{} -O{opt_level}: {} elements within Vulkan's precision (largest bound {:e})",
                        k.name, c.within, c.max_bound
                    );
                }
                c.mismatch.map_or(Ok(()), |m| Err(m.to_string()))
            });
            if let Err(e) = result {
                outcome = Err(format!("-O{opt_level}: {e}"));
                break;
            }
        }
        let us = |t: Option<&Option<f64>>| match t {
            Some(Some(ns)) => format!("{:.1}", ns / 1000.0),
            _ => "-".into(),
        };
        let status = if outcome.is_ok() { "pass" } else { "FAIL" };
        eprintln!("| {} | {} | {} | {} |", k.name, us(times.first()), us(times.get(1)), status);
        match (outcome, gap) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => failures.push(format!("{}: passes now; remove it from KNOWN_GAPS", k.name)),
            (Err(e), Some((_, why))) if e.contains(why) => eprintln!("known gap {}: {e}", k.name),
            (Err(e), _) => failures.push(format!("{}: {e}", k.name)),
        }
    }
    eprintln!("{passed} corpus kernels match on {}", dev.name);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(passed >= 20, "only {passed} kernels ran end to end");
}

/// `--fast-math` builds (contraction, no float controls) against the
/// interpreter's widened model (`Precision::for_fast_math`): every rounding
/// may go to either neighbour, zeros may lose their sign. A kernel whose run
/// branches on a value the wider bounds make uncertain cannot be compared
/// (the interpreter says so); the test names those and requires the rest,
/// every float kernel of the corpus but those, to match.
#[test]
fn corpus_kernels_built_with_fast_math_match_the_widened_model() {
    let Some(dev) = device() else { return };
    let mut failures = Vec::new();
    let (mut passed, mut uncertain) = (0, Vec::new());
    for k in corpus() {
        let interp = match bounded_interp_with(&k, dev.subgroups.size, xir::interp::Precision::for_fast_math(true)) {
            Ok(o) => o,
            Err(e) if e.contains("may compute differently") => {
                uncertain.push(k.name.clone());
                continue;
            }
            Err(e) => panic!("{} fails in the interpreter: {e}", k.name),
        };
        let module = parse(&k);
        let result = xir_tests::device::run_on_vulkan_with(&dev, &module, kernel_id(&module, &k), &inputs(&k), 2, true)
            .and_then(|(vk, _)| interp.compare_bounded(&vk, same).mismatch.map_or(Ok(()), |m| Err(m.to_string())));
        match result {
            Ok(()) => passed += 1,
            Err(e) => failures.push(format!("{}: {e}", k.name)),
        }
    }
    eprintln!("fast math: {passed} corpus kernels match on {}; not comparable: {uncertain:?}", dev.name);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(uncertain.len() <= 3, "too many kernels cannot be bounded under fast math: {uncertain:?}");
    assert!(passed >= 25, "only {passed} kernels ran under fast math");
}
