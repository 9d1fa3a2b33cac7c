//! Dominance repair after a control-flow rewrite. Rewrites such as loop-exit
//! dispatch or early-return flags add static paths that are never taken at
//! run time, so a value may no longer dominate a use it always reached
//! before. Each such value is demoted: a slot in the entry block, a store
//! right after the definition, and a load in front of each use it no
//! longer dominates (for a Phi, at the end of the incoming block). The
//! original program wrote the value before every such use, so the load
//! reads exactly what the use saw.

use xir::analysis::{Cfg, DomTree};
use xir::{Block, Function, Inst, InstData, Metadata, Opcode, TypeTable, Use, Value};

/// A value that would need a slot but cannot live in memory.
#[derive(Debug)]
pub struct NotDemotable {
    pub inst: Inst,
    pub message: String,
}

/// Whether the value of `i` (of a data type when `is_data`) can live in a
/// local slot: the one test of both the repair and its safety check.
fn demotable(is_data: bool, f: &Function, i: Inst) -> bool {
    is_data && !f.is_lvalue(Value::Inst(i))
}

/// Whether every value that cannot live in a slot (a non-data type, or an
/// lvalue) is defined in the entry block, when `entry_kept`, or else used
/// only by non-terminator instructions of its own block.
///
/// A rewrite that changes only terminators, keeps every other instruction
/// in its block and order, and adds blocks and instructions of its own
/// (restructure_cfg's emission) keeps those uses dominated: the entry, if
/// it stays the entry, dominates every block. So `repair_dominance` after
/// it can only demote data values; it cannot fail, and the rewrite may
/// edit the function in place instead of a copy kept for the error.
pub fn undemotable_values_stay_local(types: &TypeTable, f: &Function, entry_kept: bool) -> bool {
    let entry = if entry_kept { f.body() } else { None };
    // `is_data` walks aggregates; memoize it per type id.
    let mut data: Vec<Option<bool>> = Vec::new();
    for k in 0..f.inst_capacity() {
        let i = Inst::new(k);
        let Some(b) = f.parent(i) else { continue };
        if Some(b) == entry {
            continue;
        }
        let core = f.inst(i);
        let ty = core.ty.index();
        if ty >= data.len() {
            data.resize(ty + 1, None);
        }
        let is_data = *data[ty].get_or_insert_with(|| types.is_data(core.ty));
        if demotable(is_data, f, i) {
            continue;
        }
        for u in f.uses(Value::Inst(i)) {
            if f.parent(u.user) != Some(b) || f.inst(u.user).is_terminator() {
                return false;
            }
        }
    }
    true
}

/// Demote every value whose definition does not dominate all its uses.
/// Returns how many values were demoted.
pub fn repair_dominance(types: &TypeTable, f: &mut Function) -> Result<usize, NotDemotable> {
    let cfg = Cfg::compute(f);
    repair_dominance_in(types, f, &cfg)
}

