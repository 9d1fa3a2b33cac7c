//! The kernel AST: what a front end (WGSL / GLSL through naga, or a tracing
//! DSL as in the reference) produces and `ast2xir` translates into
//! structured XIR. Nodes live in an arena owned by the module.
