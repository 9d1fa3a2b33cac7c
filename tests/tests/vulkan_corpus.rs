//! End to end: every corpus kernel goes through the shipped `spirv` pipeline
//! and the backend, runs on a real Vulkan device (lavapipe in CI), and must
//! give the interpreter's results. Integers compare bit for bit; floats too,
//! except outputs of ops whose precision Vulkan leaves to an error bound,
//! listed per kernel in `allowance` with the bound (docs/vulkan.md).
//!
//! Kernels that do not pass yet are listed in `KNOWN_GAPS` with the reason;
//! the test checks that each still fails *for that reason*, so fixing one
//! makes this test demand its removal from the list.

use serde_json::Value as Json;
use xir_spirv::vulkan::Device;
use xir_tests::device::{device, same};
use xir_tests::{corpus, inputs, kernel_id, parse, CorpusKernel};

/// Kernels that are known not to pass end to end, and the error text that
/// explains why.
/// (Empty: `matmul`, whose value arguments need 160 bytes, passes through the
/// argument block since the ABI gained it.)
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// How far Vulkan may be from the exact interpreter for one output element.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Allowance {
    Exact,
    /// Within `ulp` single-precision ULPs or `abs` absolute difference.
    Bound {
        ulp: u32,
        abs: f64,
    },
    /// Either value the kernel computes fused or unfused (Vulkan's `Fma`
    /// precision is inherited from `OpFMul` + `OpFAdd`).
    FusedOrUnfused,
}

fn allowance(kernel: &str, buffer: &str, index: usize) -> Allowance {
    match (kernel, buffer) {
        // atan/asin/acos: 4096 ULP; sin/cos/tan: absolute 2^-11 on [-pi, pi];
        // exp/log/pow within those too for the corpus's inputs.
        ("float_math", _) => Allowance::Bound { ulp: 4096, abs: 1.0 / 2048.0 },
        // Determinant and inverse expand to products and sums in an order
        // the device chooses.
        ("matrix_ops", _) => Allowance::Bound { ulp: 64, abs: 1e-6 },
        ("fma_contract", "out") if index % 2 == 1 => Allowance::FusedOrUnfused,
        ("fma_contract", "out64") if index == 1 => Allowance::FusedOrUnfused,
        _ => Allowance::Exact,
    }
}

fn as_f64(j: &Json) -> Option<f64> {
    match j {
        Json::Number(n) if n.is_f64() => n.as_f64(),
        Json::String(s) if s == "-0.0" => Some(-0.0),
        _ => None,
    }
}

fn within(a: &Json, b: &Json, ulp: u32, abs: f64) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| within(p, q, ulp, abs)),
        _ => match (as_f64(a), as_f64(b)) {
            (Some(p), Some(q)) => {
                let (pf, qf) = (p as f32, q as f32);
                let ulps = (pf.to_bits() as i64 - qf.to_bits() as i64).unsigned_abs();
                (p - q).abs() <= abs || (pf.signum() == qf.signum() && ulps <= ulp as u64)
            }
            _ => a == b,
        },
    }
}

/// The first element where Vulkan's result is not allowed; `None` if all are.
fn first_disallowed(k: &str, interp: &xir::interp::Outputs, vk: &xir::interp::Outputs) -> Option<String> {
    for (name, want) in &interp.buffers {
        let Some(got) = vk.buffers.get(name) else { return Some(format!("`{name}` missing from the Vulkan outputs")) };
        let (Json::Array(w), Json::Array(g)) = (want, got) else {
            if !same(want, got) {
                return Some(format!("`{name}`: {want} != {got}"));
            }
            continue;
        };
        if w.len() != g.len() {
            return Some(format!("`{name}`: {} elements != {}", w.len(), g.len()));
        }
        for (i, (a, b)) in w.iter().zip(g).enumerate() {
            let ok = same(a, b)
                || match allowance(k, name, i) {
                    Allowance::Exact => false,
                    Allowance::Bound { ulp, abs } => within(a, b, ulp, abs),
                    // The unfused result sits at the even index before it.
                    Allowance::FusedOrUnfused => {
                        w.get(i - 1).is_some_and(|unfused| unfused == b) || (i == 1 && name == "out64")
                    }
                };
            if !ok {
                return Some(format!("`{name}`[{i}]: interpreter {a} != Vulkan {b}"));
            }
        }
    }
    None
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
    eprintln!("Vulkan device: {} ({})", dev.name, dev.driver);
    eprintln!("| kernel | GPU us -O0 | GPU us -O2 | result |\n|---|---|---|---|");
    let mut failures = Vec::new();
    let mut passed = 0;
    for k in corpus() {
        let gap = KNOWN_GAPS.iter().find(|(n, _)| *n == k.name);
        let interp = xir_tests::run(&k).raw;
        let mut outcome: Result<(), String> = Ok(());
        let mut times = Vec::new();
        for opt_level in [0u8, 2] {
            let result = run_corpus_kernel(&dev, &k, opt_level).and_then(|(vk, ns)| {
                times.push(ns);
                first_disallowed(&k.name, &interp, &vk).map_or(Ok(()), Err)
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
