//! The kernel's argument block and descriptor bindings (see `abi.rs` for the
//! contract): buffer, byte-buffer and texture (storage-image) arguments get
//! dense bindings in set 0;
//! value arguments get host-aligned push-constant slots after the padded
//! `uvec3` dispatch size when they all fit in 128 bytes, and otherwise are
//! all packed host-layout into the backend-owned argument block (set 0,
//! binding 0). Computed once, before emission, and returned to the caller
//! unchanged as the [`KernelAbi`], whose canonical shape is checked here too.
//! A `bindless_array` gets a metadata descriptor only when `plan::bindless`
//! says some buffer operation uses it, and the buffer heap (set 2) follows
//! the arguments only when some access reads or writes through a heap.

use xir::{ArgKind, FuncId, Function, FunctionKind, Module, Type, TypeId, TypeTable};

use crate::abi::{
    BufferStorage, KernelAbi, Property, PropertyKind, Role, DISPATCH_SIZE_BYTES, ENTRY_POINT_NAME, FIRST_VALUE_OFFSET,
    LOCAL_SET, MAX_ARGUMENT_BLOCK_SIZE, MAX_PUSH_CONSTANT_SIZE, NO_BINDING,
};
use crate::plan::layout;

/// How one kernel argument reaches the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgBinding {
    /// A `buffer<T>` descriptor.
    Buffer { binding: u32, elem: TypeId, storage: BufferStorage, int_view: bool },
    /// A `byte_buffer` descriptor (word array).
    ByteBuffer { binding: u32 },
    /// A push-constant field: `member` of the push-constant block.
    PushConstant { member: u32, offset: u32, size: u32, ty: TypeId },
    /// A field of the argument block: `member` of its `Block` struct.
    BlockValue { member: u32, offset: u32, size: u32, ty: TypeId },
    /// An `accel`: its role mask (`ACCEL_ROLE_*`, from the kernel's uses),
    /// with the traversal role its descriptor binding, with an
    /// instance-property role its instance buffer's binding.
    Accel { binding: Option<u32>, roles: u32, instances: Option<u32> },
    /// A `texture2d<T>` / `texture3d<T>` storage image (`dim` 2 or 3, `elem` the texel scalar).
    Texture { binding: u32, dim: u32, elem: TypeId },
    /// A `bindless_array`: its metadata descriptor's binding when some buffer
    /// operation uses it (`None`: no descriptor and no property).
    Bindless { metadata: Option<u32> },
}

/// The backend-owned argument block (role `ArgumentBlock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgumentBlock {
    pub binding: u32,
    /// Bytes, a multiple of 4.
    pub size: u32,
}

/// The frozen binding plan of a kernel.
#[derive(Clone, Debug)]
pub struct BindingPlan {
    pub args: Vec<ArgBinding>,
    /// Present exactly when the value arguments live in the argument block.
    pub argument_block: Option<ArgumentBlock>,
    pub abi: KernelAbi,
}

impl BindingPlan {
    /// Whether a resource of the kernel may share memory with another one
    /// (and is decorated `Aliased`): it has two or more resource arguments
    /// and does not promise `noalias`.
    pub fn may_alias(&self) -> bool {
        !self.abi.noalias && self.args.iter().filter(|a| !a.is_value()).count() > 1
    }
}

impl ArgBinding {
    /// True for a value argument (push constant or argument block).
    pub fn is_value(&self) -> bool {
        matches!(self, ArgBinding::PushConstant { .. } | ArgBinding::BlockValue { .. })
    }
}

/// Host-layout packing of value arguments from `start`: (argument, offset, size) and the end offset.
fn pack_values(t: &TypeTable, values: &[(u32, TypeId)], start: u64) -> (Vec<(u32, u32, u32)>, u64) {
    let mut offset = start;
    let mut out = Vec::new();
    for &(a, ty) in values {
        let (size, align) = push_size_align(t, ty);
        offset = offset.div_ceil(align.max(1)) * align.max(1);
        out.push((a, offset as u32, size as u32));
        offset += size;
    }
    (out, offset)
}

/// Host size and alignment of a push-constant value (a `bool` travels as a 0/1 word).
pub fn push_size_align(t: &TypeTable, ty: TypeId) -> (u64, u64) {
    if t.is_bool(ty) {
        (4, 4)
    } else {
        t.size_align(ty)
    }
}

