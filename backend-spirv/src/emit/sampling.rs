//! Bindless textures and sampling: the sampler heap, the 2D / 3D
//! sampled-texture heaps, and the operations through them (see `abi.rs` for
//! the sets and `plan/texture_heap.rs` for what is declared when).
//!
//! - **Sampler heap** (set 1, binding 0, only when a sample is reachable):
//!   `OpTypeArray` of [`SAMPLER_COUNT`] `OpTypeSampler` in
//!   `UniformConstant`; selector `s` is element `s` (`filter * 4 + address`,
//!   the runner's immutable samplers).
//! - **Texture heaps** (the sets after the buffer heap, 2D then 3D, each only
//!   when used): an `OpTypeRuntimeArray` of f32 sampled images (`Sampled =
//!   1`, format `Unknown`) in `UniformConstant` (capability
//!   `RuntimeDescriptorArray`).
//! - Every operation loads the slot's heap index from its array's metadata
//!   (`meta[slot]`, first word) and the image `heap[index]`.
//!   `bindless.texture{2,3}d_read` is `OpImageFetch` at `Lod 0`;
//!   `bindless.texture{2,3}d_size` is `OpImageQuerySizeLod` at level 0 then
//!   the interpreter's `max(size >> level, 1)` (capability `ImageQuery`); the
//!   samples are `OpImageSampleExplicitLod` on `OpSampledImage(image,
//!   samplers[selector])` with `Lod` (`texture.sample`: `Lod 0.0`, compute
//!   shaders have no implicit derivatives) or `Grad ddx ddy`. A selector that
//!   is not a constant is guarded: out of `0..16` it indexes sampler 0 and the
//!   sample yields `(0, 0, 0, 0)` (`guarded_selector`; the interpreter reports
//!   the error, which a device cannot).
//! - **NonUniform**, only for a slot the plan calls divergent: on the loaded
//!   heap index, the image access chain, the image load and the sampled
//!   image; for a divergent selector: on the (guarded) sampler index, the sampler access
//!   chain, the sampler load and the sampled image. Capabilities
//!   `ShaderNonUniform` and `SampledImageArrayNonUniformIndexing` then, and
//!   only then. Never on the metadata walk's constant indices.

use rspirv::spirv::{Capability, Decoration, Dim, ImageFormat, ImageOperands, Op, StorageClass, Word};
use xir::{Inst, Opcode, Value};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::{PropertyKind, SAMPLER_COUNT, SAMPLER_SET};

/// The sampler and texture heaps of the module.
#[derive(Default)]
pub struct SamplingState {
    /// The sampler-heap variable and the `OpTypeSampler`.
    pub samplers: Option<(Word, Word)>,
    /// Per dimension (index 0: 2D, 1: 3D): the heap variable and its image type.
    pub heaps: [Option<(Word, Word)>; 2],
    /// Ids already decorated `NonUniform` (a divergent selector value may feed several samples).
    pub nonuniform: rustc_hash::FxHashSet<Word>,
}

const U32: ScalarKind = ScalarKind::Int { bits: 32, signed: false };

