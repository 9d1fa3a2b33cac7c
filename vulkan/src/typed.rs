//! The typed layer of the runner: interpreter-style inputs (arguments by
//! name, `docs/inputs-format.md`) become the byte buffers, the argument block
//! and the push-constant block the ABI describes (checked canonical first), and the buffers read back become `Outputs` in the
//! interpreter's encoding, so the two compare bit for bit.

use xir::{
    interp::{buffer_from_host_bytes, buffer_to_host_bytes, Inputs, Outputs},
    FuncId, Module, Type, TypeId,
};

use serde_json::Value as Json;

use super::{dispatch_resources, group_counts, Device, GpuTiming, Resource, RunError};
use xir_spirv::abi::{BufferStorage, KernelAbi, PropertyKind, Role};

/// The name an argument is given by in inputs and outputs.
fn arg_name(module: &Module, kernel: FuncId, arg: usize) -> String {
    module.func(kernel).args[arg].md.name.clone().unwrap_or_else(|| arg.to_string())
}

/// Run a compiled kernel on `device` with interpreter-style inputs. A
/// printing kernel is refused: its lines need the capture and the printer
/// records of [`super::run_kernel_printing`].
pub fn run_kernel(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    words: &[u32],
    abi: &KernelAbi,
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming), RunError> {
    if super::printf::imports_debug_printf(words) {
        return Err(RunError::Printf(
            "this kernel prints: run it with vulkan::run_kernel_printing (its printer records, on a device from \
             Device::with_printf) so that its lines are captured"
                .into(),
        ));
    }
    run_kernel_unchecked(device, module, kernel, words, abi, inputs, dispatch_size)
}

/// What a dispatch needs of a compilation: the final SPIR-V, the ABI and the
/// constant data (the std140 bytes of the ABI's `ConstantData` uniform
/// block; empty when the ABI has none). From a [`xir_spirv::SpirvOutput`] or a
/// decoded [`xir_spirv::artifact::ShaderArtifact`].
#[derive(Clone, Copy, Debug)]
pub struct Compiled<'a> {
    pub words: &'a [u32],
    pub abi: &'a KernelAbi,
    pub constants: &'a [u8],
}

impl<'a> From<&'a xir_spirv::SpirvOutput> for Compiled<'a> {
    fn from(o: &'a xir_spirv::SpirvOutput) -> Self {
        Compiled { words: &o.words, abi: &o.abi, constants: &o.constants }
    }
}

impl<'a> From<&'a xir_spirv::artifact::ShaderArtifact> for Compiled<'a> {
    fn from(a: &'a xir_spirv::artifact::ShaderArtifact) -> Self {
        Compiled { words: &a.words, abi: &a.abi, constants: &a.constants }
    }
}

/// Run a compilation (its SPIR-V, ABI and constant data) on `device` with
/// interpreter-style inputs; a printing kernel is refused as by [`run_kernel`].
pub fn run_compiled(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    compiled: Compiled<'_>,
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming), RunError> {
    if super::printf::imports_debug_printf(compiled.words) {
        return Err(RunError::Printf(
            "this kernel prints: run it with vulkan::run_kernel_printing (its printer records, on a device from \
             Device::with_printf) so that its lines are captured"
                .into(),
        ));
    }
    run_compiled_unchecked(device, module, kernel, compiled, inputs, dispatch_size)
}

/// [`run_kernel`] without the printing check (the capture calls it); no constant data.
pub(crate) fn run_kernel_unchecked(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    words: &[u32],
    abi: &KernelAbi,
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming), RunError> {
    run_compiled_unchecked(device, module, kernel, Compiled { words, abi, constants: &[] }, inputs, dispatch_size)
}

