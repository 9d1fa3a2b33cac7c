//! Bindless buffers: which arguments get a metadata descriptor and when the
//! global buffer heap (set 2) exists; `NonUniform` on exactly the descriptor
//! index, the heap pointer and what is derived from it when the slot is
//! divergent (and nowhere for a uniform or constant slot); the honest
//! rejections; the artifact round trip of a bindless kernel; 8/16-bit typed
//! elements (word loads and extraction, whole-word stores or one masked CAS
//! loop). Every module is validated by SPIRV-Tools at every preset
//! (`compile_all_presets`). The device runs (heap kernels, adjacent threads
//! writing sub-word elements) are `vulkan/tests/bindless_vulkan.rs`.

mod common;

use std::collections::HashSet;

use common::*;
use rspirv::spirv::{Decoration, Op};
use xir_spirv::abi::{BufferStorage, Role, BINDLESS_METADATA_STRIDE, FIRST_HEAP_SET, LOCAL_SET};
use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
use xir_spirv::PropertyKind;

/// A kernel over bindless arrays `%a`, `%b`, `%c` and an output buffer; `%s` is a uniform value.
fn kernel(body: &str) -> String {
    format!(
        "kernel @k(%a: bindless_array, %b: bindless_array, %c: bindless_array, %o: buffer<u32>, %s: u32) \
         block_size(4, 1, 1) {{\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n{body}  return\n}}\n"
    )
}

const READ_A: &str = "  %x = bindless.buffer_read %a, %s, %t : u32\n  buffer.write %o, %t, %x\n";
const SIZE_B: &str = "  %n = bindless.buffer_size %b, u32 0, u32 4 : u32\n  buffer.write %o, %t, %n\n";

fn descriptors(out: &xir_spirv::SpirvOutput) -> Vec<(PropertyKind, Role, Option<u32>, u32, u32)> {
    out.abi.descriptors().map(|p| (p.kind, p.role, p.arg_index, p.set, p.binding)).collect()
}

#[test]
fn reads_need_heap_and_metadata_a_size_query_only_metadata_an_unused_array_nothing() {
    let out = compile_all_presets(&kernel(&format!("{READ_A}{SIZE_B}")));
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(0), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(1), LOCAL_SET, 1),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 2),
            (PropertyKind::BufferHeap, Role::Heap, None, FIRST_HEAP_SET, 0),
        ]
    );
    assert!(out.abi.property_for_arg(2).is_none(), "an unused bindless array has no property");
    let meta = out.abi.property_for_arg(0).unwrap();
    assert_eq!(meta.storage, BufferStorage::Typed { stride: BINDLESS_METADATA_STRIDE });
    let dis = out.disassembly_unoptimized();
    assert!(dis.contains("OpCapability RuntimeDescriptorArray"), "{dis}");
    assert_eq!(count(&dis, "DescriptorSet 2"), 1, "{dis}");
    assert_eq!(count(&dis, "OpTypeRuntimeArray"), 4, "metadata, heap words, heap, output: {dis}");

    // A size-only kernel: metadata for %b and no heap, no descriptor-indexing capability.
    let out = compile_all_presets(&kernel(SIZE_B));
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(1), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 1),
        ]
    );
    let dis = out.disassembly_unoptimized();
    assert!(!dis.contains("RuntimeDescriptorArray") && !dis.contains("DescriptorSet 2"), "{dis}");
    assert_eq!(out.abi.set_count(), 1);
}

/// The ids decorated `NonUniform` and the ids the rule asks for: the heap
/// index, the heap element pointer, and the access chains and loads derived
/// from that pointer.
fn nonuniform_sets(words: &[u32]) -> (HashSet<u32>, HashSet<u32>) {
    let m = load(words);
    let decorated: HashSet<u32> = m
        .annotations
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Decorate
                && matches!(i.operands.get(1), Some(rspirv::dr::Operand::Decoration(Decoration::NonUniform)))
        })
        .map(|i| i.operands[0].unwrap_id_ref())
        .collect();
    let heap: HashSet<u32> = m
        .annotations
        .iter()
        .filter(|i| {
            i.operands.get(1) == Some(&rspirv::dr::Operand::Decoration(Decoration::DescriptorSet))
                && i.operands.get(2) == Some(&rspirv::dr::Operand::LiteralBit32(FIRST_HEAP_SET))
        })
        .map(|i| i.operands[0].unwrap_id_ref())
        .collect();
    let mut want = HashSet::new();
    let mut ptrs = HashSet::new();
    for i in insts(&m) {
        let first =
            i.operands.first().and_then(|o| if let rspirv::dr::Operand::IdRef(w) = o { Some(*w) } else { None });
        let (Some(r), Some(base)) = (i.result_id, first) else { continue };
        match i.class.opcode {
            Op::AccessChain if heap.contains(&base) => {
                want.insert(r);
                want.insert(i.operands[1].unwrap_id_ref());
                ptrs.insert(r);
            }
            Op::AccessChain if ptrs.contains(&base) => {
                want.insert(r);
                ptrs.insert(r);
            }
            Op::Load if ptrs.contains(&base) => {
                want.insert(r);
            }
            _ => {}
        }
    }
    (decorated, want)
}

