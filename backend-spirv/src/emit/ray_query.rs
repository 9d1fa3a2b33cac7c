//! Ray queries (`SPV_KHR_ray_query`, capability `RayQueryKHR`): the
//! acceleration-structure descriptors and the ray-query instructions.
//!
//! - An `accel` kernel argument whose role mask (see [`accel_roles`](crate::plan::ray_query::accel_roles)) has
//!   the traversal bit is one `AccelerationStructureKHR` variable in
//!   `UniformConstant` storage, set 0, at its planned binding; an unused
//!   accel (mask 0) declares nothing, so a kernel without traversal has
//!   neither the descriptor nor the capability.
//! - A ray-query object is a `Function`-storage `RayQueryKHR` variable:
//!   `ray_query.pipeline` declares it and runs `OpRayQueryInitializeKHR`
//!   (flags `None` for `ray_query_all`, `TerminateOnFirstHitKHR` for
//!   `ray_query_any`; cull mask = the low 8 bits of the mask operand). A
//!   query value must be the pipeline's result itself (no Phi, select or
//!   memory in between).
//! - `ray_query.proceed` is `OpRayQueryProceedKHR`. The closest-hit loop
//!   that calls it until it returns false is made in XIR by
//!   `lower_ray_query_loop` (spirv-legalize step 1), so committed fields
//!   are read only after traversal is complete.
//! - `ray.trace_any` is one initialize with `OpaqueKHR |
//!   TerminateOnFirstHitKHR | SkipAABBsKHR` and a single proceed: with
//!   forced opacity every triangle hit is committed during that proceed,
//!   traversal ends at the first, and no procedural candidate can stop the
//!   proceed early (the interpreter ignores procedural geometry in direct
//!   tracing); the result is "the committed type is not none".
//!   `SkipAABBsKHR` needs the capability `RayTraversalPrimitiveCullingKHR`,
//!   which every `rayQuery` device supports (VK_KHR_ray_query has no
//!   separate feature for it).
//! - `ray_query.object_read` fields (the spec's numbering): 1 and 2 read the
//!   candidate intersection, 3 the committed one, 4 and 5 compare the
//!   candidate type. SPIR-V allows a committed-intersection read only while
//!   there is a committed intersection (barycentrics: a committed triangle);
//!   lavapipe dereferences a null instance for an unguarded committed
//!   instance id. So field 3 reads the committed type, then, in the four
//!   inline blocks the control-flow plan gives it (`plan::ray_query::needs_guarded_read`),
//!   `if type != none { instance, primitive, t }` and `if type == triangle
//!   { barycentrics }`, with Phis taking the interpreter's miss values
//!   (`inst = prim = 0xffffffff`, `bary = 0`, `t = t_max`) otherwise; 0 gives back the ray the query was created
//!   with. `ray_query.object_write` actions are confirm, generate (at `t`)
//!   and terminate.
//! - Instance-property access (`accel.instance_*`, `accel.set_instance_*`)
//!   goes through the accel's instance buffer (role `AccelInstance`, its own
//!   binding; no accel descriptor and no `RayQueryKHR` without traversal):
//!   a runtime array (stride 64) of `VkAccelerationStructureInstanceKHR`
//!   records declared as a struct of twelve `f32` (the row-major 3x4
//!   transform) and four `u32` (`user_id | mask << 24`, flags, the
//!   bottom-level reference). A transform reads as a `mat<f32, 4>` (columns;
//!   last row 0 0 0 1) and writes its upper three rows; the user id is the
//!   low 24 bits of word 12 and the mask its high 8. The two fields share
//!   that word, so each write is an `OpAtomicAnd` clearing its own bits and
//!   an `OpAtomicOr` setting them: concurrent writes of the user id and the
//!   mask of one instance both land. `NonWritable` / `Aliased` follow the
//!   buffers' rules (`emit::globals`). The device traverses the structure
//!   built before the dispatch; writes take effect at the next build.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, Op, StorageClass, Word};
use rustc_hash::FxHashMap;
use xir::{Inst, Opcode, Type, TypeId, Value};

use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::{ACCEL_INSTANCE_STRIDE, LOCAL_SET};
use crate::plan::bindings::ArgBinding;

