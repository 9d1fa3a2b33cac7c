//! Ray queries through the `spirv` pipeline and the backend: exact module
//! properties of closest-hit tracing (a structured loop calling
//! `OpRayQueryProceedKHR` until it returns false, committed fields read only
//! after the loop) against any-hit tracing (`TerminateOnFirstHitKHR |
//! OpaqueKHR`, a single proceed), the accel descriptor and its persisted role
//! mask, an unused accel (no descriptor, no `RayQueryKHR`), the candidate
//! handlers of a ray-query loop, and the device-feature rejection. Every
//! module validates for Vulkan 1.2 at every preset. Nothing here runs on a
//! device (`ray_query_vulkan.rs` and `accel_instances_vulkan.rs` do).

mod common;

use common::*;
use rspirv::spirv::{Capability, Decoration, StorageClass};
use xir::pipeline::{Loader, PassManager, RunOptions};
use xir_spirv::abi::{Role, ACCEL_ROLE_TRAVERSAL, NO_BINDING};
use xir_spirv::{Feature, FeatureSet, PropertyKind};

const RAY_TYPE: &str = "struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}";

fn trace_kernel(body: &str) -> String {
    format!(
        r#"
kernel @k(%scene: accel, %out: buffer<u32>) block_size(4, 1, 1) {{
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %origin = aggregate %xf, f32 0.0, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : {RAY_TYPE}
{body}
  buffer.write %out, %x, %r
  return
}}
"#
    )
}

fn closest() -> String {
    trace_kernel(
        "  %hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 8>{u32, u32, vec<f32, 2>, f32}\n  \
         %r = extract %hit, u32 1 : u32",
    )
}

fn any() -> String {
    trace_kernel("  %h = ray.trace_any %scene, %ray, u32 255 : bool\n  %r = cast.static %h : u32")
}

/// `src` through the shipped `spirv` pipeline, then compiled at every
/// preset (each module validated); the preset-0 output.
fn through_pipeline(src: &str) -> xir_spirv::SpirvOutput {
    legalized_and_compiled(src).1
}

/// The legalized module and its preset-0 output (every preset compiled
/// and validated).
fn legalized_and_compiled(src: &str) -> (xir::Module, xir_spirv::SpirvOutput) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let reg = registry();
    let pipeline = Loader::new(&reg)
        .with_search_dir(std::path::PathBuf::from(format!("{root}/pipelines")))
        .load("spirv")
        .unwrap_or_else(|e| panic!("spirv pipeline loads: {e}"));
    let mut first = None;
    for level in 0..=3u8 {
        let mut m = parse(src);
        let run = RunOptions { opt_level: level, verify_each: true, ..RunOptions::default() };
        let mut log = Vec::new();
        if let Err(e) = PassManager::new(&pipeline, run).run(&mut m, &mut log) {
            panic!("pipeline at -O{level}: {e}\n{}", String::from_utf8_lossy(&log));
        }
        let k = kernel_of(&m);
        let out = xir_spirv::compile(&m, k, &opts(level, false))
            .unwrap_or_else(|d| panic!("compile at -O{level}:\n{}", xir::diag::render(&d)));
        xir_spirv::validate::validate(&out.words_unoptimized).expect("unoptimized module validates");
        xir_spirv::validate::validate(&out.words).expect("final module validates");
        first.get_or_insert((m, out));
    }
    first.expect("ran")
}

/// Instructions of every function, in layout order, with the label of the
/// block holding each.
fn body(m: &SpvModule) -> Vec<(u32, &rspirv::dr::Instruction)> {
    let mut out = Vec::new();
    for f in &m.functions {
        for b in &f.blocks {
            let l = b.label.as_ref().unwrap().result_id.unwrap();
            out.extend(b.instructions.iter().map(|i| (l, i)));
        }
    }
    out
}

fn ops(m: &SpvModule, op: Op) -> Vec<&rspirv::dr::Instruction> {
    body(m).into_iter().map(|(_, i)| i).filter(|i| i.class.opcode == op).collect()
}

/// The `RayFlags` constant of each `OpRayQueryInitializeKHR`.
fn init_flags(m: &SpvModule) -> Vec<u64> {
    let consts = const_values(m);
    ops(m, Op::RayQueryInitializeKHR).iter().map(|i| consts[&i.operands[2].unwrap_id_ref()]).collect()
}

fn has_cap(m: &SpvModule, c: Capability) -> bool {
    m.capabilities.iter().any(|i| i.operands[0] == Operand::Capability(c))
}

