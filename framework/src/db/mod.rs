//! The incremental database (salsa 0.28). An editor or tool keeps one
//! [`Session`]; each `update` hands it the whole module text, and only what
//! an edit can affect is recomputed.
//!
//! Keying: the module text is split lexically into one [`FunctionSource`]
//! input per function (`split.rs`; an edit re-splits only around itself).
//! Each name a function mentions is a [`NameSlot`] input pointing at the
//! function of that name, if any, so no query searches the function list.
//! A function is parsed on its own, together with the *signatures* of the
//! functions it names (as `extern` declarations), so editing the body of `g`
//! re-executes `signature(g)` — whose value does not change, so salsa
//! backdates it — and `parse_function(g)` and what reads it, but nothing of
//! any other function. Positions inside a function are relative to its first
//! line, so an edit that moves later functions down re-runs nothing of
//! theirs; the session adds the offset when it reports (`FunctionDiagnostic`).
//!
//! Compilation (`compile.rs`) is per call-graph closure: a function is
//! compiled linked with the bodies of the functions it calls, transitively
//! (what interprocedural passes such as `callable_specialization` need), and
//! a kernel's target code is emitted from that linked result.
//!
//! **Invariant:** every query is a pure function of its inputs; the pipeline
//! a session compiles with is identified by an input (`SourceModule::pipeline`),
//! so changing it re-runs `linked` everywhere and nothing else.

mod compile;
mod session;
mod split;

use std::sync::{Arc, Mutex};

use crate::{
    analysis::{
        arg_usage::usage_with, AliasAnalysis, Cfg, Convergence, DomTree, FieldMasks, Irreducible, LexicalScopes,
        LoopForest, PointerUsage, PostDomTree, Uniformity, Usage,
    },
    diag::Diagnostic,
    ir::Block,
    ir::{FuncId, Module},
};

pub use compile::{
    closure, compiled, emitted, linked, CompileError, Emitted, FunctionCompiler, FunctionDiagnostic, KernelEmitter,
    Linked,
};
pub use session::{Session, UpdateReport};
pub use split::{resplit, split_functions, FunctionChunk, Resplit};

/// Database view the queries need: salsa plus the session's compiler and
/// emitter (behaviour the input `SourceModule::pipeline` identifies).
#[salsa::db]
pub trait Db: salsa::Database {
    /// How `linked` compiles a function's closure (`None`: it only parses).
    fn compiler(&self) -> Option<FunctionCompiler>;
    /// How `emitted` turns a compiled kernel into target code.
    fn emitter(&self) -> Option<KernelEmitter>;
}

/// The salsa database of one session.
#[salsa::db]
#[derive(Clone)]
pub struct XirDatabase {
    storage: salsa::Storage<Self>,
    compiler: Option<FunctionCompiler>,
    emitter: Option<KernelEmitter>,
}

#[salsa::db]
impl salsa::Database for XirDatabase {}

#[salsa::db]
impl Db for XirDatabase {
    fn compiler(&self) -> Option<FunctionCompiler> {
        self.compiler.clone()
    }
    fn emitter(&self) -> Option<KernelEmitter> {
        self.emitter.clone()
    }
}

impl XirDatabase {
    /// A database that records every query it executes into `log`.
    pub fn with_log(log: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>, compiler: Option<FunctionCompiler>) -> Self {
        let callback = move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if let Ok(mut l) = log.lock() {
                    l.push(database_key);
                }
            }
        };
        XirDatabase { storage: salsa::Storage::new(Some(Box::new(callback))), compiler, emitter: None }
    }
}

/// The file being edited.
#[salsa::input]
pub struct SourceModule {
    /// Every function, in file order (read only by whole-module queries:
    /// `call_graph`, `argument_usage`; set only when names come or go).
    #[returns(ref)]
    pub functions: Vec<FunctionSource>,
    /// Identity of the pipeline `linked` runs and of the emitter (their
    /// behaviour is the database's); changing it recompiles everything.
    #[returns(ref)]
    pub pipeline: String,
}

/// One function's text, as split from the module.
#[salsa::input]
pub struct FunctionSource {
    #[returns(ref)]
    pub name: String,
    /// The chunk: the function with the comment lines directly above it.
    #[returns(ref)]
    pub text: String,
    /// The names the text mentions (`@g`), found lexically when it changed.
    #[returns(ref)]
    pub references: Vec<NameSlot>,
    pub module: SourceModule,
}

