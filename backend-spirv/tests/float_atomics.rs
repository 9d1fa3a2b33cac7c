//! Float atomics by device feature (`plan/float_atomics.rs`): every row of
//! the table, with and without its feature, emits exactly its planned
//! opcodes (or is refused with its reason); a buffer one atomic addresses
//! through its unsigned view is addressed so by all. The device runs (each
//! operation contended on one address, like the interpreter) are
//! `vulkan/tests/float_atomics_vulkan.rs`.

mod common;

use common::*;
use rspirv::spirv::Capability;
use xir_spirv::plan::float_atomics::{FloatOp, Lowering, Row, Storage, TABLE};
use xir_spirv::{CompileOptions, Feature, FeatureSet};

fn opcode(op: FloatOp) -> &'static str {
    match op {
        FloatOp::Exchange => "atomic.exchange",
        FloatOp::CompareExchange => "atomic.compare_exchange",
        FloatOp::Add => "atomic.fetch_add",
        FloatOp::Min => "atomic.fetch_min",
        FloatOp::Max => "atomic.fetch_max",
    }
}

/// One float atomic of `row`'s operation, storage and width on element 0,
/// its operand(s) read from a buffer, its result written back.
fn kernel(row: &Row) -> String {
    let ty = format!("f{}", row.bits);
    let target = match row.storage {
        Storage::Buffer => "%x",
        Storage::Shared => "%sh",
    };
    let operands = if row.op == FloatOp::CompareExchange { "%v, %w" } else { "%v" };
    format!(
        r#"
kernel @k(%x: buffer<{ty}>, %in: buffer<{ty}>) block_size(64, 1, 1) {{
^entry:
  %sh = alloca.shared : array<{ty}, 64>
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %in, %t : {ty}
  %w = neg %v : {ty}
  %o = {op} {target}, {operands}, u32 0 : {ty}
  buffer.write %in, %t, %o
  return
}}
"#,
        op = opcode(row.op)
    )
}

const FLOAT_ATOMIC_CAPS: [Capability; 6] = [
    Capability::AtomicFloat16AddEXT,
    Capability::AtomicFloat32AddEXT,
    Capability::AtomicFloat64AddEXT,
    Capability::AtomicFloat16MinMaxEXT,
    Capability::AtomicFloat32MinMaxEXT,
    Capability::AtomicFloat64MinMaxEXT,
];

/// The float-atomic feature bits of a set (every table feature).
fn float_atomic_features(s: &FeatureSet) -> Vec<Feature> {
    s.iter().filter(|f| TABLE.iter().any(|r| r.native == Some(*f))).collect()
}

/// The one atomic instruction of the module: its opcode and the kind and width of its result type.
fn the_atomic(m: &SpvModule) -> (Op, Op, u32) {
    let types: std::collections::HashMap<u32, (Op, u32)> = m
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::TypeFloat | Op::TypeInt))
        .map(|i| {
            let w = match i.operands[0] {
                Operand::LiteralBit32(w) => w,
                ref o => panic!("width {o:?}"),
            };
            (i.result_id.expect("type id"), (i.class.opcode, w))
        })
        .collect();
    let atomics: Vec<_> = m
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter(|i| {
            matches!(
                i.class.opcode,
                Op::AtomicExchange
                    | Op::AtomicCompareExchange
                    | Op::AtomicFAddEXT
                    | Op::AtomicFMinEXT
                    | Op::AtomicFMaxEXT
                    | Op::AtomicIAdd
            )
        })
        .collect();
    assert_eq!(atomics.len(), 1, "{atomics:?}");
    let (kind, w) = types[&atomics[0].result_type.expect("typed")];
    (atomics[0].class.opcode, kind, w)
}

