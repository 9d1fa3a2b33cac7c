//! Buffer and byte-buffer access. Typed buffers use an access chain into the
//! laid-out element (`OpCopyLogical` between laid-out and logical aggregate
//! types). Word-ABI buffers (64-bit 3/4-vectors, see `plan::layout`) and
//! byte buffers move each scalar of the element as one or two `uint32`
//! words at its host byte offset: 64-bit scalars through a `uvec2` bitcast.
//! Word-ABI elements with sub-word leaves (`bool` bytes, 8/16-bit scalars)
//! move inside their words (`subword.rs`): a write of a partly covered word
//! is a masked CAS loop. Byte-buffer accesses whose offset is proven a
//! multiple of 4 and whose leaves are 32/64-bit words at multiples of 4 take
//! `offset >> 2` as the first word; every other byte access is at alignment 1
//! (`bytes.rs`). `var` may also be a
//! pointer to one buffer `Block` of the bindless heap (`emit/bindless.rs`).
//! `buffer.write_part` stores only the part its path reaches (an access
//! chain past the element, or the part's words; see its function).
//!
//! A volatile access (`buffer.volatile_read` / `buffer.volatile_write`) is
//! the same lowering with every `OpLoad` / `OpStore` of the element carrying
//! the `Volatile` memory operand, and a device-scope `OpMemoryBarrier`
//! (acquire-release, uniform memory) before a read and after a write: the
//! read sees what other invocations published before their fence, and the
//! write is published by its own. The buffer's declaration is `Coherent`
//! (`plan::coherence`), so neither is satisfied from a non-coherent cache.

use rspirv::dr::Operand;
use rspirv::spirv::{MemorySemantics, Op, Scope, StorageClass, Word};
use rustc_hash::FxHashMap;
use xir::{Inst, Opcode, Type, TypeId, Value};

use super::globals::BufferVar;
use super::instructions::ids;
use super::subword::ElemAt;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::BufferStorage;
use crate::plan::layout::{self, TypedAccess};

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

