//! The interestingness test: what "fails the same way" means for each
//! failure signature. A candidate that does not verify fails no signature
//! (but `Verifier` without a pipeline), so the reducer never trades the
//! asked failure for another one.

use std::panic::{catch_unwind, AssertUnwindSafe};

use xir::interp::{Inputs, Outputs};
use xir::pipeline::{FailureKind, PassManager, Pipeline, RunOptions};
use xir::Module;

/// How the module must fail.
#[derive(Clone, Debug)]
pub enum Signature {
    /// A pass panics with a message containing this text.
    Panic(String),
    /// The pipeline fails (any kind) with a message or a diagnostic rule
    /// matching this text.
    PassError(String),
    /// The verifier reports this rule (after the pipeline when one is given).
    Verifier(String),
    /// Two runs of the kernel give different outputs.
    Mismatch(Mismatch),
    /// After the pipeline, the backend fails SPIRV-Tools validation (of the
    /// module as emitted, before any optimizer preset) with a message
    /// containing this text.
    SpirvVal(String),
}

/// A run that runs the module on another executor (Vulkan): the module in,
/// its outputs (or why it could not run) back.
pub type Device = Box<dyn Fn(&Module) -> Result<Outputs, String>>;

/// The `Mismatch` signature: the kernel on the interpreter against the
/// kernel after the pipeline on the interpreter, or (with a device) against
/// the device. Both runs must succeed: a run error is another failure.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub inputs: Inputs,
    /// The kernel by name (the signature is kept, so the inputs stay valid).
    pub kernel: String,
    /// Interpreter steps one run may take: a candidate that no longer
    /// terminates (a loop condition made constant) is given up quickly.
    pub max_steps: u64,
}

/// The interestingness test: a pipeline (optional) and a signature.
pub struct Oracle {
    pub pipeline: Option<Pipeline>,
    pub signature: Signature,
    /// For `Mismatch`: the other side, instead of the interpreter after the pipeline.
    pub device: Option<Device>,
    /// The optimization level of pipeline runs and of the backend.
    pub opt_level: u8,
}

impl Oracle {
    pub fn new(pipeline: Option<Pipeline>, signature: Signature) -> Self {
        Oracle { pipeline, signature, device: None, opt_level: 0 }
    }

    /// Whether `m` fails as asked.
    pub fn fails(&self, m: &Module) -> bool {
        let verify = xir::verify::verify_module(m);
        if let (None, Signature::Verifier(rule)) = (&self.pipeline, &self.signature) {
            return verify.iter().any(|d| d.rule.name() == rule);
        }
        if !verify.is_empty() {
            return false;
        }
        match &self.signature {
            Signature::Mismatch(mm) => self.mismatches(m, mm),
            Signature::SpirvVal(text) => self.fails_validation(m, text),
            _ => self.pipeline_fails(m),
        }
    }

    /// For `Mismatch`: whether the kernel runs on the interpreter within
    /// `steps` (the reference side, before the pipeline).
    pub fn runs_within(&self, m: &Module, steps: u64) -> bool {
        let Signature::Mismatch(mm) = &self.signature else { return false };
        interpret(m, &Mismatch { max_steps: steps, ..mm.clone() }, None).is_some()
    }

    fn pipeline_fails(&self, m: &Module) -> bool {
        let Some(p) = &self.pipeline else { return false };
        let mut m = m.clone();
        let err = match run_pipeline(p, &mut m, self.opt_level) {
            Ok(()) => return false,
            Err(Failed::Run(e)) => e,
            Err(Failed::Panic(msg)) => {
                return matches!(&self.signature, Signature::Panic(s) if msg.contains(s.as_str()))
            }
        };
        match &self.signature {
            Signature::Panic(s) => err.kind == FailureKind::Panic && err.message.contains(s.as_str()),
            Signature::PassError(s) => {
                err.message.contains(s.as_str()) || err.diagnostics.iter().any(|d| d.rule.name() == s)
            }
            Signature::Verifier(rule) => {
                err.kind == FailureKind::InvalidIr && err.diagnostics.iter().any(|d| d.rule.name() == rule)
            }
            Signature::Mismatch(_) | Signature::SpirvVal(_) => false,
        }
    }

    fn mismatches(&self, m: &Module, mm: &Mismatch) -> bool {
        let precision = self.device.as_ref().map(|_| xir::interp::Precision::default());
        let Some(before) = interpret(m, mm, precision) else { return false };
        let after = match &self.device {
            Some(device) => match catch_unwind(AssertUnwindSafe(|| device(m))) {
                Ok(Ok(out)) => out,
                _ => return false,
            },
            None => {
                let Some(p) = &self.pipeline else { return false };
                let mut m = m.clone();
                if run_pipeline(p, &mut m, self.opt_level).is_err() {
                    return false;
                }
                let Some(out) = interpret(&m, mm, None) else { return false };
                out
            }
        };
        if self.device.is_some() {
            before.compare_bounded(&after, xir::interp::same_value).mismatch.is_some()
        } else {
            before.first_mismatch(&after, |_, _| false).is_some()
        }
    }

    fn fails_validation(&self, m: &Module, text: &str) -> bool {
        let mut m = m.clone();
        if let Some(p) = &self.pipeline {
            if run_pipeline(p, &mut m, self.opt_level).is_err() {
                return false;
            }
        }
        let compiled =
            catch_unwind(AssertUnwindSafe(|| xir_pipelines::backend::compile(&m, None, self.opt_level, false, None)));
        match compiled {
            Ok(Err(xir_pipelines::backend::BackendError::Compile(diags))) => {
                diags.iter().any(|d| d.rule.name() == "spirv-validate" && d.message.contains(text))
            }
            _ => false,
        }
    }
}

enum Failed {
    Run(Box<xir::pipeline::RunError>),
    /// A panic outside a pass (the manager itself), with its message.
    Panic(String),
}

fn run_pipeline(p: &Pipeline, m: &mut Module, opt_level: u8) -> Result<(), Failed> {
    let opts = RunOptions { verify_each: true, opt_level, ..RunOptions::default() };
    match catch_unwind(AssertUnwindSafe(|| PassManager::new(p, opts).run(m, &mut std::io::sink()))) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(Failed::Run(e)),
        Err(payload) => Err(Failed::Panic(
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        )),
    }
}

/// The kernel's outputs on the interpreter; `None` when it does not run.
fn interpret(m: &Module, mm: &Mismatch, precision: Option<xir::interp::Precision>) -> Option<Outputs> {
    let k = m.find_function(&mm.kernel)?;
    let opts = xir::interp::Options { max_steps: mm.max_steps, precision, ..xir::interp::Options::default() };
    catch_unwind(AssertUnwindSafe(|| xir::interp::run_kernel_with(m, k, &mm.inputs, &opts))).ok()?.ok()
}
