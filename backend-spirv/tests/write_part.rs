//! `buffer.write_part` on SPIR-V: in a typed buffer, one `OpAccessChain`
//! past the element (buffer, 0, index, path...) and one `OpStore` of the
//! part, with no load of the element (naga's lowering: nothing outside the
//! part is written, so other invocations' writes survive); in word storage,
//! exactly the part's words, a word shared with other bytes by the masked
//! CAS loop; a dynamic path into word storage is refused at the handoff.
//! Every module validates (`compile_all_presets`). Runs against the
//! interpreter on lavapipe are the corpus kernel `partial_write`.

mod common;

use common::*;
use xir_spirv::BufferStorage;

fn kernel(elem: &str, body: &str) -> String {
    format!(
        "kernel @k(%b: buffer<{elem}>) block_size(8, 1, 1) {{\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n  \
         {body}\n  return\n}}\n"
    )
}

const PARTICLE: &str = "struct<align 16>{vec<f32, 3>, f32, vec<f32, 3>, u32}";

/// An access chain into a storage buffer: its base variable and its index
/// operands (constants as `Some(value)`, other ids as `None`).
type BufferChain = (u32, Vec<Option<u64>>);

/// Of the module's stores into storage buffers, the access chain each stores
/// through, and how many loads read through such a chain.
fn buffer_stores(words: &[u32]) -> (Vec<BufferChain>, usize) {
    use rspirv::spirv::{Op, StorageClass};
    let m = load(words);
    let consts = const_values(&m);
    let buffers: Vec<u32> = m
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable
                && matches!(i.operands[0], rspirv::dr::Operand::StorageClass(StorageClass::StorageBuffer))
        })
        .map(|i| i.result_id.unwrap())
        .collect();
    let all = insts(&m);
    let chain = |id: u32| {
        all.iter()
            .find(|i| i.result_id == Some(id) && i.class.opcode == Op::AccessChain)
            .filter(|i| buffers.contains(&i.operands[0].unwrap_id_ref()))
            .map(|i| {
                let steps = i.operands[1..].iter().map(|o| consts.get(&o.unwrap_id_ref()).copied()).collect();
                (i.operands[0].unwrap_id_ref(), steps)
            })
    };
    let stores =
        all.iter().filter(|i| i.class.opcode == Op::Store).filter_map(|i| chain(i.operands[0].unwrap_id_ref()));
    let loads = all.iter().filter(|i| i.class.opcode == Op::Load && chain(i.operands[0].unwrap_id_ref()).is_some());
    let stores: Vec<_> = stores.collect();
    (stores, loads.count())
}

#[test]
fn a_typed_part_is_an_access_chain_into_the_element_and_one_store() {
    // A dynamic lane of a vector member: (0, element t, member 2, lane t & 1), and no load of the element.
    let src = kernel(PARTICLE, "%l = bit_and %t, u32 1 : u32\n  buffer.write_part %b, %t, f32 2.0, u32 2, %l");
    let out = compile_all_presets(&src);
    let (stores, loads) = buffer_stores(&out.words_unoptimized);
    assert_eq!(stores.len(), 1, "{}", out.disassembly_unoptimized());
    assert_eq!(stores[0].1, [Some(0), None, Some(2), None], "{}", out.disassembly_unoptimized());
    assert_eq!(loads, 0, "{}", out.disassembly_unoptimized());
    // A whole vector member: (0, t, member 0), the vector stored.
    let src = kernel(
        PARTICLE,
        "%f = cast.static %t : f32\n  %v = aggregate %f, %f, %f : vec<f32, 3>\n  buffer.write_part %b, %t, %v, u32 0",
    );
    let (stores, loads) = buffer_stores(&compile_all_presets(&src).words_unoptimized);
    assert_eq!((stores.len(), loads), (1, 0));
    assert_eq!(stores[0].1, [Some(0), None, Some(0)]);
    // An array member: stored through its laid-out type (`OpCopyLogical`).
    let src = kernel(
        "struct<align 4>{u32, array<u32, 3>}",
        "%a = aggregate %t, %t, %t : array<u32, 3>\n  buffer.write_part %b, %t, %a, u32 1",
    );
    let out = compile_all_presets(&src);
    let (stores, loads) = buffer_stores(&out.words_unoptimized);
    assert_eq!((stores.len(), loads), (1, 0));
    assert_eq!(stores[0].1, [Some(0), None, Some(1)]);
    assert_eq!(count(&out.disassembly_unoptimized(), "OpCopyLogical"), 1);
}

#[test]
fn a_word_storage_part_writes_only_its_words() {
    // struct { bool, u32 }: the u32 member covers its word: one plain store, no loop.
    let elem = "struct<align 4>{bool, u32}";
    let out = compile_all_presets(&kernel(elem, "buffer.write_part %b, %t, %t, u32 1"));
    assert_eq!(out.abi.properties[1].storage, BufferStorage::Words { elem_size: 8, elem_align: 4 });
    let dis = out.disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge")), (0, 0), "{dis}");
    assert_eq!(count(&dis, "OpStore"), 1, "{dis}");
    // Its bool shares a word with padding: one masked CAS loop, no plain store.
    let dis = compile_all_presets(&kernel(elem, "%c = lt %t, u32 3 : bool\n  buffer.write_part %b, %t, %c, u32 0"))
        .disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpLoopMerge")), (1, 1), "{dis}");
    assert_eq!(count(&dis, "OpStore"), 0, "{dis}");
    // A 64-bit lane of a vec<f64, 3> (word storage: its host alignment is not Vulkan's): two whole words.
    let dis = compile_all_presets(&kernel("vec<f64, 3>", "buffer.write_part %b, %t, f64 1.5, u32 1"))
        .disassembly_unoptimized();
    assert_eq!((count(&dis, "OpAtomicCompareExchange"), count(&dis, "OpStore")), (0, 2), "{dis}");
}

#[test]
fn a_dynamic_path_into_word_storage_is_refused_at_the_handoff() {
    let e = compile_err(
        &kernel("vec<bool, 4>", "%l = bit_and %t, u32 3 : u32\n  buffer.write_part %b, %t, bool true, %l"),
        &opts(0, false),
    );
    assert!(
        e.contains(
            "[spirv-handoff:layout] a write to part of a word-storage element (`vec<bool, 4>`) needs a constant \
             path: a dynamic index would select its words at run time"
        ),
        "{e}"
    );
    // The same write with a constant lane compiles.
    compile_all_presets(&kernel("vec<bool, 4>", "buffer.write_part %b, %t, bool true, u32 2"));
}
