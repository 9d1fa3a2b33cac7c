//! The measured rows of the legalization scaling benches and the walk that
//! builds each row's input, shared by `benches/legalize.rs` (criterion) and
//! `benches/legalize_ratio.rs` (paired 10^3 / 10^6 ratios), so both
//! measure the same steps on the same inputs. The walk visits one row at a
//! time with its input at every size, so a bench measures a row's sizes
//! back to back.
//!
//! The rows, in walk order:
//! - every pass `spirv-legalize.ron` runs at `-O1`, each on the output of
//!   the ones before it (a pass that occurs twice is labelled `name#2`);
//! - `opt_<name>` for the `-O2` / `-O3` passes in [`OPT_ROWS`], each once in
//!   that order, starting from the input of `reg2mem` (where those groups
//!   run);
//! - `pipeline_O0` and `pipeline_O1`, the whole pipeline through
//!   `PassManager` on the generated module.
//!
//! Included by `#[path]` next to `common/scaling.rs` (as `scaling`).

// Each including bench uses its own part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use xir::pass::{AnalysisCache, Pass, PassContext, PassRegistry};
use xir::pipeline::{PassManager, Pipeline, RunOptions};
use xir::Module;

/// Passes of the `-O2` / `-O3` groups measured as extra rows (`opt_<name>`),
/// in this order, from the IR where those groups run.
pub const OPT_ROWS: &[&str] = &["sccp", "cvp", "licm", "indvar_simplify", "loop_rotation"];

/// The opt level whose pass sequence is measured pass by pass.
pub const OPT_LEVEL: u8 = 1;

/// What one row runs.
pub enum Runner<'a> {
    Pass {
        pass: &'a dyn Pass,
        name: &'a str,
    },
    /// An `opt_*` row's pass, made from the registry with default options.
    OwnedPass {
        pass: Box<dyn Pass>,
        name: &'static str,
    },
    Pipeline {
        pipe: &'a Pipeline,
        opts: RunOptions,
    },
}

pub struct Row<'a> {
    pub label: String,
    pub runner: Runner<'a>,
}

impl Row<'_> {
    /// Runs the row on `m`; a pass's statistics as `name=value` pairs (the
    /// probe prints them, so how much work a pass did is visible by size).
    pub fn run(&self, m: &mut Module) -> String {
        let (pass, name) = match &self.runner {
            Runner::Pass { pass, name } => (*pass, *name),
            Runner::OwnedPass { pass, name } => (pass.as_ref(), *name),
            Runner::Pipeline { pipe, opts } => {
                if let Err(e) = PassManager::new(pipe, opts.clone()).run(m, &mut std::io::sink()) {
                    panic!("{}: {e}", self.label);
                }
                return String::new();
            }
        };
        let mut cache = AnalysisCache::default();
        let mut cx = PassContext { analyses: &mut cache, opt_level: OPT_LEVEL, fast_math: false };
        match pass.run(m, &mut cx) {
            Ok(out) => out.stats.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
            Err(e) => panic!("{name} failed: {e}\n{}", xir::diag::render(&e.diagnostics)),
        }
    }

    /// Whether the row's input is the output of the rows before it (a
    /// chain a skipped row cuts), not the generated module itself.
    pub fn is_chained(&self) -> bool {
        !matches!(self.runner, Runner::Pipeline { .. })
    }
}

/// The single untimed-by-criterion run that advanced one input past a row.
pub struct Probe {
    pub took: Duration,
    pub insts_before: usize,
    pub insts_after: usize,
    pub stats: String,
}

pub trait RowVisitor {
    /// Whether to run `row` on input `k` (of the modules given to `walk`,
    /// in their order), knowing the probes of inputs `0..k`. `false` drops
    /// input `k` and every later one, for this row and every row after it
    /// (sizes ascend, so this is how a size too slow to run stops there; a
    /// chain left without inputs visits nothing more).
    fn admit_input(&mut self, _row: &Row, _k: usize, _probes: &[Probe]) -> bool {
        true
    }
    /// `inputs[i]` is the row's input built from `modules[i]`; `probes[i]`
    /// is the run that produced the next row's input from it. Inputs that
    /// `admit_input` dropped are not among them.
    fn visit(&mut self, row: &Row, inputs: &[Module], probes: &[Probe]);
}

/// Runs `row` once on every input of `cur` that the visitor admits (the
/// others are dropped from `cur`), and visits it with the inputs it ran on.
fn advance(row: &Row, cur: &mut Vec<Module>, v: &mut impl RowVisitor) {
    let mut inputs = Vec::with_capacity(cur.len());
    let mut probes: Vec<Probe> = Vec::with_capacity(cur.len());
    for k in 0..cur.len() {
        if !v.admit_input(row, k, &probes) {
            cur.truncate(k);
            break;
        }
        let m = &mut cur[k];
        inputs.push(m.clone());
        let insts_before = m.inst_count();
        let t = Instant::now();
        let stats = row.run(m);
        probes.push(Probe { took: t.elapsed(), insts_before, insts_after: m.inst_count(), stats });
    }
    if !inputs.is_empty() {
        v.visit(row, &inputs, &probes);
    }
}

/// Walks every row over the given generated modules in lockstep (one per
/// size the visitor measures together).
pub fn walk(pipe: &Pipeline, opt_reg: &PassRegistry, modules: &[Module], v: &mut impl RowVisitor) {
    let mut cur = modules.to_vec();
    let mut opt_input: Option<Vec<Module>> = None;
    let mut occurrences: std::collections::HashMap<&str, usize> = Default::default();
    for step in crate::scaling::steps_at(&pipe.steps, OPT_LEVEL) {
        let nth = occurrences.entry(step.name.as_str()).or_default();
        *nth += 1;
        let label = if *nth == 1 { step.name.clone() } else { format!("{}#{nth}", step.name) };
        let row = Row { label, runner: Runner::Pass { pass: step.pass.as_ref(), name: &step.name } };
        if step.name == "reg2mem" {
            opt_input = Some(cur.clone());
        }
        advance(&row, &mut cur, v);
    }
    drop(cur);
    if let Some(mut cur) = opt_input.take() {
        for &name in OPT_ROWS {
            let pass = (opt_reg.get(name).expect("registered").create)(None).expect("default options");
            let row = Row { label: format!("opt_{name}"), runner: Runner::OwnedPass { pass, name } };
            advance(&row, &mut cur, v);
        }
    }
    for opt_level in [0u8, 1] {
        let opts = RunOptions { opt_level, ..RunOptions::default() };
        let row = Row { label: format!("pipeline_O{opt_level}"), runner: Runner::Pipeline { pipe, opts } };
        advance(&row, &mut modules.to_vec(), v);
    }
}
