//! The library API (`xir_pipelines::workspace::Workspace`): exact
//! diagnostics of XIR, pipeline and shader files, the exact XIR of a
//! function after a pipeline step, valid SPIR-V of a kernel that calls a
//! callable, typed errors, and edits recompiling only what they affect.

use xir::diag::render_short;
use xir_pipelines::workspace::{Workspace, WorkspaceError};

const MODULE: &str = "\
callable @twice(%x: u32) -> u32 {
^entry:
  %r = add %x, %x : u32
  return %r
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %c = lt u32 1, u32 2 : bool
  if %c, true ^yes, false ^no, merge ^done
^yes:
  %v = call @twice, u32 21 : u32
  buffer.write %out, u32 0, %v
  br target ^done
^no:
  br target ^done
^done:
  return
}
";

#[test]
fn diagnostics_are_typed_and_located_in_the_file() {
    let mut ws = Workspace::new();
    ws.set_file("m.xir", MODULE);
    assert!(ws.diagnostics("m.xir").unwrap().is_empty());
    ws.set_file("m.xir", &MODULE.replace("%r = add %x, %x : u32", "%r = add %x, %q : u32"));
    let d = ws.diagnostics("m.xir").unwrap();
    assert_eq!(render_short(&d), "m.xir:3:16: error: [parse] undefined value `%q` (in @twice)\n");
    assert_eq!(d[0].rule, xir::diag::Rule::Parse);
    assert_eq!(d[0].severity, xir::diag::Severity::Error);
    // A file with errors compiles nothing: its diagnostics are the answer.
    match ws.spirv("m.xir", "k", "spirv") {
        Err(WorkspaceError::Compile(ds)) => assert_eq!(ds, d),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pipeline_files_report_load_errors_with_suggestions() {
    let mut ws = Workspace::new();
    let ron = "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [Pass(\"dce\"), Pass(\"const_fodl\")])";
    ws.set_file("p.ron", ron);
    let d = ws.diagnostics("p.ron").unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].file.as_deref(), Some("p.ron"));
    assert!(d[0].message.contains("const_fodl"), "{}", d[0].message);
    assert!(!d[0].fixes.is_empty() && d[0].fixes[0].replacement.contains("const_fold"), "{d:?}");
    // A module compiled with it reports the load failure, typed.
    ws.set_file("m.xir", MODULE);
    assert!(matches!(ws.function_after("m.xir", "k", "p.ron", None), Err(WorkspaceError::Pipeline(_))));
    // Fixed, the workspace's pipeline file is what runs.
    ws.set_file("p.ron", &ron.replace("const_fodl", "const_fold"));
    assert!(ws.diagnostics("p.ron").unwrap().is_empty());
    assert!(ws.function_after("m.xir", "k", "p.ron", None).is_ok());
}

#[test]
fn the_xir_of_a_function_after_a_pipeline_step() {
    let mut ws = Workspace::new();
    ws.set_file("m.xir", MODULE);
    let parsed = ws.function_after("m.xir", "twice", "spirv", Some(0)).unwrap();
    assert_eq!(parsed, MODULE.split("\n\n").next().unwrap().to_string() + "\n");
    // Five steps: lower_ray_query_loop, autodiff (pre-autodiff), outline,
    // promote_ref_arg, destructure_cfg.
    let raw = ws.function_after("m.xir", "k", "spirv", Some(5)).unwrap();
    assert_eq!(raw, RAW_K);
    let done = ws.function_after("m.xir", "k", "spirv", None).unwrap();
    assert!(done.contains("call @twice"), "{done}");
}

/// `@k` after destructure_cfg: the structured `if` is a conditional branch.
const RAW_K: &str = "\
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %c = lt u32 1, u32 2 : bool
  cond_br %c, true ^yes, false ^no
^yes:
  %v = call @twice, u32 21 : u32
  buffer.write %out, u32 0, %v
  br target ^done
^no:
  br target ^done
^done:
  return
}
";

#[test]
fn a_kernel_calling_a_callable_gives_valid_spirv_and_an_artifact() {
    let mut ws = Workspace::new();
    ws.set_file("m.xir", MODULE);
    let words = ws.spirv("m.xir", "k", "spirv").unwrap();
    xir_spirv::validate::validate(&words).unwrap();
    let asm = ws.spirv_disassembly("m.xir", "k", "spirv").unwrap();
    assert_eq!(asm.matches("OpFunctionCall").count(), 2, "{asm}");
    let artifact = ws.artifact("m.xir", "k", "spirv").unwrap();
    let decoded =
        xir_spirv::artifact::decode(&artifact, &xir_spirv::artifact::LoadRequirements::any_xir_spirv(), None).unwrap();
    assert_eq!(decoded.words, words);
}

#[test]
fn shaders_compile_through_the_front_end() {
    let mut ws = Workspace::new();
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
                @compute @workgroup_size(1) fn main() { out[0] = 7u; }\n";
    ws.set_file("s.wgsl", wgsl);
    assert!(ws.diagnostics("s.wgsl").unwrap().is_empty());
    let words = ws.spirv("s.wgsl", "main", "spirv").unwrap();
    xir_spirv::validate::validate(&words).unwrap();
    ws.set_file("s.wgsl", &wgsl.replace("7u;", "7u"));
    let d = ws.diagnostics("s.wgsl").unwrap();
    assert_eq!((d.len(), d[0].file.as_deref()), (1, Some("s.wgsl")), "{d:?}");
}

#[test]
fn errors_are_typed() {
    let mut ws = Workspace::new();
    assert!(matches!(ws.diagnostics("none.xir"), Err(WorkspaceError::NoFile(p)) if p == "none.xir"));
    ws.set_file("m.xir", MODULE);
    assert!(matches!(ws.spirv("m.xir", "twice", "spirv"), Err(WorkspaceError::NotAKernel(n)) if n == "twice"));
    assert!(matches!(
        ws.function_after("m.xir", "nope", "spirv", None),
        Err(WorkspaceError::NoFunction { function, .. }) if function == "nope"
    ));
    assert!(matches!(ws.function_after("m.xir", "k", "no-such-pipeline", None), Err(WorkspaceError::Pipeline(_))));
    ws.set_file("p.ron", "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [])");
    assert!(matches!(ws.functions("p.ron"), Err(WorkspaceError::WrongKind { .. })));
}

#[test]
fn an_edit_recompiles_the_edited_function_and_its_callers_only() {
    let mut ws = Workspace::new();
    ws.set_file("m.xir", MODULE);
    ws.spirv("m.xir", "k", "spirv").unwrap();
    ws.function_after("m.xir", "twice", "spirv", None).unwrap();
    ws.session_for("m.xir", "spirv", None).unwrap().take_executed();
    // An edit of the kernel only: @twice is reused.
    ws.set_file("m.xir", &MODULE.replace("u32 21", "u32 22"));
    ws.spirv("m.xir", "k", "spirv").unwrap();
    ws.function_after("m.xir", "twice", "spirv", None).unwrap();
    let ran = ws.session_for("m.xir", "spirv", None).unwrap().take_executed();
    let compiled: Vec<&String> = ran.iter().filter(|q| q.starts_with("linked(") || q.starts_with("emitted(")).collect();
    assert_eq!(compiled, ["linked(@k)", "emitted(@k)"], "{ran:?}");
}
