//! Autodiff scopes (docs/autodiff.md): the structure both of their
//! implementations rely on. The interpreter (forward mode, `interp`) and the
//! `autodiff` pass (reverse mode, xir-passes) each differentiate on their
//! own; what they share is only this module's answer to "which blocks form
//! the scope, where is its top level, and is it well formed", so that both
//! refuse the same malformed scopes with the same diagnostics.

mod scope;

pub use scope::{check_scopes, differentiable, reach, scope_shape, ScopeShape, BUFFER_READ_AND_WRITTEN, NESTED_SCOPE};
