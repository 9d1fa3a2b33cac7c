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
//! - **8/16-bit typed elements** (`plan::layout::typed_access`): moved leaf
//!   by leaf inside their containing words (`subword.rs`, shared with
//!   word-ABI buffers); a write of a partly covered word is the planned
//!   masked CAS loop.
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
use xir::{Inst, Opcode, Value};

use super::instructions::ids;
use super::subword::ElemAt;
use super::{err, EResult, Emitter};
use crate::abi::{PropertyKind, BINDLESS_METADATA_STRIDE, FIRST_HEAP_SET, LOCAL_SET};
use crate::plan::bindings::ArgBinding;
use crate::plan::layout::{typed_access, TypedAccess};

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
                if crate::plan::byte_access::word_aligned_at(m, f, d.operands[2], d.ty) {
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
