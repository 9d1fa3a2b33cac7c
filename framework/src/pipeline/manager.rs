//! The pass manager: runs a loaded `Pipeline` over a module.
//!
//! Per pass execution: a `tracing` span; optional printing before / after
//! and a diff when the IR changed; timing and IR size; the analysis cache
//! invalidated except what the pass preserves (in debug builds, preserved
//! CFGs and dominator trees are recomputed and compared, so a false claim
//! fails loudly); with `verify_each`, the generic verifier and the dialect
//! check against the dialect the pass claims to produce. A panic (caught), a
//! pass error, IR the verifier rejects or a false preserve claim stops the
//! run with an error naming the pass and its step. Only internal faults (a
//! panic, invalid IR after a pass, a false preserve claim) write a
//! reproducer (see `repro`): a pass error is the pass refusing the user's
//! input with a reason, and a reproducer of it would only litter the disk. The module is checked against the pipeline's input dialect
//! before the first pass and against its output dialect after the last.

use std::{
    collections::BTreeMap,
    fmt,
    io::Write,
    panic::{catch_unwind, AssertUnwindSafe},
    path::PathBuf,
    time::Instant,
};

use xir_spec::Dialect;

use super::instrument::{timing_table, unified_diff, TimingRow};
use super::repro::{self, Frame, Reproducer};
use super::{Loc, PassStep, Pipeline, Step};
use crate::analysis::{Cfg, DomTree};
use crate::diag::Diagnostic;
use crate::ir::Module;
use crate::pass::{AnalysisCache, AnalysisKind, PassContext};

/// What to do besides running the passes.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Opt level (0..=3): opt-level groups with a higher `min_level` are skipped.
    pub opt_level: u8,
    pub fast_math: bool,
    /// Verify and dialect-check after every pass.
    pub verify_each: bool,
    /// Print the IR before / after these passes (by registered name).
    pub print_before: Vec<String>,
    pub print_after: Vec<String>,
    pub print_after_all: bool,
    /// Print a unified diff after each pass that changed the printed IR.
    pub print_changed: bool,
    /// Collect the timing table (`RunReport::timing_table`).
    pub time_passes: bool,
    /// Run only the first N pass executions.
    pub bisect_limit: Option<usize>,
    /// Where to write a reproducer when a pass fails; `None` writes none.
    pub reproducer_dir: Option<PathBuf>,
}

/// What a successful run did.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Pass executions run (every iteration of a fixed-point group counts).
    pub executions: usize,
    /// Per pass step, in pipeline order (filled when `time_passes` is set).
    pub timings: Vec<TimingRow>,
    /// With a bisect limit: which execution was the last one run.
    pub bisect: Option<String>,
    /// The dialect the IR is in at the end.
    pub final_dialect: String,
}

impl RunReport {
    pub fn timing_table(&self) -> String {
        timing_table(&self.timings)
    }
}

/// Why a run stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The module is not in the pipeline's input dialect.
    Input,
    Panic,
    /// The pass returned an error.
    PassError,
    /// The verifier or the dialect check rejected the IR the pass left.
    InvalidIr,
    /// A preserved analysis differs from a fresh computation.
    FalsePreserve,
    /// After the last step the module is not in the declared output dialect.
    Output,
}

impl FailureKind {
    /// A fault of the framework or a pass, not of the input: the only
    /// failures a reproducer is written for.
    pub fn is_internal_fault(self) -> bool {
        matches!(self, FailureKind::Panic | FailureKind::InvalidIr | FailureKind::FalsePreserve)
    }
}

