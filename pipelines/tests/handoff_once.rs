//! The handoff runs once per compilation: a pipeline whose last step is
//! `spirv_handoff` hands its kernels to the backend
//! (`backend::run_pipeline`), which then emits without checking again; any
//! other run leaves the check to the backend, which still refuses what the
//! handoff refuses (fail closed either way).

use xir::pipeline::RunOptions;
use xir::FuncId;
use xir_pipelines::backend::{self, BackendError};

fn saxpy() -> String {
    std::fs::read_to_string(format!("{}/../tests/corpus/saxpy.xir", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A call passing a buffer: the handoff refuses it until
/// `callable_specialization` has inlined the call site.
const RESOURCE_CALL: &str = "callable @put(%b: buffer<u32>, %i: u32) -> void {
^entry:
  buffer.write %b, %i, u32 1
  return
}

kernel @k(%b: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  call @put, %b, %i
  return
}
";

fn kernel(m: &xir::Module) -> FuncId {
    m.func_ids().find(|&f| m.func(f).is_kernel()).unwrap()
}

fn run(text: &str, pipeline: &str, options: RunOptions) -> (xir::Module, Result<Vec<u32>, BackendError>, bool) {
    let reg = xir_pipelines::registry();
    let mut p = xir_pipelines::loader(&reg, None).load(pipeline).unwrap();
    let mut m = xir::text::parse_module(text, "test.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    let k = kernel(&m);
    let (_, handoffs) = backend::run_pipeline(&mut p, options, &mut m, &mut std::io::sink()).unwrap();
    let by_pipeline = handoffs.passed_by_pipeline(k);
    let words = backend::compile_from(&handoffs, None, 0, false, None).map(|(_, out)| out.words);
    (m, words, by_pipeline)
}

#[test]
fn the_spirv_pipeline_hands_its_kernel_to_the_backend() {
    let (_, words, by_pipeline) = run(&saxpy(), "spirv", RunOptions::default());
    assert!(by_pipeline);
    xir_spirv::validate::validate(&words.unwrap()).unwrap();
}

#[test]
fn without_a_final_handoff_step_the_backend_checks() {
    // `spirv-legalize` ends before the handoff: the backend runs it.
    let (legal, words, by_pipeline) = run(&saxpy(), "spirv-legalize", RunOptions::default());
    assert!(!by_pipeline);
    let words = words.unwrap();
    // The same words as through the pipeline's own handoff.
    assert_eq!(words, run(&saxpy(), "spirv", RunOptions::default()).1.unwrap());
    assert_eq!(xir_spirv::compile(&legal, kernel(&legal), &Default::default()).unwrap().words, words);
}

#[test]
fn a_run_stopped_before_the_handoff_step_hands_off_nothing() {
    // The whole pipeline specializes the call and hands the kernel off.
    let (_, words, by_pipeline) = run(RESOURCE_CALL, "spirv", RunOptions::default());
    assert!(by_pipeline);
    words.unwrap();
    // One pass execution: the call is still there, and the backend's own
    // check refuses it.
    let (_, words, by_pipeline) =
        run(RESOURCE_CALL, "spirv", RunOptions { bisect_limit: Some(1), ..RunOptions::default() });
    assert!(!by_pipeline);
    let Err(BackendError::Compile(diags)) = words else { panic!("{words:?}") };
    let rules: Vec<&str> = diags.iter().map(|d| d.rule.name()).collect();
    assert_eq!(rules, ["spirv-handoff:call"], "{}", xir::diag::render(&diags));
}
