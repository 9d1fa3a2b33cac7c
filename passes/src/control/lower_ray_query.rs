//! `lower_ray_query_loop`: step 1 of the reference's SPIR-V legalization. The
//! structured ray-query traversal loop has no raw form (`destructure_cfg`
//! refuses it), so it becomes an ordinary structured `loop` over an explicit
//! proceed plus the candidate-kind dispatch:
//!
//! ```text
//! ^h: ray_query.loop dispatch ^d, merge ^m     ^h: loop prepare ^d, body ^b, update ^u, merge ^e
//! ^d: ray_query.dispatch %q, exit ^e,     ==>  ^d: %more = ray_query.proceed %q : bool
//!       on_surface ^s, on_procedural ^p             cond_br %more, true ^b, false ^e
//! ^s: ... br target ^d                         ^b: %tri = ray_query.object_read %q, u32 4 : bool
//! ^p: ... br target ^d                              if %tri, true ^s, false ^p, merge ^j
//! ^e: ... br target ^m                         ^s: ... br target ^j    ^p: ... br target ^j
//!                                              ^j: br target ^u        ^u: br target ^d
//!                                              ^e: ... br target ^m
//! ```
//!
//! `ray_query.dispatch` means "proceed; when traversal is complete go to
//! `exit`, else to the handler of the candidate's kind", which is exactly
//! `proceed` followed by a read of field 4 (candidate is a triangle). The
//! exit block becomes the loop's merge (it runs once, after traversal, as
//! before) and reaches the old merge by its own branch. Every branch to the
//! dispatch block other than the loop header is retargeted to the fresh join
//! block (the `if`'s merge; a role block may not also be the loop's update),
//! which branches on through the fresh update block to the dispatch block.
//! Phis of the dispatch block that merged those edges move into the join
//! block, and Phi incomings of the handlers from the dispatch block now come
//! from the body. When both handlers are one block, the body branches to it.
//!
//! `ray.trace_closest` is lowered the same way, since closest-hit tracing
//! must call proceed until traversal is complete before any committed field
//! is read: the block is split after the trace, which becomes
//!
//! ```text
//! %q = ray_query.pipeline %accel, %ray, %mask : ray_query_all
//! loop prepare ^p, body ^b, update ^u, merge ^t
//! ^p: %more = ray_query.proceed %q : bool; cond_br %more, true ^b, false ^t
//! ^b: %tri = ray_query.object_read %q, u32 4 : bool; if %tri, true ^c, false ^j, merge ^j
//! ^c: ray_query.object_write %q, u32 0; br target ^j     (commit every triangle candidate)
//! ^j: br target ^u         ^u: br target ^p
//! ^t: %c = ray_query.object_read %q, u32 3 : {u32, u32, vec<f32, 2>, u32, f32}
//!     %hit = aggregate (fields 0, 1, 2, 4 of %c); the rest of the block
//! ```
//!
//! Committing every triangle candidate and ignoring procedural ones is the
//! forced-opaque closest hit `ray.trace_closest` means. `ray.trace_any`
//! stays an instruction: with TerminateOnFirstHit and forced opacity one
//! proceed is exact, and the emitter says so.
//!
//! A module whose ray-query constructs are malformed (a loop whose dispatch
//! block does not end in `ray_query.dispatch`, a dispatch outside a loop,
//! the exit shared with a handler, a `ray.trace_closest` whose result is not
//! the triangle-hit record) is refused before anything changes, with a
//! diagnostic located at the construct.
//!
//! - Consumes: `xir.structured`, `xir.structured.lowered`.
//! - Produces: the same dialect, without `ray_query.loop`, `ray_query.dispatch`
//!   and `ray.trace_closest`.
//! - Preserves: `call_graph`.

use smallvec::SmallVec;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::verify::inst_diag;
use xir::{Block, Function, Inst, InstData, Metadata, Module, Opcode, Trait, Type, TypeId, TypeTable, Value};

use super::util::{br, defined_functions, set_terminator, term};

/// `ray_query.object_read` field: the current candidate is a triangle.
pub const FIELD_IS_TRIANGLE_CANDIDATE: u32 = 4;

static INFO: PassInfo = PassInfo {
    name: "lower_ray_query_loop",
    doc: "Ray-query loops and closest-hit traces to ordinary loops over ray_query.proceed.",
    consumes: &["xir.structured", "xir.structured.lowered"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &["@ray_query_loop", "ray.trace_closest"],
};

#[derive(Default)]
pub struct LowerRayQueryLoop;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<LowerRayQueryLoop>(INFO.clone())
}

