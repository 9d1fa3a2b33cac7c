//! The generator's plan for one dialect of one spec: an instruction
//! template for every signature the generator can build of every opcode
//! the dialect allows, and the opcodes it skips, each with the rule that
//! excluded it. Derived from the spec entries alone (operand classes,
//! result rule, constraints, traits, block roles, payload, `undefined`),
//! checked through [`Probe`], so a new opcode entry gets templates with no
//! generator code.

use xir_spec::{OpData, SpecData, Trait};

use super::probe::{leak_info, Probe};
use super::universe::{universe, Ty};
use super::{build, guard};

/// One operand slot of a template.
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    /// Any value of this type.
    Value(Ty),
    /// An index: a constant of this type, one of `values` (the ones the
    /// opcode's constraints accept, so paths and lanes are in bounds).
    Const(Ty, Vec<u64>),
}

/// One signature of one opcode the generator can emit.
#[derive(Clone, Debug)]
pub struct Template {
    /// Position of the opcode in the spec's opcode list.
    pub op: usize,
    pub name: String,
    pub operands: Vec<Slot>,
    /// `None`: no result.
    pub result: Option<Ty>,
    /// The spec's `undefined` conditions, each guarded in safe mode.
    pub undefined: Vec<String>,
    /// The spec traits `transcendental` (devices differ within a bound).
    pub transcendental: bool,
}

/// An opcode of the dialect the generator does not emit, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skip {
    pub name: String,
    pub reason: String,
}

/// Templates and skips of one dialect.
#[derive(Clone, Debug)]
pub struct Plan {
    pub dialect: String,
    pub universe: Vec<Ty>,
    pub templates: Vec<Template>,
    pub skipped: Vec<Skip>,
    /// Signatures the verifier admits but the interpreter refuses (left
    /// out of `templates`), with the interpreter's message.
    pub refused: Vec<(String, String)>,
    /// Whether the dialect's control flow is structured (`if`, `loop`)
    /// rather than raw branches; `None` if it has neither.
    pub structured: Option<bool>,
}

/// Classes whose operands are indices: in templates they are constants the
/// constraints accept (in-bounds paths and lanes), never run-time values.
const INDEX_CLASSES: &[&str] = &["index", "const_index"];
/// Extra variadic operands tried (a variadic tail takes one type).
const MAX_TAIL: usize = 3;
/// Index constants tried per index slot.
const INDEX_VALUES: u64 = 4;
/// Operand tuples probed per opcode, at most.
const MAX_TUPLES: usize = 20_000;

impl Plan {
    /// Derive the plan of `dialect` in `spec`; `Err` for an unknown dialect.
    pub fn derive(spec: &SpecData, dialect: &str) -> Result<Plan, String> {
        let d = spec.dialect(dialect).ok_or_else(|| format!("unknown dialect `{dialect}`"))?;
        let universe = universe(d);
        let mut probe = Probe::new(&universe);
        let mut templates = Vec::new();
        let mut skipped = Vec::new();
        let mut refused = Vec::new();
        let allows = |name: &str| spec.dialect_ops(d).any(|o| o.spec.name == name);
        let structured = if allows("if") && allows("loop") {
            Some(true)
        } else if allows("cond_br") && allows("br") {
            Some(false)
        } else {
            None
        };
        for i in d.ops.indices() {
            let Some(o) = spec.ops.get(i) else { continue };
            let mut runs = Vec::new();
            match templates_of(&mut probe, &universe, i, o) {
                Ok(ts) => {
                    for t in ts {
                        match build::interpreter_runs(&t) {
                            Ok(()) => runs.push(t),
                            Err(e) => refused.push((format!("{} {:?} -> {:?}", t.name, t.operands, t.result), e)),
                        }
                    }
                    if runs.is_empty() {
                        let reason = "the interpreter refuses every signature that verifies".to_string();
                        skipped.push(Skip { name: o.spec.name.to_string(), reason });
                    }
                    templates.append(&mut runs);
                }
                Err(reason) => skipped.push(Skip { name: o.spec.name.to_string(), reason }),
            }
        }
        Ok(Plan { dialect: dialect.to_string(), universe, templates, skipped, refused, structured })
    }

    /// Names of the opcodes with at least one template, in spec order.
    pub fn generated(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.templates.iter().map(|t| t.name.as_str()).collect();
        v.dedup();
        v
    }

    /// The skip reason of `name`, if it is skipped.
    pub fn skip_reason(&self, name: &str) -> Option<&str> {
        self.skipped.iter().find(|s| s.name == name).map(|s| s.reason.as_str())
    }
}

