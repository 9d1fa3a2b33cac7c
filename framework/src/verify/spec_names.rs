//! The link between the spec's names and their Rust meaning: every operand
//! class, result rule, constraint, type rule and dialect invariant the spec
//! names must have an implementation here, or the spec is rejected with the
//! RON file's position of the unknown name.

use xir_spec::{Spec, SpecError};

use super::{classes, constraints, results, types};
use crate::dialect::invariants;

/// Block-list continuations (`variadic_blocks`) the verifier understands.
pub const VARIADIC_BLOCKS: &[&str] = &["cases", "incoming"];
/// Payload kinds (`payload`) the IR can carry.
pub const PAYLOADS: &[&str] = &["cases", "text"];

/// Check that every rule name used by `spec` is implemented.
pub fn check_spec_names(spec: &Spec) -> Result<(), SpecError> {
    let src = &spec.sources.opcodes;
    for info in spec.ops() {
        let s = &info.spec;
        let missing = |item: &str, what: &str| {
            SpecError::at_in_entry(
                src,
                &s.name,
                item,
                format!("{what} `{item}` of opcode `{}` has no implementation", s.name),
            )
        };
        for o in s.operands.iter().chain(s.variadic.as_ref()) {
            if classes::lookup(&o.class).is_none() {
                return Err(missing(&o.class, "operand class"));
            }
        }
        if results::lookup(&s.result).is_none() {
            return Err(missing(&s.result, "result rule"));
        }
        for c in s.constraints.iter() {
            if constraints::lookup(c).is_none() {
                return Err(missing(c, "constraint"));
            }
        }
        if let Some(v) = &s.variadic_blocks {
            if !VARIADIC_BLOCKS.contains(&&**v) {
                return Err(missing(v, "block-list continuation"));
            }
        }
        if let Some(p) = &s.payload {
            if !PAYLOADS.contains(&&**p) {
                return Err(missing(p, "payload kind"));
            }
        }
    }
    for k in &spec.types {
        for r in k.rules.iter() {
            if types::lookup(r).is_none() {
                return Err(SpecError::at_in_entry(
                    &spec.sources.types,
                    &k.name,
                    r,
                    format!("type rule `{r}` of type kind `{}` has no implementation", k.name),
                ));
            }
        }
    }
    for d in &spec.dialects {
        for inv in d.spec.invariants.iter().chain(d.spec.drop_invariants.iter()) {
            if invariants::lookup(inv).is_none() {
                return Err(SpecError::at_in_entry(
                    &spec.sources.dialects,
                    &d.name,
                    inv,
                    format!("invariant `{inv}` of dialect `{}` has no implementation", d.name),
                ));
            }
        }
    }
    Ok(())
}

/// One opcode's rules, resolved from the spec's names: the verifier runs
/// them for every instruction, and finding each by name there (a scan of
/// the rule tables, a string compare per entry) cost more than the rules.
/// `None` marks a name without an implementation, which
/// [`check_spec_names`] refuses for any spec it admits.
pub(super) struct OpRules {
    /// The class of each fixed operand slot, then of the variadic tail.
    pub operands: Vec<Option<&'static classes::OperandClass>>,
    pub variadic: Option<Option<&'static classes::OperandClass>>,
    pub result: Option<results::ResultRule>,
    pub constraints: Vec<(&'static str, Option<constraints::Constraint>)>,
}

/// The resolved rules of `op` under the built-in spec, built once per process.
pub(super) fn op_rules(op: xir_spec::Opcode) -> &'static OpRules {
    static RULES: std::sync::OnceLock<Vec<OpRules>> = std::sync::OnceLock::new();
    let all = RULES.get_or_init(|| {
        xir_spec::spec()
            .ops()
            .iter()
            .map(|info| {
                let s = &info.spec;
                OpRules {
                    operands: s.operands.iter().map(|o| classes::lookup(&o.class)).collect(),
                    variadic: s.variadic.as_ref().map(|o| classes::lookup(&o.class)),
                    result: results::lookup(&s.result),
                    constraints: s.constraints.iter().map(|c| (&**c, constraints::lookup(c))).collect(),
                }
            })
            .collect()
    });
    &all[op.index()]
}
