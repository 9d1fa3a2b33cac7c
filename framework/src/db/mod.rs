//! The incremental database (salsa 0.28). An editor or tool keeps one
//! `Session`; each `update` hands it the whole module text, and only what an
//! edit can affect is recomputed.
//!
//! Keying: the module text is split lexically into one `FunctionSource` input
//! per function. A function is parsed on its own, together with the
//! *signatures* of the other functions (as `extern` declarations), so editing
//! the body of `g` re-executes `signature(g)` — whose value does not change,
//! so salsa backdates it — and `parse_function(g)` and what reads it, but
//! nothing of any other function. Per-function results (`dominators`,
//! `compiled`) are queries over `parse_function`.
//!
//! **Invariant:** every query is a pure function of its inputs; the pipeline
//! a session compiles with is an input (`PipelineInput`), so changing it
//! re-runs `compiled` everywhere and nothing else.

mod split;

use std::sync::{Arc, Mutex};

use salsa::Setter;

use crate::{
    analysis::{
        arg_usage::usage_with, AliasAnalysis, Cfg, Convergence, DomTree, Irreducible, LoopForest, PostDomTree,
        Uniformity, Usage,
    },
    diag::Diagnostic,
    ir::Block,
    ir::{FuncId, Module},
};

pub use split::{split_functions, FunctionChunk};

/// Compiles one parsed function (a module holding it and the extern
/// declarations of the functions it may call). Returns the printed result.
pub type FunctionCompiler = Arc<dyn Fn(&mut Module) -> Result<(), String> + Send + Sync>;

/// Database view the queries need: salsa plus the session's compiler.
#[salsa::db]
pub trait Db: salsa::Database {
    fn compiler(&self) -> Option<FunctionCompiler>;
}

#[salsa::db]
#[derive(Clone)]
pub struct XirDatabase {
    storage: salsa::Storage<Self>,
    compiler: Option<FunctionCompiler>,
}

#[salsa::db]
impl salsa::Database for XirDatabase {}

#[salsa::db]
impl Db for XirDatabase {
    fn compiler(&self) -> Option<FunctionCompiler> {
        self.compiler.clone()
    }
}

impl XirDatabase {
    /// A database that records the name of every query it executes into `log`.
    pub fn with_log(log: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>, compiler: Option<FunctionCompiler>) -> Self {
        let callback = move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if let Ok(mut l) = log.lock() {
                    l.push(database_key);
                }
            }
        };
        XirDatabase { storage: salsa::Storage::new(Some(Box::new(callback))), compiler }
    }
}

/// The file being edited.
#[salsa::input]
pub struct SourceModule {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub functions: Vec<FunctionSource>,
    /// Identity of the pipeline `compiled` runs (its behaviour is the
    /// session's `FunctionCompiler`); changing it recompiles everything.
    #[returns(ref)]
    pub pipeline: String,
}

/// One function's text, as split from the module.
#[salsa::input]
pub struct FunctionSource {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: String,
    /// 1-based line of the function's first line in the module file, so
    /// diagnostics point into the whole file.
    pub first_line: u32,
    pub module: SourceModule,
}

/// The extern declaration other functions see for `f` (callables and
/// externals only; kernels cannot be called).
#[salsa::tracked(returns(ref))]
pub fn signature(db: &dyn Db, f: FunctionSource) -> Option<String> {
    split::extern_declaration(f.text(db))
}

/// Extern declarations of every callable function of the module.
#[salsa::tracked(returns(ref))]
pub fn module_signatures(db: &dyn Db, m: SourceModule) -> Vec<(String, String)> {
    m.functions(db).iter().filter_map(|f| signature(db, *f).clone().map(|s| (f.name(db).clone(), s))).collect()
}

/// Functions `f` names (`@g`), found lexically: what its parse may depend on.
#[salsa::tracked(returns(ref))]
pub fn referenced_functions(db: &dyn Db, f: FunctionSource) -> Vec<String> {
    split::referenced_names(f.text(db), f.name(db))
}

/// The declarations `f` is parsed with: the signatures of the functions it
/// names. Re-runs when any signature changes, but its value only changes for
/// `f`'s callers, so nothing downstream of other functions re-runs.
#[salsa::tracked(returns(ref))]
pub fn visible_declarations(db: &dyn Db, f: FunctionSource) -> Vec<String> {
    let wanted = referenced_functions(db, f);
    module_signatures(db, *f.module(db))
        .iter()
        .filter(|(name, _)| wanted.contains(name))
        .map(|(_, decl)| decl.clone())
        .collect()
}

