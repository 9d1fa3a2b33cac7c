//! `xir-opt INPUT --then EDIT...`: one incremental session over a module and
//! its edited versions. Each version is diagnosed and compiled in the same
//! database (`xir::db::Session`), with the pipeline and the SPIR-V backend
//! of [`crate::workspace::compilers`]; the driver prints, per version, how
//! many functions were recompiled and reused and how long the version took,
//! and emits the last version in any `--emit` form. Diagnostics name the
//! version's file and lines within it.

use std::sync::Arc;
use std::time::Instant;

use xir::db::Session;
use xir::diag::Diagnostic;
use xir::pipeline::Pipeline;

use crate::backend::BackendError;
use crate::report::Reporter;
use crate::workspace::{compilers, Options};

/// The `--emit` forms of `xir-opt`, with and without `--then`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ThenEmit {
    /// XIR text (with `--then`: every function after the pipeline).
    Xir,
    /// The kernel AST as C-like code (of a shader without a pipeline: the
    /// front end's tree; otherwise `xir2ast` of the compiled module).
    Ast,
    /// The compiled module as JSON.
    Json,
    /// The compiled module as DOT.
    Dot,
    /// The kernel's SPIR-V binary.
    Spirv,
    /// The kernel's SPIR-V disassembly.
    SpirvAsm,
    /// The kernel's shader artifact.
    Artifact,
}

impl ThenEmit {
    /// SPIR-V, its disassembly or an artifact: what the backend makes.
    pub fn is_backend(self) -> bool {
        matches!(self, ThenEmit::Spirv | ThenEmit::SpirvAsm | ThenEmit::Artifact)
    }
}

/// What went wrong, already rendered for stderr, with the exit code.
pub struct Failure {
    /// Text for stderr.
    pub message: String,
    /// The process exit code (1: input or compile errors).
    pub code: i32,
}

/// How a `--then` run compiles and what it emits.
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    /// The pipeline's name as given (part of the session's pipeline identity).
    pub pipeline_key: &'a str,
    /// Optimization level and fast math.
    pub options: Options,
    /// The output form of the last version.
    pub emit: ThenEmit,
    /// Shader `override` values (a version may be a shader).
    pub overrides: &'a xir_frontend::Overrides,
}

/// The text of one version as XIR (a shader or JSON through its reader).
fn xir_text(path: &str, overrides: &xir_frontend::Overrides, located: bool) -> Result<String, Vec<Diagnostic>> {
    let text = crate::io::read_text(path, "input")?;
    match crate::io::detect(path, &text) {
        crate::io::InputFormat::Text => Ok(text),
        _ => crate::io::read_module_located(path, overrides, located).map(|m| xir::text::print_module(&m)),
    }
}

