//! Analyses over one function or the module. Each is a plain function of the
//! IR; `db` memoizes them in salsa across edits, and the pass manager caches
//! them within one pipeline run.

pub mod cfg;
pub mod dom;

pub use cfg::Cfg;
pub use dom::DomTree;
