//! The kernel ABI shared by the SPIR-V backend and the Vulkan runner.
//!
//! This file is the contract between code generation (`xir-spirv`) and every
//! consumer that binds descriptors and push constants (the Vulkan runner, the
//! artifact codec). It is plain data with serde so it can be persisted beside
//! the SPIR-V words.
//!
//! # Layout
//!
//! - **Entry point**: always named `"main"`, execution model `GLCompute`,
//!   `LocalSize` = the kernel's `block_size`.
//! - **Descriptors**: descriptor set 0 only. Each `buffer<T>` or `byte_buffer`
//!   kernel argument gets one `StorageBuffer` descriptor; `binding` is the
//!   dense index over those arguments in argument order (the first buffer
//!   argument is binding 0, the second binding 1, ...). Value arguments get no
//!   descriptor.
//! - **Push constants** (one `Block`, `PushConstant` storage class):
//!   offset 0 holds `dispatch_size` as a `uvec3` (12 bytes, padded to 16);
//!   then every value (non-resource) argument in argument order, each at its
//!   natural host alignment (`TypeTable::size_align`). The total must be at most
//!   128 bytes (the Vulkan guaranteed minimum); larger kernels are rejected at
//!   the handoff with a diagnostic. `push_constant_size` is the total in bytes,
//!   rounded up to 4.
//! - Push-constant entries appear in `properties` as *descriptor-free
//!   pseudo-properties* (`PushConstantValue`, `DispatchSize`) with
//!   `arg_index`, `set = 0`, `binding = u32::MAX` and `storage = NotABuffer`.
//!   Consumers must ignore them during descriptor lookup regardless of their
//!   position in the list.
//! - **Bounds check at entry**: a thread whose `dispatch_id` (the
//!   `GlobalInvocationId` builtin) is `>= dispatch_size` in any dimension
//!   returns immediately, before executing the kernel body. The runner may
//!   therefore round the workgroup count up freely.
//! - **Special registers** map to builtins: `dispatch_id` ->
//!   `GlobalInvocationId`, `thread_id` -> `LocalInvocationId`, `block_id` ->
//!   `WorkgroupId`, `block_size` -> the constant `LocalSize`, `dispatch_size` ->
//!   the push-constant field.
//!
//! # Buffer data
//!
//! Buffer contents are the **host layout** of the element type (see
//! `TypeTable::size_align` / `struct_offsets` in `framework/src/ir/types.rs`).
//! When that layout is expressible as a Vulkan typed storage buffer, the
//! property says `Typed { stride }` (the host element size). Otherwise the
//! buffer is accessed as an array of `uint32` words:
//!
//! - `bool` elements are stored as one `u32` word each holding 0 or 1
//!   (`Words { elem_size: 4, elem_align: 4 }`); the host must write 0/1 words;
//! - 64-bit 3- and 4-component vectors (whose Vulkan alignment, 32 bytes,
//!   differs from the host's 16-byte cap) and aggregates containing them are
//!   stored byte-exactly at host offsets (`Words { elem_size, elem_align }`
//!   with the host element size and alignment).
//!
//! `byte_buffer` arguments are always `Words { elem_size: 1, elem_align: 1 }`.

use serde::{Deserialize, Serialize};

/// The name of every kernel's SPIR-V entry point.
pub const ENTRY_POINT_NAME: &str = "main";
/// Largest push-constant block accepted (Vulkan's guaranteed minimum `maxPushConstantsSize`).
pub const MAX_PUSH_CONSTANT_SIZE: u32 = 128;
/// Offset of the first value argument in the push-constant block (after the padded `uvec3` dispatch size).
pub const FIRST_VALUE_OFFSET: u32 = 16;
/// The descriptor set holding every kernel buffer.
pub const DESCRIPTOR_SET: u32 = 0;
/// `binding` of push-constant pseudo-properties, which have no descriptor.
pub const NO_BINDING: u32 = u32::MAX;

