//! Reproducers. When a pass panics, fails, breaks the IR or makes a false
//! `preserves` claim, the pass manager writes the IR as it was before that
//! pass (`input.xir`) and a pipeline of the remaining steps, that pass first
//! (`repro.ron`), and names the commands that replay it and that reduce it
//! (`xir-reduce DIR`, docs/reduce.md).
//!
//! The remaining steps are the failing pass, the rest of every enclosing step
//! list, and, inside a fixed-point group, the group again with its unused
//! iterations. Opt-level groups are resolved at the run's opt level (their
//! steps inlined or dropped) and includes are inlined, so the reproducer is
//! self-contained.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use super::{PassStep, Step};
use crate::ir::Module;

/// A frame of the walk: a step list and the index of the step being run;
/// for a fixed-point body, the iterations left after the current one.
pub(crate) struct Frame<'a> {
    pub steps: &'a [Step],
    pub index: usize,
    pub fixed_point_left: Option<u32>,
}

/// The written reproducer.
#[derive(Clone, Debug)]
pub struct Reproducer {
    pub dir: PathBuf,
    pub command: String,
}

/// RON text of the steps that remain when the innermost frame's current step
/// (a pass) fails.
pub(crate) fn remaining_steps(frames: &[Frame], failing: &PassStep, opt_level: u8) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "        {},", pass_ron(failing));
    for f in frames.iter().rev() {
        for s in &f.steps[f.index + 1..] {
            write_step(&mut out, s, opt_level, 2);
        }
        if let Some(left) = f.fixed_point_left.filter(|&l| l > 0) {
            let _ = writeln!(out, "        FixedPoint(max_iterations: {left}, steps: [");
            for s in f.steps {
                write_step(&mut out, s, opt_level, 3);
            }
            let _ = writeln!(out, "        ]),");
        }
    }
    out
}

fn pass_ron(p: &PassStep) -> String {
    match &p.options {
        Some(o) => format!("Pass({:?}, {o})", p.name),
        None => format!("Pass({:?})", p.name),
    }
}

fn write_step(out: &mut String, s: &Step, opt_level: u8, depth: usize) {
    let pad = "    ".repeat(depth);
    match s {
        Step::Pass(p) => {
            let _ = writeln!(out, "{pad}{},", pass_ron(p));
        }
        Step::Hook { name, .. } => {
            let _ = writeln!(out, "{pad}Hook({name:?}),");
        }
        Step::Include { steps, .. } => steps.iter().for_each(|s| write_step(out, s, opt_level, depth)),
        Step::OptGroup { min_level, steps, .. } => {
            if opt_level >= *min_level {
                steps.iter().for_each(|s| write_step(out, s, opt_level, depth));
            }
        }
        Step::FixedPoint { max_iterations, steps, .. } => {
            let _ = writeln!(out, "{pad}FixedPoint(max_iterations: {max_iterations}, steps: [");
            steps.iter().for_each(|s| write_step(out, s, opt_level, depth + 1));
            let _ = writeln!(out, "{pad}]),");
        }
    }
}

/// Write `input.xir` and `repro.ron` into `dir`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    dir: &Path,
    before: &Module,
    pipeline_name: &str,
    input_dialect: &str,
    output_dialect: &str,
    steps: &str,
    why: &str,
    opt_level: u8,
) -> std::io::Result<Reproducer> {
    std::fs::create_dir_all(dir)?;
    let input = dir.join("input.xir");
    let ron = dir.join("repro.ron");
    let text = std::panic::catch_unwind(|| crate::text::print_module(before))
        .map_err(|_| std::io::Error::other("the IR before the pass could not be printed"))?;
    std::fs::write(&input, text)?;
    let level = if opt_level > 0 { format!(" --opt-level {opt_level}") } else { String::new() };
    let command = format!("xir-opt {} --pipeline {} --verify-each{level}", input.display(), ron.display());
    let pipeline = format!(
        "// Reproducer written by the XIR pass manager: {why}.\n// Replay: {command}\n// Reduce: xir-reduce {} -o reduced.xir\nPipeline(\n    name: {:?},\n    input: {input_dialect:?},\n    output: {output_dialect:?},\n    steps: [\n{steps}    ],\n)\n",
        dir.display(),
        format!("repro-{pipeline_name}")
    );
    std::fs::write(&ron, pipeline)?;
    Ok(Reproducer { dir: dir.to_path_buf(), command })
}