/// `repair_dominance` with the function's current CFG already at hand
/// (the rewrite that changed it computed it).
pub fn repair_dominance_in(types: &TypeTable, f: &mut Function, cfg: &Cfg) -> Result<usize, NotDemotable> {
    let dom = DomTree::from_cfg(cfg);
    let mut pos = vec![usize::MAX; f.inst_capacity()];
    let layout = f.blocks();
    let mut walk = f.walk(layout, xir::reads::BlockList);
    while let Some(b) = walk.next(f) {
        for (k, &i) in f.block(b).insts().iter().enumerate() {
            pos[i.index()] = k;
        }
    }
    // (definition, user, operand index). Found from the definitions' use
    // lists in id order (the dense table and the lists are read front to
    // back; a user's record is read only when it is a Phi), not from every
    // user's record in CFG order.
    let mut bad: Vec<(Inst, Inst, usize)> = Vec::new();
    for (def, db, _) in f.live_placements_by_id() {
        for u in f.uses(Value::Inst(def)) {
            let Some(ub) = f.parent(u.user) else { continue };
            if !cfg.is_reachable(ub) {
                continue;
            }
            let k = u.index as usize;
            let is_phi = f.opcode(u.user) == Opcode::Phi;
            let (at_block, at_pos) =
                if is_phi { (f.inst(u.user).blocks[k], usize::MAX) } else { (ub, pos[u.user.index()]) };
            let ok = if db == at_block {
                pos[def.index()] < at_pos || (is_phi && !cfg.is_reachable(at_block))
            } else {
                dom.dominates(db, at_block) || !cfg.is_reachable(db) && !cfg.is_reachable(at_block)
            };
            if !ok && cfg.is_reachable(at_block) {
                bad.push((def, u.user, k));
            }
        }
    }
    if bad.is_empty() {
        return Ok(0);
    }
    let entry = f.body().expect("function with uses has a body");
    bad.sort_by_key(|b| b.0);
    let mut defs: Vec<Inst> = bad.iter().map(|b| b.0).collect();
    defs.dedup();
    for &def in &defs {
        if !demotable(types.is_data(f.inst(def).ty), f, def) {
            return Err(NotDemotable {
                inst: def,
                message: format!("{def} no longer dominates its uses and its type cannot be kept in a local slot"),
            });
        }
    }
    // Every insertion is placed in one rebuild per block (an `insert_inst`
    // after a `position` scan per value was quadratic on long blocks), and
    // each value's retargeted uses move in one pass over its use list.
    // Order at one anchor: the slots first (a load may sit at the top of the
    // entry block), then per value its store before its loads.
    let mut place: Vec<(Inst, Inst)> = Vec::with_capacity(defs.len() * 2 + bad.len());
    let entry_first = f.block(entry).insts()[0];
    let mut slots = Vec::with_capacity(defs.len());
    for &def in &defs {
        let mut a = InstData::new(Opcode::Alloca, f.inst(def).ty);
        a.md = Metadata::named(format!("{}.slot", f.inst_name(def).unwrap_or("v")));
        slots.push(f.create_inst(a));
    }
    // Each slot used to be inserted at the top in turn: the last one first.
    place.extend(slots.iter().rev().map(|&s| (entry_first, s)));
    let mut retarget: Vec<(Inst, Vec<(Use, Value)>)> = Vec::with_capacity(defs.len());
    for (&def, &slot) in defs.iter().zip(&slots) {
        let ty = f.inst(def).ty;
        let db = f.parent(def).expect("placed");
        let insts = f.block(db).insts();
        let mut at = pos[def.index()] + 1;
        if f.opcode(def) == Opcode::Phi {
            while insts.get(at).is_some_and(|&i| f.opcode(i) == Opcode::Phi) {
                at += 1;
            }
        }
        let mut st = InstData::new(Opcode::Store, TypeTable::VOID);
        st.operands.extend([Value::Inst(slot), Value::Inst(def)]);
        match insts.get(at).copied() {
            Some(next) => {
                let st = f.create_inst(st);
                place.push((next, st));
            }
            None => {
                f.append_inst(db, st);
            }
        }
        let first = bad.partition_point(|b| b.0 < def);
        let last = bad.partition_point(|b| b.0 <= def);
        let mut repl = Vec::with_capacity(last - first);
        for &(d, user, k) in &bad[first..last] {
            let mut ld = InstData::new(Opcode::Load, ty);
            ld.operands.push(Value::Inst(slot));
            let ud = f.inst(user);
            debug_assert_eq!(ud.operands[k], Value::Inst(d));
            let ld = if ud.opcode == Opcode::Phi {
                let pred: Block = ud.blocks[k];
                match f.terminator(pred) {
                    Some(t) => {
                        let ld = f.create_inst(ld);
                        place.push((t, ld));
                        ld
                    }
                    None => f.append_inst(pred, ld),
                }
            } else {
                let ld = f.create_inst(ld);
                place.push((user, ld));
                ld
            };
            repl.push((Use { user, index: k as u32 }, Value::Inst(ld)));
        }
        retarget.push((def, repl));
    }
    f.insert_before_each(&place);
    for (def, repl) in retarget {
        f.replace_uses(Value::Inst(def), &repl);
    }
    Ok(defs.len())
}

