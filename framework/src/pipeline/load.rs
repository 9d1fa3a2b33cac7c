//! Loading a pipeline file: RON syntax (via `ron`, whose `SpannedError`
//! locates syntax errors; skipped for the embedded pipelines, checked when
//! they were embedded), the positioned reading of `model`, and resolution
//! of every step against the pass registry: pass names (with the nearest
//! registered name as a suggestion), options (each pass's serde options type,
//! with the failing option located), includes (relative paths or shipped
//! names, without cycles) and hooks. Shipped pipelines are found in the
//! search directories first and then among the texts the binary embeds
//! (`Loader::with_shipped`), so an installed or moved binary needs no files. The dialect flow is checked last, by
//! `check`, once everything resolved.

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::Arc,
};

use super::model::{self, FileSyntax, StepSyntax};
use super::syntax::{self, Node, NodeKind};
use super::{check, suggest, Diags, PassStep, Pipeline, PipelineDiag, Step};
use crate::diag::Severity;
use crate::pass::{OptionsError, Pass, PassDecl, PassRegistry};

/// Finds and loads pipeline files.
pub struct Loader<'r> {
    registry: &'r PassRegistry,
    search_dirs: Vec<PathBuf>,
    shipped: &'static [(&'static str, &'static str)],
}

/// Where a resolved pipeline's text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PipelineSource {
    /// A file on disk.
    File(PathBuf),
    /// A pipeline embedded in the binary, by name (`Loader::with_shipped`).
    Shipped { name: &'static str, text: &'static str },
}

impl PipelineSource {
    /// The file name diagnostics give it: a shipped pipeline is named after
    /// the source file it was embedded from (`pipelines/NAME.ron`).
    pub fn display(&self) -> String {
        match self {
            PipelineSource::File(p) => p.display().to_string(),
            PipelineSource::Shipped { name, .. } => format!("pipelines/{name}.ron"),
        }
    }

    /// What include-cycle detection compares: the canonical path of a file,
    /// a path no file can have for a shipped pipeline.
    fn identity(&self) -> PathBuf {
        match self {
            PipelineSource::File(p) => p.canonicalize().unwrap_or_else(|_| p.clone()),
            PipelineSource::Shipped { name, .. } => PathBuf::from(format!("<shipped>/{name}.ron")),
        }
    }
}

/// Why [`Loader::resolve`] found no pipeline.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// A path (it ends in `.ron` or has a separator) where nothing exists.
    #[error("no pipeline file `{0}`")]
    NoFile(String),
    /// A name no search directory and no embedded pipeline has.
    #[error("no shipped pipeline named `{name}`{}", resolve_hint(suggestion, shipped))]
    NoShipped { name: String, suggestion: Option<String>, shipped: Vec<String> },
}

fn resolve_hint(suggestion: &Option<String>, shipped: &[String]) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None if shipped.is_empty() => String::new(),
        None => format!(" (shipped pipelines: {})", shipped.join(", ")),
    }
}

/// Why a pipeline did not load: every error found (and the warnings found on
/// the way), each `file.ron:line:col: error: message`.
#[derive(Clone, Debug)]
pub struct LoadFailure {
    pub diagnostics: Vec<PipelineDiag>,
}