/// Plan the bindings of kernel `k`. `Err` carries one message per rejected argument.
pub fn plan_bindings(
    m: &Module,
    k: FuncId,
    int_view: &rustc_hash::FxHashSet<u32>,
    bindless: &crate::plan::bindless::BindlessPlan,
) -> Result<BindingPlan, Vec<String>> {
    let f: &Function = m.func(k);
    let FunctionKind::Kernel { block_size, whole_blocks, noalias } = f.kind else {
        return Err(vec![format!("@{} is not a kernel", f.name)]);
    };
    let t = &m.types;
    let mut errs = Vec::new();
    let mut args = Vec::new();
    let mut props = vec![Property {
        kind: PropertyKind::ConstantValue { offset: 0, size: DISPATCH_SIZE_BYTES },
        role: Role::DispatchSize,
        arg_index: None,
        set: LOCAL_SET,
        binding: NO_BINDING,
        storage: BufferStorage::NotABuffer,
    }];
    // Value arguments first: they decide whether the argument block (binding 0) exists.
    let mut values = Vec::new();
    for (i, a) in f.args.iter().enumerate() {
        if a.kind != ArgKind::Value {
            continue;
        }
        if !t.is_data(a.ty) {
            errs.push(format!("argument {i}: `{}` is not plain data", xir::verify::type_name(t, a.ty)));
        } else if !t.is_bool(a.ty) && !t.is_scalar(a.ty) && !layout::typed_compatible(t, a.ty) {
            errs.push(format!(
                "argument {i}: `{}` has no Vulkan block layout equal to its host layout",
                xir::verify::type_name(t, a.ty)
            ));
        } else {
            values.push((i as u32, a.ty));
        }
    }
    let (mut slots, end) = pack_values(t, &values, FIRST_VALUE_OFFSET as u64);
    let mut push_total = end.div_ceil(4) * 4;
    let mut argument_block = None;
    if push_total > MAX_PUSH_CONSTANT_SIZE as u64 {
        let (block_slots, block_end) = pack_values(t, &values, 0);
        let size = block_end.div_ceil(4) * 4;
        if size > MAX_ARGUMENT_BLOCK_SIZE as u64 {
            errs.push(format!(
                "the value arguments need a {size}-byte argument block; the limit is {MAX_ARGUMENT_BLOCK_SIZE}"
            ));
        } else {
            argument_block = Some(ArgumentBlock { binding: 0, size: size as u32 });
            props.push(Property {
                kind: PropertyKind::StorageBuffer,
                role: Role::ArgumentBlock,
                arg_index: None,
                set: LOCAL_SET,
                binding: 0,
                storage: BufferStorage::Block { size: size as u32 },
            });
        }
        slots = block_slots;
        push_total = FIRST_VALUE_OFFSET as u64;
    }
    let mut next_binding = argument_block.map_or(0, |_| 1u32);
    let mut slots = slots.into_iter().peekable();
    // Member 0 of the push-constant block is the dispatch size; the argument block starts at member 0.
    let mut member = if argument_block.is_some() { 0u32 } else { 1 };
    for (i, a) in f.args.iter().enumerate() {
        let ai = i as u32;
        match (a.kind, t.get(a.ty)) {
            (ArgKind::Resource, Type::Buffer(elem)) => match layout::plan_buffer(t, *elem) {
                Ok(storage) => {
                    args.push(ArgBinding::Buffer {
                        binding: next_binding,
                        elem: *elem,
                        storage,
                        int_view: int_view.contains(&ai),
                    });
                    props.push(Property {
                        kind: PropertyKind::StorageBuffer,
                        role: Role::Buffer,
                        arg_index: Some(ai),
                        set: LOCAL_SET,
                        binding: next_binding,
                        storage,
                    });
                    next_binding += 1;
                }
                Err(e) => errs.push(format!("argument {i} (`{}`): {e}", xir::verify::type_name(t, a.ty))),
            },
            (ArgKind::Resource, Type::ByteBuffer) => {
                let storage = BufferStorage::Words { elem_size: 1, elem_align: 1 };
                args.push(ArgBinding::ByteBuffer { binding: next_binding });
                props.push(Property {
                    kind: PropertyKind::StorageBuffer,
                    role: Role::ByteBuffer,
                    arg_index: Some(ai),
                    set: LOCAL_SET,
                    binding: next_binding,
                    storage,
                });
                next_binding += 1;
            }
            (ArgKind::Resource, Type::Accel) => {
                let roles = super::ray_query::accel_roles(m, k, ai);
                let binding = (roles & crate::abi::ACCEL_ROLE_TRAVERSAL != 0).then_some(next_binding);
                props.push(Property {
                    kind: PropertyKind::AccelerationStructure { roles },
                    role: Role::Accel,
                    arg_index: Some(ai),
                    set: LOCAL_SET,
                    binding: binding.unwrap_or(NO_BINDING),
                    storage: BufferStorage::NotABuffer,
                });
                next_binding += u32::from(binding.is_some());
                let instances = (roles & !crate::abi::ACCEL_ROLE_TRAVERSAL != 0).then_some(next_binding);
                if let Some(b) = instances {
                    props.push(Property {
                        kind: PropertyKind::StorageBuffer,
                        role: Role::AccelInstance,
                        arg_index: Some(ai),
                        set: LOCAL_SET,
                        binding: b,
                        storage: BufferStorage::Typed { stride: crate::abi::ACCEL_INSTANCE_STRIDE },
                    });
                    next_binding += 1;
                }
                args.push(ArgBinding::Accel { binding, roles, instances });
            }
            (ArgKind::Resource, Type::Texture { dim, elem }) => match crate::abi::texel_kind(t, *elem) {
                Some(texel) if matches!(dim, 2 | 3) => {
                    let dim = u32::from(*dim);
                    args.push(ArgBinding::Texture { binding: next_binding, dim, elem: *elem });
                    props.push(Property {
                        kind: PropertyKind::StorageImage { dim, texel },
                        role: Role::Texture,
                        arg_index: Some(ai),
                        set: LOCAL_SET,
                        binding: next_binding,
                        storage: BufferStorage::NotABuffer,
                    });
                    next_binding += 1;
                }
                _ => errs.push(format!(
                    "argument {i}: `{}` is not a 2D or 3D texture of f32, i32 or u32 texels",
                    xir::verify::type_name(t, a.ty)
                )),
            },
            (ArgKind::Resource, Type::BindlessArray) => {
                let metadata = bindless.need(ai).metadata.then_some(next_binding);
                args.push(ArgBinding::Bindless { metadata });
                if let Some(binding) = metadata {
                    props.push(Property {
                        kind: PropertyKind::StorageBuffer,
                        role: Role::BindlessMetadata,
                        arg_index: Some(ai),
                        set: LOCAL_SET,
                        binding,
                        storage: BufferStorage::Typed { stride: crate::abi::BINDLESS_METADATA_STRIDE },
                    });
                    next_binding += 1;
                }
            }
            (ArgKind::Resource, _) => errs.push(format!(
                "argument {i}: resource `{}` is not part of the Vulkan kernel ABI of this backend",
                xir::verify::type_name(t, a.ty)
            )),
            (ArgKind::Reference, _) => {
                errs.push(format!("argument {i}: kernel reference arguments are not part of the Vulkan kernel ABI"))
            }
            (ArgKind::Value, _) => {
                let Some((_, offset, size)) = slots.next_if(|s| s.0 == ai) else { continue };
                let (binding, role) = if argument_block.is_some() {
                    (ArgBinding::BlockValue { member, offset, size, ty: a.ty }, Role::BlockValue)
                } else {
                    (ArgBinding::PushConstant { member, offset, size, ty: a.ty }, Role::PushValue)
                };
                args.push(binding);
                props.push(Property {
                    kind: PropertyKind::ConstantValue { offset, size },
                    role,
                    arg_index: Some(ai),
                    set: LOCAL_SET,
                    binding: NO_BINDING,
                    storage: BufferStorage::NotABuffer,
                });
                member += 1;
            }
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    // The global buffer heap: the first heap set (no sampler or texture heaps are emitted yet).
    if bindless.heap() {
        props.push(Property {
            kind: PropertyKind::BufferHeap,
            role: Role::Heap,
            arg_index: None,
            set: crate::abi::FIRST_HEAP_SET,
            binding: 0,
            storage: BufferStorage::NotABuffer,
        });
    }
    let abi = KernelAbi {
        entry_point: ENTRY_POINT_NAME.to_string(),
        block_size,
        push_constant_size: push_total as u32,
        whole_blocks,
        noalias,
        properties: props,
    };
    abi.check_shape().map_err(|e| vec![format!("internal: the planned kernel ABI is not canonical: {e}")])?;
    Ok(BindingPlan { args, argument_block, abi })
}
