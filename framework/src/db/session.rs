//! `Session`: one module file being edited, over one salsa database. An
//! update costs what the edit touched: the text is re-split only around the
//! edit (`split::resplit`), functions are found by name in a map, only
//! changed functions' inputs are set, and the session knows which functions
//! an edit can affect (the changed ones and, through the lexical reverse
//! references, the ones that name them), so re-diagnosing asks salsa about
//! those only. An update with no change does no work at all.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use salsa::Setter;

use super::{
    check_function, split, CompileError, Emitted, FunctionChunk, FunctionCompiler, FunctionDiagnostic, FunctionSource,
    KernelEmitter, NameSlot, SourceModule, XirDatabase, IN_MODULE,
};
use crate::analysis::{DomTree, Usage};
use crate::diag::{Diagnostic, Rule};

/// What one [`Session::update`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Functions in the module now.
    pub functions: usize,
    /// Functions whose text changed or that are new, in file order.
    pub changed: Vec<String>,
    /// Functions that are gone.
    pub removed: Vec<String>,
    /// Functions whose compiled result the edit can change: the changed
    /// ones and every function that names one of them or a removed one,
    /// transitively. Sorted.
    pub affected: Vec<String>,
}

/// An editing session over one module file.
pub struct Session {
    db: XirDatabase,
    log: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>,
    module: SourceModule,
    path: String,
    text: String,
    /// The current text's chunks.
    at: Vec<FunctionChunk>,
    /// Each chunk's input; `None` for a second function of the same name
    /// (reported, not compiled).
    sources: Vec<Option<FunctionSource>>,
    by_name: HashMap<String, FunctionSource>,
    slots: HashMap<String, NameSlot>,
    /// For each name, the functions whose text mentions it.
    referrers: HashMap<String, BTreeSet<String>>,
    /// Each function's own diagnostics as last asked, non-empty only.
    diagnostics: HashMap<String, Vec<Diagnostic>>,
    /// Functions whose diagnostics may have changed since `diagnostics()`.
    stale: HashSet<String>,
    /// Index into `chunks` by name (rebuilt only when names come or go).
    index: HashMap<String, usize>,
}