fn constant_ids(words: &[u32]) -> HashSet<u32> {
    let m = load(words);
    m.types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::Constant | Op::ConstantComposite | Op::ConstantNull))
        .filter_map(|i| i.result_id)
        .collect()
}

#[test]
fn a_divergent_slot_decorates_exactly_the_index_pointer_and_loads() {
    // u32 read: index, element pointer, one word pointer, one word load.
    let div_read = "  %x = bindless.buffer_read %a, %t, u32 1 : u32\n  buffer.write %o, %t, %x\n";
    // u64 read: two word pointers, two loads.
    let div_read64 =
        "  %y = bindless.buffer_read %a, %t, u32 1 : u64\n  %z = cast.static %y : u32\n  buffer.write %o, %t, %z\n";
    // A write: index, element pointer, one word pointer (a store has no result).
    let div_write = "  bindless.buffer_write %a, %t, u32 0, %t\n";
    for (body, n) in [(div_read, 4), (div_read64, 6), (div_write, 3)] {
        let out = compile_all_presets(&kernel(body));
        let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
        assert_eq!(decorated, want, "{body}\n{}", out.disassembly_unoptimized());
        assert_eq!(decorated.len(), n, "{body}\n{}", out.disassembly_unoptimized());
        assert!(decorated.is_disjoint(&constant_ids(&out.words_unoptimized)), "a constant was decorated");
        let dis = out.disassembly_unoptimized();
        assert!(dis.contains("OpCapability ShaderNonUniform"), "{dis}");
        assert!(dis.contains("OpCapability StorageBufferArrayNonUniformIndexing"), "{dis}");
    }
}

#[test]
fn a_uniform_or_constant_slot_has_no_nonuniform_decoration() {
    let uniform = READ_A;
    let constant = "  %x = bindless.buffer_read %a, u32 0, %t : u32\n  buffer.write %o, %t, %x\n";
    // Derived from a kernel argument only: uniform even though the element index is divergent.
    let derived = "  %q = add %s, u32 3 : u32\n  %x = bindless.buffer_read %a, %q, %t : f32\n  %w = cast.bitwise %x : u32\n  buffer.write %o, %t, %w\n";
    for body in [uniform, constant, derived] {
        let out = compile_all_presets(&kernel(body));
        let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
        assert!(decorated.is_empty(), "{body}: {decorated:?}");
        assert_eq!(want.len(), 4, "the access exists ({body})");
        let dis = out.disassembly_unoptimized();
        assert!(!dis.contains("NonUniform"), "{dis}");
    }
    // One divergent and one uniform access in the same kernel: only the divergent one is decorated.
    let both = format!("{uniform}  %x2 = bindless.buffer_read %a, %t, u32 1 : u32\n  buffer.write %o, %s, %x2\n");
    let out = compile_all_presets(&kernel(&both));
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    assert_eq!(decorated.len(), 4);
    assert_eq!(want.len(), 8);
    assert!(decorated.is_subset(&want));
}

#[test]
fn byte_offsets_and_sizes_lower_to_words_and_a_division() {
    let body = "  %x = bindless.byte_buffer_read %a, %s, u32 8 : f32\n  %w = cast.bitwise %x : u32\n  buffer.write %o, %t, %w\n  \
                %n = bindless.buffer_size %a, %s, %s : u32\n  buffer.write %o, %s, %n\n";
    let out = compile_all_presets(&kernel(body));
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpUDiv"), 1, "{dis}");
    assert_eq!(count(&dis, "OpShiftRightLogical"), 1, "{dis}");
    // One metadata descriptor serves both the read and the size query of %a.
    assert_eq!(out.abi.descriptors().filter(|p| p.role == Role::BindlessMetadata).count(), 1);
}

