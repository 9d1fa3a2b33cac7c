//! Reproducer directories for the failures that come after the pass
//! manager: the backend's SPIRV-Tools validation failure (`xir-opt`,
//! `xir-run`) and `xir-run --compare`'s interpreter-vs-Vulkan mismatch.
//! Each is a directory that `xir-reduce DIR` reads (docs/reduce.md):
//! `input.xir` (the module before the pipeline), `failure.txt` (what
//! failed, the kernel, the pipeline, the optimization level), `repro.ron`
//! (a copy of the pipeline when it was a file) and, for a mismatch,
//! `inputs.json` (with the dispatch size). The pass manager writes its own
//! (`xir::pipeline::repro`), in the same shape.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use xir::interp::Inputs;
use xir::Module;

/// What failed.
pub enum Failure<'a> {
    /// SPIRV-Tools rejected the emitted module; the validator's message.
    SpirvVal { message: &'a str },
    /// The interpreter and Vulkan disagree on these inputs.
    Mismatch { inputs: &'a Inputs },
}

/// A failure and what reproduces it.
pub struct Repro<'a> {
    /// The module before the pipeline.
    pub module: &'a Module,
    pub kernel: &'a str,
    /// The pipeline as the driver was given it (a name or a file).
    pub pipeline: &'a str,
    pub opt_level: u8,
    pub failure: Failure<'a>,
}

/// A written reproducer and the commands that replay and reduce it.
#[derive(Clone, Debug)]
pub struct Written {
    pub dir: PathBuf,
    pub replay: String,
    pub reduce: String,
}

impl Written {
    /// The note the drivers print (the pass manager's wording).
    pub fn note(&self) -> String {
        format!(
            "reproducer written to {}; replay with: {}; reduce with: {}",
            self.dir.display(),
            self.replay,
            self.reduce
        )
    }
}

/// The part of a validator message that stays put while the module
/// shrinks: after SPIRV-Tools' `error:LINE:COL - ` position, the longest
/// stretch of its first line without an id, a number or a quote (ids are
/// renumbered as instructions go).
pub fn stable_message(message: &str) -> &str {
    let first = message.lines().next().unwrap_or("");
    let first = match first.split_once(" - ") {
        Some((head, rest)) if head.starts_with("error") => rest,
        _ => first,
    };
    let unstable = |c: char| c.is_ascii_digit() || matches!(c, '%' | '\'' | '"' | '[' | ']');
    let longest = first.split(unstable).map(str::trim).max_by_key(|s| s.len()).unwrap_or("");
    if longest.is_empty() {
        first
    } else {
        longest
    }
}

/// Write the reproducer into `dir` (created if needed).
pub fn write(dir: &Path, r: &Repro) -> std::io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let input = dir.join("input.xir");
    let text = std::panic::catch_unwind(|| xir::text::print_module(r.module))
        .map_err(|_| std::io::Error::other("the module could not be printed"))?;
    std::fs::write(&input, text)?;
    // A pipeline file travels with the reproducer; a shipped name is kept.
    let pipeline = if Path::new(r.pipeline).is_file() {
        let ron = dir.join("repro.ron");
        std::fs::copy(r.pipeline, &ron)?;
        ron.display().to_string()
    } else {
        r.pipeline.to_string()
    };
    let level = if r.opt_level > 0 { format!(" --opt-level {}", r.opt_level) } else { String::new() };
    let mut failure = String::from("// What failed, for xir-reduce (docs/reduce.md).\n");
    let replay = match &r.failure {
        Failure::SpirvVal { message } => {
            let _ = writeln!(failure, "signature: spirv-val\ntext: {}", stable_message(message));
            format!("xir-opt {} --pipeline {pipeline}{level} --emit spirv-asm", input.display())
        }
        Failure::Mismatch { inputs } => {
            let json = serde_json::to_string(inputs).map_err(std::io::Error::other)?;
            let path = dir.join("inputs.json");
            std::fs::write(&path, json + "\n")?;
            let _ = writeln!(failure, "signature: mismatch-vulkan");
            format!(
                "xir-run {} --inputs {} --compare --kernel {} --pipeline {pipeline}{level}",
                input.display(),
                path.display(),
                r.kernel
            )
        }
    };
    let _ = writeln!(failure, "kernel: {}", r.kernel);
    if !Path::new(r.pipeline).is_file() {
        let _ = writeln!(failure, "pipeline: {pipeline}");
    }
    let _ = writeln!(failure, "opt-level: {}", r.opt_level);
    std::fs::write(dir.join("failure.txt"), failure)?;
    let reduce = format!("xir-reduce {} -o reduced.xir", dir.display());
    Ok(Written { dir: dir.to_path_buf(), replay, reduce })
}

/// For the drivers: when `diags` hold a SPIRV-Tools validation failure of
/// the backend, write its reproducer into `dir` and return the note line
/// to print (or why none was written); `None` for any other refusal (the
/// backend refusing an input is not a bug to reduce).
pub fn after_backend_failure(
    diags: &[xir::Diagnostic],
    module: &Module,
    pipeline: &str,
    opt_level: u8,
    dir: &Path,
) -> Option<String> {
    let d = diags.iter().find(|d| d.rule.name() == "spirv-validate")?;
    let message = d.message.split_once("validation: ").map_or(d.message.as_str(), |(_, m)| m);
    let kernel = d.function.as_deref().unwrap_or("");
    let r = Repro { module, kernel, pipeline, opt_level, failure: Failure::SpirvVal { message } };
    Some(note(write(dir, &r), dir))
}

/// The note line for a written reproducer, or why none was written.
pub fn note(written: std::io::Result<Written>, dir: &Path) -> String {
    match written {
        Ok(w) => format!("note: {}", w.note()),
        Err(e) => format!("note: no reproducer written: {}: {e}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::stable_message;

    #[test]
    fn validator_messages_lose_positions_and_ids() {
        let m = "error:0:0 - EntryPoint cannot appear before the memory model instruction\n  OpEntryPoint ...";
        assert_eq!(stable_message(m), "EntryPoint cannot appear before the memory model instruction");
        assert_eq!(stable_message("error:3:7 - ID '5[%5]' has not been defined"), "has not been defined");
        assert_eq!(stable_message("42"), "42");
    }
}
