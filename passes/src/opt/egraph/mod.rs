//! The e-graph machinery of `algebraic_simplify`: the language and its
//! constant-folding analysis and cost model (`lang`), and the rewrite rules
//! loaded from data (`rules`).

pub mod lang;
pub mod rules;
