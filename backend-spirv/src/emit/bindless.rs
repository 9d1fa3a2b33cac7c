//! Bindless buffers: the global buffer heap, the per-argument metadata
//! descriptors, and the four buffer operations through them (see `abi.rs`
//! and `plan/bindless.rs` for what is declared when).
//!
//! - **Heap** (set 2, binding 0, only when some access reads or writes): an
//!   unbounded `OpTypeRuntimeArray` of `Block { uint32[] }` word buffers in
//!   `StorageBuffer` (capability `RuntimeDescriptorArray`); `Aliased` (one
//!   buffer may sit in several slots or arguments), `NonWritable` only when no
//!   reachable instruction writes buffer memory.
//! - **Metadata** (set 0, beside the argument): `Block { {u32 heap index,
//!   u32 bytes}[] }`, `NonWritable`, never `Aliased`.
//! - `bindless.buffer_size(a, slot, stride)` = `meta[slot].bytes / stride`
//!   (metadata only); reads and writes load `meta[slot].heap index`, take the
//!   heap element `heap[index]` and move the value's 32/64-bit leaves as words
//!   at their host offsets (`index * size(T)` for typed elements); a
//!   `bindless.byte_buffer_read` is at alignment 1 like a byte buffer
//!   (`bytes.rs`: `offset >> 2` only when the offset is proven word-aligned).
//! - **8/16-bit typed elements** (`plan::bindless::typed_access`): the
//!   element starts at word `index * size / 4` (size a multiple of 4: every
//!   leaf's word and shift are constants) or at byte `index * size`
//!   (alignment `gcd(size, 4)`: word `A >> 2`, shift `(A & 3) * 8`). A leaf
//!   never straddles a word. Reads load each touched word once and extract
//!   (`>> shift`, `OpUConvert`, `OpBitcast`); writes gather the leaves of
//!   each word into one `(mask, bits)` update and either store whole words
//!   (every touched word fully covered) or apply the updates in the planned
//!   masked CAS loop (`bytes.rs`'s `masked_cas_loop`).
//! - **NonUniform**: when the plan marks the access divergent, `NonUniform`
//!   goes on the loaded heap index (the actual descriptor-array index), the
//!   heap-element access chain, every access chain derived from it and every
//!   load through those, with the capabilities `ShaderNonUniform` and
//!   `StorageBufferArrayNonUniformIndexing`. It never goes on the metadata
//!   walk's indices (interned constants such as 0), nor on anything when the
//!   slot is uniform.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, Op, StorageClass, Word};
use rustc_hash::{FxHashMap, FxHashSet};
use xir::{Inst, Opcode, Type, TypeId, Value};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::{PropertyKind, BINDLESS_METADATA_STRIDE, FIRST_HEAP_SET, LOCAL_SET};
use crate::plan::bindings::ArgBinding;
use crate::plan::bindless::{typed_access, Leaf, TypedAccess};

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

/// Where a typed sub-word element starts in its heap buffer.
#[derive(Clone, Copy)]
enum ElemAt {
    /// `size(T)` is a multiple of 4: the index of its first word.
    Word(Word),
    /// Otherwise: its byte address.
    Byte(Word),
}

/// The word updates of one sub-word write: per touched word, its pointer, byte mask
/// (`None` when the shift is dynamic) and the shifted bits of its leaves.
struct WordGroup {
    key: Option<u64>,
    ptr: Word,
    mask: Option<u32>,
    dyn_mask: Option<Word>,
    bits: Vec<Word>,
}

/// Bindless declarations of the module.
#[derive(Default)]
pub struct BindlessState {
    /// Metadata variables by kernel argument index.
    pub meta: FxHashMap<u32, Word>,
    /// The heap variable and the type of one heap element (`Block { uint32[] }`).
    pub heap: Option<(Word, Word)>,
}

