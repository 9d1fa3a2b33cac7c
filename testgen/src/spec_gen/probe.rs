//! Asks the verifier's own rule implementations whether a signature is
//! well formed: the operand classes, result rule and constraints an opcode's
//! spec entry names are looked up by name in `xir::verify` and run on a
//! trial instruction. The generator therefore knows nothing about
//! individual opcodes; what verifies here is what it may emit.
//!
//! The trial instruction's `Opcode` is the compiled one of the same name,
//! or a stand-in for an opcode this build lacks (a spec copy's new entry):
//! the rules read the operands, the result type and the spec entry (the
//! `OpInfo` handed to them), never the stand-in.

use std::collections::HashMap;

use xir::ir::{ArgKind, FuncId, Function, FunctionKind, InstData, Metadata, Module, Opcode, TypeId, TypeTable, Value};
use xir::verify::{classes, constraints, results, InstCx};
use xir_spec::{OpData, OpInfo};

use super::universe::Ty;

/// A module holding one value of every universe type, and the trial
/// instructions built on them.
pub struct Probe {
    m: Module,
    f: FuncId,
    values: HashMap<Ty, Value>,
    ids: HashMap<Ty, TypeId>,
    class_cache: HashMap<(String, Ty, bool), bool>,
}

/// Why a probe could not run a rule.
#[derive(Debug)]
pub struct Unimplemented(pub String);

impl Probe {
    pub fn new(universe: &[Ty]) -> Probe {
        let mut m = Module::new();
        m.intern_register_types();
        let mut f = Function::new("probe", FunctionKind::Callable, TypeTable::VOID);
        let mut ids = HashMap::new();
        let mut values = HashMap::new();
        for &t in universe {
            let id = t.intern(&mut m.types);
            ids.insert(t, id);
            values.insert(t, f.add_arg(id, ArgKind::Value, Metadata::default()));
        }
        f.add_block();
        let fid = m.add_function(f);
        Probe { m, f: fid, values, ids, class_cache: HashMap::new() }
    }

    /// A value of `t`: the argument, or the integer constant `k`.
    fn value(&mut self, t: Ty, konst: Option<u64>) -> Value {
        match konst {
            Some(k) => {
                let id = self.ids[&t];
                self.m.const_int(id, k as i128)
            }
            None => self.values[&t],
        }
    }

    /// A trial instruction of `info`'s opcode (or its stand-in).
    fn trial(&mut self, info: &OpInfo, operands: &[Value], result: TypeId) -> xir::ir::Inst {
        let mut d = InstData::new(info.opcode, result);
        d.operands = operands.iter().copied().collect();
        self.m.func_mut(self.f).create_inst(d)
    }

    /// Whether a value of `t` (a constant when `konst`) belongs to operand class `class`.
    pub fn class_accepts(
        &mut self,
        info: &'static OpInfo,
        class: &str,
        t: Ty,
        konst: bool,
    ) -> Result<bool, Unimplemented> {
        let key = (class.to_string(), t, konst);
        if let Some(&ok) = self.class_cache.get(&key) {
            return Ok(ok);
        }
        let c = classes::lookup(class).ok_or_else(|| Unimplemented(format!("operand class `{class}`")))?;
        let v = self.value(t, konst.then_some(0));
        let i = self.trial(info, &[v], TypeTable::VOID);
        let f = self.m.func(self.f);
        let cx = InstCx { module: &self.m, func: f, inst: i, data: f.inst(i), info };
        let ok = (c.test)(&cx, v);
        self.class_cache.insert(key, ok);
        Ok(ok)
    }

    /// Whether operands `ops` (type, constant value for index slots) with
    /// result `result` pass `info`'s result rule and every constraint.
    pub fn signature_ok(
        &mut self,
        info: &'static OpInfo,
        ops: &[(Ty, Option<u64>)],
        result: Option<Ty>,
    ) -> Result<bool, Unimplemented> {
        let values: Vec<Value> = ops.iter().map(|&(t, k)| self.value(t, k)).collect();
        let rid = result.map_or(TypeTable::VOID, |t| self.ids[&t]);
        let i = self.trial(info, &values, rid);
        let f = self.m.func(self.f);
        let cx = InstCx { module: &self.m, func: f, inst: i, data: f.inst(i), info };
        let rule = results::lookup(&info.spec.result)
            .ok_or_else(|| Unimplemented(format!("result rule `{}`", info.spec.result)))?;
        if rule(&cx).is_err() {
            return Ok(false);
        }
        for c in info.spec.constraints.iter() {
            let rule = constraints::lookup(c).ok_or_else(|| Unimplemented(format!("constraint `{c}`")))?;
            if rule(&cx).is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The `OpInfo` the rules are handed for `o`: the compiled opcode of its
/// name, or a stand-in for one this build lacks. Leaked: a plan is derived
/// once per spec, and `InstCx` wants a `'static` entry.
pub fn leak_info(o: &OpData) -> &'static OpInfo {
    let opcode = Opcode::from_name(&o.spec.name).unwrap_or(Opcode::Aggregate);
    Box::leak(Box::new(OpInfo { opcode, spec: o.spec.clone(), traits: o.traits }))
}
