//! The properties section: the [`KernelAbi`] as fixed 44-byte records
//! (public kind, internal role, argument, set, binding, storage), and the
//! canonical-shape check ([`KernelAbi::check_shape`]) that both the writer
//! and the reader run (docs/artifact.md, "Properties"). A kind, role or
//! storage code this build does not know fails closed, as does a non-zero
//! parameter word that the code does not use.

use crate::abi::{BufferStorage, KernelAbi, Property, PropertyKind, Role, TexelKind};

use super::wire::{Reader, Writer};
use super::{ArtifactError, Section};

/// Most properties one artifact may carry.
pub const MAX_PROPERTIES: u32 = 1024;
/// Words in one property record.
pub const RECORD_WORDS: usize = 11;
const NO_ARG: u32 = u32::MAX;

const KIND_CONSTANT_VALUE: u32 = 1;
const KIND_STORAGE_BUFFER: u32 = 2;
const KIND_STORAGE_IMAGE: u32 = 3;
const KIND_SAMPLER_HEAP: u32 = 4;
const KIND_BUFFER_HEAP: u32 = 5;
const KIND_TEXTURE2D_HEAP: u32 = 6;
const KIND_TEXTURE3D_HEAP: u32 = 7;
const KIND_ACCEL: u32 = 8;
const KIND_UNIFORM_BUFFER: u32 = 9;

const ROLES: [(u32, Role); 12] = [
    (1, Role::DispatchSize),
    (2, Role::PushValue),
    (3, Role::BlockValue),
    (4, Role::ArgumentBlock),
    (5, Role::Buffer),
    (6, Role::ByteBuffer),
    (7, Role::Texture),
    (8, Role::Heap),
    (9, Role::Accel),
    (10, Role::BindlessMetadata),
    (11, Role::ConstantData),
    (12, Role::AccelInstance),
];

const TEXELS: [(u32, TexelKind); 3] = [(1, TexelKind::F32), (2, TexelKind::I32), (3, TexelKind::U32)];

const STORAGE_NOT_A_BUFFER: u32 = 0;
const STORAGE_TYPED: u32 = 1;
const STORAGE_WORDS: u32 = 2;
const STORAGE_BLOCK: u32 = 3;

/// Check the canonical shape; `Err` names the first violation.
pub fn check_shape(abi: &KernelAbi) -> Result<(), ArtifactError> {
    abi.check_shape().map_err(|e| ArtifactError::NonCanonicalAbi(e.0))
}

fn code_of<T: PartialEq + Copy>(table: &[(u32, T)], v: T) -> u32 {
    table.iter().find(|(_, x)| *x == v).map_or(0, |(c, _)| *c)
}

fn from_code<T: Copy>(table: &[(u32, T)], c: u32) -> Option<T> {
    table.iter().find(|(k, _)| *k == c).map(|(_, x)| *x)
}

/// Bits of the dispatch-size record's role parameter: the kernel's flags.
const FLAG_WHOLE_BLOCKS: u32 = 1;
const FLAG_NOALIAS: u32 = 2;
const KERNEL_FLAGS: u32 = FLAG_WHOLE_BLOCKS | FLAG_NOALIAS;

fn kernel_flags(abi: &KernelAbi) -> u32 {
    (if abi.whole_blocks { FLAG_WHOLE_BLOCKS } else { 0 }) | (if abi.noalias { FLAG_NOALIAS } else { 0 })
}

