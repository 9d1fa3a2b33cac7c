//! Instruction selection for non-control XIR instructions: dispatch by
//! opcode, plus local / shared memory, access chains, calls (Function-storage
//! pointer parameters; a non-variable pointer argument is passed through a
//! copy-in / copy-out temporary, as Logical addressing requires a memory
//! object declaration), casts (bool conversions through comparisons and
//! selects) and aggregates (composite construct / extract / insert /
//! shuffle, with dynamic walks through a temporary variable).

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Op, StorageClass, Word};
use xir::{Inst, Opcode, Type, Value};

use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::classify::{self, Support};
use crate::plan::aggregate::{plan_indices, Step};

pub(crate) fn ids(ws: &[Word]) -> Vec<Operand> {
    ws.iter().map(|&w| Operand::IdRef(w)).collect()
}

/// Which part of the emitter lowers an opcode (terminators and Phis are
/// emitted with their blocks, `function.rs`). One table, read by the
/// dispatch below and by the test that every opcode `classify.ron` calls
/// supported has a lowering.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lowering {
    Clock,
    Alloca,
    AllocaShared,
    Load,
    Store,
    Gep,
    Call,
    CastStatic,
    CastBitwise,
    Aggregate,
    Shuffle,
    Extract,
    Insert,
    Barrier,
    Buffer,
    Texture,
    BindlessBuffer,
    BindlessTexture,
    Print,
    Atomic,
    Ray,
    Warp,
    Arithmetic,
    /// Classified a semantic no-op: emits nothing.
    NoOp,
    /// No lowering: reaching emission is an internal error.
    None,
}

pub(crate) fn lowering(op: Opcode) -> Lowering {
    match op {
        Opcode::Alloca => Lowering::Alloca,
        Opcode::AllocaShared => Lowering::AllocaShared,
        Opcode::Load => Lowering::Load,
        Opcode::Store => Lowering::Store,
        Opcode::Gep => Lowering::Gep,
        Opcode::Call => Lowering::Call,
        Opcode::CastStatic => Lowering::CastStatic,
        Opcode::CastBitwise => Lowering::CastBitwise,
        Opcode::Aggregate => Lowering::Aggregate,
        Opcode::Shuffle => Lowering::Shuffle,
        Opcode::Extract => Lowering::Extract,
        Opcode::Insert => Lowering::Insert,
        Opcode::SyncBlock => Lowering::Barrier,
        Opcode::BufferRead
        | Opcode::BufferWrite
        | Opcode::BufferWritePart
        | Opcode::BufferVolatileRead
        | Opcode::BufferVolatileWrite
        | Opcode::BufferSize
        | Opcode::ByteBufferRead
        | Opcode::ByteBufferWrite
        | Opcode::ByteBufferSize => Lowering::Buffer,
        Opcode::TextureRead | Opcode::TextureWrite | Opcode::TextureSize => Lowering::Texture,
        op if crate::plan::bindless::is_bindless_buffer_op(op) => Lowering::BindlessBuffer,
        op if crate::plan::texture_heap::is_bindless_texture_op(op) => Lowering::BindlessTexture,
        Opcode::Print => Lowering::Print,
        Opcode::Clock => Lowering::Clock,
        op if crate::plan::features::is_atomic(op) => Lowering::Atomic,
        op if super::ray_query::is_ray_op(op) => Lowering::Ray,
        op if crate::plan::features::is_warp_op(op) => Lowering::Warp,
        op if xir_spec::spec().op(op).has(xir::Trait::Arithmetic) => Lowering::Arithmetic,
        op => match classify::opcode(op) {
            Support::SemanticNoOp(_) => Lowering::NoOp,
            _ => Lowering::None,
        },
    }
}

