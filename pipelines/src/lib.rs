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
#[cfg(feature = "run")]
pub mod second_oracle;
pub mod then;
pub mod usage;
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
    if let Some(d) = pipeline_dir(extra_dir) {
        l = l.with_search_dir(d);
    }
    l.with_shipped(SHIPPED)
}

/// The directory [`loader`] searches first: `extra_dir`, else the one
/// `$XIR_PIPELINE_DIR` names (when set and not empty).
fn pipeline_dir(extra_dir: Option<&Path>) -> Option<PathBuf> {
    let from_env = std::env::var_os(PIPELINE_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from);
    extra_dir.map(Path::to_path_buf).or(from_env)
}

/// Why the pipeline directory is none; `named` is how it was given
/// (`--pipeline-dir DIR` or `XIR_PIPELINE_DIR=DIR`).
#[derive(Debug, thiserror::Error)]
pub enum PipelineDirError {
    #[error("{named}: not a directory")]
    NotADirectory { named: String },
    #[error("{named}: {source}")]
    Unreadable { named: String, source: std::io::Error },
}

/// Why the directory [`loader`] would search (`extra_dir`, else
/// `$XIR_PIPELINE_DIR`) is not a directory. The drivers refuse to start
/// then: a misspelt directory would otherwise be skipped in silence, and
/// the shipped pipeline of the same name run instead of the user's.
pub fn check_pipeline_dir(extra_dir: Option<&Path>) -> Result<(), PipelineDirError> {
    let Some(dir) = pipeline_dir(extra_dir) else { return Ok(()) };
    let named = match extra_dir {
        Some(_) => format!("--pipeline-dir {}", dir.display()),
        None => format!("{PIPELINE_DIR_ENV}={}", dir.display()),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(PipelineDirError::NotADirectory { named }),
        Err(source) => Err(PipelineDirError::Unreadable { named, source }),
    }
}