/// What a row's lowering must emit: the atomic's opcode, its result type
/// kind and width, the loops, the capabilities and float-atomic features.
fn check_emitted(row: &Row, how: Lowering, device: FeatureSet) {
    let src = kernel(row);
    let out = compile_with(&src, &CompileOptions { device_features: Some(device), ..opts(0, false) });
    let m = load(&out.words_unoptimized);
    let (op, kind, width) = the_atomic(&m);
    let dis = out.disassembly_unoptimized();
    let caps = xir_spirv::capabilities(&out.words_unoptimized);
    let float_caps: Vec<_> = FLOAT_ATOMIC_CAPS.into_iter().filter(|c| caps.contains(c)).collect();
    let w = row.bits;
    let what = format!("{row:?} as {how:?}:\n{dis}");
    assert_eq!(width, w, "{what}");
    match how {
        Lowering::Native(feat) => {
            let (want_op, want_cap) = match (row.op, w) {
                (FloatOp::Exchange, _) => (Op::AtomicExchange, None),
                (FloatOp::Add, 16) => (Op::AtomicFAddEXT, Some(Capability::AtomicFloat16AddEXT)),
                (FloatOp::Add, 32) => (Op::AtomicFAddEXT, Some(Capability::AtomicFloat32AddEXT)),
                (FloatOp::Add, _) => (Op::AtomicFAddEXT, Some(Capability::AtomicFloat64AddEXT)),
                (FloatOp::Min | FloatOp::Max, 16) => (Op::AtomicFMinEXT, Some(Capability::AtomicFloat16MinMaxEXT)),
                (FloatOp::Min | FloatOp::Max, 32) => (Op::AtomicFMinEXT, Some(Capability::AtomicFloat32MinMaxEXT)),
                (FloatOp::Min | FloatOp::Max, _) => (Op::AtomicFMinEXT, Some(Capability::AtomicFloat64MinMaxEXT)),
                (FloatOp::CompareExchange, _) => panic!("compare-exchange has no native row"),
            };
            let want_op = if row.op == FloatOp::Max { Op::AtomicFMaxEXT } else { want_op };
            assert_eq!((op, kind), (want_op, Op::TypeFloat), "{what}");
            assert_eq!(float_caps, want_cap.into_iter().collect::<Vec<_>>(), "{what}");
            assert_eq!(float_atomic_features(&out.features), vec![feat], "{what}");
            assert_eq!(count(&dis, "OpLoopMerge"), 0, "{what}");
        }
        Lowering::Word | Lowering::CasLoop => {
            let want_op = if how == Lowering::Word && row.op == FloatOp::Exchange {
                Op::AtomicExchange
            } else {
                Op::AtomicCompareExchange
            };
            assert_eq!((op, kind), (want_op, Op::TypeInt), "{what}");
            assert!(float_caps.is_empty(), "{what}");
            assert!(float_atomic_features(&out.features).is_empty(), "{what}");
            assert_eq!(out.features.contains(Feature::Int64Atomics), w == 64, "{what}");
            let loops = if how == Lowering::CasLoop { 1 } else { 0 };
            assert_eq!(count(&dis, "OpLoopMerge"), loops, "{what}");
            assert_eq!(count(&dis, "OpAtomicLoad"), loops, "{what}");
        }
    }
}

#[test]
fn every_table_row_emits_its_planned_opcodes_with_and_without_its_feature() {
    for row in &TABLE {
        let with = FeatureSet::all();
        let mut without = FeatureSet::all();
        if let Some(f) = row.native {
            without.remove(f);
        }
        for device in [with, without] {
            match row.choose(Some(&device)) {
                Ok(how) => check_emitted(row, how, device),
                Err(why) => {
                    let e =
                        compile_err(&kernel(row), &CompileOptions { device_features: Some(device), ..opts(0, false) });
                    assert_eq!(why.needs, row.native);
                    assert!(e.contains(&why.to_string()) && e.contains("spirv-plan:features"), "{row:?}: {e}");
                    if let Some(f) = row.native {
                        assert!(e.contains(f.vulkan_name()), "{e}");
                    }
                }
            }
        }
        // Without a device snapshot nothing optional is native.
        assert_eq!(row.choose(None), row.choose(Some(&FeatureSet::empty())));
    }
}

/// The lowerings the table chooses for f32 with and without every feature.
#[test]
fn the_f32_plan_is_the_reference_plan() {
    use FloatOp::*;
    use Storage::*;
    let none = FeatureSet::empty();
    let all = FeatureSet::all();
    let pick = |op, st, d: &FeatureSet| xir_spirv::plan::float_atomics::lookup(op, st, 32).unwrap().choose(Some(d));
    assert_eq!(pick(Exchange, Buffer, &none), Ok(Lowering::Word));
    assert_eq!(pick(Exchange, Buffer, &all), Ok(Lowering::Native(Feature::BufferFloat32Atomics)));
    assert_eq!(pick(CompareExchange, Buffer, &all), Ok(Lowering::Word));
    assert_eq!(pick(Add, Buffer, &none), Ok(Lowering::CasLoop));
    assert_eq!(pick(Add, Shared, &all), Ok(Lowering::Native(Feature::SharedFloat32AtomicAdd)));
    assert_eq!(pick(Min, Buffer, &none), Ok(Lowering::CasLoop));
    assert_eq!(pick(Max, Shared, &all), Ok(Lowering::Native(Feature::SharedFloat32AtomicMinMax)));
    for op in [Exchange, CompareExchange, Add, Min, Max] {
        assert!(pick(op, Shared, &none).is_err(), "{op:?}");
    }
}

