//! Ray tracing in the interpreter: acceleration structures given in the
//! inputs as instances of triangle (or AABB) lists, an exact brute-force
//! software traversal, and the ray-query object. It exists so that the
//! ray-query lowering can be differential-tested like every other pass.
//!
//! An `accel` input is `{"instances": [{"transform": [12 f32, row-major
//! 3x4], "mask": u8, "user_id": u32, "opaque": bool, "triangles":
//! [[[x, y, z], [x, y, z], [x, y, z]], ...]} | {..., "aabbs": [[min x, min y,
//! min z, max x, max y, max z], ...]}]}` (`transform` defaults to identity,
//! `mask` (8 bits) to 255, `user_id` (24 bits, Vulkan's instance custom
//! index) to 0, `opaque` to true). Procedural (AABB) instances must have the
//! identity transform. `accel.set_instance_visibility` / `_user_id` keep the
//! low 8 / 24 bits, as the Vulkan instance record does. Instance writes are
//! seen at once by later traversal here; a device traverses the structure
//! as built before the dispatch (the writes land in its instance buffer).
//!
//! Semantics, all in f32 without fused operations:
//! - triangles are transformed to world space (`M * [v, 1]`, summed left to
//!   right) and intersected with Möller–Trumbore; a zero determinant misses;
//!   edges and vertices hit (`u >= 0, v >= 0, u + v <= 1`); no culling;
//! - an instance takes part when `instance.mask & ray_mask & 0xff != 0`;
//! - traversal visits instances, then primitives, in input order. A hit
//!   counts when `t_min <= t <= t_max` and, once something is committed,
//!   `t` is strictly below the committed `t`. An opaque triangle hit is
//!   committed by the traversal itself; a non-opaque triangle and every AABB
//!   the ray's slab interval meets are reported as candidates;
//! - a `ray_query_any` object (and `ray.trace_any`) stops at the first
//!   commit (TerminateOnFirstHit); `ray.trace_closest` / `ray.trace_any`
//!   treat every triangle as opaque and skip procedural primitives
//!   (ForceOpaque);
//! - a miss reads as `inst = prim = 0xffffffff`, `bary = (0, 0)`,
//!   `t = t_max` (committed kind 0).
//!
//! Ray structs have four members: origin (`vec<f32, 3>` or `array<f32, 3>`),
//! `t_min: f32`, direction, `t_max: f32`. Hit records are the shapes the spec
//! gives for `ray_query.object_read`.

use serde_json::Value as Json;
use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module, Type, TypeId, TypeTable};

use super::arith::R;
use super::memory::Buf;
use super::value::Val;

/// One instance of an acceleration structure (public so that device
/// runners build the same scene from the same input).
#[derive(Clone, Debug, PartialEq)]
pub struct AccelInstance {
    /// Row-major 3x4 object-to-world transform.
    pub transform: [f32; 12],
    /// 8-bit visibility mask.
    pub mask: u32,
    /// 24-bit user id (Vulkan's instance custom index).
    pub user_id: u32,
    pub opaque: bool,
    pub triangles: Vec<[[f32; 3]; 3]>,
    pub aabbs: Vec<[f32; 6]>,
}

/// An `accel` input: its instances in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Accel {
    pub instances: Vec<AccelInstance>,
}

/// Largest instance mask (8 bits); instance writes keep only these bits.
pub const MAX_INSTANCE_MASK: u32 = 0xff;
/// Largest instance user id (24 bits: Vulkan's instance custom index); instance writes keep only these bits.
pub const MAX_INSTANCE_USER_ID: u32 = 0xff_ffff;

const IDENTITY: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

fn floats<const N: usize>(j: &Json, what: &str) -> Result<[f32; N], String> {
    let a = j.as_array().filter(|a| a.len() == N).ok_or_else(|| format!("{what} must be an array of {N} numbers"))?;
    let mut out = [0f32; N];
    for (o, x) in out.iter_mut().zip(a) {
        *o = x.as_f64().ok_or_else(|| format!("{what} must hold numbers"))? as f32;
    }
    Ok(out)
}

fn u32_field(o: &serde_json::Map<String, Json>, key: &str, default: u32) -> Result<u32, String> {
    match o.get(key) {
        None => Ok(default),
        Some(v) => v.as_u64().and_then(|x| u32::try_from(x).ok()).ok_or_else(|| format!("`{key}` must be a u32")),
    }
}