impl Emitter<'_> {
    /// Declare the metadata descriptors the plan asks for, and the buffer heap when the ABI has it.
    pub(crate) fn declare_bindless(&mut self) -> EResult<()> {
        let plans = self.plans;
        let u32t = self.u32_ty();
        let mut meta_ptr = None;
        for (i, a) in plans.bindings.args.iter().enumerate() {
            let ArgBinding::Bindless { metadata: Some(binding) } = a else { continue };
            let pty = match meta_ptr {
                Some(p) => p,
                None => {
                    let sid = self.b.id();
                    let slot = self.b.type_struct_id(Some(sid), [u32t, u32t]);
                    for (k, off) in [(0u32, 0u32), (1, 4)] {
                        self.b.member_decorate(slot, k, Decoration::Offset, [Operand::LiteralBit32(off)]);
                    }
                    let rid = self.b.id();
                    let rta = self.b.type_runtime_array_id(Some(rid), slot);
                    self.decorate(rta, Decoration::ArrayStride, &[BINDLESS_METADATA_STRIDE]);
                    let bid = self.b.id();
                    let block = self.b.type_struct_id(Some(bid), [rta]);
                    self.decorate(block, Decoration::Block, &[]);
                    self.b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
                    self.b.name(block, "_BindlessMetadata");
                    let p = self.ptr_ty(StorageClass::StorageBuffer, block);
                    meta_ptr = Some(p);
                    p
                }
            };
            let var = self.global_var(pty, StorageClass::StorageBuffer);
            self.decorate(var, Decoration::DescriptorSet, &[LOCAL_SET]);
            self.decorate(var, Decoration::Binding, &[*binding]);
            self.decorate(var, Decoration::NonWritable, &[]);
            self.bindless.meta.insert(i as u32, var);
        }
        let heap = plans.bindings.abi.properties.iter().find(|p| p.kind == PropertyKind::BufferHeap);
        if let Some(p) = heap {
            if p.set != FIRST_HEAP_SET || p.binding != 0 {
                return err(format!("the buffer heap is planned at set {}, binding {}", p.set, p.binding));
            }
            let rid = self.b.id();
            let words = self.b.type_runtime_array_id(Some(rid), u32t);
            self.decorate(words, Decoration::ArrayStride, &[4]);
            let bid = self.b.id();
            let block = self.b.type_struct_id(Some(bid), [words]);
            self.decorate(block, Decoration::Block, &[]);
            self.b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
            let hid = self.b.id();
            let heap_ty = self.b.type_runtime_array_id(Some(hid), block);
            let pty = self.ptr_ty(StorageClass::StorageBuffer, heap_ty);
            let var = self.global_var(pty, StorageClass::StorageBuffer);
            self.b.name(var, "_BufferHeap");
            self.decorate(var, Decoration::DescriptorSet, &[p.set]);
            self.decorate(var, Decoration::Binding, &[0]);
            self.decorate(var, Decoration::Aliased, &[]);
            if !plans.writes_memory {
                self.decorate(var, Decoration::NonWritable, &[]);
            }
            self.cap(Capability::RuntimeDescriptorArray);
            self.bindless.heap = Some((var, block));
        }
        Ok(())
    }

    fn bindless_meta(&self, v: Value) -> EResult<Word> {
        match v {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => match self.bindless.meta.get(&a) {
                Some(&w) => Ok(w),
                None => err(format!("argument {a} has no bindless metadata descriptor (not planned)")),
            },
            _ => err("bindless operands must be kernel bindless_array arguments (callables are specialized)"),
        }
    }

    /// The current function and block, and the instructions it has so far.
    fn block_pos(&self) -> Option<(usize, usize, usize)> {
        let (f, b) = (self.b.selected_function()?, self.b.selected_block()?);
        Some((f, b, self.b.module_ref().functions[f].blocks[b].instructions.len()))
    }

    /// (word index, shift in bits, static word key) of the leaf at byte `off` of a sub-word element.
    fn leaf_word(&mut self, at: ElemAt, off: u64) -> EResult<(Word, Word, Option<u64>)> {
        let u32t = self.u32_ty();
        match at {
            ElemAt::Word(base) => {
                let w = if off < 4 {
                    base
                } else {
                    let k = self.u32_const((off / 4) as u32);
                    self.op(Op::IAdd, Some(u32t), None, ids(&[base, k]))?
                };
                Ok((w, self.u32_const((off % 4 * 8) as u32), Some(off / 4)))
            }
            ElemAt::Byte(a) => {
                let addr = if off == 0 {
                    a
                } else {
                    let k = self.u32_const(off as u32);
                    self.op(Op::IAdd, Some(u32t), None, ids(&[a, k]))?
                };
                let two = self.u32_const(2);
                let three = self.u32_const(3);
                let w = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[addr, two]))?;
                let low = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[addr, three]))?;
                let sh = self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[low, three]))?;
                Ok((w, sh, None))
            }
        }
    }

    /// The word at byte `off` of the element and the leaf's shift (a word with a static key is loaded once).
    fn load_leaf_word(
        &mut self,
        elem: Word,
        at: ElemAt,
        off: u64,
        loaded: &mut FxHashMap<u64, Word>,
    ) -> EResult<(Word, Word)> {
        let (w, sh, key) = self.leaf_word(at, off)?;
        if let Some(&x) = key.and_then(|k| loaded.get(&k)) {
            return Ok((x, sh));
        }
        let u32t = self.u32_ty();
        let p = self.byte_word_ptr(elem, w)?;
        let x = self.op(Op::Load, Some(u32t), None, ids(&[p]))?;
        if let Some(k) = key {
            loaded.insert(k, x);
        }
        Ok((x, sh))
    }

    /// Read `ty` at byte `off` of a sub-word element: each leaf from its containing word(s).
    fn read_subword(
        &mut self,
        elem: Word,
        ty: TypeId,
        at: ElemAt,
        off: u64,
        loaded: &mut FxHashMap<u64, Word>,
        rid: Option<Word>,
    ) -> EResult<Word> {
        let t = &self.m.types;
        let lt = self.ty(ty)?;
        let parts: Vec<(TypeId, u64)> = match t.get(ty).clone() {
            Type::Int { .. } | Type::Float(_) => {
                let bits = t.scalar_bits(ty);
                let u32t = self.u32_ty();
                let (lo, sh) = self.load_leaf_word(elem, at, off, loaded)?;
                let raw = match bits {
                    64 => {
                        let (hi, _) = self.load_leaf_word(elem, at, off + 4, loaded)?;
                        let uv2 = self.shape_ty(Shape { scalar: U32, lanes: 2 });
                        let pair = self.op(Op::CompositeConstruct, Some(uv2), None, ids(&[lo, hi]))?;
                        return self.op(Op::Bitcast, Some(lt), rid, ids(&[pair]));
                    }
                    32 => lo,
                    8 | 16 => {
                        let x = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[lo, sh]))?;
                        let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                        self.op(Op::UConvert, Some(ut), None, ids(&[x]))?
                    }
                    _ => return err(format!("a {bits}-bit scalar in the buffer heap")),
                };
                let rt = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                let op = if lt == rt { Op::CopyObject } else { Op::Bitcast };
                return self.op(op, Some(lt), rid, ids(&[raw]));
            }
            Type::Vector { elem: e, lanes } => {
                let s = t.size_align(e).0;
                (0..u64::from(lanes)).map(|k| (e, off + s * k)).collect()
            }
            Type::Array { elem: e, len } => {
                let s = t.size_align(e).0;
                (0..len).map(|k| (e, off + s * k)).collect()
            }
            Type::Struct { fields, .. } => {
                fields.iter().copied().zip(t.struct_offsets(ty)).map(|(f, o)| (f, off + o)).collect()
            }
            Type::Matrix { elem: e, dim } => {
                let stride = crate::plan::layout::matrix_stride(t, e, dim) as u64;
                let s = t.size_align(e).0;
                let et = self.ty(e)?;
                let col_t = self.b.type_vector(et, u32::from(dim));
                let mut cols = Vec::new();
                for c in 0..u64::from(dim) {
                    let mut rows = Vec::new();
                    for r in 0..u64::from(dim) {
                        rows.push(self.read_subword(elem, e, at, off + stride * c + s * r, loaded, None)?);
                    }
                    cols.push(self.op(Op::CompositeConstruct, Some(col_t), None, ids(&rows))?);
                }
                return self.op(Op::CompositeConstruct, Some(lt), rid, ids(&cols));
            }
            _ => return err("a non-data type in the buffer heap"),
        };
        let mut vals = Vec::with_capacity(parts.len());
        for (pt, o) in parts {
            vals.push(self.read_subword(elem, pt, at, o, loaded, None)?);
        }
        self.op(Op::CompositeConstruct, Some(lt), rid, ids(&vals))
    }

    /// Write `v` (leaves `leaves`) into a sub-word element: one `(mask, bits)` per touched word, stored
    /// whole when `masked` is false (every touched word fully covered), else in the CAS loop planned for `i`.
    fn write_subword(
        &mut self,
        i: Inst,
        elem: Word,
        at: ElemAt,
        leaves: &[Leaf],
        v: Word,
        masked: bool,
    ) -> EResult<()> {
        let u32t = self.u32_ty();
        let mut groups: Vec<WordGroup> = Vec::new();
        for l in leaves {
            let bits = self.m.types.scalar_bits(l.ty);
            let lt = self.ty(l.ty)?;
            let x = if l.path.is_empty() {
                v
            } else {
                let mut ops = vec![Operand::IdRef(v)];
                ops.extend(l.path.iter().map(|&k| Operand::LiteralBit32(k)));
                self.op(Op::CompositeExtract, Some(lt), None, ops)?
            };
            // (byte offset, u32 value, bytes) of the leaf's words.
            let pieces: Vec<(u64, Word, u32)> = match bits {
                64 => {
                    let uv2 = self.shape_ty(Shape { scalar: U32, lanes: 2 });
                    let pair = self.op(Op::Bitcast, Some(uv2), None, ids(&[x]))?;
                    let mut ps = Vec::new();
                    for k in 0..2u32 {
                        let w = self.op(
                            Op::CompositeExtract,
                            Some(u32t),
                            None,
                            vec![Operand::IdRef(pair), Operand::LiteralBit32(k)],
                        )?;
                        ps.push((l.offset + 4 * u64::from(k), w, 4));
                    }
                    ps
                }
                8 | 16 | 32 => {
                    let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                    let u = if lt == ut { x } else { self.op(Op::Bitcast, Some(ut), None, ids(&[x]))? };
                    let w = if bits == 32 { u } else { self.op(Op::UConvert, Some(u32t), None, ids(&[u]))? };
                    vec![(l.offset, w, bits / 8)]
                }
                _ => return err(format!("a {bits}-bit scalar in the buffer heap")),
            };
            for (off, w, n) in pieces {
                let (word, sh, key) = self.leaf_word(at, off)?;
                let shifted = if n == 4 { w } else { self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[w, sh]))? };
                let full: u32 = if n == 4 { u32::MAX } else { (1u32 << (8 * n)) - 1 };
                match groups.iter_mut().find(|g| key.is_some() && g.key == key) {
                    Some(g) => {
                        g.mask = g.mask.map(|m| m | full << (off % 4 * 8));
                        g.bits.push(shifted);
                    }
                    None => {
                        let ptr = self.byte_word_ptr(elem, word)?;
                        let (mask, dyn_mask) = match key {
                            Some(_) => (Some(full << (off % 4 * 8)), None),
                            None => {
                                let f = self.u32_const(full);
                                (None, Some(self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[f, sh]))?))
                            }
                        };
                        groups.push(WordGroup { key, ptr, mask, dyn_mask, bits: vec![shifted] });
                    }
                }
            }
        }
        let mut updates = Vec::with_capacity(groups.len());
        for g in groups {
            let mut bits = g.bits[0];
            for &b in &g.bits[1..] {
                bits = self.op(Op::BitwiseOr, Some(u32t), None, ids(&[bits, b]))?;
            }
            if !masked {
                if g.mask != Some(u32::MAX) {
                    return err("a partly covered word planned as a plain store");
                }
                self.op(Op::Store, None, None, ids(&[g.ptr, bits]))?;
                continue;
            }
            let keep = match (g.mask, g.dyn_mask) {
                (Some(m), _) => self.u32_const(!m),
                (None, Some(dm)) => self.op(Op::Not, Some(u32t), None, ids(&[dm]))?,
                (None, None) => return err("a word update without a mask"),
            };
            updates.push((g.ptr, keep, bits));
        }
        if masked {
            self.masked_cas_loop(i, &updates)?;
        }
        Ok(())
    }

    pub(crate) fn emit_bindless_op(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let meta = self.bindless_meta(d.operands[0])?;
        let slot = self.index32(d.operands[1])?;
        let u32t = self.u32_ty();
        let pu32 = self.ptr_ty(StorageClass::StorageBuffer, u32t);
        let zero = self.u32_const(0);
        if d.opcode == Opcode::BindlessBufferSize {
            let one = self.u32_const(1);
            let p = self.op(Op::AccessChain, Some(pu32), None, ids(&[meta, zero, slot, one]))?;
            let bytes = self.op(Op::Load, Some(u32t), None, ids(&[p]))?;
            let stride = self.index32(d.operands[2])?;
            let n = self.op(Op::UDiv, Some(u32t), None, ids(&[bytes, stride]))?;
            self.int_result(n, d.ty, rid)?;
            return Ok(());
        }
        let Some((heap, block)) = self.bindless.heap else {
            return err(format!("`{}` needs the buffer heap, which was not planned", d.opcode));
        };
        let p = self.op(Op::AccessChain, Some(pu32), None, ids(&[meta, zero, slot, zero]))?;
        let index = self.op(Op::Load, Some(u32t), None, ids(&[p]))?;
        let pblock = self.ptr_ty(StorageClass::StorageBuffer, block);
        let elem = self.op(Op::AccessChain, Some(pblock), None, ids(&[heap, index]))?;
        let start = self.block_pos();
        match d.opcode {
            Opcode::BindlessBufferRead | Opcode::BindlessBufferWrite => {
                let vt = if d.opcode == Opcode::BindlessBufferRead { d.ty } else { f.value_type(m, d.operands[3]) };
                let idx = self.index32(d.operands[2])?;
                let size = m.types.size_align(vt).0;
                let access = typed_access(&m.types, vt).map_err(|e| super::EmitError {
                    func: None,
                    inst: None,
                    message: format!("`{}` value: {e}", d.opcode),
                })?;
                let scaled = |e: &mut Self, k: u64| -> EResult<Word> {
                    if k == 1 {
                        return Ok(idx);
                    }
                    let k = e.u32_const(k as u32);
                    e.op(Op::IMul, Some(u32t), None, ids(&[idx, k]))
                };
                match access {
                    TypedAccess::Words => {
                        let base = scaled(self, size / 4)?;
                        if d.opcode == Opcode::BindlessBufferRead {
                            self.read_words(elem, vt, base, 0, rid)?;
                        } else {
                            let v = self.val(d.operands[3])?;
                            self.write_words(elem, vt, base, 0, v)?;
                        }
                    }
                    TypedAccess::SubWord { word_aligned, masked_write, leaves } => {
                        let at = if word_aligned {
                            ElemAt::Word(scaled(self, size / 4)?)
                        } else {
                            ElemAt::Byte(scaled(self, size)?)
                        };
                        if d.opcode == Opcode::BindlessBufferRead {
                            let mut loaded = FxHashMap::default();
                            self.read_subword(elem, vt, at, 0, &mut loaded, rid)?;
                        } else {
                            let v = self.val(d.operands[3])?;
                            self.write_subword(i, elem, at, &leaves, v, masked_write)?;
                        }
                    }
                }
            }
            Opcode::BindlessByteBufferRead => {
                let off = self.index32(d.operands[2])?;
                if super::bytes::word_aligned_at(m, f, d.operands[2], d.ty) {
                    let two = self.u32_const(2);
                    let base = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[off, two]))?;
                    self.read_words(elem, d.ty, base, 0, rid)?;
                } else {
                    self.read_bytes(elem, d.ty, off, 0, rid)?;
                }
            }
            op => return err(format!("`{op}` is not a bindless buffer operation")),
        }
        if self.plans.bindless.nonuniform.contains(&i) {
            self.mark_nonuniform(index, elem, start);
        }
        Ok(())
    }

    /// `NonUniform` on the heap index, the heap element pointer, and the
    /// access chains and loads derived from it among the instructions emitted
    /// since `start` in the block the access began in (a masked write's word
    /// pointers are computed there, before its CAS loop).
    fn mark_nonuniform(&mut self, index: Word, elem: Word, start: Option<(usize, usize, usize)>) {
        self.cap(Capability::ShaderNonUniform);
        self.cap(Capability::StorageBufferArrayNonUniformIndexing);
        let mut ptrs: FxHashSet<Word> = [elem].into_iter().collect();
        let mut marked = vec![index, elem];
        if let Some((fi, bi, start)) = start {
            let insts = &self.b.module_ref().functions[fi].blocks[bi].instructions;
            for inst in insts.iter().skip(start) {
                let base = match inst.operands.first() {
                    Some(Operand::IdRef(w)) => *w,
                    _ => continue,
                };
                let (Some(r), true) = (inst.result_id, ptrs.contains(&base)) else { continue };
                match inst.class.opcode {
                    Op::AccessChain => {
                        ptrs.insert(r);
                        marked.push(r);
                    }
                    Op::Load => marked.push(r),
                    _ => {}
                }
            }
        }
        for w in marked {
            self.decorate(w, Decoration::NonUniform, &[]);
        }
    }
}
