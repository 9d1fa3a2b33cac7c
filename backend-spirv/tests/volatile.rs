//! Volatile and coherent buffer memory (docs: `plan/coherence.rs`,
//! `emit/memory.rs`): each `buffer.volatile_read` / `volatile_write` is a
//! `Volatile` load / store beside a device-scope acquire-release fence on
//! uniform memory, `Coherent` sits on exactly the buffer declarations a
//! volatile access reaches (through callables too, and not on another
//! buffer of the same element type), `NonWritable` only where no
//! user-resource write exists, and the backend-owned argument block and
//! bindless metadata stay `NonWritable`, never `Aliased` or `Coherent`.

mod common;

use std::collections::HashMap;

use common::*;
use rspirv::spirv::{Decoration, MemoryAccess, MemorySemantics, Scope, StorageClass};
use xir_spirv::plan::coherence::plan_coherence;

fn id_of(o: &Operand) -> u32 {
    match o {
        Operand::IdRef(x) | Operand::IdScope(x) | Operand::IdMemorySemantics(x) => *x,
        other => panic!("not an id: {other:?}"),
    }
}

/// Decorations of every `StorageBuffer` variable, keyed by binding (set, binding).
fn storage_buffers(m: &SpvModule) -> Vec<((u32, u32), u32, Vec<Decoration>)> {
    let decorations = |target: u32| -> Vec<(Decoration, Vec<u32>)> {
        m.annotations
            .iter()
            .filter(|i| i.class.opcode == Op::Decorate && i.operands[0] == Operand::IdRef(target))
            .map(|i| {
                let Operand::Decoration(d) = i.operands[1] else { panic!("decoration") };
                let lits = i.operands[2..].iter().filter_map(|o| match o {
                    Operand::LiteralBit32(x) => Some(*x),
                    _ => None,
                });
                (d, lits.collect())
            })
            .collect()
    };
    let mut out: Vec<_> = m
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable && i.operands[0] == Operand::StorageClass(StorageClass::StorageBuffer)
        })
        .map(|i| {
            let v = i.result_id.unwrap();
            let ds = decorations(v);
            let lit = |d: Decoration| ds.iter().find(|(x, _)| *x == d).map(|(_, l)| l[0]).expect("set and binding");
            let key = (lit(Decoration::DescriptorSet), lit(Decoration::Binding));
            let mut names: Vec<Decoration> = ds
                .iter()
                .map(|(d, _)| *d)
                .filter(|d| !matches!(d, Decoration::DescriptorSet | Decoration::Binding))
                .collect();
            names.sort_by_key(|d| *d as u32);
            (key, v, names)
        })
        .collect();
    out.sort_by_key(|b| b.0);
    out
}

/// Each `OpLoad` / `OpStore` of storage-buffer memory: (root variable, is a
/// store, its memory-access operand).
fn buffer_accesses(m: &SpvModule) -> Vec<(u32, bool, Option<MemoryAccess>)> {
    let vars: Vec<u32> = storage_buffers(m).iter().map(|b| b.1).collect();
    let mut base: HashMap<u32, u32> = HashMap::new();
    let mut out = Vec::new();
    for i in insts(m) {
        let root = |p: &Operand| -> Option<u32> {
            let mut id = id_of(p);
            while let Some(&b) = base.get(&id) {
                id = b;
            }
            vars.contains(&id).then_some(id)
        };
        match i.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain => {
                base.insert(i.result_id.unwrap(), id_of(&i.operands[0]));
            }
            Op::Load | Op::Store => {
                let Some(r) = root(&i.operands[0]) else { continue };
                let at = if i.class.opcode == Op::Load { 1 } else { 2 };
                let access = i.operands.get(at).map(|o| match o {
                    Operand::MemoryAccess(a) => *a,
                    o => panic!("memory operand {o:?}"),
                });
                out.push((r, i.class.opcode == Op::Store, access));
            }
            _ => {}
        }
    }
    out
}

