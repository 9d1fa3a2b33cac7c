//! Derivative rules as data: `passes/rules/derivatives.ron` gives, for each
//! differentiable opcode, one s-expression per operand: that operand's
//! adjoint contribution in terms of the primal operands (`a b c`), the
//! primal result (`r`), the result's adjoint (`g`) and float literals. The
//! file is parsed (by egg's s-expression reader) and checked once; a rule
//! naming an unknown opcode or symbol, or with the wrong number of
//! adjoints, is an error of the file, never a run-time surprise.

use std::sync::OnceLock;

use egg::{RecExpr, SymbolLang};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use xir::Opcode;

/// The shipped rule file.
pub const BUILTIN: &str = include_str!("../../rules/derivatives.ron");

/// The shape of an operand, for rules that depend on it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
pub enum Shape {
    Scalar,
    Vector,
    Matrix,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    op: String,
    #[serde(default)]
    form: Option<Vec<Shape>>,
    adjoints: Vec<Option<String>>,
    #[allow(dead_code)]
    law: String,
}

/// One checked rule.
#[derive(Debug)]
pub struct Rule {
    pub op: Opcode,
    /// The operand shapes it is for (`None`: every shape).
    pub form: Option<Vec<Shape>>,
    /// One per operand; `None` where no gradient flows.
    pub adjoints: Vec<Option<RecExpr<SymbolLang>>>,
}

/// A symbol of a rule expression.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Leaf {
    /// A primal operand (`a`, `b`, `c`).
    Operand(usize),
    /// The primal result `r`.
    Result,
    /// The result's adjoint `g`.
    Adjoint,
    /// A float literal.
    Literal(f64),
}

/// The number of fixed operands of `op` (the spec's operand list).
pub fn arity(op: Opcode) -> usize {
    xir_spec::spec().op(op).spec.operands.len()
}

/// Classify a leaf symbol.
pub fn leaf(sym: &str) -> Option<Leaf> {
    Some(match sym {
        "a" => Leaf::Operand(0),
        "b" => Leaf::Operand(1),
        "c" => Leaf::Operand(2),
        "r" => Leaf::Result,
        "g" => Leaf::Adjoint,
        s if s.contains('.') => Leaf::Literal(s.parse().ok()?),
        _ => return None,
    })
}

/// Why a rule file is refused: the entry and what is wrong with it.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct RuleFileError(pub String);

/// The rule table.
#[derive(Debug, Default)]
pub struct Rules {
    by_op: FxHashMap<Opcode, Vec<Rule>>,
}

impl Rules {
    /// The shipped rules (checked by a test, so this cannot fail in a
    /// build that passed its tests; a failure here is a packaging error).
    pub fn builtin() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| Rules::parse(BUILTIN).unwrap_or_else(|e| panic!("passes/rules/derivatives.ron: {e}")))
    }

    /// Parse and check a rule file.
    pub fn parse(src: &str) -> Result<Rules, RuleFileError> {
        Self::parse_entries(src).map_err(RuleFileError)
    }

    fn parse_entries(src: &str) -> Result<Rules, String> {
        let specs: Vec<RuleSpec> = ron::from_str(src).map_err(|e| e.to_string())?;
        let mut rules = Rules::default();
        for s in specs {
            let op = Opcode::from_name(&s.op).ok_or_else(|| format!("unknown opcode `{}`", s.op))?;
            let arity = self::arity(op);
            if s.adjoints.len() != arity {
                return Err(format!("`{}` has {arity} operands but {} adjoints", s.op, s.adjoints.len()));
            }
            if let Some(form) = &s.form {
                if form.len() != arity {
                    return Err(format!("`{}`: the form names {} shapes for {arity} operands", s.op, form.len()));
                }
            }
            let mut adjoints = Vec::new();
            for a in s.adjoints {
                let Some(text) = a else {
                    adjoints.push(None);
                    continue;
                };
                let e: RecExpr<SymbolLang> = text.parse().map_err(|e| format!("`{}`: `{text}`: {e}", s.op))?;
                for n in e.as_ref() {
                    let sym = n.op.as_str();
                    if n.children.is_empty() {
                        match leaf(sym) {
                            Some(Leaf::Operand(k)) if k >= arity => {
                                return Err(format!("`{}`: `{sym}` names operand {k} of {arity}", s.op))
                            }
                            Some(_) => {}
                            None => return Err(format!("`{}`: unknown symbol `{sym}` in `{text}`", s.op)),
                        }
                    } else {
                        let o = Opcode::from_name(sym).ok_or_else(|| format!("`{}`: unknown opcode `{sym}`", s.op))?;
                        let want = self::arity(o);
                        if n.children.len() != want {
                            return Err(format!(
                                "`{}`: `{sym}` takes {want} operands, given {}",
                                s.op,
                                n.children.len()
                            ));
                        }
                    }
                }
                adjoints.push(Some(e));
            }
            rules.by_op.entry(op).or_default().push(Rule { op, form: s.form, adjoints });
        }
        Ok(rules)
    }

    /// The rule for `op` on operands of these shapes.
    pub fn find(&self, op: Opcode, shapes: &[Shape]) -> Option<&Rule> {
        self.by_op.get(&op)?.iter().find(|r| r.form.as_ref().is_none_or(|f| f == shapes))
    }

    /// Every opcode with a rule.
    pub fn opcodes(&self) -> impl Iterator<Item = Opcode> + '_ {
        self.by_op.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_rules_parse() {
        let r = Rules::parse(BUILTIN).unwrap();
        assert!(r.find(Opcode::Mul, &[Shape::Scalar, Shape::Scalar]).is_some());
        assert!(r.find(Opcode::MatrixLinalgMul, &[Shape::Vector, Shape::Matrix]).is_some());
        assert!(r.find(Opcode::MatrixLinalgMul, &[Shape::Vector, Shape::Vector]).is_none());
    }

    #[test]
    fn malformed_rules_are_refused() {
        let bad = |src: &str| Rules::parse(src).unwrap_err().0;
        assert_eq!(bad(r#"[(op: "nope", adjoints: [], law: "")]"#), "unknown opcode `nope`");
        assert_eq!(
            bad(r#"[(op: "neg", adjoints: [Some("g"), Some("g")], law: "")]"#),
            "`neg` has 1 operands but 2 adjoints"
        );
        assert_eq!(
            bad(r#"[(op: "neg", adjoints: [Some("(neg z)")], law: "")]"#),
            "`neg`: unknown symbol `z` in `(neg z)`"
        );
        assert_eq!(bad(r#"[(op: "neg", adjoints: [Some("(mul g b)")], law: "")]"#), "`neg`: `b` names operand 1 of 1");
        assert_eq!(
            bad(r#"[(op: "neg", adjoints: [Some("(mul g)")], law: "")]"#),
            "`neg`: `mul` takes 2 operands, given 1"
        );
    }
}
