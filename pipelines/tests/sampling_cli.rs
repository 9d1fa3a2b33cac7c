//! Bindless textures and sampling end to end through the driver: `xir-run
//! --compare` runs `fixtures/sampling_2d.*` (a divergent slot over a 4×4
//! texture with two mip levels and a 2×2 one, the four point samplers
//! through a divergent selector, trilinear samples at LOD 0.25, texel reads
//! and mip sizes) on the interpreter and on Vulkan at -O0 and -O2 and must
//! report agreement: the point samples, reads and sizes bit for bit, only
//! the trilinear output (`linear`) within the device's filtering bound
//! (docs/vulkan.md, "Sampling"). The interpreter's outputs are also checked
//! against values computed by hand. Runs on any Vulkan device (lavapipe in
//! CI); skipped loudly without one.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING SAMPLING CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

fn xir_run(extra: &[&str]) -> (bool, String, serde_json::Value) {
    let (src, inputs) = (fixture("sampling_2d.xir"), fixture("sampling_2d.inputs.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([src.to_str().unwrap(), "--inputs", inputs.to_str().unwrap()])
        .args(extra)
        .output()
        .expect("xir-run runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let j = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.success(), err, j)
}

#[test]
fn the_interpreter_samples_the_fixture_as_computed_by_hand() {
    let (ok, err, j) = xir_run(&[]);
    assert!(ok, "{err}");
    let b = &j["buffers"];
    // t0: slot 0, point/edge at texel (2, 0) = [x/4, y/4, 0.5, 1].
    assert_eq!(b["point"][0], json!([0.5, 0.0, 0.5, 1.0]));
    // t1: slot 1 (2x2), point/repeat at texel (-1, 1) -> (1, 1) = [0.25 + x/2, 0.75 - y/2, 0, 0.5].
    assert_eq!(b["point"][1], json!([0.75, 0.25, 0.0, 0.5]));
    // t2: slot 0, point/mirror at (-1, 3) -> (0, 3).
    assert_eq!(b["point"][2], json!([0.0, 0.75, 0.5, 1.0]));
    // t3: slot 1, point/zero at (2, 0): outside, the transparent-black border.
    assert_eq!(b["point"][3], json!([0.0, 0.0, 0.0, 0.0]));
    // t0 trilinear at LOD 0.25: 0.75 * level 0 (exactly texel (2, 0)) + 0.25 * level 1 (all ones).
    assert_eq!(b["linear"][0], json!([0.625, 0.25, 0.625, 1.0]));
    // Texel reads at (t % 2, t % 2); sizes at level t % 3.
    assert_eq!(b["texel"][1], json!([0.75, 0.25, 0.0, 0.5]));
    assert_eq!(b["size"], json!([[4, 4], [1, 1], [1, 1], [2, 2], [2, 2], [1, 1], [4, 4], [1, 1]]));
    // The texture slots come back as given, the mip chain included.
    assert_eq!(b["h"]["slots"][0]["mips"][0][3], json!([1.0, 1.0, 1.0, 1.0]));
}

#[test]
fn point_samples_agree_exactly_and_filtered_ones_within_the_bound_through_xir_run() {
    if !vulkan_available() {
        return;
    }
    for level in ["0", "2"] {
        let (ok, err, _) = xir_run(&["--compare", "--opt-level", level]);
        assert!(ok, "-O{level}: {err}");
        assert!(err.contains("interpreter and Vulkan agree"), "-O{level}: {err}");
        // Only the trilinear output takes the bound; the point samples stay bit-exact.
        assert!(err.contains("filtered sampling reaches {\"linear\"}"), "-O{level}: {err}");
        eprintln!("-O{level}: {}", err.lines().find(|l| l.starts_with("vulkan:")).unwrap_or("(no timing line)"));
    }
}
