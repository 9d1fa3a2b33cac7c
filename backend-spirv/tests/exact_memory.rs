//! Atomics (Relaxed semantics, Device / Workgroup scope, Int64Atomics, float
//! add native or by CAS loop), the word ABI for bool and 64-bit 3-vector
//! buffers, shared memory and barriers, handoff rejections, and the
//! device-feature check.

mod common;

use common::*;
use rspirv::spirv::{Capability, MemorySemantics, Scope};
use xir_spirv::{BufferStorage, Feature, FeatureSet};

const ATOMICS: &str = r#"
kernel @k(%c: buffer<u32>, %w: buffer<i64>) block_size(64, 1, 1) {
^entry:
  %sh = alloca.shared : array<u32, 4>
  %t = extract $thread_id, u32 0 : u32
  %a = atomic.fetch_add %c, u32 1, u32 0 : u32
  %b = atomic.fetch_max %c, %t, u32 1 : u32
  %d = atomic.exchange %c, %t, u32 2 : u32
  %e = atomic.compare_exchange %c, u32 0, %t, u32 3 : u32
  %f = atomic.fetch_min %w, i64 -5, u32 0 : i64
  %g = atomic.fetch_or %sh, %t, u32 1 : u32
  %h = atomic.fetch_and %sh, %t, u32 2 : u32
  sync_block
  %s = add %a, %b : u32
  %s2 = add %s, %g : u32
  %s3 = add %s2, %h : u32
  %s4 = add %s3, %d : u32
  %s5 = add %s4, %e : u32
  buffer.write %c, u32 4, %s5
  return
}
"#;

fn atomic_ops() -> [Op; 12] {
    [
        Op::AtomicIAdd,
        Op::AtomicISub,
        Op::AtomicSMax,
        Op::AtomicUMax,
        Op::AtomicSMin,
        Op::AtomicUMin,
        Op::AtomicOr,
        Op::AtomicAnd,
        Op::AtomicXor,
        Op::AtomicExchange,
        Op::AtomicCompareExchange,
        Op::AtomicLoad,
    ]
}

#[test]
fn every_atomic_is_relaxed_with_its_pointer_scope() {
    let out = compile_all_presets(ATOMICS);
    let m = load(&out.words_unoptimized);
    let consts = const_values(&m);
    let mut scopes = Vec::new();
    let mut n = 0;
    for i in insts(&m) {
        if atomic_ops().contains(&i.class.opcode) {
            n += 1;
            let sem_operands = if i.class.opcode == Op::AtomicCompareExchange { 2..4 } else { 2..3 };
            for k in sem_operands {
                assert_eq!(consts[&id_of(&i.operands[k])], MemorySemantics::RELAXED.bits() as u64, "{i:?}");
            }
            scopes.push(consts[&id_of(&i.operands[1])]);
        }
    }
    assert_eq!(n, 7);
    assert_eq!(scopes.iter().filter(|&&s| s == Scope::Device as u64).count(), 5, "buffer atomics: Device scope");
    assert_eq!(scopes.iter().filter(|&&s| s == Scope::Workgroup as u64).count(), 2, "shared atomics: Workgroup scope");
    let caps = xir_spirv::capabilities(&out.words);
    assert!(caps.contains(&Capability::Int64Atomics) && caps.contains(&Capability::Int64));
    assert!(out.features.contains(Feature::Int64Atomics));
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpControlBarrier"), 1, "{dis}");
    assert!(dis.contains("Workgroup"), "{dis}");
}

const FLOAT_ADD: &str = r#"
kernel @k(%x: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %old = atomic.fetch_add %x, f32 1.5, u32 0 : f32
  %v = buffer.read %x, %t : f32
  %r = add %v, %old : f32
  buffer.write %x, %t, %r
  return
}
"#;

#[test]
fn float_atomic_add_is_a_cas_loop_unless_the_device_enables_it() {
    let cas = compile_all_presets(FLOAT_ADD);
    let m = load(&cas.words_unoptimized);
    check_phis(&m);
    let dis = cas.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 1, "{dis}");
    assert_eq!(count(&dis, "OpLoopMerge"), 1);
    assert!(!dis.contains("AtomicFAdd"));
    let consts = const_values(&m);
    for i in insts(&m).into_iter().filter(|i| atomic_ops().contains(&i.class.opcode)) {
        assert_eq!(consts[&id_of(&i.operands[2])], 0, "relaxed: {i:?}");
    }
    assert_eq!(cas.abi.properties[1].storage, BufferStorage::Typed { stride: 4 }, "host layout unchanged");
    let native = compile_with(FLOAT_ADD, &CompileOptionsExt::device(FeatureSet::all()));
    let dis = native.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomicFAddEXT"), 1, "{dis}");
    assert!(native.features.contains(Feature::BufferFloat32AtomicAdd));
    assert!(!cas.features.contains(Feature::BufferFloat32AtomicAdd));
}

