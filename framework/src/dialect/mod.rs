//! The spec-driven dialect checker: whether a module lies in a dialect of
//! `dialects.ron` — only allowed opcodes, only allowed type kinds, and every
//! invariant the dialect (with its ancestors) demands, each a Rust predicate
//! registered by name in [`invariants`].
//!
//! Diagnostics are named `dialect:<dialect>:opcode`, `dialect:<dialect>:type`
//! and `dialect:<dialect>:<invariant>`; the `verified` invariant reports the
//! generic verifier's own rule names. When the module fails the generic
//! verifier, the other invariants are not evaluated (they assume valid IR).
//!
//! Scope: the whole module (unused functions and orphan blocks included),
//! like the verifier.

pub mod invariants;

use rustc_hash::FxHashMap;
use xir_spec::Dialect;

use crate::diag::{Diagnostic, Rule};
use crate::ir::{Function, Inst, Module, TypeId, TypeTable};
use crate::verify::{inst_diag, type_name};

/// Check `m` against dialect `d`; an empty list means `m` is in `d`.
pub fn check_module(m: &Module, d: &Dialect) -> Vec<Diagnostic> {
    Checker::new(m).check(d)
}

/// Whether `m` lies in dialect `d`.
pub fn satisfies(m: &Module, d: &Dialect) -> bool {
    check_module(m, d).iter().all(|x| !x.is_error())
}

/// Every dialect of the built-in spec that `m` lies in, in spec order.
pub fn satisfied_dialects(m: &Module) -> Vec<&'static Dialect> {
    let mut checker = Checker::new(m);
    xir_spec::spec().dialects.iter().filter(|d| checker.check(d).iter().all(|x| !x.is_error())).collect()
}

/// Checks one module against several dialects, running the verifier once
/// and each invariant at most once.
pub struct Checker<'m> {
    m: &'m Module,
    verified: Vec<Diagnostic>,
    /// The layout is walkable (no missing block or instruction ids).
    walkable: bool,
    invariants: FxHashMap<xir_spec::schema::Str, Vec<Diagnostic>>,
}

impl<'m> Checker<'m> {
    pub fn new(m: &'m Module) -> Self {
        let verified = crate::verify::verify_module(m);
        let walkable = !verified.iter().any(|d| d.rule == Rule::Layout || d.rule == Rule::TypeIds);
        Checker { m, verified, walkable, invariants: FxHashMap::default() }
    }

    /// The diagnostics of `m` against `d`.
    pub fn check(&mut self, d: &Dialect) -> Vec<Diagnostic> {
        let m = self.m;
        let prefix = format!("dialect:{}", d.name);
        let mut diags = Vec::new();
        if self.walkable {
            for f in &m.functions {
                for (_, i) in f.all_insts() {
                    let op = f.opcode(i);
                    if !d.ops.contains(op) {
                        let msg = format!("`{op}` is not allowed in dialect `{}` ({})", d.name, d.doc);
                        diags.push(inst_diag(f, i, Rule::named(&format!("{prefix}:opcode")), msg));
                    }
                }
            }
            for (ty, (f, at)) in used_types(m) {
                let kind = m.types.kind_name(ty);
                if !d.types.contains(kind) {
                    let f = &m.functions[f];
                    let name = type_name(&m.types, ty);
                    let msg = format!("type `{name}` (kind `{kind}`) is not allowed in dialect `{}`", d.name);
                    let diag = match at {
                        Some(i) => inst_diag(f, i, Rule::named(&format!("{prefix}:type")), msg),
                        None => Diagnostic::error(Rule::named(&format!("{prefix}:type")), msg)
                            .in_function(&f.name)
                            .with_span(f.span),
                    };
                    diags.push(diag);
                }
            }
        }
        if d.invariants.contains("verified") {
            diags.extend(self.verified.iter().cloned());
        }
        if !self.verified.is_empty() {
            // The other invariants assume verified IR.
            return diags;
        }
        for inv in d.invariants.names() {
            if inv == "verified" {
                continue;
            }
            let found = self.invariants.entry(inv.clone()).or_insert_with(|| match invariants::lookup(inv) {
                Some(pred) => pred(m),
                None => vec![Diagnostic::error(Rule::Spec, format!("invariant `{inv}` has no implementation"))],
            });
            for diag in found.iter() {
                let mut diag = diag.clone();
                if diag.rule == **inv {
                    diag.rule = Rule::named(&format!("{prefix}:{inv}"));
                }
                diags.push(diag);
            }
        }
        diags
    }
}

/// The most specific built-in dialect `m` lies in: among those it
/// satisfies, the deepest in the `extends` chain (the first in spec order on
/// a tie). `None` if `m` fails even the generic verifier.
pub fn dialect_of(m: &Module) -> Option<&'static Dialect> {
    let spec = xir_spec::spec();
    let depth = |d: &Dialect| {
        let mut n = 0;
        let mut cur = d.parent;
        while let Some(p) = cur {
            n += 1;
            cur = spec.dialect_by_id(p).parent;
        }
        n
    };
    let mut best: Option<&'static Dialect> = None;
    for d in satisfied_dialects(m) {
        if best.is_none_or(|b| depth(d) > depth(b)) {
            best = Some(d);
        }
    }
    best
}

/// Every type the module's functions use (argument, return, result and
/// operand types, with their members), each with where it is first used:
/// the function index and, if inside a body, the instruction.
pub fn used_types(m: &Module) -> Vec<(TypeId, (usize, Option<Inst>))> {
    let t = &m.types;
    // Dense by type id: asked once per result and operand, and the table
    // is small next to the instructions.
    let mut first: Vec<Option<(usize, Option<Inst>)>> = vec![None; t.len()];
    let mut order = Vec::new();
    let mut stack = Vec::new();
    let mut add = |ty: TypeId, at: (usize, Option<Inst>)| {
        stack.push(ty);
        while let Some(x) = stack.pop() {
            if !t.contains(x) || first[x.index()].is_some() {
                continue;
            }
            first[x.index()] = Some(at);
            order.push(x);
            stack.extend(crate::verify::type_members(t.get(x)));
        }
    };
    for (k, f) in m.functions.iter().enumerate() {
        add(f.ret, (k, None));
        for a in &f.args {
            add(a.ty, (k, None));
        }
        for (_, i) in f.all_insts() {
            add(f.inst(i).ty, (k, Some(i)));
            for &v in &f.inst(i).operands {
                if let Some(ty) = local_type(m, f, v) {
                    add(ty, (k, Some(i)));
                }
            }
        }
    }
    order.into_iter().filter(|&ty| ty != TypeTable::VOID).filter_map(|ty| Some((ty, first[ty.index()]?))).collect()
}

/// The type of an operand if its id is valid.
fn local_type(m: &Module, f: &Function, v: crate::ir::Value) -> Option<TypeId> {
    use crate::ir::Value;
    match v {
        Value::Inst(i) if f.inst_exists(i) => Some(f.inst(i).ty),
        Value::Arg(a) => f.args.get(a as usize).map(|a| a.ty),
        Value::Const(c) if m.consts.contains(c) => Some(m.consts.get(c).ty),
        Value::Undef(t) => Some(t),
        _ => None,
    }
}