/// Every template of one opcode, or the rule that excludes it.
fn templates_of(probe: &mut Probe, universe: &[Ty], op: usize, o: &OpData) -> Result<Vec<Template>, String> {
    let s = &o.spec;
    if o.has(Trait::Terminator) || !s.blocks.is_empty() || s.variadic_blocks.is_some() {
        return Err("control flow: terminators and block operands belong to the program skeleton".into());
    }
    if let Some(p) = &s.payload {
        return Err(format!("carries a `{p}` payload"));
    }
    if !o.has(Trait::Pure) {
        let traits = if s.traits.is_empty() { "none".to_string() } else { s.traits.join(", ") };
        return Err(format!("not `pure` (traits: {traits}): it reads or changes state the generator does not model"));
    }
    if o.has(Trait::Lvalue) {
        return Err("its result is an lvalue (an address), not a value".into());
    }
    if let Some(u) = s.undefined.iter().find(|u| guard::lookup(u).is_none()) {
        return Err(format!("undefined condition `{u}` has no guard"));
    }
    let info = leak_info(o);
    let results: Vec<Option<Ty>> = std::iter::once(None).chain(universe.iter().map(|&t| Some(t))).collect();
    let tails: Vec<usize> = if s.variadic.is_some() { (0..=MAX_TAIL).collect() } else { vec![0] };
    let mut out = Vec::new();
    let mut empty_class = None;
    for tail in tails {
        let mut classes: Vec<(&str, &str)> = s.operands.iter().map(|x| (&*x.name, &*x.class)).collect();
        if let Some(v) = &s.variadic {
            classes.extend(std::iter::repeat_n((&*v.name, &*v.class), tail));
        }
        // Candidates per slot: (type, is an index constant).
        let mut cands: Vec<Vec<(Ty, bool)>> = Vec::new();
        for &(name, class) in &classes {
            let index = INDEX_CLASSES.contains(&class);
            let mut c = Vec::new();
            for &t in universe {
                if index && t != Ty::U32 {
                    continue;
                }
                if probe.class_accepts(info, class, t, index).map_err(|e| format!("{} has no implementation", e.0))? {
                    c.push((t, index));
                }
            }
            if c.is_empty() {
                empty_class = Some(format!(
                    "operand `{name}` (class `{class}`): no value of the generator's types belongs to it"
                ));
                break;
            }
            cands.push(c);
        }
        if cands.len() < classes.len() {
            continue;
        }
        let nfixed = s.operands.len();
        for tuple in tuples(&cands, nfixed) {
            for &r in &results {
                let ops: Vec<(Ty, Option<u64>)> = tuple.iter().map(|&(t, k)| (t, k.then_some(0))).collect();
                if !probe.signature_ok(info, &ops, r).map_err(|e| format!("{} has no implementation", e.0))? {
                    continue;
                }
                let mut slots = Vec::new();
                for (k, &(t, konst)) in tuple.iter().enumerate() {
                    if !konst {
                        slots.push(Slot::Value(t));
                        continue;
                    }
                    let mut ok = Vec::new();
                    for v in 0..INDEX_VALUES {
                        let mut trial = ops.clone();
                        trial[k].1 = Some(v);
                        if probe.signature_ok(info, &trial, r).unwrap_or(false) {
                            ok.push(v);
                        }
                    }
                    slots.push(Slot::Const(t, ok));
                }
                out.push(Template {
                    op,
                    name: s.name.to_string(),
                    operands: slots,
                    result: r,
                    undefined: s.undefined.iter().map(|u| u.to_string()).collect(),
                    transcendental: o.has(Trait::Transcendental),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(empty_class.unwrap_or_else(|| {
            "no signature over the generator's types passes its result rule and constraints".into()
        }));
    }
    Ok(out)
}

/// The operand tuples to probe: the product of the fixed slots'
/// candidates, each with a variadic tail of one candidate repeated; at
/// most `MAX_TUPLES`.
fn tuples(cands: &[Vec<(Ty, bool)>], nfixed: usize) -> Vec<Vec<(Ty, bool)>> {
    let mut out: Vec<Vec<(Ty, bool)>> = vec![Vec::new()];
    for c in &cands[..nfixed.min(cands.len())] {
        let mut next = Vec::new();
        for prefix in &out {
            for &x in c {
                if next.len() >= MAX_TUPLES {
                    break;
                }
                let mut p = prefix.clone();
                p.push(x);
                next.push(p);
            }
        }
        out = next;
    }
    if cands.len() > nfixed {
        let tail = cands.len() - nfixed;
        let mut next = Vec::new();
        for prefix in &out {
            for &x in &cands[nfixed] {
                let mut p = prefix.clone();
                p.extend(std::iter::repeat_n(x, tail));
                next.push(p);
            }
        }
        out = next;
    }
    out
}