#[derive(Clone, Debug)]
pub struct RunError {
    pub kind: FailureKind,
    /// The pass that failed and its step in the pipeline file.
    pub pass: Option<(String, Loc)>,
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
    pub reproducer: Option<Reproducer>,
    /// Why no reproducer could be written, if one was asked for.
    pub reproducer_error: Option<String>,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pass {
            Some((_, loc)) => writeln!(f, "{loc}: error: {}", self.message)?,
            None => writeln!(f, "error: {}", self.message)?,
        }
        for d in &self.diagnostics {
            writeln!(f, "{d}")?;
        }
        if let Some(r) = &self.reproducer {
            writeln!(
                f,
                "note: reproducer written to {0}; replay with: {1}; reduce with: xir-reduce {0} -o reduced.xir",
                r.dir.display(),
                r.command
            )?;
        }
        if let Some(e) = &self.reproducer_error {
            writeln!(f, "note: no reproducer written: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunError {}

impl RunError {
    /// The failure as diagnostics for the shared renderers: the pass's own
    /// (rule `pass`, at its pipeline step, the reproducer as a note), then
    /// the located ones about the IR.
    pub fn to_diagnostics(&self) -> Vec<Diagnostic> {
        let mut head = Diagnostic::error(crate::diag::Rule::Pass, self.message.clone());
        if let Some((_, loc)) = &self.pass {
            head = head
                .with_file(loc.file.to_string())
                .with_span(Some(crate::ir::Span::new(loc.line as u32, loc.col as u32)));
        }
        if let Some(r) = &self.reproducer {
            head = head.with_note(format!(
                "reproducer written to {0}; replay with: {1}; reduce with: xir-reduce {0} -o reduced.xir",
                r.dir.display(),
                r.command
            ));
        }
        if let Some(e) = &self.reproducer_error {
            head = head.with_note(format!("no reproducer written: {e}"));
        }
        std::iter::once(head).chain(self.diagnostics.iter().cloned()).collect()
    }
}

/// Dialect findings with a secondary label at `loc` in the pipeline file:
/// the place that required the dialect (a pipeline's input or output
/// declaration, a pass step).
fn required_at(diags: Vec<Diagnostic>, loc: &Loc, message: String) -> Vec<Diagnostic> {
    let span = crate::ir::Span::new(loc.line as u32, loc.col as u32);
    diags
        .into_iter()
        .map(|mut d| {
            d.labels.push(crate::diag::Label { file: Some(loc.file.to_string()), span, message: message.clone() });
            d
        })
        .collect()
}

pub struct PassManager<'p> {
    pipeline: &'p Pipeline,
    options: RunOptions,
}

struct Exec<'a, 'w> {
    opts: &'a RunOptions,
    pipeline: &'a Pipeline,
    log: &'w mut dyn Write,
    cache: AnalysisCache,
    executions: usize,
    stopped: bool,
    /// The last pass step run (named in the bisect report).
    last: Option<&'a PassStep>,
    timings: BTreeMap<usize, TimingRow>,
    dialect: &'static Dialect,
    frames: Vec<Frame<'a>>,
    /// The module the run started from, kept when a reproducer may be
    /// written: the module before a failing pass is rebuilt from it.
    input: Option<Module>,
}

fn dialect(name: &str) -> &'static Dialect {
    // The loader checked every dialect name of the pipeline and its passes.
    xir_spec::spec().dialect(name).unwrap_or_else(|| &xir_spec::spec().dialects[0])
}

impl<'p> PassManager<'p> {
    pub fn new(pipeline: &'p Pipeline, options: RunOptions) -> Self {
        PassManager { pipeline, options }
    }