/// A function name and the function that has it now (`None`: no function
/// of that name). Callers depend on the slot, not on the function list, so
/// adding or removing a function re-runs only the functions that name it.
#[salsa::input]
pub struct NameSlot {
    #[returns(ref)]
    pub name: String,
    pub function: Option<FunctionSource>,
}

/// The extern declaration other functions see for `f` (callables and
/// externals only; kernels cannot be called).
#[salsa::tracked(returns(ref))]
pub fn signature(db: &dyn Db, f: FunctionSource) -> Option<String> {
    split::extern_declaration(f.text(db))
}

/// The declarations `f` is parsed with: the signatures of the functions it
/// names. Re-runs when one of those changes; its value only changes when a
/// signature does.
#[salsa::tracked(returns(ref))]
pub fn visible_declarations(db: &dyn Db, f: FunctionSource) -> Vec<String> {
    f.references(db).iter().filter_map(|slot| *slot.function(db)).filter_map(|g| signature(db, g).clone()).collect()
}

/// A function parsed on its own: the module holds the declarations of the
/// functions it names first, then this function (the last one). Diagnostic
/// lines count from the function's first line (1).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedFunction {
    /// The declarations and the function (empty on a parse failure).
    pub module: Module,
    /// The function in `module`.
    pub func: Option<FuncId>,
    /// Parse errors, relative to the function's first line.
    pub diagnostics: Vec<Diagnostic>,
}

/// The file name parses run under; the session replaces it with the file
/// of the update being reported.
pub(crate) const IN_MODULE: &str = "";

/// Move every position of `d` that points into the parsed text `shift`
/// lines up (clamped to line 1: a declaration's trouble is the first line's).
pub(crate) fn shift_lines(d: &mut Diagnostic, shift: i64) {
    let mv = |s: &mut crate::ir::Span| s.line = (s.line as i64 - shift).max(1) as u32;
    let here = |f: &Option<String>| f.as_deref().is_none_or(|f| f == IN_MODULE);
    if here(&d.file) {
        if let Some(s) = &mut d.span {
            mv(s);
        }
    }
    for l in d.labels.iter_mut().filter(|l| here(&l.file)) {
        mv(&mut l.span);
    }
    for x in d.fixes.iter_mut().filter(|x| here(&x.file)) {
        mv(&mut x.span);
    }
}

/// Parse one function with the declarations it sees.
#[salsa::tracked(returns(ref))]
pub fn parse_function(db: &dyn Db, f: FunctionSource) -> ParsedFunction {
    let name = f.name(db);
    let mut text = String::new();
    let mut prefix_lines = 0i64;
    for decl in visible_declarations(db, f) {
        text.push_str(decl);
        text.push('\n');
        prefix_lines += 1;
    }
    text.push_str(f.text(db));
    match crate::text::parse_module(&text, IN_MODULE) {
        Ok(module) => {
            let func = module.find_function(name);
            ParsedFunction { module, func, diagnostics: Vec::new() }
        }
        Err(mut diags) => {
            for d in &mut diags {
                shift_lines(d, prefix_lines);
            }
            ParsedFunction { module: Module::default(), func: None, diagnostics: diags }
        }
    }
}

/// Everything wrong with one function on its own: its parse errors, else
/// what the verifier says about it (lines relative to the function).
#[salsa::tracked(returns(ref))]
pub fn check_function(db: &dyn Db, f: FunctionSource) -> Vec<Diagnostic> {
    let parsed = parse_function(db, f);
    if !parsed.diagnostics.is_empty() {
        return parsed.diagnostics.clone();
    }
    let prefix_lines = visible_declarations(db, f).len() as i64;
    let name = f.name(db);
    let mut diags: Vec<Diagnostic> = crate::verify::verify_module(&parsed.module)
        .into_iter()
        .filter(|d| d.function.as_deref().is_none_or(|n| n == name))
        .collect();
    for d in &mut diags {
        shift_lines(d, prefix_lines);
    }
    diags
}

/// The dominator tree of one function (`None` for declarations and parse failures).
#[salsa::tracked(returns(ref))]
pub fn dominators(db: &dyn Db, f: FunctionSource) -> Option<DomTree> {
    let parsed = parse_function(db, f);
    let id = parsed.func?;
    let func = parsed.module.func(id);
    func.body().map(|_| DomTree::compute(func))
}