/// One ray-query loop, as found by the preflight.
struct Site {
    header: Block,
    dispatch: Block,
    /// The `ray_query.dispatch` terminator of `dispatch`.
    term: Inst,
    query: Value,
    exit: Block,
    surface: Block,
    procedural: Block,
}

/// The ray-query loops of `f`, or located diagnostics for malformed ones.
fn find_sites(f: &Function) -> Result<Vec<Site>, Vec<xir::Diagnostic>> {
    let mut sites = Vec::new();
    let mut diags = Vec::new();
    let mut owned_dispatch = Vec::new();
    for &h in f.blocks() {
        let Some(t) = f.terminator(h) else { continue };
        if f.inst(t).opcode != Opcode::RayQueryLoop {
            continue;
        }
        let d = f.inst(t);
        let Some(&dispatch) = d.blocks.first() else {
            diags.push(inst_diag(f, t, INFO.name, "`ray_query.loop` has no dispatch block".into()));
            continue;
        };
        let dt = f.block_exists(dispatch).then(|| f.terminator(dispatch)).flatten();
        let Some(dt) = dt.filter(|&dt| f.inst(dt).opcode == Opcode::RayQueryDispatch) else {
            let msg =
                format!("the dispatch block {dispatch} of this `ray_query.loop` does not end in `ray_query.dispatch`");
            diags.push(inst_diag(f, t, INFO.name, msg));
            continue;
        };
        if owned_dispatch.contains(&dt) {
            let msg = format!("the dispatch block {dispatch} is shared with another `ray_query.loop`");
            diags.push(inst_diag(f, t, INFO.name, msg));
            continue;
        }
        owned_dispatch.push(dt);
        let dd = f.inst(dt);
        let (Some(&query), [exit, surface, procedural, ..]) = (dd.operands.first(), dd.blocks.as_slice()) else {
            diags.push(inst_diag(f, dt, INFO.name, "`ray_query.dispatch` lacks its query or a role block".into()));
            continue;
        };
        if exit == surface || exit == procedural {
            let msg = format!("the exit block {exit} is also a candidate handler");
            diags.push(inst_diag(f, dt, INFO.name, msg));
            continue;
        }
        if [*exit, *surface, *procedural].contains(&dispatch) || [*exit, *surface, *procedural].contains(&h) {
            let msg = "a role block of `ray_query.dispatch` is its own dispatch block or the loop header".to_string();
            diags.push(inst_diag(f, dt, INFO.name, msg));
            continue;
        }
        sites.push(Site {
            header: h,
            dispatch,
            term: dt,
            query,
            exit: *exit,
            surface: *surface,
            procedural: *procedural,
        });
    }
    for &b in f.blocks() {
        if let Some(t) = f.terminator(b) {
            if f.inst(t).opcode == Opcode::RayQueryDispatch && !owned_dispatch.contains(&t) {
                let msg = "`ray_query.dispatch` outside the dispatch block of a `ray_query.loop`".to_string();
                diags.push(inst_diag(f, t, INFO.name, msg));
            }
        }
    }
    if diags.is_empty() {
        Ok(sites)
    } else {
        Err(diags)
    }
}

fn named(data: InstData, name: &str) -> InstData {
    InstData { md: Metadata::named(name), ..data }
}

