//! Byte buffers at alignment 1 on a device: adjacent threads storing into
//! shared words lose no byte (the masked CAS loop), like the interpreter
//! (the compiler side is `backend-spirv/tests/byte_buffer_subword.rs`).

mod common;

use common::*;

/// Eight threads: a byte each into bytes 0..8 (four threads per word), a u16
/// each at odd offsets 9.. (one straddles a word boundary), an f32 each at
/// offsets 41 + 4t (every one straddles), and an unaligned u32 read each of
/// bytes nobody writes.
const ADJACENT: &str = r#"
kernel @k(%raw: byte_buffer, %o: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %b = cast.static %t : u8
  %b1 = add %b, u8 100 : u8
  byte_buffer.write %raw, %t, %b1
  %t2 = mul %t, u32 2 : u32
  %o16 = add %t2, u32 9 : u32
  %h = cast.static %t : u16
  %h1 = add %h, u16 1000 : u16
  byte_buffer.write %raw, %o16, %h1
  %t4 = mul %t, u32 4 : u32
  %o32 = add %t4, u32 41 : u32
  %f = cast.static %t : f32
  %f1 = add %f, f32 0.5 : f32
  byte_buffer.write %raw, %o32, %f1
  %r = add %t, u32 26 : u32
  %x = byte_buffer.read %raw, %r : u32
  buffer.write %o, %t, %x
  return
}
"#;

#[test]
fn adjacent_threads_store_into_shared_words_like_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(ADJACENT);
    let k = kernel_of(&m);
    let bytes: Vec<u32> = (0..76u32).map(|i| (i * 37 + 11) % 256).collect();
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [8, 1, 1], "args": {{"raw": {{"bytes": {bytes:?}}}, "o": [0, 0, 0, 0, 0, 0, 0, 0]}}}}"#
    ))
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let raw = &want.buffers["raw"]["bytes"];
    assert_eq!(raw[0], 100);
    assert_eq!(raw[7], 107);
    assert_eq!(raw[8], serde_json::json!(bytes[8]), "byte 8 is nobody's");
    assert_eq!((raw[11].as_u64().unwrap(), raw[12].as_u64().unwrap()), (1001 % 256, 1001 / 256), "straddling u16");
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
    }
}
