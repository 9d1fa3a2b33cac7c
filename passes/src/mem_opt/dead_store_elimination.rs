//! `dead_store_elimination`: delete writes nobody can read.
//!
//! 1. *Overwritten* (within one block): a `store` / typed `buffer.write` /
//!    `buffer.write_part` whose location lies inside (or is) the location
//!    of a later write in the same block (a whole element written before a
//!    part of it is not inside the part, and stays), with no instruction in
//!    between that may read it, is deleted. "Inside" is `AliasAnalysis::sub_path` (same root, must-alias
//!    prefix, constant rest); "may read" is its mod/ref, which makes
//!    barriers, atomics, calls and other side effects read every location
//!    other threads can see (shared slots, buffers, reference arguments).
//! 2. *Never read*: a thread-private `alloca` whose every use — through
//!    `gep`s — is the address of a `store` is deleted with those stores and
//!    geps (nothing can observe it; a slot passed to a call, used by an
//!    atomic or loaded anywhere stays).
//! 3. *Dead at return*: a `store` into a thread-private `alloca` in a
//!    block that ends in `return`, with no instruction after it in the
//!    block that may read it, is deleted: the local dies with the call
//!    (`struct_gep` stores a whole struct back just before returning).
//! 4. *Dead fields*: a `store` into a thread-private `alloca` none of
//!    whose fields (`analysis::field_mask` leaves) is live after it —
//!    every path overwrites each of them (`kill`) before any load reads it,
//!    or the function returns first — is deleted
//!    (`analysis::pointer_usage`). Unlike rule 1 this sees across blocks
//!    and through several partial overwrites (a whole-struct store killed
//!    field by field). Slots that are never read are left to rule 2.
//!    Found on the function as the pass gets it, together with rules 1
//!    and 3: a store whose value is never read stays so when other such
//!    stores go.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`.

use xir::analysis::{AliasAnalysis, Location, ScanRecords};
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Function, Inst, Module, Opcode, Value};

const INFO: PassInfo = PassInfo {
    name: "dead_store_elimination",
    doc: "Delete stores overwritten before any read (in the block, or field by field across blocks for locals), stores to locals dead at return, and slots that are only written",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["store", "buffer.write", "buffer.write_part"],
    preserves: super::CFG_ANALYSES,
};

#[derive(Default)]
pub struct DeadStoreElimination;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<DeadStoreElimination>(INFO)
}

impl Pass for DeadStoreElimination {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut overwritten, mut at_return, mut slots, mut slot_stores) = (0, 0, 0, 0);
        let mut fields = 0;
        for f in crate::memory::util::defined_functions(module) {
            let dead_fields = dead_field_stores(module, f, cx);
            let (o, r) = remove_overwritten(module, f);
            overwritten += o;
            at_return += r;
            // What rules 1 and 3 did not take already.
            let func = module.func_mut(f);
            let rest: Vec<Inst> = dead_fields.into_iter().filter(|&i| func.parent(i).is_some()).collect();
            fields += rest.len();
            func.remove_insts(&rest);
            let (s, n) = remove_write_only_slots(module.func_mut(f));
            slots += s;
            slot_stores += n;
        }
        let mut out = PassOutcome::changed(overwritten + at_return + slots + fields > 0);
        out.stats.push(("overwritten_stores".into(), overwritten.to_string()));
        out.stats.push(("dead_at_return_stores".into(), at_return.to_string()));
        out.stats.push(("write_only_slots".into(), slots.to_string()));
        out.stats.push(("write_only_stores".into(), slot_stores.to_string()));
        out.stats.push(("dead_field_stores".into(), fields.to_string()));
        Ok(out)
    }
}

/// At most this many later writes are remembered per block (the oldest
/// dropped first: a store it would have killed just stays), so huge blocks
/// stay linear.
const MAX_LATER: usize = 64;

fn is_write(op: Opcode) -> bool {
    matches!(op, Opcode::Store | Opcode::BufferWrite | Opcode::BufferWritePart)
}