/// Run the session over `versions` (the input, then each edit) and return
/// the bytes of the last version's `emit`, writing the per-version lines
/// (and diagnostics) to `log`.
pub fn run(
    versions: &[&str],
    pipeline: Pipeline,
    settings: &Settings,
    reporter: &Reporter,
    log: &mut dyn std::io::Write,
) -> Result<Vec<u8>, Failure> {
    let Settings { pipeline_key, options, emit, overrides } = *settings;
    let (compiler, emitter) = compilers(Arc::new(pipeline), options, None);
    let g = if options.debug_info { " -g" } else { "" };
    let key = format!("{pipeline_key} -O{} fast_math={}{g}", options.opt_level, options.fast_math);
    let first = versions.first().copied().unwrap_or("-");
    let mut session = Session::new(crate::io::display_name(first), &key, Some(compiler)).with_emitter(emitter);
    let fail = |diags: &[Diagnostic]| Failure { message: reporter.render(diags), code: 1 };
    for path in versions {
        let start = Instant::now();
        let display = crate::io::display_name(path);
        let text = xir_text(path, overrides, options.debug_info)
            .map_err(|d| Failure { message: reporter.render_for(&d, path), code: 1 })?;
        let update = session.update_file(display, &text);
        session.take_executed();
        let diags = session.diagnostics();
        let (errors, warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = diags.into_iter().partition(Diagnostic::is_error);
        if !warnings.is_empty() {
            let _ = write!(log, "{}", reporter.render(&warnings));
        }
        let names: Vec<String> = session.function_names().map(String::from).collect();
        let mut failures = errors;
        // The backend forms need the kernels only (their closures hold the
        // callables); the XIR forms every function.
        for n in &names {
            let r = if emit.is_backend() && session.is_kernel(n) {
                session.emitted(n).map(|r| r.map(|_| ()))
            } else if emit.is_backend() {
                continue;
            } else {
                session.compiled(n).map(|r| r.map(|_| ()))
            };
            if let Some(Err(e)) = r {
                failures.extend(session.place_error(&e));
            }
        }
        let recompiled: Vec<String> = session
            .take_executed()
            .into_iter()
            .filter_map(|e| e.strip_prefix("linked(@").and_then(|r| r.strip_suffix(')')).map(String::from))
            .collect();
        let _ = writeln!(
            log,
            "xir-opt: {display}: recompiled {} of {} functions, reused {}{} in {:.2} ms",
            recompiled.len(),
            update.functions,
            update.functions.saturating_sub(recompiled.len()),
            if recompiled.is_empty() { String::new() } else { format!(" ({})", recompiled.join(", ")) },
            start.elapsed().as_secs_f64() * 1e3,
        );
        if failures.iter().any(Diagnostic::is_error) {
            return Err(fail(&failures));
        }
    }
    output(&session, emit)
}

/// Callables that some kernel reaches in the source but that no kernel's
/// compiled closure still holds: the pipeline inlined them everywhere (`-O2`
/// inlines every callable), so a plain run's `unused_callable_removal` drops
/// them, while each one's own closure (no kernel there) keeps it.
fn inlined_everywhere(session: &Session) -> std::collections::BTreeSet<String> {
    let kernels: Vec<&str> = session.function_names().filter(|n| session.is_kernel(n)).collect();
    let mut reached = std::collections::BTreeSet::new();
    let mut stack: Vec<String> = kernels.iter().map(|k| k.to_string()).collect();
    while let Some(f) = stack.pop() {
        for c in session.callees(&f) {
            if reached.insert(c.clone()) {
                stack.push(c);
            }
        }
    }
    let linked: Vec<_> = kernels.iter().filter_map(|k| session.linked(k).and_then(Result::ok)).collect();
    reached
        .into_iter()
        .filter(|c| !session.is_kernel(c) && linked.iter().all(|l| l.module.find_function(c).is_none()))
        .collect()
}

/// The last version in the `emit` form.
fn output(session: &Session, emit: ThenEmit) -> Result<Vec<u8>, Failure> {
    let plain = |m: String| Failure { message: format!("xir-opt: error: {m}\n"), code: 1 };
    if emit.is_backend() {
        let kernels: Vec<&str> = session.function_names().filter(|n| session.is_kernel(n)).collect();
        let k = match kernels.as_slice() {
            [k] => *k,
            [] => return Err(plain(BackendError::NoKernel.to_string())),
            many => {
                return Err(plain(BackendError::ManyKernels(many.iter().map(|k| k.to_string()).collect()).to_string()))
            }
        };
        let e = match session.emitted(k) {
            Some(Ok(e)) => e,
            _ => return Err(plain(format!("@{k} did not compile"))),
        };
        return Ok(match emit {
            ThenEmit::Spirv => e.words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            ThenEmit::SpirvAsm => xir_spirv::disassemble(&e.words).into_bytes(),
            _ => e.artifact.clone(),
        });
    }
    let inlined = inlined_everywhere(session);
    let parts: Vec<String> = session
        .function_names()
        .filter(|n| !inlined.contains(*n))
        .filter_map(|n| session.compiled(n).and_then(Result::ok))
        .filter(|t| !t.is_empty())
        .collect();
    let text = parts.join("\n");
    if emit == ThenEmit::Xir {
        return Ok(text.into_bytes());
    }
    // The other forms read the whole compiled module.
    let module = xir::text::parse_module(&text, session.path()).map_err(|d| {
        plain(format!("the compiled functions do not form one module: {}", xir::diag::render_short(&d)))
    })?;
    match emit {
        ThenEmit::Json => Ok(xir::text::json::to_json(&module).into_bytes()),
        ThenEmit::Dot => Ok(crate::dot::module_to_dot(&module).into_bytes()),
        _ => {
            let arenas = xir_ast::Arenas::default();
            xir_ast::xir_to_ast(&arenas, &module)
                .map(|ast| xir_ast::print_module(&ast).into_bytes())
                .map_err(|e| plain(format!("--emit ast: {e}")))
        }
    }
}