/// The (scope, semantics) of every `OpMemoryBarrier`.
fn fences(m: &SpvModule) -> Vec<(u64, u64)> {
    let c = const_values(m);
    insts(m)
        .iter()
        .filter(|i| i.class.opcode == Op::MemoryBarrier)
        .map(|i| (c[&id_of(&i.operands[0])], c[&id_of(&i.operands[1])]))
        .collect()
}

const DEVICE_FENCE: (u64, u64) =
    (Scope::Device as u64, (MemorySemantics::ACQUIRE_RELEASE.bits() | MemorySemantics::UNIFORM_MEMORY.bits()) as u64);

const DIRECT: &str = r#"
kernel @k(%v: buffer<u32>, %plain: buffer<u32>) block_size(32, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.volatile_read %v, %t : u32
  %y = buffer.read %plain, %t : u32
  %s = add %x, %y : u32
  buffer.volatile_write %v, %t, %s
  buffer.write %plain, %t, %s
  return
}
"#;

#[test]
fn a_volatile_access_is_a_volatile_load_or_store_beside_a_device_fence_on_a_coherent_buffer() {
    let out = compile_all_presets(DIRECT);
    for (stage, words) in [("unoptimized", &out.words_unoptimized), ("optimized", &out.words)] {
        let m = load(words);
        let bufs = storage_buffers(&m);
        let (v, plain) = (bufs[0].1, bufs[1].1);
        // Same element type, one layout: only the volatile one is Coherent.
        assert_eq!(
            bufs.iter().map(|b| (b.0, b.2.clone())).collect::<Vec<_>>(),
            vec![((0, 0), vec![Decoration::Aliased, Decoration::Coherent]), ((0, 1), vec![Decoration::Aliased])],
            "{stage}"
        );
        let vol = Some(MemoryAccess::VOLATILE);
        assert_eq!(
            buffer_accesses(&m),
            vec![(v, false, vol), (plain, false, None), (v, true, vol), (plain, true, None)],
            "{stage}"
        );
        assert_eq!(fences(&m), vec![DEVICE_FENCE, DEVICE_FENCE], "{stage}");
    }
    // Before the read, after the write.
    let dis = out.disassembly_unoptimized();
    let lines: Vec<&str> =
        dis.lines().map(str::trim).filter(|l| l.contains("Volatile") || l.starts_with("OpMemoryBarrier")).collect();
    assert_eq!(lines.len(), 4, "{dis}");
    assert!(
        lines[0].starts_with("OpMemoryBarrier") && lines[1].contains("OpLoad") && lines[1].ends_with("Volatile"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("OpStore") && lines[2].ends_with("Volatile") && lines[3].starts_with("OpMemoryBarrier"),
        "{lines:?}"
    );
}

/// Word-ABI elements (a `bool` buffer: masked CAS for a partial word) and a
/// buffer of structs: every load and store of the element is volatile.
const WORDS: &str = r#"
kernel @k(%flags: buffer<bool>, %recs: buffer<struct<align 4>{u32, f32}>) block_size(32, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %f = buffer.volatile_read %flags, %t : bool
  %n = bit_not %f : bool
  buffer.volatile_write %flags, %t, %n
  %r = buffer.volatile_read %recs, %t : struct<align 4>{u32, f32}
  buffer.volatile_write %recs, %t, %r
  return
}
"#;

#[test]
fn every_word_of_a_volatile_word_abi_or_struct_access_is_volatile() {
    let out = compile_all_presets(WORDS);
    let m = load(&out.words_unoptimized);
    let bufs = storage_buffers(&m);
    for b in &bufs {
        assert_eq!(b.2, vec![Decoration::Aliased, Decoration::Coherent], "{:?}", b.0);
    }
    let (flags, recs) = (bufs[0].1, bufs[1].1);
    let vol = Some(MemoryAccess::VOLATILE);
    // The bool's word load, the struct's load and store. The partial-word
    // bool store is the masked CAS loop (atomic load and compare-exchange,
    // which take no memory operand), then its fence.
    assert_eq!(buffer_accesses(&m), vec![(flags, false, vol), (recs, false, vol), (recs, true, vol)]);
    assert_eq!(fences(&m), vec![DEVICE_FENCE; 4]);
    assert_eq!(count(&out.disassembly_unoptimized(), "OpAtomicCompareExchange"), 1);
}

/// Two levels of callables: @inner accesses its first formal volatile,
/// @outer passes its second formal there; the kernel passes %b as @outer's
/// second argument. %a (same element type) goes to @outer's first formal,
/// which @outer only reads plainly; %c is never passed.
const CALLABLES: &str = r#"
callable @inner(%p: buffer<f32>, %q: buffer<f32>, %i: u32) -> void {
^entry:
  %x = buffer.volatile_read %p, %i : f32
  %y = buffer.read %q, %i : f32
  %z = add %x, %y : f32
  buffer.write %q, %i, %z
  return
}

callable @outer(%r: buffer<f32>, %s: buffer<f32>, %i: u32) -> void {
^entry:
  call @inner, %s, %r, %i
  return
}

kernel @k(%a: buffer<f32>, %b: buffer<f32>, %c: buffer<f32>) block_size(32, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  call @outer, %a, %b, %t
  %w = buffer.read %c, %t : f32
  buffer.write %c, %t, %w
  return
}
"#;

#[test]
fn coherence_is_a_fixed_point_argument_role_through_callables() {
    // The plan on the module as written (no inlining): the role climbs two levels.
    let m = parse(CALLABLES);
    let ids: HashMap<&str, xir::FuncId> = m.func_ids().map(|f| (m.func(f).name.as_str(), f)).collect();
    let blocks: Vec<_> = m.func_ids().map(|f| (f, m.func(f).blocks().to_vec())).collect();
    let plan = plan_coherence(&m, &blocks);
    let roles = |name: &str| {
        let mut v: Vec<u32> =
            plan.volatile_args.get(&ids[name]).map(|s| s.iter().copied().collect()).unwrap_or_default();
        v.sort();
        v
    };
    assert_eq!(roles("inner"), vec![0]);
    assert_eq!(roles("outer"), vec![1]);
    assert_eq!(roles("k"), vec![1]);
    // Through the shipped pipeline (resource call sites inlined) and the backend:
    // only %b's declaration is Coherent.
    for level in [0, 2] {
        let (_, out) = through_spirv(CALLABLES, level);
        let m = load(&out.words);
        let got: Vec<_> = storage_buffers(&m).into_iter().map(|b| (b.0, b.2)).collect();
        assert_eq!(
            got,
            vec![
                ((0, 0), vec![Decoration::Aliased]),
                ((0, 1), vec![Decoration::Aliased, Decoration::Coherent]),
                ((0, 2), vec![Decoration::Aliased]),
            ],
            "-O{level}"
        );
        assert_eq!(fences(&m), vec![DEVICE_FENCE], "-O{level}");
    }
}

#[test]
fn non_writable_only_without_any_user_resource_write() {
    // Only reads: every buffer is NonWritable (a volatile read too, which is also Coherent).
    let reads = r#"
kernel @k(%a: buffer<u32>, %b: buffer<u32>) block_size(8, 8, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %a, %t : u32
  %y = buffer.volatile_read %b, %t : u32
  %s = add %x, %y : u32
  return
}
"#;
    let m = load(&compile_all_presets(reads).words_unoptimized);
    let got: Vec<_> = storage_buffers(&m).into_iter().map(|b| (b.0, b.2)).collect();
    assert_eq!(
        got,
        vec![
            ((0, 0), vec![Decoration::Aliased, Decoration::NonWritable]),
            ((0, 1), vec![Decoration::Aliased, Decoration::Coherent, Decoration::NonWritable]),
        ]
    );
    // A storage-texture write is a writable user-resource path: the read-only
    // buffer loses NonWritable (and does not become Coherent).
    let texture_write = r#"
kernel @k(%a: buffer<u32>, %o: texture2d<u32>) block_size(8, 8, 1) {
^entry:
  %id = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %a, %id : u32
  %c = aggregate u32 0, u32 0 : vec<u32, 2>
  %v = aggregate %x, %x, %x, %x : vec<u32, 4>
  texture.write %o, %c, %v
  return
}
"#;
    let m = load(&compile_all_presets(texture_write).words_unoptimized);
    let got: Vec<_> = storage_buffers(&m).into_iter().map(|b| (b.0, b.2)).collect();
    assert_eq!(got, vec![((0, 0), vec![Decoration::Aliased])]);
    // The rule itself, opcode by opcode: resource writes and atomics.
    let writers: Vec<String> = xir::Opcode::ALL
        .iter()
        .filter(|&&op| xir_spirv::plan::writes_user_memory(op))
        .map(|op| op.to_string())
        .filter(|n| !n.starts_with("atomic."))
        .collect();
    assert_eq!(
        writers,
        [
            "buffer.write",
            "buffer.volatile_write",
            "buffer.write_part",
            "byte_buffer.write",
            "texture.write",
            "bindless.buffer_write",
            "bindless.texture2d_write",
            "bindless.texture3d_write",
            "device_address.write",
            "accel.set_instance_transform",
            "accel.set_instance_visibility",
            "accel.set_instance_user_id",
            "indirect.set_dispatch_count",
            "indirect.set_dispatch_kernel",
        ]
    );
    assert!(xir_spirv::plan::writes_user_memory(xir::Opcode::AtomicFetchAdd));
    assert!(!xir_spirv::plan::writes_user_memory(xir::Opcode::Store), "a local store writes no resource");
}

/// Backend-owned blocks beside a volatile access: the argument block (value
/// arguments over the push-constant limit) and a bindless array's metadata.
const OWNED: &str = r#"
kernel @k(%m0: mat<f32, 4>, %m1: mat<f32, 4>, %v: buffer<f32>, %arr: bindless_array) block_size(32, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = extract %m0, u32 0 : vec<f32, 4>
  %x = extract %c, u32 0 : f32
  %d = extract %m1, u32 1 : vec<f32, 4>
  %y = extract %d, u32 1 : f32
  %n = bindless.buffer_size %arr, u32 0, u32 4 : u32
  %nf = cast.static %n : f32
  %old = buffer.volatile_read %v, %t : f32
  %s = add %x, %y : f32
  %s2 = add %s, %nf : f32
  %s3 = add %s2, %old : f32
  buffer.volatile_write %v, %t, %s3
  return
}
"#;

#[test]
fn backend_owned_blocks_stay_non_writable_and_never_aliased_or_coherent() {
    let out = compile_all_presets(OWNED);
    assert!(out.abi.argument_block().is_some(), "two 4x4 matrices overflow the push constants");
    let m = load(&out.words_unoptimized);
    let bufs = storage_buffers(&m);
    let names: HashMap<u32, &str> = m
        .debug_names
        .iter()
        .filter(|i| i.class.opcode == Op::Name)
        .filter_map(|i| match (&i.operands[0], &i.operands[1]) {
            (Operand::IdRef(t), Operand::LiteralString(s)) => Some((*t, s.as_str())),
            _ => None,
        })
        .collect();
    // The variable's type names its block: `_Global` / `_BindlessMetadata`, or the user buffer.
    let block_of = |var: u32| -> &str {
        let ptr = m.types_global_values.iter().find(|i| i.result_id == Some(var)).unwrap().result_type.unwrap();
        let ptr = m.types_global_values.iter().find(|i| i.result_id == Some(ptr)).unwrap();
        names.get(&id_of(&ptr.operands[1])).copied().unwrap_or("user")
    };
    let got: Vec<_> = bufs.iter().map(|b| (block_of(b.1), b.2.clone())).collect();
    assert_eq!(got.len(), 3, "{got:?}");
    for (role, ds) in &got {
        match *role {
            "_Global" | "_BindlessMetadata" => assert_eq!(ds, &vec![Decoration::NonWritable], "{role}"),
            _ => assert_eq!(ds, &vec![Decoration::Aliased, Decoration::Coherent], "{role}"),
        }
    }
    assert_eq!(got.iter().filter(|g| g.0 == "_Global").count(), 1, "{got:?}");
    assert_eq!(got.iter().filter(|g| g.0 == "_BindlessMetadata").count(), 1, "{got:?}");
}
