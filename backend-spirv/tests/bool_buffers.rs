//! `buffer<bool>` and buffers of elements holding bools keep the host layout
//! (one byte per bool, as LuisaCompute hands them over): the ABI is word
//! storage of the host bytes, reads extract the byte from its word, and
//! writes are masked CAS loops unless the element covers its words. Exact
//! module tests and the shipped `spirv` pipeline (whose output dialect
//! `xir.spirv` must admit them); adjacent threads writing adjacent bools on
//! Vulkan are `vulkan/tests/bool_buffers_vulkan.rs`.

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
    // Both buffers are uint32 word arrays (one shared Block type); no bool
    // or 8-bit type reaches storage.
    assert_eq!(count(&dis, "ArrayStride 4"), 1, "{dis}");
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

/// The handoff checks every invariant of `xir.spirv` that the pipeline's
/// output check would: a zero-sized buffer element is `exact_typed_memory`'s.
#[test]
fn the_handoff_reports_exact_typed_memory_of_xir_spirv() {
    let m = parse(
        "kernel @k(%b: buffer<struct<align 4>{}>, %o: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  return\n}\n",
    );
    let diags = xir_spirv::handoff::check(&m, kernel_of(&m)).expect_err("refused");
    assert!(diags.iter().any(|d| d.rule == "dialect:xir.spirv:exact_typed_memory"), "{}", xir::diag::render(&diags));
    // A bool buffer satisfies it.
    let m = parse(FLIP);
    if let Err(diags) = xir_spirv::handoff::check(&m, kernel_of(&m)) {
        panic!("{}", xir::diag::render(&diags));
    }
}
