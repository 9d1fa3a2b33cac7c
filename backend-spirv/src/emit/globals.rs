//! Module-level declarations: the kernel's storage buffers (set 0, dense
//! bindings, `Block` structs of one runtime array), its storage-image
//! textures (declared by `texture.rs`), the push-constant block
//! (dispatch size, then value arguments when they fit), the backend-owned
//! argument block `_Global` (set 0, binding 0, `NonWritable`, never `Aliased`
//! or `Coherent`: the value arguments when they do not fit in push
//! constants), builtin inputs for the special
//! registers, shared-memory (`Workgroup`) variables, and the `main` entry
//! point that bounds-checks `dispatch_id < dispatch_size` before calling the
//! kernel body (not in a kernel dispatched in whole blocks, which reads its
//! dispatch size from `NumWorkgroups` and declares no push constants unless
//! value arguments live there). A buffer is `Aliased` when the kernel has another resource
//! argument and is not `noalias`
//! argument, `NonWritable` only when no reachable instruction writes
//! user-resource memory (`plan::writes_user_memory`), and `Coherent` exactly
//! when a volatile access reaches it (`plan::coherence`). Every global goes into the entry point's interface list
//! (SPIR-V 1.4+). Buffers of one element layout share one `Block` type
//! (runtime array, struct, pointer and their decorations are declared once:
//! six instructions per further buffer; the variables carry the per-buffer
//! decorations).

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{self, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass, Word};
use rustc_hash::FxHashMap;
use xir::{SpecialRegister, TypeId};

use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::BufferStorage;
use crate::plan::bindings::ArgBinding;

/// One kernel buffer variable.
#[derive(Clone, Copy, Debug)]
pub struct BufferVar {
    pub var: Word,
    /// Elements stored as same-width unsigned integers (float CAS atomics).
    pub int_view: bool,
    pub storage: BufferStorage,
    pub elem: Option<TypeId>,
}

#[derive(Default)]
pub struct Globals {
    pub builtins: FxHashMap<u32, Word>,
    pub push: Option<Word>,
    /// The argument block variable (`StorageBuffer`), when the plan has one.
    pub arg_block: Option<Word>,
    pub buffers: FxHashMap<u32, BufferVar>,
    /// Storage-image texture arguments, by argument index.
    pub textures: FxHashMap<u32, super::texture::TextureVar>,
    pub interface: Vec<Word>,
    /// The `StorageBuffer` pointer to each buffer `Block` type, by element
    /// layout (runtime-array element, stride, the element when it holds a matrix).
    buffer_blocks: FxHashMap<(Word, u32, Option<TypeId>), Word>,
}

