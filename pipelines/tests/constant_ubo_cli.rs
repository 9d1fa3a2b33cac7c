//! The constant UBO through the two drivers: a kernel indexing two 256-entry
//! lookup tables dynamically goes through the `spirv` pipeline with its
//! tables in the constant-data uniform block (`xir-opt --emit spirv-asm`),
//! its artifact carries the constant data (`--emit artifact`), and
//! `xir-run --artifact` and `xir-run --compare` give exactly the
//! interpreter's result (on lavapipe or any Vulkan device; skipped loudly
//! without one).

use std::path::Path;
use std::process::{Command, Output};

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().expect("the driver runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// The kernel and its inputs, written into `dir`: (module path, inputs path).
fn write_kernel(dir: &Path) -> (String, String) {
    let tab: Vec<String> = (0..256).map(|i| format!("{:?}", (i * i) as f32 * 0.375 - 50.0)).collect();
    let lut: Vec<String> = (0..256u32).map(|i| i.wrapping_mul(2654435761).to_string()).collect();
    let src = format!(
        "kernel @lookup(%x: buffer<u32>, %out: buffer<f32>, %hash: buffer<u32>) block_size(64, 1, 1) {{\n\
         ^entry:\n  %i = extract $dispatch_id, u32 0 : u32\n  %v = buffer.read %x, %i : u32\n  \
         %j = bit_and %v, u32 255 : u32\n  %t = extract array<f32, 256> [{}], %j : f32\n  \
         buffer.write %out, %i, %t\n  %k = bit_xor %j, u32 85 : u32\n  \
         %h = extract array<u32, 256> [{}], %k : u32\n  buffer.write %hash, %i, %h\n  return\n}}\n",
        tab.join(", "),
        lut.join(", ")
    );
    let n = 300;
    let x: Vec<u32> = (0..n).map(|i| (i * 7919) % 100_000).collect();
    let inputs = serde_json::json!({
        "dispatch": [n, 1, 1],
        "args": {"x": x, "out": {"fill": 0.0, "len": n}, "hash": {"fill": 0, "len": n}}
    });
    let (xir, json) = (dir.join("lookup.xir"), dir.join("lookup.inputs.json"));
    std::fs::write(&xir, src).expect("write module");
    std::fs::write(&json, inputs.to_string()).expect("write inputs");
    (xir.to_string_lossy().into_owned(), json.to_string_lossy().into_owned())
}

#[test]
fn lookup_tables_live_in_the_uniform_block_and_run_from_an_artifact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (xir, inputs) = write_kernel(dir.path());
    let opt = env!("CARGO_BIN_EXE_xir-opt");
    let asm = run(opt, &[&xir, "--pipeline", "spirv", "--emit", "spirv-asm"]);
    assert!(asm.status.success(), "{}", text(&asm));
    let asm = String::from_utf8_lossy(&asm.stdout).into_owned();
    assert!(asm.contains("OpName %") && asm.contains("\"_ConstantData\""), "{asm}");
    assert_eq!(asm.matches("ArrayStride 16").count(), 2, "two std140 tables: {asm}");
    assert_eq!(asm.lines().filter(|l| l.contains("OpVariable") && l.contains("Uniform")).count(), 1);
    let xsa = dir.path().join("lookup.xsa").to_string_lossy().into_owned();
    let o = run(opt, &[&xir, "--pipeline", "spirv", "--emit", "artifact", "-o", &xsa]);
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&xsa).expect("artifact written");
    let art = xir_spirv::artifact::decode(&bytes, &xir_spirv::artifact::LoadRequirements::any_xir_spirv(), None)
        .expect("the artifact decodes");
    assert_eq!((art.constants.len(), art.abi.constant_data_size()), (8192, 8192));
    if let Err(e) = xir_vulkan::Device::new() {
        eprintln!("\n!!!!!!!! SKIPPING CONSTANT-UBO RUNS: no Vulkan device ({e}) !!!!!!!!\n");
        return;
    }
    let run_bin = env!("CARGO_BIN_EXE_xir-run");
    let a = run(run_bin, &["--artifact", &xsa, "--inputs", &inputs]);
    assert!(a.status.success(), "{}", text(&a));
    let i = run(run_bin, &[&xir, "--inputs", &inputs]);
    assert!(i.status.success(), "{}", text(&i));
    assert_eq!(json(&a), json(&i), "artifact run != interpreter");
    for level in ["0", "2"] {
        let c = run(run_bin, &[&xir, "--inputs", &inputs, "--compare", "--opt-level", level]);
        assert!(c.status.success() && text(&c).contains("interpreter and Vulkan agree"), "-O{level}: {}", text(&c));
    }
}