/// Why an `accel` input does not parse: the instance it is about (none:
/// the outer object) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", .instance.map(|k| format!("instance {k}: ")).unwrap_or_default())]
pub struct AccelError {
    pub instance: Option<usize>,
    pub message: String,
}

/// Parse an `accel` input (format in the module doc).
pub fn accel_from_json(j: &Json) -> Result<Accel, AccelError> {
    let list = j
        .get("instances")
        .and_then(Json::as_array)
        .ok_or_else(|| AccelError { instance: None, message: "an accel is `{\"instances\": [...]}`".into() })?;
    let mut instances = Vec::with_capacity(list.len());
    for (k, i) in list.iter().enumerate() {
        let at = |message: String| AccelError { instance: Some(k), message };
        let o = i.as_object().ok_or_else(|| at("must be an object".into()))?;
        if let Some(bad) =
            o.keys().find(|k| !["transform", "mask", "user_id", "opaque", "triangles", "aabbs"].contains(&k.as_str()))
        {
            return Err(at(format!("unknown key `{bad}`")));
        }
        let transform = match o.get("transform") {
            None => IDENTITY,
            Some(t) => floats::<12>(t, "`transform`").map_err(at)?,
        };
        let opaque = match o.get("opaque") {
            None => true,
            Some(b) => b.as_bool().ok_or_else(|| at("`opaque` must be a bool".into()))?,
        };
        let mut triangles = Vec::new();
        for t in o.get("triangles").and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[]) {
            let vs = t.as_array().filter(|a| a.len() == 3).ok_or_else(|| at("a triangle is three vertices".into()))?;
            let v = |n: usize| floats::<3>(&vs[n], "a vertex").map_err(at);
            triangles.push([v(0)?, v(1)?, v(2)?]);
        }
        let mut aabbs = Vec::new();
        for b in o.get("aabbs").and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[]) {
            aabbs.push(floats::<6>(b, "an aabb").map_err(at)?);
        }
        if !aabbs.is_empty() && transform != IDENTITY {
            return Err(at("procedural (aabb) instances must have the identity transform".into()));
        }
        let mask = u32_field(o, "mask", 255).map_err(at)?;
        if mask > MAX_INSTANCE_MASK {
            return Err(at(format!("`mask` {mask} does not fit 8 bits")));
        }
        let user_id = u32_field(o, "user_id", 0).map_err(at)?;
        if user_id > MAX_INSTANCE_USER_ID {
            return Err(at(format!("`user_id` {user_id} does not fit 24 bits")));
        }
        instances.push(AccelInstance { transform, mask, user_id, opaque, triangles, aabbs });
    }
    Ok(Accel { instances })
}

/// The accel as it is after the run (instance writes included).
pub fn accel_to_json(a: &Accel) -> Json {
    let inst = |i: &AccelInstance| {
        let mut o = serde_json::json!({
            "transform": i.transform, "mask": i.mask, "user_id": i.user_id, "opaque": i.opaque,
        });
        if !i.triangles.is_empty() {
            o["triangles"] = serde_json::json!(i.triangles);
        }
        if !i.aabbs.is_empty() {
            o["aabbs"] = serde_json::json!(i.aabbs);
        }
        o
    };
    serde_json::json!({ "instances": a.instances.iter().map(inst).collect::<Vec<_>>() })
}

