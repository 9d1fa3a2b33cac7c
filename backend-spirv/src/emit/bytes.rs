//! Raw byte-buffer access at alignment 1 (the reference: raw byte operations
//! have no alignment proof). A `byte_buffer` is a `uint32` word array; a value
//! is moved leaf by leaf (8/16/32/64-bit scalars at their host offsets):
//!
//! - **Aligned fast path**: when the byte offset is provably a multiple of 4
//!   ([`known_alignment`](crate::plan::byte_access::known_alignment): constants, `mul`/`shl`/`add`/`bit_and` of such) and
//!   every leaf is a 32/64-bit scalar at a multiple of 4, the plain word loads
//!   and stores of `memory.rs` are used.
//! - **Reads** otherwise: each piece of at most 4 bytes at byte address `A` is
//!   `(w[A>>2] >> sh) | (w[(A+s-1)>>2] << ((32-sh) & 31))` with `sh = (A&3)*8`
//!   (both words are the same when the piece does not straddle, so no word
//!   past the piece is read), truncated to the leaf's width.
//! - **Writes** otherwise: one masked compare-and-swap loop per instruction
//!   (planned as a CAS site, `plan::control_flow`): every piece touches its
//!   low word and, when it straddles, its high word with `(old & !mask) |
//!   bits`; the loop repeats until every CAS of the iteration saw the value
//!   it loaded. Re-applying a piece that succeeded earlier rewrites the same
//!   bytes, so bytes of other threads in the same word are never lost.
//!   Atomics are `Relaxed` at `Device` scope, like every XIR atomic.
//!
//! A store inside a loop's prepare block (its header) cannot be expanded into
//! a CAS loop and is rejected by the control-flow plan.

use rspirv::dr::Operand;
use rspirv::spirv::{MemorySemantics, Op, Scope, StorageClass, Word};
use xir::{Inst, Type, TypeId};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind};
use crate::plan::layout;

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

/// One masked word update of a store: (word pointer, `!mask`, bits).
pub(crate) type WordUpdate = (Word, Word, Word);