impl Emitter<'_> {
    /// Declare the sampler heap and the texture heaps the ABI lists.
    pub(crate) fn declare_sampling(&mut self) -> EResult<()> {
        let plans = self.plans;
        let props = plans.bindings.abi.properties.iter().filter(|p| p.role == crate::abi::Role::Heap);
        for p in props {
            match p.kind {
                PropertyKind::SamplerHeap => {
                    if p.set != SAMPLER_SET || p.binding != 0 {
                        return err(format!("the sampler heap is planned at set {}, binding {}", p.set, p.binding));
                    }
                    let sampler = self.b.type_sampler();
                    let n = self.u32_const(SAMPLER_COUNT);
                    let arr = self.b.type_array(sampler, n);
                    let pty = self.ptr_ty(StorageClass::UniformConstant, arr);
                    let var = self.global_var(pty, StorageClass::UniformConstant);
                    self.b.name(var, "_SamplerHeap");
                    self.decorate(var, Decoration::DescriptorSet, &[SAMPLER_SET]);
                    self.decorate(var, Decoration::Binding, &[0]);
                    self.sampling.samplers = Some((var, sampler));
                }
                PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap => {
                    let (dim, k, name) = match p.kind {
                        PropertyKind::Texture2dHeap => (Dim::Dim2D, 0, "_Texture2dHeap"),
                        _ => (Dim::Dim3D, 1, "_Texture3dHeap"),
                    };
                    let f32t = self.ty(xir::TypeTable::F32)?;
                    let image = self.b.type_image(f32t, dim, 0, 0, 0, 1, ImageFormat::Unknown, None);
                    let rid = self.b.id();
                    let arr = self.b.type_runtime_array_id(Some(rid), image);
                    let pty = self.ptr_ty(StorageClass::UniformConstant, arr);
                    let var = self.global_var(pty, StorageClass::UniformConstant);
                    self.b.name(var, name);
                    self.decorate(var, Decoration::DescriptorSet, &[p.set]);
                    self.decorate(var, Decoration::Binding, &[0]);
                    self.cap(Capability::RuntimeDescriptorArray);
                    self.sampling.heaps[k] = Some((var, image));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Lower one bindless texture operation (`plan::texture_heap::is_bindless_texture_op`).
    pub(crate) fn emit_bindless_texture_op(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let meta = match d.operands[0] {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => match self.bindless.meta.get(&a) {
                Some(&w) => w,
                None => return err(format!("argument {a} has no bindless metadata descriptor (not planned)")),
            },
            _ => return err("bindless operands must be kernel bindless_array arguments (callables are specialized)"),
        };
        let dim = crate::plan::texture_heap::texture_dim(m, f, i);
        let Some((heap, image_ty)) = self.sampling.heaps[(dim as usize).saturating_sub(2).min(1)] else {
            return err(format!("`{}` needs the {dim}D texture heap, which was not planned", d.opcode));
        };
        let divergent = self.plans.textures.nonuniform.contains(&i);
        let u32t = self.u32_ty();
        let pu32 = self.ptr_ty(StorageClass::StorageBuffer, u32t);
        let zero = self.u32_const(0);
        let slot = self.index32(d.operands[1])?;
        let p = self.op(Op::AccessChain, Some(pu32), None, ids(&[meta, zero, slot, zero]))?;
        let index = self.op(Op::Load, Some(u32t), None, ids(&[p]))?;
        let pimg = self.ptr_ty(StorageClass::UniformConstant, image_ty);
        let chain = self.op(Op::AccessChain, Some(pimg), None, ids(&[heap, index]))?;
        let image = self.op(Op::Load, Some(image_ty), None, ids(&[chain]))?;
        let mut nonuniform = if divergent { vec![index, chain, image] } else { Vec::new() };
        match d.opcode {
            Opcode::BindlessTexture2dRead | Opcode::BindlessTexture3dRead => {
                let ty = self.ty(d.ty)?;
                let coord = self.val(d.operands[2])?;
                let lod0 = self.u32_const(0);
                let mut ops = ids(&[image, coord]);
                ops.push(rspirv::dr::Operand::ImageOperands(ImageOperands::LOD));
                ops.push(rspirv::dr::Operand::IdRef(lod0));
                self.op(Op::ImageFetch, Some(ty), rid, ops)?;
            }
            Opcode::BindlessTexture2dSize | Opcode::BindlessTexture3dSize => {
                let vt = self.shape_ty(Shape { scalar: U32, lanes: dim });
                if self.ty(d.ty)? != vt {
                    return err(format!(
                        "`{}` yields `vec<u32, {dim}>`, not `{}`",
                        d.opcode,
                        xir::verify::type_name(&m.types, d.ty)
                    ));
                }
                self.cap(Capability::ImageQuery);
                let lod0 = self.u32_const(0);
                let size = self.op(Op::ImageQuerySizeLod, Some(vt), None, ids(&[image, lod0]))?;
                self.mip_size(size, vt, dim, d.operands[2], rid)?;
            }
            Opcode::TextureSample | Opcode::TextureSampleLevel | Opcode::TextureSampleGrad => {
                let Some((samplers, sampler_ty)) = self.sampling.samplers else {
                    return err("a sample needs the sampler heap, which was not planned");
                };
                let sel_v = *d.operands.last().expect("sample has a selector");
                let (sel, in_range) = self.guarded_selector(sel_v)?;
                let psampler = self.ptr_ty(StorageClass::UniformConstant, sampler_ty);
                let schain = self.op(Op::AccessChain, Some(psampler), None, ids(&[samplers, sel]))?;
                let sampler = self.op(Op::Load, Some(sampler_ty), None, ids(&[schain]))?;
                let sampled_ty = self.b.type_sampled_image(image_ty);
                let sampled = self.op(Op::SampledImage, Some(sampled_ty), None, ids(&[image, sampler]))?;
                if divergent {
                    nonuniform.push(sampled);
                }
                if self.plans.textures.nonuniform_sampler.contains(&i) {
                    nonuniform.extend([sel, schain, sampler]);
                    if !divergent {
                        nonuniform.push(sampled);
                    }
                }
                let ty = self.ty(d.ty)?;
                let uv = self.val(d.operands[2])?;
                let mut ops = ids(&[sampled, uv]);
                match d.opcode {
                    Opcode::TextureSampleGrad => {
                        let dx = self.val(d.operands[3])?;
                        let dy = self.val(d.operands[4])?;
                        ops.push(rspirv::dr::Operand::ImageOperands(ImageOperands::GRAD));
                        ops.extend(ids(&[dx, dy]));
                    }
                    op => {
                        let lod = if op == Opcode::TextureSampleLevel {
                            self.val(d.operands[3])?
                        } else {
                            self.float_splat(Shape { scalar: ScalarKind::Float { bits: 32 }, lanes: 1 }, 0.0)
                        };
                        ops.push(rspirv::dr::Operand::ImageOperands(ImageOperands::LOD));
                        ops.push(rspirv::dr::Operand::IdRef(lod));
                    }
                }
                match in_range {
                    None => {
                        self.op(Op::ImageSampleExplicitLod, Some(ty), rid, ops)?;
                    }
                    Some(ok) => {
                        let sample = self.op(Op::ImageSampleExplicitLod, Some(ty), None, ops)?;
                        let shape = self.shape(d.ty)?;
                        let zero = self.float_splat(shape, 0.0);
                        self.op(Op::Select, Some(ty), rid, ids(&[ok, sample, zero]))?;
                    }
                }
            }
            op => return err(format!("`{op}` is not a bindless texture operation")),
        }
        if !nonuniform.is_empty() {
            self.cap(Capability::ShaderNonUniform);
            self.cap(Capability::SampledImageArrayNonUniformIndexing);
            for w in nonuniform {
                if self.sampling.nonuniform.insert(w) {
                    self.decorate(w, Decoration::NonUniform, &[]);
                }
            }
        }
        Ok(())
    }

    /// The sampler-array index of selector `v` and, for a selector that is not
    /// a constant (constants are range-checked by the plan), whether it is in
    /// `0..16`. Out of range, the index is 0 (never past the array) and the
    /// caller replaces the sample with `(0, 0, 0, 0)` (docs/vulkan.md,
    /// "Sampling"). The range test is on the selector's own width, so a
    /// 64-bit selector is not truncated into range.
    fn guarded_selector(&mut self, v: Value) -> EResult<(Word, Option<Word>)> {
        let index = self.index32(v)?;
        if matches!(v, Value::Const(_)) {
            return Ok((index, None));
        }
        let raw = self.val(v)?;
        let s = self.shape(self.vty(v))?;
        let count = self.scalar_const(s.scalar, SAMPLER_COUNT.into());
        let bool_ty = self.scalar_ty(ScalarKind::Bool);
        let ok = self.op(Op::ULessThan, Some(bool_ty), None, ids(&[raw, count]))?;
        let (u32t, zero) = (self.u32_ty(), self.u32_const(0));
        let index = self.op(Op::Select, Some(u32t), None, ids(&[ok, index, zero]))?;
        Ok((index, Some(ok)))
    }
}
