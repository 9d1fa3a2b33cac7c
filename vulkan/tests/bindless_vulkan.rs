//! Bindless buffers on a device: divergent, size-only and sub-word-element
//! kernels match the interpreter, a heap over the device's descriptor limit
//! is refused by name, and alias slots resolve like the interpreter's (the
//! compiler side is `backend-spirv/tests/bindless.rs`).

mod common;

use common::*;
use xir_spirv::PropertyKind;

/// Eight threads over three slots (a divergent slot), reading, sizing and
/// writing through the heap; `%g` is an unused bindless array (no property).
const RUNTIME: &str = r#"
kernel @k(%h: bindless_array, %g: bindless_array, %o: buffer<u32>, %f: buffer<f32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %s = mod %t, u32 3 : u32
  %x = bindless.buffer_read %h, %s, %t : u32
  %sz = bindless.buffer_size %h, %s, u32 4 : u32
  %y = add %x, %sz : u32
  buffer.write %o, %t, %y
  bindless.buffer_write %h, %s, %t, %y
  %b = mul %t, u32 4 : u32
  %v = bindless.byte_buffer_read %h, u32 3, %b : f32
  buffer.write %f, %t, %v
  return
}
"#;

#[test]
fn a_divergent_bindless_kernel_matches_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(RUNTIME);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [8, 1, 1], "args": {
        "h": {"slots": [{"u32": [1, 2, 3, 4, 5, 6, 7, 8]}, {"u32": [10, 20, 30, 40, 50, 60, 70, 80, 90]},
                        {"bytes": [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0]},
                        {"f32": [0.5, -1.5, 2.25, 3, 4, 5, 6, 7]}, null]},
        "g": {"slots": [null, {"i32": [-1]}]},
        "o": [0, 0, 0, 0, 0, 0, 0, 0],
        "f": [0, 0, 0, 0, 0, 0, 0, 0]}}"#,
    )
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.buffers["o"], serde_json::json!([9, 29, 11, 12, 59, 14, 15, 89]), "the kernel is what we think");
    if !dev.enabled.contains(xir_spirv::Feature::StorageBufferArrayNonUniformIndexing) {
        eprintln!(
            "\n!!!!!!!! SKIPPING: {} lacks shaderStorageBufferArrayNonUniformIndexing ({:?}) !!!!!!!!\n",
            dev.name, dev.enabled
        );
        return;
    }
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        assert!(out.abi.property_for_arg(1).is_none());
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
        assert_eq!(got.buffers["h"], want.buffers["h"]);
        eprintln!("divergent bindless heap kernel: {} (-O{level}) agrees with the interpreter", dev.name);
    }
}

/// The runner checks descriptor counts before creating any layout: the
/// `RUNTIME` kernel binds 3 set-0 storage buffers (metadata, `%o`, `%f`) and
/// a heap of 4; with the device's update-after-bind per-stage limit faked to
/// exactly 7 it runs, at 6 it is refused naming the limit (lavapipe's real
/// limit, 10^6, is out of reach). `vkGetDescriptorSetLayoutSupport` is
/// asked about the heap layout on every run.
#[test]
fn a_heap_one_over_the_devices_descriptor_limit_is_refused_by_name() {
    let Some(mut dev) = vulkan_device() else { return };
    let m = parse(RUNTIME);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [8, 1, 1], "args": {
        "h": {"slots": [{"u32": [1, 2, 3, 4, 5, 6, 7, 8]}, {"u32": [10, 20, 30, 40, 50, 60, 70, 80, 90]},
                        {"u32": [1, 2, 3, 4, 5, 6, 7, 8]}, {"f32": [0.5, -1.5, 2.25, 3, 4, 5, 6, 7]}]},
        "g": {"slots": []}, "o": [0, 0, 0, 0, 0, 0, 0, 0], "f": [0, 0, 0, 0, 0, 0, 0, 0]}}"#,
    )
    .expect("inputs");
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let real = dev.descriptor_limits;
    assert!(real.max_per_stage_descriptor_update_after_bind_storage_buffers >= 7, "{real:?}");
    dev.descriptor_limits.max_per_stage_descriptor_update_after_bind_storage_buffers = 7;
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1])
        .expect("exactly at the limit: runs");
    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
    dev.descriptor_limits.max_per_stage_descriptor_update_after_bind_storage_buffers = 6;
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1]).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("maxPerStageDescriptorUpdateAfterBindStorageBuffers of 6") && e.contains("heap has 4"), "{e}");
    // The ordinary per-set limit is checked too.
    dev.descriptor_limits = xir_vulkan::DescriptorLimits { max_descriptor_set_storage_buffers: 6, ..real };
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1]).unwrap_err();
    assert!(e.to_string().contains("maxDescriptorSetStorageBuffers of 6"), "{e}");
}

