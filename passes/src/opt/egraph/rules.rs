//! Rewrite rules as data: `passes/rules/algebraic.ron` (or a file named by
//! the `rules_file` option) is parsed and checked when the pass is built, so
//! a malformed rule is a pipeline load error, never a run-time panic.
//!
//! A rule names its law, its patterns (egg s-expressions over opcode
//! spellings, `?vars` and literals), the types it holds for (`Int`, `Float`
//! or `Any`), whether it needs fast math, and side conditions (`const ?c`:
//! the variable's class is a known constant). Literals are untyped in the
//! file and instantiated per e-graph type: integers are truncated to the
//! width (so `-1` is all ones), floats (spelled with a `.`, or `inf`,
//! `-inf`) are rounded to the format.

use egg::{ConditionalApplier, EGraph, Id, Pattern, Rewrite, Subst, Var};
use serde::Deserialize;
use xir::pass::FileError;
use xir::{FloatFormat, Span, Type, TypeId, TypeTable};

use super::lang::{ConstFold, XNode};

/// The shipped rule set.
pub const BUILTIN: &str = include_str!("../../../rules/algebraic.ron");

/// The type classes a rule holds for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
pub enum Types {
    Int,
    Float,
    Any,
}

/// One entry of the rules file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// kebab-case, unique.
    pub name: String,
    /// The law the rule states, for people.
    pub law: String,
    pub lhs: String,
    pub rhs: String,
    pub types: Types,
    pub fast_math_only: bool,
    /// Side conditions: `const ?v`.
    #[serde(default)]
    pub when: Vec<String>,
}

/// The scalar class of an e-graph's type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int { bits: u32 },
    F32,
    F64,
}

impl Scalar {
    /// The class of `ty`, when the simplifier handles that type.
    pub fn of(types: &TypeTable, ty: TypeId) -> Option<Scalar> {
        match types.get(ty) {
            Type::Int { bits, .. } => Some(Scalar::Int { bits: *bits as u32 }),
            Type::Float(FloatFormat::F32) => Some(Scalar::F32),
            Type::Float(FloatFormat::F64) => Some(Scalar::F64),
            _ => None,
        }
    }
    fn is_int(self) -> bool {
        matches!(self, Scalar::Int { .. })
    }
}

/// A checked rule set.
#[derive(Clone, Debug)]
pub struct RuleSet {
    pub rules: Vec<RuleSpec>,
}

impl RuleSet {
    /// Parse and check a rules file (`file` names it in errors, which point
    /// at the RON syntax error or at the rule's name).
    pub fn parse(src: &str, file: &str) -> Result<RuleSet, FileError> {
        let rules: Vec<RuleSpec> = ron::Options::default().from_str(src).map_err(|e| FileError {
            file: file.to_string(),
            span: Some(Span::new(e.span.start.line as u32, e.span.start.col as u32)),
            message: e.code.to_string(),
        })?;
        let mut seen = std::collections::HashSet::new();
        let mut from = 0;
        for (k, r) in rules.iter().enumerate() {
            // Rules come in file order, so the k-th name is the first
            // occurrence of the quoted name after the previous one.
            let quoted = format!("{:?}", r.name);
            let found = src[from..].find(&quoted).map(|n| from + n);
            from = found.map_or(from, |n| n + quoted.len());
            let fail = |what: String| FileError {
                file: file.to_string(),
                span: found.map(|n| span_at(src, n, quoted.len())),
                message: format!("rule #{k} `{}`: {what}", r.name),
            };
            if !is_kebab(&r.name) {
                return Err(fail("the name must be kebab-case (`add-zero`)".into()));
            }
            if !seen.insert(r.name.clone()) {
                return Err(fail("duplicate rule name".into()));
            }
            if r.law.trim().is_empty() {
                return Err(fail("`law` must state the identity the rule relies on".into()));
            }
            let probes: &[Scalar] = match r.types {
                Types::Int => &[Scalar::Int { bits: 32 }],
                Types::Float => &[Scalar::F32],
                Types::Any => &[Scalar::Int { bits: 32 }, Scalar::F32],
            };
            for &s in probes {
                compile(r, s).map_err(fail)?;
            }
        }
        Ok(RuleSet { rules })
    }