impl Emitter<'_> {
    pub(crate) fn global_var(&mut self, ptr_ty: Word, class: StorageClass) -> Word {
        let id = self.b.id();
        self.global_var_id(ptr_ty, class, id)
    }

    pub(crate) fn global_var_id(&mut self, ptr_ty: Word, class: StorageClass, id: Word) -> Word {
        self.b.module_mut().types_global_values.push(Instruction::new(
            Op::Variable,
            Some(ptr_ty),
            Some(id),
            vec![Operand::StorageClass(class)],
        ));
        self.globals.interface.push(id);
        id
    }

    pub(crate) fn declare_globals(&mut self) -> EResult<()> {
        let plans = self.plans;
        let u32t = self.u32_ty();
        let multi = plans.bindings.may_alias();
        // Push constants: uvec3 dispatch size, then the value arguments that live there.
        let uvec3 = self.b.type_vector(u32t, 3);
        let push_values: Vec<(u32, TypeId)> = plans
            .bindings
            .args
            .iter()
            .filter_map(|a| match a {
                ArgBinding::PushConstant { offset, ty, .. } => Some((*offset, *ty)),
                _ => None,
            })
            .collect();
        // A kernel dispatched in whole blocks never reads the dispatch size
        // from them (`dispatch_size`), so without value arguments there it
        // declares no block (the layout keeps the ABI's 12 bytes either way).
        if !(plans.bindings.abi.whole_blocks && push_values.is_empty()) {
            let block = self.value_block(StorageClass::PushConstant, Some(uvec3), &push_values)?;
            let pty = self.ptr_ty(StorageClass::PushConstant, block);
            let pc = self.global_var(pty, StorageClass::PushConstant);
            self.globals.push = Some(pc);
        }
        // The argument block: the value arguments that did not fit, host-layout packed.
        if let Some(ab) = plans.bindings.argument_block {
            let block_values: Vec<(u32, TypeId)> = plans
                .bindings
                .args
                .iter()
                .filter_map(|a| match a {
                    ArgBinding::BlockValue { offset, ty, .. } => Some((*offset, *ty)),
                    _ => None,
                })
                .collect();
            let block = self.value_block(StorageClass::StorageBuffer, None, &block_values)?;
            self.b.name(block, "_Global");
            let pty = self.ptr_ty(StorageClass::StorageBuffer, block);
            let var = self.global_var(pty, StorageClass::StorageBuffer);
            self.decorate(var, Decoration::DescriptorSet, &[crate::abi::LOCAL_SET]);
            self.decorate(var, Decoration::Binding, &[ab.binding]);
            self.decorate(var, Decoration::NonWritable, &[]);
            self.globals.arg_block = Some(var);
        }
        // Buffers.
        for (i, a) in plans.bindings.args.iter().enumerate() {
            let (binding, storage, elem, int_view) = match a {
                ArgBinding::Buffer { binding, elem, storage, int_view } => (*binding, *storage, Some(*elem), *int_view),
                ArgBinding::ByteBuffer { binding } => {
                    (*binding, BufferStorage::Words { elem_size: 1, elem_align: 1 }, None, false)
                }
                ArgBinding::Texture { binding, dim, elem } => {
                    self.declare_texture(i as u32, *binding, *dim, *elem)?;
                    continue;
                }
                ArgBinding::PushConstant { .. }
                | ArgBinding::BlockValue { .. }
                | ArgBinding::Accel { .. }
                | ArgBinding::Bindless { .. } => continue,
            };
            let (rt_elem, stride) = match (storage, elem) {
                (BufferStorage::Typed { stride }, Some(e)) if int_view => {
                    let bits = self.m.types.scalar_bits(e);
                    (self.scalar_ty(super::ScalarKind::Int { bits, signed: false }), stride)
                }
                (BufferStorage::Typed { stride }, Some(e)) => (self.storage_ty(e)?, stride),
                _ => (u32t, 4),
            };
            // The element decides the Block's decorations only through a matrix layout.
            let typed = match (storage, elem) {
                (BufferStorage::Typed { .. }, Some(e)) if self.holds_matrix(e) => Some(e),
                _ => None,
            };
            let pty = match self.globals.buffer_blocks.get(&(rt_elem, stride, typed)) {
                Some(&pty) => pty,
                None => {
                    let rta = self.b.id();
                    let rta = self.b.type_runtime_array_id(Some(rta), rt_elem);
                    self.decorate(rta, Decoration::ArrayStride, &[stride]);
                    let sid = self.b.id();
                    let st = self.b.type_struct_id(Some(sid), [rta]);
                    self.decorate(st, Decoration::Block, &[]);
                    self.b.member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
                    if let Some(e) = typed {
                        self.matrix_member_layout(st, 0, e);
                    }
                    let pty = self.ptr_ty(StorageClass::StorageBuffer, st);
                    self.globals.buffer_blocks.insert((rt_elem, stride, typed), pty);
                    pty
                }
            };
            let var = self.global_var(pty, StorageClass::StorageBuffer);
            self.decorate(var, Decoration::DescriptorSet, &[crate::abi::DESCRIPTOR_SET]);
            self.decorate(var, Decoration::Binding, &[binding]);
            if multi {
                self.decorate(var, Decoration::Aliased, &[]);
            }
            if !plans.writes_memory {
                self.decorate(var, Decoration::NonWritable, &[]);
            }
            // Exactly the buffers a volatile access reaches (`plan::coherence`).
            if plans.coherence.is_coherent(plans.kernel, i as u32) {
                self.decorate(var, Decoration::Coherent, &[]);
            }
            self.globals.buffers.insert(i as u32, BufferVar { var, int_view, storage, elem });
        }
        Ok(())
    }

    /// Whether `t` is a matrix or an array (of arrays) of matrices, whose
    /// member needs `ColMajor` / `MatrixStride` (`matrix_member_layout`).
    fn holds_matrix(&self, mut t: TypeId) -> bool {
        while let xir::Type::Array { elem, .. } = self.m.types.get(t) {
            t = *elem;
        }
        matches!(self.m.types.get(t), xir::Type::Matrix { .. })
    }

    /// A `Block` struct of value arguments at their host offsets (`head` first, at offset 0, when given).
    fn value_block(&mut self, class: StorageClass, head: Option<Word>, values: &[(u32, TypeId)]) -> EResult<Word> {
        let u32t = self.u32_ty();
        let mut members: Vec<Word> = head.into_iter().collect();
        let mut layout: Vec<(u32, Option<TypeId>)> = head.map(|_| (0, None)).into_iter().collect();
        for &(offset, ty) in values {
            let w = if self.m.types.is_bool(ty) { u32t } else { self.value_storage_ty(class, ty)? };
            members.push(w);
            layout.push((offset, Some(ty)));
        }
        let id = self.b.id();
        let block = self.b.type_struct_id(Some(id), members);
        self.decorate(block, Decoration::Block, &[]);
        for (k, (off, ty)) in layout.iter().enumerate() {
            self.b.member_decorate(block, k as u32, Decoration::Offset, [Operand::LiteralBit32(*off)]);
            if let Some(t) = ty {
                self.matrix_member_layout(block, k as u32, *t);
            }
        }
        Ok(block)
    }

    /// The laid-out type of a value argument in `class` (narrow scalars need that class's storage capability).
    fn value_storage_ty(&mut self, class: StorageClass, t: TypeId) -> EResult<Word> {
        if class != StorageClass::PushConstant {
            return self.storage_ty(t);
        }
        let bits = self.m.types.scalar_bits(self.m.types.scalar_of(t));
        if self.m.types.is_scalar(t) || matches!(self.m.types.get(t), xir::Type::Vector { .. }) {
            if bits < 32 {
                self.cap(if bits == 8 { Capability::StoragePushConstant8 } else { Capability::StoragePushConstant16 });
                self.exts.insert(if bits == 8 { "SPV_KHR_8bit_storage" } else { "SPV_KHR_16bit_storage" });
            }
            return self.ty(t);
        }
        self.storage_ty(t)
    }

    /// The variable, storage class and member index holding value argument binding `a`.
    pub(crate) fn value_slot(&self, a: &ArgBinding) -> Option<(Word, StorageClass, u32)> {
        match a {
            ArgBinding::PushConstant { member, .. } => Some((self.globals.push?, StorageClass::PushConstant, *member)),
            ArgBinding::BlockValue { member, .. } => {
                Some((self.globals.arg_block?, StorageClass::StorageBuffer, *member))
            }
            _ => None,
        }
    }

    fn builtin(&mut self, bi: BuiltIn, shape: Shape) -> Word {
        if let Some(&v) = self.globals.builtins.get(&(bi as u32)) {
            return v;
        }
        let ty = self.shape_ty(shape);
        let pty = self.ptr_ty(StorageClass::Input, ty);
        let v = self.global_var(pty, StorageClass::Input);
        self.b.decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
        self.globals.builtins.insert(bi as u32, v);
        v
    }

    /// Load the dispatch size (`uvec3`) from the push constants; in whole
    /// blocks it is `NumWorkgroups * LocalSize`, the rounded-up count every
    /// thread of which runs (`abi.rs`, "Bounds check at entry").
    pub(crate) fn dispatch_size(&mut self) -> EResult<Word> {
        let u32t = self.u32_ty();
        let uvec3 = self.b.type_vector(u32t, 3);
        if self.plans.bindings.abi.whole_blocks {
            let shape = Shape { scalar: ScalarKind::Int { bits: 32, signed: false }, lanes: 3 };
            let var = self.builtin(BuiltIn::NumWorkgroups, shape);
            let groups = self.op(Op::Load, Some(uvec3), None, vec![Operand::IdRef(var)])?;
            let block = self.register(SpecialRegister::BlockSize)?;
            return self.op(Op::IMul, Some(uvec3), None, vec![Operand::IdRef(groups), Operand::IdRef(block)]);
        }
        let pty = self.ptr_ty(StorageClass::PushConstant, uvec3);
        let zero = self.u32_const(0);
        let pc = self.globals.push.expect("push constants declared");
        let p = self.op(Op::AccessChain, Some(pty), None, vec![Operand::IdRef(pc), Operand::IdRef(zero)])?;
        self.op(Op::Load, Some(uvec3), None, vec![Operand::IdRef(p)])
    }

    /// The value of a special register, loaded in the current block.
    pub(crate) fn register(&mut self, r: SpecialRegister) -> EResult<Word> {
        let u3 = Shape { scalar: ScalarKind::Int { bits: 32, signed: false }, lanes: 3 };
        let u1 = Shape { scalar: ScalarKind::Int { bits: 32, signed: false }, lanes: 1 };
        let (bi, shape) = match r {
            SpecialRegister::DispatchId => (BuiltIn::GlobalInvocationId, u3),
            SpecialRegister::ThreadId => (BuiltIn::LocalInvocationId, u3),
            SpecialRegister::BlockId => (BuiltIn::WorkgroupId, u3),
            SpecialRegister::WarpLaneId
            | SpecialRegister::WarpSize
            | SpecialRegister::WarpId
            | SpecialRegister::WarpCount => {
                self.cap(Capability::GroupNonUniform);
                let bi = match r {
                    SpecialRegister::WarpSize => BuiltIn::SubgroupSize,
                    SpecialRegister::WarpId => BuiltIn::SubgroupId,
                    SpecialRegister::WarpCount => BuiltIn::NumSubgroups,
                    _ => BuiltIn::SubgroupLocalInvocationId,
                };
                (bi, u1)
            }
            SpecialRegister::DispatchSize => return self.dispatch_size(),
            SpecialRegister::BlockSize => {
                let bs = self.plans.bindings.abi.block_size;
                let c: Vec<Word> = bs.iter().map(|&x| self.u32_const(x)).collect();
                let ty = self.shape_ty(u3);
                return Ok(self.composite_const(ty, c));
            }
            other => return err(format!("special register `${}` reached emission", other.name())),
        };
        let var = self.builtin(bi, shape);
        let ty = self.shape_ty(shape);
        self.op(Op::Load, Some(ty), None, vec![Operand::IdRef(var)])
    }

    /// `main`: bounds check, then call the kernel body. A kernel dispatched
    /// in whole blocks has no check, so its body is the entry point itself
    /// (no wrapper function, no call for the optimizer to inline).
    pub(crate) fn emit_main(&mut self) -> EResult<()> {
        let body = self.func_ids[&self.plans.kernel];
        let main = if self.plans.bindings.abi.whole_blocks { body } else { self.emit_checked_main(body)? };
        let iface = self.globals.interface.clone();
        self.b.entry_point(ExecutionModel::GLCompute, main, crate::abi::ENTRY_POINT_NAME, iface);
        let bs = self.plans.bindings.abi.block_size;
        self.b.execution_mode(main, ExecutionMode::LocalSize, bs);
        // Warp operations see the lanes that execute the same dynamic
        // instance, as the interpreter's rendezvous does (docs/vulkan.md,
        // "Subgroups"); without the mode Vulkan leaves reconvergence open.
        if self.plans.features.required.contains(crate::Feature::MaximalReconvergence) {
            self.b.execution_mode(main, ExecutionMode::MaximallyReconvergesKHR, []);
            self.exts.insert("SPV_KHR_maximal_reconvergence");
        }
        // IEEE signed zeros, infinities and NaNs, and round-to-nearest-even,
        // for every float width in use: Vulkan may otherwise flush the sign
        // of zero, assume no NaN/Inf, and round narrowing conversions any way
        // (or not at all: the H200 skips the f16 rounding of f32 -> f16 -> f32).
        // A kernel without floats declares neither (four instructions, and
        // two device features it does not need). Fast math declares neither
        // either: `RoundingModeRTE` is what made `matrix_ops` 2.7x slower on
        // the H200 (BENCHMARKS.md, "GPU runtime on the H200"), and the
        // interpreter's precision model widens to match (docs/vulkan.md).
        for width in [16u32, 32, 64] {
            if !self.opts.fast_math && super::narrow_caps::declares_float(self.b.module_ref(), width) {
                self.b.execution_mode(main, ExecutionMode::SignedZeroInfNanPreserve, [width]);
                self.cap(Capability::SignedZeroInfNanPreserve);
                self.b.execution_mode(main, ExecutionMode::RoundingModeRTE, [width]);
                self.cap(Capability::RoundingModeRTE);
            }
        }
        Ok(())
    }

    /// The entry wrapper of a checked kernel: `dispatch_id < dispatch_size`
    /// in every dimension, then call `body`.
    fn emit_checked_main(&mut self, body: Word) -> EResult<Word> {
        let void = self.b.type_void();
        let fnty = self.b.type_function(void, []);
        let be = |e: rspirv::dr::Error| super::EmitError { func: None, inst: None, message: format!("rspirv: {e:?}") };
        let main = self.b.begin_function(void, None, spirv::FunctionControl::NONE, fnty).map_err(be)?;
        let call_l = self.b.id();
        let merge_l = self.b.id();
        self.b.begin_block(None).map_err(be)?;
        let gid = self.register(SpecialRegister::DispatchId)?;
        let ds = self.dispatch_size()?;
        let bool_t = self.b.type_bool();
        let bvec3 = self.b.type_vector(bool_t, 3);
        let lt = self.op(Op::ULessThan, Some(bvec3), None, vec![Operand::IdRef(gid), Operand::IdRef(ds)])?;
        let all = self.op(Op::All, Some(bool_t), None, vec![Operand::IdRef(lt)])?;
        self.b.selection_merge(merge_l, spirv::SelectionControl::NONE).map_err(be)?;
        self.b.branch_conditional(all, call_l, merge_l, []).map_err(be)?;
        self.b.begin_block(Some(call_l)).map_err(be)?;
        self.op(Op::FunctionCall, Some(void), None, vec![Operand::IdRef(body)])?;
        self.b.branch(merge_l).map_err(be)?;
        self.b.begin_block(Some(merge_l)).map_err(be)?;
        self.b.ret().map_err(be)?;
        self.b.end_function().map_err(be)?;
        Ok(main)
    }
}