type V3 = [f32; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn xform(m: &[f32; 12], v: V3) -> V3 {
    let row = |r: usize| m[4 * r] * v[0] + m[4 * r + 1] * v[1] + m[4 * r + 2] * v[2] + m[4 * r + 3];
    [row(0), row(1), row(2)]
}

/// A decoded ray.
#[derive(Clone, Debug)]
struct Ray {
    o: V3,
    t_min: f32,
    d: V3,
    t_max: f32,
    /// The ray as given (for reads of field 0).
    val: Val,
}

fn ray_of(v: &Val) -> R<Ray> {
    let bad = || "the ray must be a struct {origin: 3 x f32, t_min: f32, direction: 3 x f32, t_max: f32}".to_string();
    let m = v.members().map_err(|_| bad())?;
    if m.len() != 4 {
        return Err(bad());
    }
    let f = |x: &Val| -> R<f32> { Ok(f32::from_bits(x.bits()? as u32)) };
    let v3 = |x: &Val| -> R<V3> {
        let l = x.members().map_err(|_| bad())?;
        if l.len() != 3 {
            return Err(bad());
        }
        Ok([f(&l[0])?, f(&l[1])?, f(&l[2])?])
    };
    Ok(Ray { o: v3(&m[0])?, t_min: f(&m[1])?, d: v3(&m[2])?, t_max: f(&m[3])?, val: v.clone() })
}

/// Möller–Trumbore: `(t, u, v)` of a hit.
fn hit_triangle(r: &Ray, tri: [V3; 3]) -> Option<(f32, f32, f32)> {
    let e1 = sub(tri[1], tri[0]);
    let e2 = sub(tri[2], tri[0]);
    let p = cross(r.d, e2);
    let det = dot(e1, p);
    if det == 0.0 || det.is_nan() {
        return None;
    }
    let inv = 1.0 / det;
    let s = sub(r.o, tri[0]);
    let u = dot(s, p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = cross(s, e1);
    let v = dot(r.d, q) * inv;
    if !(v >= 0.0 && u + v <= 1.0) {
        return None;
    }
    Some((dot(e2, q) * inv, u, v))
}

/// Slab test: whether the ray's interval `[t_min, limit]` meets the box.
fn hit_aabb(r: &Ray, b: &[f32; 6], limit: f32) -> bool {
    let (mut near, mut far) = (r.t_min, limit);
    for a in 0..3 {
        let inv = 1.0 / r.d[a];
        let t0 = (b[a] - r.o[a]) * inv;
        let t1 = (b[a + 3] - r.o[a]) * inv;
        near = near.max(t0.min(t1));
        far = far.min(t0.max(t1));
    }
    near <= far
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Kind {
    Triangle,
    Procedural,
}

#[derive(Copy, Clone, Debug)]
struct Hit {
    kind: Kind,
    inst: u32,
    prim: u32,
    bary: [f32; 2],
    t: f32,
}

/// A ray-query object's traversal state.
#[derive(Clone, Debug)]
pub(crate) struct Query {
    accel: u32,
    ray: Ray,
    mask: u32,
    terminate_on_first_hit: bool,
    force_opaque: bool,
    /// Next (instance, primitive) to visit; primitives are triangles then AABBs.
    cursor: (usize, usize),
    candidate: Option<Hit>,
    committed: Option<Hit>,
    done: bool,
}

impl Query {
    fn new(accel: u32, ray: Ray, mask: u32, any_hit: bool, force_opaque: bool) -> Self {
        Query {
            accel,
            ray,
            mask,
            terminate_on_first_hit: any_hit,
            force_opaque,
            cursor: (0, 0),
            candidate: None,
            committed: None,
            done: false,
        }
    }

    /// Whether a hit at `t` counts now.
    fn accepts(&self, t: f32) -> bool {
        t >= self.ray.t_min && t <= self.ray.t_max && self.committed.is_none_or(|c| t < c.t)
    }

    fn commit(&mut self, h: Hit) {
        self.committed = Some(h);
        self.candidate = None;
        if self.terminate_on_first_hit {
            self.done = true;
        }
    }

    /// Advance to the next candidate; false once traversal is complete.
    fn proceed(&mut self, a: &Accel) -> bool {
        self.candidate = None;
        while !self.done {
            let (i, k) = self.cursor;
            let Some(inst) = a.instances.get(i) else {
                self.done = true;
                break;
            };
            let n = inst.triangles.len() + if self.force_opaque { 0 } else { inst.aabbs.len() };
            if k >= n || inst.mask & self.mask & 0xff == 0 {
                self.cursor = (i + 1, 0);
                continue;
            }
            self.cursor = (i, k + 1);
            if let Some(tri) = inst.triangles.get(k) {
                let w = tri.map(|v| xform(&inst.transform, v));
                let Some((t, u, v)) = hit_triangle(&self.ray, w) else { continue };
                if !self.accepts(t) {
                    continue;
                }
                let h = Hit { kind: Kind::Triangle, inst: i as u32, prim: k as u32, bary: [u, v], t };
                if inst.opaque || self.force_opaque {
                    self.commit(h);
                    continue;
                }
                self.candidate = Some(h);
                return true;
            }
            let p = k - inst.triangles.len();
            let limit = self.committed.map_or(self.ray.t_max, |c| c.t);
            if hit_aabb(&self.ray, &inst.aabbs[p], limit) {
                let h = Hit { kind: Kind::Procedural, inst: i as u32, prim: p as u32, bary: [0.0; 2], t: 0.0 };
                self.candidate = Some(h);
                return true;
            }
        }
        false
    }
}

/// Ray-tracing state of one run: every ray-query object created so far
/// (a query value is its index here).
#[derive(Default)]
pub(crate) struct Rays {
    queries: Vec<Query>,
}

/// The instructions this file runs: exactly the spec's `ray` trait
/// (traces, accel instance access, ray-query objects).
pub(crate) fn is_ray_op(op: Opcode) -> bool {
    xir_spec::spec().op(op).has(xir_spec::Trait::Ray)
}

fn accel<'b>(bufs: &'b mut [Buf], v: &Val) -> R<(u32, &'b mut Accel)> {
    let Val::R(b) = v else { return Err("the accel operand is not a resource".into()) };
    match bufs.get_mut(*b as usize) {
        Some(Buf::Accel(a)) => Ok((*b, a)),
        _ => Err("the accel operand is not an acceleration structure".into()),
    }
}

fn scalar(v: &Val) -> R<u64> {
    Ok(v.bits()?)
}

/// A member of a hit record.
enum F {
    U(u32),
    Real(f32),
    V2([f32; 2]),
}

/// Build a value of type `ty` from `fields`, checking the shape.
fn record(types: &TypeTable, ty: TypeId, fields: &[F], what: &str) -> R<Val> {
    let bad = || format!("the result type `{}` is not the {what} record", types.kind_name(ty));
    let Type::Struct { fields: tys, .. } = types.get(ty) else { return Err(bad()) };
    if tys.len() != fields.len() {
        return Err(bad());
    }
    let f32_ty = |t: TypeId| matches!(types.get(t), Type::Float(crate::ir::FloatFormat::F32));
    let mut out = Vec::with_capacity(fields.len());
    for (&t, f) in tys.iter().zip(fields) {
        let v = match (f, types.get(t)) {
            (F::U(x), Type::Int { bits: 32, signed: false }) => Val::S(*x as u64),
            (F::Real(x), _) if f32_ty(t) => Val::S(x.to_bits() as u64),
            (F::V2(x), Type::Vector { elem, lanes: 2 }) if f32_ty(*elem) => {
                Val::agg(x.iter().map(|c| Val::S(c.to_bits() as u64)).collect())
            }
            _ => return Err(bad()),
        };
        out.push(v);
    }
    Ok(Val::agg(out))
}

fn triangle_record(types: &TypeTable, ty: TypeId, h: Option<Hit>, ray: &Ray) -> R<Val> {
    let h = h.unwrap_or(Hit { kind: Kind::Triangle, inst: u32::MAX, prim: u32::MAX, bary: [0.0; 2], t: ray.t_max });
    record(
        types,
        ty,
        &[F::U(h.inst), F::U(h.prim), F::V2(h.bary), F::Real(h.t)],
        "triangle hit {u32, u32, vec<f32, 2>, f32}",
    )
}

fn committed_record(types: &TypeTable, ty: TypeId, h: Option<Hit>, ray: &Ray) -> R<Val> {
    let kind = match h.map(|h| h.kind) {
        None => 0,
        Some(Kind::Triangle) => 1,
        Some(Kind::Procedural) => 2,
    };
    let h = h.unwrap_or(Hit { kind: Kind::Triangle, inst: u32::MAX, prim: u32::MAX, bary: [0.0; 2], t: ray.t_max });
    let fields = [F::U(h.inst), F::U(h.prim), F::V2(h.bary), F::U(kind), F::Real(h.t)];
    record(types, ty, &fields, "committed hit {u32, u32, vec<f32, 2>, u32, f32}")
}

/// Execute a ray operation; `Some(result)` for those with a result.
pub(crate) fn ray_op(
    m: &Module,
    f: &Function,
    d: &InstCore,
    ops: &[Val],
    bufs: &mut [Buf],
    rays: &mut Rays,
) -> R<Option<Val>> {
    use Opcode::*;
    let op = d.opcode;
    let arg = |i: usize| ops.get(i).ok_or_else(|| format!("`{op}` needs operand {i}"));
    let types = &m.types;
    let query = |rays: &Rays, v: &Val| -> R<usize> {
        let q = scalar(v)? as usize;
        if q < rays.queries.len() {
            Ok(q)
        } else {
            Err("not a ray-query object".into())
        }
    };
    Ok(Some(match op {
        RayTraceClosest | RayTraceAny => {
            let (b, a) = accel(bufs, arg(0)?)?;
            let ray = ray_of(arg(1)?)?;
            let mut q = Query::new(b, ray, scalar(arg(2)?)? as u32, op == RayTraceAny, true);
            while q.proceed(a) {}
            if op == RayTraceAny {
                Val::bool(q.committed.is_some())
            } else {
                triangle_record(types, d.ty, q.committed, &q.ray)?
            }
        }
        RayQueryPipeline => {
            let (b, _) = accel(bufs, arg(0)?)?;
            let ray = ray_of(arg(1)?)?;
            let any_hit = matches!(types.get(d.ty), Type::RayQuery { any_hit: true });
            rays.queries.push(Query::new(b, ray, scalar(arg(2)?)? as u32, any_hit, false));
            Val::S(rays.queries.len() as u64 - 1)
        }
        RayQueryProceed => {
            let q = query(rays, arg(0)?)?;
            Val::bool(proceed(rays, q, bufs)?)
        }
        RayQueryObjectRead => {
            let qi = query(rays, arg(0)?)?;
            let q = &rays.queries[qi];
            let cand = |k: Kind| q.candidate.filter(|c| c.kind == k);
            match scalar(arg(1)?)? {
                0 => q.ray.val.clone(),
                1 => {
                    let c = cand(Kind::Procedural).ok_or("no procedural candidate to read")?;
                    record(types, d.ty, &[F::U(c.inst), F::U(c.prim)], "procedural hit {u32, u32}")?
                }
                2 => triangle_record(
                    types,
                    d.ty,
                    Some(cand(Kind::Triangle).ok_or("no triangle candidate to read")?),
                    &q.ray,
                )?,
                3 => committed_record(types, d.ty, q.committed, &q.ray)?,
                4 => Val::bool(cand(Kind::Triangle).is_some()),
                5 => Val::bool(cand(Kind::Procedural).is_some()),
                k => return Err(format!("unknown ray-query field {k}")),
            }
        }
        RayQueryObjectWrite => {
            let qi = query(rays, arg(0)?)?;
            let q = &mut rays.queries[qi];
            match scalar(arg(1)?)? {
                0 => {
                    let c =
                        q.candidate.filter(|c| c.kind == Kind::Triangle).ok_or("no triangle candidate to commit")?;
                    q.commit(c);
                }
                1 => {
                    let c = q
                        .candidate
                        .filter(|c| c.kind == Kind::Procedural)
                        .ok_or("no procedural candidate to commit")?;
                    let t = f32::from_bits(scalar(arg(2)?)? as u32);
                    if !q.accepts(t) {
                        return Err(format!("procedural hit distance {t} is outside [t_min, committed t]"));
                    }
                    q.commit(Hit { t, ..c });
                }
                2 => {
                    q.done = true;
                    q.candidate = None;
                }
                k => return Err(format!("unknown ray-query action {k}")),
            }
            return Ok(None);
        }
        AccelInstanceTransform | AccelInstanceUserId | AccelInstanceVisibility => {
            let (_, a) = accel(bufs, arg(0)?)?;
            let i = instance(a, m, f, d, arg(1)?)?;
            match op {
                AccelInstanceUserId => Val::S(i.user_id as u64),
                AccelInstanceVisibility => Val::S(i.mask as u64),
                _ => transform_val(types, d.ty, &i.transform)?,
            }
        }
        _ => {
            let (_, a) = accel(bufs, arg(0)?)?;
            let i = instance(a, m, f, d, arg(1)?)?;
            let x = arg(2)?;
            match op {
                AccelSetInstanceUserId => i.user_id = scalar(x)? as u32 & MAX_INSTANCE_USER_ID,
                AccelSetInstanceVisibility => i.mask = scalar(x)? as u32 & MAX_INSTANCE_MASK,
                _ => i.transform = transform_of(x)?,
            }
            return Ok(None);
        }
    }))
}

fn instance<'a>(a: &'a mut Accel, m: &Module, f: &Function, d: &InstCore, v: &Val) -> R<&'a mut AccelInstance> {
    let k = super::ops::index_value(m, f, d, 1, v)?;
    let n = a.instances.len();
    a.instances.get_mut(k as usize).ok_or_else(|| format!("instance {k} out of bounds (the accel has {n})"))
}