    /// Run the pipeline over `module`; printing goes to `log`.
    pub fn run(&self, module: &mut Module, log: &mut dyn Write) -> Result<RunReport, Box<RunError>> {
        let input = dialect(&self.pipeline.input);
        let diags = required_at(
            crate::dialect::check_module(module, input),
            &self.pipeline.input_at,
            format!("pipeline `{}` takes `{}` here", self.pipeline.name, input.name),
        );
        if !diags.is_empty() {
            return Err(Box::new(RunError {
                kind: FailureKind::Input,
                pass: None,
                message: format!(
                    "the input module is not in dialect `{}`, the input of pipeline `{}`",
                    input.name, self.pipeline.name
                ),
                diagnostics: diags,
                reproducer: None,
                reproducer_error: None,
            }));
        }
        let mut ex = Exec {
            opts: &self.options,
            pipeline: self.pipeline,
            log,
            cache: AnalysisCache::default(),
            executions: 0,
            stopped: false,
            last: None,
            timings: BTreeMap::new(),
            dialect: input,
            frames: Vec::new(),
            input: self.options.reproducer_dir.as_ref().map(|_| module.clone()),
        };
        let _span = tracing::info_span!("pipeline", name = %self.pipeline.name).entered();
        ex.run_steps(&self.pipeline.steps, module, None)?;
        let mut report = RunReport {
            executions: ex.executions,
            timings: ex.timings.into_values().collect(),
            bisect: None,
            final_dialect: ex.dialect.name.to_string(),
        };
        if let Some(limit) = self.options.bisect_limit {
            let last = ex.last.map(|ps| format!("`{}` at {}", ps.name, ps.loc));
            report.bisect = Some(match (&last, ex.stopped) {
                (Some(last), true) => format!("bisect-limit {limit}: stopped after execution #{limit}, {last}"),
                (None, true) => format!("bisect-limit {limit}: stopped before the first execution"),
                _ => format!(
                    "bisect-limit {limit} not reached: the pipeline ran all {} pass executions{}",
                    ex.executions,
                    last.as_ref().map(|l| format!("; the last was {l}")).unwrap_or_default()
                ),
            });
        }
        if !ex.stopped {
            let output = dialect(&self.pipeline.output);
            let diags = required_at(
                crate::dialect::check_module(module, output),
                &self.pipeline.output_at,
                format!("pipeline `{}` declares output `{}` here", self.pipeline.name, output.name),
            );
            if !diags.is_empty() {
                return Err(Box::new(RunError {
                    kind: FailureKind::Output,
                    pass: None,
                    message: format!(
                        "after pipeline `{}` the module is not in its declared output dialect `{}`{}",
                        self.pipeline.name,
                        output.name,
                        if self.options.verify_each { "" } else { " (rerun with --verify-each to find the pass)" }
                    ),
                    diagnostics: diags,
                    reproducer: None,
                    reproducer_error: None,
                }));
            }
        }
        // The module outlives the run (a driver hands it on, a workspace
        // keeps it): the room its tables grew is given back.
        for f in &mut module.functions {
            f.shrink_to_fit();
        }
        Ok(report)
    }
}

impl<'a> Exec<'a, '_> {
    /// Run a step list; returns whether any pass reported a change.
    fn run_steps(&mut self, steps: &'a [Step], m: &mut Module, fixed_left: Option<u32>) -> Result<bool, Box<RunError>> {
        self.frames.push(Frame { steps, index: 0, fixed_point_left: fixed_left });
        let mut changed = false;
        for (i, step) in steps.iter().enumerate() {
            if self.stopped {
                break;
            }
            if let Some(f) = self.frames.last_mut() {
                f.index = i;
            }
            let r = match step {
                Step::Pass(p) | Step::Hook { bound: Some(p), .. } => self.run_pass(p, m),
                Step::Hook { bound: None, .. } => Ok(false),
                Step::Include { steps, .. } => self.run_steps(steps, m, None),
                Step::OptGroup { min_level, steps, .. } => {
                    if self.opts.opt_level >= *min_level {
                        self.run_steps(steps, m, None)
                    } else {
                        Ok(false)
                    }
                }
                Step::FixedPoint { max_iterations, steps, loc } => {
                    let _span = tracing::info_span!("fixed_point", at = %loc).entered();
                    let mut r = Ok(false);
                    for iter in 1..=*max_iterations {
                        match self.run_steps(steps, m, Some(max_iterations - iter)) {
                            Ok(c) => {
                                r = Ok(r.unwrap_or(false) | c);
                                if !c || self.stopped {
                                    break;
                                }
                            }
                            Err(e) => {
                                r = Err(e);
                                break;
                            }
                        }
                    }
                    r
                }
            };
            match r {
                Ok(c) => changed |= c,
                Err(e) => {
                    self.frames.pop();
                    return Err(e);
                }
            }
        }
        self.frames.pop();
        Ok(changed)
    }

