//! `xir`: the XIR framework — IR data structures, text and JSON formats, the
//! generic verifier and spec-driven dialect checker, the pass manager and
//! pipelines, salsa-backed analyses, and the reference interpreter.
//!
//! **API boundary:** nothing here knows about SPIR-V or any target, and no
//! test generator lives here (`xir-testgen`; proptest is a dev-dependency).

pub mod analysis;
pub mod autodiff;
pub mod db;
pub mod diag;
pub mod dialect;
pub mod interp;
pub mod ir;
pub mod pass;
pub mod pipeline;
pub mod text;
pub mod verify;

pub use diag::Diagnostic;
pub use ir::*;
