//! The kernel ABI shared by the SPIR-V backend, the artifact codec and the
//! Vulkan runner: one property list, validated the same way by every
//! consumer ([`KernelAbi::check_shape`]).
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
//! - **Descriptor sets**: set 0 ([`LOCAL_SET`]) holds the dense local
//!   descriptors; set 1 ([`SAMPLER_SET`]) holds the sampler heap of
//!   [`SAMPLER_COUNT`] immutable samplers at binding 0; sets 2 and up
//!   ([`FIRST_HEAP_SET`]) hold the enabled buffer, 2D-texture and 3D-texture
//!   heaps, in that order, one heap per set at binding 0, with no gaps; each
//!   only when some reachable operation uses it (see "Samplers and texture
//!   heaps" below); the shape check accepts heaps only in these places.
//! - **Set 0**: when the value arguments do not fit in push constants, the
//!   backend-owned **argument block** (role [`Role::ArgumentBlock`], no
//!   argument, `StorageBuffer`, storage `Block { size }`) is binding 0; then
//!   each `buffer<T>` / `byte_buffer` argument gets one `StorageBuffer`
//!   descriptor and each `texture2d<T>` / `texture3d<T>` one `StorageImage`
//!   descriptor, dense in argument order. A `bindless_array` argument gets
//!   one `StorageBuffer` descriptor (role [`Role::BindlessMetadata`], storage
//!   `Typed { stride: 8 }`) only when the kernel reads, writes or sizes a
//!   buffer, or reads, sizes or samples a texture, through it: an array of
//!   `{ u32 heap index, u32 byte size }`, one per slot; the heap index is
//!   into the heap of the slot's kind (buffer, 2D or 3D texture heap), the
//!   byte size 0 for a texture slot. An unused bindless argument has no property at all. A real
//!   read or write also needs the global buffer heap (`BufferHeap`, the first
//!   heap set): an unbounded array of `uint32` word buffers (partially bound,
//!   variable count); a size-only query needs only the metadata.
//!   An `accel` argument carries its role mask (`ACCEL_ROLE_*`) in one
//!   `AccelerationStructure` property: an `ACCELERATION_STRUCTURE_KHR`
//!   descriptor with the traversal bit, else `NO_BINDING`; with an
//!   instance-property bit a second property of the same argument follows
//!   at the next binding: its instance buffer (role [`Role::AccelInstance`]).
//!   A zero mask (an unused accel) has no descriptor at all.
//! - **Constant data**: when the constant-UBO planner
//!   (`plan::constant_ubo`) places large array constants, one `Uniform`
//!   std140 `Block` (`NonWritable`) follows the argument descriptors at the
//!   next dense binding of set 0: kind [`PropertyKind::UniformBuffer`], role
//!   [`Role::ConstantData`], no argument, storage `Block { size }` (a
//!   non-zero multiple of 16 up to [`MAX_CONSTANT_DATA_SIZE`]). Its bytes are
//!   the compiled output's / artifact's constant data, exactly `size` long;
//!   the runner uploads them into a host-visible uniform buffer.
//! - **Push constants** (one `Block`, `PushConstant` storage class): offset 0
//!   holds `dispatch_size` as a `uvec3` (12 bytes, padded to 16). If every
//!   value (non-resource) argument fits, each follows in argument order at its
//!   natural host alignment (`TypeTable::size_align`, a `bool` as a 0/1 word)
//!   and the block is at most [`MAX_PUSH_CONSTANT_SIZE`] bytes. Otherwise
//!   **all** value arguments are packed the same way into the argument block
//!   from offset 0, and the push-constant block holds only the dispatch size.
//!   `push_constant_size` is the push-constant total, rounded up to 4.
//! - Values are *descriptor-free pseudo-properties*: kind
//!   [`PropertyKind::ConstantValue`] with `arg_index`, `set = 0`,
//!   `binding = NO_BINDING` and `storage = NotABuffer`; the role says where
//!   the bytes live ([`Role::DispatchSize`] and [`Role::PushValue`]: the
//!   push-constant block; [`Role::BlockValue`]: the argument block). Every
//!   consumer ignores them during descriptor lookup regardless of their
//!   position in the list ([`KernelAbi::descriptors`]).
//! - **Roles**: each public property carries its internal emission role
//!   beside it. Consumers select behaviour by kind and role, never by a debug
//!   name (`_Global` is only a name in the module).
//! - **Bounds check at entry**: a thread whose `dispatch_id` (the
//!   `GlobalInvocationId` builtin) is `>= dispatch_size` in any dimension
//!   returns immediately, before executing the kernel body. The runner may
//!   therefore round the workgroup count up freely. A kernel dispatched in
//!   whole blocks ([`KernelAbi::whole_blocks`], XIR's `whole_blocks`, which
//!   the WGSL / GLSL front end sets) has no such check: every thread of the
//!   `ceil(dispatch_size / block_size)` workgroups runs, and
//!   `dispatch_size` reads as `NumWorkgroups * LocalSize`, the rounded-up
//!   count the interpreter runs too.
//! - **Aliasing**: a buffer is decorated `Aliased` when the kernel has
//!   another resource argument, unless the kernel is `noalias`
//!   ([`KernelAbi::noalias`], WebGPU's rule, set by the front end): then a
//!   consumer must not bind a resource the kernel writes so that it
//!   overlaps another.
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
//! - elements that are or hold a `bool` (which has no typed storage
//!   representation) keep the host layout too: a `bool` is one byte holding
//!   0 or 1 (read as `byte != 0`), so `buffer<bool>` is `Words { elem_size:
//!   1, elem_align: 1 }`; the device reads a bool from its word and writes it
//!   by a masked CAS loop (a whole-word store when the element covers its
//!   words, e.g. `vector<bool, 4>`), so neighbouring threads never lose each
//!   other's bytes;
//! - 64-bit 3- and 4-component vectors (whose Vulkan alignment, 32 bytes,
//!   differs from the host's 16-byte cap) and aggregates containing them are
//!   stored byte-exactly at host offsets (`Words { elem_size, elem_align }`
//!   with the host element size and alignment).
//!
//! The host pads every buffer binding to a multiple of 4 bytes; `buffer.size`
//! of a `Words` buffer counts the whole elements of the binding.
//!
//! `byte_buffer` arguments are always `Words { elem_size: 1, elem_align: 1 }`:
//! raw byte operations are at alignment 1 (unaligned reads are funnel shifts,
//! stores not proven word-aligned are masked CAS loops; `emit/bytes.rs`).
//! The argument block is `Block { size }`: one struct of `size` bytes whose
//! members sit at the `BlockValue` offsets; it is `NonWritable`, and never
//! `Aliased` or `Coherent` (no user resource can alias it).
//!
//! # Textures
//!
//! A `texture2d<T>` / `texture3d<T>` argument (`T` one of f32, i32, u32) is a
//! storage image of four-component 32-bit texels (`R32G32B32A32_SFLOAT`,
//! `_SINT`, `_UINT`), declared with an unknown format (read and write without
//! format); texel data crosses the host boundary as four host values per
//! texel, row-major (x fastest), one mip level.
//!
//! # Samplers and texture heaps
//!
//! - **Sampler heap** (`SamplerHeap`, set 1, binding 0, only when some
//!   `texture.sample*` is reachable): an array of [`SAMPLER_COUNT`]
//!   immutable samplers indexed by the sampler selector, LuisaCompute's
//!   `Sampler::code()`: `selector = filter * 4 + address` (`filter << 2 |
//!   address`), filters 0 point (NEAREST, NEAREST mip), 1 linear_point
//!   (LINEAR, NEAREST mip), 2 linear_linear (LINEAR, LINEAR mip), 3
//!   anisotropic (LINEAR, LINEAR mip, `maxAnisotropy` 16 clamped to the
//!   device's `maxSamplerAnisotropy`); address modes 0 edge
//!   (CLAMP_TO_EDGE), 1 repeat, 2 mirror (MIRRORED_REPEAT), 3 zero
//!   (CLAMP_TO_BORDER, transparent black); `minLod` 0, `maxLod` unclamped.
//!   A kernel whose selector may be anisotropic (a constant 12..16, or any
//!   selector that is not a constant) requires the device feature
//!   `samplerAnisotropy` (emission-owned, `Feature::SamplerAnisotropy`).
//! - **Texture heaps** (`Texture2dHeap`, `Texture3dHeap`, the sets after the
//!   buffer heap, only when used): unbounded arrays of f32 sampled images
//!   (`SAMPLED_IMAGE`, `R32G32B32A32_SFLOAT` with a mip chain; partially
//!   bound, variable count). They are read-only: bindless texture writes are
//!   refused at the handoff (no storage-image heap), integer texels too.