/// [`run_compiled`] without the printing check.
pub(crate) fn run_compiled_unchecked(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    compiled: Compiled<'_>,
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming), RunError> {
    let Compiled { words, abi, constants } = compiled;
    if abi.constant_data().is_none() && !constants.is_empty() {
        return Err(RunError::Abi(format!(
            "{} bytes of constant data for a kernel without a constant-data block",
            constants.len()
        )));
    }
    let func = module.func(kernel);
    let input = |arg: usize| {
        let name = arg_name(module, kernel, arg);
        inputs.args.get(&name).ok_or_else(|| RunError::Abi(format!("no input for argument `{name}`")))
    };
    let accel_input = |arg: usize| {
        let name = arg_name(module, kernel, arg);
        xir::interp::accel_from_json(input(arg)?).map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))
    };
    abi.check_shape().map_err(|e| RunError::Abi(format!("the kernel ABI is not canonical: {e}")))?;
    let mut push = vec![0u8; abi.push_constant_size as usize];
    let mut block = abi.argument_block().map(|p| (p.binding, vec![0u8; block_len(p.storage)]));
    let mut buffers: Vec<Bound> = Vec::new();
    // Bindless arguments with metadata, and whether the ABI binds the global buffer heap.
    let mut heap = super::bindless::Heap::default();
    let mut has_heap = false;
    // Texture slots of the bindless arguments, for the texture heaps (`texture_heap.rs`).
    let mut textures = super::texture_heap::Textures::for_abi(abi);
    for p in &abi.properties {
        let arg = p.arg_index.map(|a| a as usize);
        if let Some(a) = arg {
            if a >= func.args.len() {
                return Err(RunError::Abi(format!("property for argument {a}, kernel has {}", func.args.len())));
            }
        }
        match (p.kind, p.role, arg) {
            (PropertyKind::ConstantValue { offset, .. }, Role::DispatchSize, None) => {
                let bytes: Vec<u8> = dispatch_size.iter().flat_map(|d| d.to_le_bytes()).collect();
                write_at(&mut push, offset as usize, &bytes)?;
            }
            (PropertyKind::ConstantValue { offset, size }, role @ (Role::PushValue | Role::BlockValue), Some(a)) => {
                let ty = func.args[a].ty;
                let mut bytes = buffer_to_host_bytes(module, ty, &serde_json::Value::Array(vec![input(a)?.clone()]))
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                if is_bool(module, ty) {
                    // A bool value travels as a 0/1 word.
                    bytes = u32::from(bytes.iter().any(|&b| b != 0)).to_le_bytes().to_vec();
                }
                if bytes.len() != size as usize {
                    return Err(RunError::Abi(format!(
                        "argument `{}` is {} bytes, ABI says {size}",
                        arg_name(module, kernel, a),
                        bytes.len()
                    )));
                }
                let dst = match (role, block.as_mut()) {
                    (Role::BlockValue, Some((_, b))) => b,
                    (Role::BlockValue, None) => {
                        return Err(RunError::Abi("argument-block value without a block".into()))
                    }
                    _ => &mut push,
                };
                write_at(dst, offset as usize, &bytes)?;
            }
            (PropertyKind::StorageBuffer, Role::ArgumentBlock, None) => {}
            (PropertyKind::StorageBuffer, Role::Buffer, Some(a)) => {
                let Type::Buffer(elem) = *module.types.get(func.args[a].ty) else {
                    return Err(RunError::Abi(format!("argument {a} is not a buffer")));
                };
                // The bytes below are the host layout; the ABI must store exactly that.
                if xir_spirv::plan::layout::plan_buffer(&module.types, elem) != Ok(p.storage) {
                    return Err(RunError::Abi(format!(
                        "argument `{}`: storage {:?} is not this backend's layout of its element type",
                        arg_name(module, kernel, a),
                        p.storage
                    )));
                }
                let host = buffer_to_host_bytes(module, elem, input(a)?)
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                // Every buffer holds its host layout (a `bool` is one byte): the device packs sub-word elements.
                buffers.push((p.binding, Some(a), elem, p.storage, Resource::Buffer(host)));
            }
            (PropertyKind::StorageBuffer, Role::ByteBuffer, Some(a)) => {
                let json = input(a)?;
                let bytes = byte_buffer_from_json(json)
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                buffers.push((p.binding, Some(a), TypeId(0), p.storage, Resource::Buffer(bytes)));
            }
            (PropertyKind::StorageImage { dim, texel }, Role::Texture, Some(a)) => {
                let Type::Texture { elem, .. } = *module.types.get(func.args[a].ty) else {
                    return Err(RunError::Abi(format!("argument {a} is not a texture")));
                };
                let (size, data) = texture_from_json(module, elem, dim, input(a)?)
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                buffers.push((p.binding, Some(a), elem, p.storage, Resource::Image { dim, size, texel, data }));
            }
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(a)) => {
                let name = arg_name(module, kernel, a);
                let (json, texture_slots) = textures
                    .take(module, a, input(a)?)
                    .map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))?;
                let slots = super::bindless::slots_from_json(module, &json)
                    .map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))?;
                let mut meta = heap.add(a, slots).map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))?;
                super::texture_heap::Textures::patch(&mut meta, &texture_slots);
                buffers.push((p.binding, None, TypeId(0), p.storage, Resource::Buffer(meta)));
            }
            (PropertyKind::BufferHeap, Role::Heap, None) => has_heap = true,
            (
                PropertyKind::SamplerHeap | PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap,
                Role::Heap,
                None,
            ) => {}
            (PropertyKind::UniformBuffer, Role::ConstantData, None) => {
                let want = abi.constant_data_size() as usize;
                if constants.len() != want {
                    return Err(RunError::Abi(format!(
                        "the kernel reads {want} bytes of constant data, {} given (run it with \
                         vulkan::run_compiled and the output's or artifact's constants)",
                        constants.len()
                    )));
                }
                buffers.push((p.binding, None, TypeId(0), p.storage, Resource::Buffer(constants.to_vec())));
            }
            // An accel: its top-level structure with the traversal role (an unused accel has no
            // descriptor), its instance buffer with an instance-property role (`accel.rs`).
            (PropertyKind::AccelerationStructure { roles }, Role::Accel, Some(a)) => {
                let scene = accel_input(a)?;
                if roles & xir_spirv::abi::ACCEL_ROLE_TRAVERSAL != 0 {
                    buffers.push((p.binding, Some(a), TypeId(0), p.storage, Resource::Accel(scene)));
                }
            }
            (PropertyKind::StorageBuffer, Role::AccelInstance, Some(a)) => {
                let scene = accel_input(a)?;
                buffers.push((p.binding, Some(a), TypeId(0), p.storage, Resource::AccelInstances(scene)));
            }
            (kind, role, arg) => {
                return Err(RunError::Abi(format!(
                    "this runner cannot bind {kind:?} with role {role:?} (argument {arg:?})"
                )))
            }
        }
    }
    if let Some((binding, bytes)) = block {
        buffers.push((binding, None, TypeId(0), BufferStorage::NotABuffer, Resource::Buffer(bytes)));
    }
    buffers.sort_by_key(|b| b.0);
    let mut data: Vec<Resource> = buffers.iter().map(|b| b.4.clone()).collect();
    // The heap is the last descriptor of the canonical list (set 2); an empty one binds one dummy buffer.
    if has_heap {
        let mut b = heap.buffers.clone();
        if b.is_empty() {
            b.push(vec![0; 4]);
        }
        data.push(Resource::Heap(b));
    }
    textures.push_resources(device, abi, &mut data, has_heap)?;
    let groups = group_counts(dispatch_size, abi.block_size);
    let (mut out, timing) = dispatch_resources(device, words, abi, &data, &push, groups)?;
    super::texture_heap::Textures::strip(&mut out);
    let mut outputs = Outputs::default();
    let heap_after = if has_heap {
        match out.pop() {
            Some(Resource::Heap(b)) => b,
            _ => return Err(RunError::Abi("the buffer heap did not come back".into())),
        }
    } else {
        heap.buffers.clone()
    };
    for (a, indices) in &heap.owners {
        let slots: Vec<Option<Vec<u8>>> = indices.iter().map(|i| i.and_then(|i| heap_after.get(i).cloned())).collect();
        outputs.buffers.insert(arg_name(module, kernel, *a), super::bindless::slots_to_json(&slots));
    }
    textures.restore(&mut outputs, |a| arg_name(module, kernel, a));
    // Bindless arguments without a property (unused): their inputs, in the output encoding.
    for (a, arg) in func.args.iter().enumerate() {
        if matches!(module.types.get(arg.ty), Type::BindlessArray) && !heap.owners.iter().any(|(o, _)| *o == a) {
            let name = arg_name(module, kernel, a);
            let mut unused = super::texture_heap::Textures::default();
            let (json, _) =
                unused.take(module, a, input(a)?).map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))?;
            let slots = super::bindless::slots_from_json(module, &json)
                .map_err(|e| RunError::Abi(format!("argument `{name}`: {e}")))?;
            outputs.buffers.insert(name, super::bindless::slots_to_json(&slots));
            unused.restore(&mut outputs, |a| arg_name(module, kernel, a));
        }
    }
    // Accel arguments: as given (an unused or traversed-only accel comes back unchanged); an
    // instance buffer read back below replaces this.
    for (a, arg) in func.args.iter().enumerate() {
        if matches!(module.types.get(arg.ty), Type::Accel) {
            outputs.buffers.insert(arg_name(module, kernel, a), xir::interp::accel_to_json(&accel_input(a)?));
        }
    }
    for ((_, a, elem, _, _), r) in buffers.iter().zip(out) {
        // The argument block is backend-owned: it is no output.
        let Some(a) = *a else { continue };
        let name = arg_name(module, kernel, a);
        let bytes = match r {
            Resource::Buffer(bytes) => bytes,
            Resource::Heap(_) => return Err(RunError::Abi(format!("`{name}` came back as a heap"))),
            Resource::Accel(_) | Resource::SamplerHeap | Resource::TextureHeap(_) => continue,
            Resource::AccelInstances(scene) => {
                outputs.buffers.insert(name, xir::interp::accel_to_json(&scene));
                continue;
            }
            Resource::Image { dim, size, data, .. } => {
                let json = texture_to_json(module, *elem, dim, size, &data)
                    .map_err(|e| RunError::Abi(format!("reading `{name}` back: {e}")))?;
                outputs.buffers.insert(name, json);
                continue;
            }
        };
        let json = if matches!(module.types.get(func.args[a].ty), Type::ByteBuffer) {
            serde_json::json!({ "bytes": bytes })
        } else {
            buffer_from_host_bytes(module, *elem, &bytes)
                .map_err(|e| RunError::Abi(format!("reading `{name}` back: {e}")))?
        };
        outputs.buffers.insert(name, json);
    }
    Ok((outputs, timing))
}