    /// The rewrites for an e-graph of scalar class `s`.
    pub fn rewrites(&self, s: Scalar, fast_math: bool) -> Vec<Rewrite<XNode, ConstFold>> {
        self.rules
            .iter()
            .filter(|r| fast_math || !r.fast_math_only)
            .filter(|r| match r.types {
                Types::Any => true,
                Types::Int => s.is_int(),
                Types::Float => !s.is_int(),
            })
            // Every rule compiled at load for a probe type of its class;
            // literals that fit the probe fit every type of the class.
            .filter_map(|r| compile(r, s).ok())
            .collect()
    }
}

/// The span of `len` bytes at byte `offset` of `src`.
fn span_at(src: &str, offset: usize, len: usize) -> Span {
    let before = &src[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before[before.rfind('\n').map_or(0, |n| n + 1)..].chars().count() as u32 + 1;
    Span::with_len(line, col, len as u32)
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Replace literal tokens by `#bits` of class `s`.
fn instantiate(pattern: &str, s: Scalar) -> Result<String, String> {
    let spaced = pattern.replace('(', " ( ").replace(')', " ) ");
    let mut out = Vec::new();
    for tok in spaced.split_whitespace() {
        let lit =
            tok.starts_with(|c: char| c.is_ascii_digit()) || (tok.starts_with('-') && tok.len() > 1) || tok == "inf";
        if !lit {
            out.push(tok.to_string());
            continue;
        }
        let is_float = tok.contains('.') || tok.ends_with("inf");
        let bits = match s {
            Scalar::Int { bits } => {
                if is_float {
                    return Err(format!("float literal `{tok}` in a rule that holds for integers"));
                }
                let v: i128 = tok.parse().map_err(|_| format!("bad integer literal `{tok}`"))?;
                let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                (v as u64) & mask
            }
            Scalar::F32 | Scalar::F64 => {
                if !is_float {
                    return Err(format!("integer literal `{tok}` in a rule that holds for floats (write `{tok}.0`)"));
                }
                let v: f64 = tok.parse().map_err(|_| format!("bad float literal `{tok}`"))?;
                if s == Scalar::F32 {
                    if (v as f32) as f64 != v && !v.is_nan() {
                        return Err(format!("float literal `{tok}` is not exact in f32"));
                    }
                    (v as f32).to_bits() as u64
                } else {
                    v.to_bits()
                }
            }
        };
        out.push(format!("#{bits}"));
    }
    Ok(out.join(" ").replace("( ", "(").replace(" )", ")"))
}

/// Build the egg rewrite of `r` for class `s`.
fn compile(r: &RuleSpec, s: Scalar) -> Result<Rewrite<XNode, ConstFold>, String> {
    let lhs: Pattern<XNode> = instantiate(&r.lhs, s)?.parse().map_err(|e| format!("lhs `{}`: {e}", r.lhs))?;
    let rhs: Pattern<XNode> = instantiate(&r.rhs, s)?.parse().map_err(|e| format!("rhs `{}`: {e}", r.rhs))?;
    if lhs.ast.as_ref().len() == 1 && matches!(lhs.ast.as_ref()[0], egg::ENodeOrVar::Var(_)) {
        return Err("the lhs cannot be a bare variable".into());
    }
    let lhs_vars = lhs.vars();
    let mut consts: Vec<Var> = Vec::new();
    for w in &r.when {
        let mut it = w.split_whitespace();
        match (it.next(), it.next(), it.next()) {
            (Some("const"), Some(v), None) => {
                let var: Var = v.parse().map_err(|_| format!("bad variable `{v}` in condition `{w}`"))?;
                if !lhs_vars.contains(&var) {
                    return Err(format!("condition `{w}` names `{v}`, which the lhs does not bind"));
                }
                consts.push(var);
            }
            _ => return Err(format!("unknown condition `{w}` (known: `const ?v`)")),
        }
    }
    let applier = ConditionalApplier { condition: IsConst(consts), applier: rhs };
    Rewrite::new(r.name.clone(), lhs, applier)
}

/// Condition: every listed variable's class is a known constant.
struct IsConst(Vec<Var>);

impl egg::Condition<XNode, ConstFold> for IsConst {
    fn check(&self, egraph: &mut EGraph<XNode, ConstFold>, _eclass: Id, subst: &Subst) -> bool {
        self.0.iter().all(|v| egraph[subst[*v]].data.is_some())
    }
}