/// The post-dominator tree of one function.
#[salsa::tracked(returns(ref))]
pub fn post_dominators(db: &dyn Db, f: FunctionSource) -> Option<PostDomTree> {
    with_body(db, f, PostDomTree::compute)
}

/// Dominance frontiers of every block of one function (indexed by block id).
#[salsa::tracked(returns(ref))]
pub fn dominance_frontiers(db: &dyn Db, f: FunctionSource) -> Option<Vec<Vec<Block>>> {
    let dom = dominators(db, f).as_ref()?;
    with_body(db, f, |func| dom.frontiers(&Cfg::compute(func)))
}

/// The loop nest of one function, or the irreducible cycle that prevents one.
#[salsa::tracked(returns(ref))]
pub fn loop_forest(db: &dyn Db, f: FunctionSource) -> Option<Result<LoopForest, Irreducible>> {
    let dom = dominators(db, f).as_ref()?;
    with_body(db, f, |func| LoopForest::compute(&Cfg::compute(func), dom))
}

/// Scalar evolution of every loop of one function (`analysis::scev`), over
/// the `dominators` and `loop_forest` queries (`None` for declarations,
/// parse failures and irreducible CFGs).
#[salsa::tracked(returns(ref))]
pub fn scalar_evolution(db: &dyn Db, f: FunctionSource) -> Option<crate::analysis::ScalarEvolution> {
    let dom = dominators(db, f).as_ref()?;
    let forest = loop_forest(db, f).as_ref()?.as_ref().ok()?;
    let parsed = parse_function(db, f);
    let func = parsed.module.func(parsed.func?);
    Some(crate::analysis::scalar_evolution(&parsed.module, func, &Cfg::compute(func), dom, forest))
}

/// Integer intervals of one function's SSA values (`analysis::int_range`),
/// over the `dominators` query.
#[salsa::tracked(returns(ref))]
pub fn int_ranges(db: &dyn Db, f: FunctionSource) -> Option<crate::analysis::IntRanges> {
    let dom = dominators(db, f).as_ref()?;
    let parsed = parse_function(db, f);
    let func = parsed.module.func(parsed.func?);
    func.body()?;
    Some(crate::analysis::IntRanges::compute(&parsed.module, func, &Cfg::compute(func), dom))
}

/// Which values of one function may differ between the threads of a block.
#[salsa::tracked(returns(ref))]
pub fn uniformity(db: &dyn Db, f: FunctionSource) -> Option<Uniformity> {
    with_body(db, f, Uniformity::of_function)
}

/// May / must alias facts of one function (`analysis::alias`).
#[salsa::tracked(returns(ref))]
pub fn alias_analysis(db: &dyn Db, f: FunctionSource) -> Option<AliasAnalysis> {
    let parsed = parse_function(db, f);
    let id = parsed.func?;
    parsed.module.func(id).body()?;
    Some(AliasAnalysis::compute(&parsed.module, id))
}

/// Field bitmasks of one function's slots (`analysis::field_mask`).
#[salsa::tracked(returns(ref))]
pub fn field_masks(db: &dyn Db, f: FunctionSource) -> Option<FieldMasks> {
    let parsed = parse_function(db, f);
    let func = parsed.module.func(parsed.func?);
    func.body()?;
    Some(FieldMasks::compute(&parsed.module, func))
}

/// Kill / touch / live of one function's local slots, over the
/// `field_masks` query (`analysis::pointer_usage`).
#[salsa::tracked(returns(ref))]
pub fn pointer_usage(db: &dyn Db, f: FunctionSource) -> Option<PointerUsage> {
    let masks = field_masks(db, f).as_ref()?;
    with_body(db, f, |func| PointerUsage::compute(func, masks, &Cfg::compute(func)))
}

/// The construct nesting and regions of one function (`analysis::lexical_scope`).
#[salsa::tracked(returns(ref))]
pub fn lexical_scopes(db: &dyn Db, f: FunctionSource) -> Option<LexicalScopes> {
    with_body(db, f, LexicalScopes::compute)
}