/// One resource to bind: (binding, argument (`None`: the argument block), element type, storage, contents).
type Bound = (u32, Option<usize>, TypeId, BufferStorage, Resource);

/// A texture input (`{"size": [w, h(, d)], "texels": [[r, g, b, a], ...]}` or
/// `{"size": [...], "fill": [r, g, b, a]}`, docs/inputs-format.md) as its
/// size (unused dimensions 1) and 16 host bytes per texel, x fastest.
pub(super) fn texture_from_json(
    module: &Module,
    elem: TypeId,
    dim: u32,
    j: &Json,
) -> Result<([u32; 3], Vec<u8>), String> {
    let sz = j.get("size").and_then(Json::as_array).ok_or("a texture needs `size`")?;
    if sz.len() != dim as usize {
        return Err(format!("a {dim}D texture needs {dim} sizes, found {}", sz.len()));
    }
    let mut size = [1u32; 3];
    for (k, s) in sz.iter().enumerate() {
        size[k] = s.as_u64().and_then(|v| u32::try_from(v).ok()).filter(|&v| v > 0).ok_or(format!("bad size {s}"))?;
    }
    // In u128: three u32 sizes can overflow u64, never u128.
    let n = size.iter().map(|&s| u128::from(s)).product::<u128>();
    if n > u128::from(MAX_TEXELS) {
        return Err(format!("{n} texels exceed the runner's limit of {MAX_TEXELS}"));
    }
    let n = n as u64;
    let texels: Vec<Json> = match (j.get("texels"), j.get("fill")) {
        (Some(Json::Array(t)), None) => t.clone(),
        (None, Some(f)) => vec![f.clone(); n as usize],
        _ => return Err("a texture needs exactly one of `texels` and `fill`".into()),
    };
    if texels.len() as u64 != n {
        return Err(format!("{} texels given for a texture of {n}", texels.len()));
    }
    let mut flat = Vec::with_capacity(texels.len() * 4);
    for t in texels {
        match t {
            Json::Array(c) if c.len() == 4 => flat.extend(c),
            other => return Err(format!("a texel is four components, found {other}")),
        }
    }
    let bytes = buffer_to_host_bytes(module, elem, &Json::Array(flat))?;
    Ok((size, bytes))
}