use serde::{Deserialize, Serialize};

/// The name of every kernel's SPIR-V entry point.
pub const ENTRY_POINT_NAME: &str = "main";
/// Largest push-constant block accepted (Vulkan's guaranteed minimum `maxPushConstantsSize`).
pub const MAX_PUSH_CONSTANT_SIZE: u32 = 128;
/// Largest argument block accepted (Vulkan's guaranteed minimum `maxStorageBufferRange` is far larger;
/// this bounds what an artifact may ask the runner to allocate).
pub const MAX_ARGUMENT_BLOCK_SIZE: u32 = 64 * 1024;
/// Offset of the first value argument in the push-constant block (after the padded `uvec3` dispatch size).
pub const FIRST_VALUE_OFFSET: u32 = 16;
/// Bytes of the dispatch size (`uvec3`) at push-constant offset 0.
pub const DISPATCH_SIZE_BYTES: u32 = 12;
/// The descriptor set of the dense local descriptors.
pub const LOCAL_SET: u32 = 0;
/// Former name of [`LOCAL_SET`].
pub const DESCRIPTOR_SET: u32 = LOCAL_SET;
/// The descriptor set of the immutable sampler heap.
pub const SAMPLER_SET: u32 = 1;
/// Immutable samplers in the sampler heap (set 1, binding 0).
pub const SAMPLER_COUNT: u32 = 16;
/// The first descriptor set of the bindless heaps.
pub const FIRST_HEAP_SET: u32 = 2;
/// `binding` of descriptor-free pseudo-properties.
pub const NO_BINDING: u32 = u32::MAX;
/// Largest constant-data uniform block: Vulkan's guaranteed minimum `maxUniformBufferRange` (16 KiB).
pub const MAX_CONSTANT_DATA_SIZE: u32 = 16 * 1024;
/// Bytes per slot of a bindless metadata descriptor (`u32` heap index, `u32` byte size).
pub const BINDLESS_METADATA_STRIDE: u32 = 8;
/// Accel argument role bit: ray traversal (`ray_query.pipeline`, `ray.trace_any`)
/// through an `AccelerationStructureKHR` descriptor in set 0.
pub const ACCEL_ROLE_TRAVERSAL: u32 = 1;
/// Accel argument role bit: instance-property reads (`accel.instance_*`) through
/// the accel's instance buffer (a [`Role::AccelInstance`] storage buffer).
pub const ACCEL_ROLE_INSTANCE_READ: u32 = 2;
/// Accel argument role bit: instance-property writes (`accel.set_instance_*`) into the instance buffer.
pub const ACCEL_ROLE_INSTANCE_WRITE: u32 = 4;
/// Every accel role bit.
pub const ACCEL_ROLES: u32 = ACCEL_ROLE_TRAVERSAL | ACCEL_ROLE_INSTANCE_READ | ACCEL_ROLE_INSTANCE_WRITE;
/// Bytes per record of an accel instance buffer: one `VkAccelerationStructureInstanceKHR`.
pub const ACCEL_INSTANCE_STRIDE: u32 = 64;