/// `RayFlagsMask` bits used here.
const FLAG_OPAQUE: u32 = 0x1;
const FLAG_TERMINATE_ON_FIRST_HIT: u32 = 0x4;
const FLAG_SKIP_AABBS: u32 = 0x200;
/// `RayQueryIntersection`: candidate / committed.
const CANDIDATE: u32 = 0;
const COMMITTED: u32 = 1;

/// Whether the emitter lowers `op` here.
pub(crate) fn is_ray_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RayQueryPipeline
            | Opcode::RayQueryProceed
            | Opcode::RayQueryObjectRead
            | Opcode::RayQueryObjectWrite
            | Opcode::RayTraceAny
            | Opcode::AccelInstanceTransform
            | Opcode::AccelInstanceUserId
            | Opcode::AccelInstanceVisibility
            | Opcode::AccelSetInstanceTransform
            | Opcode::AccelSetInstanceVisibility
            | Opcode::AccelSetInstanceUserId
    )
}

/// Words of an instance record: the transform (0..12), `user_id | mask << 24`.
const TRANSFORM_WORDS: u32 = 12;
const ID_MASK_WORD: u32 = 12;
const USER_ID_BITS: u32 = 0x00ff_ffff;

/// Module-level ray-query state.
#[derive(Default)]
pub(crate) struct RayState {
    /// Accel variables by kernel argument.
    pub accels: FxHashMap<u32, Word>,
    /// Instance-buffer variables by kernel argument.
    pub instances: FxHashMap<u32, Word>,
}

