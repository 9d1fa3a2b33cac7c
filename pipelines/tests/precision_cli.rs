//! `xir-run --compare` with default flags on the corpus kernels whose
//! results Vulkan lets a device round differently: `float_math`
//! (transcendentals, `sqrt`, `length`, f64 `sqrt`) and `fma_contract` (f64
//! `fma` fused or not). Each element is compared within the bound the
//! interpreter derives from the operations on its data path (docs/vulkan.md,
//! "Precision"); before that, both failed on lavapipe and the H200 without
//! hand-written allowances. Runs on any Vulkan device (lavapipe in CI);
//! skipped loudly without one.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(name)
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING PRECISION CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

fn compare(kernel: &str, opt: &str) -> (bool, String) {
    let (src, inputs) = (corpus(&format!("{kernel}.xir")), corpus(&format!("{kernel}.inputs.json")));
    let out = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([src.to_str().unwrap(), "--inputs", inputs.to_str().unwrap(), "--compare", "--opt-level", opt])
        .output()
        .expect("xir-run runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn float_math_and_fma_contract_agree_within_vulkans_precision_with_default_flags() {
    if !vulkan_available() {
        return;
    }
    for kernel in ["float_math", "fma_contract"] {
        for opt in ["0", "2"] {
            let (ok, err) = compare(kernel, opt);
            assert!(ok, "{kernel} -O{opt}: {err}");
            assert!(err.contains("xir-run: interpreter and Vulkan agree"), "{kernel} -O{opt}: {err}");
        }
    }
}
