//! The typed layer of the runner: interpreter-style inputs (arguments by
//! name, `docs/inputs-format.md`) become the byte buffers, the argument block
//! and the push-constant block the ABI describes (checked canonical first), and the buffers read back become `Outputs` in the
//! interpreter's encoding, so the two compare bit for bit.

use xir::{
    interp::{buffer_from_host_bytes, buffer_to_host_bytes, Inputs, Outputs},
    FuncId, Module, Type, TypeId,
};

use super::{dispatch, group_counts, Device, GpuTiming, RunError};
use crate::abi::{BufferStorage, KernelAbi, PropertyKind, Role};

/// The name an argument is given by in inputs and outputs.
fn arg_name(module: &Module, kernel: FuncId, arg: usize) -> String {
    module.func(kernel).args[arg].md.name.clone().unwrap_or_else(|| arg.to_string())
}

/// Run a compiled kernel on `device` with interpreter-style inputs.
pub fn run_kernel(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    words: &[u32],
    abi: &KernelAbi,
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming), RunError> {
    let func = module.func(kernel);
    let input = |arg: usize| {
        let name = arg_name(module, kernel, arg);
        inputs.args.get(&name).ok_or_else(|| RunError::Abi(format!("no input for argument `{name}`")))
    };
    abi.check_shape().map_err(|e| RunError::Abi(format!("the kernel ABI is not canonical: {e}")))?;
    let mut push = vec![0u8; abi.push_constant_size as usize];
    let mut block = abi.argument_block().map(|p| (p.binding, vec![0u8; block_len(p.storage)]));
    let mut buffers: Vec<Bound> = Vec::new();
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
                let host = buffer_to_host_bytes(module, elem, input(a)?)
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                let bytes = to_storage(module, elem, p.storage, host);
                buffers.push((p.binding, Some(a), elem, p.storage, bytes));
            }
            (PropertyKind::StorageBuffer, Role::ByteBuffer, Some(a)) => {
                let json = input(a)?;
                let bytes = byte_buffer_from_json(json)
                    .map_err(|e| RunError::Abi(format!("argument `{}`: {e}", arg_name(module, kernel, a))))?;
                buffers.push((p.binding, Some(a), TypeId(0), p.storage, bytes));
            }
            // An unused accel has no descriptor: nothing to bind.
            (PropertyKind::AccelerationStructure { roles: 0 }, Role::Accel, Some(_)) => {}
            (kind, role, arg) => {
                return Err(RunError::Abi(format!(
                    "this runner cannot bind {kind:?} with role {role:?} (argument {arg:?})"
                )))
            }
        }
    }
    if let Some((binding, bytes)) = block {
        buffers.push((binding, None, TypeId(0), BufferStorage::NotABuffer, bytes));
    }
    buffers.sort_by_key(|b| b.0);
    let data: Vec<Vec<u8>> = buffers.iter().map(|b| b.4.clone()).collect();
    let groups = group_counts(dispatch_size, abi.block_size);
    let (out, timing) = dispatch(device, words, abi, &data, &push, groups)?;
    let mut outputs = Outputs::default();
    for ((_, a, elem, storage, _), bytes) in buffers.iter().zip(out) {
        // The argument block is backend-owned: it is no output.
        let Some(a) = *a else { continue };
        let name = arg_name(module, kernel, a);
        let json = if matches!(module.types.get(func.args[a].ty), Type::ByteBuffer) {
            serde_json::json!({ "bytes": bytes })
        } else {
            let host = from_storage(module, *elem, *storage, bytes);
            buffer_from_host_bytes(module, *elem, &host)
                .map_err(|e| RunError::Abi(format!("reading `{name}` back: {e}")))?
        };
        outputs.buffers.insert(name, json);
    }
    Ok((outputs, timing))
}

/// One storage buffer to bind: (binding, argument (`None`: the argument block), element type, storage, bytes).
type Bound = (u32, Option<usize>, TypeId, BufferStorage, Vec<u8>);

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

/// Host bytes -> the ABI's storage: bool elements become one 0/1 word each;
/// everything else is stored byte-exactly at host offsets.
fn to_storage(module: &Module, elem: TypeId, storage: BufferStorage, host: Vec<u8>) -> Vec<u8> {
    if is_bool(module, elem) && matches!(storage, BufferStorage::Words { elem_size: 4, .. }) {
        return host.iter().flat_map(|&b| (b as u32).to_le_bytes()).collect();
    }
    host
}

fn from_storage(module: &Module, elem: TypeId, storage: BufferStorage, bytes: Vec<u8>) -> Vec<u8> {
    if is_bool(module, elem) && matches!(storage, BufferStorage::Words { elem_size: 4, .. }) {
        return bytes.chunks(4).map(|w| (w.iter().any(|&b| b != 0)) as u8).collect();
    }
    bytes
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
