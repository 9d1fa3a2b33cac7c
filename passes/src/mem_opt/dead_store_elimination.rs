//! `dead_store_elimination`: delete writes nobody can read.
//!
//! 1. *Overwritten* (within one block): a `store` / typed `buffer.write`
//!    whose location lies inside (or is) the location of a later write in
//!    the same block, with no instruction in between that may read it, is
//!    deleted. "Inside" is `AliasAnalysis::sub_path` (same root, must-alias
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
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`.

use xir::analysis::{AliasAnalysis, Location, ScanRecords};
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Function, Inst, Module, Opcode, Value};

const INFO: PassInfo = PassInfo {
    name: "dead_store_elimination",
    doc: "Delete stores overwritten later in the block before any read, stores to locals dead at return, and slots that are only written",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["store", "buffer.write"],
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
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut overwritten, mut at_return, mut slots, mut slot_stores) = (0, 0, 0, 0);
        for f in crate::memory::util::defined_functions(module) {
            let (o, r) = remove_overwritten(module, f);
            overwritten += o;
            at_return += r;
            let (s, n) = remove_write_only_slots(module.func_mut(f));
            slots += s;
            slot_stores += n;
        }
        let mut out = PassOutcome::changed(overwritten + at_return + slots > 0);
        out.stats.push(("overwritten_stores".into(), overwritten.to_string()));
        out.stats.push(("dead_at_return_stores".into(), at_return.to_string()));
        out.stats.push(("write_only_slots".into(), slots.to_string()));
        out.stats.push(("write_only_stores".into(), slot_stores.to_string()));
        Ok(out)
    }
}

/// At most this many later writes are remembered per block (the oldest
/// dropped first: a store it would have killed just stays), so huge blocks
/// stay linear.
const MAX_LATER: usize = 64;

fn is_write(op: Opcode) -> bool {
    matches!(op, Opcode::Store | Opcode::BufferWrite)
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
