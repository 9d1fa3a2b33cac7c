//! `xir-pipelines`: the shipped RON pipelines (`pipelines/*.ron`), the
//! registry of every pass, and the pieces of the `xir-opt` driver that are
//! worth testing without a process: input reading, atomic output, DOT
//! pictures, listings, the integration point of the SPIR-V backend, the
//! compile cache (`cache`) and batch runner (`batch`), and the library API
//! for tools (`workspace`).

pub mod backend;
pub mod batch;
pub mod cache;
pub mod debug_passes;
pub mod device_features;
pub mod dot;
pub mod io;
pub mod listing;
pub mod report;
pub mod repro;
pub mod then;
pub mod workspace;

use std::path::{Path, PathBuf};

use xir::pass::PassRegistry;
use xir::pipeline::Loader;

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// The environment variable naming a directory searched for pipelines by
/// name before the shipped ones (what `--pipeline-dir` does, for every driver).
pub const PIPELINE_DIR_ENV: &str = "XIR_PIPELINE_DIR";

/// The hook the SPIR-V backend binds its callable specialization to.
pub const CALLABLE_SPECIALIZATION: &str = "callable_specialization";

/// Every registered pass: the generic passes of `xir-passes`, the backend's
/// passes (when it exports them), and the `debug.*` test aids.
pub fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    reg.declare_hook(
        CALLABLE_SPECIALIZATION,
        "target policy for callables (specialize or inline per call site); the SPIR-V backend binds it",
    );
    xir_passes::register_all(&mut reg);
    backend::register_passes(&mut reg);
    debug_passes::register(&mut reg);
    reg
}

/// A loader that finds pipelines by name in `extra_dir` (when given, else
/// the directory `$XIR_PIPELINE_DIR` names, when set) and then among the
/// shipped ones, which are embedded in the binary: a driver finds them
/// wherever it is installed.
pub fn loader<'r>(reg: &'r PassRegistry, extra_dir: Option<&Path>) -> Loader<'r> {
    let mut l = Loader::new(reg);
    let from_env = std::env::var_os(PIPELINE_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from);
    if let Some(d) = extra_dir.map(Path::to_path_buf).or(from_env) {
        l = l.with_search_dir(d);
    }
    l.with_shipped(SHIPPED)
}