impl Emitter<'_> {
    fn enable_ray_query(&mut self) {
        self.cap(Capability::RayQueryKHR);
        self.exts.insert("SPV_KHR_ray_query");
    }

    /// Declare the accel descriptors of the arguments with the traversal
    /// role and the instance buffers of those with an instance-property role.
    pub(crate) fn declare_accels(&mut self) -> EResult<()> {
        let plans = self.plans;
        let multi = plans.bindings.may_alias();
        let mut record_ptr = None;
        for (i, a) in plans.bindings.args.iter().enumerate() {
            let ArgBinding::Accel { binding, instances, .. } = a else { continue };
            if let Some(binding) = binding {
                self.enable_ray_query();
                let t = self.b.type_acceleration_structure_khr();
                let pty = self.ptr_ty(StorageClass::UniformConstant, t);
                let var = self.global_var(pty, StorageClass::UniformConstant);
                self.decorate(var, Decoration::DescriptorSet, &[LOCAL_SET]);
                self.decorate(var, Decoration::Binding, &[*binding]);
                self.ray.accels.insert(i as u32, var);
            }
            let Some(binding) = instances else { continue };
            let pty = match record_ptr {
                Some(p) => p,
                None => {
                    let p = self.instance_buffer_type();
                    record_ptr = Some(p);
                    p
                }
            };
            let var = self.global_var(pty, StorageClass::StorageBuffer);
            self.b.name(var, "_AccelInstances");
            self.decorate(var, Decoration::DescriptorSet, &[LOCAL_SET]);
            self.decorate(var, Decoration::Binding, &[*binding]);
            if multi {
                self.decorate(var, Decoration::Aliased, &[]);
            }
            if !plans.writes_memory {
                self.decorate(var, Decoration::NonWritable, &[]);
            }
            self.ray.instances.insert(i as u32, var);
        }
        Ok(())
    }

    /// `StorageBuffer` pointer to `Block { record[] }` (see the module doc).
    fn instance_buffer_type(&mut self) -> Word {
        let f32t = self.f32_ty();
        let u32t = self.u32_ty();
        let members: Vec<Word> = (0..16).map(|w| if w < TRANSFORM_WORDS { f32t } else { u32t }).collect();
        let sid = self.b.id();
        let record = self.b.type_struct_id(Some(sid), members);
        for w in 0..16u32 {
            self.b.member_decorate(record, w, Decoration::Offset, [Operand::LiteralBit32(4 * w)]);
        }
        self.b.name(record, "_AccelInstanceRecord");
        let rid = self.b.id();
        let rta = self.b.type_runtime_array_id(Some(rid), record);
        self.decorate(rta, Decoration::ArrayStride, &[ACCEL_INSTANCE_STRIDE]);
        let bid = self.b.id();
        let block = self.b.type_struct_id(Some(bid), [rta]);
        self.decorate(block, Decoration::Block, &[]);
        self.b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.ptr_ty(StorageClass::StorageBuffer, block)
    }

    /// `accel`'s instance-buffer variable and `instance` as a u32 index.
    fn instance_record(&mut self, accel: Value, instance: Value) -> EResult<(Word, Word)> {
        let var = match accel {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => self.ray.instances.get(&a).copied(),
            _ => None,
        };
        let Some(var) = var else {
            return err("an accel operand of instance-property access must be a kernel accel argument");
        };
        Ok((var, self.index32(instance)?))
    }

    /// A pointer to word `w` of record `idx` of instance buffer `var`.
    fn instance_word(&mut self, (var, idx): (Word, Word), w: u32) -> EResult<Word> {
        let t = if w < TRANSFORM_WORDS { self.f32_ty() } else { self.u32_ty() };
        let pty = self.ptr_ty(StorageClass::StorageBuffer, t);
        let zero = self.u32_const(0);
        let wc = self.u32_const(w);
        self.op(Op::AccessChain, Some(pty), None, [var, zero, idx, wc].map(Operand::IdRef).to_vec())
    }

    /// `OpAtomicAnd` then `OpAtomicOr` of word `ptr`: its `keep` bits stay, `set` (within `!keep`) is or-ed in.
    fn replace_bits(&mut self, ptr: Word, keep: u32, set: Word) -> EResult<()> {
        let u32t = self.u32_ty();
        let scope = self.u32_const(rspirv::spirv::Scope::Device as u32);
        let sem = self.u32_const(0);
        let keep = self.u32_const(keep);
        self.op(Op::AtomicAnd, Some(u32t), None, [ptr, scope, sem, keep].map(Operand::IdRef).to_vec())?;
        self.op(Op::AtomicOr, Some(u32t), None, [ptr, scope, sem, set].map(Operand::IdRef).to_vec())?;
        Ok(())
    }

    /// Check that `ty` is `mat<f32, 4>`.
    fn check_transform_ty(&self, ty: TypeId) -> EResult<()> {
        match self.m.types.get(ty) {
            Type::Matrix { elem, dim: 4 } if self.m.types.get(*elem) == &Type::Float(xir::FloatFormat::F32) => Ok(()),
            _ => err(format!(
                "an instance transform is a `mat<f32, 4>`, not `{}`",
                xir::verify::type_name(&self.m.types, ty)
            )),
        }
    }

    /// Emit an instance-property read or write (see the module doc).
    fn emit_instance_op(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let record = self.instance_record(d.operands[0], d.operands[1])?;
        let u32t = self.u32_ty();
        let f32t = self.f32_ty();
        let is_u32 = |t: TypeId| m.types.get(t) == &Type::Int { bits: 32, signed: false };
        match d.opcode {
            Opcode::AccelInstanceTransform => {
                self.check_transform_ty(d.ty)?;
                let mut t = Vec::with_capacity(12);
                for w in 0..TRANSFORM_WORDS {
                    let p = self.instance_word(record, w)?;
                    t.push(self.op(Op::Load, Some(f32t), None, vec![Operand::IdRef(p)])?);
                }
                let v4 = self.b.type_vector(f32t, 4);
                let f = ScalarKind::Float { bits: 32 };
                let (zero, one) = (self.scalar_const(f, 0), self.scalar_const(f, u64::from(1f32.to_bits())));
                let mut cols = Vec::with_capacity(4);
                for c in 0..4 {
                    let lanes = [t[c], t[4 + c], t[8 + c], if c == 3 { one } else { zero }];
                    cols.push(self.op(Op::CompositeConstruct, Some(v4), None, lanes.map(Operand::IdRef).to_vec())?);
                }
                let mt = self.ty(d.ty)?;
                self.op(Op::CompositeConstruct, Some(mt), rid, cols.into_iter().map(Operand::IdRef).collect())?;
            }
            Opcode::AccelInstanceUserId | Opcode::AccelInstanceVisibility => {
                if !is_u32(d.ty) {
                    return err(format!("`{}` gives a u32", d.opcode));
                }
                let p = self.instance_word(record, ID_MASK_WORD)?;
                let word = self.op(Op::Load, Some(u32t), None, vec![Operand::IdRef(p)])?;
                if d.opcode == Opcode::AccelInstanceUserId {
                    let bits = self.u32_const(USER_ID_BITS);
                    self.op(Op::BitwiseAnd, Some(u32t), rid, vec![Operand::IdRef(word), Operand::IdRef(bits)])?;
                } else {
                    let sh = self.u32_const(24);
                    self.op(Op::ShiftRightLogical, Some(u32t), rid, vec![Operand::IdRef(word), Operand::IdRef(sh)])?;
                }
            }
            Opcode::AccelSetInstanceUserId | Opcode::AccelSetInstanceVisibility => {
                let x = self.index32(d.operands[2])?;
                let p = self.instance_word(record, ID_MASK_WORD)?;
                if d.opcode == Opcode::AccelSetInstanceUserId {
                    let bits = self.u32_const(USER_ID_BITS);
                    let v = self.op(Op::BitwiseAnd, Some(u32t), None, vec![Operand::IdRef(x), Operand::IdRef(bits)])?;
                    self.replace_bits(p, !USER_ID_BITS, v)?;
                } else {
                    let sh = self.u32_const(24);
                    let v =
                        self.op(Op::ShiftLeftLogical, Some(u32t), None, vec![Operand::IdRef(x), Operand::IdRef(sh)])?;
                    self.replace_bits(p, USER_ID_BITS, v)?;
                }
            }
            Opcode::AccelSetInstanceTransform => {
                let mv = d.operands[2];
                self.check_transform_ty(self.vty(mv))?;
                let mw = self.val(mv)?;
                for r in 0..3u32 {
                    for c in 0..4u32 {
                        let lanes = [Operand::IdRef(mw), Operand::LiteralBit32(c), Operand::LiteralBit32(r)];
                        let x = self.op(Op::CompositeExtract, Some(f32t), None, lanes.to_vec())?;
                        let p = self.instance_word(record, 4 * r + c)?;
                        self.op(Op::Store, None, None, vec![Operand::IdRef(p), Operand::IdRef(x)])?;
                    }
                }
            }
            op => return err(format!("`{op}` is not an instance-property instruction")),
        }
        Ok(())
    }

    fn accel(&mut self, v: Value) -> EResult<Word> {
        let var = match v {
            Value::Arg(a) if self.fs.func == Some(self.plans.kernel) => self.ray.accels.get(&a).copied(),
            _ => None,
        };
        let Some(var) = var else {
            return err("an accel operand must be a kernel accel argument with the traversal role");
        };
        let t = self.b.type_acceleration_structure_khr();
        self.op(Op::Load, Some(t), None, vec![Operand::IdRef(var)])
    }

    fn f32_ty(&mut self) -> Word {
        self.scalar_ty(ScalarKind::Float { bits: 32 })
    }

    /// (origin, t_min, direction, t_max) of a ray struct value.
    fn ray_parts(&mut self, ray: Value) -> EResult<[Word; 4]> {
        let rt = self.vty(ray);
        let Type::Struct { fields, .. } = self.m.types.get(rt).clone() else { return err("the ray must be a struct") };
        if fields.len() != 4 {
            return err("the ray must have four members (origin, t_min, direction, t_max)");
        }
        let r = self.val(ray)?;
        let f32t = self.f32_ty();
        let v3 = self.b.type_vector(f32t, 3);
        let mut out = [0; 4];
        for (k, &ft) in fields.iter().enumerate() {
            let is_vec3 = matches!(self.m.types.get(ft), Type::Vector { lanes: 3, .. });
            let member_ty = self.ty(ft)?;
            let x = self.op(
                Op::CompositeExtract,
                Some(member_ty),
                None,
                vec![Operand::IdRef(r), Operand::LiteralBit32(k as u32)],
            )?;
            out[k] = if k % 2 == 1 || is_vec3 {
                x
            } else {
                // array<f32, 3> -> vec<f32, 3>
                let mut lanes = Vec::new();
                for l in 0..3 {
                    lanes.push(self.op(
                        Op::CompositeExtract,
                        Some(f32t),
                        None,
                        vec![Operand::IdRef(x), Operand::LiteralBit32(l)],
                    )?);
                }
                self.op(Op::CompositeConstruct, Some(v3), None, lanes.into_iter().map(Operand::IdRef).collect())?
            };
        }
        Ok(out)
    }

    /// `OpRayQueryInitializeKHR` of `query` over `accel` with `flags`.
    fn init_query(&mut self, query: Word, accel: Value, ray: Value, mask: Value, flags: u32) -> EResult<()> {
        let a = self.accel(accel)?;
        let [o, tmin, dir, tmax] = self.ray_parts(ray)?;
        let mask = self.index32(mask)?;
        let flags = self.u32_const(flags);
        let ops = [query, a, flags, mask, o, tmin, dir, tmax].map(Operand::IdRef).to_vec();
        self.op(Op::RayQueryInitializeKHR, None, None, ops)?;
        Ok(())
    }

    /// The `ray_query.pipeline` instruction a query value comes from.
    fn pipeline_of(&self, q: Value) -> EResult<Inst> {
        let f = self.m.func(self.fs.func.expect("in function"));
        match q {
            Value::Inst(p) if f.opcode(p) == Opcode::RayQueryPipeline => Ok(p),
            _ => err("a ray-query value must be the result of `ray_query.pipeline` itself (no Phi, select or memory)"),
        }
    }

    fn intersection_type(&mut self, q: Word, which: u32) -> EResult<Word> {
        let u32t = self.u32_ty();
        let w = self.u32_const(which);
        self.op(Op::RayQueryGetIntersectionTypeKHR, Some(u32t), None, vec![Operand::IdRef(q), Operand::IdRef(w)])
    }

    fn intersection(&mut self, op: Op, ty: Word, q: Word, which: u32) -> EResult<Word> {
        let w = self.u32_const(which);
        self.op(op, Some(ty), None, vec![Operand::IdRef(q), Operand::IdRef(w)])
    }

    /// `OpPhi` of (value, predecessor label) pairs.
    fn phi(&mut self, ty: Word, incoming: &[(Word, Word)]) -> EResult<Word> {
        let ops = incoming.iter().flat_map(|&(v, l)| [Operand::IdRef(v), Operand::IdRef(l)]).collect();
        self.op(Op::Phi, Some(ty), None, ops)
    }

    /// The committed hit record (field 3) through its two guarded selections (see the module doc).
    fn emit_committed_read(&mut self, i: Inst, rid: Option<Word>) -> EResult<()> {
        let m = self.m;
        let fid = self.fs.func.expect("in function");
        let f = m.func(fid);
        let d = f.inst(i);
        let [h, body, c, mg] = self.inline_blocks(i, "a committed ray-query read")?;
        let be = |e: rspirv::dr::Error| super::EmitError { func: None, inst: None, message: format!("rspirv: {e:?}") };
        let q = self.val(d.operands[0])?;
        let bool_t = self.b.type_bool();
        let u32t = self.u32_ty();
        let f32t = self.f32_ty();
        let v2 = self.b.type_vector(f32t, 2);
        let u = Shape { scalar: ScalarKind::Int { bits: 32, signed: false }, lanes: 1 };
        let fl = Shape { scalar: ScalarKind::Float { bits: 32 }, lanes: 1 };
        let fl2 = Shape { lanes: 2, ..fl };
        let p = self.pipeline_of(d.operands[0])?;
        let ray = self.val(f.inst(p).operands[1])?;
        let tmax =
            self.op(Op::CompositeExtract, Some(f32t), None, vec![Operand::IdRef(ray), Operand::LiteralBit32(3)])?;
        let kind = self.intersection_type(q, COMMITTED)?;
        let (zero, one) = (self.u32_const(0), self.u32_const(1));
        let hit = self.op(Op::INotEqual, Some(bool_t), None, vec![Operand::IdRef(kind), Operand::IdRef(zero)])?;
        let tri = self.op(Op::IEqual, Some(bool_t), None, vec![Operand::IdRef(kind), Operand::IdRef(one)])?;
        let all = self.u32_const(u32::MAX);
        let zero2 = self.splat(fl2, 0);
        let before = self.current_block_label()?;
        self.b.selection_merge(h, rspirv::spirv::SelectionControl::NONE).map_err(be)?;
        self.b.branch_conditional(hit, body, h, []).map_err(be)?;
        self.b.begin_block(Some(body)).map_err(be)?;
        let inst = self.intersection(Op::RayQueryGetIntersectionInstanceIdKHR, u32t, q, COMMITTED)?;
        let prim = self.intersection(Op::RayQueryGetIntersectionPrimitiveIndexKHR, u32t, q, COMMITTED)?;
        let t = self.intersection(Op::RayQueryGetIntersectionTKHR, f32t, q, COMMITTED)?;
        self.b.branch(h).map_err(be)?;
        self.b.begin_block(Some(h)).map_err(be)?;
        let inst = self.phi(u32t, &[(inst, body), (all, before)])?;
        let prim = self.phi(u32t, &[(prim, body), (all, before)])?;
        let t = self.phi(f32t, &[(t, body), (tmax, before)])?;
        self.b.selection_merge(mg, rspirv::spirv::SelectionControl::NONE).map_err(be)?;
        self.b.branch_conditional(tri, c, mg, []).map_err(be)?;
        self.b.begin_block(Some(c)).map_err(be)?;
        let bary = self.intersection(Op::RayQueryGetIntersectionBarycentricsKHR, v2, q, COMMITTED)?;
        self.b.branch(mg).map_err(be)?;
        self.b.begin_block(Some(mg)).map_err(be)?;
        let bary = self.phi(v2, &[(bary, c), (zero2, h)])?;
        self.record(d.ty, rid, &[(inst, u), (prim, u), (bary, fl2), (kind, u), (t, fl)])
    }

    /// The label of the block being emitted.
    pub(super) fn current_block_label(&self) -> EResult<Word> {
        let (Some(fi), Some(bi)) = (self.b.selected_function(), self.b.selected_block()) else {
            return err("no block is being emitted");
        };
        let label = self.b.module_ref().functions[fi].blocks[bi].label.as_ref().and_then(|l| l.result_id);
        label.ok_or_else(|| super::EmitError { func: None, inst: None, message: "a block without a label".into() })
    }

    /// Emit a ray instruction (see the module doc).
    pub(crate) fn emit_ray(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let bool_t = self.b.type_bool();
        match d.opcode {
            Opcode::RayQueryPipeline => {
                self.enable_ray_query();
                let qt = self.b.type_ray_query_khr();
                let var = self.local_var(qt, rid);
                let any = matches!(m.types.get(d.ty), Type::RayQuery { any_hit: true });
                let flags = if any { FLAG_TERMINATE_ON_FIRST_HIT } else { 0 };
                self.init_query(var, d.operands[0], d.operands[1], d.operands[2], flags)?;
            }
            Opcode::RayTraceAny => {
                self.enable_ray_query();
                let qt = self.b.type_ray_query_khr();
                let var = self.local_var(qt, None);
                self.init_query(
                    var,
                    d.operands[0],
                    d.operands[1],
                    d.operands[2],
                    FLAG_OPAQUE | FLAG_TERMINATE_ON_FIRST_HIT | FLAG_SKIP_AABBS,
                )?;
                self.cap(Capability::RayTraversalPrimitiveCullingKHR);
                self.op(Op::RayQueryProceedKHR, Some(bool_t), None, vec![Operand::IdRef(var)])?;
                let ty = self.intersection_type(var, COMMITTED)?;
                let none = self.u32_const(0);
                self.op(Op::INotEqual, Some(bool_t), rid, vec![Operand::IdRef(ty), Operand::IdRef(none)])?;
            }
            Opcode::RayQueryProceed => {
                let q = self.val(d.operands[0])?;
                self.op(Op::RayQueryProceedKHR, Some(bool_t), rid, vec![Operand::IdRef(q)])?;
            }
            Opcode::RayQueryObjectRead => self.emit_object_read(i, rid)?,
            Opcode::AccelInstanceTransform
            | Opcode::AccelInstanceUserId
            | Opcode::AccelInstanceVisibility
            | Opcode::AccelSetInstanceTransform
            | Opcode::AccelSetInstanceVisibility
            | Opcode::AccelSetInstanceUserId => self.emit_instance_op(i)?,
            Opcode::RayQueryObjectWrite => {
                let q = self.val(d.operands[0])?;
                match m.const_bits(d.operands[1]) {
                    Some(0) => self.op(Op::RayQueryConfirmIntersectionKHR, None, None, vec![Operand::IdRef(q)])?,
                    Some(1) => {
                        let Some(&t) = d.operands.get(2) else { return err("commit procedural needs a distance") };
                        if m.types.get(self.vty(t)) != &Type::Float(xir::FloatFormat::F32) {
                            return err("the procedural hit distance must be an f32");
                        }
                        let t = self.val(t)?;
                        self.op(
                            Op::RayQueryGenerateIntersectionKHR,
                            None,
                            None,
                            vec![Operand::IdRef(q), Operand::IdRef(t)],
                        )?
                    }
                    Some(2) => self.op(Op::RayQueryTerminateKHR, None, None, vec![Operand::IdRef(q)])?,
                    other => return err(format!("unknown ray-query action {other:?}")),
                };
            }
            op => return err(format!("`{op}` is not a ray instruction of this emitter")),
        }
        Ok(())
    }

    /// Build a hit record of type `ty` from `fields`, checking its shape.
    fn record(&mut self, ty: TypeId, rid: Option<Word>, fields: &[(Word, Shape)]) -> EResult<()> {
        let shape_ok = match self.m.types.get(ty) {
            Type::Struct { fields: tys, .. } if tys.len() == fields.len() => {
                let tys = tys.clone();
                tys.iter().zip(fields).all(|(&t, (_, s))| self.shape(t).ok() == Some(*s))
            }
            _ => false,
        };
        if !shape_ok {
            let name = xir::verify::type_name(&self.m.types, ty);
            return err(format!("`{name}` is not the hit record this ray-query field reads"));
        }
        let t = self.ty(ty)?;
        let ws: Vec<Operand> = fields.iter().map(|(w, _)| Operand::IdRef(*w)).collect();
        self.op(Op::CompositeConstruct, Some(t), rid, ws)?;
        Ok(())
    }

    fn emit_object_read(&mut self, i: Inst, rid: Option<Word>) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let q = self.val(d.operands[0])?;
        let bool_t = self.b.type_bool();
        let u32t = self.u32_ty();
        let f32t = self.f32_ty();
        let v2 = self.b.type_vector(f32t, 2);
        let u = Shape { scalar: ScalarKind::Int { bits: 32, signed: false }, lanes: 1 };
        let fl = Shape { scalar: ScalarKind::Float { bits: 32 }, lanes: 1 };
        let fl2 = Shape { lanes: 2, ..fl };
        let field = m.const_bits(d.operands[1]);
        let which = if field == Some(3) { COMMITTED } else { CANDIDATE };
        match field {
            Some(0) => {
                let p = self.pipeline_of(d.operands[0])?;
                let ray = self.val(f.inst(p).operands[1])?;
                let t = self.ty(d.ty)?;
                self.op(Op::CopyObject, Some(t), rid, vec![Operand::IdRef(ray)])?;
            }
            Some(4 | 5) => {
                let ty = self.intersection_type(q, CANDIDATE)?;
                let want = self.u32_const(if field == Some(4) { 0 } else { 1 });
                self.op(Op::IEqual, Some(bool_t), rid, vec![Operand::IdRef(ty), Operand::IdRef(want)])?;
            }
            Some(1..=3) => {
                if field == Some(3) {
                    return self.emit_committed_read(i, rid);
                }
                let inst = self.intersection(Op::RayQueryGetIntersectionInstanceIdKHR, u32t, q, which)?;
                let prim = self.intersection(Op::RayQueryGetIntersectionPrimitiveIndexKHR, u32t, q, which)?;
                if field == Some(1) {
                    return self.record(d.ty, rid, &[(inst, u), (prim, u)]);
                }
                let bary = self.intersection(Op::RayQueryGetIntersectionBarycentricsKHR, v2, q, which)?;
                let t = self.intersection(Op::RayQueryGetIntersectionTKHR, f32t, q, which)?;
                self.record(d.ty, rid, &[(inst, u), (prim, u), (bary, fl2), (t, fl)])?;
            }
            other => return err(format!("unknown ray-query field {other:?}")),
        }
        Ok(())
    }
}
