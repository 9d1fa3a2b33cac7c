//! The constant UBO in the module: the array constants `plan::constant_ubo`
//! placed are read from one `Uniform` std140 `Block` instead of being spelled
//! as `OpConstantComposite`.
//!
//! Declaration: one struct with a member per placed constant, each an
//! `OpTypeArray` of the element's logical type with `ArrayStride` = the
//! planned std140 stride and the member `Offset` = the planned offset; the
//! struct is a `Block`, the variable is `Uniform` storage class, set 0 at the
//! planned binding, `NonWritable`. 8/16-bit elements (placed only when the
//! target enables the Uniform-storage feature) declare
//! `UniformAndStorageBuffer8BitAccess` / `UniformAndStorageBuffer16BitAccess`
//! with their storage extension.
//!
//! Uses: an `extract` whose aggregate is a placed constant becomes one
//! access chain into the member (dynamic or literal indices alike) and one
//! load of the element; any other use of a placed constant (the whole value)
//! loads the member and converts it to the logical array with
//! `OpCopyLogical`. Constants the planner kept inline are emitted by
//! `constants.rs` as before.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, Op, StorageClass, Word};
use rustc_hash::FxHashMap;
use xir::{Const, Inst, Type};

use super::{err, EResult, Emitter};

/// The declared buffer: its variable and, per placed constant, the member
/// index and the laid-out array type.
#[derive(Default)]
pub(crate) struct UboState {
    pub var: Option<Word>,
    pub members: FxHashMap<Const, (u32, Word)>,
}

impl Emitter<'_> {
    /// Declare the constant UBO when the plan placed any constant.
    pub(crate) fn declare_constant_ubo(&mut self) -> EResult<()> {
        let plan = &self.plans.constant_ubo;
        if plan.placed.is_empty() {
            return Ok(());
        }
        let Some(binding) = plan.binding else { return err("placed constants without a constant-data binding") };
        let mut members = Vec::new();
        for (k, p) in plan.placed.iter().enumerate() {
            let Type::Array { elem, .. } = *self.m.types.get(self.m.consts.get(p.constant).ty) else {
                return err("a placed constant is not an array");
            };
            let e = self.ty(elem)?;
            let bits = self.m.types.scalar_bits(self.m.types.scalar_of(elem));
            match bits {
                8 => {
                    self.cap(Capability::UniformAndStorageBuffer8BitAccess);
                    self.exts.insert("SPV_KHR_8bit_storage");
                }
                16 => {
                    self.cap(Capability::UniformAndStorageBuffer16BitAccess);
                    self.exts.insert("SPV_KHR_16bit_storage");
                }
                _ => {}
            }
            let Ok(len) = u32::try_from(p.layout.len) else { return err("placed array length exceeds 32 bits") };
            let n = self.u32_const(len);
            let id = self.b.id();
            let arr = self.b.type_array_id(Some(id), e, n);
            let Ok(stride) = u32::try_from(p.layout.stride) else { return err("std140 stride exceeds 32 bits") };
            self.decorate(arr, Decoration::ArrayStride, &[stride]);
            members.push(arr);
            self.ubo.members.insert(p.constant, (k as u32, arr));
        }
        let sid = self.b.id();
        let st = self.b.type_struct_id(Some(sid), members);
        self.decorate(st, Decoration::Block, &[]);
        for (k, p) in plan.placed.iter().enumerate() {
            let Ok(off) = u32::try_from(p.offset) else { return err("std140 offset exceeds 32 bits") };
            self.b.member_decorate(st, k as u32, Decoration::Offset, [Operand::LiteralBit32(off)]);
        }
        self.b.name(st, "_ConstantData");
        let pty = self.ptr_ty(StorageClass::Uniform, st);
        let var = self.global_var(pty, StorageClass::Uniform);
        self.decorate(var, Decoration::DescriptorSet, &[crate::abi::LOCAL_SET]);
        self.decorate(var, Decoration::Binding, &[binding]);
        self.decorate(var, Decoration::NonWritable, &[]);
        self.ubo.var = Some(var);
        Ok(())
    }

    /// The value of constant `c` at a use inside the current block: a load
    /// from the constant UBO when it was placed, else the inline constant.
    pub(crate) fn constant_value(&mut self, c: Const) -> EResult<Word> {
        let (Some(var), Some(&(member, laid))) = (self.ubo.var, self.ubo.members.get(&c)) else {
            return self.constant(c);
        };
        let lt = self.ty(self.m.consts.get(c).ty)?;
        let pty = self.ptr_ty(StorageClass::Uniform, laid);
        let m = self.u32_const(member);
        let p = self.op(Op::AccessChain, Some(pty), None, vec![Operand::IdRef(var), Operand::IdRef(m)])?;
        let raw = self.op(Op::Load, Some(laid), None, vec![Operand::IdRef(p)])?;
        self.op(Op::CopyLogical, Some(lt), None, vec![Operand::IdRef(raw)])
    }

    /// Emit `extract` instruction `i` as an access chain + load when its
    /// aggregate is a placed constant; `false` (nothing emitted) otherwise.
    pub(crate) fn extract_from_ubo(&mut self, i: Inst) -> EResult<bool> {
        let Some(var) = self.ubo.var else { return Ok(false) };
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let Some(xir::Value::Const(c)) = d.operands.first().copied() else { return Ok(false) };
        let Some(&(member, _)) = self.ubo.members.get(&c) else { return Ok(false) };
        let chain = self.index_chain(m.consts.get(c).ty, &d.operands[1..])?;
        let t = self.ty(d.ty)?;
        let pty = self.ptr_ty(StorageClass::Uniform, t);
        let mut ops = vec![Operand::IdRef(var), Operand::IdRef(self.u32_const(member))];
        ops.extend(chain.into_iter().map(Operand::IdRef));
        let p = self.op(Op::AccessChain, Some(pty), None, ops)?;
        let rid = self.fs.values.get(&i).copied();
        self.op(Op::Load, Some(t), rid, vec![Operand::IdRef(p)])?;
        Ok(true)
    }
}
