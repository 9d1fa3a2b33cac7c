//! `buffer<bool>` and buffers of elements holding bools keep the host layout
//! (one byte per bool, as LuisaCompute hands them over): the ABI is word
//! storage of the host bytes, reads extract the byte from its word, and
//! writes are masked CAS loops unless the element covers its words. Exact
//! module tests, the shipped `spirv` pipeline (whose output dialect
//! `xir.spirv` must admit them), and adjacent threads writing adjacent bools
//! on Vulkan, from raw host bytes and against the interpreter.

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

/// A kernel writing element `t` of `buffer<elem>` with `value`, built by `body` (which may use `%t` and `%c = t < 3`).
fn write_kernel(elem: &str, body: &str) -> String {
    format!(
        "kernel @k(%b: buffer<{elem}>) block_size(8, 1, 1) {{\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n  \
         %c = lt %t, u32 3 : bool\n  %v = {body} : {elem}\n  buffer.write %b, %t, %v\n  return\n}}\n"
    )
}

#[test]
fn a_bool_buffer_is_one_host_byte_per_element_read_from_its_word_and_written_by_one_masked_cas_loop() {
    let out = compile_all_presets(FLIP);
    let abi = &out.abi;
    for p in &abi.properties[1..3] {
        assert_eq!(p.storage, BufferStorage::Words { elem_size: 1, elem_align: 1 }, "{p:?}");
    }
    let dis = out.disassembly_unoptimized();
    // Both buffers are uint32 word arrays; no bool or 8-bit type reaches storage.
    assert_eq!(count(&dis, "ArrayStride 4"), 2, "{dis}");
    assert!(!dis.contains("OpTypeRuntimeArray %bool"), "{dis}");
    assert!(!dis.contains("OpTypeInt 8"), "{dis}");
    // The read: word t >> 2, shifted right by (t & 3) * 8, masked to its byte, compared with 0.
    assert_eq!(count(&dis, "OpINotEqual"), 1, "{dis}");
    // The write: one word update (the byte never straddles), one CAS loop.
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 1, "{dis}");
    assert_eq!(count(&dis, "OpAtomicLoad"), 1, "{dis}");
    assert_eq!(count(&dis, "OpLoopMerge"), 1, "{dis}");
    // No plain store into the word buffer (only the CAS writes memory).
    assert_eq!(count(&dis, "OpStore"), 0, "{dis}");
    let m = load(&out.words_unoptimized);
    let consts = const_values(&m);
    let has_const = |v: u64| consts.values().any(|&c| c == v);
    assert!(has_const(255) && has_const(3) && has_const(2), "byte mask, byte-in-word and word shift: {dis}");
}

#[test]
fn elements_that_cover_their_words_store_whole_words_and_partial_ones_use_cas() {
    // vec<bool, 4>: four bytes, one whole word: a plain store, no loop.
    let dis = compile_all_presets(&write_kernel("vec<bool, 4>", "aggregate %c, bool true, bool false, %c"))
        .disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge")), (0, 0), "{dis}");
    assert_eq!(count(&dis, "OpStore"), 1, "{dis}");
    // vec<bool, 3>: host size 4 with a padding byte: the word is only partly covered.
    let dis =
        compile_all_presets(&write_kernel("vec<bool, 3>", "aggregate %c, bool true, %c")).disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge")), (1, 1), "{dis}");
    // struct { bool, u32 }: the bool's word is masked, the u32's word is covered; one loop for both.
    let src = write_kernel("struct<align 4>{bool, u32}", "aggregate %c, %t");
    let out = compile_all_presets(&src);
    assert_eq!(out.abi.properties[1].storage, BufferStorage::Words { elem_size: 8, elem_align: 4 });
    let dis = out.disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge")), (2, 1), "{dis}");
}

#[test]
fn bool_buffers_pass_the_shipped_spirv_pipeline_into_its_output_dialect() {
    for level in [0u8, 2] {
        let (m, out) = through_spirv(FLIP, level);
        let spec = xir_spec::spec();
        let diags = xir::dialect::check_module(&m, spec.dialect("xir.spirv").expect("built-in"));
        assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
        assert_eq!(out.abi.properties[2].storage, BufferStorage::Words { elem_size: 1, elem_align: 1 });
    }
}

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

/// The handoff checks every invariant of `xir.spirv` that the pipeline's
/// output check would: a zero-sized buffer element is `exact_typed_memory`'s.
#[test]
fn the_handoff_reports_exact_typed_memory_of_xir_spirv() {
    let m = parse(
        "kernel @k(%b: buffer<struct<align 4>{}>, %o: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  return\n}\n",
    );
    let diags = xir_spirv::handoff::check(&m, kernel_of(&m));
    assert!(diags.iter().any(|d| d.rule == "dialect:xir.spirv:exact_typed_memory"), "{}", xir::diag::render(&diags));
    // A bool buffer satisfies it.
    let m = parse(FLIP);
    let diags = xir_spirv::handoff::check(&m, kernel_of(&m));
    assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
}
