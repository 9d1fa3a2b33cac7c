//! Constants with exact bits. Scalars are interned by (SPIR-V type, bits):
//! a 64-bit `OpConstant` always has two literal words (even for 0 or 1),
//! floats are emitted from their stored bit pattern (NaN payloads, -0.0,
//! f16 included; never through a host `double`), and narrow signed integers
//! are sign-extended into their one word as SPIR-V requires. Composite
//! constants become `OpConstantComposite` of their members. An
//! instruction's word count is 16 bits, so one of more than
//! [`MAX_COMPOSITE_MEMBERS`] members is `OpConstantNull` when it is all
//! zero (a zeroed workgroup array of a million elements) and is refused
//! otherwise.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};
use xir::{Const, ConstValue};

use super::{err, EResult, Emitter, ScalarKind, Shape};

/// The most members an `OpConstantComposite` holds: 65,535 words less the
/// opcode word, the result type and the result id.
pub const MAX_COMPOSITE_MEMBERS: usize = 0xffff - 3;

impl Emitter<'_> {
    /// A scalar constant of shape `s.scalar` with raw `bits` (low bits significant).
    pub(crate) fn scalar_const(&mut self, k: ScalarKind, bits: u64) -> Word {
        let ty = self.scalar_ty(k);
        if let Some(&c) = self.consts.get(&(ty, bits)) {
            return c;
        }
        let id = self.b.id();
        let inst = match k {
            ScalarKind::Bool => Instruction::new(
                if bits != 0 { Op::ConstantTrue } else { Op::ConstantFalse },
                Some(ty),
                Some(id),
                vec![],
            ),
            ScalarKind::Int { bits: 64, .. } | ScalarKind::Float { bits: 64 } => {
                Instruction::new(Op::Constant, Some(ty), Some(id), vec![Operand::LiteralBit64(bits)])
            }
            ScalarKind::Int { bits: w, signed } => {
                let mask = if w >= 32 { u32::MAX as u64 } else { (1u64 << w) - 1 };
                let mut word = (bits & mask) as u32;
                if signed && w < 32 && (word >> (w - 1)) & 1 == 1 {
                    word |= !(mask as u32);
                }
                Instruction::new(Op::Constant, Some(ty), Some(id), vec![Operand::LiteralBit32(word)])
            }
            ScalarKind::Float { bits: w } => {
                let mask = if w >= 32 { u32::MAX as u64 } else { (1u64 << w) - 1 };
                Instruction::new(Op::Constant, Some(ty), Some(id), vec![Operand::LiteralBit32((bits & mask) as u32)])
            }
        };
        self.b.module_mut().types_global_values.push(inst);
        self.consts.insert((ty, bits), id);
        id
    }

    pub(crate) fn u32_const(&mut self, v: u32) -> Word {
        self.scalar_const(ScalarKind::Int { bits: 32, signed: false }, v as u64)
    }

    /// A scalar or vector constant with every lane equal to `bits`.
    pub(crate) fn splat(&mut self, s: Shape, bits: u64) -> Word {
        let c = self.scalar_const(s.scalar, bits);
        if s.lanes == 1 {
            return c;
        }
        let ty = self.shape_ty(s);
        self.composite_const(ty, vec![c; s.lanes as usize])
    }

    /// A float splat of the value `v` in the shape's float width.
    pub(crate) fn float_splat(&mut self, s: Shape, v: f64) -> Word {
        let bits = match s.bits() {
            64 => v.to_bits(),
            32 => (v as f32).to_bits() as u64,
            16 => half::f16::from_f64(v).to_bits() as u64,
            _ => unreachable!("float shapes are 16, 32 or 64 bits"),
        };
        self.splat(s, bits)
    }

    pub(crate) fn composite_const(&mut self, ty: Word, members: Vec<Word>) -> Word {
        if let Some(&c) = self.splats.get(&(ty, members.clone())) {
            return c;
        }
        let id = self.b.id();
        let ops = members.iter().map(|&m| Operand::IdRef(m)).collect();
        self.b.module_mut().types_global_values.push(Instruction::new(Op::ConstantComposite, Some(ty), Some(id), ops));
        self.splats.insert((ty, members), id);
        id
    }

    /// The SPIR-V id of an XIR constant.
    pub(crate) fn constant(&mut self, c: Const) -> EResult<Word> {
        if let Some(&w) = self.composites.get(&c) {
            return Ok(w);
        }
        let m = self.m;
        let data = m.consts.get(c);
        let w = match &data.value {
            ConstValue::Scalar(bits) => {
                let s = self.shape(data.ty)?;
                self.scalar_const(s.scalar, *bits)
            }
            ConstValue::Composite(members) if members.len() > MAX_COMPOSITE_MEMBERS && is_zero(m, c) => {
                let ty = self.ty(data.ty)?;
                let id = self.b.id();
                self.b.module_mut().types_global_values.push(Instruction::new(
                    Op::ConstantNull,
                    Some(ty),
                    Some(id),
                    vec![],
                ));
                id
            }
            ConstValue::Composite(members) if members.len() > MAX_COMPOSITE_MEMBERS => {
                return err(format!(
                    "a constant of {} members: an OpConstantComposite holds at most {MAX_COMPOSITE_MEMBERS} (its \
                     word count is 16 bits)",
                    members.len()
                ))
            }
            ConstValue::Composite(members) => {
                let ty = self.ty(data.ty)?;
                let mut ws = Vec::new();
                for &mc in members {
                    ws.push(self.constant(mc)?);
                }
                self.composite_const(ty, ws)
            }
        };
        self.composites.insert(c, w);
        Ok(w)
    }
}

/// Every scalar leaf of `c` is zero bits (+0.0 for floats, false for bools).
fn is_zero(m: &xir::Module, c: Const) -> bool {
    match &m.consts.get(c).value {
        ConstValue::Scalar(bits) => *bits == 0,
        ConstValue::Composite(members) => members.iter().all(|&mc| is_zero(m, mc)),
    }
}

/// The member count of the first composite in `c` (itself or a member, at
/// any depth) too large for one `OpConstantComposite` and not all zero:
/// what the handoff refuses.
pub(crate) fn oversized(m: &xir::Module, c: Const) -> Option<usize> {
    match &m.consts.get(c).value {
        ConstValue::Scalar(_) => None,
        ConstValue::Composite(members) if members.len() > MAX_COMPOSITE_MEMBERS => {
            (!is_zero(m, c)).then_some(members.len())
        }
        ConstValue::Composite(members) => members.iter().find_map(|&mc| oversized(m, mc)),
    }
}