/// Rules 1 and 3, block by block, walking backwards with the locations
/// written later and not read since (and, in a block that returns, the
/// instructions after the current one that may touch memory: at most
/// `MAX_LATER`, beyond that no store is found dead at return). Returns
/// (overwritten, dead at return).
fn remove_overwritten(m: &mut Module, fid: FuncId) -> (usize, usize) {
    let aa = AliasAnalysis::compute(m, fid);
    let f = m.func(fid);
    let mut dead: Vec<Inst> = Vec::new();
    let mut at_return = 0;
    let blocks = f.blocks();
    // Opcodes decide for most instructions, locations for loads and stores.
    let mut walk = f.walk(blocks, aa.scan_reads(ScanRecords::Unlocated));
    while let Some(b) = walk.next(f) {
        let mut later: Vec<Location> = Vec::new();
        let insts = f.block(b).insts();
        let returns = insts.last().is_some_and(|&t| f.opcode(t) == Opcode::Return);
        let mut after: Option<Vec<Inst>> = returns.then(Vec::new);
        for &i in insts.iter().rev() {
            let op = f.opcode(i);
            if AliasAnalysis::never_mod_ref(op) {
                continue;
            }
            if is_write(op) {
                if let Some(loc) = aa.access(i) {
                    if later.iter().any(|o| aa.sub_path(o, loc).is_some()) {
                        dead.push(i);
                        continue;
                    }
                    let dies = op == Opcode::Store
                        && loc.root.is_thread_private()
                        && after.as_ref().is_some_and(|a| a.iter().all(|&j| !aa.mod_ref(f, j, loc).reads));
                    if dies {
                        dead.push(i);
                        at_return += 1;
                        continue;
                    }
                    if later.len() >= MAX_LATER {
                        later.remove(0);
                    }
                    later.push(*loc);
                    continue;
                }
            }
            later.retain(|o| !aa.mod_ref(f, i, o).reads);
            if let Some(a) = after.as_mut() {
                if a.len() >= MAX_LATER {
                    after = None;
                } else {
                    a.push(i);
                }
            }
        }
    }
    let n = dead.len();
    m.func_mut(fid).remove_insts(&dead);
    (n - at_return, at_return)
}

/// Rule 4's stores: dead by pointer usage, in slots some load reads.
fn dead_field_stores(m: &Module, fid: FuncId, cx: &mut PassContext) -> Vec<Inst> {
    let masks = cx.analyses.field_masks(m, fid);
    let usage = cx.analyses.pointer_usage(m, fid);
    usage
        .dead_stores()
        .into_iter()
        .filter(|&i| usage.usage(i).and_then(|u| masks.root(u.root)).is_some_and(|r| !r.read.is_empty()))
        .collect()
}

/// Rule 2: returns (slots deleted, stores deleted with them).
fn remove_write_only_slots(f: &mut Function) -> (usize, usize) {
    let allocas: Vec<Inst> = f.select_in_layout_order(|op| op == Opcode::Alloca);
    let (mut slots, mut stores) = (0, 0);
    let mut walk = f.walk(&allocas, xir::reads::UserOpcodes);
    while let Some(a) = walk.next(f) {
        let mut doomed = vec![a];
        let mut k = 0;
        let mut write_only = true;
        while k < doomed.len() && write_only {
            // The users' opcodes from the dense table: no record is read.
            for u in f.uses(Value::Inst(doomed[k])) {
                match f.opcode(u.user) {
                    Opcode::Gep if u.index == 0 => doomed.push(u.user),
                    Opcode::Store if u.index == 0 => doomed.push(u.user),
                    _ => write_only = false,
                }
            }
            k += 1;
        }
        if !write_only {
            continue;
        }
        stores += doomed.iter().filter(|&&i| f.opcode(i) == Opcode::Store).count();
        slots += 1;
        // Users before their definitions, so no use list refers to a
        // removed instruction.
        doomed.reverse();
        f.remove_insts(&doomed);
    }
    (slots, stores)
}