/// An instance transform as a `mat<f32, 4>` (columns; last row 0 0 0 1).
fn transform_val(types: &TypeTable, ty: TypeId, t: &[f32; 12]) -> R<Val> {
    let ok = matches!(types.get(ty), Type::Matrix { elem, dim: 4 } if matches!(types.get(*elem), Type::Float(crate::ir::FloatFormat::F32)));
    if !ok {
        return Err(format!("an instance transform is a `mat<f32, 4>`, not `{}`", types.kind_name(ty)));
    }
    let col = |c: usize| {
        let last = if c == 3 { 1.0f32 } else { 0.0 };
        Val::agg([t[c], t[4 + c], t[8 + c], last].iter().map(|x| Val::S(x.to_bits() as u64)).collect())
    };
    Ok(Val::agg((0..4).map(col).collect()))
}

fn transform_of(v: &Val) -> R<[f32; 12]> {
    let cols = v.members()?;
    let mut t = [0f32; 12];
    if cols.len() != 4 {
        return Err("an instance transform is a `mat<f32, 4>`".into());
    }
    for (c, col) in cols.iter().enumerate() {
        let lanes = col.members()?;
        for r in 0..3 {
            t[4 * r + c] = f32::from_bits(lanes.get(r).ok_or("short matrix column")?.bits()? as u32);
        }
    }
    Ok(t)
}

