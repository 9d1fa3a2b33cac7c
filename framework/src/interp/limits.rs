//! The interpreter's limits: a kernel or input too large for a device, or
//! for this machine's memory, is refused by name before it runs (or when it
//! allocates) instead of running for minutes or exhausting memory. The fixed
//! limits are the compute limits desktop Vulkan devices (and lavapipe)
//! offer; the per-run budgets (steps, threads, printed bytes) are `Options`
//! fields that `xir-run` takes as flags. docs/inputs-format.md, "Limits",
//! lists them all.

use crate::ir::{FuncId, Module, Type, TypeId, TypeTable, Value};
use xir_spec::Opcode;

/// Threads in one block (`maxComputeWorkGroupInvocations`).
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// Block size per dimension (`maxComputeWorkGroupSize`).
pub const MAX_BLOCK_SIZE: [u32; 3] = [1024, 1024, 64];
/// Shared memory of one block: the host-layout bytes of every
/// `alloca.shared` the kernel reaches (`maxComputeSharedMemorySize`).
pub const MAX_SHARED_BYTES: u64 = 48 << 10;
/// Scalars in one variable or `undef` value (16 Mi: about 256 MiB here).
pub const MAX_VALUE_SCALARS: u64 = 1 << 24;
/// Scalars the local variables of one block's threads hold at once.
pub const MAX_BLOCK_LOCAL_SCALARS: u64 = 1 << 24;
/// Texels of one texture input, every mip level counted.
pub const MAX_TEXTURE_TEXELS: u64 = 1 << 22;
/// Texture size per dimension (`maxImageDimension2D`, `maxImageDimension3D`).
pub const MAX_TEXTURE_SIZE_2D: u32 = 16384;
pub const MAX_TEXTURE_SIZE_3D: u32 = 2048;

/// Storage cells a value of `ty` takes here: one per scalar or resource,
/// one per aggregate (so that empty structs count); saturating.
pub fn scalars(types: &TypeTable, ty: TypeId) -> u64 {
    match types.get(ty) {
        Type::Vector { lanes, .. } => 1 + *lanes as u64,
        Type::Matrix { dim, .. } => 1 + (*dim as u64) * (1 + *dim as u64),
        Type::Array { elem, len } => scalars(types, *elem).saturating_mul(*len).saturating_add(1),
        Type::Struct { fields, .. } => fields.iter().fold(1u64, |n, f| n.saturating_add(scalars(types, *f))),
        _ => 1,
    }
}

/// A limit a kernel or an input exceeds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("block size {block_size:?} exceeds the limit of {limit} in dimension {}", ["x", "y", "z"][*.dim])]
    BlockSize { block_size: [u32; 3], dim: usize, limit: u32 },
    #[error("{threads} threads per block exceed the limit of {MAX_BLOCK_THREADS}")]
    BlockThreads { threads: u64 },
    #[error("{bytes} bytes of shared memory exceed the limit of {MAX_SHARED_BYTES} bytes per block")]
    SharedBytes { bytes: u64 },
    #[error("texture size {size} exceeds the limit of {limit} for a {dim}D texture")]
    TextureSize { dim: u8, size: u32, limit: u32 },
}

/// Input readers report with messages, located by the caller.
impl From<LimitError> for String {
    fn from(e: LimitError) -> String {
        e.to_string()
    }
}

/// Why `block_size` exceeds the block limits, if it does.
pub fn check_block_size(block_size: [u32; 3]) -> Result<(), LimitError> {
    if let Some(dim) = (0..3).find(|&k| block_size[k] > MAX_BLOCK_SIZE[k]) {
        return Err(LimitError::BlockSize { block_size, dim, limit: MAX_BLOCK_SIZE[dim] });
    }
    let threads = block_size.iter().map(|&b| b as u64).product::<u64>();
    if threads > MAX_BLOCK_THREADS {
        return Err(LimitError::BlockThreads { threads });
    }
    Ok(())
}

/// Why the shared variables reachable from `kernel` exceed the limit, if they do.
pub fn check_shared(m: &Module, kernel: FuncId) -> Result<(), LimitError> {
    let mut seen = vec![false; m.functions.len()];
    let mut todo = vec![kernel];
    let mut bytes = 0u64;
    while let Some(fid) = todo.pop() {
        if std::mem::replace(&mut seen[fid.index()], true) {
            continue;
        }
        let f = m.func(fid);
        for &b in f.blocks() {
            for &i in f.block(b).insts() {
                if !f.inst_exists(i) {
                    continue;
                }
                let d = f.inst(i);
                match d.opcode {
                    Opcode::AllocaShared if m.types.contains(d.ty) => {
                        bytes = bytes.saturating_add(m.types.size_align(d.ty).0)
                    }
                    Opcode::Call => {
                        if let Some(Value::Func(g)) = d.operands.first() {
                            if g.index() < seen.len() {
                                todo.push(*g);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if bytes > MAX_SHARED_BYTES {
        return Err(LimitError::SharedBytes { bytes });
    }
    Ok(())
}

/// Why a texture of `size` (level 0) exceeds the limits, if it does.
pub fn check_texture_size(dim: u8, size: &[u32]) -> Result<(), LimitError> {
    let limit = if dim == 3 { MAX_TEXTURE_SIZE_3D } else { MAX_TEXTURE_SIZE_2D };
    if let Some(&size) = size.iter().find(|&&s| s > limit) {
        return Err(LimitError::TextureSize { dim, size, limit });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_count_every_cell_and_saturate() {
        let mut t = TypeTable::default();
        let v3 = t.vector(TypeTable::F32, 3);
        assert_eq!(scalars(&t, v3), 4);
        let big = t.array(TypeTable::U32, u64::MAX);
        assert_eq!(scalars(&t, big), u64::MAX);
        let empty = t.intern(Type::Struct { fields: vec![], align: 4 });
        let many = t.array(empty, 1 << 40);
        assert_eq!(scalars(&t, many), (1 << 40) + 1);
    }

    #[test]
    fn block_sizes_past_the_device_limits_are_named() {
        assert_eq!(check_block_size([1024, 1, 1]), Ok(()));
        let wide = check_block_size([2048, 1, 1]).unwrap_err();
        assert_eq!(wide, LimitError::BlockSize { block_size: [2048, 1, 1], dim: 0, limit: 1024 });
        assert_eq!(wide.to_string(), "block size [2048, 1, 1] exceeds the limit of 1024 in dimension x");
        let many = check_block_size([64, 32, 1]).unwrap_err();
        assert_eq!(many, LimitError::BlockThreads { threads: 2048 });
        assert_eq!(many.to_string(), "2048 threads per block exceed the limit of 1024");
        assert_eq!(
            check_texture_size(2, &[16385, 1]),
            Err(LimitError::TextureSize { dim: 2, size: 16385, limit: MAX_TEXTURE_SIZE_2D })
        );
    }
}
