//! Bool buffers through the drivers: the corpus kernel `bool_pack`
//! (`buffer<bool>`, `buffer<vec<bool, 2>>` and a struct holding bools, in the
//! 1-byte host layout, written by adjacent threads) goes through `xir-opt
//! --pipeline spirv --emit spirv` (the pipeline's output dialect `xir.spirv`
//! admits it, and the module validates) and `xir-run --compare` (the
//! interpreter and Vulkan agree; skipped loudly without a Vulkan device).

use std::process::Command;

fn corpus(name: &str) -> String {
    format!("{}/../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bool_buffers_compile_through_the_spirv_pipeline_with_xir_opt() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spv = dir.join("bool_pack.spv");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("bool_pack.xir"), "--pipeline", "spirv", "--verify-each", "--emit", "spirv", "-o"])
        .arg(&spv)
        .output()
        .expect("xir-opt runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(bytes[..4], 0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
    let words: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    xir_spirv::validate::validate(&words).expect("the emitted module validates");
}

#[test]
fn bool_buffers_agree_with_the_interpreter_through_xir_run_compare() {
    match xir_vulkan::Device::new() {
        Ok(_) => {}
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING BOOL CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            return;
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
    let src = |t: usize| t.is_multiple_of(3) || t % 7 == 1;
    for level in ["0", "2"] {
        let out = Command::new(env!("CARGO_BIN_EXE_xir-run"))
            .args([
                &corpus("bool_pack.xir"),
                "--inputs",
                &corpus("bool_pack.inputs.json"),
                "--compare",
                "--opt-level",
                level,
            ])
            .output()
            .expect("xir-run runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "-O{level}: {err}");
        assert!(err.contains("interpreter and Vulkan agree"), "-O{level}: {err}");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON outputs");
        let flip: Vec<bool> = (0..64).map(|t| !src(t)).chain([true, false, true, true]).collect();
        assert_eq!(j["buffers"]["flip"], serde_json::json!(flip), "-O{level}");
    }
}
