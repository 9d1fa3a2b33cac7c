//! Bindless buffers end to end through the driver: `xir-run --compare` runs
//! a shipped kernel + inputs pair (`fixtures/bindless_divergent.*`: a
//! divergent slot over u32 buffers of different lengths, a slot aliasing
//! another (one buffer behind two slot indices), u16 and u8 elements
//! written by neighbouring threads into shared words, an empty slot never
//! touched) on the interpreter and on Vulkan at -O0 and -O2 and
//! must report agreement; the interpreter's outputs are also checked
//! against values computed by hand, so both sides cannot be wrong together.
//! Runs on any Vulkan device (lavapipe in CI); skipped loudly without one.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING BINDLESS CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

/// Little-endian bytes of u16 values.
fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn a_divergent_bindless_kernel_agrees_with_the_interpreter_through_xir_run() {
    if !vulkan_available() {
        return;
    }
    let (src, inputs) = (fixture("bindless_divergent.xir"), fixture("bindless_divergent.inputs.json"));
    // Thread t: slot t % 3 (4, 16 and 5 elements), element t / 3.
    let o: Vec<u32> = (0..12u32).map(|t| (10 * (t % 3 + 1) + t / 3) * [4, 16, 5][(t % 3) as usize]).collect();
    for level in ["0", "2"] {
        let out = Command::new(env!("CARGO_BIN_EXE_xir-run"))
            .args([src.to_str().unwrap(), "--inputs", inputs.to_str().unwrap(), "--compare", "--opt-level", level])
            .output()
            .expect("xir-run runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "-O{level}: {err}");
        assert!(err.contains("interpreter and Vulkan agree"), "-O{level}: {err}");
        eprintln!("-O{level}: {}", err.lines().find(|l| l.starts_with("vulkan:")).unwrap_or("(no timing line)"));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON outputs");
        let j = &j["buffers"];
        assert_eq!(j["o"], serde_json::json!(o), "-O{level}");
        let slots = &j["h"]["slots"];
        assert_eq!(
            slots[0],
            serde_json::json!({"bytes": o.iter().step_by(3).flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>()})
        );
        assert_eq!(slots[3], serde_json::Value::Null, "the empty slot stays empty");
        // Slot 8 is slot 1's buffer: its elements 4..16 gained 1000 through slot 8, both slots show it.
        let s1: Vec<u32> = o.iter().skip(1).step_by(3).copied().chain((24..36).map(|x| x + 1000)).collect();
        let s1 = serde_json::json!({"bytes": s1.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>()});
        assert_eq!(slots[1], s1, "-O{level}");
        assert_eq!(slots[8], s1, "-O{level}: the alias shows the same buffer");
        // u16: element e of slot 4 + s gains t = 3e + s (65535 + 2 wraps to 1); the last ones are untouched.
        assert_eq!(slots[4]["bytes"], serde_json::json!(u16_bytes(&[100, 104, 108, 112])));
        assert_eq!(slots[5]["bytes"], serde_json::json!(u16_bytes(&[201, 205, 209, 213, 204])));
        assert_eq!(slots[6]["bytes"], serde_json::json!(u16_bytes(&[1, 306, 310, 314, 304, 305])));
        // u8: byte t loses t (12 threads over three shared words); the 13th byte is untouched.
        let mut b = vec![0u8; 12];
        b.push(255);
        assert_eq!(slots[7]["bytes"], serde_json::json!(b));
    }
}
