//! The kernel's argument block and descriptor bindings (see `abi.rs` for the
//! contract): buffer and byte-buffer arguments get dense bindings in set 0,
//! value arguments get host-aligned push-constant slots after the padded
//! `uvec3` dispatch size. Computed once, before emission, and returned to
//! the caller unchanged as the [`KernelAbi`].

use xir::{ArgKind, FuncId, Function, FunctionKind, Module, Type, TypeId, TypeTable};

use crate::abi::{
    BufferStorage, KernelAbi, Property, PropertyKind, DESCRIPTOR_SET, ENTRY_POINT_NAME, FIRST_VALUE_OFFSET,
    MAX_PUSH_CONSTANT_SIZE, NO_BINDING,
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
}

/// The frozen binding plan of a kernel.
#[derive(Clone, Debug)]
pub struct BindingPlan {
    pub args: Vec<ArgBinding>,
    pub abi: KernelAbi,
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
pub fn plan_bindings(m: &Module, k: FuncId, int_view: &rustc_hash::FxHashSet<u32>) -> Result<BindingPlan, Vec<String>> {
    let f: &Function = m.func(k);
    let FunctionKind::Kernel { block_size } = f.kind else {
        return Err(vec![format!("@{} is not a kernel", f.name)]);
    };
    let t = &m.types;
    let mut errs = Vec::new();
    let mut args = Vec::new();
    let mut props = vec![Property {
        kind: PropertyKind::DispatchSize { offset: 0 },
        arg_index: None,
        set: DESCRIPTOR_SET,
        binding: NO_BINDING,
        storage: BufferStorage::NotABuffer,
    }];
    let mut next_binding = 0u32;
    let mut offset = FIRST_VALUE_OFFSET as u64;
    let mut member = 1u32;
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
                        arg_index: Some(ai),
                        set: DESCRIPTOR_SET,
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
                    kind: PropertyKind::ByteBuffer,
                    arg_index: Some(ai),
                    set: DESCRIPTOR_SET,
                    binding: next_binding,
                    storage,
                });
                next_binding += 1;
            }
            (ArgKind::Resource, _) => errs.push(format!(
                "argument {i}: resource `{}` is not part of the Vulkan kernel ABI of this backend",
                xir::verify::type_name(t, a.ty)
            )),
            (ArgKind::Reference, _) => {
                errs.push(format!("argument {i}: kernel reference arguments are not part of the Vulkan kernel ABI"))
            }
            (ArgKind::Value, _) => {
                if !t.is_data(a.ty) {
                    errs.push(format!("argument {i}: `{}` is not plain data", xir::verify::type_name(t, a.ty)));
                    continue;
                }
                if !t.is_bool(a.ty) && !t.is_scalar(a.ty) && !layout::typed_compatible(t, a.ty) {
                    errs.push(format!(
                        "argument {i}: `{}` has no push-constant layout equal to its host layout",
                        xir::verify::type_name(t, a.ty)
                    ));
                    continue;
                }
                let (size, align) = push_size_align(t, a.ty);
                offset = offset.div_ceil(align.max(1)) * align.max(1);
                args.push(ArgBinding::PushConstant { member, offset: offset as u32, size: size as u32, ty: a.ty });
                props.push(Property {
                    kind: PropertyKind::PushConstantValue { offset: offset as u32, size: size as u32 },
                    arg_index: Some(ai),
                    set: DESCRIPTOR_SET,
                    binding: NO_BINDING,
                    storage: BufferStorage::NotABuffer,
                });
                offset += size;
                member += 1;
            }
        }
    }
    let total = offset.div_ceil(4) * 4;
    if total > MAX_PUSH_CONSTANT_SIZE as u64 {
        errs.push(format!(
            "the value arguments need {total} bytes of push constants (dispatch size included); the limit is {MAX_PUSH_CONSTANT_SIZE}"
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let abi = KernelAbi {
        entry_point: ENTRY_POINT_NAME.to_string(),
        block_size,
        push_constant_size: total as u32,
        properties: props,
    };
    Ok(BindingPlan { args, abi })
}