/// Everything a runtime needs to bind and dispatch one compiled kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelAbi {
    /// Always [`ENTRY_POINT_NAME`].
    pub entry_point: String,
    /// Workgroup size (`LocalSize`).
    pub block_size: [u32; 3],
    /// Bytes of push constants the pipeline layout must declare (0 never: dispatch size is always present).
    pub push_constant_size: u32,
    /// Descriptors and push-constant pseudo-properties, in argument order; `DispatchSize` first.
    pub properties: Vec<Property>,
}

/// One binding or push-constant field of the kernel interface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    pub kind: PropertyKind,
    /// The kernel argument this property serves (`None` for `DispatchSize`).
    pub arg_index: Option<u32>,
    /// Descriptor set ([`DESCRIPTOR_SET`]).
    pub set: u32,
    /// Descriptor binding; [`NO_BINDING`] for push-constant pseudo-properties.
    pub binding: u32,
    /// How the buffer's elements are stored; `NotABuffer` for push constants.
    pub storage: BufferStorage,
}

/// What a [`Property`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PropertyKind {
    /// A `buffer<T>` argument: one `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER`.
    StorageBuffer,
    /// A `byte_buffer` argument: one `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER`, word-addressed.
    ByteBuffer,
    /// A value argument living in the push-constant block (descriptor-free).
    PushConstantValue { offset: u32, size: u32 },
    /// The `uvec3` dispatch size in the push-constant block (descriptor-free).
    DispatchSize { offset: u32 },
}

impl PropertyKind {
    /// True when the property consumes a descriptor binding.
    pub fn is_descriptor(&self) -> bool {
        matches!(self, PropertyKind::StorageBuffer | PropertyKind::ByteBuffer)
    }
}

/// The storage representation of a buffer's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferStorage {
    /// A typed runtime array with `ArrayStride = stride` (= host element size).
    Typed { stride: u32 },
    /// A `uint32` word array; elements are `elem_size` bytes at `elem_align` alignment in host layout
    /// (bool: one 0/1 word per element).
    Words { elem_size: u32, elem_align: u32 },
    /// Not a buffer (push-constant pseudo-properties).
    NotABuffer,
}

impl KernelAbi {
    /// The descriptor-backed properties only, in binding order.
    pub fn descriptors(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| p.kind.is_descriptor())
    }

    /// The push-constant pseudo-properties (dispatch size and value arguments).
    pub fn push_constants(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| !p.kind.is_descriptor())
    }

    /// Looks up the property serving kernel argument `arg`.
    pub fn property_for_arg(&self, arg: u32) -> Option<&Property> {
        self.properties.iter().find(|p| p.arg_index == Some(arg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_round_trips_through_json_and_filters_descriptors() {
        let abi = KernelAbi {
            entry_point: ENTRY_POINT_NAME.into(),
            block_size: [64, 1, 1],
            push_constant_size: 20,
            properties: vec![
                Property {
                    kind: PropertyKind::DispatchSize { offset: 0 },
                    arg_index: None,
                    set: DESCRIPTOR_SET,
                    binding: NO_BINDING,
                    storage: BufferStorage::NotABuffer,
                },
                Property {
                    kind: PropertyKind::PushConstantValue { offset: 16, size: 4 },
                    arg_index: Some(0),
                    set: DESCRIPTOR_SET,
                    binding: NO_BINDING,
                    storage: BufferStorage::NotABuffer,
                },
                Property {
                    kind: PropertyKind::StorageBuffer,
                    arg_index: Some(1),
                    set: DESCRIPTOR_SET,
                    binding: 0,
                    storage: BufferStorage::Typed { stride: 4 },
                },
            ],
        };
        let json = serde_json::to_string(&abi).unwrap();
        let back: KernelAbi = serde_json::from_str(&json).unwrap();
        assert_eq!(back, abi);
        assert_eq!(abi.descriptors().count(), 1);
        assert_eq!(abi.push_constants().count(), 2);
        assert_eq!(abi.property_for_arg(1).unwrap().binding, 0);
    }
}
