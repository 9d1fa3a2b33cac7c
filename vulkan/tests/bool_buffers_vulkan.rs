//! Bool buffers on a device: one-byte host bools from adjacent threads are
//! read and written in place like the interpreter, and another storage for
//! a bool buffer is refused by the artifact and the runner (the compiler
//! side is `backend-spirv/tests/bool_buffers.rs`).

mod common;

use common::*;
use xir_spirv::BufferStorage;

/// `out[t] = !src[t]` over the first `buffer.size(out)` threads.
const FLIP: &str = r#"
kernel @k(%src: buffer<bool>, %out: buffer<bool>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %src, %t : bool
  %y = bit_not %x : bool
  buffer.write %out, %t, %y
  return
}
"#;

/// Runs `FLIP` over 61 of 64 host bytes as a LuisaCompute host lays them out
/// (any non-zero byte is true); the three bytes after the last thread keep
/// their 0xAA, so no masked write touched a neighbour.
#[test]
fn one_byte_host_bools_from_adjacent_threads_are_read_and_written_in_place_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let src: Vec<u8> = (0..64u32).map(|t| [0, 1, 2, 0x80, 0, 0xff, 1, 0][(t % 8) as usize]).collect();
    let m = parse(FLIP);
    let k = kernel_of(&m);
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let mut push = vec![0u8; out.abi.push_constant_size as usize];
        push[..12].copy_from_slice(&[61u32, 1, 1].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
        let groups = xir_vulkan::group_counts([61, 1, 1], out.abi.block_size);
        let (bufs, _) = xir_vulkan::dispatch(&dev, &out.words, &out.abi, &[src.clone(), vec![0xaa; 64]], &push, groups)
            .expect("runs on Vulkan");
        let want: Vec<u8> = (0..64).map(|t| if t >= 61 { 0xaa } else { u8::from(src[t] == 0) }).collect();
        assert_eq!(bufs[1], want, "-O{level}");
        assert_eq!(bufs[0], src, "-O{level}: the source is untouched");
    }
    // Through the typed runner, against the interpreter.
    let flags: Vec<bool> = (0..64).map(|t| src[t] != 0).collect();
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [61, 1, 1], "args": {{"src": {flags:?}, "out": {{"fill": true, "len": 64}}}}}}"#
    ))
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let out_json = &want.buffers["out"];
    assert_eq!(out_json[1], serde_json::json!(false));
    assert_eq!(out_json[63], serde_json::json!(true), "never written");
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [61, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
    }
}

/// An ABI that stores a `buffer<bool>` in any other layout (such as the old
/// one 0/1 word per bool) is refused by the artifact writer and reader and by
/// the runner, so 1-byte host bools are never handed to it.
#[test]
fn another_storage_for_a_bool_buffer_is_refused_by_the_artifact_and_the_runner() {
    use xir_spirv::artifact::{ArtifactError, ShaderArtifact};
    let m = parse(FLIP);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    art.encode().expect("the planned layout encodes");
    let mut old = art.clone();
    old.abi.properties[2].storage = BufferStorage::Words { elem_size: 4, elem_align: 4 };
    old.abi.check_shape().expect("still a canonical shape");
    let e = old.encode().expect_err("the old bool layout");
    assert!(matches!(e, ArtifactError::Arguments(_)), "{e}");
    let Some(dev) = vulkan_device() else { return };
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [4, 1, 1], "args": {"src": [true, false, true, false], "out": [true, true, true, true]}}"#,
    )
    .expect("inputs");
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &old.abi, &inputs, [4, 1, 1])
        .expect_err("the runner refuses the old layout");
    assert!(e.to_string().contains("not this backend's layout"), "{e}");
}