#[test]
fn unsupported_bindless_operations_are_refused_with_their_reason() {
    let tex = "  %c2 = aggregate u32 0, u32 0 : vec<u32, 2>\n  %v = bindless.texture2d_read %a, u32 0, %c2 : vec<u32, 4>\n  %e = extract %v, u32 0 : u32\n  buffer.write %o, %t, %e\n";
    let e = compile_err(&kernel(tex), &opts(0, false));
    assert!(e.contains("texture heaps"), "{e}");
    let addr =
        "  %p = bindless.buffer_address %a, u32 0 : u64\n  %q = cast.static %p : u32\n  buffer.write %o, %t, %q\n";
    let e = compile_err(&kernel(addr), &opts(0, false));
    assert!(e.contains("device addresses"), "{e}");
    let b =
        "  %v = bindless.buffer_read %a, u32 0, u32 0 : bool\n  %w = cast.static %v : u32\n  buffer.write %o, %t, %w\n";
    let e = compile_err(&kernel(b), &opts(0, false));
    assert!(e.contains("bool") && e.contains(":4:3:"), "located: {e}");
    let bool_write = "  %v = ne %t, u32 0 : bool\n  bindless.buffer_write %a, %s, %t, %v\n";
    let e = compile_err(&kernel(bool_write), &opts(0, false));
    assert!(e.contains("bool") && e.contains(":5:3:"), "located: {e}");
    let in_struct = "  %v = bindless.buffer_read %a, u32 0, u32 0 : struct<align 4>{u32, bool}\n  %w = extract %v, u32 0 : u32\n  buffer.write %o, %t, %w\n";
    let e = compile_err(&kernel(in_struct), &opts(0, false));
    assert!(e.contains("bool"), "{e}");
    // 8/16-bit elements are lowered now (see the sub-word tests below), not refused.
    let narrow =
        "  %v = bindless.buffer_read %a, u32 0, u32 0 : u16\n  %w = cast.static %v : u32\n  buffer.write %o, %t, %w\n";
    compile_all_presets(&kernel(narrow));
}

#[test]
fn a_bindless_kernel_artifact_round_trips_and_checks_the_metadata_argument() {
    let m = parse(&kernel(&format!("{READ_A}{SIZE_B}")));
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    // Metadata serving a buffer argument, or with another storage, is refused.
    let i = art.abi.properties.iter().position(|p| p.role == Role::BindlessMetadata).unwrap();
    let mut w = art.clone();
    w.abi.properties[i].arg_index = Some(3);
    assert!(w.encode().is_err());
    let mut w = art.clone();
    w.abi.properties[i].storage = BufferStorage::Typed { stride: 4 };
    assert!(w.encode().is_err());
    // The heap outside set 2 is not canonical.
    let mut w = art.clone();
    let h = w.abi.properties.iter().position(|p| p.kind == PropertyKind::BufferHeap).unwrap();
    w.abi.properties[h].set = 3;
    assert!(w.encode().is_err());
}

#[test]
fn descriptor_indexing_features_follow_the_heap_and_the_divergence() {
    use xir_spirv::Feature as F;
    let bits = |body: &str| {
        let out = compile_with(&kernel(body), &opts(2, false));
        [F::RuntimeDescriptorArray, F::StorageBufferArrayNonUniformIndexing, F::BufferHeapBindingFlags]
            .map(|f| out.features.contains(f))
    };
    assert_eq!(bits(READ_A), [true, false, true], "uniform read");
    assert_eq!(
        bits("  %x = bindless.buffer_read %a, %t, u32 1 : u32\n  buffer.write %o, %t, %x\n"),
        [true, true, true]
    );
    assert_eq!(bits(SIZE_B), [false, false, false], "size only: no heap");
    // A device without the binding flags refuses the heap kernel by name.
    let out = compile_with(&kernel(READ_A), &opts(0, false));
    let mut dev = xir_spirv::FeatureSet::all();
    dev.remove(F::BufferHeapBindingFlags);
    let e = xir_spirv::features::check_available(&out.features, &dev).unwrap_err();
    assert_eq!(e.missing, vec![F::BufferHeapBindingFlags]);
    assert!(e.to_string().contains("descriptorBindingPartiallyBound"), "{e}");
}