/// Everything a runtime needs to bind and dispatch one compiled kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelAbi {
    /// Always [`ENTRY_POINT_NAME`].
    pub entry_point: String,
    /// Workgroup size (`LocalSize`).
    pub block_size: [u32; 3],
    /// Bytes of push constants the pipeline layout must declare (never 0: the dispatch size is always present).
    pub push_constant_size: u32,
    /// The kernel is dispatched in whole blocks (XIR's `whole_blocks`): it has
    /// no entry bound check, so every thread of every dispatched workgroup
    /// runs, and it reads its dispatch size from `NumWorkgroups`, not from
    /// the push constants. A consumer that rounds the workgroup count up
    /// runs the extra threads. Encoded in the role parameter of the
    /// dispatch-size property (docs/artifact.md).
    #[serde(default)]
    pub whole_blocks: bool,
    /// No resource argument the kernel writes overlaps another one (XIR's
    /// `noalias`, WebGPU's binding rule): its buffers are not decorated
    /// `Aliased`, and a consumer must not bind overlapping resources to it.
    /// Encoded in the role parameter of the dispatch-size property.
    #[serde(default)]
    pub noalias: bool,
    /// The canonical property list ([`KernelAbi::check_shape`]).
    pub properties: Vec<Property>,
}

/// One descriptor or descriptor-free value of the kernel interface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    /// What the property is to Vulkan.
    pub kind: PropertyKind,
    /// What emission made of it (explicit, never derived from a name).
    pub role: Role,
    /// The kernel argument this property serves (`None` for backend-owned properties).
    pub arg_index: Option<u32>,
    /// Descriptor set.
    pub set: u32,
    /// Descriptor binding; [`NO_BINDING`] for descriptor-free pseudo-properties.
    pub binding: u32,
    /// How a buffer's bytes are stored; `NotABuffer` for everything else.
    pub storage: BufferStorage,
}

