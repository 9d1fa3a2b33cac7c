//! Analyses over one function or the module. Each is a plain function of the
//! IR; `db` memoizes them in salsa across edits, and the pass manager caches
//! them within one pipeline run.

pub mod alias;
pub mod arg_usage;
pub mod callgraph;
pub mod cfg;
pub mod convergence;
pub mod dom;
pub mod field_mask;
pub mod int_range;
pub mod lexical_scope;
pub mod loops;
pub mod pointer_usage;
pub mod postdom;
pub mod scev;
pub mod uniformity;

/// Per-key lists in one table; the IR core uses them too, so they live there.
pub use crate::ir::FlatLists;
pub use alias::{AliasAnalysis, AliasResult, Location, ModRef, PathIndex, Root, ScanRecords};
pub use arg_usage::{ArgumentUsage, Usage};
pub use callgraph::CallGraph;
pub use cfg::{Cfg, Edges};
pub use convergence::{Convergence, DivergenceRegion};
pub use dom::{DomTree, Frontiers};
pub use field_mask::{Access, FieldMask, FieldMasks, RootFields};
pub use int_range::{IntRanges, Interval};
pub use lexical_scope::{Construct, LexicalScopes, ScopeKind};
pub use loops::{Irreducible, LoopForest, LoopId};
pub use pointer_usage::{InstUsage, PointerUsage};
pub use postdom::PostDomTree;
pub use scev::{analyze as scalar_evolution, ScalarEvolution, Scev};
pub use uniformity::Uniformity;
