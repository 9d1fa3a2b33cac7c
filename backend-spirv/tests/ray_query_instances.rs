//! Accel instance-property access (`accel.instance_*`, `accel.set_instance_*`):
//! exact module and ABI properties (instance reads only: an instance-buffer
//! storage descriptor, no accel descriptor, no `RayQueryKHR`; traversal only:
//! no instance buffer; both: the accel descriptor, then the instance buffer
//! at the next binding), the shape check and the artifact codec on the
//! instance role. The runs on a Vulkan device (reads and writes of every
//! instance's transform, user id and mask; traversal beside instance
//! access) are `vulkan/tests/ray_query_instances_vulkan.rs`.

mod common;

use common::*;
use rspirv::spirv::{Capability, Decoration, StorageClass};
use xir_spirv::abi::{
    Role, ACCEL_INSTANCE_STRIDE, ACCEL_ROLE_INSTANCE_READ, ACCEL_ROLE_INSTANCE_WRITE, ACCEL_ROLE_TRAVERSAL, NO_BINDING,
};
use xir_spirv::{Feature, PropertyKind};

/// Reads every property of instance `x`, writes them out, then writes new ones.
const READ_WRITE: &str = include_str!("kernels/ray_query_instances_read_write.xir");

const READ_ONLY: &str = r#"
kernel @inst(%scene: accel, %ids: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %uid = accel.instance_user_id %scene, %x : u32
  buffer.write %ids, %x, %uid
  return
}
"#;

const TRAVERSE_ONLY: &str = r#"
kernel @inst(%scene: accel, %ids: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %ray = aggregate array<f32, 3> [0.0, 0.0, 10.0], f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %h = ray.trace_any %scene, %ray, u32 255 : bool
  %r = cast.static %h : u32
  buffer.write %ids, %x, %r
  return
}
"#;

/// Traverses (each thread one ray), reads the transform of the instance it
/// hit (or of instance 0), and renames that thread's own instance: the
/// structure and the instance descriptor are one buffer on the device.
const TRAVERSE_AND_ACCESS: &str = include_str!("kernels/ray_query_instances_traverse_and_access.xir");

fn has_cap(m: &SpvModule, c: Capability) -> bool {
    m.capabilities.iter().any(|i| i.operands[0] == Operand::Capability(c))
}

/// Decorations of `id`.
fn decorations(m: &SpvModule, id: u32) -> Vec<Decoration> {
    m.annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate && a.operands[0] == Operand::IdRef(id))
        .map(|a| match a.operands[1] {
            Operand::Decoration(d) => d,
            _ => unreachable!("OpDecorate names a decoration"),
        })
        .collect()
}

/// The binding and decorations of each `StorageBuffer` variable whose
/// pointee is a runtime array (stride 64) of 16-member records.
fn instance_buffers(m: &SpvModule) -> Vec<(u32, Vec<Decoration>)> {
    let stride64: Vec<u32> = m
        .annotations
        .iter()
        .filter(|a| {
            a.operands[1] == Operand::Decoration(Decoration::ArrayStride)
                && a.operands[2] == Operand::LiteralBit32(ACCEL_INSTANCE_STRIDE)
        })
        .map(|a| a.operands[0].unwrap_id_ref())
        .collect();
    let types = &m.types_global_values;
    let def = |id: u32| types.iter().find(|i| i.result_id == Some(id));
    types
        .iter()
        .filter(|v| {
            v.class.opcode == Op::Variable && v.operands[0] == Operand::StorageClass(StorageClass::StorageBuffer)
        })
        .filter(|v| {
            let ptr = def(v.result_type.unwrap()).unwrap();
            let block = def(ptr.operands[1].unwrap_id_ref()).unwrap();
            let Some(rta) = block.operands.first().map(|o| o.unwrap_id_ref()) else { return false };
            let record = def(def(rta).unwrap().operands[0].unwrap_id_ref()).unwrap();
            stride64.contains(&rta) && record.class.opcode == Op::TypeStruct && record.operands.len() == 16
        })
        .map(|v| {
            let id = v.result_id.unwrap();
            let binding = m
                .annotations
                .iter()
                .find(|a| {
                    a.operands[0] == Operand::IdRef(id) && a.operands[1] == Operand::Decoration(Decoration::Binding)
                })
                .map(|a| a.operands[2].clone());
            let Some(Operand::LiteralBit32(b)) = binding else { panic!("instance buffer without a binding") };
            (b, decorations(m, id))
        })
        .collect()
}

fn accel_types(m: &SpvModule) -> usize {
    m.types_global_values.iter().filter(|i| i.class.opcode == Op::TypeAccelerationStructureKHR).count()
}

