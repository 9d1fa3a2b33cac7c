//! What a running pass can see besides the module: global options and the
//! per-run analysis cache. The pass manager invalidates every analysis a
//! pass did not declare preserved.

use std::{any::Any, collections::HashMap, sync::Arc};

use crate::analysis::{Cfg, DomTree, FieldMasks, IntRanges, LexicalScopes, PointerUsage};
use crate::ir::{FuncId, Module};

/// The analyses the cache knows by name (what `preserves` lists refer to).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnalysisKind {
    Cfg,
    Dominators,
    PostDominators,
    DominanceFrontiers,
    Loops,
    CallGraph,
    ArgumentUsage,
    Uniformity,
    Alias,
    FieldMasks,
    PointerUsage,
    LexicalScopes,
    IntRanges,
}

impl AnalysisKind {
    pub const ALL: &'static [AnalysisKind] = &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
        AnalysisKind::ArgumentUsage,
        AnalysisKind::Uniformity,
        AnalysisKind::Alias,
        AnalysisKind::FieldMasks,
        AnalysisKind::PointerUsage,
        AnalysisKind::LexicalScopes,
        AnalysisKind::IntRanges,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AnalysisKind::Cfg => "cfg",
            AnalysisKind::Dominators => "dominators",
            AnalysisKind::PostDominators => "post_dominators",
            AnalysisKind::DominanceFrontiers => "dominance_frontiers",
            AnalysisKind::Loops => "loops",
            AnalysisKind::CallGraph => "call_graph",
            AnalysisKind::ArgumentUsage => "argument_usage",
            AnalysisKind::Uniformity => "uniformity",
            AnalysisKind::Alias => "alias",
            AnalysisKind::FieldMasks => "field_masks",
            AnalysisKind::PointerUsage => "pointer_usage",
            AnalysisKind::LexicalScopes => "lexical_scopes",
            AnalysisKind::IntRanges => "int_ranges",
        }
    }
}

/// Per-function analysis results, computed on demand and shared by `Arc`.
#[derive(Default)]
pub struct AnalysisCache {
    entries: HashMap<(AnalysisKind, Option<FuncId>), Arc<dyn Any + Send + Sync>>,
    /// How many times each analysis was computed (for tests and reports).
    pub computed: HashMap<AnalysisKind, usize>,
}

impl AnalysisCache {
    /// The cached result of `kind` for `func`, computing it with `compute`.
    pub fn get_or_compute<T: Any + Send + Sync>(
        &mut self,
        kind: AnalysisKind,
        func: Option<FuncId>,
        module: &Module,
        compute: impl FnOnce(&Module) -> T,
    ) -> Arc<T> {
        if let Some(v) = self.entries.get(&(kind, func)) {
            if let Ok(v) = v.clone().downcast::<T>() {
                return v;
            }
        }
        let v = Arc::new(compute(module));
        *self.computed.entry(kind).or_default() += 1;
        self.entries.insert((kind, func), v.clone());
        v
    }

    /// The CFG of `func` (stored under `AnalysisKind::Cfg` as `analysis::Cfg`;
    /// the pass manager's preserve check relies on that type).
    pub fn cfg(&mut self, module: &Module, func: FuncId) -> Arc<Cfg> {
        self.get_or_compute(AnalysisKind::Cfg, Some(func), module, |m| Cfg::compute(m.func(func)))
    }

    /// The dominator tree of `func` (stored under `AnalysisKind::Dominators`
    /// as `analysis::DomTree`).
    pub fn dominators(&mut self, module: &Module, func: FuncId) -> Arc<DomTree> {
        let cfg = self.cfg(module, func);
        self.get_or_compute(AnalysisKind::Dominators, Some(func), module, |_| DomTree::from_cfg(&cfg))
    }

    /// The field bitmasks of `func`'s slots (`analysis::field_mask`).
    pub fn field_masks(&mut self, module: &Module, func: FuncId) -> Arc<FieldMasks> {
        self.get_or_compute(AnalysisKind::FieldMasks, Some(func), module, |m| FieldMasks::compute(m, m.func(func)))
    }

    /// Kill / touch / live of `func`'s local slots, over its field masks
    /// and CFG (`analysis::pointer_usage`).
    pub fn pointer_usage(&mut self, module: &Module, func: FuncId) -> Arc<PointerUsage> {
        let masks = self.field_masks(module, func);
        let cfg = self.cfg(module, func);
        self.get_or_compute(AnalysisKind::PointerUsage, Some(func), module, |m| {
            PointerUsage::compute(m.func(func), &masks, &cfg)
        })
    }

    /// The construct nesting of `func` (`analysis::lexical_scope`).
    pub fn lexical_scopes(&mut self, module: &Module, func: FuncId) -> Arc<LexicalScopes> {
        self.get_or_compute(AnalysisKind::LexicalScopes, Some(func), module, |m| LexicalScopes::compute(m.func(func)))
    }

    /// The integer intervals of `func`'s SSA values, over its CFG and
    /// dominators (`analysis::int_range`).
    pub fn int_ranges(&mut self, module: &Module, func: FuncId) -> Arc<IntRanges> {
        let cfg = self.cfg(module, func);
        let dom = self.dominators(module, func);
        self.get_or_compute(AnalysisKind::IntRanges, Some(func), module, |m| {
            IntRanges::compute(m, m.func(func), &cfg, &dom)
        })
    }

    /// The cached value of `kind` for `func`, without computing it.
    pub fn peek<T: Any + Send + Sync>(&self, kind: AnalysisKind, func: Option<FuncId>) -> Option<Arc<T>> {
        self.entries.get(&(kind, func)).and_then(|v| v.clone().downcast::<T>().ok())
    }

    /// Drop everything not in `preserved`.
    pub fn invalidate_except(&mut self, preserved: &[AnalysisKind]) {
        self.entries.retain(|(k, _), _| preserved.contains(k));
    }

    /// Entries currently cached (kind, function), for checking preserve claims.
    pub fn cached(&self) -> Vec<(AnalysisKind, Option<FuncId>)> {
        self.entries.keys().copied().collect()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// Context handed to every pass run.
pub struct PassContext<'a> {
    pub analyses: &'a mut AnalysisCache,
    /// Optimization level of the pipeline run (0..=3).
    pub opt_level: u8,
    /// Whether fast-math rewrites are allowed.
    pub fast_math: bool,
}