// Check the closest-hit shape: one initialize without flags, one proceed
// whose result is the condition of the loop header's conditional branch
// (inside a structured loop), a confirm of triangle candidates in the loop,
// and every committed-intersection read in the loop's merge block, which
// runs only once the proceed returned false.
#[test]
fn closest_hit_is_a_proceed_loop_before_committed_reads() {
    let out = through_pipeline(&closest());
    let m = load(&out.words_unoptimized);
    assert_eq!(init_flags(&m), vec![0]);
    let proceeds = ops(&m, Op::RayQueryProceedKHR);
    assert_eq!(proceeds.len(), 1);
    let more = proceeds[0].result_id.unwrap();
    let loops = ops(&m, Op::LoopMerge);
    assert_eq!(loops.len(), 1, "{}", out.disassembly_unoptimized());
    let merge = loops[0].operands[0].unwrap_id_ref();
    let insts = body(&m);
    let pos = |pred: &dyn Fn(&rspirv::dr::Instruction) -> bool| insts.iter().position(|(_, i)| pred(i));
    let header = pos(&|i| i.class.opcode == Op::LoopMerge).unwrap();
    let cond = pos(&|i| i.class.opcode == Op::BranchConditional && i.operands[0] == Operand::IdRef(more)).unwrap();
    let merge_at = insts.iter().position(|(l, _)| *l == merge).expect("merge block emitted");
    assert!(header < cond && cond < merge_at, "the proceed does not drive the loop");
    assert_eq!(targets(insts[cond].1)[1], merge, "a false proceed must leave the loop");
    assert_eq!(ops(&m, Op::RayQueryConfirmIntersectionKHR).len(), 1);
    let consts = const_values(&m);
    let committed: Vec<(usize, u32, Op)> = insts
        .iter()
        .enumerate()
        .filter(|(_, (_, i))| {
            let name = format!("{:?}", i.class.opcode);
            name.starts_with("RayQueryGetIntersection")
                && i.operands.get(1).is_some_and(|o| consts.get(&o.unwrap_id_ref()) == Some(&1))
        })
        .map(|(k, (l, i))| (k, *l, i.class.opcode))
        .collect();
    assert_eq!(committed.len(), 5, "instance, primitive, barycentrics, t and type of the committed hit");
    let dis = out.disassembly_unoptimized();
    assert!(
        committed.iter().all(|&(k, _, _)| k > merge_at),
        "a committed field is read before the loop's merge block (before traversal completes):\n{dis}"
    );
    // The type is read in the merge block; the other fields only under the
    // selections it guards: `type != none` for instance, primitive and t,
    // `type == triangle` for the barycentrics (SPIR-V allows a committed read
    // only while there is a committed intersection).
    let ty = committed.iter().find(|c| c.2 == Op::RayQueryGetIntersectionTypeKHR).unwrap();
    assert_eq!(ty.1, merge, "the committed type is read first, in the merge block:\n{dis}");
    let ty_id = insts[ty.0].1.result_id.unwrap();
    let guard_of = |label: u32| {
        let (k, _) = insts
            .iter()
            .enumerate()
            .find(|(_, (_, i))| i.class.opcode == Op::BranchConditional && i.operands[1] == Operand::IdRef(label))?;
        let cond = insts[k].1.operands[0].unwrap_id_ref();
        let def = insts.iter().find(|(_, i)| i.result_id == Some(cond))?.1;
        assert_eq!(insts[k - 1].1.class.opcode, Op::SelectionMerge, "a guard is a structured selection");
        Some((def.class.opcode, def.operands[0].unwrap_id_ref(), consts[&def.operands[1].unwrap_id_ref()]))
    };
    for &(_, l, op) in &committed {
        let want = match op {
            Op::RayQueryGetIntersectionTypeKHR => continue,
            Op::RayQueryGetIntersectionBarycentricsKHR => (Op::IEqual, ty_id, 1),
            _ => (Op::INotEqual, ty_id, 0),
        };
        assert_eq!(guard_of(l), Some(want), "{op:?} is not guarded by the committed type:\n{dis}");
    }
    assert!(has_cap(&m, Capability::RayQueryKHR));
    assert!(m.extensions.iter().any(|e| e.operands[0] == Operand::LiteralString("SPV_KHR_ray_query".into())));
}