    fn run_pass(&mut self, ps: &'a PassStep, m: &mut Module) -> Result<bool, Box<RunError>> {
        if self.opts.bisect_limit.is_some_and(|l| self.executions >= l) {
            self.stopped = true;
            return Ok(false);
        }
        self.executions += 1;
        let n = self.executions;
        let info = ps.pass.info();
        let _span = tracing::info_span!("pass", name = %ps.name, execution = n, at = %ps.loc).entered();
        let wants = |list: &[String]| list.contains(&ps.name);
        if wants(&self.opts.print_before) {
            let text = crate::text::print_module(m);
            let _ = writeln!(self.log, "// ----- IR before `{}` (#{n}, {}) -----\n{text}", ps.name, ps.loc);
        }
        let before_text = self.opts.print_changed.then(|| crate::text::print_module(m));
        let insts_before = if self.opts.time_passes { m.inst_count() } else { 0 };
        let guarded = guarded_analyses(info.preserves);
        if cfg!(debug_assertions) && !guarded.is_empty() {
            for f in m.func_ids().filter(|&f| m.func(f).body().is_some()).collect::<Vec<_>>() {
                self.cache.dominators(m, f);
            }
        }
        let start = Instant::now();
        let result = {
            let mut cx = PassContext {
                analyses: &mut self.cache,
                opt_level: self.opts.opt_level,
                fast_math: self.opts.fast_math,
            };
            catch_unwind(AssertUnwindSafe(|| ps.pass.run(m, &mut cx)))
        };
        let wall = start.elapsed();
        let outcome = match result {
            Err(payload) => {
                let msg = panic_message(payload.as_ref());
                return Err(self.fail(
                    ps,
                    FailureKind::Panic,
                    format!("pass `{}` panicked: {msg}", ps.name),
                    Vec::new(),
                ));
            }
            Ok(Err(e)) => {
                let kind = FailureKind::PassError;
                return Err(self.fail(ps, kind, format!("pass `{}` failed: {}", ps.name, e.message), e.diagnostics));
            }
            Ok(Ok(o)) => o,
        };
        self.cache.invalidate_except(info.preserves);
        if cfg!(debug_assertions) {
            if let Some(msg) = self.false_preserve(m, &guarded) {
                let msg = format!("pass `{}` claims to preserve {msg}", ps.name);
                return Err(self.fail(ps, FailureKind::FalsePreserve, msg, Vec::new()));
            }
        }
        let produced = match info.produced_from(&self.dialect.name) {
            None => self.dialect,
            Some(d) => dialect(d),
        };
        if self.opts.verify_each {
            let mut diags = crate::verify::verify_module(m);
            if diags.is_empty() {
                diags = required_at(
                    crate::dialect::check_module(m, produced),
                    &ps.loc,
                    format!("`{}` must leave `{}`, from this step", ps.name, produced.name),
                );
            }
            if !diags.is_empty() {
                let msg = format!(
                    "pass `{}` left IR that is not valid `{}` ({} problem{})",
                    ps.name,
                    produced.name,
                    diags.len(),
                    if diags.len() == 1 { "" } else { "s" }
                );
                return Err(self.fail(ps, FailureKind::InvalidIr, msg, diags));
            }
        }
        self.dialect = produced;
        if self.opts.print_after_all || wants(&self.opts.print_after) {
            let text = crate::text::print_module(m);
            let _ = writeln!(self.log, "// ----- IR after `{}` (#{n}, {}) -----\n{text}", ps.name, ps.loc);
        }
        if let Some(before) = before_text {
            let after = crate::text::print_module(m);
            if after != before {
                let stats = if outcome.stats.is_empty() {
                    String::new()
                } else {
                    format!(
                        " [{}]",
                        outcome.stats.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
                    )
                };
                let _ = writeln!(self.log, "// ----- `{}` (#{n}, {}) changed the IR{stats} -----", ps.name, ps.loc);
                let _ = write!(self.log, "{}", unified_diff(&before, &after, &ps.name));
            }
        }
        if self.opts.time_passes {
            let row = self.timings.entry(ps.id).or_insert_with(|| TimingRow {
                name: ps.name.clone(),
                loc: ps.loc.clone(),
                runs: 0,
                wall: Default::default(),
                insts_before,
                insts_after: 0,
                stats: Vec::new(),
            });
            row.runs += 1;
            row.wall += wall;
            row.insts_after = m.inst_count();
            row.add_stats(&outcome.stats);
        }
        tracing::debug!(changed = outcome.changed, "pass done");
        self.last = Some(ps);
        if self.opts.bisect_limit == Some(n) {
            self.stopped = true;
        }
        Ok(outcome.changed)
    }