/// Rewrite one ray-query loop (see the module doc).
fn lower_site(m: &mut Module, fid: xir::FuncId, s: &Site) {
    let field = m.const_u32(FIELD_IS_TRIANGLE_CANDIDATE);
    let f = m.func_mut(fid);
    let body = f.add_block();
    let join = f.add_block();
    let update = f.add_block();
    f.set_block_md(body, Metadata::named("rq.candidate"));
    f.set_block_md(join, Metadata::named("rq.handled"));
    f.set_block_md(update, Metadata::named("rq.next"));

    // Every non-structured branch to the dispatch block now goes through
    // the join block (the candidate `if`'s merge), then the update block.
    let mut retargeted: Vec<Block> = Vec::new();
    for b in f.blocks().to_vec() {
        if b == body || b == join || b == update {
            continue;
        }
        let Some(t) = f.terminator(b) else { continue };
        let d = f.inst(t);
        if d.has(Trait::Structured) || !d.blocks.contains(&s.dispatch) {
            continue;
        }
        f.retarget(t, s.dispatch, join);
        retargeted.push(b);
    }
    // Phis of the dispatch block: retargeted edges merge in the join block.
    let phis: Vec<Inst> =
        f.block(s.dispatch).insts().iter().copied().take_while(|&i| f.opcode(i) == Opcode::Phi).collect();
    for p in phis {
        let d = f.inst_data(p);
        type Edges = Vec<(Value, Block)>;
        let (moved, kept): (Edges, Edges) =
            d.operands.iter().copied().zip(d.blocks.iter().copied()).partition(|(_, b)| retargeted.contains(b));
        if moved.is_empty() {
            continue;
        }
        let mut np = InstData::new(Opcode::Phi, d.ty);
        np.operands = moved.iter().map(|x| x.0).collect();
        np.blocks = moved.iter().map(|x| x.1).collect();
        let np = Value::Inst(f.append_inst(join, np));
        let mut incomings = kept;
        incomings.push((np, update));
        f.set_phi_incomings(p, &incomings);
    }
    f.append_inst(join, br(update));
    f.append_inst(update, br(s.dispatch));
    // Handler Phis: their incoming edge now comes from the body.
    for h in [s.surface, s.procedural] {
        let phis: Vec<Inst> = f.block(h).insts().iter().copied().take_while(|&i| f.opcode(i) == Opcode::Phi).collect();
        for p in phis {
            f.retarget(p, s.dispatch, body);
        }
    }
    // The candidate-kind dispatch.
    if s.surface == s.procedural {
        f.append_inst(body, br(s.surface));
    } else {
        let mut read = InstData::new(Opcode::RayQueryObjectRead, TypeTable::BOOL);
        read.operands = SmallVec::from_slice(&[s.query, field]);
        let tri = Value::Inst(f.append_inst(body, named(read, "rq.is_triangle")));
        f.append_inst(body, term(Opcode::If, &[tri], &[s.surface, s.procedural, join]));
    }
    // The dispatch block proceeds and leaves to the exit when done.
    let span = f.inst_span(s.term);
    let mut proceed = InstData::new(Opcode::RayQueryProceed, TypeTable::BOOL);
    proceed.operands.push(s.query);
    proceed.span = span;
    let more = Value::Inst(f.insert_before_terminator(s.dispatch, named(proceed, "rq.more")));
    set_terminator(f, s.dispatch, term(Opcode::CondBr, &[more], &[body, s.exit]));
    set_terminator(f, s.header, term(Opcode::Loop, &[], &[s.dispatch, body, update, s.exit]));
}

/// Whether `ty` is `struct{u32, u32, vec<f32, 2>, f32}` (any alignment).
fn triangle_record(m: &Module, ty: TypeId) -> bool {
    let t = &m.types;
    let Type::Struct { fields, .. } = t.get(ty) else { return false };
    let vec2 = |x: TypeId| matches!(t.get(x), Type::Vector { elem, lanes: 2 } if *elem == TypeTable::F32);
    matches!(fields.as_slice(), [a, b, c, d] if *a == TypeTable::U32 && *b == TypeTable::U32 && vec2(*c) && *d == TypeTable::F32)
}