/// Size queries only: metadata, no heap, so no descriptor indexing is needed (runs on lavapipe).
const SIZES: &str = r#"
kernel @k(%h: bindless_array, %g: bindless_array, %o: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %s = mod %t, u32 3 : u32
  %n = bindless.buffer_size %h, %s, u32 4 : u32
  %m = bindless.buffer_size %h, %s, u32 2 : u32
  %y = mul %n, u32 100 : u32
  %z = add %y, %m : u32
  buffer.write %o, %t, %z
  return
}
"#;

#[test]
fn a_size_only_bindless_kernel_matches_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(SIZES);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [6, 1, 1], "args": {
        "h": {"slots": [{"u32": [1, 2, 3]}, {"bytes": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, {"f64": [0.5, 1.5]}]},
        "g": {"slots": [null, {"i16": [-1, 2, 3]}]},
        "o": [0, 0, 0, 0, 0, 0]}}"#,
    )
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.buffers["o"], serde_json::json!([306, 205, 408, 306, 205, 408]));
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        assert!(out.abi.descriptors().all(|p| p.kind != PropertyKind::BufferHeap));
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [6, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
        assert_eq!(got.buffers["g"], want.buffers["g"], "the unused array comes back in the interpreter's encoding");
    }
    // A u32 texture slot in an array whose kernel binds no texture heap is
    // never read: it is not bound and comes back as given (the texture heaps
    // hold f32 sampled images; where one is bound, such a slot is refused by
    // name: vulkan::texture_heap's unit test).
    let tex = xir::interp::Inputs::from_json(
        r#"{"args": {"h": {"slots": [{"elem": "u32", "size": [1, 1], "texels": [[1, 2, 3, 4]]}]},
        "g": {"slots": []}, "o": [0]}}"#,
    )
    .expect("inputs");
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    assert!(out
        .abi
        .descriptors()
        .all(|p| !matches!(p.kind, PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap)));
    let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &tex, [1, 1, 1])
        .expect("an unread texture slot is passed through");
    assert_eq!(
        got.buffers["h"],
        serde_json::json!({"slots": [{"elem": "u32", "size": [1, 1], "texels": [[1, 2, 3, 4]]}]})
    );
}

/// 32 threads, each writing its own sub-word elements of shared words: a u8
/// (slot 0 or 1 by thread parity, so the slot is divergent), an i16 and a
/// 6-byte `array<u16, 3>` (slot 2, byte-addressed), a `vec<f16, 3>` (slot 3,
/// one full and one half word), a `vec<u8, 4>` (slot 4, whole words) and a
/// `struct{u64, u16}` (slot 7: two whole words, a half word and padding that
/// must survive); each new value depends on the old one. Slot 5 is empty and
/// never touched.
const SUBWORD: &str = r#"
kernel @k(%h: bindless_array, %o: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %s = mod %t, u32 2 : u32
  %e = div %t, u32 2 : u32
  %x = bindless.buffer_read %h, %s, %e : u8
  %t8 = cast.static %t : u8
  %x3 = mul %x, u8 3 : u8
  %y = add %x3, %t8 : u8
  bindless.buffer_write %h, %s, %e, %y
  %w = bindless.buffer_read %h, u32 2, %t : i16
  %t16 = cast.static %t : i16
  %w2 = sub %t16, %w : i16
  bindless.buffer_write %h, u32 2, %t, %w2
  %a = bindless.buffer_read %h, u32 6, %t : array<u16, 3>
  %a0 = extract %a, u32 0 : u16
  %a2 = extract %a, u32 2 : u16
  %b = aggregate %a2, %a0, %a0 : array<u16, 3>
  bindless.buffer_write %h, u32 6, %t, %b
  %f = bindless.buffer_read %h, u32 3, %t : vec<f16, 3>
  %f2 = mul %f, %f : vec<f16, 3>
  bindless.buffer_write %h, u32 3, %t, %f2
  %q = bindless.buffer_read %h, u32 4, %t : vec<u8, 4>
  %q2 = shuffle %q, u32 3, u32 2, u32 1, u32 0 : vec<u8, 4>
  bindless.buffer_write %h, u32 4, %t, %q2
  %st = bindless.buffer_read %h, u32 7, %t : struct<align 8>{u64, u16}
  %st0 = extract %st, u32 0 : u64
  %st1 = extract %st, u32 1 : u16
  %st0b = add %st0, u64 1 : u64
  %st1b = mul %st1, u16 3 : u16
  %st2 = aggregate %st0b, %st1b : struct<align 8>{u64, u16}
  bindless.buffer_write %h, u32 7, %t, %st2
  %xo = cast.static %x : u32
  %wo = cast.static %w : u32
  %r = shl %wo, u32 8 : u32
  %r2 = bit_or %r, %xo : u32
  buffer.write %o, %t, %r2
  return
}
"#;