/// Texels read back, in the interpreter's output encoding.
pub(super) fn texture_to_json(
    module: &Module,
    elem: TypeId,
    dim: u32,
    size: [u32; 3],
    bytes: &[u8],
) -> Result<Json, String> {
    let Json::Array(flat) = buffer_from_host_bytes(module, elem, bytes)? else {
        return Err("texels did not decode to an array".into());
    };
    let texels: Vec<Json> = flat.chunks(4).map(|c| Json::Array(c.to_vec())).collect();
    Ok(serde_json::json!({ "size": size[..dim as usize].to_vec(), "texels": texels }))
}

/// Most texels one texture input may have (bounds the host allocation).
const MAX_TEXELS: u64 = 1 << 24;

/// Bytes of the argument block's buffer.
fn block_len(storage: BufferStorage) -> usize {
    match storage {
        BufferStorage::Block { size } => size as usize,
        _ => 0,
    }
}

fn write_at(block: &mut [u8], offset: usize, bytes: &[u8]) -> Result<(), RunError> {
    let end = offset + bytes.len();
    if end > block.len() {
        return Err(RunError::Abi(format!("push constant at {offset}..{end} outside the {}-byte block", block.len())));
    }
    block[offset..end].copy_from_slice(bytes);
    Ok(())
}

fn is_bool(module: &Module, ty: TypeId) -> bool {
    matches!(module.types.get(ty), Type::Bool)
}

/// A `byte_buffer` input: `{"bytes": [..]}`, a plain array, or `{"fill", "len"}`.
fn byte_buffer_from_json(j: &serde_json::Value) -> Result<Vec<u8>, String> {
    use serde_json::Value as Json;
    let byte =
        |v: &Json| v.as_u64().filter(|b| *b <= 255).map(|b| b as u8).ok_or(format!("expected a byte, found {v}"));
    match j {
        Json::Array(a) => a.iter().map(byte).collect(),
        Json::Object(o) if o.contains_key("bytes") => byte_buffer_from_json(&o["bytes"]),
        Json::Object(o) if o.contains_key("fill") => {
            let len = o.get("len").and_then(Json::as_u64).ok_or("`fill` needs a `len`")?;
            Ok(vec![byte(&o["fill"])?; len as usize])
        }
        _ => Err(format!("expected a byte_buffer ({{\"bytes\": [...]}}), found {j}")),
    }
}