/// Exchange would be native, but compare-exchange on the same buffer needs
/// its unsigned view: both go through words, and nothing native is required.
const MIXED: &str = r#"
kernel @k(%x: buffer<f32>, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %y, %t : f32
  %a = atomic.exchange %x, %v, u32 0 : f32
  %b = atomic.compare_exchange %x, %a, %v, u32 1 : f32
  %c = atomic.fetch_max %x, %b, u32 2 : f32
  %d = atomic.fetch_add %y, %c, u32 3 : f32
  return
}
"#;

#[test]
fn one_word_view_atomic_moves_every_atomic_on_its_buffer_to_the_view() {
    let out = compile_with(MIXED, &CompileOptions { device_features: Some(FeatureSet::all()), ..opts(0, false) });
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpAtomicFAddEXT"), 1, "%y keeps its native add:\n{dis}");
    assert_eq!(count(&dis, "OpAtomicFMaxEXT"), 0, "{dis}");
    assert_eq!(count(&dis, "OpAtomicExchange"), 1, "{dis}");
    assert_eq!(count(&dis, "OpAtomicCompareExchange"), 2, "the compare-exchange and the max loop:\n{dis}");
    assert_eq!(count(&dis, "OpLoopMerge"), 1, "{dis}");
    assert_eq!(float_atomic_features(&out.features), vec![Feature::BufferFloat32AtomicAdd]);
}

#[test]
fn bitwise_float_atomics_are_refused_at_the_handoff() {
    let src = r#"
kernel @k(%x: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %o = atomic.fetch_or %x, f32 1.0, u32 0 : f32
  return
}
"#;
    let m = parse(src);
    let e = xir::diag::render(&xir_spirv::compile(&m, kernel_of(&m), &opts(0, false)).expect_err("refused"));
    assert!(e.contains("spirv-handoff"), "{e}");
    assert!(e.contains("float exchange, compare-exchange, add/sub, min and max"), "{e}");
}

/// Every float atomic of buffer `%x`, contended by 128 threads on one
/// address each, with results that do not depend on the order threads run
/// in: sums of small integers (exact), min, max, an exchange of a constant
/// whose returned values are summed (the first sees the initial value, the
/// others 7). Compare-exchange on `%c` (its own buffer: it needs the word
/// view): one winner of a constant swap, whose returns are summed too; a
/// swap that never matches; -0.0 against +0.0 and NaN against NaN, compared
/// as bits.
const BUFFER_OPS: &str = include_str!("kernels/float_atomics_buffer_ops.xir");

/// The native rows' features are persisted exactly (emission-owned: no
/// capability carries them) and checked when an artifact is loaded.
#[test]
fn native_float_atomic_features_persist_and_are_checked_on_load() {
    use xir_spirv::artifact::{decode, ArtifactError, LoadRequirements, ShaderArtifact};
    let m = parse(BUFFER_OPS);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &CompileOptions { device_features: Some(FeatureSet::all()), ..opts(0, false) })
        .expect("compiles");
    let mut want =
        vec![Feature::BufferFloat32AtomicAdd, Feature::BufferFloat32Atomics, Feature::BufferFloat32AtomicMinMax];
    want.sort();
    let mut got = float_atomic_features(&out.features);
    got.sort();
    assert_eq!(got, want);
    let bytes = ShaderArtifact::from_compiled(&m, k, &out).encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&FeatureSet::all())).expect("loads");
    assert_eq!(back.features, out.features);
    let mut dev = FeatureSet::all();
    dev.remove(Feature::BufferFloat32AtomicMinMax);
    dev.remove(Feature::BufferFloat32Atomics);
    match decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&dev)) {
        Err(e @ ArtifactError::MissingDeviceFeatures(_)) => {
            assert_eq!(
                e,
                ArtifactError::MissingDeviceFeatures(vec![
                    Feature::BufferFloat32Atomics,
                    Feature::BufferFloat32AtomicMinMax
                ])
            );
            assert!(e.to_string().contains("shaderBufferFloat32AtomicMinMax"), "{e}");
        }
        r => panic!("expected missing features, got {r:?}"),
    }
}
