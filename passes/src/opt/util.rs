//! Helpers shared by the optimization passes.

use rustc_hash::FxHashSet;
use xir::{Function, Opcode, Value};

/// Replace every use of `old` by `new` unless that would make a Phi refer to
/// itself through Phi incomings (`%p = phi [.., %p]`, directly or around a
/// cycle of Phis). Such Phis are valid SSA but the audited dialects forbid
/// them (`no_self_referential_values`), and a pass that keeps the dialect
/// must not create one. Returns whether the replacement was made.
pub fn replace_uses_keeping_phis_acyclic(f: &mut Function, old: Value, new: Value) -> bool {
    if old == new {
        return false;
    }
    let is_phi = |f: &Function, v: Value| v.as_inst().is_some_and(|i| f.opcode(i) == Opcode::Phi);
    if is_phi(f, new) {
        // Phis that would receive `new` as an incoming.
        let targets: FxHashSet<Value> =
            f.uses(old).iter().filter(|u| f.opcode(u.user) == Opcode::Phi).map(|u| Value::Inst(u.user)).collect();
        if !targets.is_empty() {
            // Phis reachable from `new` through Phi incomings, reading `old` as `new`.
            let mut seen: FxHashSet<Value> = FxHashSet::default();
            let mut work = vec![new];
            while let Some(v) = work.pop() {
                if targets.contains(&v) {
                    return false;
                }
                if !seen.insert(v) {
                    continue;
                }
                let i = v.as_inst().expect("a phi is an instruction");
                for &op in &f.inst(i).operands {
                    let op = if op == old { new } else { op };
                    if is_phi(f, op) {
                        work.push(op);
                    }
                }
            }
        }
    }
    f.replace_all_uses(old, new);
    true
}
