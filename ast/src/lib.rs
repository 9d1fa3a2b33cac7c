//! The kernel AST: what a front end (WGSL / GLSL through naga, or a tracing
//! DSL as in the reference) produces and `ast2xir` translates into
//! structured XIR; `xir2ast` goes back, and the printer shows a tree as
//! C-like code (`xir-opt --emit ast`). Nodes live in an arena owned by the
//! caller (`Arenas`), types are the IR's own, and built-in operations are
//! spec opcodes.

pub mod from_xir;
pub mod node;
pub mod print;
pub mod to_xir;

pub use from_xir::{structured_order, xir_to_ast, FromXirError};
pub use node::*;
pub use print::print_module;
pub use to_xir::{ast_to_xir, TranslateError};
