//! Ray queries (`SPV_KHR_ray_query`, capability `RayQueryKHR`): the
//! acceleration-structure descriptors and the ray-query instructions.
//!
//! - An `accel` kernel argument whose role mask (see [`accel_roles`]) has
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
//!   TerminateOnFirstHitKHR` and a single proceed: with forced opacity every
//!   triangle hit is committed during that proceed, and traversal ends at
//!   the first; the result is "the committed type is not none". (A
//!   procedural primitive met first would end that proceed with a candidate
//!   instead; the interpreter ignores procedural geometry in `trace_any`.)
//! - `ray_query.object_read` fields (the spec's numbering): 1 and 2 read the
//!   candidate intersection, 3 the committed one with the interpreter's miss
//!   values selected when its type is none (`inst = prim = 0xffffffff`,
//!   `bary = 0`, `t = t_max`; barycentrics only for a triangle), 4 and 5
//!   compare the candidate type; 0 gives back the ray the query was created
//!   with. `ray_query.object_write` actions are confirm, generate (at `t`)
//!   and terminate.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, Op, StorageClass, Word};
use rustc_hash::FxHashMap;
use xir::{FuncId, Inst, Module, Opcode, Type, TypeId, Value};

use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::abi::{ACCEL_ROLE_INSTANCE_READ, ACCEL_ROLE_INSTANCE_WRITE, ACCEL_ROLE_TRAVERSAL};
use crate::plan::bindings::ArgBinding;

/// `RayFlagsMask` bits used here.
const FLAG_OPAQUE: u32 = 0x1;
const FLAG_TERMINATE_ON_FIRST_HIT: u32 = 0x4;
/// `RayQueryIntersection`: candidate / committed.
const CANDIDATE: u32 = 0;
const COMMITTED: u32 = 1;

/// The role mask of kernel argument `arg` (an `accel`) from the kernel's
/// own instructions: traversal, instance reads, instance writes.
pub fn accel_roles(m: &Module, kernel: FuncId, arg: u32) -> u32 {
    let f = m.func(kernel);
    let mut roles = 0;
    for (_, i) in f.all_insts() {
        let d = f.inst(i);
        if d.operands.first() != Some(&Value::Arg(arg)) {
            continue;
        }
        roles |= match d.opcode {
            Opcode::RayQueryPipeline | Opcode::RayTraceAny | Opcode::RayTraceClosest => ACCEL_ROLE_TRAVERSAL,
            Opcode::AccelInstanceTransform | Opcode::AccelInstanceUserId | Opcode::AccelInstanceVisibility => {
                ACCEL_ROLE_INSTANCE_READ
            }
            Opcode::AccelSetInstanceTransform | Opcode::AccelSetInstanceVisibility | Opcode::AccelSetInstanceUserId => {
                ACCEL_ROLE_INSTANCE_WRITE
            }
            _ => 0,
        };
    }
    roles
}

/// Whether the emitter lowers `op` here.
pub(crate) fn is_ray_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RayQueryPipeline
            | Opcode::RayQueryProceed
            | Opcode::RayQueryObjectRead
            | Opcode::RayQueryObjectWrite
            | Opcode::RayTraceAny
    )
}

/// Module-level ray-query state.
#[derive(Default)]
pub(crate) struct RayState {
    /// Accel variables by kernel argument.
    pub accels: FxHashMap<u32, Word>,
}

impl Emitter<'_> {
    fn enable_ray_query(&mut self) {
        self.cap(Capability::RayQueryKHR);
        self.exts.insert("SPV_KHR_ray_query");
    }

    /// Declare the accel descriptors of the arguments with the traversal role.
    pub(crate) fn declare_accels(&mut self) -> EResult<()> {
        let plans = self.plans;
        for (i, a) in plans.bindings.args.iter().enumerate() {
            let ArgBinding::Accel { binding: Some(binding), .. } = a else { continue };
            self.enable_ray_query();
            let t = self.b.type_acceleration_structure_khr();
            let pty = self.ptr_ty(StorageClass::UniformConstant, t);
            let var = self.global_var(pty, StorageClass::UniformConstant);
            self.decorate(var, Decoration::DescriptorSet, &[crate::abi::LOCAL_SET]);
            self.decorate(var, Decoration::Binding, &[*binding]);
            self.ray.accels.insert(i as u32, var);
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
            Value::Inst(p) if f.inst(p).opcode == Opcode::RayQueryPipeline => Ok(p),
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

    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> EResult<Word> {
        self.op(Op::Select, Some(ty), None, [c, a, b].map(Operand::IdRef).to_vec())
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
                    FLAG_OPAQUE | FLAG_TERMINATE_ON_FIRST_HIT,
                )?;
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
                let inst = self.intersection(Op::RayQueryGetIntersectionInstanceIdKHR, u32t, q, which)?;
                let prim = self.intersection(Op::RayQueryGetIntersectionPrimitiveIndexKHR, u32t, q, which)?;
                if field == Some(1) {
                    return self.record(d.ty, rid, &[(inst, u), (prim, u)]);
                }
                let bary = self.intersection(Op::RayQueryGetIntersectionBarycentricsKHR, v2, q, which)?;
                let t = self.intersection(Op::RayQueryGetIntersectionTKHR, f32t, q, which)?;
                if field == Some(2) {
                    return self.record(d.ty, rid, &[(inst, u), (prim, u), (bary, fl2), (t, fl)]);
                }
                // Committed: the miss values where nothing is committed.
                let kind = self.intersection_type(q, COMMITTED)?;
                let zero = self.u32_const(0);
                let one = self.u32_const(1);
                let miss = self.op(Op::IEqual, Some(bool_t), None, vec![Operand::IdRef(kind), Operand::IdRef(zero)])?;
                let tri = self.op(Op::IEqual, Some(bool_t), None, vec![Operand::IdRef(kind), Operand::IdRef(one)])?;
                let all = self.u32_const(u32::MAX);
                let inst = self.select(u32t, miss, all, inst)?;
                let prim = self.select(u32t, miss, all, prim)?;
                let zero2 = self.splat(fl2, 0);
                let bool2 = self.b.type_vector(bool_t, 2);
                let tri2 = self.op(Op::CompositeConstruct, Some(bool2), None, vec![Operand::IdRef(tri); 2])?;
                let bary = self.select(v2, tri2, bary, zero2)?;
                let p = self.pipeline_of(d.operands[0])?;
                let ray = self.val(f.inst(p).operands[1])?;
                let tmax = self.op(
                    Op::CompositeExtract,
                    Some(f32t),
                    None,
                    vec![Operand::IdRef(ray), Operand::LiteralBit32(3)],
                )?;
                let t = self.select(f32t, miss, tmax, t)?;
                self.record(d.ty, rid, &[(inst, u), (prim, u), (bary, fl2), (kind, u), (t, fl)])?;
            }
            other => return err(format!("unknown ray-query field {other:?}")),
        }
        Ok(())
    }
}
