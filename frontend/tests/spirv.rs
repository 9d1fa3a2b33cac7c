//! SPIR-V compute modules in (`xir_frontend::spirv`): glslang's modules of
//! `tests/spirv/*.comp` and `*.hlsl` (`*.spv`, one through `spirv-opt -O`) lowered
//! and run on the interpreter with exact expected outputs, and every
//! refusal, unlocated (a binary has no text) and by rule.

use serde_json::json;
use xir_frontend::{spirv, Overrides};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/spirv/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(name: &str) -> serde_json::Value {
    run_with(name, &Overrides::new())
}

fn run_with(name: &str, overrides: &Overrides) -> serde_json::Value {
    let m = spirv::compile(name, &fixture(&format!("{name}.spv")), overrides).unwrap_or_else(|d| panic!("{d}"));
    let inputs: xir::interp::Inputs =
        serde_json::from_slice(&fixture(&format!("{name}.inputs.json"))).expect("inputs parse");
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let out = xir::interp::run_kernel(&m, k, &inputs).unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(&out.buffers).expect("json")
}

/// Workgroup atomics and a block with a header (`hist.total` beside
/// `hist.bins`), as glslang writes them (no optimization).
#[test]
fn glslangs_histogram_runs() {
    let out = run("histogram");
    // 100 values (7 i mod 13) counted by value mod 4, plus the 5 already there.
    assert_eq!(out["hist.bins"], json!([31, 23, 23, 23]));
    assert_eq!(out["hist.total"], json!([105]));
}

/// The same module without debug names (`spirv-opt --strip-debug`): each
/// binding is named by its place, a member by its index, as the foreign
/// runner keys them.
#[test]
fn a_module_without_names_is_keyed_by_binding() {
    let out = run("histogram.stripped");
    assert_eq!(out["set0.binding1.1"], json!([31, 23, 23, 23]));
    assert_eq!(out["set0.binding1.0"], json!([105]));
}

/// Blocks of one struct of one member stand for that member, as naga's
/// module of the same GLSL takes them (`frontend/tests/kernels/nested_blocks.comp`):
/// `b` is a one-element buffer of `b.s.n`, `u` the value of `u.p.k`.
#[test]
fn a_block_of_one_struct_of_one_member_is_that_member() {
    assert_eq!(run("nested_blocks"), json!({"b": [8], "o": [2.5, 5.0, 7.5, 10.0]}));
}

/// A texture read without a sampler (`OpImageFetch` of a sampled image
/// at level 0) is an XIR texture read.
#[test]
fn a_texel_fetch_reads_the_texture() {
    assert_eq!(run("texel_fetch")["o"], json!([1.0, 3.0, 5.0, 7.0, 9.0, 11.0]));
}

/// glslang's module through `spirv-opt -O`: SSA values and phis, a loop.
#[test]
fn an_optimized_scan_runs() {
    let out = run("scan");
    let scanned = out["scanned"].as_array().expect("a list");
    assert_eq!(&scanned[..4], &[json!(-1.0), json!(-1.25), json!(-0.75), json!(0.5)]);
    assert_eq!(scanned[31], json!(29.75), "the first workgroup's total");
    assert_eq!(out["totals.groups"], json!([3]));
    assert_eq!(out["totals.sum_bits"][0], json!(29.75f32.to_bits()));
}

/// HLSL through glslang: `RWStructuredBuffer`s and a `cbuffer` of two
/// members (a value argument `[scale, n]`, as the foreign runner takes the block).
#[test]
fn glslangs_hlsl_runs() {
    let out = run("saxpy_sqrt");
    let b = out["B"].as_array().expect("a list");
    // B[i] = A[i] * 1.5 + sqrt(|A[i]|) for i < n = 100; A[0] = -10.
    assert_eq!(b[0], json!(-15.0f32 + 10f32.sqrt()));
    assert_eq!(b[20], json!(0.0), "A[20] = 0");
    assert_eq!(b[100], json!(0.0), "past n: untouched");
}

/// A specialization constant takes its default, or the value given for its
/// SpecId; its `OpName` is no key (naga names it by the id), and saying so
/// is part of the refusal.
#[test]
fn specialization_constants_are_set_by_spec_id() {
    let v = |out: &serde_json::Value| out["data"].as_array().expect("a list")[..3].to_vec();
    // data[i] = i * SCALE + 0.5 for i < 20.
    assert_eq!(v(&run("scale")), [json!(0.5), json!(3.5), json!(6.5)]);
    let five: Overrides = [("0".to_string(), 5.0)].into();
    assert_eq!(v(&run_with("scale", &five)), [json!(0.5), json!(5.5), json!(10.5)]);
    let named: Overrides = [("SCALE".to_string(), 5.0)].into();
    let d = spirv::compile("scale.spv", &fixture("scale.spv"), &named).expect_err("refused");
    assert!(d.message.ends_with("named by their SpecId: `--override 0=VALUE`)"), "{}", d.message);
}

/// Each refusal names the file, says why, and carries no position.
#[test]
fn what_is_not_a_valid_compute_module_is_refused_by_rule() {
    let scan = fixture("scan.spv");
    let refusal = |bytes: &[u8]| {
        let d = spirv::compile("k.spv", bytes, &Overrides::new()).expect_err("refused");
        assert_eq!((d.file.as_deref(), d.span), (Some("k.spv"), None), "{d}");
        format!("[{}] {}", d.rule, d.message)
    };
    assert_eq!(refusal(b"not spir-v"), "[spirv] not a SPIR-V module: no magic number 0x07230203");
    assert_eq!(
        refusal(&scan[..scan.len() - 3]),
        format!("[spirv] not a SPIR-V module: {} bytes, not a whole number of 32-bit words", scan.len() - 3)
    );
    let mut corrupt = scan.clone();
    corrupt[40] ^= 0xff; // inside the GLSL.std.450 import's name
    assert!(refusal(&corrupt).starts_with("[spirv] SPIRV-Tools does not validate it for Vulkan 1.2: "));
    // A type past naga's size limit (a runtime array of stride 2^31 + 4 after
    // a member at offset 4; the `spirv` fuzz target's find), refused before
    // naga, which would panic on it.
    let path = format!(
        "{}/../fuzz/artifacts-found/spirv/crash-14e5c99e58335fdec83fd900c5b8ce4e49cab187",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_eq!(
        refusal(&std::fs::read(path).expect("the fuzz find")),
        "[spirv] the module declares a type of 2147483656 bytes, more than naga lays out (2147483647)"
    );
    // Either byte order is a module.
    let swapped: Vec<u8> = scan.chunks_exact(4).flat_map(|w| [w[3], w[2], w[1], w[0]]).collect();
    spirv::compile("k.spv", &swapped, &Overrides::new()).expect("big-endian words");
    // A valid module without a compute entry point (naga's of a fragment shader).
    let frag = "@fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    let words = xir_frontend::oracle::naga_spirv(frag, xir_frontend::Language::Wgsl, "f.wgsl").expect("naga");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(refusal(&bytes), "[frontend:unsupported] not supported: the shader has no compute entry point");
}