// Check the any-hit shape: TerminateOnFirstHitKHR | OpaqueKHR | SkipAABBsKHR
// (4 | 1 | 0x200, with RayTraversalPrimitiveCullingKHR), a single proceed,
// no loop.
#[test]
fn any_hit_is_a_single_terminating_proceed() {
    let out = through_pipeline(&any());
    let m = load(&out.words_unoptimized);
    assert_eq!(init_flags(&m), vec![0x205], "OpaqueKHR | TerminateOnFirstHitKHR | SkipAABBsKHR");
    assert!(has_cap(&m, Capability::RayTraversalPrimitiveCullingKHR), "SkipAABBsKHR needs primitive culling");
    assert_eq!(ops(&m, Op::RayQueryProceedKHR).len(), 1);
    assert_eq!(ops(&m, Op::LoopMerge).len(), 0);
    assert_eq!(ops(&m, Op::RayQueryGetIntersectionTypeKHR).len(), 1);
}

// Check the accel descriptor: an AccelerationStructureKHR variable in
// UniformConstant at set 0, binding 0 (the first argument), the buffer
// after it at binding 1; the ABI persists the traversal role; the feature
// set asks for ray query.
#[test]
fn accel_is_a_set_zero_descriptor_with_its_role() {
    let out = through_pipeline(&any());
    let m = load(&out.words_unoptimized);
    let accel_ty = m.types_global_values.iter().find(|i| i.class.opcode == Op::TypeAccelerationStructureKHR);
    let accel_ty = accel_ty.expect("accel type").result_id.unwrap();
    let ptr = m
        .types_global_values
        .iter()
        .find(|i| i.class.opcode == Op::TypePointer && i.operands[1] == Operand::IdRef(accel_ty))
        .expect("pointer to accel");
    assert_eq!(ptr.operands[0], Operand::StorageClass(StorageClass::UniformConstant));
    let var = m
        .types_global_values
        .iter()
        .find(|i| i.class.opcode == Op::Variable && i.result_type == ptr.result_id)
        .expect("accel variable")
        .result_id
        .unwrap();
    let deco = |d: Decoration| {
        m.annotations
            .iter()
            .find(|a| a.operands[0] == Operand::IdRef(var) && a.operands[1] == Operand::Decoration(d))
            .map(|a| a.operands[2].clone())
    };
    assert_eq!(deco(Decoration::DescriptorSet), Some(Operand::LiteralBit32(0)));
    assert_eq!(deco(Decoration::Binding), Some(Operand::LiteralBit32(0)));
    let p = out.abi.property_for_arg(0).expect("accel property");
    assert_eq!(
        (p.kind, p.role, p.set, p.binding),
        (PropertyKind::AccelerationStructure { roles: ACCEL_ROLE_TRAVERSAL }, Role::Accel, 0, 0)
    );
    assert_eq!(out.abi.property_for_arg(1).unwrap().binding, 1);
    assert!(out.features.contains(Feature::RayQuery));
}

// Check that an accel the kernel never traverses has a zero role mask, no
// binding, no descriptor, no RayQueryKHR capability, and that the next
// descriptor takes binding 0.
#[test]
fn unused_accel_has_no_descriptor_and_no_capability() {
    let src = "kernel @k(%scene: accel, %out: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  \
               buffer.write %out, u32 0, u32 7\n  return\n}\n";
    let out = through_pipeline(src);
    for words in [&out.words_unoptimized, &out.words] {
        let m = load(words);
        assert!(!has_cap(&m, Capability::RayQueryKHR));
        assert!(!m.types_global_values.iter().any(|i| i.class.opcode == Op::TypeAccelerationStructureKHR));
        assert!(m.extensions.is_empty(), "{}", out.disassembly());
    }
    let p = out.abi.property_for_arg(0).expect("accel property");
    assert_eq!((p.kind, p.binding), (PropertyKind::AccelerationStructure { roles: 0 }, NO_BINDING));
    assert_eq!(out.abi.property_for_arg(1).unwrap().binding, 0);
    assert_eq!(out.abi.descriptors().count(), 1);
    assert!(!out.features.contains(Feature::RayQuery));
    out.abi.check_shape().expect("canonical");
}

// Check a ray-query loop with candidate handlers: the lowered loop proceeds
// once per iteration, confirms triangle candidates, generates procedural
// hits, and reads the committed hit after the loop.
#[test]
fn ray_query_loop_kernel_compiles_with_candidate_handlers() {
    let src = include_str!("../../tests/ray/ray_query_loop.xir");
    let out = through_pipeline(src);
    let m = load(&out.words_unoptimized);
    assert_eq!(init_flags(&m), vec![0]);
    assert_eq!(ops(&m, Op::RayQueryProceedKHR).len(), 1);
    assert_eq!(ops(&m, Op::RayQueryConfirmIntersectionKHR).len(), 1);
    assert_eq!(ops(&m, Op::RayQueryGenerateIntersectionKHR).len(), 1);
    assert!(!ops(&m, Op::LoopMerge).is_empty());
}