/// The section bytes of a canonical ABI.
pub fn encode(abi: &KernelAbi) -> Result<Vec<u8>, ArtifactError> {
    check_shape(abi)?;
    if abi.properties.len() > MAX_PROPERTIES as usize {
        return Err(ArtifactError::NonCanonicalAbi(format!(
            "{} properties (limit {MAX_PROPERTIES})",
            abi.properties.len()
        )));
    }
    let mut w = Writer::default();
    for d in abi.block_size {
        w.u32(d);
    }
    w.u32(abi.push_constant_size);
    w.u32(abi.properties.len() as u32);
    for p in &abi.properties {
        let (kind, k0, k1) = match p.kind {
            PropertyKind::ConstantValue { offset, size } => (KIND_CONSTANT_VALUE, offset, size),
            PropertyKind::StorageBuffer => (KIND_STORAGE_BUFFER, 0, 0),
            PropertyKind::StorageImage { dim, texel } => (KIND_STORAGE_IMAGE, dim, code_of(&TEXELS, texel)),
            PropertyKind::SamplerHeap => (KIND_SAMPLER_HEAP, 0, 0),
            PropertyKind::BufferHeap => (KIND_BUFFER_HEAP, 0, 0),
            PropertyKind::Texture2dHeap => (KIND_TEXTURE2D_HEAP, 0, 0),
            PropertyKind::Texture3dHeap => (KIND_TEXTURE3D_HEAP, 0, 0),
            PropertyKind::AccelerationStructure { roles } => (KIND_ACCEL, roles, 0),
            PropertyKind::UniformBuffer => (KIND_UNIFORM_BUFFER, 0, 0),
        };
        let (storage, s0, s1) = match p.storage {
            BufferStorage::NotABuffer => (STORAGE_NOT_A_BUFFER, 0, 0),
            BufferStorage::Typed { stride } => (STORAGE_TYPED, stride, 0),
            BufferStorage::Words { elem_size, elem_align } => (STORAGE_WORDS, elem_size, elem_align),
            BufferStorage::Block { size } => (STORAGE_BLOCK, size, 0),
        };
        let role = code_of(&ROLES, p.role);
        let role_param = if p.role == Role::DispatchSize { kernel_flags(abi) } else { 0 };
        for v in [kind, k0, k1, role, role_param, p.arg_index.unwrap_or(NO_ARG), p.set, p.binding, storage, s0, s1] {
            w.u32(v);
        }
    }
    Ok(w.bytes)
}

/// Parse the section (entry point from the header) and check its canonical shape.
pub fn decode(bytes: &[u8], entry_point: &str) -> Result<KernelAbi, ArtifactError> {
    let mut r = Reader::new(bytes, Section::Properties);
    let block_size = [r.u32()?, r.u32()?, r.u32()?];
    let push_constant_size = r.u32()?;
    let n = r.count("property", MAX_PROPERTIES)?;
    let mut properties = Vec::with_capacity(n as usize);
    let (mut whole_blocks, mut noalias) = (false, false);
    for i in 0..n {
        let mut f = [0u32; RECORD_WORDS];
        for v in &mut f {
            *v = r.u32()?;
        }
        let [kind, k0, k1, role, r0, arg, set, binding, storage, s0, s1] = f;
        let no_params = k0 == 0 && k1 == 0;
        let kind = match kind {
            KIND_CONSTANT_VALUE => Some(PropertyKind::ConstantValue { offset: k0, size: k1 }),
            KIND_STORAGE_BUFFER if no_params => Some(PropertyKind::StorageBuffer),
            KIND_STORAGE_IMAGE => from_code(&TEXELS, k1).map(|texel| PropertyKind::StorageImage { dim: k0, texel }),
            KIND_SAMPLER_HEAP if no_params => Some(PropertyKind::SamplerHeap),
            KIND_BUFFER_HEAP if no_params => Some(PropertyKind::BufferHeap),
            KIND_TEXTURE2D_HEAP if no_params => Some(PropertyKind::Texture2dHeap),
            KIND_TEXTURE3D_HEAP if no_params => Some(PropertyKind::Texture3dHeap),
            KIND_ACCEL if k1 == 0 => Some(PropertyKind::AccelerationStructure { roles: k0 }),
            KIND_UNIFORM_BUFFER if no_params => Some(PropertyKind::UniformBuffer),
            _ => None,
        };
        let Some(kind) = kind else {
            return Err(r.malformed(format!(
                "property {i}: unknown kind code {} (or parameters {k0}, {k1} it does not take)",
                f[0]
            )));
        };
        // The dispatch size's role parameter holds the kernel's flags
        // (`kernel_flags`); every other role takes none.
        let role = from_code(&ROLES, role);
        let Some(role) = role.filter(|&x| r0 == 0 || (x == Role::DispatchSize && r0 & !KERNEL_FLAGS == 0)) else {
            return Err(r.malformed(format!("property {i}: unknown role code {} (or role parameter {r0})", f[3])));
        };
        if role == Role::DispatchSize {
            whole_blocks = r0 & FLAG_WHOLE_BLOCKS != 0;
            noalias = r0 & FLAG_NOALIAS != 0;
        }
        let storage = match storage {
            STORAGE_NOT_A_BUFFER if s0 == 0 && s1 == 0 => BufferStorage::NotABuffer,
            STORAGE_TYPED if s1 == 0 => BufferStorage::Typed { stride: s0 },
            STORAGE_WORDS => BufferStorage::Words { elem_size: s0, elem_align: s1 },
            STORAGE_BLOCK if s1 == 0 => BufferStorage::Block { size: s0 },
            other => {
                return Err(
                    r.malformed(format!("property {i}: unknown storage code {other} (or non-zero unused fields)"))
                )
            }
        };
        let arg_index = (arg != NO_ARG).then_some(arg);
        properties.push(Property { kind, role, arg_index, set, binding, storage });
    }
    r.finish()?;
    let abi = KernelAbi {
        entry_point: entry_point.to_string(),
        block_size,
        push_constant_size,
        whole_blocks,
        noalias,
        properties,
    };
    check_shape(&abi)?;
    Ok(abi)
}