    /// The first preserved CFG or dominator tree that no longer matches a
    /// fresh computation, described.
    fn false_preserve(&self, m: &Module, guarded: &[AnalysisKind]) -> Option<String> {
        for f in m.func_ids() {
            let func = m.func(f);
            if guarded.contains(&AnalysisKind::Cfg) {
                if let Some(cached) = self.cache.peek::<Cfg>(AnalysisKind::Cfg, Some(f)) {
                    if *cached != Cfg::compute(func) {
                        return Some(format!("the CFG, but it changed the CFG of @{}", func.name));
                    }
                }
            }
            if guarded.contains(&AnalysisKind::Dominators) {
                if let Some(cached) = self.cache.peek::<DomTree>(AnalysisKind::Dominators, Some(f)) {
                    if *cached != DomTree::compute(func) {
                        return Some(format!("dominators, but it changed the dominator tree of @{}", func.name));
                    }
                }
            }
        }
        None
    }

    fn fail(
        &mut self,
        ps: &PassStep,
        kind: FailureKind,
        message: String,
        diagnostics: Vec<Diagnostic>,
    ) -> Box<RunError> {
        let mut err = RunError {
            kind,
            pass: Some((ps.name.clone(), ps.loc.clone())),
            message,
            diagnostics,
            reproducer: None,
            reproducer_error: None,
        };
        if let (Some(dir), true) = (&self.opts.reproducer_dir, kind.is_internal_fault()) {
            let before = match self.module_before_execution(self.executions) {
                Ok(m) => m,
                Err(e) => {
                    err.reproducer_error = Some(e);
                    return Box::new(err);
                }
            };
            let steps = repro::remaining_steps(&self.frames, ps, self.opts.opt_level);
            let why = format!("pass `{}` at {} failed: {}", ps.name, ps.loc, first_line(&err.message));
            match repro::write(
                dir,
                &before,
                &self.pipeline.name,
                &self.dialect.name,
                &self.pipeline.output,
                &steps,
                &why,
                self.opts.opt_level,
            ) {
                Ok(r) => err.reproducer = Some(r),
                Err(e) => err.reproducer_error = Some(format!("{}: {e}", dir.display())),
            }
        }
        Box::new(err)
    }

    /// The module as it was before execution `n`: the run's input with the
    /// `n - 1` executions before it run again (passes are deterministic).
    /// Cloning the module before every pass in case it fails cost more than
    /// many of the passes; a failure pays for the replay instead.
    fn module_before_execution(&self, n: usize) -> Result<Module, String> {
        let mut m = self.input.clone().ok_or("the run kept no copy of its input")?;
        let options = RunOptions {
            opt_level: self.opts.opt_level,
            fast_math: self.opts.fast_math,
            bisect_limit: Some(n - 1),
            ..RunOptions::default()
        };
        let replayed = PassManager::new(self.pipeline, options)
            .run(&mut m, &mut std::io::sink())
            .map_err(|e| format!("replaying the {} pass execution(s) before the failure failed: {e}", n - 1))?;
        if replayed.executions != n - 1 {
            return Err(format!(
                "replaying the {} pass execution(s) before the failure ran {}",
                n - 1,
                replayed.executions
            ));
        }
        Ok(m)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The analyses whose preservation is checked in debug builds.
fn guarded_analyses(preserves: &[AnalysisKind]) -> Vec<AnalysisKind> {
    [AnalysisKind::Cfg, AnalysisKind::Dominators].into_iter().filter(|k| preserves.contains(k)).collect()
}

/// A caught panic's message (its `&str` or `String` payload).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}