/// The public kind of a [`Property`]: what Vulkan sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PropertyKind {
    /// A descriptor-free value of `size` bytes at `offset` of the block its role names.
    ConstantValue { offset: u32, size: u32 },
    /// One `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER` in set 0.
    StorageBuffer,
    /// One `VK_DESCRIPTOR_TYPE_STORAGE_IMAGE` in set 0: `dim` 2 or 3, four-component 32-bit texels.
    StorageImage { dim: u32, texel: TexelKind },
    /// [`SAMPLER_COUNT`] immutable samplers at set 1, binding 0.
    SamplerHeap,
    /// The bindless buffer heap (sets 2+).
    BufferHeap,
    /// The bindless 2D-texture heap (sets 2+, after the buffer heap).
    Texture2dHeap,
    /// The bindless 3D-texture heap (sets 2+, after the 2D-texture heap).
    Texture3dHeap,
    /// An `accel` argument with its persisted role mask (`ACCEL_ROLE_*`): one
    /// `VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR` in set 0 when the mask
    /// has [`ACCEL_ROLE_TRAVERSAL`]; with a zero mask (an unused accel) a
    /// descriptor-free pseudo-property (`NO_BINDING`).
    AccelerationStructure { roles: u32 },
    /// One `VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER` in set 0 (the constant data, role [`Role::ConstantData`]).
    UniformBuffer,
}

/// The texel type of a storage image (always four 32-bit components).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TexelKind {
    F32,
    I32,
    U32,
}

/// The texel kind of a texture element type (`None`: not f32, i32 or u32).
pub fn texel_kind(t: &xir::TypeTable, elem: xir::TypeId) -> Option<TexelKind> {
    match t.get(elem) {
        xir::Type::Float(xir::FloatFormat::F32) => Some(TexelKind::F32),
        xir::Type::Int { bits: 32, signed: true } => Some(TexelKind::I32),
        xir::Type::Int { bits: 32, signed: false } => Some(TexelKind::U32),
        _ => None,
    }
}

/// The internal emission role of a [`Property`], persisted beside its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// The `uvec3` dispatch size at push-constant offset 0 (`ConstantValue`, no argument).
    DispatchSize,
    /// A value argument in the push-constant block (`ConstantValue`).
    PushValue,
    /// A value argument in the argument block (`ConstantValue`; offset within the block).
    BlockValue,
    /// The backend-owned argument block (`StorageBuffer`, no argument, storage `Block`).
    ArgumentBlock,
    /// A `buffer<T>` argument (`StorageBuffer`).
    Buffer,
    /// A `byte_buffer` argument (`StorageBuffer`, `Words { 1, 1 }`).
    ByteBuffer,
    /// A `texture2d<T>` / `texture3d<T>` argument (`StorageImage`).
    Texture,
    /// A backend-owned heap (`SamplerHeap` and the bindless heaps, no argument).
    Heap,
    /// An `accel` argument (`AccelerationStructure`).
    Accel,
    /// The metadata of a `bindless_array` argument (`StorageBuffer`, `Typed { stride: 8 }`):
    /// per slot the buffer heap index and the byte size. `NonWritable`, never `Aliased`.
    BindlessMetadata,
    /// The instance buffer of an `accel` argument with an instance-property
    /// role (`StorageBuffer`, `Typed { stride: 64 }`, the same argument,
    /// right after its `AccelerationStructure` property): one
    /// `VkAccelerationStructureInstanceKHR` per instance (row-major 3x4 `f32`
    /// transform, `user_id | mask << 24`, flags, the bottom-level reference),
    /// the buffer the top-level structure is built from. `NonWritable`
    /// unless the mask has [`ACCEL_ROLE_INSTANCE_WRITE`].
    AccelInstance,
    /// The backend-owned constant data (`UniformBuffer`, no argument, storage `Block { size }`):
    /// the std140 bytes of the placed array constants. `NonWritable`.
    ConstantData,
}

impl PropertyKind {
    /// True when the property consumes a descriptor binding.
    pub fn is_descriptor(&self) -> bool {
        match self {
            PropertyKind::ConstantValue { .. } => false,
            PropertyKind::AccelerationStructure { roles } => roles & ACCEL_ROLE_TRAVERSAL != 0,
            _ => true,
        }
    }

    /// The Vulkan descriptor type of a descriptor property.
    pub fn descriptor_type_name(&self) -> &'static str {
        match self {
            PropertyKind::ConstantValue { .. } => "none (push constant or argument-block value)",
            PropertyKind::StorageBuffer | PropertyKind::BufferHeap => "STORAGE_BUFFER",
            PropertyKind::StorageImage { .. } => "STORAGE_IMAGE",
            PropertyKind::SamplerHeap => "SAMPLER",
            PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap => "SAMPLED_IMAGE",
            PropertyKind::AccelerationStructure { .. } => "ACCELERATION_STRUCTURE_KHR",
            PropertyKind::UniformBuffer => "UNIFORM_BUFFER",
        }
    }
}

/// The storage representation of a buffer's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferStorage {
    /// A typed runtime array with `ArrayStride = stride` (= host element size).
    Typed { stride: u32 },
    /// A `uint32` word array; elements are `elem_size` bytes at `elem_align` alignment in host layout
    /// (a `bool` is one 0/1 byte).
    Words { elem_size: u32, elem_align: u32 },
    /// One `Block` struct of `size` bytes: the argument block (members at their `BlockValue` offsets) or
    /// the constant data (std140, members at the planned offsets).
    Block { size: u32 },
    /// Not a buffer.
    NotABuffer,
}