/// A callable taking a bindless array: the SPIR-V callable ABI inlines it (`callable_specialization`).
const VIA_CALLABLE: &str = r#"
callable @get(%h: bindless_array, %s: u32, %i: u32) -> u32 {
^entry:
  %x = bindless.buffer_read %h, %s, %i : u32
  return %x
}

kernel @k(%a: bindless_array, %o: buffer<u32>, %u: u32) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = call @get, %a, %t, u32 0 : u32
  %y = call @get, %a, %u, u32 1 : u32
  %z = add %x, %y : u32
  buffer.write %o, %t, %z
  return
}
"#;

#[test]
fn bindless_arrays_reach_callables_only_through_inlining() {
    // Not specialized: refused with a located reason, never guessed at.
    let e = compile_err(VIA_CALLABLE, &opts(0, false));
    assert!(e.contains("callable_specialization") && e.contains(":11:3:"), "{e}");
    // Specialized: both accesses are the kernel's; only the divergent slot is NonUniform.
    let mut m = parse(VIA_CALLABLE);
    assert_eq!(xir_spirv::specialize::specialize_module(&mut m), Ok(2));
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    xir_spirv::validate::validate(&out.words_unoptimized).expect("validates");
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    assert_eq!(want.len(), 8, "two heap reads");
    assert_eq!(decorated.len(), 4, "only the divergent one");
    assert!(decorated.is_subset(&want));
    assert_eq!(out.abi.descriptors().filter(|p| p.role == Role::BindlessMetadata).count(), 1);
}

#[test]
fn a_bindless_byte_read_is_at_alignment_one_and_nonuniform_through_its_funnel() {
    // A u16 at an odd, divergent byte offset of a divergent slot: two word loads and a funnel shift.
    let body = "  %off = add %t, u32 1 : u32\n  %h = bindless.byte_buffer_read %a, %t, %off : u16\n  \
                %w = cast.static %h : u32\n  buffer.write %o, %t, %w\n";
    let out = compile_all_presets(&kernel(body));
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpBitwiseOr"), 1, "{dis}");
    assert!(dis.contains("OpUConvert"), "{dis}");
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    // Index, element pointer, two word pointers, two word loads.
    assert_eq!(decorated, want);
    assert_eq!(decorated.len(), 6, "{dis}");
}

/// Lines of `dis` with opcode `op` (`= OpX` or a bare `OpX`).
fn ops(dis: &str, op: &str) -> usize {
    dis.lines().filter(|l| l.split_whitespace().any(|w| w == op)).count()
}

#[test]
fn sub_word_reads_load_each_word_once_and_extract() {
    // A u8 at byte `%t`: word `%t >> 2`, shift `(%t & 3) * 8`, one load, no atomics.
    let u8_read =
        "  %x = bindless.buffer_read %a, %s, %t : u8\n  %w = cast.static %x : u32\n  buffer.write %o, %t, %w\n";
    let out = compile_all_presets(&kernel(u8_read));
    let dis = out.disassembly_unoptimized();
    assert_eq!(ops(&dis, "OpShiftRightLogical"), 2, "word index and extraction: {dis}");
    assert_eq!(ops(&dis, "OpBitwiseAnd"), 1, "{dis}");
    assert_eq!(ops(&dis, "OpUConvert"), 2, "to u8, back to u32: {dis}");
    assert!(!dis.contains("OpAtomic") && !dis.contains("OpLoopMerge"), "{dis}");
    // vec<u8, 4> is one word (size 4): loaded once, lanes at constant shifts 0, 8, 16, 24; no address arithmetic.
    let v4 = "  %x = bindless.buffer_read %a, %s, %t : vec<u8, 4>\n  %e = extract %x, u32 3 : u8\n  %w = cast.static %e : u32\n  buffer.write %o, %t, %w\n";
    let out = compile_all_presets(&kernel(v4));
    let dis = out.disassembly_unoptimized();
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    assert!(decorated.is_empty());
    assert_eq!(want.len(), 4, "index, element, one word pointer, one load: {dis}");
    assert_eq!(ops(&dis, "OpShiftRightLogical"), 4, "{dis}");
    assert_eq!(ops(&dis, "OpIMul") + ops(&dis, "OpBitwiseAnd"), 0, "{dis}");
    // i8 and f16 go through their unsigned bits.
    for (ty, conv) in [("i8", "OpBitcast"), ("f16", "OpBitcast")] {
        let body = format!(
            "  %x = bindless.buffer_read %a, %s, %t : {ty}\n  %y = cast.static %x : u32\n  buffer.write %o, %t, %y\n"
        );
        let dis = compile_all_presets(&kernel(&body)).disassembly_unoptimized();
        assert!(ops(&dis, "OpUConvert") >= 1 && ops(&dis, conv) >= 1, "{ty}: {dis}");
    }
    // A 6-byte element (array<u16, 3>: alignment 2) is addressed by bytes: `%t * 6`.
    let a3 = "  %x = bindless.buffer_read %a, %s, %t : array<u16, 3>\n  %e = extract %x, u32 2 : u16\n  %w = cast.static %e : u32\n  buffer.write %o, %t, %w\n";
    let out = compile_all_presets(&kernel(a3));
    let dis = out.disassembly_unoptimized();
    assert_eq!(ops(&dis, "OpIMul"), 1, "{dis}");
    let (_, want) = nonuniform_sets(&out.words_unoptimized);
    assert_eq!(want.len(), 2 + 3 * 2, "index, element, and per lane a word pointer and a load: {dis}");
}

