//! Compile a kernel in process with the library API (`xir_pipelines::
//! workspace::Workspace`): a kernel that calls a callable, its diagnostics,
//! its XIR after a step of the `spirv` pipeline, its SPIR-V and shader
//! artifact. Run with `cargo run -p xir-pipelines --example compile_kernel`;
//! `pipelines/tests/examples.rs` runs it in the test suite.

use xir_pipelines::workspace::{Workspace, WorkspaceError};

const MODULE: &str = "\
// y = x * x + 1, by value: stays a SPIR-V function.
callable @square_plus_one(%x: f32) -> f32 {
^entry:
  %sq = mul %x, %x : f32
  %r = add %sq, f32 1.0 : f32
  return %r
}

kernel @apply(%data: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %data, %t : f32
  %w = call @square_plus_one, %v : f32
  buffer.write %data, %t, %w
  return
}
";

pub fn main() -> Result<(), WorkspaceError> {
    let mut ws = Workspace::new();
    ws.set_file("apply.xir", MODULE);
    // Structured diagnostics: none for this module.
    let diags = ws.diagnostics("apply.xir")?;
    assert!(diags.is_empty(), "{}", xir::diag::render_short(&diags));
    // The kernel after the first three pass executions of `spirv`
    // (lower_ray_query_loop, promote_ref_arg, destructure_cfg): a raw CFG.
    let raw = ws.function_after("apply.xir", "apply", "spirv", Some(3))?;
    println!("@apply after 3 steps of `spirv`:\n{raw}");
    // SPIR-V words, disassembly and the shader artifact of the kernel.
    let words = ws.spirv("apply.xir", "apply", "spirv")?;
    assert_eq!(words[0], 0x0723_0203, "the SPIR-V magic number");
    let asm = ws.spirv_disassembly("apply.xir", "apply", "spirv")?;
    assert!(asm.contains("OpFunctionCall"), "the callable stays a function");
    let artifact = ws.artifact("apply.xir", "apply", "spirv")?;
    println!("SPIR-V: {} words; artifact: {} bytes", words.len(), artifact.len());
    Ok(())
}
