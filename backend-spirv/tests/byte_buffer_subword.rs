//! Byte buffers at alignment 1 (`plan/byte_access.rs`, `emit/bytes.rs`):
//! stores whose offset is not proven word-aligned, or whose leaves are
//! narrower than a word, are masked compare-and-swap loops; proven-aligned
//! word stores stay plain stores; reads at any offset are funnel shifts of
//! at most two words. Exact module tests (the device run:
//! `vulkan/tests/byte_buffer_subword_vulkan.rs`).

mod common;

use common::*;

fn kernel(body: &str) -> String {
    format!(
        "kernel @k(%raw: byte_buffer, %o: buffer<u32>) block_size(4, 1, 1) {{\n^entry:\n  \
         %t = extract $dispatch_id, u32 0 : u32\n{body}  return\n}}\n"
    )
}

/// (CAS instructions, loops) of the unoptimized module.
fn cas_and_loops(body: &str) -> (usize, usize) {
    let out = compile_all_presets(&kernel(body));
    let dis = out.disassembly_unoptimized();
    (count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge"))
}

#[test]
fn only_stores_without_a_word_alignment_proof_become_masked_cas_loops() {
    // Proven aligned 32-bit stores: plain stores, no loop.
    assert_eq!(cas_and_loops("  %a = mul %t, u32 4 : u32\n  byte_buffer.write %raw, %a, %t\n"), (0, 0));
    assert_eq!(cas_and_loops("  %a = shl %t, u32 3 : u32\n  byte_buffer.write %raw, %a, f64 1.5\n"), (0, 0));
    // A byte store: one piece, low and high word updates (the high one masked to nothing unless it straddles).
    let b = "  %b = cast.static %t : u8\n  byte_buffer.write %raw, %t, %b\n";
    assert_eq!(cas_and_loops(b), (2, 1));
    // An unproven u32 store: two word updates in one loop.
    assert_eq!(cas_and_loops("  %a = mul %t, u32 2 : u32\n  byte_buffer.write %raw, %a, %t\n"), (2, 1));
    // A u64 at an odd offset: two pieces, four updates, still one loop.
    let w = "  %a = add %t, u32 1 : u32\n  %x = cast.static %t : u64\n  byte_buffer.write %raw, %a, %x\n";
    assert_eq!(cas_and_loops(w), (4, 1));
    // A struct of a u8 and a u16 at a constant aligned offset still has sub-word leaves.
    let s = "  %s = aggregate u8 1, u16 2 : struct<align 2>{u8, u16}\n  byte_buffer.write %raw, u32 4, %s\n";
    assert_eq!(cas_and_loops(s), (4, 1));
}

#[test]
fn unaligned_reads_are_funnel_shifts_without_atomics() {
    let body = "  %a = add %t, u32 1 : u32\n  %x = byte_buffer.read %raw, %a : u32\n  buffer.write %o, %t, %x\n";
    let out = compile_all_presets(&kernel(body));
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomic"), 0, "{dis}");
    assert_eq!(count(&dis, "OpBitwiseOr"), 1, "{dis}");
    // Reads of a proven word-aligned u32 keep the single load.
    let aligned = "  %a = mul %t, u32 4 : u32\n  %x = byte_buffer.read %raw, %a : u32\n  buffer.write %o, %t, %x\n";
    let dis = compile_all_presets(&kernel(aligned)).disassembly_unoptimized();
    assert_eq!(count(&dis, "OpBitwiseOr"), 0, "{dis}");
}

#[test]
fn a_masked_store_in_a_loop_header_is_refused_with_its_reason_and_a_body_store_compiles() {
    let src = |where_: &str| {
        let store = "  %b = cast.static %t : u8\n  byte_buffer.write %raw, %t, %b\n";
        let (prep, body) = if where_ == "prep" { (store, "") } else { ("", store) };
        format!(
            "kernel @k(%raw: byte_buffer, %o: buffer<u32>) block_size(4, 1, 1) {{\n^entry:\n  \
             %t = extract $dispatch_id, u32 0 : u32\n  %i = alloca : u32\n  store %i, u32 0\n  \
             loop prepare ^prep, body ^body, update ^step, merge ^exit\n^prep:\n{prep}  %iv = load %i : u32\n  \
             %more = lt %iv, u32 2 : bool\n  cond_br %more, true ^body, false ^exit\n^body:\n{body}  \
             br target ^step\n^step:\n  %iv1 = load %i : u32\n  %n = add %iv1, u32 1 : u32\n  store %i, %n\n  \
             br target ^prep\n^exit:\n  return\n}}\n"
        )
    };
    let e = compile_err(&src("prep"), &opts(0, false));
    assert!(e.contains("masked byte-buffer store") && e.contains("prepare block"), "{e}");
    let dis = compile_all_presets(&src("body")).disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 2, "{dis}");
}
