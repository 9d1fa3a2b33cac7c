//! `xir-lsp`: a Language Server for XIR text (`.xir`), pipeline files
//! (`.ron`) and WGSL / GLSL shaders, over stdio with `lsp-server` (synchronous, one message at a
//! time). One module per capability, each a pure function of a
//! [`document::Document`] (tested directly) that `server` wires to the
//! protocol; docs/editors.md has the editor set-up.

pub mod actions;
pub mod commands;
pub mod definition;
pub mod diagnostics;
pub mod document;
pub mod format;
pub mod hover;
pub mod index;
pub mod pipeline_index;
pub mod position;
pub mod semantic;
pub mod server;
pub mod symbols;

pub use server::run;
