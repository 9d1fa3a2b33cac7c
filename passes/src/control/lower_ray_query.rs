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
//! A module whose ray-query constructs are malformed (a loop whose dispatch
//! block does not end in `ray_query.dispatch`, a dispatch outside a loop,
//! the exit shared with a handler) is refused before anything changes, with a
//! diagnostic located at the construct.
//!
//! - Consumes: `xir.structured`, `xir.structured.lowered`.
//! - Produces: the same dialect, without `ray_query.loop` / `ray_query.dispatch`.
//! - Preserves: the call graph.

use smallvec::SmallVec;
use xir::pass::{AnalysisKind, NoOptions, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::verify::inst_diag;
use xir::{Block, Function, Inst, InstData, Metadata, Module, Opcode, Trait, TypeTable, Value};

use super::util::{br, defined_functions, set_terminator, term};

/// `ray_query.object_read` field: the current candidate is a triangle.
pub const FIELD_IS_TRIANGLE_CANDIDATE: u32 = 4;

static INFO: PassInfo = PassInfo {
    name: "lower_ray_query_loop",
    doc: "Structured ray-query loops to ordinary loops over ray_query.proceed plus a candidate-kind if.",
    consumes: &["xir.structured", "xir.structured.lowered"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &["@ray_query_loop"],
};

pub struct LowerRayQueryLoop;

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| {
            xir::pass::options_from_ron::<NoOptions>(v)?;
            Ok(Box::new(LowerRayQueryLoop))
        },
    }
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
        let d = f.inst(t);
        if d.opcode != Opcode::RayQueryLoop {
            continue;
        }
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
    f.block_mut(body).md = Metadata::named("rq.candidate");
    f.block_mut(join).md = Metadata::named("rq.handled");
    f.block_mut(update).md = Metadata::named("rq.next");

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
        for x in f.inst_mut(t).blocks.iter_mut() {
            if *x == s.dispatch {
                *x = join;
            }
        }
        retargeted.push(b);
    }
    // Phis of the dispatch block: retargeted edges merge in the join block.
    let phis: Vec<Inst> =
        f.block(s.dispatch).insts.iter().copied().take_while(|&i| f.inst(i).opcode == Opcode::Phi).collect();
    for p in phis {
        let d = f.inst(p).clone();
        let (moved, kept): (Vec<(Value, Block)>, Vec<(Value, Block)>) =
            d.operands.iter().copied().zip(d.blocks.iter().copied()).partition(|(_, b)| retargeted.contains(b));
        if moved.is_empty() {
            continue;
        }
        let mut np = InstData::new(Opcode::Phi, d.ty);
        np.operands = moved.iter().map(|x| x.0).collect();
        np.blocks = moved.iter().map(|x| x.1).collect();
        let np = Value::Inst(f.append_inst(join, np));
        let mut ops: SmallVec<[Value; 3]> = kept.iter().map(|x| x.0).collect();
        ops.push(np);
        f.set_operands(p, ops);
        let mut blocks: SmallVec<[Block; 3]> = kept.iter().map(|x| x.1).collect();
        blocks.push(update);
        f.inst_mut(p).blocks = blocks;
    }
    f.append_inst(join, br(update));
    f.append_inst(update, br(s.dispatch));
    // Handler Phis: their incoming edge now comes from the body.
    for h in [s.surface, s.procedural] {
        let phis: Vec<Inst> =
            f.block(h).insts.iter().copied().take_while(|&i| f.inst(i).opcode == Opcode::Phi).collect();
        for p in phis {
            for x in f.inst_mut(p).blocks.iter_mut() {
                if *x == s.dispatch {
                    *x = body;
                }
            }
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
    let span = f.inst(s.term).span;
    let mut proceed = InstData::new(Opcode::RayQueryProceed, TypeTable::BOOL);
    proceed.operands.push(s.query);
    proceed.span = span;
    let more = Value::Inst(f.insert_before_terminator(s.dispatch, named(proceed, "rq.more")));
    set_terminator(f, s.dispatch, term(Opcode::CondBr, &[more], &[body, s.exit]));
    set_terminator(f, s.header, term(Opcode::Loop, &[], &[s.dispatch, body, update, s.exit]));
}

/// Lower every ray-query loop of the module; refuses (changing nothing)
/// when one is malformed. Returns the number of loops lowered.
pub fn lower_module(m: &mut Module) -> Result<usize, PassError> {
    let mut all = Vec::new();
    let mut diags = Vec::new();
    for fid in defined_functions(m) {
        match find_sites(m.func(fid)) {
            Ok(sites) => all.extend(sites.into_iter().map(|s| (fid, s))),
            Err(d) => diags.extend(d),
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
    Ok(all.len())
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
