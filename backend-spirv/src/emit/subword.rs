//! Sub-word elements in word storage: an element whose leaves are not all
//! 32/64-bit words at word offsets (`plan::layout::typed_access`: 8/16-bit
//! scalars, `bool` as one 0/1 byte, or a size that is not a multiple of 4),
//! in a word-ABI `buffer<T>` (`memory.rs`) or a bindless heap buffer
//! (`bindless.rs`). `elem` is a pointer to a `Block { uint32[] }`.
//!
//! The element starts at word `index * size / 4` (size a multiple of 4: every
//! leaf's word and shift are constants) or at byte `index * size` (alignment
//! `gcd(size, 4)`: word `A >> 2`, shift `(A & 3) * 8`). A leaf never
//! straddles a word. Reads load each touched word once and extract (`>>
//! shift`, then `OpUConvert` / `OpBitcast`, or `!= 0` for a bool byte);
//! writes gather the leaves of each word into one `(mask, bits)` update and
//! either store whole words (every touched word fully covered) or apply the
//! updates in the planned masked CAS loop (`bytes.rs`'s `masked_cas_loop`),
//! so threads writing neighbouring elements never lose each other's bytes.

use rspirv::dr::Operand;
use rspirv::spirv::{Op, Word};
use rustc_hash::FxHashMap;
use xir::{Inst, Type, TypeId};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::plan::layout::Leaf;

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

/// Where a sub-word element starts in its word buffer.
#[derive(Clone, Copy)]
pub(crate) enum ElemAt {
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

impl Emitter<'_> {
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
    pub(crate) fn read_subword(
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
            Type::Bool => {
                // The host byte: any non-zero value is true, as the interpreter decodes it.
                let u32t = self.u32_ty();
                let (w, sh) = self.load_leaf_word(elem, at, off, loaded)?;
                let x = self.op(Op::ShiftRightLogical, Some(u32t), None, ids(&[w, sh]))?;
                let ff = self.u32_const(0xff);
                let byte = self.op(Op::BitwiseAnd, Some(u32t), None, ids(&[x, ff]))?;
                let zero = self.u32_const(0);
                return self.op(Op::INotEqual, Some(lt), rid, ids(&[byte, zero]));
            }
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
                    _ => return err(format!("a {bits}-bit scalar in word storage")),
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
            _ => return err("a non-data type in word storage"),
        };
        let mut vals = Vec::with_capacity(parts.len());
        for (pt, o) in parts {
            vals.push(self.read_subword(elem, pt, at, o, loaded, None)?);
        }
        self.op(Op::CompositeConstruct, Some(lt), rid, ids(&vals))
    }

    /// Write `v` (leaves `leaves`) into a sub-word element: one `(mask, bits)` per touched word, stored
    /// whole when `masked` is false (every touched word fully covered), else in the CAS loop planned for `i`.
    pub(crate) fn write_subword(
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
                _ if self.m.types.is_bool(l.ty) => {
                    let one = self.u32_const(1);
                    let zero = self.u32_const(0);
                    vec![(l.offset, self.op(Op::Select, Some(u32t), None, ids(&[x, one, zero]))?, 1)]
                }
                64 => {
                    let [lo, hi] = self.u64_words(x)?;
                    vec![(l.offset, lo, 4), (l.offset + 4, hi, 4)]
                }
                8 | 16 | 32 => {
                    let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                    let u = if lt == ut { x } else { self.op(Op::Bitcast, Some(ut), None, ids(&[x]))? };
                    let w = if bits == 32 { u } else { self.op(Op::UConvert, Some(u32t), None, ids(&[u]))? };
                    vec![(l.offset, w, bits / 8)]
                }
                _ => return err(format!("a {bits}-bit scalar in word storage")),
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
}