fn id_of(o: &Operand) -> u32 {
    match o {
        Operand::IdRef(x) | Operand::IdScope(x) | Operand::IdMemorySemantics(x) => *x,
        other => panic!("not an id: {other:?}"),
    }
}

struct CompileOptionsExt;
impl CompileOptionsExt {
    fn device(f: FeatureSet) -> xir_spirv::CompileOptions {
        xir_spirv::CompileOptions { device_features: Some(f), ..Default::default() }
    }
}

const WORDS: &str = r#"
kernel @k(%flags: buffer<bool>, %v: buffer<vec<f64, 3>>, %out: buffer<f64>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %f = buffer.read %flags, %t : bool
  %nf = bit_not %f : bool
  buffer.write %flags, %t, %nf
  %x = buffer.read %v, %t : vec<f64, 3>
  %y = extract %x, u32 2 : f64
  buffer.write %out, %t, %y
  %z = insert %x, f64 1.0, u32 0 : vec<f64, 3>
  buffer.write %v, %t, %z
  return
}
"#;

#[test]
fn bool_and_wide_vec3_buffers_use_the_word_abi() {
    let out = compile_all_presets(WORDS);
    let abi = &out.abi;
    // A bool keeps its 1-byte host layout (`bool_buffers.rs` has the details).
    assert_eq!(abi.properties[1].storage, BufferStorage::Words { elem_size: 1, elem_align: 1 });
    assert_eq!(abi.properties[2].storage, BufferStorage::Words { elem_size: 32, elem_align: 16 });
    assert_eq!(abi.properties[3].storage, BufferStorage::Typed { stride: 8 });
    let m = load(&out.words_unoptimized);
    // Both word buffers share one runtime array of 32-bit uint with ArrayStride 4.
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "ArrayStride 4"), 1, "{dis}");
    assert_eq!(count(&dis, "ArrayStride 8"), 1, "{dis}");
    // vec<f64,3>: 3 lanes x 2 words read and written; bool: its word read, then a masked CAS of it.
    let loads = insts(&m).into_iter().filter(|i| i.class.opcode == Op::Load).count();
    assert!(loads >= 7, "{dis}");
    assert!(dis.contains("OpINotEqual"), "bool byte -> bool:\n{dis}");
    assert!(dis.contains("OpSelect"), "bool -> 0/1 byte:\n{dis}");
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 1, "{dis}");
    assert!(!dis.contains("OpTypeRuntimeArray %bool"), "{dis}");
}

#[test]
fn zero_length_array_is_rejected_at_the_handoff() {
    let src = r#"
kernel @k(%x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<f32, 0>
  return
}
"#;
    let e = compile_err(src, &opts(0, false));
    assert!(e.contains("spirv-handoff:type") && e.contains("length 0"), "{e}");
}

#[test]
fn missing_device_feature_is_rejected() {
    let src = r#"
kernel @k(%x: buffer<i64>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %x, u32 0 : i64
  %w = mul %v, i64 3 : i64
  buffer.write %x, u32 1, %w
  return
}
"#;
    let mut dev = FeatureSet::all();
    dev.remove(Feature::Int64);
    let e = compile_err(src, &CompileOptionsExt::device(dev));
    assert!(e.contains("spirv-features") && e.contains("shaderInt64"), "{e}");
    let ok = compile_with(src, &CompileOptionsExt::device(FeatureSet::all()));
    assert!(ok.features.contains(Feature::Int64));
    assert!(!ok.features.contains(Feature::Float64));
}

#[test]
fn unsupported_constructs_get_focused_handoff_diagnostics() {
    let cases = [
        ("%r = sin %v : f64", "GLSL.std.450"),
        ("%p = aggregate %v, %v : vec<f64, 2>\n  %r = cast.bitwise %p : mat<f32, 2>", "equal total width"),
    ];
    for (line, want) in cases {
        let src = format!(
            "kernel @k(%x: buffer<f64>) block_size(1, 1, 1) {{\n^entry:\n  %v = buffer.read %x, u32 0 : f64\n  {line}\n  return\n}}\n"
        );
        let e = compile_err(&src, &opts(0, false));
        assert!(e.contains("spirv-handoff") && e.contains(want), "{line}: {e}");
    }
    let local_atomic = r#"
kernel @k(%x: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : u32
  %o = atomic.fetch_add %a, u32 1 : u32
  return
}
"#;
    let e = compile_err(local_atomic, &opts(0, false));
    assert!(e.contains("function-local"), "{e}");
    // Values beyond 128 bytes of push constants go to the argument block; past its 64 KiB bound they are rejected.
    let big_block = r#"
kernel @k(%a: array<f32, 16384>, %b: f32, %x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  return
}
"#;
    let e = compile_err(big_block, &opts(0, false));
    assert!(e.contains("65540-byte argument block") && e.contains("65536"), "{e}");
}