impl Emitter<'_> {
    /// The two `u32` words of a 64-bit value, low word first (its bits
    /// through a `vec<u32, 2>` bitcast): how 64-bit values are stored or
    /// printed as words.
    pub(super) fn u64_words(&mut self, v: Word) -> EResult<[Word; 2]> {
        let u32t = self.u32_ty();
        let uv2 = self.shape_ty(super::Shape { scalar: U32, lanes: 2 });
        let pair = self.op(Op::Bitcast, Some(uv2), None, ids(&[v]))?;
        let mut words = [0; 2];
        for (k, w) in words.iter_mut().enumerate() {
            let part = vec![Operand::IdRef(pair), Operand::LiteralBit32(k as u32)];
            *w = self.op(Op::CompositeExtract, Some(u32t), None, part)?;
        }
        Ok(words)
    }

    /// The pointer to word `word` of the word-buffer block `var` (also a bindless heap element).
    pub(crate) fn byte_word_ptr(&mut self, var: Word, word: Word) -> EResult<Word> {
        let u32t = self.u32_ty();
        let pty = self.ptr_ty(StorageClass::StorageBuffer, u32t);
        let zero = self.u32_const(0);
        self.op(Op::AccessChain, Some(pty), None, ids(&[var, zero, word]))
    }

    /// `addr + k` (u32 arithmetic).
    fn byte_addr(&mut self, addr: Word, k: u64) -> EResult<Word> {
        if k == 0 {
            return Ok(addr);
        }
        let u32t = self.u32_ty();
        let c = self.u32_const(k as u32);
        self.op(Op::IAdd, Some(u32t), None, ids(&[addr, c]))
    }

    /// (low word index, high word index, shift in bits) of an `s`-byte piece at byte address `a`.
    fn piece_words(&mut self, a: Word, s: u32) -> EResult<(Word, Word, Word)> {
        let u32t = self.u32_ty();
        let two = self.u32_const(2);
        let three = self.u32_const(3);
        let lo = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[a, two]))?;
        let last = self.byte_addr(a, u64::from(s - 1))?;
        let hi = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[last, two]))?;
        let low = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[a, three]))?;
        let sh = self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[low, three]))?;
        Ok((lo, hi, sh))
    }

    /// The `s`-byte piece (s <= 4) at byte address `a`, in the low bytes of a u32.
    fn read_piece(&mut self, var: Word, a: Word, s: u32) -> EResult<Word> {
        let u32t = self.u32_ty();
        let (lo_i, hi_i, sh) = self.piece_words(a, s)?;
        let p_lo = self.byte_word_ptr(var, lo_i)?;
        let p_hi = self.byte_word_ptr(var, hi_i)?;
        let lo = self.op(Op::Load, Some(u32t), None, ids(&[p_lo]))?;
        let hi = self.op(Op::Load, Some(u32t), None, ids(&[p_hi]))?;
        let c32 = self.u32_const(32);
        let c31 = self.u32_const(31);
        let inv0 = self.op(Op::ISub, Some(u32t), None, ids(&[c32, sh]))?;
        let inv = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[inv0, c31]))?;
        let a_part = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[lo, sh]))?;
        let b_part = self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[hi, inv]))?;
        self.op(Op::BitwiseOr, Some(u32t), None, ids(&[a_part, b_part]))
    }

    /// A scalar of `bits` at byte address `a` as the logical type `ty`.
    fn read_scalar_bytes(&mut self, var: Word, ty: TypeId, a: Word, rid: Option<Word>) -> EResult<Word> {
        let bits = self.m.types.scalar_bits(ty);
        let lt = self.ty(ty)?;
        let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
        let raw = match bits {
            64 => {
                let lo = self.read_piece(var, a, 4)?;
                let a4 = self.byte_addr(a, 4)?;
                let hi = self.read_piece(var, a4, 4)?;
                let uv2 = self.shape_ty(super::Shape { scalar: U32, lanes: 2 });
                let pair = self.op(Op::CompositeConstruct, Some(uv2), None, ids(&[lo, hi]))?;
                return self.op(Op::Bitcast, Some(lt), rid, ids(&[pair]));
            }
            32 => self.read_piece(var, a, 4)?,
            8 | 16 => {
                let w = self.read_piece(var, a, bits / 8)?;
                self.op(Op::UConvert, Some(ut), None, ids(&[w]))?
            }
            _ => return err(format!("a {bits}-bit scalar in a byte buffer")),
        };
        if lt == ut {
            self.op(Op::CopyObject, Some(lt), rid, ids(&[raw]))
        } else {
            self.op(Op::Bitcast, Some(lt), rid, ids(&[raw]))
        }
    }

    /// Read `ty` at byte address `a` + `off`, any alignment.
    pub(crate) fn read_bytes(&mut self, var: Word, ty: TypeId, a: Word, off: u64, rid: Option<Word>) -> EResult<Word> {
        let t = &self.m.types;
        let lt = self.ty(ty)?;
        let parts: Vec<(TypeId, u64)> = match t.get(ty).clone() {
            Type::Int { .. } | Type::Float(_) => {
                let at = self.byte_addr(a, off)?;
                return self.read_scalar_bytes(var, ty, at, rid);
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(elem).0;
                (0..lanes as u64).map(|k| (elem, off + s * k)).collect()
            }
            Type::Array { elem, len } => {
                let s = t.size_align(elem).0;
                (0..len).map(|k| (elem, off + s * k)).collect()
            }
            Type::Struct { fields, .. } => {
                fields.iter().copied().zip(t.struct_offsets(ty)).map(|(f, o)| (f, off + o)).collect()
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
                        rows.push(self.read_bytes(var, elem, a, off + stride * c + s * r, None)?);
                    }
                    cols.push(self.op(Op::CompositeConstruct, Some(col_t), None, ids(&rows))?);
                }
                return self.op(Op::CompositeConstruct, Some(lt), rid, ids(&cols));
            }
            _ => return err("a non-data type in a byte buffer"),
        };
        let mut vals = Vec::with_capacity(parts.len());
        for (pt, o) in parts {
            vals.push(self.read_bytes(var, pt, a, o, None)?);
        }
        self.op(Op::CompositeConstruct, Some(lt), rid, ids(&vals))
    }

    /// The masked word updates of writing scalar `v` (type `ty`) at byte address `a`.
    fn scalar_updates(&mut self, var: Word, ty: TypeId, a: Word, v: Word, out: &mut Vec<WordUpdate>) -> EResult<()> {
        let u32t = self.u32_ty();
        let bits = self.m.types.scalar_bits(ty);
        let lt = self.ty(ty)?;
        let pieces: Vec<(Word, Word, u32)> = match bits {
            64 => {
                let [lo, hi] = self.u64_words(v)?;
                vec![(self.byte_addr(a, 0)?, lo, 4), (self.byte_addr(a, 4)?, hi, 4)]
            }
            8 | 16 | 32 => {
                let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                let u = if lt == ut { v } else { self.op(Op::Bitcast, Some(ut), None, ids(&[v]))? };
                let w = if bits == 32 { u } else { self.op(Op::UConvert, Some(u32t), None, ids(&[u]))? };
                vec![(a, w, bits / 8)]
            }
            _ => return err(format!("a {bits}-bit scalar in a byte buffer")),
        };
        let bool_t = self.b.type_bool();
        for (pa, w, s) in pieces {
            let (lo_i, hi_i, sh) = self.piece_words(pa, s)?;
            let full = self.u32_const(if s == 4 { u32::MAX } else { (1u32 << (8 * s)) - 1 });
            let c32 = self.u32_const(32);
            let c31 = self.u32_const(31);
            let zero = self.u32_const(0);
            let inv0 = self.op(Op::ISub, Some(u32t), None, ids(&[c32, sh]))?;
            let inv = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[inv0, c31]))?;
            let mask_lo = self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[full, sh]))?;
            let bits_lo = self.op(Op::ShiftLeftLogical, Some(u32t), None, ids(&[w, sh]))?;
            let straddle = self.op(Op::INotEqual, Some(bool_t), None, ids(&[lo_i, hi_i]))?;
            let mh = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[full, inv]))?;
            let bh = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[w, inv]))?;
            let mask_hi = self.op(Op::Select, Some(u32t), None, ids(&[straddle, mh, zero]))?;
            let bits_hi = self.op(Op::Select, Some(u32t), None, ids(&[straddle, bh, zero]))?;
            for (idx, mask, b) in [(lo_i, mask_lo, bits_lo), (hi_i, mask_hi, bits_hi)] {
                let keep = self.op(Op::Not, Some(u32t), None, ids(&[mask]))?;
                let p = self.byte_word_ptr(var, idx)?;
                out.push((p, keep, b));
            }
        }
        Ok(())
    }

    /// The masked word updates of writing `v` of type `ty` at byte address `a` + `off`.
    fn value_updates(
        &mut self,
        var: Word,
        ty: TypeId,
        a: Word,
        off: u64,
        v: Word,
        out: &mut Vec<WordUpdate>,
    ) -> EResult<()> {
        let t = &self.m.types;
        let parts: Vec<(TypeId, u64, Vec<u32>)> = match t.get(ty).clone() {
            Type::Int { .. } | Type::Float(_) => {
                let at = self.byte_addr(a, off)?;
                return self.scalar_updates(var, ty, at, v, out);
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(elem).0;
                (0..lanes as u32).map(|k| (elem, off + s * u64::from(k), vec![k])).collect()
            }
            Type::Array { elem, len } => {
                let s = t.size_align(elem).0;
                (0..len as u32).map(|k| (elem, off + s * u64::from(k), vec![k])).collect()
            }
            Type::Struct { fields, .. } => fields
                .iter()
                .copied()
                .zip(t.struct_offsets(ty))
                .enumerate()
                .map(|(k, (f, o))| (f, off + o, vec![k as u32]))
                .collect(),
            Type::Matrix { elem, dim } => {
                let stride = layout::matrix_stride(t, elem, dim) as u64;
                let s = t.size_align(elem).0;
                let mut ps = Vec::new();
                for c in 0..dim as u32 {
                    for r in 0..dim as u32 {
                        ps.push((elem, off + stride * u64::from(c) + s * u64::from(r), vec![c, r]));
                    }
                }
                ps
            }
            _ => return err("a non-data type in a byte buffer"),
        };
        for (pt, o, path) in parts {
            let et = self.ty(pt)?;
            let mut ops = vec![Operand::IdRef(v)];
            ops.extend(path.iter().map(|&k| Operand::LiteralBit32(k)));
            let x = self.op(Op::CompositeExtract, Some(et), None, ops)?;
            self.value_updates(var, pt, a, o, x, out)?;
        }
        Ok(())
    }

    /// `byte_buffer.write` at any alignment: every masked word update in one CAS loop.
    pub(crate) fn write_bytes_masked(&mut self, i: Inst, var: Word, ty: TypeId, a: Word, v: Word) -> EResult<()> {
        let mut updates = Vec::new();
        self.value_updates(var, ty, a, 0, v, &mut updates)?;
        self.masked_cas_loop(i, &updates)
    }

    /// The CAS loop planned for instruction `i` applying every masked word update (`(old & keep) | bits`)
    /// until every CAS of one iteration saw the value it loaded; the word pointers are computed before it.
    pub(crate) fn masked_cas_loop(&mut self, i: Inst, updates: &[WordUpdate]) -> EResult<()> {
        let be = |e: rspirv::dr::Error| super::EmitError { func: None, inst: None, message: format!("rspirv: {e:?}") };
        let [h, body, c, mg] = self.inline_blocks(i, "a masked word store")?;
        let u32t = self.u32_ty();
        let bool_t = self.b.type_bool();
        let scope = self.u32_const(Scope::Device as u32);
        let relaxed = self.u32_const(MemorySemantics::RELAXED.bits());
        self.b.branch(h).map_err(be)?;
        self.b.begin_block(Some(h)).map_err(be)?;
        self.b.loop_merge(mg, c, rspirv::spirv::LoopControl::NONE, []).map_err(be)?;
        self.b.branch(body).map_err(be)?;
        self.b.begin_block(Some(body)).map_err(be)?;
        let mut all = self.scalar_const(ScalarKind::Bool, 1);
        for &(p, keep, bits) in updates {
            let old = self.op(Op::AtomicLoad, Some(u32t), None, ids(&[p, scope, relaxed]))?;
            let kept = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[old, keep]))?;
            let new = self.op(Op::BitwiseOr, Some(u32t), None, ids(&[kept, bits]))?;
            let seen =
                self.op(Op::AtomicCompareExchange, Some(u32t), None, ids(&[p, scope, relaxed, relaxed, new, old]))?;
            let ok = self.op(Op::IEqual, Some(bool_t), None, ids(&[seen, old]))?;
            all = self.op(Op::LogicalAnd, Some(bool_t), None, ids(&[all, ok]))?;
        }
        self.b.branch(c).map_err(be)?;
        self.b.begin_block(Some(c)).map_err(be)?;
        self.b.branch_conditional(all, mg, h, []).map_err(be)?;
        self.b.begin_block(Some(mg)).map_err(be)?;
        Ok(())
    }
}