#[cfg(test)]
mod tests {
    use super::{repair_dominance, undemotable_values_stay_local};
    use xir::interp::{run_kernel, Inputs};
    use xir::{Module, Opcode};

    const SRC: &str = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 100 : bool
  cond_br %c, true ^a, false ^b
^a:
  %x = mul %t, u32 5 : u32
  br target ^join
^b:
  br target ^join
^join:
  %p = phi [%x, ^a], [%x, ^b] : u32
  %y = add %x, u32 1 : u32
  %z = add %y, %p : u32
  buffer.write %out, %t, %z
  return
}
"#;

    fn count(m: &Module, op: Opcode) -> usize {
        let f = &m.functions[0];
        f.all_insts().filter(|&(_, i)| f.opcode(i) == op).count()
    }

    // Check that a value reaching a use and a Phi incoming it no longer
    // dominates (the static path through ^b is never taken) gets one slot,
    // one store after its definition and one load per such use, placed
    // where the verifier accepts them, with the same results.
    #[test]
    fn demotes_non_dominating_value_once() {
        let mut m = xir::text::parse_module(SRC, "repair.xir").expect("parses");
        let inputs =
            Inputs::from_json(r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#).expect("inputs");
        let k = m.find_function("k").expect("kernel");
        let before = run_kernel(&m, k, &inputs).expect("runs before");
        let Module { types, functions, .. } = &mut m;
        assert_eq!(repair_dominance(types, &mut functions[0]).expect("demotable"), 1);
        let diags = xir::verify::verify_module(&m);
        let text = xir::text::print_module(&m);
        assert!(diags.is_empty(), "{}\n{text}", xir::diag::render(&diags));
        assert_eq!((count(&m, Opcode::Alloca), count(&m, Opcode::Store), count(&m, Opcode::Load)), (1, 1, 2), "{text}");
        assert!(text.contains("%x.slot = alloca"), "{text}");
        let after = run_kernel(&m, k, &inputs).expect("runs after");
        assert_eq!(before.buffers, after.buffers);
        let expect: Vec<String> = (0..8).map(|t| (10 * t + 1).to_string()).collect();
        assert_eq!(after.buffers["out"].to_string(), format!("[{}]", expect.join(",")), "{text}");
    }

    // Check which functions count as safe for an in-place rewrite: data
    // values may cross blocks; a reference may cross blocks only out of a
    // kept entry block.
    #[test]
    fn undemotable_values_staying_local() {
        let src = |tail: &str| {
            format!(
                r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {{
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %arr = alloca : array<array<u32, 2>, 8>
  %p0 = gep %arr, %t : array<u32, 2>
  br target ^a
^a:
  %p = gep %p0, u32 0 : u32
  store %p, %t
  %x = add %t, u32 1 : u32
  br target ^b
^b:
  {tail}
  return
}}
"#
            )
        };
        let safe = |tail: &str, entry_kept: bool| {
            let m = xir::text::parse_module(&src(tail), "local.xir").expect("parses");
            let d = xir::verify::verify_module(&m);
            assert!(d.is_empty(), "{tail}: {}", xir::diag::render(&d));
            undemotable_values_stay_local(&m.types, &m.functions[0], entry_kept)
        };
        assert!(safe("buffer.write %out, %t, %x", true));
        assert!(!safe("buffer.write %out, %t, %x", false), "entry references used in ^a");
        assert!(!safe("store %p, %x", true), "a reference defined in ^a is used in ^b");
    }
}