/// Rewrite one `ray.trace_closest` (see the module doc).
fn lower_trace(m: &mut Module, fid: xir::FuncId, trace: Inst) {
    let rq = m.types.intern(Type::RayQuery { any_hit: false });
    let vec2 = m.types.vector(TypeTable::F32, 2);
    let fields = vec![TypeTable::U32, TypeTable::U32, vec2, TypeTable::U32, TypeTable::F32];
    let committed_ty = m.types.intern(Type::Struct { fields, align: 8 });
    let [f0, f1, f2, f3, f4] = [0, 1, 2, 3, 4].map(|k| m.const_u32(k));
    let commit = f0;
    let f = m.func_mut(fid);
    let d = f.inst_data(trace);
    let b = f.parent(trace).expect("placed");
    let [prepare, body, confirm, join, update, tail] =
        ["rq.proceed", "rq.candidate", "rq.commit", "rq.handled", "rq.next", "rq.done"].map(|n| {
            let x = f.add_block();
            f.set_block_md(x, Metadata::named(n));
            x
        });
    // Split: everything after the trace moves to the tail, and Phi edges
    // from `b` now come from the tail.
    let mut at = f.cursor().at_inst(trace);
    at.next_inst();
    at.split_block(tail);
    // The header: create the query, enter the loop.
    let mut pipe = InstData::new(Opcode::RayQueryPipeline, rq);
    pipe.operands = d.operands.clone();
    pipe.span = d.span;
    let q = Value::Inst(f.append_inst(b, named(pipe, "rq.query")));
    f.append_inst(b, term(Opcode::Loop, &[], &[prepare, body, update, tail]));
    let mut proceed = InstData::new(Opcode::RayQueryProceed, TypeTable::BOOL);
    proceed.operands.push(q);
    let more = Value::Inst(f.append_inst(prepare, named(proceed, "rq.more")));
    f.append_inst(prepare, term(Opcode::CondBr, &[more], &[body, tail]));
    let mut read = InstData::new(Opcode::RayQueryObjectRead, TypeTable::BOOL);
    read.operands = SmallVec::from_slice(&[q, f4]);
    let tri = Value::Inst(f.append_inst(body, named(read, "rq.is_triangle")));
    f.append_inst(body, term(Opcode::If, &[tri], &[confirm, join, join]));
    let mut write = InstData::new(Opcode::RayQueryObjectWrite, TypeTable::VOID);
    write.operands = SmallVec::from_slice(&[q, commit]);
    f.append_inst(confirm, write);
    f.append_inst(confirm, br(join));
    f.append_inst(join, br(update));
    f.append_inst(update, br(prepare));
    // The tail starts by building the hit record from the committed hit.
    let mut read = InstData::new(Opcode::RayQueryObjectRead, committed_ty);
    read.operands = SmallVec::from_slice(&[q, f3]);
    let committed = f.create_inst(named(read, "rq.committed"));
    f.insert_inst(tail, 0, committed);
    let c = Value::Inst(committed);
    let mut members = SmallVec::<[Value; 3]>::new();
    for (k, (field, ty)) in
        [(f0, TypeTable::U32), (f1, TypeTable::U32), (f2, vec2), (f4, TypeTable::F32)].into_iter().enumerate()
    {
        let mut x = InstData::new(Opcode::Extract, ty);
        x.operands = SmallVec::from_slice(&[c, field]);
        let i = f.create_inst(x);
        f.insert_inst(tail, 1 + k, i);
        members.push(Value::Inst(i));
    }
    let mut agg = InstData::new(Opcode::Aggregate, d.ty);
    agg.operands = members;
    agg.md = d.md.clone();
    agg.span = d.span;
    let hit = f.create_inst(agg);
    f.insert_inst(tail, 5, hit);
    f.replace_all_uses(Value::Inst(trace), Value::Inst(hit));
    f.remove_inst(trace);
}

/// Lower every ray-query loop of the module; refuses (changing nothing)
/// when one is malformed. Returns the number of loops lowered.
pub fn lower_module(m: &mut Module) -> Result<usize, PassError> {
    let mut all = Vec::new();
    let mut diags = Vec::new();
    // One sweep of the dense opcode table per function decides whether it
    // has anything to lower: most kernels have no ray query, and the layout
    // walks below (program order, for the diagnostics and the order of
    // lowering) touch every block's records.
    let has = |f: &xir::Function, want: &[Opcode]| f.live_opcodes_by_id().any(|(_, op)| want.contains(&op));
    for fid in defined_functions(m) {
        // `find_sites` also refuses a dispatch outside any loop.
        if !has(m.func(fid), &[Opcode::RayQueryLoop, Opcode::RayQueryDispatch]) {
            continue;
        }
        match find_sites(m.func(fid)) {
            Ok(sites) => all.extend(sites.into_iter().map(|s| (fid, s))),
            Err(d) => diags.extend(d),
        }
    }
    let mut traces = Vec::new();
    for fid in defined_functions(m) {
        let f = m.func(fid);
        if !has(f, &[Opcode::RayTraceClosest]) {
            continue;
        }
        for (_, i) in f.all_insts() {
            if f.opcode(i) != Opcode::RayTraceClosest {
                continue;
            }
            match triangle_record(m, f.inst(i).ty) {
                true => traces.push((fid, i)),
                false => {
                    let msg = "the result of `ray.trace_closest` must be the triangle-hit record \
                               struct{u32, u32, vec<f32, 2>, f32}"
                        .to_string();
                    diags.push(inst_diag(f, i, INFO.name, msg));
                }
            }
        }
    }
    if !diags.is_empty() {
        let mut e = PassError::new(INFO.name, format!("{} malformed ray-query construct(s)", diags.len()));
        e.diagnostics = diags;
        return Err(e);
    }
    for (fid, s) in &all {
        lower_site(m, *fid, s);
    }
    for &(fid, i) in &traces {
        lower_trace(m, fid, i);
    }
    Ok(all.len() + traces.len())
}

impl Pass for LowerRayQueryLoop {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let n = lower_module(module)?;
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("lowered".into(), n.to_string()));
        Ok(out)
    }
}