// Check that instance reads alone make an instance-buffer descriptor (set 0,
// binding 0; not NonWritable, as the kernel writes memory that could alias
// it, like every user buffer) and nothing of ray query: no accel
// descriptor or type, no RayQueryKHR capability or extension, no ray-query
// feature; the ABI carries the read role on a descriptor-free accel
// property followed by the instance buffer property.
#[test]
fn instance_reads_only_bind_the_instance_buffer_and_no_accel() {
    for level in [0u8, 2] {
        let (_, out) = through_spirv(READ_ONLY, level);
        for words in [&out.words_unoptimized, &out.words] {
            let m = load(words);
            assert!(!has_cap(&m, Capability::RayQueryKHR));
            assert_eq!(accel_types(&m), 0, "no accel descriptor");
            assert!(m.extensions.is_empty());
            let bufs = instance_buffers(&m);
            assert_eq!(bufs.len(), 1, "{}", out.disassembly());
            assert_eq!(bufs[0].0, 0);
            assert!(!bufs[0].1.contains(&Decoration::NonWritable), "the kernel writes a buffer");
            assert!(bufs[0].1.contains(&Decoration::Aliased), "two resource arguments may alias");
        }
        let p = &out.abi.properties;
        let accel = out.abi.property_for_arg(0).unwrap();
        assert_eq!(
            (accel.kind, accel.binding),
            (PropertyKind::AccelerationStructure { roles: ACCEL_ROLE_INSTANCE_READ }, NO_BINDING)
        );
        let inst = p.iter().find(|q| q.role == Role::AccelInstance).expect("instance buffer property");
        assert_eq!((inst.kind, inst.arg_index, inst.set, inst.binding), (PropertyKind::StorageBuffer, Some(0), 0, 0));
        assert_eq!(out.abi.property_for_arg(1).unwrap().binding, 1);
        assert_eq!(out.abi.descriptors().count(), 2);
        assert!(!out.features.contains(Feature::RayQuery));
        assert!(!out.features.contains(Feature::AccelerationStructure));
        out.abi.check_shape().expect("canonical");
    }
}

// Check that traversal alone makes no instance buffer, and that traversal
// with instance access binds the accel first and its instance buffer at the
// next binding (writable: the kernel writes instances).
#[test]
fn traversal_only_has_no_instance_buffer_and_both_roles_bind_two_descriptors() {
    let (_, out) = through_spirv(TRAVERSE_ONLY, 0);
    let m = load(&out.words);
    assert!(instance_buffers(&m).is_empty());
    assert!(out.abi.properties.iter().all(|p| p.role != Role::AccelInstance));
    assert_eq!(
        out.abi.property_for_arg(0).unwrap().kind,
        PropertyKind::AccelerationStructure { roles: ACCEL_ROLE_TRAVERSAL }
    );
    let (_, out) = through_spirv(TRAVERSE_AND_ACCESS, 0);
    let m = load(&out.words);
    let roles = ACCEL_ROLE_TRAVERSAL | ACCEL_ROLE_INSTANCE_READ | ACCEL_ROLE_INSTANCE_WRITE;
    let accel = out.abi.property_for_arg(0).unwrap();
    assert_eq!((accel.kind, accel.binding), (PropertyKind::AccelerationStructure { roles }, 0));
    let bufs = instance_buffers(&m);
    assert_eq!(bufs.len(), 1);
    assert_eq!(bufs[0].0, 1, "the instance buffer follows the accel descriptor");
    assert!(!bufs[0].1.contains(&Decoration::NonWritable), "written instances are writable");
    assert!(has_cap(&m, Capability::RayQueryKHR));
    assert_eq!(accel_types(&m), 1);
    let atomics = m.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.instructions);
    let ops: Vec<Op> = atomics.map(|i| i.class.opcode).filter(|o| matches!(o, Op::AtomicAnd | Op::AtomicOr)).collect();
    assert_eq!(ops, vec![Op::AtomicAnd, Op::AtomicOr], "the user id is replaced in place, keeping the mask bits");
    out.abi.check_shape().expect("canonical");
}

// Check the shape check and the artifact codec on the instance role: an
// instance role without its buffer, or a buffer at the wrong binding, is
// refused; the canonical ABI round-trips exactly through an artifact, which
// loads on a device without ray query.
#[test]
fn instance_roles_are_checked_and_round_trip_through_the_artifact() {
    use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
    let (m, out) = through_spirv(READ_WRITE, 0);
    let art = ShaderArtifact::from_compiled(&m, kernel_of(&m), &out);
    let bytes = art.encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    let roles = ACCEL_ROLE_INSTANCE_READ | ACCEL_ROLE_INSTANCE_WRITE;
    assert_eq!(back.abi.property_for_arg(0).unwrap().kind, PropertyKind::AccelerationStructure { roles });
    let mut no_ray = xir_spirv::FeatureSet::all();
    no_ray.remove(Feature::RayQuery);
    no_ray.remove(Feature::AccelerationStructure);
    decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&no_ray)).expect("instance access needs no ray query");
    let mut no_buffer = out.abi.clone();
    no_buffer.properties.retain(|p| p.role != Role::AccelInstance);
    let e = no_buffer.check_shape().expect_err("an instance role needs its buffer");
    assert!(e.0.contains("instance buffer"), "{e}");
    let mut moved = out.abi.clone();
    moved.properties.iter_mut().find(|p| p.role == Role::AccelInstance).unwrap().binding = 5;
    assert!(moved.check_shape().is_err());
    let mut unknown = out.abi.clone();
    unknown.properties.iter_mut().find(|p| p.role == Role::Accel).unwrap().kind =
        PropertyKind::AccelerationStructure { roles: roles | 8 };
    assert!(unknown.check_shape().unwrap_err().0.contains("unknown bits"));
}
