//! Storage-image textures: `texture2d<T>` / `texture3d<T>` kernel arguments
//! (T = f32, i32 or u32) as `UniformConstant` storage images in set 0
//! (`Sampled = 2`, format `Unknown`), and the three operations on them:
//!
//! - `texture.read` -> `OpImageRead` of a four-component texel
//!   (capability `StorageImageReadWithoutFormat`);
//! - `texture.write` -> `OpImageWrite` of exactly a four-component texel of
//!   the image's texel type (capability `StorageImageWriteWithoutFormat`); any
//!   other texel is refused here, never padded or smeared (the verifier's
//!   `texel_write_vec4` already rejects it before the handoff);
//! - `texture.size` -> `OpImageQuerySize` (capability `ImageQuery`), then the
//!   interpreter's mip rule `max(size >> level, 1)` (1 for `level >= 32`):
//!   storage images have one level, so the query gives level 0's size.
//!
//! Each capability is added by the operation that needs it and by nothing
//! else, so a kernel that only writes a texture does not ask for
//! `StorageImageReadWithoutFormat`.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, Dim, GlslStd450Op, ImageFormat, Op, StorageClass, Word};
use xir::{Inst, Opcode, Type, TypeId, Value};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};

/// One kernel texture variable.
#[derive(Clone, Copy, Debug)]
pub struct TextureVar {
    pub var: Word,
    pub image_ty: Word,
    /// 2 or 3.
    pub dim: u32,
    /// The texel scalar type (f32, i32 or u32).
    pub elem: TypeId,
}

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

impl Emitter<'_> {
    /// Declare the storage image of kernel argument `arg` at set 0, `binding`.
    pub(crate) fn declare_texture(&mut self, arg: u32, binding: u32, dim: u32, elem: TypeId) -> EResult<()> {
        let sampled = self.ty(elem)?;
        let d = match dim {
            2 => Dim::Dim2D,
            3 => Dim::Dim3D,
            _ => return err(format!("argument {arg}: a {dim}D texture is not a storage image of this ABI")),
        };
        let image_ty = self.b.type_image(sampled, d, 0, 0, 0, 2, ImageFormat::Unknown, None);
        let pty = self.ptr_ty(StorageClass::UniformConstant, image_ty);
        let var = self.global_var(pty, StorageClass::UniformConstant);
        self.decorate(var, Decoration::DescriptorSet, &[crate::abi::LOCAL_SET]);
        self.decorate(var, Decoration::Binding, &[binding]);
        self.globals.textures.insert(arg, TextureVar { var, image_ty, dim, elem });
        Ok(())
    }

    fn texture_var(&self, v: Value) -> EResult<TextureVar> {
        match v {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => match self.globals.textures.get(&a) {
                Some(t) => Ok(*t),
                None => err(format!("argument {a} is not a bound texture")),
            },
            _ => err("texture operands must be kernel texture arguments (callables taking textures are specialized)"),
        }
    }

    pub(crate) fn emit_texture_op(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let tex = self.texture_var(d.operands[0])?;
        let image = self.op(Op::Load, Some(tex.image_ty), None, ids(&[tex.var]))?;
        match d.opcode {
            Opcode::TextureRead => {
                let coord = self.val(d.operands[1])?;
                self.check_texel(d.ty, tex, "read")?;
                let ty = self.ty(d.ty)?;
                self.cap(Capability::StorageImageReadWithoutFormat);
                self.op(Op::ImageRead, Some(ty), rid, ids(&[image, coord]))?;
            }
            Opcode::TextureWrite => {
                let texel_ty = self.vty(d.operands[2]);
                self.check_texel(texel_ty, tex, "write")?;
                let coord = self.val(d.operands[1])?;
                let texel = self.val(d.operands[2])?;
                self.cap(Capability::StorageImageWriteWithoutFormat);
                self.op(Op::ImageWrite, None, None, ids(&[image, coord, texel]))?;
            }
            Opcode::TextureSize => {
                let shape = Shape { scalar: U32, lanes: tex.dim };
                let vt = self.shape_ty(shape);
                if self.ty(d.ty)? != vt {
                    return err(format!(
                        "texture.size of a {}D texture yields `vec<u32, {}>`, not `{}`",
                        tex.dim,
                        tex.dim,
                        xir::verify::type_name(&m.types, d.ty)
                    ));
                }
                self.cap(Capability::ImageQuery);
                let size = self.op(Op::ImageQuerySize, Some(vt), None, ids(&[image]))?;
                self.mip_size(size, vt, tex.dim, d.operands[1], rid)?;
            }
            op => return err(format!("`{op}` is not a storage-image operation")),
        }
        Ok(())
    }

    /// A texel value must be exactly `vec<T, 4>` of the image's texel type.
    fn check_texel(&self, ty: TypeId, tex: TextureVar, what: &str) -> EResult<()> {
        match self.m.types.get(ty) {
            Type::Vector { elem, lanes: 4 } if *elem == tex.elem => Ok(()),
            _ => err(format!(
                "texture {what} moves exactly a 4-lane texel of `{}`, not `{}` (never padded or smeared)",
                xir::verify::type_name(&self.m.types, tex.elem),
                xir::verify::type_name(&self.m.types, ty)
            )),
        }
    }

    /// `max(size >> level, 1)` per lane (1 when `level >= 32`, a shift that
    /// wide being undefined in SPIR-V): the interpreter's mip-size rule, from
    /// the level-0 `size` of type `vt` (`vec<u32, dim>`). Also used by the
    /// bindless size queries (`sampling.rs`).
    pub(crate) fn mip_size(
        &mut self,
        size: Word,
        vt: Word,
        dim: u32,
        level: Value,
        rid: Option<Word>,
    ) -> EResult<Word> {
        let level = self.index32(level)?;
        let levels = self.composite_splat(vt, level, dim)?;
        let shifted = self.op(Op::ShiftRightLogical, Some(vt), None, ids(&[size, levels]))?;
        let bool_t = self.b.type_bool();
        let limit = self.u32_const(32);
        let small = self.op(Op::ULessThan, Some(bool_t), None, ids(&[level, limit]))?;
        let zero = self.u32_const(0);
        let one = self.u32_const(1);
        let zeros = self.composite_const(vt, vec![zero; dim as usize]);
        let ones = self.composite_const(vt, vec![one; dim as usize]);
        let kept = self.op(Op::Select, Some(vt), None, ids(&[small, shifted, zeros]))?;
        self.glsl(vt, rid, GlslStd450Op::UMax, &[kept, ones])
    }

    fn composite_splat(&mut self, vt: Word, s: Word, lanes: u32) -> EResult<Word> {
        self.op(Op::CompositeConstruct, Some(vt), None, (0..lanes).map(|_| Operand::IdRef(s)).collect())
    }
}