impl Emitter<'_> {
    pub(crate) fn emit_inst(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        match lowering(d.opcode) {
            Lowering::Alloca => {
                let t = self.ty(d.ty)?;
                self.local_var(t, rid);
            }
            Lowering::AllocaShared => {
                let t = self.ty(d.ty)?;
                let pty = self.ptr_ty(StorageClass::Workgroup, t);
                let id = rid.expect("alloca has a result");
                self.global_var_id(pty, StorageClass::Workgroup, id);
                self.fs.ptr_class.insert(id, StorageClass::Workgroup);
                self.fs.mem_objects.insert(id);
            }
            Lowering::Load => {
                let p = self.val(d.operands[0])?;
                let t = self.ty(d.ty)?;
                self.op(Op::Load, Some(t), rid, vec![Operand::IdRef(p)])?;
            }
            Lowering::Store => {
                let p = self.val(d.operands[0])?;
                let v = self.val(d.operands[1])?;
                self.op(Op::Store, None, None, vec![Operand::IdRef(p), Operand::IdRef(v)])?;
            }
            Lowering::Gep => {
                let base = self.val(d.operands[0])?;
                let class = self.ptr_class(base)?;
                let bt = f.value_type(m, d.operands[0]);
                let chain = self.index_chain(bt, &d.operands[1..])?;
                let t = self.ty(d.ty)?;
                let pty = self.ptr_ty(class, t);
                let mut ops = vec![Operand::IdRef(base)];
                ops.extend(ids(&chain));
                let id = self.op(Op::AccessChain, Some(pty), rid, ops)?;
                self.fs.ptr_class.insert(id, class);
            }
            Lowering::Call => self.emit_call(i)?,
            Lowering::CastStatic => self.emit_static_cast(i)?,
            Lowering::CastBitwise => {
                let v = self.val(d.operands[0])?;
                let t = self.ty(d.ty)?;
                // Equal SPIR-V types (also fp8 <-> u8: FP8 is carried as u8).
                if self.ty(f.value_type(m, d.operands[0]))? == t {
                    self.op(Op::CopyObject, Some(t), rid, vec![Operand::IdRef(v)])?;
                } else {
                    self.op(Op::Bitcast, Some(t), rid, vec![Operand::IdRef(v)])?;
                }
            }
            Lowering::Aggregate => {
                let t = self.ty(d.ty)?;
                let mut ws = Vec::new();
                for &v in &d.operands {
                    ws.push(self.val(v)?);
                }
                self.op(Op::CompositeConstruct, Some(t), rid, ids(&ws))?;
            }
            Lowering::Shuffle => {
                let v = self.val(d.operands[0])?;
                let t = self.ty(d.ty)?;
                let mut lanes = Vec::new();
                for &l in &d.operands[1..] {
                    match m.const_int_value(l) {
                        Some(x) if x >= 0 => lanes.push(x as u32),
                        _ => return err("shuffle lanes must be non-negative constants"),
                    }
                }
                if lanes.len() == 1 {
                    self.op(
                        Op::CompositeExtract,
                        Some(t),
                        rid,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(lanes[0])],
                    )?;
                } else {
                    let mut ops = vec![Operand::IdRef(v), Operand::IdRef(v)];
                    ops.extend(lanes.iter().map(|&l| Operand::LiteralBit32(l)));
                    self.op(Op::VectorShuffle, Some(t), rid, ops)?;
                }
            }
            Lowering::Extract => self.emit_extract(i)?,
            Lowering::Insert => self.emit_insert(i)?,
            Lowering::Barrier => {
                use rspirv::spirv::{MemorySemantics, Scope};
                let wg = self.u32_const(Scope::Workgroup as u32);
                let sem = self.u32_const((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY).bits());
                self.op(Op::ControlBarrier, None, None, ids(&[wg, wg, sem]))?;
            }
            Lowering::Buffer => self.emit_buffer_op(i)?,
            Lowering::Texture => self.emit_texture_op(i)?,
            Lowering::BindlessBuffer => self.emit_bindless_op(i)?,
            Lowering::BindlessTexture => self.emit_bindless_texture_op(i)?,
            Lowering::Print => self.emit_print(i)?,
            Lowering::Clock => {
                // Subgroup scope: the one every device with the extension
                // has (`shaderSubgroupClock`); a u64 of ticks.
                let t = self.ty(d.ty)?;
                let scope = self.u32_const(rspirv::spirv::Scope::Subgroup as u32);
                self.cap(Capability::ShaderClockKHR);
                self.exts.insert("SPV_KHR_shader_clock");
                self.op(Op::ReadClockKHR, Some(t), rid, ids(&[scope]))?;
            }
            Lowering::Atomic => self.emit_atomic(i)?,
            Lowering::Ray => self.emit_ray(i)?,
            Lowering::Warp => self.emit_warp(i)?,
            Lowering::Arithmetic => self.emit_arith(i)?,
            Lowering::NoOp => {}
            Lowering::None => return err(format!("`{}` reached emission without a lowering", d.opcode)),
        }
        Ok(())
    }

    pub(crate) fn ptr_class(&self, p: Word) -> EResult<StorageClass> {
        match self.fs.ptr_class.get(&p) {
            Some(&c) => Ok(c),
            None => err("operand is not a known pointer"),
        }
    }

    /// Access-chain index ids for a planned walk (struct and constant indices as `u32` constants,
    /// dynamic indices widened or narrowed to 32 bits).
    pub(crate) fn index_chain(&mut self, base: xir::TypeId, indices: &[Value]) -> EResult<Vec<Word>> {
        let f = self.m.func(self.fs.func.expect("in function"));
        let plan = match plan_indices(self.m, f, base, indices) {
            Ok(p) => p,
            Err(e) => return err(e.to_string()),
        };
        let mut out = Vec::new();
        for s in plan.steps {
            out.push(match s {
                Step::Literal(k) => self.u32_const(k),
                Step::Dynamic(v) => self.index32(v)?,
            });
        }
        Ok(out)
    }

    /// An integer index as a 32-bit unsigned value.
    pub(crate) fn index32(&mut self, v: Value) -> EResult<Word> {
        let w = self.val(v)?;
        let s = self.shape(self.vty(v))?;
        let u = self.u32_ty();
        Ok(match s.scalar {
            ScalarKind::Int { bits: 32, signed: false } => w,
            ScalarKind::Int { bits: 32, signed: true } => {
                self.op(Op::Bitcast, Some(u), None, vec![Operand::IdRef(w)])?
            }
            ScalarKind::Int { .. } => self.op(Op::UConvert, Some(u), None, vec![Operand::IdRef(w)])?,
            _ => return err("index is not an integer"),
        })
    }

    fn emit_extract(&mut self, i: Inst) -> EResult<()> {
        if self.extract_from_ubo(i)? {
            return Ok(());
        }
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let bt = f.value_type(m, d.operands[0]);
        let base = self.val(d.operands[0])?;
        let t = self.ty(d.ty)?;
        let plan = plan_indices(m, f, bt, &d.operands[1..]).or_else(|e| err(e.to_string()))?;
        if plan.all_literal {
            let mut ops = vec![Operand::IdRef(base)];
            ops.extend(plan.steps.iter().map(|s| match s {
                Step::Literal(k) => Operand::LiteralBit32(*k),
                Step::Dynamic(_) => unreachable!("all literal"),
            }));
            self.op(Op::CompositeExtract, Some(t), rid, ops)?;
        } else if plan.steps.len() == 1 && matches!(m.types.get(bt), Type::Vector { .. }) {
            let Step::Dynamic(v) = plan.steps[0] else { unreachable!("not all literal") };
            let ix = self.val(v)?;
            self.op(Op::VectorExtractDynamic, Some(t), rid, ids(&[base, ix]))?;
        } else {
            // Dynamic walk: through a Function-storage temporary.
            let bw = self.ty(bt)?;
            let tmp = self.local_var(bw, None);
            self.op(Op::Store, None, None, ids(&[tmp, base]))?;
            let chain = self.index_chain(bt, &d.operands[1..])?;
            let pty = self.ptr_ty(StorageClass::Function, t);
            let mut ops = vec![Operand::IdRef(tmp)];
            ops.extend(ids(&chain));
            let p = self.op(Op::AccessChain, Some(pty), None, ops)?;
            self.op(Op::Load, Some(t), rid, vec![Operand::IdRef(p)])?;
        }
        Ok(())
    }

    fn emit_insert(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let bt = f.value_type(m, d.operands[0]);
        let base = self.val(d.operands[0])?;
        let v = self.val(d.operands[1])?;
        let t = self.ty(d.ty)?;
        let plan = plan_indices(m, f, bt, &d.operands[2..]).or_else(|e| err(e.to_string()))?;
        if plan.all_literal {
            let mut ops = vec![Operand::IdRef(v), Operand::IdRef(base)];
            ops.extend(plan.steps.iter().map(|s| match s {
                Step::Literal(k) => Operand::LiteralBit32(*k),
                Step::Dynamic(_) => unreachable!("all literal"),
            }));
            self.op(Op::CompositeInsert, Some(t), rid, ops)?;
        } else if plan.steps.len() == 1 && matches!(m.types.get(bt), Type::Vector { .. }) {
            let Step::Dynamic(x) = plan.steps[0] else { unreachable!("not all literal") };
            let ix = self.val(x)?;
            self.op(Op::VectorInsertDynamic, Some(t), rid, ids(&[base, v, ix]))?;
        } else {
            let tmp = self.local_var(t, None);
            self.op(Op::Store, None, None, ids(&[tmp, base]))?;
            let chain = self.index_chain(bt, &d.operands[2..])?;
            let et = self.ty(plan.result)?;
            let pty = self.ptr_ty(StorageClass::Function, et);
            let mut ops = vec![Operand::IdRef(tmp)];
            ops.extend(ids(&chain));
            let p = self.op(Op::AccessChain, Some(pty), None, ops)?;
            self.op(Op::Store, None, None, ids(&[p, v]))?;
            self.op(Op::Load, Some(t), rid, vec![Operand::IdRef(tmp)])?;
        }
        Ok(())
    }

    fn emit_call(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let Some(Value::Func(g)) = d.operands.first().copied() else { return err("call without a callee") };
        let callee = m.func(g);
        let ret = self.ty(callee.ret)?;
        let mut args = Vec::new();
        let mut copy_back = Vec::new();
        for (k, &a) in d.operands[1..].iter().enumerate() {
            let w = self.val(a)?;
            if callee.args.get(k).map(|x| x.kind) == Some(xir::ArgKind::Reference) {
                if self.fs.mem_objects.contains(&w) && self.ptr_class(w)? == StorageClass::Function {
                    args.push(w);
                } else {
                    // Copy in / copy out through a Function variable.
                    let t = self.ty(callee.args[k].ty)?;
                    let tmp = self.local_var(t, None);
                    let cur = self.op(Op::Load, Some(t), None, vec![Operand::IdRef(w)])?;
                    self.op(Op::Store, None, None, ids(&[tmp, cur]))?;
                    copy_back.push((w, tmp, t));
                    args.push(tmp);
                }
            } else {
                args.push(w);
            }
        }
        let callee_id = self.func_ids[&g];
        let mut ops = vec![Operand::IdRef(callee_id)];
        ops.extend(ids(&args));
        let rid = self.fs.values.get(&i).copied();
        self.op(Op::FunctionCall, Some(ret), rid, ops)?;
        for (dst, tmp, t) in copy_back {
            let v = self.op(Op::Load, Some(t), None, vec![Operand::IdRef(tmp)])?;
            self.op(Op::Store, None, None, ids(&[dst, v]))?;
        }
        Ok(())
    }

    fn emit_static_cast(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let from_ty = f.value_type(m, d.operands[0]);
        let v = self.val(d.operands[0])?;
        if super::fp8::format_of(m, from_ty).is_some() || super::fp8::format_of(m, d.ty).is_some() {
            return self.fp8_cast(from_ty, d.ty, v, rid).map(|_| ());
        }
        let (from, to) = (self.shape(from_ty)?, self.shape(d.ty)?);
        self.convert(from, to, v, rid).map(|_| ())
    }

    /// `cast.static` between scalar or vector shapes (not FP8, whose bits
    /// these shapes carry as `u8`: see `fp8.rs`).
    pub(crate) fn convert(&mut self, from: Shape, to: Shape, v: Word, rid: Option<Word>) -> EResult<Word> {
        let t = self.shape_ty(to);
        let id = |e: &mut Self, op: Op, ops: Vec<Word>| e.op(op, Some(t), rid, ids(&ops));
        use ScalarKind::*;
        Ok(match (from.scalar, to.scalar) {
            (Bool, Bool) => id(self, Op::CopyObject, vec![v])?,
            (a, b) if a == b => id(self, Op::CopyObject, vec![v])?,
            (Bool, Int { .. }) | (Bool, Float { .. }) => {
                let (one, zero) = if to.is_float() {
                    (self.float_splat(to, 1.0), self.float_splat(to, 0.0))
                } else {
                    (self.splat(to, 1), self.splat(to, 0))
                };
                id(self, Op::Select, vec![v, one, zero])?
            }
            (Int { .. }, Bool) => {
                let zero = self.splat(from, 0);
                id(self, Op::INotEqual, vec![v, zero])?
            }
            (Float { .. }, Bool) => {
                // Unordered: NaN is truthy.
                let zero = self.float_splat(from, 0.0);
                id(self, Op::FUnordNotEqual, vec![v, zero])?
            }
            (Int { bits: a, signed: sa }, Int { bits: b, signed: sb }) => {
                if a == b {
                    id(self, Op::Bitcast, vec![v])?
                } else if sa && b > a {
                    self.sign_extend(from, to, v, rid)?
                } else if sa == sb {
                    id(self, if sa { Op::SConvert } else { Op::UConvert }, vec![v])?
                } else {
                    // Extend by the source's signedness at the target width, then reinterpret.
                    let mid = self.shape_ty(to.with_scalar(Int { bits: b, signed: sa }));
                    let w = self.op(if sa { Op::SConvert } else { Op::UConvert }, Some(mid), None, ids(&[v]))?;
                    id(self, Op::Bitcast, vec![w])?
                }
            }
            (Float { .. }, Int { signed: false, .. }) => id(self, Op::ConvertFToU, vec![v])?,
            (Int { signed, .. }, Float { .. }) => {
                id(self, if signed { Op::ConvertSToF } else { Op::ConvertUToF }, vec![v])?
            }
            (Float { .. }, Int { signed, .. }) => {
                id(self, if signed { Op::ConvertFToS } else { Op::ConvertFToU }, vec![v])?
            }
            (Float { bits: 16 }, Float { bits: wide }) => self.widen_half(from, wide, v, rid)?,
            (Float { .. }, Float { .. }) => id(self, Op::FConvert, vec![v])?,
        })
    }

    /// Sign extension without `OpSConvert`, exact on every driver we run:
    ///
    /// - a 32-bit source is zero-extended, shifted left and arithmetically
    ///   right by 32: lavapipe (Mesa with LLVM 15, the CI driver) miscompiles
    ///   every signed compare of an `SConvert`ed i32 (`SLessThan(SConvert(-7
    ///   as i32 to i64), 0)` is false) and gets the shift form right;
    /// - an 8- or 16-bit source is zero-extended to 32 bits and its low bits
    ///   sign-extended with `OpBitFieldSExtract`: the H200 driver keeps narrow
    ///   values unwrapped in wider registers and treats `SConvert` (and the
    ///   shift form) as a no-op on them (`neg(-128 as i8)` widened to 128);
    ///   the bit-field extract reads exactly the low bits; to 16 bits (from
    ///   8) that 32-bit result is truncated.
    ///
    /// All three are equal to sign extension by definition.
    fn sign_extend(&mut self, from: Shape, to: Shape, v: Word, rid: Option<Word>) -> EResult<Word> {
        let (ScalarKind::Int { bits: a, .. }, ScalarKind::Int { bits: b, signed }) = (from.scalar, to.scalar) else {
            return err("sign extension of a non-integer");
        };
        let (v, a) = if a < 32 {
            let (u32s, i32s) = (
                to.with_scalar(ScalarKind::Int { bits: 32, signed: false }),
                to.with_scalar(ScalarKind::Int { bits: 32, signed: true }),
            );
            let (ut, st) = (self.shape_ty(u32s), self.shape_ty(i32s));
            let zext = self.op(Op::UConvert, Some(ut), None, ids(&[v]))?;
            let z = self.op(Op::Bitcast, Some(st), None, ids(&[zext]))?;
            let (offset, count) = (self.u32_const(0), self.u32_const(a));
            let done = b == 32 && signed;
            let ext =
                self.op(Op::BitFieldSExtract, Some(st), if done { rid } else { None }, ids(&[z, offset, count]))?;
            if done {
                return Ok(ext);
            }
            if b == 32 {
                return self.op(Op::Bitcast, Some(ut), rid, ids(&[ext]));
            }
            if b < 32 {
                // An 8-bit source to 16 bits: the 32-bit extension truncated
                // (`UConvert` narrows exactly; no `SConvert`, as above).
                let narrow_u = to.with_scalar(ScalarKind::Int { bits: b, signed: false });
                let nu = self.shape_ty(narrow_u);
                if !signed {
                    return self.op(Op::UConvert, Some(nu), rid, ids(&[ext]));
                }
                let n = self.op(Op::UConvert, Some(nu), None, ids(&[ext]))?;
                let ns = self.shape_ty(to.with_scalar(ScalarKind::Int { bits: b, signed: true }));
                return self.op(Op::Bitcast, Some(ns), rid, ids(&[n]));
            }
            (ext, 32)
        } else {
            (v, a)
        };
        let wide_u = to.with_scalar(ScalarKind::Int { bits: b, signed: false });
        let wide_s = to.with_scalar(ScalarKind::Int { bits: b, signed: true });
        let (ut, st) = (self.shape_ty(wide_u), self.shape_ty(wide_s));
        let zext = self.op(Op::UConvert, Some(ut), None, ids(&[v]))?;
        let zs = self.op(Op::Bitcast, Some(st), None, ids(&[zext]))?;
        let by = self.splat(wide_s, u64::from(b - a));
        let up = self.op(Op::ShiftLeftLogical, Some(st), None, ids(&[zs, by]))?;
        if signed {
            return self.op(Op::ShiftRightArithmetic, Some(st), rid, ids(&[up, by]));
        }
        let sext = self.op(Op::ShiftRightArithmetic, Some(st), None, ids(&[up, by]))?;
        self.op(Op::Bitcast, Some(ut), rid, ids(&[sext]))
    }

    /// `f16 -> f32 / f64` computed from the half's bits with integer
    /// operations, not `OpFConvert` (nor `UnpackHalf2x16`).
    ///
    /// The NVIDIA H200 driver (580.159.04) folds a widening of a narrowed
    /// value back to the original, skipping the f16 rounding: `FConvert(
    /// FConvert(x: f32 -> f16) -> f32)` returns `x` (1.00048828125 comes back
    /// unrounded), also through a `Bitcast` to `u16` and back, and through
    /// `UnpackHalf2x16` of the packed half; the half's bits themselves are
    /// right. Rebuilding the f32 from those bits leaves nothing to fold:
    /// sign, exponent + 112 and the mantissa shifted by 13 for normal halves;
    /// all-ones exponent with the payload for Inf/NaN; `mantissa * 2^-24`
    /// (exact) for subnormals and zeros. Lanes are read in pairs (a
    /// `vec2<f16>` bit-cast to one `u32`) so that no 16-bit integer type,
    /// and no `shaderInt16`, is needed.
    fn widen_half(&mut self, from: Shape, wide: u32, v: Word, rid: Option<Word>) -> EResult<Word> {
        let half = ScalarKind::Float { bits: 16 };
        let u32k = ScalarKind::Int { bits: 32, signed: false };
        let (half_t, pair_t, u32_t) =
            (self.scalar_ty(half), self.shape_ty(Shape { scalar: half, lanes: 2 }), self.u32_ty());
        let zero_half = self.scalar_const(half, 0);
        let extract = |e: &mut Self, x: Word, k: u32| {
            e.op(Op::CompositeExtract, Some(half_t), None, vec![Operand::IdRef(x), Operand::LiteralBit32(k)])
        };
        // The bits of every lane, each in the low half of a u32.
        let (c16, cffff) = (self.u32_const(16), self.u32_const(0xffff));
        let mut lanes = Vec::new();
        for k in (0..from.lanes).step_by(2) {
            let lo = if from.lanes == 1 { v } else { extract(self, v, k)? };
            let hi = if k + 1 < from.lanes { extract(self, v, k + 1)? } else { zero_half };
            let pair = self.op(Op::CompositeConstruct, Some(pair_t), None, ids(&[lo, hi]))?;
            let word = self.op(Op::Bitcast, Some(u32_t), None, ids(&[pair]))?;
            lanes.push(self.op(Op::BitwiseAnd, Some(u32_t), None, ids(&[word, cffff]))?);
            if k + 1 < from.lanes {
                lanes.push(self.op(Op::ShiftRightLogical, Some(u32_t), None, ids(&[word, c16]))?);
            }
        }
        let us = from.with_scalar(u32k);
        let ut = self.shape_ty(us);
        let h = if from.lanes == 1 { lanes[0] } else { self.op(Op::CompositeConstruct, Some(ut), None, ids(&lanes))? };
        let single = from.with_scalar(ScalarKind::Float { bits: 32 });
        let (ft, bt) = (self.shape_ty(single), self.shape_ty(from.with_scalar(ScalarKind::Bool)));
        let k = |e: &mut Self, c: u64| e.splat(us, c);
        let bin = |e: &mut Self, op: Op, x: Word, y: Word| e.op(op, Some(ut), None, ids(&[x, y]));
        let (c0x8000, c10, c0x1f, c0x3ff, c13, c23, c112) =
            (k(self, 0x8000), k(self, 10), k(self, 0x1f), k(self, 0x3ff), k(self, 13), k(self, 23), k(self, 112));
        let sign_half = bin(self, Op::BitwiseAnd, h, c0x8000)?;
        let c16v = k(self, 16);
        let sign = bin(self, Op::ShiftLeftLogical, sign_half, c16v)?;
        let shifted = bin(self, Op::ShiftRightLogical, h, c10)?;
        let exponent = bin(self, Op::BitwiseAnd, shifted, c0x1f)?;
        let mantissa = bin(self, Op::BitwiseAnd, h, c0x3ff)?;
        let mantissa_bits = bin(self, Op::ShiftLeftLogical, mantissa, c13)?;
        let rebiased = bin(self, Op::IAdd, exponent, c112)?;
        let exponent_bits = bin(self, Op::ShiftLeftLogical, rebiased, c23)?;
        let normal = bin(self, Op::BitwiseOr, exponent_bits, mantissa_bits)?;
        let inf_exponent = k(self, 0x7f80_0000);
        let special = bin(self, Op::BitwiseOr, inf_exponent, mantissa_bits)?;
        let mantissa_f = self.op(Op::ConvertUToF, Some(ft), None, ids(&[mantissa]))?;
        let scale = self.float_splat(single, 2f64.powi(-24));
        let tiny_f = self.op(Op::FMul, Some(ft), None, ids(&[mantissa_f, scale]))?;
        let tiny = self.op(Op::Bitcast, Some(ut), None, ids(&[tiny_f]))?;
        let is_special = self.op(Op::IEqual, Some(bt), None, ids(&[exponent, c0x1f]))?;
        let zero = k(self, 0);
        let is_tiny = self.op(Op::IEqual, Some(bt), None, ids(&[exponent, zero]))?;
        let finite = self.op(Op::Select, Some(ut), None, ids(&[is_tiny, tiny, normal]))?;
        let magnitude = self.op(Op::Select, Some(ut), None, ids(&[is_special, special, finite]))?;
        let bits = bin(self, Op::BitwiseOr, magnitude, sign)?;
        if wide == 64 {
            let widened = self.op(Op::Bitcast, Some(ft), None, ids(&[bits]))?;
            let t = self.shape_ty(from.with_scalar(ScalarKind::Float { bits: 64 }));
            return self.op(Op::FConvert, Some(t), rid, ids(&[widened]));
        }
        self.op(Op::Bitcast, Some(ft), rid, ids(&[bits]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every opcode the backend claims to support reaches a lowering:
    /// adding an opcode to the spec and `classify.ron` without an emitter
    /// arm fails here, at `cargo test`, not when a kernel uses it.
    #[test]
    fn every_supported_opcode_has_a_lowering() {
        let missing: Vec<&str> = xir_spec::spec()
            .ops()
            .iter()
            .filter(|o| matches!(classify::opcode(o.opcode), Support::Supported))
            .filter(|o| !o.has(xir::Trait::Terminator) && o.opcode != Opcode::Phi)
            .filter(|o| lowering(o.opcode) == Lowering::None)
            .map(|o| &*o.spec.name)
            .collect();
        assert!(missing.is_empty(), "supported opcodes without a lowering in emit/instructions.rs: {missing:?}");
    }
}