/// The module's resource interface against the ABI: every descriptor
/// variable the SPIR-V declares (a `DescriptorSet` + `Binding` pair) must be
/// an ABI descriptor at that set and binding whose kind matches the
/// variable (`StorageBuffer` class for `StorageBuffer`; a storage image of
/// the property's dimension and texel type for `StorageImage`; an
/// acceleration structure for `AccelerationStructure`; a `StorageBuffer`
/// runtime array for `BufferHeap`; a `Uniform` struct for `UniformBuffer`;
/// an array of 16 samplers for `SamplerHeap`; a runtime array of sampled
/// f32 images of the heap's dimension for `Texture2dHeap` / `Texture3dHeap`),
/// and no two variables
/// share a set and binding. Otherwise a loaded
/// module would read a descriptor the runner never binds, or binds as
/// something else. (The converse may not hold: the optimizer can drop a
/// variable the kernel never uses; the runner still binds it.)
pub fn check_interface(m: &rspirv::dr::Module, abi: &KernelAbi) -> Result<(), ArtifactError> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Dim, Op, StorageClass};
    let bad = |msg: String| Err(ArtifactError::NonCanonicalAbi(format!("module interface: {msg}")));
    let decoration = |id: u32, want: Decoration| {
        m.annotations.iter().find_map(|a| match a.operands.as_slice() {
            [Operand::IdRef(t), Operand::Decoration(d), Operand::LiteralBit32(v)]
                if a.class.opcode == Op::Decorate && *t == id && *d == want =>
            {
                Some(*v)
            }
            _ => None,
        })
    };
    let def = |id: u32| m.types_global_values.iter().find(|i| i.result_id == Some(id));
    let mut seen = std::collections::BTreeSet::new();
    for var in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let id = var.result_id.unwrap_or(0);
        let (set, binding) = (decoration(id, Decoration::DescriptorSet), decoration(id, Decoration::Binding));
        let (Some(set), Some(binding)) = (set, binding) else {
            if set.is_some() || binding.is_some() {
                return bad(format!("variable %{id} has only one of DescriptorSet and Binding"));
            }
            continue;
        };
        if !seen.insert((set, binding)) {
            return bad(format!("two variables at set {set}, binding {binding}"));
        }
        let Some(p) = abi.descriptors().find(|p| p.set == set && p.binding == binding) else {
            return bad(format!("variable %{id} at set {set}, binding {binding} is not an ABI descriptor"));
        };
        let class = var.operands.first();
        let pointee = var.result_type.and_then(def).and_then(|ptr| match ptr.operands.as_slice() {
            [_, Operand::IdRef(t)] => def(*t),
            _ => None,
        });
        let ok = match (p.kind, class, pointee) {
            (PropertyKind::StorageBuffer, Some(Operand::StorageClass(StorageClass::StorageBuffer)), Some(_)) => true,
            (PropertyKind::UniformBuffer, Some(Operand::StorageClass(StorageClass::Uniform)), Some(t)) => {
                t.class.opcode == Op::TypeStruct
            }
            // The bindless buffer heap: an unbounded array of storage-buffer blocks.
            (PropertyKind::BufferHeap, Some(Operand::StorageClass(StorageClass::StorageBuffer)), Some(t)) => {
                t.class.opcode == Op::TypeRuntimeArray
            }
            (
                PropertyKind::StorageImage { dim, texel },
                Some(Operand::StorageClass(StorageClass::UniformConstant)),
                Some(t),
            ) if t.class.opcode == Op::TypeImage => {
                let want_dim = if dim == 2 { Dim::Dim2D } else { Dim::Dim3D };
                let sampled = match t.operands.first() {
                    Some(Operand::IdRef(s)) => def(*s),
                    _ => None,
                };
                let texel_ok = sampled.is_some_and(|s| {
                    matches!(
                        (texel, s.class.opcode, s.operands.as_slice()),
                        (TexelKind::F32, Op::TypeFloat, [Operand::LiteralBit32(32), ..])
                            | (TexelKind::I32, Op::TypeInt, [Operand::LiteralBit32(32), Operand::LiteralBit32(1)])
                            | (TexelKind::U32, Op::TypeInt, [Operand::LiteralBit32(32), Operand::LiteralBit32(0)])
                    )
                });
                texel_ok && t.operands.get(1) == Some(&Operand::Dim(want_dim))
            }
            (
                PropertyKind::AccelerationStructure { .. },
                Some(Operand::StorageClass(StorageClass::UniformConstant)),
                Some(t),
            ) => t.class.opcode == Op::TypeAccelerationStructureKHR,
            // The sampler heap: an array of SAMPLER_COUNT samplers.
            (PropertyKind::SamplerHeap, Some(Operand::StorageClass(StorageClass::UniformConstant)), Some(t)) => {
                let elem = match t.operands.first() {
                    Some(Operand::IdRef(e)) => def(*e),
                    _ => None,
                };
                let len = match t.operands.get(1) {
                    Some(Operand::IdRef(n)) => def(*n).and_then(|c| c.operands.first().cloned()),
                    _ => None,
                };
                t.class.opcode == Op::TypeArray
                    && elem.is_some_and(|e| e.class.opcode == Op::TypeSampler)
                    && len == Some(Operand::LiteralBit32(crate::abi::SAMPLER_COUNT))
            }
            // A texture heap: an unbounded array of sampled f32 images of its dimension.
            (
                PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap,
                Some(Operand::StorageClass(StorageClass::UniformConstant)),
                Some(t),
            ) if t.class.opcode == Op::TypeRuntimeArray => {
                let want_dim = if p.kind == PropertyKind::Texture2dHeap { Dim::Dim2D } else { Dim::Dim3D };
                let image = match t.operands.first() {
                    Some(Operand::IdRef(e)) => def(*e),
                    _ => None,
                };
                image.is_some_and(|i| {
                    i.class.opcode == Op::TypeImage
                        && i.operands.get(1) == Some(&Operand::Dim(want_dim))
                        && i.operands.get(5) == Some(&Operand::LiteralBit32(1))
                        && matches!(i.operands.first(), Some(Operand::IdRef(s)) if def(*s).is_some_and(|s| s.class.opcode == Op::TypeFloat))
                })
            }
            _ => false,
        };
        if !ok {
            return bad(format!(
                "variable %{id} at set {set}, binding {binding} does not have the shape of {:?}",
                p.kind
            ));
        }
    }
    Ok(())
}
