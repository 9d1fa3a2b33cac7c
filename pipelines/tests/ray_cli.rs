//! Ray queries end to end through the driver: `xir-run --compare` runs the
//! shipped `fixtures/ray_scene.*` pair (closest-hit and any-hit tracing
//! through three instances with transforms and masks, a farther triangle
//! before an overlapping nearer one, rays that miss, and instance-property
//! reads of the hit instance) on the interpreter and on Vulkan at -O0 and
//! -O2 and must report agreement; the outputs are also checked against
//! values worked out from the scene by hand, so both sides cannot be wrong
//! together. A device without ray query skips loudly, naming the feature.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn ray_device_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(d) if d.enabled.contains(xir_spirv::Feature::RayQuery) => true,
        Ok(d) => {
            eprintln!(
                "\n!!!!!!!! SKIPPING RAY CLI RUNS: device `{}` lacks rayQuery / accelerationStructure !!!!!!!!\n",
                d.name
            );
            false
        }
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING RAY CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

#[test]
fn a_ray_query_kernel_agrees_with_the_interpreter_through_xir_run() {
    if !ray_device_available() {
        return;
    }
    let (src, inputs) = (fixture("ray_scene.xir"), fixture("ray_scene.inputs.json"));
    // Per thread (origin x = 1.25 t - 4.1, y = 0.2; odd threads mask out
    // instance 1): [instance, primitive, any << 8 | mask of the hit instance,
    // its user id]; a miss reads instance 0's properties.
    let bg = [2, 0, 1 << 8 | 4, 0xff_ffff];
    let miss = [u32::MAX, u32::MAX, 1, 100];
    let want: Vec<u32> = [bg, [0, 1, 1 << 8 | 1, 100], bg, bg, [1, 0, 1 << 8 | 2, 200], miss, miss, miss].concat();
    for level in ["0", "2"] {
        let out = Command::new(env!("CARGO_BIN_EXE_xir-run"))
            .args([src.to_str().unwrap(), "--inputs", inputs.to_str().unwrap(), "--compare", "--opt-level", level])
            .output()
            .expect("xir-run runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "-O{level}: {err}");
        assert!(err.contains("interpreter and Vulkan agree"), "-O{level}: {err}");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON outputs");
        assert_eq!(j["buffers"]["hits"], serde_json::json!(want), "-O{level}");
        let scene = &j["buffers"]["scene"]["instances"];
        assert_eq!(scene[2]["user_id"], 0xff_ffff, "-O{level}: the accel comes back unchanged");
    }
}