fn proceed(rays: &mut Rays, q: usize, bufs: &mut [Buf]) -> R<bool> {
    let b = rays.queries[q].accel as usize;
    let Some(Buf::Accel(a)) = bufs.get(b) else { return Err("the query's accel is gone".into()) };
    Ok(rays.queries[q].proceed(a))
}

/// `ray_query.dispatch`: proceed, then the role to take: 0 exit,
/// 1 triangle candidate, 2 procedural candidate.
pub(crate) fn dispatch(rays: &mut Rays, v: &Val, bufs: &mut [Buf]) -> R<usize> {
    let q = scalar(v)? as usize;
    if q >= rays.queries.len() {
        return Err("not a ray-query object".into());
    }
    if !proceed(rays, q, bufs)? {
        return Ok(0);
    }
    Ok(match rays.queries[q].candidate.map(|c| c.kind) {
        Some(Kind::Triangle) => 1,
        _ => 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, inputs: &str) -> Result<super::super::Outputs, String> {
        let m = crate::text::parse_module(src, "t.xir").map_err(|d| crate::diag::render(&d))?;
        let k = m.func_ids().find(|&f| m.func(f).is_kernel()).ok_or("no kernel")?;
        let inputs = super::super::Inputs::from_json(inputs).map_err(|e| e.to_string())?;
        super::super::run_kernel(&m, k, &inputs).map_err(|e| e.to_string())
    }

    const WRITE: &str = "kernel @k(%s: accel) block_size(1, 1, 1) {\n^entry:\n  \
        accel.set_instance_user_id %s, u32 0, u32 0x12345678\n  \
        accel.set_instance_visibility %s, u32 0, u32 0x1ff\n  return\n}\n";

    // Check that instance writes keep the Vulkan record's widths (user id 24
    // bits, mask 8 bits) and that inputs beyond them are refused.
    #[test]
    fn instance_fields_have_the_instance_record_widths() {
        let out = run(WRITE, r#"{"args": {"s": {"instances": [{"user_id": 1, "mask": 3}]}}}"#).unwrap();
        let i = &out.buffers["s"]["instances"][0];
        assert_eq!((i["user_id"].as_u64(), i["mask"].as_u64()), (Some(0x34_5678), Some(0xff)));
        let wide = run(WRITE, r#"{"args": {"s": {"instances": [{"user_id": 16777216}]}}}"#).unwrap_err();
        assert!(wide.contains("24 bits"), "{wide}");
        let mask = run(WRITE, r#"{"args": {"s": {"instances": [{"mask": 256}]}}}"#).unwrap_err();
        assert!(mask.contains("8 bits"), "{mask}");
    }

    // Check the record round trip of the public scene type.
    #[test]
    fn accel_json_round_trips() {
        let j: Json = serde_json::from_str(
            r#"{"instances": [{"transform": [1, 0, 0, 2, 0, 1, 0, 0, 0, 0, 1, 0], "mask": 7, "user_id": 9,
                "opaque": false, "triangles": [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]}, {"aabbs": [[0, 0, 0, 1, 1, 1]]}]}"#,
        )
        .unwrap();
        let a = accel_from_json(&j).unwrap();
        assert_eq!(accel_from_json(&accel_to_json(&a)).unwrap(), a);
        assert_eq!((a.instances[0].mask, a.instances[0].user_id, a.instances[0].transform[3]), (7, 9, 2.0));
    }
}