impl LoadFailure {
    pub fn errors(&self) -> impl Iterator<Item = &PipelineDiag> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error)
    }
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.diagnostics {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadFailure {}

/// How deep steps may nest: `Include`s, `OptGroup`s and `FixedPoint`s
/// together, across files. Loading, checking and running a pipeline walk
/// its steps recursively, so a longer chain of includes is refused, located
/// at the include (or group) that goes one level too deep, instead of
/// overflowing the stack.
pub const MAX_NESTING: usize = 64;

struct Session {
    /// Canonical paths of the files being loaded (innermost last), for cycles.
    stack: Vec<PathBuf>,
    /// How many includes and groups enclose the steps being built.
    depth: usize,
    next_id: usize,
    diags: Vec<PipelineDiag>,
}

impl<'r> Loader<'r> {
    pub fn new(registry: &'r PassRegistry) -> Self {
        Loader { registry, search_dirs: Vec::new(), shipped: &[] }
    }

    /// Pipelines embedded in the binary, by name; searched after the search
    /// directories, so a directory can override a shipped pipeline.
    ///
    /// The texts must be RON: their syntax was checked when they were
    /// embedded (`xir-pipelines`' build script runs `ron` over each), so
    /// loading them skips `ron`'s syntax pass and reads them with the
    /// positioned reader alone. That pass was a third of loading `spirv`
    /// (0.5 M instructions a process); files, `--pipeline-dir` overrides
    /// included, still get it and its located `RON syntax` errors.
    pub fn with_shipped(mut self, shipped: &'static [(&'static str, &'static str)]) -> Self {
        self.shipped = shipped;
        self
    }

    /// The directories searched for pipelines by name, in order.
    pub fn search_dirs(&self) -> &[PathBuf] {
        &self.search_dirs
    }

    /// Look for shipped pipelines (`Include("cleanup")`, `--pipeline NAME`) in
    /// `dir`; directories added first win.
    pub fn with_search_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.search_dirs.push(dir.into());
        self
    }

    pub fn registry(&self) -> &PassRegistry {
        self.registry
    }

    /// Names of the pipelines found in the search directories and embedded.
    pub fn shipped(&self) -> Vec<String> {
        let mut names: Vec<String> = self.shipped.iter().map(|(n, _)| n.to_string()).collect();
        for dir in &self.search_dirs {
            let Ok(rd) = std::fs::read_dir(dir) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "ron") {
                    if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                        names.push(stem.to_string());
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// Resolve a pipeline reference: a path (it ends in `.ron` or contains a
    /// separator; relative to `base` when given) or a shipped name, looked up
    /// in the search directories, then among the embedded ones, and then
    /// beside the including file (`base`), so that a pipeline directory is
    /// self-contained. Anything that exists at a path counts as found (a
    /// directory too), so reading it says what is wrong with it instead of
    /// "no pipeline file" or a silent fall-back to the shipped pipeline.
    pub fn resolve(&self, spec: &str, base: Option<&Path>) -> Result<PipelineSource, ResolveError> {
        if spec.ends_with(".ron") || spec.contains('/') || spec.contains('\\') {
            let p = match base {
                Some(b) => b.join(spec),
                None => PathBuf::from(spec),
            };
            return if p.exists() {
                Ok(PipelineSource::File(p))
            } else {
                Err(ResolveError::NoFile(super::excerpt(&p.display().to_string()).into_owned()))
            };
        }
        for dir in &self.search_dirs {
            let p = dir.join(format!("{spec}.ron"));
            if p.exists() {
                return Ok(PipelineSource::File(p));
            }
        }
        if let Some(&(name, text)) = self.shipped.iter().find(|(n, _)| *n == spec) {
            return Ok(PipelineSource::Shipped { name, text });
        }
        if let Some(p) = base.map(|b| b.join(format!("{spec}.ron"))).filter(|p| p.exists()) {
            return Ok(PipelineSource::File(p));
        }
        let shipped = self.shipped();
        let suggestion = suggest(spec, shipped.iter().map(String::as_str)).map(str::to_string);
        Err(ResolveError::NoShipped { name: super::excerpt(spec).into_owned(), suggestion, shipped })
    }

    /// Load by shipped name or path.
    pub fn load(&self, spec: &str) -> Result<Pipeline, LoadFailure> {
        match self.resolve(spec, None) {
            Ok(PipelineSource::File(p)) => self.load_path(&p),
            Ok(src @ PipelineSource::Shipped { text, .. }) => {
                let mut s = Session { stack: Vec::new(), depth: 0, next_id: 0, diags: Vec::new() };
                self.load_root(&mut s, src.display().into(), Some(src.identity()), None, Embedded(true), text)
            }
            Err(e) => Err(LoadFailure {
                diagnostics: vec![PipelineDiag::new(
                    Severity::Error,
                    super::Loc { file: super::excerpt(spec).into(), line: 1, col: 1 },
                    e.to_string(),
                )],
            }),
        }
    }

    pub fn load_path(&self, path: &Path) -> Result<Pipeline, LoadFailure> {
        let display: Arc<str> = path.display().to_string().into();
        let text = crate::text::source::read_source_file(path).map_err(|e| {
            let (line, col) = e.span.map_or((1, 1), |s| (s.line as usize, s.col as usize));
            LoadFailure {
                diagnostics: vec![PipelineDiag::new(
                    Severity::Error,
                    super::Loc { file: display.clone(), line, col },
                    format!("cannot read pipeline: {}", e.message),
                )],
            }
        })?;
        self.load_text(display, Some(path), &text)
    }

    /// Load from text; `path` (when given) anchors relative includes and
    /// include-cycle detection.
    pub fn load_text(&self, display: Arc<str>, path: Option<&Path>, text: &str) -> Result<Pipeline, LoadFailure> {
        let mut s = Session { stack: Vec::new(), depth: 0, next_id: 0, diags: Vec::new() };
        let identity = path.and_then(|p| p.canonicalize().ok());
        self.load_root(&mut s, display, identity, path.and_then(Path::parent), Embedded(false), text)
    }

    /// Load the top-level file and check its dialect flow.
    fn load_root(
        &self,
        s: &mut Session,
        display: Arc<str>,
        identity: Option<PathBuf>,
        base: Option<&Path>,
        embedded: Embedded,
        text: &str,
    ) -> Result<Pipeline, LoadFailure> {
        let loaded = self.load_file(s, display.clone(), identity, base, embedded, text.into());
        let Some((file, steps)) = loaded.filter(|_| !has_errors(&s.diags)) else {
            return Err(LoadFailure { diagnostics: std::mem::take(&mut s.diags) });
        };
        let header = Diags::new(display.clone(), text.into());
        let mut p = Pipeline {
            name: file.name,
            doc: file.doc,
            file: display.clone(),
            input: file.input.0,
            output: file.output.0,
            input_at: header.loc(file.input.1),
            output_at: header.loc(file.output.1),
            steps,
            warnings: std::mem::take(&mut s.diags),
        };
        match check::check_flow(&p, self.registry, &p.input_at, &p.output_at) {
            Ok(warnings) => {
                p.warnings.extend(warnings);
                Ok(p)
            }
            Err(diags) => {
                let mut all = diags;
                all.append(&mut p.warnings);
                Err(LoadFailure { diagnostics: all })
            }
        }
    }

    /// Parse one file and resolve its steps; `None` if it could not be read.
    /// `identity` is what include cycles are detected by, `base` where
    /// relative includes are found.
    fn load_file(
        &self,
        s: &mut Session,
        display: Arc<str>,
        identity: Option<PathBuf>,
        base: Option<&Path>,
        embedded: Embedded,
        text: Arc<str>,
    ) -> Option<(FileSyntax, Vec<Step>)> {
        let mut d = Diags::new(display, text.clone());
        let checked = match embedded {
            Embedded(true) => Ok(()),
            Embedded(false) => ron::from_str::<ron::Value>(&text).map(drop),
        };
        if let Err(e) = checked {
            let loc = super::Loc { file: d.file.clone(), line: e.span.start.line, col: e.span.start.col };
            s.diags.push(PipelineDiag::new(Severity::Error, loc, format!("RON syntax: {}", e.code)));
            return None;
        }
        let root = match syntax::parse(&text) {
            Ok(r) => r,
            Err((at, msg)) => {
                d.error(at, msg);
                s.diags.append(&mut d.list);
                return None;
            }
        };
        let file = model::read_file(&root, &mut d);
        let Some(file) = file else {
            s.diags.append(&mut d.list);
            return None;
        };
        let pushed = identity.map(|c| s.stack.push(c)).is_some();
        let steps = self.build_steps(s, &mut d, base, &file.steps);
        if pushed {
            s.stack.pop();
        }
        s.diags.append(&mut d.list);
        Some((file, steps))
    }

    fn build_steps(&self, s: &mut Session, d: &mut Diags, base: Option<&Path>, steps: &[StepSyntax]) -> Vec<Step> {
        let mut out = Vec::new();
        for step in steps {
            match step {
                StepSyntax::Pass { name, at, name_at, options } => {
                    let Some(decl) = self.registry.get(name) else {
                        let near = suggest(name, self.registry.names());
                        let hint = match near {
                            Some(n) => format!("; did you mean `{n}`?"),
                            None => " (`xir-opt --list-passes` lists the registered passes)".to_string(),
                        };
                        d.error_at_name(*name_at, name, format!("unknown pass `{}`{hint}", super::excerpt(name)), near);
                        continue;
                    };
                    let Some(pass) = create_pass(decl, options.as_ref(), *at, d) else { continue };
                    out.push(Step::Pass(PassStep {
                        name: name.clone(),
                        pass,
                        options: options.as_ref().map(|o| d.text[o.start..o.end].to_string()),
                        loc: d.loc(*at),
                        id: next(s),
                    }));
                }
                StepSyntax::Hook { name, at, name_at } => {
                    let Some(hook) = self.registry.hook(name) else {
                        let declared: Vec<&str> = self.registry.hooks().map(|h| h.name).collect();
                        let near = suggest(name, declared.iter().copied());
                        let hint = match near {
                            Some(n) => format!("; did you mean `{n}`?"),
                            None if declared.is_empty() => " (no hooks are declared)".to_string(),
                            None => format!(" (declared hooks: {})", declared.join(", ")),
                        };
                        d.error_at_name(*name_at, name, format!("unknown hook `{}`{hint}", super::excerpt(name)), near);
                        continue;
                    };
                    let loc = d.loc(*at);
                    let bound = match hook.bound.and_then(|b| self.registry.get(b)) {
                        None => None,
                        Some(decl) => match (decl.create)(None) {
                            Ok(pass) => Some(PassStep {
                                name: decl.info.name.to_string(),
                                pass,
                                options: None,
                                loc: loc.clone(),
                                id: next(s),
                            }),
                            Err(e) => {
                                d.error(
                                    *at,
                                    format!("pass `{}` bound to hook `{name}` failed to build: {e}", decl.info.name),
                                );
                                continue;
                            }
                        },
                    };
                    out.push(Step::Hook { name: name.clone(), bound, loc });
                }
                StepSyntax::OptGroup { min_level, at, steps } => {
                    let Some(steps) = self.nested(s, d, *at, |l, s, d| l.build_steps(s, d, base, steps)) else {
                        continue;
                    };
                    out.push(Step::OptGroup { min_level: *min_level, steps, loc: d.loc(*at) });
                }
                StepSyntax::FixedPoint { max_iterations, at, steps } => {
                    let Some(steps) = self.nested(s, d, *at, |l, s, d| l.build_steps(s, d, base, steps)) else {
                        continue;
                    };
                    out.push(Step::FixedPoint { max_iterations: *max_iterations, steps, loc: d.loc(*at) });
                }
                StepSyntax::Include { target, at, target_at } => {
                    let step = self.nested(s, d, *target_at, |l, s, d| l.include(s, d, base, target, *at, *target_at));
                    if let Some(step) = step.flatten() {
                        out.push(step);
                    }
                }
            }
        }
        out
    }

    /// Build one nested level (a group's steps or an include) with `build`,
    /// or report at `at` that it would nest deeper than `MAX_NESTING`.
    fn nested<T>(
        &self,
        s: &mut Session,
        d: &mut Diags,
        at: usize,
        build: impl FnOnce(&Self, &mut Session, &mut Diags) -> T,
    ) -> Option<T> {
        if s.depth >= MAX_NESTING {
            d.error(at, format!("steps nest more than {MAX_NESTING} deep (includes and groups together)"));
            return None;
        }
        s.depth += 1;
        let r = build(self, s, d);
        s.depth -= 1;
        Some(r)
    }

    fn include(
        &self,
        s: &mut Session,
        d: &mut Diags,
        base: Option<&Path>,
        target: &str,
        at: usize,
        target_at: usize,
    ) -> Option<Step> {
        let source = match self.resolve(target, base) {
            Ok(src) => src,
            Err(e) => {
                d.error(target_at, format!("cannot include `{}`: {e}", super::excerpt(target)));
                return None;
            }
        };
        let identity = source.identity();
        if let Some(i) = s.stack.iter().position(|p| *p == identity) {
            let mut chain: Vec<String> = s.stack[i..].iter().map(|p| file_name(p)).collect();
            chain.push(file_name(&identity));
            d.error(target_at, format!("include cycle: {}", chain.join(" -> ")));
            return None;
        }
        let (text, base, embedded): (Arc<str>, Option<&Path>, Embedded) = match &source {
            PipelineSource::File(path) => match crate::text::source::read_source_file(path) {
                Ok(t) => (t.into(), path.parent(), Embedded(false)),
                Err(e) => {
                    let at = e.span.map(|s| format!(":{}:{}", s.line, s.col)).unwrap_or_default();
                    d.error(
                        target_at,
                        format!("cannot read included pipeline `{}{at}`: {}", path.display(), e.message),
                    );
                    return None;
                }
            },
            PipelineSource::Shipped { text, .. } => ((*text).into(), None, Embedded(true)),
        };
        let before = s.diags.len();
        let (file, steps) = self.load_file(s, source.display().into(), Some(identity), base, embedded, text)?;
        if has_errors(&s.diags[before..]) {
            d.error(target_at, format!("included pipeline `{target}` has errors (reported above)"));
            return None;
        }
        Some(Step::Include {
            target: target.to_string(),
            input: file.input.0,
            output: file.output.0,
            steps,
            loc: d.loc(at),
        })
    }
}

/// Whether a text is one of the loader's embedded pipelines, whose RON
/// syntax was checked when they were embedded (`Loader::with_shipped`).
#[derive(Clone, Copy)]
struct Embedded(bool);

fn next(s: &mut Session) -> usize {
    s.next_id += 1;
    s.next_id - 1
}

fn has_errors(diags: &[PipelineDiag]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}

/// Build a pass from its options node, locating any rejected option.
fn create_pass(decl: &PassDecl, options: Option<&Node>, at: usize, d: &mut Diags) -> Option<Box<dyn Pass>> {
    let pass_name = decl.info.name;
    let Some(node) = options else {
        return match (decl.create)(None) {
            Ok(p) => Some(p),
            Err(e) => {
                d.error(at, format!("pass `{pass_name}` cannot be built with default options: {e}"));
                None
            }
        };
    };
    let fields = match &node.kind {
        NodeKind::Struct { name: None, fields } => fields,
        NodeKind::Tuple { name: None, items } if items.is_empty() => return create_pass(decl, None, at, d),
        _ => {
            d.error(
                node.start,
                format!(
                    "options of pass `{pass_name}` must be written `(option: value, ...)`, found {}",
                    node.describe()
                ),
            );
            return None;
        }
    };
    let mut seen: Vec<&str> = Vec::new();
    for f in fields {
        if seen.contains(&f.name.as_str()) {
            d.error(f.at, format!("option `{}` of pass `{pass_name}` is given twice", f.name));
            return None;
        }
        seen.push(&f.name);
    }
    // Options that do not parse are reported as text; a pass's refusal
    // keeps its type, so a bad file an option names is located in that file.
    let parse = |src: &str| ron::from_str::<ron::Value>(src).map_err(|e| Rejected::Syntax(e.to_string()));
    let create = |v: ron::Value| (decl.create)(Some(&v)).map_err(Rejected::Options);
    let all = parse(&d.text[node.start..node.end]);
    let err = match all.and_then(create) {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    // Find the option that is rejected on its own, to point at it.
    let documented: Vec<&str> = decl.options.iter().map(|o| o.name).collect();
    for f in fields {
        let alone = format!("({}: {})", f.name, &d.text[f.value.start..f.value.end]);
        let Err(e) = parse(&alone).and_then(create) else { continue };
        if !documented.contains(&f.name.as_str()) {
            let near = suggest(&f.name, documented.iter().copied());
            let hint = match near {
                Some(s) => format!("; did you mean `{s}`?"),
                None if documented.is_empty() => format!(" (`{pass_name}` takes no options)"),
                None => format!(" (options: {})", documented.join(", ")),
            };
            let message = format!("unknown option `{}` for pass `{pass_name}`{hint}", super::excerpt(&f.name));
            d.error_at_name(f.at, &f.name, message, near);
        } else if let Rejected::Options(OptionsError::File(fe)) = &e {
            d.error_in_named_file(f.value.start, &f.name, fe);
        } else {
            let doc = decl.options.iter().find(|o| o.name == f.name).map(|o| o.ty).unwrap_or("?");
            d.error(
                f.value.start,
                format!("option `{}` of pass `{pass_name}` expects {doc}, found {}: {e}", f.name, f.value.describe()),
            );
        }
        return None;
    }
    d.error(node.start, format!("invalid options for pass `{pass_name}`: {err}"));
    None
}

/// Why a pass's options node did not build the pass.
enum Rejected {
    /// The text is not a RON value.
    Syntax(String),
    /// The pass refused the value.
    Options(OptionsError),
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejected::Syntax(m) => f.write_str(m),
            Rejected::Options(e) => write!(f, "{e}"),
        }
    }
}