impl Emitter<'_> {
    pub(crate) fn buffer_var(&self, v: Value) -> EResult<BufferVar> {
        match v {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => match self.globals.buffers.get(&a) {
                Some(b) => Ok(*b),
                None => err(format!("argument {a} is not a bound buffer")),
            },
            _ => err("buffer operands must be kernel buffer arguments (callables taking buffers are specialized)"),
        }
    }

    /// The device fence beside a volatile access (see the module doc).
    fn volatile_fence(&mut self) -> EResult<()> {
        let scope = self.u32_const(Scope::Device as u32);
        let sem = self.u32_const((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::UNIFORM_MEMORY).bits());
        self.op(Op::MemoryBarrier, None, None, ids(&[scope, sem]))?;
        Ok(())
    }

    pub(crate) fn emit_buffer_op(&mut self, i: Inst) -> EResult<()> {
        let op = self.m.func(self.fs.func.expect("in function")).opcode(i);
        let volatile = crate::plan::coherence::is_volatile_access(op);
        if !volatile {
            return self.emit_buffer_access(i);
        }
        if op == Opcode::BufferVolatileRead {
            self.volatile_fence()?;
        }
        self.volatile = true;
        let r = self.emit_buffer_access(i);
        self.volatile = false;
        r?;
        if op == Opcode::BufferVolatileWrite {
            self.volatile_fence()?;
        }
        Ok(())
    }

    fn emit_buffer_access(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let buf = self.buffer_var(d.operands[0])?;
        let u32t = self.u32_ty();
        match d.opcode {
            Opcode::BufferSize | Opcode::ByteBufferSize => {
                let n = self.op(
                    Op::ArrayLength,
                    Some(u32t),
                    None,
                    vec![Operand::IdRef(buf.var), Operand::LiteralBit32(0)],
                )?;
                let elems = match buf.storage {
                    BufferStorage::Typed { .. } => n,
                    BufferStorage::Words { elem_size: 1, .. } => {
                        let four = self.u32_const(4);
                        self.op(Op::IMul, Some(u32t), None, ids(&[n, four]))?
                    }
                    BufferStorage::Words { elem_size, .. } if elem_size.is_multiple_of(4) => {
                        let k = self.u32_const(elem_size / 4);
                        self.op(Op::UDiv, Some(u32t), None, ids(&[n, k]))?
                    }
                    BufferStorage::Words { elem_size, .. } => {
                        // Whole elements in the binding's bytes (below 4 GiB: `n * 4` cannot wrap).
                        let four = self.u32_const(4);
                        let bytes = self.op(Op::IMul, Some(u32t), None, ids(&[n, four]))?;
                        let k = self.u32_const(elem_size);
                        self.op(Op::UDiv, Some(u32t), None, ids(&[bytes, k]))?
                    }
                    BufferStorage::NotABuffer | BufferStorage::Block { .. } => return err("not a user buffer"),
                };
                self.int_result(elems, d.ty, rid)?;
            }
            Opcode::BufferRead | Opcode::BufferWrite | Opcode::BufferVolatileRead | Opcode::BufferVolatileWrite => {
                let reads = matches!(d.opcode, Opcode::BufferRead | Opcode::BufferVolatileRead);
                let idx = self.index32(d.operands[1])?;
                let elem = buf.elem.expect("typed buffer has an element type");
                match buf.storage {
                    BufferStorage::Typed { .. } if buf.int_view => {
                        let bits = m.types.scalar_bits(elem);
                        let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                        let pty = self.ptr_ty(StorageClass::StorageBuffer, ut);
                        let zero = self.u32_const(0);
                        let p = self.op(Op::AccessChain, Some(pty), None, ids(&[buf.var, zero, idx]))?;
                        let lt = self.ty(elem)?;
                        if reads {
                            let raw = self.op(Op::Load, Some(ut), None, ids(&[p]))?;
                            self.op(Op::Bitcast, Some(lt), rid, ids(&[raw]))?;
                        } else {
                            let v = self.val(d.operands[2])?;
                            let raw = self.op(Op::Bitcast, Some(ut), None, ids(&[v]))?;
                            self.op(Op::Store, None, None, ids(&[p, raw]))?;
                        }
                    }
                    BufferStorage::Typed { .. } => {
                        let st = self.storage_ty(elem)?;
                        let pty = self.ptr_ty(StorageClass::StorageBuffer, st);
                        let zero = self.u32_const(0);
                        let p = self.op(Op::AccessChain, Some(pty), None, ids(&[buf.var, zero, idx]))?;
                        let copy = self.needs_copy_logical(elem);
                        let lt = self.ty(elem)?;
                        if reads {
                            if copy {
                                let raw = self.op(Op::Load, Some(st), None, ids(&[p]))?;
                                self.op(Op::CopyLogical, Some(lt), rid, ids(&[raw]))?;
                            } else {
                                self.op(Op::Load, Some(lt), rid, ids(&[p]))?;
                            }
                        } else {
                            let mut v = self.val(d.operands[2])?;
                            if copy {
                                v = self.op(Op::CopyLogical, Some(st), None, ids(&[v]))?;
                            }
                            self.op(Op::Store, None, None, ids(&[p, v]))?;
                        }
                    }
                    BufferStorage::Words { elem_size, .. } => {
                        let access = layout::typed_access(&m.types, elem).map_err(|e| super::EmitError {
                            func: None,
                            inst: None,
                            message: format!("`{}` element: {e}", d.opcode),
                        })?;
                        let scaled = |e: &mut Self, k: u32| -> EResult<Word> {
                            if k == 1 {
                                return Ok(idx);
                            }
                            let k = e.u32_const(k);
                            e.op(Op::IMul, Some(u32t), None, ids(&[idx, k]))
                        };
                        match access {
                            TypedAccess::Words => {
                                let base = scaled(self, elem_size / 4)?;
                                if reads {
                                    self.read_words(buf.var, elem, base, 0, rid)?;
                                } else {
                                    let v = self.val(d.operands[2])?;
                                    self.write_words(buf.var, elem, base, 0, v)?;
                                }
                            }
                            TypedAccess::SubWord { word_aligned, masked_write, leaves } => {
                                let at = if word_aligned {
                                    ElemAt::Word(scaled(self, elem_size / 4)?)
                                } else {
                                    ElemAt::Byte(scaled(self, elem_size)?)
                                };
                                if reads {
                                    self.read_subword(buf.var, elem, at, 0, &mut FxHashMap::default(), rid)?;
                                } else {
                                    let v = self.val(d.operands[2])?;
                                    self.write_subword(i, buf.var, at, &leaves, v, masked_write)?;
                                }
                            }
                        }
                    }
                    BufferStorage::NotABuffer | BufferStorage::Block { .. } => return err("not a user buffer"),
                }
            }
            Opcode::BufferWritePart => self.emit_buffer_write_part(i, buf)?,
            Opcode::ByteBufferRead | Opcode::ByteBufferWrite
                if !crate::plan::byte_access::word_aligned(
                    m,
                    f,
                    i,
                    if d.opcode == Opcode::ByteBufferRead { d.ty } else { f.value_type(m, d.operands[2]) },
                ) =>
            {
                // Alignment 1 (`bytes.rs`): funnel reads, masked CAS stores.
                let off = self.index32(d.operands[1])?;
                if d.opcode == Opcode::ByteBufferRead {
                    self.read_bytes(buf.var, d.ty, off, 0, rid)?;
                } else {
                    let vt = f.value_type(m, d.operands[2]);
                    let v = self.val(d.operands[2])?;
                    self.write_bytes_masked(i, buf.var, vt, off, v)?;
                }
            }
            Opcode::ByteBufferRead | Opcode::ByteBufferWrite => {
                let off = self.index32(d.operands[1])?;
                let two = self.u32_const(2);
                let base = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[off, two]))?;
                if d.opcode == Opcode::ByteBufferRead {
                    self.read_words(buf.var, d.ty, base, 0, rid)?;
                } else {
                    let vt = f.value_type(m, d.operands[2]);
                    let v = self.val(d.operands[2])?;
                    self.write_words(buf.var, vt, base, 0, v)?;
                }
            }
            op => return err(format!("`{op}` is not a buffer operation")),
        }
        Ok(())
    }

    /// `buffer.write_part`: a typed buffer stores the part through an access
    /// chain into the element (`OpCopyLogical` to the laid-out type for an
    /// array or struct part); a word-ABI buffer writes exactly the part's
    /// leaves, a word shared with other bytes through the planned masked CAS
    /// loop (`plan::layout::part_access`). Either way no byte outside the
    /// part is stored, so other invocations' writes to the rest survive.
    fn emit_buffer_write_part(&mut self, i: Inst, buf: BufferVar) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let elem = buf.elem.expect("typed buffer has an element type");
        let path = &d.operands[3..];
        let idx = self.index32(d.operands[1])?;
        let part_ty = f.value_type(m, d.operands[2]);
        match buf.storage {
            BufferStorage::Typed { .. } if buf.int_view => err("a partial write into a scalar buffer element"),
            BufferStorage::Typed { .. } => {
                let st = self.storage_ty(part_ty)?;
                let pty = self.ptr_ty(StorageClass::StorageBuffer, st);
                let zero = self.u32_const(0);
                let mut chain = vec![buf.var, zero, idx];
                chain.extend(self.index_chain(elem, path)?);
                let p = self.op(Op::AccessChain, Some(pty), None, ids(&chain))?;
                let mut v = self.val(d.operands[2])?;
                if self.needs_copy_logical(part_ty) {
                    v = self.op(Op::CopyLogical, Some(st), None, ids(&[v]))?;
                }
                self.op(Op::Store, None, None, ids(&[p, v]))?;
                Ok(())
            }
            BufferStorage::Words { elem_size, .. } => {
                let steps = layout::constant_path(m, path);
                let part = layout::part_access(&m.types, elem, &steps).map_err(|e| super::EmitError {
                    func: None,
                    inst: None,
                    message: format!("`{}`: {e}", d.opcode),
                })?;
                let u32t = self.u32_ty();
                // The element's first word (size a multiple of 4) or first byte.
                let scale = if part.word_aligned { elem_size / 4 } else { elem_size };
                let first = if scale == 1 {
                    idx
                } else {
                    let k = self.u32_const(scale);
                    self.op(Op::IMul, Some(u32t), None, ids(&[idx, k]))?
                };
                let at = if part.word_aligned { ElemAt::Word(first) } else { ElemAt::Byte(first) };
                let v = self.val(d.operands[2])?;
                self.write_subword(i, buf.var, at, &part.leaves, v, part.masked_write)
            }
            BufferStorage::NotABuffer | BufferStorage::Block { .. } => err("not a user buffer"),
        }
    }

    /// Convert a `u32` to an integer result type.
    pub(crate) fn int_result(&mut self, v: Word, ty: TypeId, rid: Option<Word>) -> EResult<Word> {
        let s = self.shape(ty)?;
        let t = self.shape_ty(s);
        match s.scalar {
            ScalarKind::Int { bits: 32, signed: false } => self.op(Op::CopyObject, Some(t), rid, ids(&[v])),
            ScalarKind::Int { bits: 32, signed: true } => self.op(Op::Bitcast, Some(t), rid, ids(&[v])),
            ScalarKind::Int { signed: false, .. } => self.op(Op::UConvert, Some(t), rid, ids(&[v])),
            ScalarKind::Int { bits, signed: true } => {
                let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                let w = self.op(Op::UConvert, Some(ut), None, ids(&[v]))?;
                self.op(Op::Bitcast, Some(t), rid, ids(&[w]))
            }
            _ => err("size queries return integers"),
        }
    }

    fn word_ptr(&mut self, var: Word, base: Word, byte_off: u64) -> EResult<Word> {
        let u32t = self.u32_ty();
        let w = if byte_off == 0 {
            base
        } else {
            let k = self.u32_const((byte_off / 4) as u32);
            self.op(Op::IAdd, Some(u32t), None, ids(&[base, k]))?
        };
        let pty = self.ptr_ty(StorageClass::StorageBuffer, u32t);
        let zero = self.u32_const(0);
        self.op(Op::AccessChain, Some(pty), None, ids(&[var, zero, w]))
    }

    /// Read a value of type `ty` whose host layout starts `off` bytes after word `base`.
    pub(crate) fn read_words(
        &mut self,
        var: Word,
        ty: TypeId,
        base: Word,
        off: u64,
        rid: Option<Word>,
    ) -> EResult<Word> {
        let m = self.m;
        let t = &m.types;
        let lt = self.ty(ty)?;
        match t.get(ty).clone() {
            Type::Int { .. } | Type::Float(_) => {
                let u32t = self.u32_ty();
                let bits = t.scalar_bits(ty);
                let p = self.word_ptr(var, base, off)?;
                let lo = self.op(Op::Load, Some(u32t), None, ids(&[p]))?;
                if bits == 32 {
                    if self.shape(ty)?.scalar == U32 {
                        return self.op(Op::CopyObject, Some(lt), rid, ids(&[lo]));
                    }
                    return self.op(Op::Bitcast, Some(lt), rid, ids(&[lo]));
                }
                if bits != 64 {
                    return err(format!("{bits}-bit scalar in word storage"));
                }
                let p2 = self.word_ptr(var, base, off + 4)?;
                let hi = self.op(Op::Load, Some(u32t), None, ids(&[p2]))?;
                let uv2 = self.shape_ty(Shape { scalar: U32, lanes: 2 });
                let pair = self.op(Op::CompositeConstruct, Some(uv2), None, ids(&[lo, hi]))?;
                self.op(Op::Bitcast, Some(lt), rid, ids(&[pair]))
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(elem).0;
                let mut parts = Vec::new();
                for k in 0..lanes as u64 {
                    parts.push(self.read_words(var, elem, base, off + s * k, None)?);
                }
                self.op(Op::CompositeConstruct, Some(lt), rid, ids(&parts))
            }
            Type::Matrix { elem, dim } => {
                let stride = layout::matrix_stride(t, elem, dim) as u64;
                let s = t.size_align(elem).0;
                let et = self.ty(elem)?;
                let col_t = self.b.type_vector(et, dim as u32);
                let mut cols = Vec::new();
                for c in 0..dim as u64 {
                    let mut rows = Vec::new();
                    for r in 0..dim as u64 {
                        rows.push(self.read_words(var, elem, base, off + stride * c + s * r, None)?);
                    }
                    cols.push(self.op(Op::CompositeConstruct, Some(col_t), None, ids(&rows))?);
                }
                self.op(Op::CompositeConstruct, Some(lt), rid, ids(&cols))
            }
            Type::Array { elem, len } => {
                let s = t.size_align(elem).0;
                let mut parts = Vec::new();
                for k in 0..len {
                    parts.push(self.read_words(var, elem, base, off + s * k, None)?);
                }
                self.op(Op::CompositeConstruct, Some(lt), rid, ids(&parts))
            }
            Type::Struct { fields, .. } => {
                let offs = t.struct_offsets(ty);
                let mut parts = Vec::new();
                for (fty, o) in fields.iter().zip(offs) {
                    parts.push(self.read_words(var, *fty, base, off + o, None)?);
                }
                self.op(Op::CompositeConstruct, Some(lt), rid, ids(&parts))
            }
            _ => err("non-data type in word storage"),
        }
    }

    /// Write `v` of type `ty` at `off` bytes after word `base`.
    pub(crate) fn write_words(&mut self, var: Word, ty: TypeId, base: Word, off: u64, v: Word) -> EResult<()> {
        let m = self.m;
        let t = &m.types;
        let u32t = self.u32_ty();
        match t.get(ty).clone() {
            Type::Int { .. } | Type::Float(_) => {
                let bits = t.scalar_bits(ty);
                if bits == 32 {
                    let w = if self.shape(ty)?.scalar == U32 {
                        v
                    } else {
                        self.op(Op::Bitcast, Some(u32t), None, ids(&[v]))?
                    };
                    let p = self.word_ptr(var, base, off)?;
                    self.op(Op::Store, None, None, ids(&[p, w]))?;
                } else if bits == 64 {
                    for (k, w) in self.u64_words(v)?.into_iter().enumerate() {
                        let p = self.word_ptr(var, base, off + 4 * k as u64)?;
                        self.op(Op::Store, None, None, ids(&[p, w]))?;
                    }
                } else {
                    return err(format!("{bits}-bit scalar in word storage"));
                }
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(elem).0;
                let et = self.ty(elem)?;
                for k in 0..lanes as u32 {
                    let x = self.op(
                        Op::CompositeExtract,
                        Some(et),
                        None,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                    )?;
                    self.write_words(var, elem, base, off + s * k as u64, x)?;
                }
            }
            Type::Matrix { elem, dim } => {
                let stride = layout::matrix_stride(t, elem, dim) as u64;
                let s = t.size_align(elem).0;
                let et = self.ty(elem)?;
                for c in 0..dim as u32 {
                    for r in 0..dim as u32 {
                        let x = self.op(
                            Op::CompositeExtract,
                            Some(et),
                            None,
                            vec![Operand::IdRef(v), Operand::LiteralBit32(c), Operand::LiteralBit32(r)],
                        )?;
                        self.write_words(var, elem, base, off + stride * c as u64 + s * r as u64, x)?;
                    }
                }
            }
            Type::Array { elem, len } => {
                let s = t.size_align(elem).0;
                let et = self.ty(elem)?;
                for k in 0..len {
                    let x = self.op(
                        Op::CompositeExtract,
                        Some(et),
                        None,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(k as u32)],
                    )?;
                    self.write_words(var, elem, base, off + s * k, x)?;
                }
            }
            Type::Struct { fields, .. } => {
                let offs = t.struct_offsets(ty);
                for (k, (fty, o)) in fields.iter().zip(offs).enumerate() {
                    let et = self.ty(*fty)?;
                    let x = self.op(
                        Op::CompositeExtract,
                        Some(et),
                        None,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(k as u32)],
                    )?;
                    self.write_words(var, *fty, base, off + o, x)?;
                }
            }
            _ => return err("non-data type in word storage"),
        }
        Ok(())
    }
}