/// Converged blocks and divergence regions of one function, from the
/// `uniformity` query (`analysis::convergence`).
#[salsa::tracked(returns(ref))]
pub fn convergence(db: &dyn Db, f: FunctionSource) -> Option<Convergence> {
    let u = uniformity(db, f).as_ref()?;
    with_body(db, f, |func| Convergence::with_uniformity(func, u))
}

/// The module's call graph by function name, with its strongly connected
/// components callee-first (petgraph's Tarjan). Reads only `callees`, so a
/// body edit that keeps the calls re-runs nothing here.
#[salsa::tracked(returns(ref))]
pub fn call_graph(db: &dyn Db, m: SourceModule) -> NamedCallGraph {
    let names: Vec<String> = m.functions(db).iter().map(|f| f.name(db).clone()).collect();
    let index: rustc_hash::FxHashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut g = petgraph::graph::DiGraph::<usize, ()>::new();
    let nodes: Vec<_> = (0..names.len()).map(|i| g.add_node(i)).collect();
    for (i, f) in m.functions(db).iter().enumerate() {
        for callee in callees(db, *f) {
            if let Some(&j) = index.get(callee.as_str()) {
                g.add_edge(nodes[i], nodes[j], ());
            }
        }
    }
    let sccs = petgraph::algo::tarjan_scc(&g)
        .into_iter()
        .map(|c| c.into_iter().map(|ix| names[g[ix]].clone()).collect())
        .collect();
    NamedCallGraph { sccs }
}

/// Fixed-point argument usage of every function, by name: each call-graph
/// SCC (callee-first) iterates to a fixed point on the functions' own parses,
/// with callees' usage looked up by name. External declarations read and
/// write every argument.
#[salsa::tracked(returns(ref))]
pub fn argument_usage(db: &dyn Db, m: SourceModule) -> std::collections::BTreeMap<String, Vec<Usage>> {
    let mut usage: std::collections::BTreeMap<String, Vec<Usage>> = std::collections::BTreeMap::new();
    let by_name: rustc_hash::FxHashMap<&str, FunctionSource> =
        m.functions(db).iter().map(|f| (f.name(db).as_str(), *f)).collect();
    for scc in &call_graph(db, m).sccs {
        loop {
            let mut changed = false;
            for name in scc {
                let Some(f) = by_name.get(name.as_str()) else { continue };
                let parsed = parse_function(db, *f);
                let Some(id) = parsed.func else { continue };
                let func = parsed.module.func(id);
                let new = if func.is_external() {
                    vec![Usage::READ_WRITE; func.args.len()]
                } else {
                    usage_with(func, |g, k| {
                        let callee = parsed.module.func(g);
                        match usage.get(&callee.name) {
                            Some(u) => u.get(k).copied(),
                            // Not computed yet: a callee in this SCC starts unused.
                            None if scc.contains(&callee.name) => Some(Usage::NONE),
                            None => None,
                        }
                    })
                };
                if usage.get(name) != Some(&new) {
                    usage.insert(name.clone(), new);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    usage
}

/// Call-graph SCCs by function name, callees before callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedCallGraph {
    /// Strongly connected components, callees first.
    pub sccs: Vec<Vec<String>>,
}

impl NamedCallGraph {
    /// Whether `name` can reach itself through calls (a self-call counts
    /// only through `callees`; use the SCC size for mutual recursion).
    pub fn scc_of(&self, name: &str) -> Option<&[String]> {
        self.sccs.iter().find(|s| s.iter().any(|n| n == name)).map(|s| s.as_slice())
    }
}

fn with_body<T>(db: &dyn Db, f: FunctionSource, compute: impl FnOnce(&crate::ir::Function) -> T) -> Option<T> {
    let parsed = parse_function(db, f);
    let func = parsed.module.func(parsed.func?);
    func.body().map(|_| compute(func))
}

/// Names of the functions `f` calls.
#[salsa::tracked(returns(ref))]
pub fn callees(db: &dyn Db, f: FunctionSource) -> Vec<String> {
    let parsed = parse_function(db, f);
    let Some(id) = parsed.func else { return Vec::new() };
    let func = parsed.module.func(id);
    let mut out: Vec<String> = func
        .all_insts()
        .flat_map(|(_, i)| func.inst(i).operands.iter().copied())
        .filter_map(|v| match v {
            crate::ir::Value::Func(g) => Some(parsed.module.func(g).name.clone()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}