/// Why a property list is not canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl KernelAbi {
    /// The descriptor-backed properties only (pseudo-properties skipped wherever they sit), in list order.
    pub fn descriptors(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| p.kind.is_descriptor())
    }

    /// The descriptor-free value pseudo-properties (dispatch size and value arguments).
    pub fn values(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| !p.kind.is_descriptor())
    }

    /// Looks up the property serving kernel argument `arg`.
    pub fn property_for_arg(&self, arg: u32) -> Option<&Property> {
        self.properties.iter().find(|p| p.arg_index == Some(arg))
    }

    /// The argument block, when the value arguments live in one.
    pub fn argument_block(&self) -> Option<&Property> {
        self.properties.iter().find(|p| p.role == Role::ArgumentBlock)
    }

    /// The constant-data uniform block, when the kernel reads placed constants.
    pub fn constant_data(&self) -> Option<&Property> {
        self.properties.iter().find(|p| p.role == Role::ConstantData)
    }

    /// Bytes of constant data the kernel reads (0 without a constant-data block).
    pub fn constant_data_size(&self) -> u32 {
        match self.constant_data().map(|p| p.storage) {
            Some(BufferStorage::Block { size }) => size,
            _ => 0,
        }
    }

    /// The highest descriptor set in use plus one (the pipeline layout's set count).
    pub fn set_count(&self) -> u32 {
        self.descriptors().map(|p| p.set + 1).max().unwrap_or(0)
    }

    /// Check the canonical shape; `Err` names the first violation. The
    /// artifact writer and reader both run it, and so does the runner.
    ///
    /// Canonical: entry point `main`; block dimensions at least 1; the push
    /// size a multiple of 4 in 12..=128; first the dispatch size
    /// (`ConstantValue { 0, 12 }`, role `DispatchSize`); then, optionally, the
    /// argument block (set 0, binding 0, `Block { size }`, size a non-zero
    /// multiple of 4 up to [`MAX_ARGUMENT_BLOCK_SIZE`]); then the argument
    /// properties in strictly increasing argument order (local descriptors at
    /// set 0 with dense bindings; values all `PushValue` inside the push block
    /// after the dispatch size, or, exactly when the argument block exists,
    /// all `BlockValue` inside it; no two value ranges of one block
    /// overlapping); then, optionally, the constant data (`UniformBuffer`,
    /// role `ConstantData`, set 0 at the next dense binding, `Block { size }`
    /// with size a non-zero multiple of 16 up to [`MAX_CONSTANT_DATA_SIZE`]);
    /// then the heaps: the sampler heap at set 1 binding 0,
    /// then the buffer, 2D- and 3D-texture heaps, each at most once, in that
    /// order, at consecutive sets from 2, binding 0. Every kind must carry a
    /// role that fits it.
    pub fn check_shape(&self) -> Result<(), ShapeError> {
        let bad = |m: String| Err(ShapeError(m));
        if self.entry_point != ENTRY_POINT_NAME {
            return bad(format!("entry point is `{}`, not `{ENTRY_POINT_NAME}`", self.entry_point));
        }
        if self.block_size.contains(&0) {
            return bad(format!("block size {:?} has a zero dimension", self.block_size));
        }
        let pc = self.push_constant_size;
        if !pc.is_multiple_of(4) || !(DISPATCH_SIZE_BYTES..=MAX_PUSH_CONSTANT_SIZE).contains(&pc) {
            return bad(format!("push-constant size {pc} is not a multiple of 4 in 12..={MAX_PUSH_CONSTANT_SIZE}"));
        }
        let mut props = self.properties.iter().enumerate().peekable();
        match props.next() {
            Some((
                _,
                Property {
                    kind: PropertyKind::ConstantValue { offset: 0, size: DISPATCH_SIZE_BYTES },
                    role: Role::DispatchSize,
                    arg_index: None,
                    set: LOCAL_SET,
                    binding: NO_BINDING,
                    storage: BufferStorage::NotABuffer,
                },
            )) => {}
            other => return bad(format!("the first property must be the dispatch size, found {other:?}")),
        }
        let mut next_binding = 0u32;
        let mut block_size = None;
        if let Some((i, p)) = props.next_if(|(_, p)| p.role == Role::ArgumentBlock) {
            match p {
                Property {
                    kind: PropertyKind::StorageBuffer,
                    arg_index: None,
                    set: LOCAL_SET,
                    binding: 0,
                    storage: BufferStorage::Block { size },
                    ..
                } if *size > 0 && size.is_multiple_of(4) && *size <= MAX_ARGUMENT_BLOCK_SIZE => {
                    block_size = Some(*size);
                    next_binding = 1;
                }
                _ => {
                    return bad(format!(
                        "property {i}: the argument block must be a StorageBuffer at set 0, binding 0, without an \
                         argument, stored as a Block of 4..={MAX_ARGUMENT_BLOCK_SIZE} bytes (a multiple of 4); found {p:?}"
                    ))
                }
            }
        }
        let mut last_arg: Option<u32> = None;
        let mut push_ranges: Vec<(u32, u32)> = vec![(0, DISPATCH_SIZE_BYTES)];
        let mut block_ranges: Vec<(u32, u32)> = Vec::new();
        while let Some((i, p)) = props.next_if(|(_, p)| p.arg_index.is_some()) {
            let arg = p.arg_index.unwrap_or_default();
            if last_arg.is_some_and(|l| arg <= l) {
                return bad(format!("property {i}: argument {arg} is out of argument order"));
            }
            last_arg = Some(arg);
            if p.set != LOCAL_SET {
                return bad(format!("property {i}: argument properties live in set {LOCAL_SET}, not {}", p.set));
            }
            match (p.kind, p.role) {
                (PropertyKind::ConstantValue { offset, size }, role @ (Role::PushValue | Role::BlockValue)) => {
                    if p.binding != NO_BINDING || p.storage != BufferStorage::NotABuffer {
                        return bad(format!("property {i}: a value needs NO_BINDING and no storage"));
                    }
                    let end = offset.saturating_add(size);
                    let (lo, hi, ranges) = match (role, block_size) {
                        (Role::PushValue, None) => (FIRST_VALUE_OFFSET, pc, &mut push_ranges),
                        (Role::BlockValue, Some(b)) => (0, b, &mut block_ranges),
                        (Role::PushValue, Some(_)) => {
                            return bad(format!("property {i}: a push-constant value beside an argument block"))
                        }
                        _ => return bad(format!("property {i}: an argument-block value without an argument block")),
                    };
                    if size == 0 || offset < lo || end > hi {
                        return bad(format!("property {i}: value range {offset}+{size} outside {lo}..{hi}"));
                    }
                    ranges.push((offset, end));
                }
                (PropertyKind::StorageBuffer, Role::Buffer | Role::ByteBuffer | Role::BindlessMetadata)
                | (PropertyKind::StorageImage { .. }, Role::Texture) => {
                    if p.binding != next_binding {
                        return bad(format!(
                            "property {i}: binding {} where the dense binding {next_binding} is due",
                            p.binding
                        ));
                    }
                    next_binding += 1;
                    let ok = match (p.kind, p.role, p.storage) {
                        (PropertyKind::StorageImage { dim, .. }, _, s) => {
                            (2..=3).contains(&dim) && s == BufferStorage::NotABuffer
                        }
                        (_, Role::ByteBuffer, s) => s == BufferStorage::Words { elem_size: 1, elem_align: 1 },
                        (_, Role::BindlessMetadata, s) => {
                            s == BufferStorage::Typed { stride: BINDLESS_METADATA_STRIDE }
                        }
                        (_, _, BufferStorage::Typed { stride }) => stride > 0,
                        (_, _, BufferStorage::Words { elem_size, elem_align }) => {
                            elem_size > 0 && elem_align.is_power_of_two() && elem_size.is_multiple_of(elem_align)
                        }
                        _ => false,
                    };
                    if !ok {
                        return bad(format!("property {i}: storage {:?} does not fit {:?}", p.storage, p.kind));
                    }
                }
                (PropertyKind::AccelerationStructure { roles }, Role::Accel) => {
                    if roles & !ACCEL_ROLES != 0 {
                        return bad(format!("property {i}: accel role mask {roles:#x} has unknown bits"));
                    }
                    let traversal = roles & ACCEL_ROLE_TRAVERSAL != 0;
                    let want = if traversal { next_binding } else { NO_BINDING };
                    if p.binding != want || p.storage != BufferStorage::NotABuffer {
                        return bad(format!(
                            "property {i}: accel with roles {roles:#x} needs binding {want} and no storage"
                        ));
                    }
                    next_binding += u32::from(traversal);
                    if roles & !ACCEL_ROLE_TRAVERSAL != 0 {
                        let want = Property {
                            kind: PropertyKind::StorageBuffer,
                            role: Role::AccelInstance,
                            arg_index: Some(arg),
                            set: LOCAL_SET,
                            binding: next_binding,
                            storage: BufferStorage::Typed { stride: ACCEL_INSTANCE_STRIDE },
                        };
                        match props.next_if(|(_, q)| q.role == Role::AccelInstance) {
                            Some((_, q)) if *q == want => next_binding += 1,
                            _ => {
                                return bad(format!(
                                    "property {i}: accel with instance-property roles {roles:#x} must be followed \
                                     by its instance buffer {want:?}"
                                ))
                            }
                        }
                    }
                }
                (kind, role) => {
                    return bad(format!("property {i}: kind {kind:?} with role {role:?} cannot serve an argument"))
                }
            }
        }
        if let Some((i, p)) = props.next_if(|(_, p)| p.role == Role::ConstantData) {
            match p {
                Property {
                    kind: PropertyKind::UniformBuffer,
                    arg_index: None,
                    set: LOCAL_SET,
                    binding,
                    storage: BufferStorage::Block { size },
                    ..
                } if *binding == next_binding
                    && *size > 0
                    && size.is_multiple_of(16)
                    && *size <= MAX_CONSTANT_DATA_SIZE => {}
                _ => {
                    return bad(format!(
                        "property {i}: the constant data must be a UniformBuffer at set 0, binding {next_binding} \
                         (after the argument descriptors), without an argument, stored as a Block of \
                         16..={MAX_CONSTANT_DATA_SIZE} bytes (a multiple of 16); found {p:?}"
                    ))
                }
            }
        }
        let heap_shape = |p: &Property, set: u32| {
            p.role == Role::Heap
                && p.arg_index.is_none()
                && p.set == set
                && p.binding == 0
                && p.storage == BufferStorage::NotABuffer
        };
        if let Some((i, p)) = props.next_if(|(_, p)| p.kind == PropertyKind::SamplerHeap) {
            if !heap_shape(p, SAMPLER_SET) {
                return bad(format!(
                    "property {i}: the sampler heap must be at set {SAMPLER_SET}, binding 0, role Heap"
                ));
            }
        }
        let heaps = [PropertyKind::BufferHeap, PropertyKind::Texture2dHeap, PropertyKind::Texture3dHeap];
        let mut next_heap = 0usize;
        for (next_set, (i, p)) in (FIRST_HEAP_SET..).zip(props) {
            let Some(k) = heaps[next_heap..].iter().position(|h| *h == p.kind) else {
                return bad(format!(
                    "property {i}: {:?} (role {:?}, argument {:?}) is out of the canonical order \
                     (dispatch size, argument block, arguments, constant data, sampler heap, buffer / 2D / 3D heaps)",
                    p.kind, p.role, p.arg_index
                ));
            };
            if !heap_shape(p, next_set) {
                return bad(format!("property {i}: {:?} must be at set {next_set}, binding 0, role Heap", p.kind));
            }
            next_heap += k + 1;
        }
        for (what, mut ranges) in [("push-constant", push_ranges), ("argument-block", block_ranges)] {
            ranges.sort_unstable();
            if let Some(w) = ranges.windows(2).find(|w| w[1].0 < w[0].1) {
                return bad(format!("{what} ranges {:?} and {:?} overlap", w[0], w[1]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(role: Role, arg: u32, offset: u32, size: u32) -> Property {
        Property {
            kind: PropertyKind::ConstantValue { offset, size },
            role,
            arg_index: Some(arg),
            set: LOCAL_SET,
            binding: NO_BINDING,
            storage: BufferStorage::NotABuffer,
        }
    }

    fn buffer(arg: u32, binding: u32) -> Property {
        Property {
            kind: PropertyKind::StorageBuffer,
            role: Role::Buffer,
            arg_index: Some(arg),
            set: LOCAL_SET,
            binding,
            storage: BufferStorage::Typed { stride: 4 },
        }
    }

    fn dispatch() -> Property {
        Property {
            kind: PropertyKind::ConstantValue { offset: 0, size: DISPATCH_SIZE_BYTES },
            role: Role::DispatchSize,
            arg_index: None,
            set: LOCAL_SET,
            binding: NO_BINDING,
            storage: BufferStorage::NotABuffer,
        }
    }

    fn heap(kind: PropertyKind, set: u32) -> Property {
        Property { kind, role: Role::Heap, arg_index: None, set, binding: 0, storage: BufferStorage::NotABuffer }
    }

    fn abi(properties: Vec<Property>, push: u32) -> KernelAbi {
        KernelAbi {
            entry_point: ENTRY_POINT_NAME.into(),
            block_size: [64, 1, 1],
            push_constant_size: push,
            whole_blocks: false,
            noalias: false,
            properties,
        }
    }

    #[test]
    fn abi_round_trips_through_json_and_filters_descriptors() {
        let abi = abi(vec![dispatch(), value(Role::PushValue, 0, 16, 4), buffer(1, 0)], 20);
        abi.check_shape().unwrap();
        let json = serde_json::to_string(&abi).unwrap();
        let back: KernelAbi = serde_json::from_str(&json).unwrap();
        assert_eq!(back, abi);
        assert_eq!(abi.descriptors().count(), 1);
        assert_eq!(abi.values().count(), 2);
        assert_eq!(abi.property_for_arg(1).unwrap().binding, 0);
        assert_eq!(abi.set_count(), 1);
    }

    #[test]
    fn argument_block_shape_is_checked() {
        let block = Property {
            kind: PropertyKind::StorageBuffer,
            role: Role::ArgumentBlock,
            arg_index: None,
            set: LOCAL_SET,
            binding: 0,
            storage: BufferStorage::Block { size: 80 },
        };
        let good = abi(vec![dispatch(), block.clone(), value(Role::BlockValue, 0, 0, 64), buffer(1, 1)], 12);
        good.check_shape().unwrap();
        assert_eq!(good.argument_block(), Some(&block));
        // A push value beside the block, a block value without it, a value past the block's end,
        // the block not at binding 0, and a buffer reusing binding 0 are all rejected.
        let cases = [
            abi(vec![dispatch(), block.clone(), value(Role::PushValue, 0, 16, 4)], 20),
            abi(vec![dispatch(), value(Role::BlockValue, 0, 0, 4)], 12),
            abi(vec![dispatch(), block.clone(), value(Role::BlockValue, 0, 72, 16)], 12),
            abi(vec![dispatch(), buffer(0, 0), Property { binding: 1, ..block.clone() }], 12),
            abi(vec![dispatch(), block.clone(), buffer(1, 0)], 12),
        ];
        for c in cases {
            assert!(c.check_shape().is_err(), "{:?}", c.properties);
        }
    }

    #[test]
    fn heaps_are_canonical_only_in_their_sets_and_order() {
        let base = [dispatch(), buffer(0, 0)];
        let with = |extra: Vec<Property>| abi(base.iter().cloned().chain(extra).collect(), 12);
        with(vec![heap(PropertyKind::SamplerHeap, 1), heap(PropertyKind::Texture2dHeap, 2)]).check_shape().unwrap();
        with(vec![
            heap(PropertyKind::BufferHeap, 2),
            heap(PropertyKind::Texture2dHeap, 3),
            heap(PropertyKind::Texture3dHeap, 4),
        ])
        .check_shape()
        .unwrap();
        for bad in [
            vec![heap(PropertyKind::SamplerHeap, 0)],
            vec![heap(PropertyKind::Texture2dHeap, 3)],
            vec![heap(PropertyKind::Texture3dHeap, 2), heap(PropertyKind::Texture2dHeap, 3)],
            vec![heap(PropertyKind::BufferHeap, 2), heap(PropertyKind::BufferHeap, 3)],
            vec![heap(PropertyKind::BufferHeap, 2), heap(PropertyKind::SamplerHeap, 1)],
            vec![heap(PropertyKind::BufferHeap, 2), buffer(1, 1)],
        ] {
            assert!(with(bad.clone()).check_shape().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn constant_data_follows_the_arguments_at_the_next_binding() {
        let cd = |binding: u32, size: u32| Property {
            kind: PropertyKind::UniformBuffer,
            role: Role::ConstantData,
            arg_index: None,
            set: LOCAL_SET,
            binding,
            storage: BufferStorage::Block { size },
        };
        let good = abi(vec![dispatch(), buffer(0, 0), cd(1, 4800), heap(PropertyKind::BufferHeap, 2)], 12);
        good.check_shape().unwrap();
        assert_eq!(good.constant_data_size(), 4800);
        assert_eq!(good.descriptors().count(), 3);
        assert_eq!(abi(vec![dispatch(), buffer(0, 0)], 12).constant_data_size(), 0);
        // Wrong binding, unaligned or oversized block, before an argument, twice, or as a storage buffer.
        let mut as_storage = cd(1, 32);
        as_storage.kind = PropertyKind::StorageBuffer;
        for bad in [
            vec![dispatch(), buffer(0, 0), cd(2, 32)],
            vec![dispatch(), buffer(0, 0), cd(1, 40)],
            vec![dispatch(), buffer(0, 0), cd(1, MAX_CONSTANT_DATA_SIZE + 16)],
            vec![dispatch(), buffer(0, 0), cd(1, 0)],
            vec![dispatch(), cd(0, 32), buffer(0, 1)],
            vec![dispatch(), buffer(0, 0), cd(1, 32), cd(2, 32)],
            vec![dispatch(), buffer(0, 0), as_storage],
        ] {
            assert!(abi(bad.clone(), 12).check_shape().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn roles_must_fit_kinds() {
        let mut wrong = buffer(0, 0);
        wrong.role = Role::PushValue;
        assert!(abi(vec![dispatch(), wrong], 12).check_shape().is_err());
        let mut wrong = value(Role::Buffer, 0, 16, 4);
        wrong.role = Role::Buffer;
        assert!(abi(vec![dispatch(), wrong], 20).check_shape().is_err());
        let mut ds = dispatch();
        ds.role = Role::PushValue;
        assert!(abi(vec![ds], 12).check_shape().is_err());
    }
}