impl Session {
    /// A session over the file `path` (the name diagnostics carry until an
    /// update names another), compiling with `compiler` under the identity
    /// `pipeline_key` (`None`: parse and check only).
    pub fn new(path: &str, pipeline_key: &str, compiler: Option<FunctionCompiler>) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let db = XirDatabase::with_log(log.clone(), compiler);
        let module = SourceModule::new(&db, Vec::new(), pipeline_key.to_string());
        Session {
            db,
            log,
            module,
            path: path.to_string(),
            text: String::new(),
            at: Vec::new(),
            sources: Vec::new(),
            by_name: HashMap::new(),
            slots: HashMap::new(),
            referrers: HashMap::new(),
            diagnostics: HashMap::new(),
            stale: HashSet::new(),
            index: HashMap::new(),
        }
    }

    /// Emit kernels with `emitter` (see [`Session::emitted`]).
    pub fn with_emitter(mut self, emitter: KernelEmitter) -> Self {
        self.db.emitter = Some(emitter);
        self
    }

    /// The database, for queries by [`FunctionSource`].
    pub fn db(&self) -> &XirDatabase {
        &self.db
    }

    /// The file name diagnostics carry.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Change the pipeline identity (every function recompiles when next asked).
    pub fn set_pipeline(&mut self, key: &str) {
        if self.module.pipeline(&self.db) != key {
            self.module.set_pipeline(&mut self.db).to(key.to_string());
        }
    }

    /// Feed the whole module text. Costs the size of the edit, plus a
    /// comparison and a copy of the text.
    pub fn update(&mut self, text: &str) -> UpdateReport {
        self.update_file(&self.path.clone(), text)
    }

    /// [`Session::update`] with the text of the file `path`, which
    /// diagnostics name from now on.
    pub fn update_file(&mut self, path: &str, text: &str) -> UpdateReport {
        if path != self.path {
            self.path = path.to_string();
        }
        if text == self.text {
            return UpdateReport { functions: self.by_name.len(), ..UpdateReport::default() };
        }
        let r = split::resplit(&self.text, &self.at, text);
        let old_mid: Vec<(FunctionChunk, Option<FunctionSource>)> =
            r.replace.clone().map(|i| (self.at[i].clone(), self.sources[i])).collect();
        let mut changed = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut mid_sources = Vec::with_capacity(r.chunks.len());
        let mut names_changed = old_mid.len() != r.chunks.len();
        for (k, at) in r.chunks.iter().enumerate() {
            let chunk_text = at.text(text);
            let defined_outside = self.by_name.contains_key(&at.name)
                && !old_mid.iter().any(|(c, src)| c.name == at.name && src.is_some());
            if !seen.insert(&at.name) || defined_outside {
                mid_sources.push(None);
                names_changed = true;
                continue;
            }
            names_changed |= old_mid.get(k).is_none_or(|(c, _)| c.name != at.name);
            let source = match self.by_name.get(&at.name).copied() {
                Some(f) => {
                    if f.text(&self.db) != chunk_text {
                        self.set_text(f, &at.name, chunk_text);
                        changed.push(at.name.clone());
                    }
                    f
                }
                None => {
                    let refs = self.reference_slots(&at.name, chunk_text);
                    let f = FunctionSource::new(&self.db, at.name.clone(), chunk_text.to_string(), refs, self.module);
                    self.by_name.insert(at.name.clone(), f);
                    self.slot(&at.name).set_function(&mut self.db).to(Some(f));
                    changed.push(at.name.clone());
                    f
                }
            };
            mid_sources.push(Some(source));
        }
        let mut removed = Vec::new();
        for (c, src) in &old_mid {
            if src.is_some() && !seen.contains(c.name.as_str()) {
                removed.push(c.name.clone());
                if let Some(f) = self.by_name.remove(&c.name) {
                    for r in split::referenced_names(f.text(&self.db), &c.name) {
                        if let Some(set) = self.referrers.get_mut(&r) {
                            set.remove(&c.name);
                        }
                    }
                }
                self.slot(&c.name).set_function(&mut self.db).to(None);
                self.diagnostics.remove(&c.name);
            }
        }
        // Chunks after the edit keep their inputs; only their positions move.
        self.sources.splice(r.replace.clone(), mid_sources);
        r.apply(&mut self.at);
        // Reuse the buffer: a fresh multi-megabyte allocation costs page faults.
        self.text.clear();
        self.text.push_str(text);
        if !removed.is_empty() {
            self.promote_duplicates();
        }
        if names_changed || !removed.is_empty() {
            self.index = (0..self.at.len())
                .filter(|&i| self.sources[i].is_some())
                .map(|i| (self.at[i].name.clone(), i))
                .collect();
            let list: Vec<FunctionSource> = self.sources.iter().filter_map(|s| *s).collect();
            self.module.set_functions(&mut self.db).to(list);
        }
        let mut affected: BTreeSet<String> = BTreeSet::new();
        let mut work: Vec<String> = changed.iter().chain(&removed).cloned().collect();
        while let Some(n) = work.pop() {
            if self.by_name.contains_key(&n) && !affected.insert(n.clone()) {
                continue;
            }
            if let Some(rs) = self.referrers.get(&n) {
                work.extend(rs.iter().filter(|r| !affected.contains(*r)).cloned());
            }
        }
        self.stale.extend(affected.iter().cloned());
        UpdateReport { functions: self.by_name.len(), changed, removed, affected: affected.into_iter().collect() }
    }

    /// A repeated name whose first definition is gone gets an input.
    fn promote_duplicates(&mut self) {
        for i in 0..self.at.len() {
            if self.sources[i].is_some() || self.by_name.contains_key(&self.at[i].name) {
                continue;
            }
            let name = self.at[i].name.clone();
            let text = self.at[i].text(&self.text).to_string();
            let refs = self.reference_slots(&name, &text);
            let f = FunctionSource::new(&self.db, name.clone(), text, refs, self.module);
            self.by_name.insert(name.clone(), f);
            self.slot(&name).set_function(&mut self.db).to(Some(f));
            self.sources[i] = Some(f);
            self.stale.insert(name);
        }
    }

    fn slot(&mut self, name: &str) -> NameSlot {
        if let Some(s) = self.slots.get(name) {
            return *s;
        }
        let s = NameSlot::new(&self.db, name.to_string(), self.by_name.get(name).copied());
        self.slots.insert(name.to_string(), s);
        s
    }

    /// The slots of the names `text` mentions; records `name` as their referrer.
    fn reference_slots(&mut self, name: &str, text: &str) -> Vec<NameSlot> {
        let names = split::referenced_names(text, name);
        for r in &names {
            self.referrers.entry(r.clone()).or_default().insert(name.to_string());
        }
        names.iter().map(|r| self.slot(r)).collect()
    }

    fn set_text(&mut self, f: FunctionSource, name: &str, text: &str) {
        for r in split::referenced_names(f.text(&self.db), name) {
            if let Some(set) = self.referrers.get_mut(&r) {
                set.remove(name);
            }
        }
        let refs = self.reference_slots(name, text);
        if f.references(&self.db) != &refs {
            f.set_references(&mut self.db).to(refs);
        }
        f.set_text(&mut self.db).to(text.to_string());
    }

    /// The functions in file order (a repeated name appears once).
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        (0..self.at.len()).filter(|&i| self.sources[i].is_some()).map(|i| self.at[i].name.as_str())
    }

    /// Whether `name` is a kernel (by its header).
    pub fn is_kernel(&self, name: &str) -> bool {
        self.index.get(name).is_some_and(|&i| self.at[i].kernel)
    }

    /// The source input of a function by name.
    pub fn function(&self, name: &str) -> Option<FunctionSource> {
        self.by_name.get(name).copied()
    }

    /// 1-based line of the first line of `name`'s chunk in the current text.
    pub fn first_line(&self, name: &str) -> Option<u32> {
        self.index.get(name).map(|&i| self.at[i].first_line)
    }

    /// Every parse and verifier diagnostic of the module, in the current
    /// file's coordinates, in file order. Re-checks only the functions the
    /// updates since the last call affected.
    pub fn diagnostics(&mut self) -> Vec<Diagnostic> {
        for name in std::mem::take(&mut self.stale) {
            let Some(&f) = self.by_name.get(&name) else { continue };
            let diags = check_function(&self.db, f);
            if diags.is_empty() {
                self.diagnostics.remove(&name);
            } else {
                self.diagnostics.insert(name, diags.clone());
            }
        }
        let mut out: Vec<(u32, Diagnostic)> = Vec::new();
        for (name, diags) in &self.diagnostics {
            let Some(line) = self.first_line(name) else { continue };
            out.extend(diags.iter().map(|d| (line, self.place(name, line, d.clone()))));
        }
        for (c, _) in self.at.iter().zip(&self.sources).filter(|(_, s)| s.is_none()) {
            let d = Diagnostic::error(Rule::Parse, format!("redefinition of function `@{}`", c.name))
                .in_function(&c.name)
                .with_span(Some(self.header_span(c)))
                .with_file(self.path.clone());
            out.push((c.first_line, d));
        }
        out.sort_by_key(|(line, d)| (*line, d.span.map(|s| (s.line, s.col))));
        out.into_iter().map(|(_, d)| d).collect()
    }

    fn header_span(&self, c: &FunctionChunk) -> crate::ir::Span {
        let t = c.text(&self.text);
        let k = t.lines().position(|l| !l.trim_start().starts_with("//")).unwrap_or(0);
        let line = t.lines().nth(k).unwrap_or("");
        let col = line.find('@').unwrap_or(0) as u32 + 1;
        crate::ir::Span { line: c.first_line + k as u32, col, len: c.name.len() as u32 + 1 }
    }

    /// `d`, relative to the function starting at `first_line`, in file coordinates.
    fn place(&self, function: &str, first_line: u32, mut d: Diagnostic) -> Diagnostic {
        let here = |f: &Option<String>| f.as_deref().is_none_or(|f| f == IN_MODULE);
        let shift = |s: &mut crate::ir::Span| s.line += first_line - 1;
        if here(&d.file) {
            if let Some(s) = &mut d.span {
                shift(s);
            }
            d.file = Some(self.path.clone());
        }
        for l in d.labels.iter_mut().filter(|l| here(&l.file)) {
            shift(&mut l.span);
            l.file = Some(self.path.clone());
        }
        for x in d.fixes.iter_mut().filter(|x| here(&x.file)) {
            shift(&mut x.span);
            x.file = Some(self.path.clone());
        }
        if d.function.is_none() {
            d.function = Some(function.to_string());
        }
        d
    }

    /// A compile failure's diagnostics in file coordinates (`Invalid` and
    /// `Callee` have none of their own: `diagnostics()` reports them).
    pub fn place_error(&self, e: &CompileError) -> Vec<Diagnostic> {
        match e {
            CompileError::Failed(ds) => ds.iter().map(|fd| self.place_function_diagnostic(fd)).collect(),
            CompileError::NotEmittable(n) => {
                vec![Diagnostic::error(Rule::SpirvEmit, e.to_string()).in_function(n).with_file(self.path.clone())]
            }
            CompileError::Invalid(_) | CompileError::Callee { .. } => Vec::new(),
        }
    }

    /// One function diagnostic in file coordinates.
    pub fn place_function_diagnostic(&self, fd: &FunctionDiagnostic) -> Diagnostic {
        let line = self.first_line(&fd.function).unwrap_or(1);
        self.place(&fd.function, line, fd.diagnostic.clone())
    }

    /// `name` after the session's pipeline, printed (`None`: no such function).
    pub fn compiled(&self, name: &str) -> Option<Result<String, CompileError>> {
        Some(super::compiled(&self.db, self.function(name)?).clone())
    }

    /// `name` compiled in its closure (`None`: no such function).
    pub fn linked(&self, name: &str) -> Option<Result<Arc<super::Linked>, CompileError>> {
        Some(super::linked(&self.db, self.function(name)?).clone())
    }

    /// The kernel `name`'s target code (`None`: no such function).
    pub fn emitted(&self, name: &str) -> Option<Result<Arc<Emitted>, CompileError>> {
        Some(super::emitted(&self.db, self.function(name)?).clone())
    }

    /// Dominator tree of a function by name, through the database.
    pub fn dominators(&self, name: &str) -> Option<DomTree> {
        super::dominators(&self.db, self.function(name)?).clone()
    }

    /// Every query execution since the last `take_executed`, in order, with
    /// function inputs named (`parse_function(@leaf7)`); clears the log.
    pub fn take_executed(&mut self) -> Vec<String> {
        let keys: Vec<salsa::DatabaseKeyIndex> =
            self.log.lock().map(|mut l| std::mem::take(&mut *l)).unwrap_or_default();
        let ids: HashMap<String, &str> = self
            .by_name
            .iter()
            .map(|(n, f)| (format!("({:?})", salsa::plumbing::AsId::as_id(f)), n.as_str()))
            .collect();
        salsa::attach(&self.db, || {
            keys.iter()
                .map(|k| {
                    let raw = format!("{k:?}");
                    let named = raw.find('(').and_then(|i| Some((i, *ids.get(&raw[i..])?)));
                    match named {
                        Some((i, name)) => format!("{}(@{name})", &raw[..i]),
                        None => raw,
                    }
                })
                .collect()
        })
    }

    /// Fixed-point argument usage by function name, through the database.
    pub fn argument_usage(&self) -> std::collections::BTreeMap<String, Vec<Usage>> {
        super::argument_usage(&self.db, self.module).clone()
    }

    /// The module's call graph, through the database.
    pub fn call_graph(&self) -> super::NamedCallGraph {
        super::call_graph(&self.db, self.module).clone()
    }

    /// Callees of a function by name, through the database.
    pub fn callees(&self, name: &str) -> Vec<String> {
        self.function(name).map(|f| super::callees(&self.db, f).clone()).unwrap_or_default()
    }
}