// Check that a device without ray query rejects the kernel by name, and
// that an ABI asking for instance-property access without its instance
// buffer property fails its shape check.
#[test]
fn missing_ray_query_feature_and_instance_roles_are_rejected() {
    let mut dev = FeatureSet::all();
    dev.remove(Feature::RayQuery);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let reg = registry();
    let pipeline =
        Loader::new(&reg).with_search_dir(std::path::PathBuf::from(format!("{root}/pipelines"))).load("spirv").unwrap();
    let mut m = parse(&any());
    PassManager::new(&pipeline, RunOptions::default()).run(&mut m, &mut std::io::sink()).unwrap();
    let k = kernel_of(&m);
    let o = xir_spirv::CompileOptions { device_features: Some(dev), ..opts(0, false) };
    let e = xir_spirv::compile(&m, k, &o).expect_err("must be rejected");
    let msg = xir::diag::render(&e);
    assert!(msg.contains("rayQuery"), "{msg}");
    let mut abi = through_pipeline(&any()).abi;
    let p = abi.properties.iter_mut().find(|p| p.role == Role::Accel).unwrap();
    p.kind = PropertyKind::AccelerationStructure { roles: ACCEL_ROLE_TRAVERSAL | 2 };
    let err = abi.check_shape().expect_err("an instance role needs its instance buffer property");
    assert!(err.0.contains("instance-property"), "{err}");
}

// Check that the accel role masks survive the artifact codec exactly (the
// traversal mask and the zero mask of an unused accel), and that loading on
// a device without ray query is refused naming the feature.
#[test]
fn accel_roles_round_trip_through_the_artifact() {
    use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
    let unused = "kernel @k(%scene: accel, %out: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  \
                  buffer.write %out, u32 0, u32 7\n  return\n}\n";
    for (src, roles) in [(any(), ACCEL_ROLE_TRAVERSAL), (unused.to_string(), 0)] {
        let (m, out) = legalized_and_compiled(&src);
        let art = ShaderArtifact::from_compiled(&m, kernel_of(&m), &out);
        let bytes = art.encode().expect("encodes");
        let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
        assert_eq!(back, art);
        assert_eq!(back.abi.property_for_arg(0).unwrap().kind, PropertyKind::AccelerationStructure { roles });
        let mut dev = FeatureSet::all();
        dev.remove(Feature::RayQuery);
        let loaded = decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&dev));
        if roles == 0 {
            loaded.expect("an unused accel needs no ray query");
        } else {
            let e = loaded.expect_err("a device without ray query must refuse it").to_string();
            assert!(e.contains("rayQuery"), "{e}");
        }
    }
}

// Check that requirements come from reachable code only: a ray query in an
// orphan block (no predecessor), compiled directly, declares no accel
// descriptor, no `RayQueryKHR` and requires neither ray feature; the same
// query reachable declares all three.
#[test]
fn an_unreachable_ray_query_requires_nothing() {
    let kernel = |head: &str| {
        format!(
            "kernel @k(%scene: accel, %out: buffer<u32>) block_size(1, 1, 1) {{\n^entry:\n{head}\
             buffer.write %out, u32 0, u32 7\n  return\n^dead:\n  \
             %origin = aggregate f32 0.0, f32 0.0, f32 1.0 : array<f32, 3>\n  \
             %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : {RAY_TYPE}\n  \
             %h = ray.trace_any %scene, %ray, u32 255 : bool\n  %r = cast.static %h : u32\n  \
             buffer.write %out, u32 1, %r\n  return\n}}\n"
        )
    };
    let out = compile_all_presets(&kernel("  "));
    let accel = out.abi.property_for_arg(0).unwrap();
    assert_eq!(accel.kind, PropertyKind::AccelerationStructure { roles: 0 });
    assert_eq!(accel.binding, NO_BINDING);
    assert!(!has_cap(&load(&out.words_unoptimized), Capability::RayQueryKHR), "{}", out.disassembly_unoptimized());
    assert!(!out.features.contains(Feature::RayQuery), "{:?}", out.features);
    assert!(!out.features.contains(Feature::AccelerationStructure), "{:?}", out.features);
    // Reachable (the entry branches to it): traversal, descriptor and both features.
    let out = compile_all_presets(&kernel("  br target ^dead\n^live:\n  "));
    let accel = out.abi.property_for_arg(0).unwrap();
    assert_eq!(accel.kind, PropertyKind::AccelerationStructure { roles: ACCEL_ROLE_TRAVERSAL });
    assert!(out.features.contains(Feature::RayQuery) && out.features.contains(Feature::AccelerationStructure));
}