#[test]
fn sub_word_writes_are_whole_word_stores_or_one_masked_cas_loop() {
    // Every touched word fully covered: one plain store of the four lanes ORed together.
    let v4 = "  %cv = cast.static %t : u8\n  %v = aggregate %cv, %cv, %cv, %cv : vec<u8, 4>\n  bindless.buffer_write %a, %s, %t, %v\n";
    let dis = compile_all_presets(&kernel(v4)).disassembly_unoptimized();
    assert!(!dis.contains("OpAtomic") && !dis.contains("OpLoopMerge"), "{dis}");
    assert_eq!(ops(&dis, "OpBitwiseOr"), 3, "{dis}");
    let f16x2 = "  %cv = cast.static %t : f16\n  %v = aggregate %cv, %cv : vec<f16, 2>\n  bindless.buffer_write %a, %s, %t, %v\n";
    let dis = compile_all_presets(&kernel(f16x2)).disassembly_unoptimized();
    assert!(!dis.contains("OpAtomic"), "{dis}");
    // A u16 element shares its word with a neighbour: one CAS on `!(0xffff << sh)`.
    let u16w = "  %cv = cast.static %t : u16\n  bindless.buffer_write %a, %s, %t, %cv\n";
    let dis = compile_all_presets(&kernel(u16w)).disassembly_unoptimized();
    assert_eq!(ops(&dis, "OpAtomicCompareExchange"), 1, "{dis}");
    assert_eq!(ops(&dis, "OpLoopMerge"), 1, "{dis}");
    assert_eq!(ops(&dis, "OpNot"), 1, "a dynamic mask: {dis}");
    // vec<u16, 3> (8 bytes): word 0 fully written (keep mask 0), word 1 half: two CAS in one loop, constant masks.
    let v3 = "  %cv = cast.static %t : u16\n  %v = aggregate %cv, %cv, %cv : vec<u16, 3>\n  bindless.buffer_write %a, %s, %t, %v\n";
    let out = compile_all_presets(&kernel(v3));
    let dis = out.disassembly_unoptimized();
    assert_eq!(ops(&dis, "OpAtomicCompareExchange"), 2, "{dis}");
    assert_eq!(ops(&dis, "OpLoopMerge"), 1, "{dis}");
    assert_eq!(ops(&dis, "OpNot"), 0, "{dis}");
    let consts = constant_values(&out.words_unoptimized);
    assert!(consts.contains(&0) && consts.contains(&0xffff_0000), "keep masks 0 and 0xffff0000: {consts:?}");
    // 32-bit elements keep plain word stores (the gcd(size, 4) = 4 alignment proof).
    let dis = compile_all_presets(&kernel("  bindless.buffer_write %a, %s, %t, %t\n")).disassembly_unoptimized();
    assert!(!dis.contains("OpAtomic"), "{dis}");
}

