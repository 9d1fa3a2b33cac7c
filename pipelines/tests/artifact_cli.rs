//! The artifact through the two drivers: `xir-opt k.xir --pipeline spirv
//! --emit artifact -o k.xsa`, then `xir-run --artifact k.xsa --inputs
//! k.inputs.json` prints exactly the interpreter's result (on lavapipe or
//! any Vulkan device; skipped loudly without one). Also: the load
//! requirements a module beside the artifact imposes, and a corrupt file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(name: &str, ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(format!("{name}.{ext}"))
}

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().expect("the driver runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// Write `name`'s artifact into `dir`; returns its path.
fn emit(dir: &Path, name: &str) -> String {
    let xsa = dir.join(format!("{name}.xsa")).to_string_lossy().into_owned();
    let src = corpus(name, "xir");
    let o = run(
        env!("CARGO_BIN_EXE_xir-opt"),
        &[src.to_str().unwrap(), "--pipeline", "spirv", "--emit", "artifact", "-o", &xsa],
    );
    assert!(o.status.success(), "{name}: {}", text(&o));
    xsa
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("\n!!!!!!!! SKIPPING ARTIFACT RUNS: no Vulkan device ({e}) !!!!!!!!\n");
            false
        }
    }
}

#[test]
fn an_emitted_artifact_runs_to_the_interpreters_result() {
    if !vulkan_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let run_bin = env!("CARGO_BIN_EXE_xir-run");
    // Kernels whose Vulkan results are exact (the corpus's approximate float
    // kernels are compared with `--vulkan` below instead).
    for name in [
        "saxpy",
        "struct_gep",
        "byte_buffer",
        "byte_pack",
        "texture_rw",
        "int64",
        "narrow_storage",
        "callables",
        "atomics",
    ] {
        let xsa = emit(dir.path(), name);
        let inputs = corpus(name, "inputs.json");
        let a = run(run_bin, &["--artifact", &xsa, "--inputs", inputs.to_str().unwrap()]);
        assert!(a.status.success(), "{name}: {}", text(&a));
        let i = run(run_bin, &[corpus(name, "xir").to_str().unwrap(), "--inputs", inputs.to_str().unwrap()]);
        assert!(i.status.success(), "{name}: {}", text(&i));
        // The tests' one comparison rule: exact bits, any NaN = any NaN (NVIDIA returns 0x7fffffff).
        let (a, i) = (json(&a), json(&i));
        assert!(xir::interp::same_value(&a, &i), "{name}: artifact run != interpreter\n{a}\n{i}");
    }
    // An approximate kernel: the artifact run is the compiled module's run.
    let xsa = emit(dir.path(), "fma_contract");
    let (src, inputs) = (corpus("fma_contract", "xir"), corpus("fma_contract", "inputs.json"));
    let a = run(run_bin, &["--artifact", &xsa, "--inputs", inputs.to_str().unwrap()]);
    let v = run(run_bin, &[src.to_str().unwrap(), "--vulkan", "--inputs", inputs.to_str().unwrap()]);
    assert!(a.status.success() && v.status.success(), "{}{}", text(&a), text(&v));
    assert_eq!(json(&a), json(&v));
}

#[test]
fn a_module_beside_the_artifact_is_a_load_requirement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run_bin = env!("CARGO_BIN_EXE_xir-run");
    let xsa = emit(dir.path(), "saxpy");
    let inputs = corpus("saxpy", "inputs.json");
    // Another kernel's module: the shader hash differs, before any device work.
    let o = run(
        run_bin,
        &[corpus("select_minmax", "xir").to_str().unwrap(), "--artifact", &xsa, "--inputs", inputs.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("load requirement not met: shader hash"), "{}", text(&o));
    // A corrupt artifact: rejected with its reason.
    let mut bytes = std::fs::read(&xsa).expect("artifact");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x10;
    let bad = dir.path().join("bad.xsa");
    std::fs::write(&bad, &bytes).expect("write");
    let o = run(run_bin, &["--artifact", bad.to_str().unwrap(), "--inputs", inputs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("section digest mismatch"), "{}", text(&o));
    // Neither a module nor an artifact.
    let o = run(run_bin, &["--inputs", inputs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--artifact"), "{}", text(&o));
    // The matching module: accepted and run.
    if vulkan_available() {
        let o = run(
            run_bin,
            &[corpus("saxpy", "xir").to_str().unwrap(), "--artifact", &xsa, "--inputs", inputs.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", text(&o));
    }
}

/// `xir-run --artifact` checks the artifact's required features against what
/// the device enabled: a printing kernel needs `VK_KHR_shader_non_semantic_info`,
/// refused by name where the device lacks it (lavapipe), run where it has it.
#[test]
fn an_artifact_needing_a_feature_the_device_lacks_is_refused_by_name() {
    let Ok(device) = xir_vulkan::Device::new() else {
        eprintln!("!!!!!!!! SKIPPING: no Vulkan device at all !!!!!!!!");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("p.xir");
    std::fs::write(
        &src,
        "kernel @p(%o: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  print \"x={}\", u32 7\n  buffer.write %o, u32 0, u32 1\n  return\n}\n",
    )
    .unwrap();
    let inputs = dir.path().join("p.inputs.json");
    std::fs::write(&inputs, r#"{"dispatch": [1, 1, 1], "args": {"o": {"fill": 0, "len": 1}}}"#).unwrap();
    let xsa = dir.path().join("p.xsa").to_string_lossy().into_owned();
    let o = run(
        env!("CARGO_BIN_EXE_xir-opt"),
        &[src.to_str().unwrap(), "--pipeline", "spirv", "--emit", "artifact", "-o", &xsa],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(env!("CARGO_BIN_EXE_xir-run"), &["--artifact", &xsa, "--inputs", inputs.to_str().unwrap()]);
    if device.enabled.contains(xir_spirv::Feature::ShaderNonSemanticInfo) {
        assert!(o.status.success(), "{}", text(&o));
    } else {
        assert!(!o.status.success(), "ran without the feature: {}", text(&o));
        assert!(text(&o).contains("non_semantic_info"), "{}", text(&o));
    }
}
