//! WGSL and GLSL compute shaders in: naga's front ends parse and validate,
//! and each compute entry point becomes a kernel AST (`xir-ast`).

/// naga's own SPIR-V for the same source: the second oracle.
pub mod oracle;
/// Random, well-defined WGSL compute programs for differential testing.
pub mod wgslsmith;