#[test]
fn a_divergent_sub_word_access_decorates_its_word_pointers_and_loads() {
    // A divergent u16 read: index, element pointer, one word pointer, one load.
    let read = "  %x = bindless.buffer_read %a, %t, %t : u16\n  %w = cast.static %x : u32\n  buffer.write %o, %t, %w\n";
    let out = compile_all_presets(&kernel(read));
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    assert_eq!(decorated, want);
    assert_eq!(decorated.len(), 4, "{}", out.disassembly_unoptimized());
    // A divergent u8 write:
    let body = "  %cv = cast.static %t : u8\n  bindless.buffer_write %a, %t, %t, %cv\n";
    let out = compile_all_presets(&kernel(body));
    let (decorated, want) = nonuniform_sets(&out.words_unoptimized);
    // Index, element pointer, the word pointer (the atomics use it; they are not loads).
    assert_eq!(decorated, want);
    assert_eq!(decorated.len(), 3, "{}", out.disassembly_unoptimized());
    assert!(decorated.is_disjoint(&constant_ids(&out.words_unoptimized)));
}

/// Scalar 32-bit `OpConstant` values of a module.
fn constant_values(words: &[u32]) -> Vec<u32> {
    load(words)
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Constant)
        .filter_map(|i| match i.operands.first() {
            Some(rspirv::dr::Operand::LiteralBit32(v)) => Some(*v),
            _ => None,
        })
        .collect()
}

/// Every spec opcode that takes a `bindless` operand, and what this backend
/// does with it. The buffer operations are lowered; device addresses stay
/// refused with their reason. XIR has no typed-slot or explicit-uniform-index
/// bindless operation (the reference keeps those as honest fallback reasons:
/// XIR does not carry the typed slot layout or the caller's uniform-index
/// promise), so one appearing in the spec fails this test until it is given
/// a refusal with its reason here and in `classify.ron`.
#[test]
fn every_bindless_opcode_of_the_spec_is_lowered_or_refused_with_its_reason() {
    use xir_spirv::classify::{opcode, Support};
    let bindless: Vec<_> = xir_spec::spec()
        .ops()
        .iter()
        .filter(|o| o.spec.operands.iter().any(|x| x.class == "bindless"))
        .map(|o| o.opcode)
        .collect();
    for op in &bindless {
        let name = op.name();
        let s = opcode(*op);
        match name {
            "bindless.buffer_read" | "bindless.byte_buffer_read" | "bindless.buffer_write" | "bindless.buffer_size" => {
                assert_eq!(s, Support::Supported, "{name}");
                assert!(xir_spirv::plan::bindless::is_bindless_buffer_op(*op), "{name}");
            }
            "bindless.buffer_address" => {
                assert!(matches!(&s, Support::Unsupported(r) if r.contains("device addresses")), "{name}: {s:?}")
            }
            // Texture slots and sampling (the texture heaps): lowered or refused, never unclassified.
            t if t.starts_with("bindless.texture") || t.starts_with("texture.sample") => {
                assert!(!matches!(&s, Support::Unsupported(r) if r.contains("not classified")), "{name}: {s:?}")
            }
            other => panic!("`{other}` is a bindless operation this backend has not decided on: {s:?}"),
        }
    }
    assert_eq!(
        bindless
            .iter()
            .filter(|o| o.name().starts_with("bindless.buffer") || o.name().starts_with("bindless.byte"))
            .count(),
        5
    );
}

#[test]
fn a_sub_word_bindless_write_in_a_loop_header_is_refused_with_its_reason_and_a_body_write_compiles() {
    let src = |where_: &str| {
        let store = "  %b = cast.static %t : u8\n  bindless.buffer_write %h, u32 0, %t, %b\n";
        let (prep, body) = if where_ == "prep" { (store, "") } else { ("", store) };
        format!(
            "kernel @k(%h: bindless_array) block_size(4, 1, 1) {{\n^entry:\n  \
             %t = extract $dispatch_id, u32 0 : u32\n  %i = alloca : u32\n  store %i, u32 0\n  \
             loop prepare ^prep, body ^body, update ^step, merge ^exit\n^prep:\n{prep}  %iv = load %i : u32\n  \
             %more = lt %iv, u32 2 : bool\n  cond_br %more, true ^body, false ^exit\n^body:\n{body}  \
             br target ^step\n^step:\n  %iv1 = load %i : u32\n  %n = add %iv1, u32 1 : u32\n  store %i, %n\n  \
             br target ^prep\n^exit:\n  return\n}}\n"
        )
    };
    let e = compile_err(&src("prep"), &opts(0, false));
    assert!(e.contains("sub-word bindless write") && e.contains("prepare block") && e.contains(":9:3:"), "{e}");
    let dis = compile_all_presets(&src("body")).disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 1, "{dis}");
}