#[test]
fn adjacent_threads_writing_sub_word_bindless_elements_match_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(SUBWORD);
    let k = kernel_of(&m);
    let u8s = |base: u32| (0..16).map(|i| (base + 7 * i) % 256).collect::<Vec<_>>();
    let i16s: Vec<i32> = (0..32).map(|i| i * 1000 - 16000).collect();
    let a3: Vec<u32> = (0..96).map(|i| i * 677 % 65536).collect();
    let f16s: Vec<f64> = (0..128).map(|i| f64::from(i % 16) * 0.25 - 2.0).collect();
    let v4: Vec<u32> = (0..128).map(|i| i * 13 % 256).collect();
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [32, 1, 1], "args": {{
        "h": {{"slots": [{{"u8": {:?}}}, {{"u8": {:?}}}, {{"i16": {:?}}}, {{"f16": {:?}}}, {{"u8": {:?}}}, null,
                         {{"u16": {:?}}}, {{"bytes": {:?}}}]}},
        "o": {:?}}}}}"#,
        u8s(5),
        u8s(200),
        i16s,
        f16s,
        v4,
        a3,
        (0..512u32).map(|i| i * 37 % 256).collect::<Vec<_>>(),
        vec![0; 32]
    ))
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    // Thread 3: slot 1, element 1 = 207; new value 207 * 3 + 3 = 624 mod 256 = 112. Its i16 was -13000.
    assert_eq!(want.buffers["o"][3], serde_json::json!(((-13000i32 as u32) << 8) | 207));
    assert_eq!(want.buffers["h"]["slots"][1]["bytes"][1], serde_json::json!(112));
    assert_eq!(want.buffers["h"]["slots"][5], serde_json::Value::Null);
    // Element 1 of the struct slot: bytes 16..32; its u64 gained 1 (low byte 16 * 37 % 256 = 80 -> 81), bytes 26..32
    // are padding and keep their values.
    let st = &want.buffers["h"]["slots"][7]["bytes"];
    assert_eq!(st[16], serde_json::json!(81));
    assert_eq!(st[31], serde_json::json!(31 * 37 % 256));
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [32, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
        eprintln!("sub-word bindless writes: {} (-O{level}) agrees with the interpreter", dev.name);
    }
}

#[test]
fn an_alias_slot_names_an_earlier_buffer_slot_in_the_interpreter_and_the_runner() {
    let m = parse(SIZES);
    let k = kernel_of(&m);
    let with = |h: &str| {
        xir::interp::Inputs::from_json(&format!(
            r#"{{"dispatch": [3, 1, 1], "args": {{"h": {{"slots": {h}}}, "g": {{"slots": []}}, "o": [0, 0, 0]}}}}"#
        ))
        .expect("inputs")
    };
    let good = with(r#"[{"u32": [1, 2, 3]}, {"alias": 0}, {"u16": [7]}]"#);
    let want = xir::interp::run_kernel(&m, k, &good).expect("interpreter");
    assert_eq!(want.buffers["o"], serde_json::json!([306, 306, 1]), "the alias has its target's size");
    assert_eq!(want.buffers["h"]["slots"][1], want.buffers["h"]["slots"][0]);
    let bad = [
        r#"[{"alias": 1}, {"u32": [1]}, null]"#,
        r#"[null, {"alias": 0}, null]"#,
        r#"[{"u32": [1]}, {"alias": 0}, {"alias": 1}]"#,
    ];
    for h in bad {
        let e = xir::interp::run_kernel(&m, k, &with(h)).unwrap_err().to_string();
        assert!(e.contains("alias"), "{h}: {e}");
    }
    let Some(dev) = vulkan_device() else { return };
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &good, [3, 1, 1]).expect("runs");
    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
    for h in bad {
        let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &with(h), [3, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("alias"), "{h}: {e}");
    }
}
