//! A naga-vs-us mismatch, reduced on the shader's source: our front end's
//! lowering of the shader, run on the interpreter, and naga's own SPIR-V of
//! the same source, run on a Vulkan device, give different outputs. The
//! XIR reductions cannot follow this failure (naga compiles the source, not
//! our module), so the source text is reduced instead: delta debugging over
//! its lines (chunks halving down to single lines, to a fixed point), a
//! candidate kept when both compile and both runs succeed and still
//! disagree. A candidate either compiler refuses, or that makes a run fail,
//! is skipped, so the reduction never trades the mismatch for another
//! failure.

use std::panic::{catch_unwind, AssertUnwindSafe};

use xir::interp::{Inputs, Outputs};
use xir_frontend::{Language, Overrides, Source};

use crate::Stats;

/// The interestingness test of a naga-vs-us mismatch.
pub struct NagaMismatch {
    /// The name diagnostics and naga see.
    pub path: String,
    pub language: Language,
    pub inputs: Inputs,
    pub device: xir_vulkan::Device,
    /// Interpreter steps one run may take.
    pub max_steps: u64,
}

impl NagaMismatch {
    /// Whether `text` compiles both ways, runs both ways, and the outputs
    /// differ beyond Vulkan's precision.
    pub fn fails(&self, text: &str) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.disagree(text))).unwrap_or(false)
    }

    fn disagree(&self, text: &str) -> bool {
        // Our lowering: the kernel, its dispatch, and its run on the interpreter.
        let src = Source { path: &self.path, text, language: self.language };
        let Ok(module) = xir_frontend::compile(&src, &Overrides::default()) else { return false };
        let Ok(k) = xir_pipelines::backend::select_kernel(&module, None) else { return false };
        let dispatch = match module.func(k).kind {
            xir::FunctionKind::Kernel { block_size, .. } => self.inputs.dispatch.unwrap_or(block_size),
            _ => return false,
        };
        let inputs = self.inputs.clone().with_dispatch(dispatch);
        // naga's module runs whole workgroups, as the front end's kernel does.
        let Some(threads) = xir::interp::threads_run(module.func(k).kind, dispatch) else { return false };
        let (Some(ours), Some(mut theirs)) =
            (self.ours(&module, k, &inputs), self.theirs(text, &module.func(k).name, &inputs, threads))
        else {
            return false;
        };
        // naga's module also reports its uniforms; ours keeps values out.
        theirs.buffers.retain(|k, _| ours.buffers.contains_key(k));
        ours.compare_bounded(&theirs, xir::interp::same_value).mismatch.is_some()
    }

    /// Our lowering on the interpreter, at the device's subgroup size.
    fn ours(&self, module: &xir::Module, k: xir::FuncId, inputs: &Inputs) -> Option<Outputs> {
        let opts = xir::interp::Options {
            max_steps: self.max_steps,
            precision: Some(xir::interp::Precision::default()),
            warp_size: self.device.subgroups.size,
            ..xir::interp::Options::default()
        };
        xir::interp::run_kernel_with(module, k, inputs, &opts).ok()
    }

    /// naga's module of the same source, on the device.
    fn theirs(&self, text: &str, entry: &str, inputs: &Inputs, dispatch: [u32; 3]) -> Option<Outputs> {
        let words =
            xir_frontend::oracle::naga_spirv_with(text, self.language, &self.path, &Overrides::default()).ok()?;
        xir_vulkan::run_foreign_on(&self.device, &words, Some(entry), inputs, Some(dispatch)).ok().map(|(o, _)| o)
    }
}

/// Delta debugging over the lines of `text`: remove chunks of lines while
/// `fails` holds of what is left, halving the chunks down to one line, to
/// a fixed point or until the budget is spent. `text` must fail.
pub fn reduce_lines(text: &str, fails: impl Fn(&str) -> bool, stats: &mut Stats) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    loop {
        let before = lines.len();
        let mut chunk = lines.len().div_ceil(2).max(1);
        loop {
            // Back to front: later lines (uses) go before their definitions.
            let mut end = lines.len();
            while end > 0 && !stats.spent() {
                let start = end.saturating_sub(chunk);
                let candidate: Vec<&str> = lines[..start].iter().chain(&lines[end..]).copied().collect();
                stats.tests += 1;
                if stats.progress && stats.tests.is_multiple_of(50) {
                    eprintln!("xir-reduce: {} tests, {} lines", stats.tests, lines.len());
                }
                if !candidate.is_empty() && fails(&join(&candidate)) {
                    lines = candidate;
                }
                end = start;
            }
            if chunk == 1 || stats.spent() {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
        if lines.len() == before || stats.spent() {
            return join(&lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reduce_lines;
    use crate::Stats;

    #[test]
    fn keeps_the_lines_the_failure_needs() {
        let text = "a\nb\nneedle 1\nc\nd\nneedle 2\ne\n";
        let fails = |t: &str| t.contains("needle 1") && t.contains("needle 2");
        let mut stats = Stats::default();
        assert_eq!(reduce_lines(text, fails, &mut stats), "needle 1\nneedle 2\n");
        // A budget stops it with what it has.
        let mut stats = Stats { max_tests: 1, ..Stats::default() };
        assert_eq!(reduce_lines(text, |_| true, &mut stats), "a\nb\nneedle 1\n");
    }
}