/// A function parsed on its own: the module holds the declarations of the
/// functions it names first, then this function (the last one).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedFunction {
    pub module: Module,
    pub func: Option<FuncId>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn parse_function(db: &dyn Db, f: FunctionSource) -> ParsedFunction {
    let name = f.name(db).clone();
    let mut text = String::new();
    let mut prefix_lines = 0u32;
    for decl in visible_declarations(db, f) {
        text.push_str(decl);
        text.push('\n');
        prefix_lines += 1;
    }
    text.push_str(f.text(db));
    let path = f.module(db).path(db).clone();
    match crate::text::parse_module(&text, &path) {
        Ok(module) => {
            let func = module.find_function(&name);
            ParsedFunction { module, func, diagnostics: Vec::new() }
        }
        Err(mut diags) => {
            // Shift positions from the synthesized text back to the file.
            let shift = *f.first_line(db) as i64 - 1 - prefix_lines as i64;
            for d in &mut diags {
                if let Some(s) = &mut d.span {
                    s.line = (s.line as i64 + shift).max(1) as u32;
                }
            }
            ParsedFunction { module: Module::default(), func: None, diagnostics: diags }
        }
    }
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
    let mut g = petgraph::graph::DiGraph::<usize, ()>::new();
    let nodes: Vec<_> = (0..names.len()).map(|i| g.add_node(i)).collect();
    for (i, f) in m.functions(db).iter().enumerate() {
        for callee in callees(db, *f) {
            if let Some(j) = names.iter().position(|n| n == callee) {
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
    let by_name: Vec<(String, FunctionSource)> = m.functions(db).iter().map(|f| (f.name(db).clone(), *f)).collect();
    for scc in &call_graph(db, m).sccs {
        loop {
            let mut changed = false;
            for name in scc {
                let Some((_, f)) = by_name.iter().find(|(n, _)| n == name) else { continue };
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

/// The function after the session's pipeline, printed, or the failure.
#[salsa::tracked(returns(ref))]
pub fn compiled(db: &dyn Db, f: FunctionSource) -> Result<String, String> {
    let _ = f.module(db).pipeline(db);
    let parsed = parse_function(db, f);
    if !parsed.diagnostics.is_empty() {
        return Err(crate::diag::render(&parsed.diagnostics));
    }
    let Some(id) = parsed.func else { return Err(format!("function `{}` not found", f.name(db))) };
    let mut module = parsed.module.clone();
    if let Some(compile) = db.compiler() {
        compile(&mut module)?;
    }
    let name = module.func(id).name.clone();
    let printed = crate::text::print_module(&module);
    Ok(split::split_functions(&printed).into_iter().find(|c| c.name == name).map(|c| c.text).unwrap_or(printed))
}

/// Each function of the module by name, with its compiled text or failure.
pub type CompiledFunctions = Vec<(String, Result<String, String>)>;

/// What one `Session::update` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    pub functions: usize,
    /// Functions whose `compiled` query re-executed.
    pub recompiled: Vec<String>,
    /// Every query execution, in order, with function inputs named:
    /// `parse_function(@leaf7)`, `module_signatures(Id(0))`, ...
    pub executed: Vec<String>,
}

impl UpdateReport {
    pub fn reused(&self) -> usize {
        self.functions - self.recompiled.len()
    }
}

/// An editing session over one module file.
pub struct Session {
    db: XirDatabase,
    log: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>,
    module: Option<SourceModule>,
    pipeline: String,
    path: String,
}

impl Session {
    pub fn new(path: &str, pipeline_key: &str, compiler: Option<FunctionCompiler>) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let db = XirDatabase::with_log(log.clone(), compiler);
        Session { db, log, module: None, pipeline: pipeline_key.to_string(), path: path.to_string() }
    }

    pub fn db(&self) -> &XirDatabase {
        &self.db
    }

    /// Change the pipeline identity (recompiles every function on next update).
    pub fn set_pipeline(&mut self, key: &str) {
        self.pipeline = key.to_string();
        if let Some(m) = self.module {
            m.set_pipeline(&mut self.db).to(key.to_string());
        }
    }

    /// Feed the whole module text; recompile what changed. Returns the
    /// compiled functions in order and what re-ran.
    pub fn update(&mut self, text: &str) -> (CompiledFunctions, UpdateReport) {
        let chunks = split::split_functions(text);
        let module = match self.module {
            Some(m) => m,
            None => {
                let m = SourceModule::new(&self.db, self.path.clone(), Vec::new(), self.pipeline.clone());
                self.module = Some(m);
                m
            }
        };
        let old: Vec<FunctionSource> = module.functions(&self.db).clone();
        let mut new_list = Vec::with_capacity(chunks.len());
        for c in &chunks {
            let existing = old.iter().copied().find(|f| f.name(&self.db) == &c.name);
            let f = match existing {
                Some(f) => {
                    if f.text(&self.db) != &c.text {
                        f.set_text(&mut self.db).to(c.text.clone());
                    }
                    if *f.first_line(&self.db) != c.first_line {
                        f.set_first_line(&mut self.db).to(c.first_line);
                    }
                    f
                }
                None => FunctionSource::new(&self.db, c.name.clone(), c.text.clone(), c.first_line, module),
            };
            new_list.push(f);
        }
        if new_list != old {
            module.set_functions(&mut self.db).to(new_list.clone());
        }
        self.log.lock().map(|mut l| l.clear()).ok();
        let results: Vec<(String, Result<String, String>)> =
            new_list.iter().map(|f| (f.name(&self.db).clone(), compiled(&self.db, *f).clone())).collect();
        let executed = self.take_executed();
        let recompiled = new_list
            .iter()
            .map(|f| f.name(&self.db).clone())
            .filter(|n| executed.contains(&format!("compiled(@{n})")))
            .collect();
        let report = UpdateReport { functions: new_list.len(), recompiled, executed };
        (results, report)
    }

    /// Dominator tree of a function by name, through the database.
    pub fn dominators(&self, name: &str) -> Option<DomTree> {
        let m = self.module?;
        let f = m.functions(&self.db).iter().copied().find(|f| f.name(&self.db) == name)?;
        dominators(&self.db, f).clone()
    }

    /// Every query execution since the last `update` or `take_executed`, in
    /// order, with function inputs named (`parse_function(@leaf7)`); clears
    /// the log.
    pub fn take_executed(&mut self) -> Vec<String> {
        let keys: Vec<salsa::DatabaseKeyIndex> =
            self.log.lock().map(|mut l| std::mem::take(&mut *l)).unwrap_or_default();
        let Some(m) = self.module else { return Vec::new() };
        let ids: Vec<(String, String)> = m
            .functions(&self.db)
            .iter()
            .map(|f| (format!("({:?})", salsa::plumbing::AsId::as_id(f)), f.name(&self.db).clone()))
            .collect();
        salsa::attach(&self.db, || {
            keys.iter()
                .map(|k| {
                    let raw = format!("{k:?}");
                    match ids.iter().find(|(id, _)| raw.ends_with(id.as_str())) {
                        Some((id, name)) => format!("{}(@{name})", &raw[..raw.len() - id.len()]),
                        None => raw,
                    }
                })
                .collect()
        })
    }

    /// The source input of a function by name.
    pub fn function(&self, name: &str) -> Option<FunctionSource> {
        let m = self.module?;
        m.functions(&self.db).iter().copied().find(|f| f.name(&self.db) == name)
    }

    /// Fixed-point argument usage by function name, through the database.
    pub fn argument_usage(&self) -> Option<std::collections::BTreeMap<String, Vec<Usage>>> {
        self.module.map(|m| argument_usage(&self.db, m).clone())
    }

    /// The module's call graph, through the database.
    pub fn call_graph(&self) -> Option<NamedCallGraph> {
        self.module.map(|m| call_graph(&self.db, m).clone())
    }

    /// Callees of a function by name, through the database.
    pub fn callees(&self, name: &str) -> Vec<String> {
        let Some(m) = self.module else { return Vec::new() };
        let Some(f) = m.functions(&self.db).iter().copied().find(|f| f.name(&self.db) == name) else {
            return Vec::new();
        };
        callees(&self.db, f).clone()
    }
}
