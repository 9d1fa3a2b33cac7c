//! The e-graph language of `algebraic_simplify`: one node per pure
//! arithmetic opcode of the spec (children are e-classes), scalar constants
//! as raw bits, and opaque inputs (values computed outside the expression:
//! arguments, loads, results in other blocks or of other types). One e-graph
//! holds expressions of a single scalar type, so constants and rules need no
//! type annotations.
//!
//! The analysis folds constants with the interpreter's exact semantics
//! (`xir::interp::fold_scalar`); the cost model weights opcodes (division
//! and transcendental functions are expensive, constants and inputs free).

use std::fmt;
use std::sync::Arc;

use egg::{Analysis, CostFunction, DidMerge, EGraph, FromOp, Id, Language};
use xir::{TypeId, TypeTable};
use xir_spec::{Opcode, Trait};

/// An e-node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum XNode {
    /// A pure arithmetic instruction of the graph's type.
    Op(Opcode, Vec<Id>),
    /// A scalar constant of the graph's type (raw bits, zero-extended).
    Const(u64),
    /// Opaque input number `n` (an index into the graph's input table).
    Input(u32),
}

/// What distinguishes e-nodes apart from their children.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Disc {
    Op(Opcode, usize),
    Const(u64),
    Input(u32),
}

impl Language for XNode {
    type Discriminant = Disc;
    fn discriminant(&self) -> Disc {
        match self {
            XNode::Op(op, ch) => Disc::Op(*op, ch.len()),
            XNode::Const(b) => Disc::Const(*b),
            XNode::Input(n) => Disc::Input(*n),
        }
    }
    fn matches(&self, other: &Self) -> bool {
        self.discriminant() == other.discriminant()
    }
    fn children(&self) -> &[Id] {
        match self {
            XNode::Op(_, ch) => ch,
            _ => &[],
        }
    }
    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            XNode::Op(_, ch) => ch,
            _ => &mut [],
        }
    }
}

impl fmt::Display for XNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XNode::Op(op, _) => f.write_str(op.name()),
            XNode::Const(b) => write!(f, "#{b}"),
            XNode::Input(n) => write!(f, "in{n}"),
        }
    }
}

/// Whether `op` may be a node: pure, arithmetic, and its result has the
/// type of its first operand (so a whole expression has one type).
pub fn is_node_opcode(op: Opcode) -> bool {
    let s = xir_spec::spec().op(op);
    s.has(Trait::Pure) && s.has(Trait::Arithmetic) && s.spec.result == "same_as_0" && s.spec.variadic.is_none()
}

impl FromOp for XNode {
    type Error = String;
    fn from_op(op: &str, children: Vec<Id>) -> Result<Self, String> {
        if let Some(bits) = op.strip_prefix('#') {
            if !children.is_empty() {
                return Err(format!("constant `{op}` cannot have operands"));
            }
            return bits.parse().map(XNode::Const).map_err(|_| format!("bad constant `{op}`"));
        }
        let opcode = Opcode::from_name(op).ok_or_else(|| format!("unknown opcode `{op}`"))?;
        if !is_node_opcode(opcode) {
            return Err(format!("`{op}` is not a pure arithmetic opcode whose result has its operands' type"));
        }
        let arity = xir_spec::spec().op(opcode).spec.operands.len();
        if children.len() != arity {
            return Err(format!("`{op}` takes {arity} operand(s), the pattern gives {}", children.len()));
        }
        Ok(XNode::Op(opcode, children))
    }
}

/// Constant folding analysis: the class's constant bits, if known.
#[derive(Clone)]
pub struct ConstFold {
    pub types: Arc<TypeTable>,
    /// The type of every expression in the graph.
    pub ty: TypeId,
}

impl Analysis<XNode> for ConstFold {
    type Data = Option<u64>;

    fn make(egraph: &mut EGraph<XNode, Self>, enode: &XNode, _id: Id) -> Option<u64> {
        match enode {
            XNode::Const(b) => Some(*b),
            XNode::Input(_) => None,
            XNode::Op(op, ch) => {
                if xir_spec::spec().op(*op).has(Trait::Transcendental) {
                    // Transcendental results are only bounded on devices;
                    // folding them would pin the host's libm value.
                    return None;
                }
                let bits: Option<Vec<u64>> = ch.iter().map(|&c| egraph[c].data).collect();
                let a = &egraph.analysis;
                xir::interp::fold_scalar(&a.types, *op, a.ty, a.ty, &bits?)
            }
        }
    }

    fn merge(&mut self, a: &mut Option<u64>, b: Option<u64>) -> DidMerge {
        // Two constants in one class would mean an unsound rule; keep the first.
        egg::merge_option(a, b, |_, _| DidMerge(false, true))
    }

    fn modify(egraph: &mut EGraph<XNode, Self>, id: Id) {
        if let Some(bits) = egraph[id].data {
            let c = egraph.add(XNode::Const(bits));
            egraph.union(id, c);
        }
    }
}

/// Relative cost of one node (children excluded).
pub fn node_cost(n: &XNode) -> usize {
    match n {
        XNode::Const(_) | XNode::Input(_) => 0,
        XNode::Op(op, _) => {
            let s = xir_spec::spec().op(*op);
            if s.has(Trait::Transcendental) {
                16
            } else {
                match op {
                    Opcode::Div | Opcode::Mod => 8,
                    Opcode::Mul | Opcode::Fma => 3,
                    _ => 1,
                }
            }
        }
    }
}

/// Tree cost: node cost plus the children's costs.
pub struct OpCost;

impl CostFunction<XNode> for OpCost {
    type Cost = usize;
    fn cost<C: FnMut(Id) -> usize>(&mut self, enode: &XNode, mut costs: C) -> usize {
        enode.children().iter().fold(node_cost(enode), |acc, &c| acc.saturating_add(costs(c)))
    }
}
