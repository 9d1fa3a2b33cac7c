//! Accel instance properties on a device: instance reads and writes, and
//! traversal beside instance access through one instance buffer, match the
//! interpreter (the compiler side is `backend-spirv/tests/ray_query_instances.rs`).

mod common;

use common::*;
use xir::interp::Inputs;
use xir_spirv::Feature;

/// Reads every property of instance `x`, writes them out, then writes new ones.
const READ_WRITE: &str = include_str!("../../backend-spirv/tests/kernels/ray_query_instances_read_write.xir");

/// Traverses (each thread one ray), reads the transform of the instance it
/// hit (or of instance 0), and renames that thread's own instance: the
/// structure and the instance descriptor are one buffer on the device.
const TRAVERSE_AND_ACCESS: &str =
    include_str!("../../backend-spirv/tests/kernels/ray_query_instances_traverse_and_access.xir");

/// Four instances: transforms with rotation, scale and translation, masks and user ids.
const SCENE: &str = r#"{"instances": [
  {"mask": 1, "user_id": 5, "transform": [1, 0, 0, -3.0, 0, 1, 0, 0, 0, 0, 1, 0],
   "triangles": [[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]]},
  {"mask": 255, "user_id": 16777215, "transform": [0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1.5],
   "triangles": [[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]]},
  {"mask": 128, "user_id": 0, "transform": [2, 0, 0, 3.0, 0, 2, 0, 0, 0, 0, 2, -2],
   "triangles": [[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]]},
  {"mask": 6, "user_id": 65536, "opaque": false,
   "triangles": [[[-20.0, -20.0, -5.0], [20.0, -20.0, -5.0], [0.0, 20.0, -5.0]]]}
]}"#;

const ZERO_MATS: &str = r#"{"fill": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], "len": 4}"#;

/// Interpreter and device (-O0 and -O2) on `src`; outputs must agree
/// (integers and instance records exactly, traversal floats within 1e-4).
fn matches_interpreter(src: &str, inputs: &str, threads: u32) -> Option<xir::interp::Outputs> {
    let dev = vulkan_device()?;
    let m = parse(src);
    let inputs = Inputs::from_json(inputs).expect("inputs parse");
    let want = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter runs");
    for level in [0u8, 2] {
        let (lm, out) = through_spirv(src, level);
        if out.features.contains(Feature::RayQuery) && !dev.enabled.contains(Feature::RayQuery) {
            eprintln!(
                "\n!!!!!!!! SKIPPING RAY-QUERY VULKAN TEST: device `{}` lacks rayQuery / accelerationStructure !!!!!!!!\n",
                dev.name
            );
            return None;
        }
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &lm, kernel_of(&lm), &out.words, &out.abi, &inputs, [threads, 1, 1])
                .unwrap_or_else(|e| panic!("-O{level} runs on `{}`: {e}", dev.name));
        if let Some(d) = want.first_mismatch(&got, xir::interp::close(1e-4, 1e-5)) {
            panic!(
                "-O{level} on `{}` differs from the interpreter: {d:?}\ndevice: {got:?}\ninterp: {want:?}",
                dev.name
            );
        }
    }
    Some(want)
}

// Check instance reads and writes on the device against the interpreter:
// every instance's user id, mask and transform read back, and the written
// ones (user id + 0x7000000 keeps 24 bits, mask << 3 keeps 8, doubled
// transform) in the accel output read back from the instance buffer. No
// ray query is needed, so this runs on any Vulkan device.
#[test]
fn instance_reads_and_writes_match_the_interpreter_on_vulkan() {
    let inputs = format!(
        r#"{{"dispatch": [4, 1, 1], "args": {{"scene": {SCENE}, "ids": {{"fill": 0, "len": 8}}, "mats": {ZERO_MATS}}}}}"#
    );
    let Some(want) = matches_interpreter(READ_WRITE, &inputs, 4) else { return };
    let ids: Vec<u64> = want.buffers["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(ids, vec![5, 1, 16_777_215, 255, 0, 128, 65536, 6]);
    let out = &want.buffers["scene"]["instances"];
    assert_eq!(out[1]["user_id"], 0x00ff_ffff & (16_777_215 + 0x700_0000));
    assert_eq!(out[2]["mask"], 0, "128 << 3 keeps no bit of the 8-bit mask");
    assert_eq!(out[0]["transform"][3], -6.0);
}

// Check a kernel that traverses the structure and reads and writes the
// instance buffer it was built from: closest-hit instances and the hit
// instance's transform match the interpreter, and the renamed user ids come
// back in the accel output.
#[test]
fn traversal_and_instance_access_share_one_instance_buffer_on_vulkan() {
    let inputs = format!(
        r#"{{"dispatch": [4, 1, 1], "args": {{"scene": {SCENE}, "hits": {{"fill": 0, "len": 4}}, "mats": {ZERO_MATS}}}}}"#
    );
    let Some(want) = matches_interpreter(TRAVERSE_AND_ACCESS, &inputs, 4) else { return };
    let hits: Vec<u64> = want.buffers["hits"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert!(hits.contains(&0) && hits.contains(&3), "rays hit a transformed instance and the background: {hits:?}");
    let ids: Vec<u64> = (0..4).map(|k| want.buffers["scene"]["instances"][k]["user_id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 10, 20, 30]);
}
