//! `xir-run`: run a kernel on the reference interpreter or on Vulkan and
//! print its output buffers as JSON; `--compare` runs both and reports the
//! first mismatch (exit 1) with the bound it exceeded. Each element is
//! allowed what Vulkan's precision allows the operations on its data path
//! (the interpreter's precision run, `xir::interp::Precision`; docs/vulkan.md
//! "Precision"), `--ulp` adds a user allowance for f32; outputs that may hold
//! a filtered texture sample are compared within the device's filtering bound
//! (`xir_vulkan::sampling_tolerance`).
//!
//! `--artifact k.xsa` runs a shader artifact (written by `xir-opt --emit
//! artifact`) on Vulkan: it is loaded through the codec
//! (`xir_spirv::artifact::decode`, docs/artifact.md), and its saved
//! arguments rebuild the signature the inputs bind against. With a module
//! beside it, the artifact must have been compiled from that module: its
//! shader hash (of the module after the pipeline) and argument-type hash are
//! load requirements; without one, both are explicitly unconstrained.
//!
//! Printing kernels (`print`) run on a device opened with the validation
//! layer's debug printf (`Device::with_printf`; refused by name without the
//! layer): the captured lines are the outputs' `printed`, formatted from the
//! printer records (of the compilation, or of the artifact) exactly as the
//! interpreter formats them. The device prints in whatever order its
//! invocations run; the runner sorts the lines into the interpreter's thread
//! order (workgroups x-fastest, then invocations, each invocation's lines in
//! program order), which is the interpreter's order for kernels without
//! barriers between prints. `--compare` compares the printed lines as
//! multisets (both sides sorted), since the interpreter interleaves threads
//! at barriers. A capture the layer's printf buffer truncated is an error.
//!
//! The module is verified before anything runs. On the interpreter, the
//! run's limits are flags (`--max-steps`, `--max-threads`,
//! `--max-print-bytes`; docs/inputs-format.md, "Limits").
//!
//! A foreign SPIR-V module (`xir-run K.spv --inputs I.json`, recognized by
//! its magic number in either byte order, whatever the file's name; a `.spv`
//! file without it is refused) runs on Vulkan through
//! `xir_vulkan::run_foreign_on`: its descriptor variables are bound by
//! their `OpName`s from the same inputs JSON, and the outputs print exactly
//! as an XIR kernel's (docs/inputs-format.md, "Foreign SPIR-V modules").
//! `--entry NAME` picks among several compute entry points. A flag about XIR
//! or the interpreter (`lowers_spirv`) takes the module through the SPIR-V
//! front end instead, and `--compare` then runs the module itself as the
//! second oracle (`xir_pipelines::second_oracle`), as `--oracle naga` runs
//! naga's module of a shader. Any other run refuses the flags it would not read the same
//! way (`idle_flag`: `--ulp` without a comparison, the interpreter's
//! limits on a Vulkan-only run, compile flags where nothing compiles), and
//! `--override` without a shader.
//!
//! `--inputs-template` prints an inputs file for the kernel (every argument
//! at zero, `xir::interp::inputs_template`) instead of running it.
//!
//! Exit codes: 0 success, 1 failure (bad input, compile error, run error,
//! mismatch, stdout not writable), 2 usage error.

use std::process::ExitCode;

use clap::Parser;
use xir::interp::{Inputs, Outputs};
use xir::pipeline::{PassManager, RunOptions};
use xir::Module;
use xir_pipelines::report::{DiagnosticsFormat, Reporter};
use xir_pipelines::second_oracle::SecondOracle;

/// A second compiler to check ours against.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Oracle {
    /// naga's SPIR-V backend (`xir_frontend::oracle`).
    Naga,
}

#[derive(Parser, Debug)]
#[command(name = "xir-run", about = "Run an XIR kernel on the interpreter or on Vulkan")]
struct Args {
    /// The kernel module (.xir or .json, or a .wgsl / .comp shader), or a
    /// SPIR-V module (by its magic number): run on Vulkan as it is, or with a
    /// flag about XIR (--interp, --compare, -O, ...) through the SPIR-V front
    /// end; optional with --artifact.
    input: Option<String>,
    /// Value of a shader `override` constant (repeatable).
    #[arg(long = "override", value_name = "NAME=VALUE", value_parser = xir_pipelines::io::parse_override)]
    overrides: Vec<(String, f64)>,
    /// The compute entry point of a SPIR-V module that has several.
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// Run this shader artifact on Vulkan (with INPUT: it must be INPUT's kernel).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["interp", "compare"])]
    artifact: Option<String>,
    /// Inputs JSON (docs/inputs-format.md; `--inputs-template` prints one to edit).
    #[arg(long, required_unless_present = "inputs_template")]
    inputs: Option<String>,
    /// Print an inputs file for the kernel (every argument at zero, one
    /// block's dispatch, a buffer element per thread) to edit, and exit.
    #[arg(long, conflicts_with_all = ["inputs", "artifact", "interp", "vulkan", "compare", "oracle", "dispatch"])]
    inputs_template: bool,
    /// Threads to dispatch: N or X,Y,Z (overrides the inputs file).
    #[arg(long)]
    dispatch: Option<String>,
    /// The kernel to run when the module has several.
    #[arg(long)]
    kernel: Option<String>,
    /// Pipeline taking the module to the SPIR-V handoff (Vulkan); for the
    /// interpreter, a pipeline applied before interpretation.
    #[arg(long)]
    pipeline: Option<String>,
    /// Directory searched for pipelines by name before the shipped ones,
    /// which are built into the binary (default: `$XIR_PIPELINE_DIR`).
    #[arg(long, value_name = "DIR")]
    pipeline_dir: Option<std::path::PathBuf>,
    /// Optimization level 0..=3 (`-O2` = `--opt-level 2`).
    #[arg(short = 'O', long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// Compile with fast math (as `xir-opt --fast-math`); `--compare` then
    /// bounds the interpreter's values by the wider fast-math model.
    #[arg(long)]
    fast_math: bool,
    /// Compile with debug info (`xir-opt -g`): a shader's source lines as
    /// `OpLine`s, names as `OpName`s; the results do not change.
    #[arg(short = 'g', long = "debug-info")]
    debug_info: bool,
    /// Run on the reference interpreter (the default).
    #[arg(long, conflicts_with = "vulkan")]
    interp: bool,
    /// Run on Vulkan.
    #[arg(long)]
    vulkan: bool,
    /// Run on both and compare (within Vulkan's precision, docs/vulkan.md).
    #[arg(long, conflicts_with_all = ["interp", "vulkan"])]
    compare: bool,
    /// With a .wgsl / .comp shader: also compile it with naga's own SPIR-V
    /// backend, run that module on Vulkan too, and compare all three
    /// (implies --compare).
    #[arg(long, value_enum, conflicts_with_all = ["interp", "vulkan", "artifact"])]
    oracle: Option<Oracle>,
    /// Extra allowed float difference in single-precision ULPs for --compare.
    #[arg(long, default_value_t = 0)]
    ulp: u32,
    /// Interpreter: instructions the run may execute, all threads together.
    #[arg(long, value_name = "N", default_value_t = xir::interp::Options::default().max_steps)]
    max_steps: u64,
    /// Interpreter: threads one dispatch may run.
    #[arg(long, value_name = "N", default_value_t = xir::interp::Options::default().max_threads)]
    max_threads: u64,
    /// Interpreter: bytes of `print` output the run may produce.
    #[arg(long, value_name = "N", default_value_t = xir::interp::Options::default().max_print_bytes)]
    max_print_bytes: u64,
    /// Interpreter: lanes per warp (`$warp_size`; default 32). With --compare
    /// the interpreter runs at the device's subgroup size, which this must equal if given.
    #[arg(long, value_name = "N")]
    warp_size: Option<u32>,
    /// How errors about the input are printed (docs/diagnostics.md).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = DiagnosticsFormat::Human)]
    diagnostics: DiagnosticsFormat,
    /// Where to write a reproducer for `xir-reduce` when the backend's
    /// output fails validation or --compare finds a mismatch (default: a
    /// temporary directory).
    #[arg(long, value_name = "DIR")]
    reproducer_dir: Option<std::path::PathBuf>,
}

impl Args {
    /// The inputs file of a run: clap requires it unless `--inputs-template`,
    /// which prints and returns before anything runs.
    fn inputs_file(&self) -> &str {
        self.inputs.as_deref().unwrap_or_default()
    }
}

/// Why a run failed: located diagnostics (about the module, the inputs, a
/// pipeline; printed in the `--diagnostics` form) or a plain message.
enum Failure {
    Diags(Vec<xir::Diagnostic>),
    /// A pipeline that did not load (its short form is the loader's text).
    Load(xir::pipeline::LoadFailure),
    /// A pass that failed (its short form is the pass manager's text).
    Pass(Box<xir::pipeline::RunError>, String),
    Message(String),
    /// A failure and the reproducer note printed after it.
    Noted(Box<Failure>, String),
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Message(m)
    }
}

impl From<xir_pipelines::backend::BackendError> for Failure {
    fn from(e: xir_pipelines::backend::BackendError) -> Failure {
        use xir_pipelines::backend::BackendError;
        match e {
            BackendError::Pipeline(f) => Failure::Load(f),
            BackendError::Compile(_) | BackendError::Pass(_) => Failure::Diags(e.diagnostics()),
            e => Failure::Message(e.to_string()),
        }
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    if let Err(e) = xir_pipelines::check_pipeline_dir(args.pipeline_dir.as_deref()) {
        eprintln!("xir-run: error: {e}");
        return ExitCode::from(2);
    }
    match std::panic::catch_unwind(|| run(&args)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(f)) => {
            report(f, &args);
            ExitCode::from(1)
        }
        Err(_) => {
            eprintln!("xir-run: internal error (a panic); please report it with the input");
            ExitCode::from(1)
        }
    }
}

fn report(f: Failure, args: &Args) {
    match f {
        Failure::Message(msg) => eprintln!("{}", msg.trim_end()),
        Failure::Diags(diags) => eprint!("{}", Reporter::new(args.diagnostics).render(&diags)),
        Failure::Load(f) => eprint!("{}", Reporter::new(args.diagnostics).load_failure(&f)),
        Failure::Pass(mut e, input) => eprint!("{}", Reporter::new(args.diagnostics).run_error(&mut e, &input)),
        Failure::Noted(f, note) => {
            report(*f, args);
            eprintln!("{note}");
        }
    }
}

fn parse_dispatch(s: &str) -> Result<[u32; 3], String> {
    let parts: Result<Vec<u32>, _> = s.split(',').map(|p| p.trim().parse::<u32>()).collect();
    match parts.map_err(|e| format!("--dispatch {s}: {e}"))?.as_slice() {
        [x] => Ok([*x, 1, 1]),
        [x, y] => Ok([*x, *y, 1]),
        [x, y, z] => Ok([*x, *y, *z]),
        _ => Err(format!("--dispatch {s}: expected N, N,N or N,N,N")),
    }
}

fn run(args: &Args) -> Result<(), Failure> {
    let Some(inputs_path) = args.inputs.as_deref() else {
        return print_inputs_template(args);
    };
    if args.input.as_deref() == Some("-") && inputs_path == "-" {
        // Standard input can be read once: the inputs would find it empty.
        return Err(Failure::from("xir-run: INPUT and --inputs cannot both be `-` (standard input)".to_string()));
    }
    let text = xir_pipelines::io::read_text(inputs_path, "inputs").map_err(Failure::Diags)?;
    let inputs = Inputs::from_json(&text).map_err(|e| {
        let span = xir::Span::new(e.line() as u32, e.column() as u32);
        Failure::Diags(vec![xir::Diagnostic::error(xir::diag::Rule::Inputs, e.to_string())
            .with_file(xir_pipelines::io::display_name(inputs_path))
            .with_span(Some(span))])
    })?;
    let shader = args.input.as_deref().is_some_and(xir_pipelines::io::is_shader_input);
    if !args.overrides.is_empty() && !shader {
        // Only a shader has `override` constants; anything else would ignore the values in silence.
        let what =
            args.input.as_deref().map_or("--artifact".to_string(), |i| xir_pipelines::io::display_name(i).into());
        return Err(Failure::from(format!(
            "xir-run: {}",
            xir_pipelines::usage::overrides_without_shader(&format!("{what} is none"))
        )));
    }
    let requested = match (&args.dispatch, inputs.dispatch) {
        (Some(d), _) => Some(parse_dispatch(d)?),
        (None, d) => d,
    };
    // A SPIR-V module runs as it is, unless a flag about XIR asks for the
    // SPIR-V front end's kernel (then the module is the second oracle).
    let mut itself = None;
    if let Some(input) = &args.input {
        if let Some(words) = read_spirv(input)? {
            if !lowers_spirv(args) {
                return Ok(run_spirv(input, &words, args, &inputs, requested)?);
            }
            itself = Some(words);
        }
    }
    if let Some(flag) = idle_flag(args) {
        return Err(Failure::from(format!("xir-run: {flag}")));
    }
    if let Some(path) = &args.artifact {
        return run_artifact(path, args, inputs, requested);
    }
    let Some(input) = &args.input else {
        return Err(Failure::from("xir-run: an INPUT module (or --artifact FILE) is required".to_string()));
    };
    if args.entry.is_some() {
        let display = xir_pipelines::io::display_name(input);
        return Err(Failure::from(match itself {
            Some(_) => format!(
                "xir-run: --entry picks the entry point of a SPIR-V module run as it is; with a flag about XIR \
                 {display} goes through the SPIR-V front end (use --kernel)"
            ),
            None => format!(
                "xir-run: --entry selects an entry point of a SPIR-V module; {display} is not one (use --kernel)"
            ),
        }));
    }
    if itself.is_some() && args.compare && !args.overrides.is_empty() {
        return Err(Failure::from(format!(
            "xir-run: --compare runs {} itself with its specialization constants' defaults: --override cannot apply \
             to it (compare without it, or run --interp / --vulkan)",
            xir_pipelines::io::display_name(input)
        )));
    }
    // naga's module is compiled first: a shader naga refuses, or one its
    // runner cannot bind, is refused before the kernel runs anywhere.
    let overrides = args.overrides.iter().cloned().collect();
    let second = match (args.oracle, itself) {
        (Some(Oracle::Naga), _) => Some(SecondOracle::naga(input, &overrides).map_err(|e| e.to_string())?),
        (None, Some(words)) if args.compare => Some(SecondOracle::module_itself(words)),
        (None, _) => None,
    };
    let module = read_verified(input, &args.overrides, args.debug_info)?;
    let kernel = xir_pipelines::backend::select_kernel(&module, args.kernel.as_deref())
        .map_err(|e| Failure::from(format!("{}: error: {e}", xir_pipelines::io::display_name(input))))?;
    let dispatch = requested.unwrap_or_else(|| one_block(&module, kernel));
    let inputs = inputs.with_dispatch(dispatch);
    let interp = |precision: Option<xir::interp::Precision>, warp_size: u32| -> Result<Outputs, Failure> {
        let mut m = module.clone();
        if let Some(p) = &args.pipeline {
            run_pipeline(&mut m, p, args)?;
        }
        // By name: the pipeline may have removed functions placed before the kernel.
        let k = xir_pipelines::backend::select_kernel(&m, Some(&module.func(kernel).name))?;
        let opts = xir::interp::Options {
            max_steps: args.max_steps,
            max_threads: args.max_threads,
            max_print_bytes: args.max_print_bytes,
            precision,
            warp_size,
            ..xir::interp::Options::default()
        };
        let file = xir_pipelines::io::display_name(input);
        xir::interp::run_kernel_with(&m, k, &inputs, &opts)
            .map_err(|e| Failure::Diags(vec![e.with_file(file).to_diagnostic()]))
    };
    // Filtered-sampling outputs and their bound on the device that ran (docs/vulkan.md, "Sampling").
    let filtered = std::cell::RefCell::new(None);
    // The subgroup size of the device that ran: the interpreter's warp size in a comparison.
    let subgroup_size = std::cell::Cell::new(None);
    let default_warp = xir::interp::DEFAULT_WARP_SIZE;
    let vulkan = || -> Result<Outputs, Failure> {
        let name = module.func(kernel).name.clone();
        let mut legal = module.clone();
        run_pipeline(&mut legal, args.pipeline.as_deref().unwrap_or(xir_pipelines::backend::DEFAULT_PIPELINE), args)?;
        // A first compile tells whether the kernel prints (which device to
        // open); the kernel that runs is compiled for the features that
        // device enabled, so the planner uses what it has (native float
        // atomics, ...).
        let compile = |features| {
            let opts = xir_spirv::CompileOptions {
                opt_level: args.opt_level,
                fast_math: args.fast_math,
                device_features: features,
                debug_info: args.debug_info,
            };
            let handoffs = xir_spirv::handoff::Handoffs::new(&legal);
            xir_pipelines::backend::compile_with(&handoffs, Some(&name), &opts).map_err(|e| match &e {
                xir_pipelines::backend::BackendError::Compile(d) => {
                    let p = args.pipeline.as_deref().unwrap_or(xir_pipelines::backend::DEFAULT_PIPELINE);
                    let dir = repro_dir(args);
                    match xir_pipelines::repro::after_backend_failure(d, &module, p, args.opt_level, &dir) {
                        Some(note) => Failure::Noted(Box::new(Failure::from(e)), note),
                        None => Failure::from(e),
                    }
                }
                _ => Failure::from(e),
            })
        };
        let device = open_device(!compile(None)?.1.printers.is_empty())?;
        let (k, out) = compile(Some(device.enabled))?;
        let (outputs, timing) = if out.printers.is_empty() {
            xir_vulkan::run_compiled(&device, &legal, k, (&out).into(), &inputs, dispatch)
                .map_err(|e| run_error(e, args.inputs_file()))?
        } else {
            run_printing(&device, &legal, k, (&out).into(), &out.printers, (&inputs, args.inputs_file()), dispatch)?
        };
        *filtered.borrow_mut() = xir_vulkan::sampling_tolerance(&device, &module, kernel, &inputs);
        subgroup_size.set(Some(device.subgroups.size));
        if let Some(ns) = timing.dispatch_ns {
            eprintln!("vulkan: {} ({}): dispatch {:.1} us", device.name, device.driver, ns / 1000.0);
        }
        Ok(outputs)
    };
    if args.compare || args.oracle.is_some() {
        // The interpreter's run bounds each element by Vulkan's precision.
        let precision = xir::interp::Precision::for_fast_math(args.fast_math);
        // The device first: its subgroup size is the interpreter's warp size.
        let b = vulkan()?;
        let warp = subgroup_size.get().unwrap_or(default_warp);
        if let Some(w) = args.warp_size.filter(|&w| w != warp) {
            return Err(Failure::from(format!(
                "xir-run: --warp-size {w} differs from the device's subgroup size {warp}; a comparison runs the interpreter at the device's"
            )));
        }
        // Autodiff scopes run on the interpreter's own forward-mode
        // autodiff, which has no precision shadow: their outputs compare
        // within docs/autodiff.md's relative tolerance instead.
        let has_scopes =
            module.functions.iter().any(|f| f.all_insts().any(|(_, i)| f.inst(i).has(xir::Trait::Autodiff)));
        let a = if has_scopes {
            eprintln!("xir-run: autodiff scopes: floats compared within {AUTODIFF_TOLERANCE:e} relative (docs/autodiff.md, \"Precision\")");
            interp(None, warp)?
        } else {
            interp(Some(precision), warp)?
        };
        // Printed lines as multisets (module doc).
        let sorted = |o: &Outputs| {
            let mut o = o.clone();
            o.printed.sort();
            o
        };
        let ulps = xir_vulkan::ulp_tolerance(args.ulp);
        let exact = |x: &serde_json::Value, y: &serde_json::Value| {
            ulps(x, y) || (has_scopes && relatively_close(x, y, AUTODIFF_TOLERANCE))
        };
        let compared = match filtered.borrow().as_ref() {
            Some((names, bound)) => {
                eprintln!("xir-run: filtered sampling reaches {names:?}: compared within {bound:e} (docs/vulkan.md)");
                xir_vulkan::compare_sampling(&sorted(&a), &sorted(&b), names, *bound, exact)
            }
            None => sorted(&a).compare_bounded(&sorted(&b), exact),
        };
        if let Some(m) = compared.mismatch {
            let failure = Failure::from(format!("mismatch (interpreter vs Vulkan): {m}"));
            let r = xir_pipelines::repro::Repro {
                module: &module,
                kernel: &module.func(kernel).name,
                pipeline: args.pipeline.as_deref().unwrap_or(xir_pipelines::backend::DEFAULT_PIPELINE),
                opt_level: args.opt_level,
                failure: xir_pipelines::repro::Failure::Mismatch { inputs: &inputs },
            };
            let dir = repro_dir(args);
            return Err(Failure::Noted(
                Box::new(failure),
                xir_pipelines::repro::note(xir_pipelines::repro::write(&dir, &r), &dir),
            ));
        }
        if compared.within > 0 {
            eprintln!(
                "xir-run: {} elements differ within Vulkan's precision (largest bound used {:e}; docs/vulkan.md \"Precision\")",
                compared.within, compared.max_bound
            );
        }
        if let Some(second) = &second {
            // The front end's kernels run in whole workgroups, so naga's module
            // (which has no bound check and is dispatched in whole groups) runs
            // the same threads: the requested count rounded up.
            let threads = xir::interp::threads_run(module.func(kernel).kind, dispatch).unwrap_or(dispatch);
            let theirs = second
                .run(&module.func(kernel).name, &inputs, threads)
                .map_err(|e| format!("{}: {}", second.what, run_error(e, args.inputs_file())))?;
            // naga's module also reports its uniforms; ours keeps values out.
            let mut theirs = theirs;
            theirs.buffers.retain(|k, _| a.buffers.contains_key(k));
            let loose = second.loose_floats && !args.fast_math && !has_scopes;
            let widened = || interp(Some(xir::interp::Precision::for_fast_math(true)), warp).map(|w| sorted(&w));
            let (c, fast) =
                sorted(&a).compare_foreign(&sorted(&theirs), loose, widened, xir_vulkan::ulp_tolerance(args.ulp));
            if fast {
                eprintln!(
                    "xir-run: {} agrees under the --fast-math precision model (it declares neither NoContraction nor \
                     float controls; docs/vulkan.md \"Fast math\")",
                    second.what
                );
            }
            if let Some(m) = c.mismatch {
                let failure = Failure::from(format!("mismatch (interpreter vs {} on Vulkan): {m}", second.what));
                if args.oracle.is_none() {
                    return Err(failure);
                }
                // Ours agreed with the interpreter: the disagreement is in
                // the front end's lowering or in naga, reduced on the source.
                let ext = std::path::Path::new(input).extension().and_then(|e| e.to_str()).unwrap_or("wgsl");
                let mut note = format!(
                    "note: reduce with: xir-reduce {input} --naga-mismatch {} -o reduced.{ext}",
                    args.inputs_file()
                );
                if !args.overrides.is_empty() {
                    note.push_str(" (after writing the --override values into the shader: the reducer takes none)");
                }
                return Err(Failure::Noted(Box::new(failure), note));
            }
            print_outputs(&a)?;
            eprintln!("xir-run: interpreter, Vulkan and {} agree", second.what);
            return Ok(());
        }
        print_outputs(&a)?;
        eprintln!("xir-run: interpreter and Vulkan agree");
        return Ok(());
    }
    let out = if args.vulkan { vulkan()? } else { interp(None, args.warp_size.unwrap_or(default_warp))? };
    Ok(print_outputs(&out)?)
}

/// The words of `input` when it is a SPIR-V module (`xir_pipelines::io::read_spirv`).
fn read_spirv(input: &str) -> Result<Option<Vec<u32>>, String> {
    let Some(bytes) = xir_pipelines::io::read_spirv(input).map_err(|d| d.to_string())? else { return Ok(None) };
    xir_spirv::reflect::words_from_bytes(&bytes).map(Some).map_err(|e| format!("{input}: error: {e}"))
}

/// A flag about XIR (its compilation, the interpreter, a comparison) given
/// with a SPIR-V module: the module then goes through the SPIR-V front end.
fn lowers_spirv(args: &Args) -> bool {
    let defaults = xir::interp::Options::default();
    args.interp
        || args.compare
        || args.kernel.is_some()
        || args.pipeline.is_some()
        || args.pipeline_dir.is_some()
        || args.opt_level != 0
        || args.fast_math
        || args.debug_info
        || args.ulp != 0
        || args.max_steps != defaults.max_steps
        || args.max_threads != defaults.max_threads
        || args.max_print_bytes != defaults.max_print_bytes
        || args.warp_size.is_some()
        || !args.overrides.is_empty()
}

/// A flag the run being made does not read, refused as the SPIR-V path
/// refuses its own rather than ignored in silence: the interpreter's
/// options on a Vulkan-only run, `--ulp` without a comparison, compile
/// options on an interpreter-only run that has no `--pipeline` or on an
/// artifact run without INPUT.
fn idle_flag(args: &Args) -> Option<String> {
    if args.input.is_none() && args.artifact.is_none() {
        return None; // Nothing runs: the missing INPUT is the error.
    }
    let compares = args.compare || args.oracle.is_some();
    let interprets = compares || !(args.vulkan || args.artifact.is_some());
    let compiles = compares || args.vulkan || args.artifact.is_some() || args.pipeline.is_some();
    let defaults = xir::interp::Options::default();
    let interp_options = [
        (args.max_steps != defaults.max_steps, "--max-steps"),
        (args.max_threads != defaults.max_threads, "--max-threads"),
        (args.max_print_bytes != defaults.max_print_bytes, "--max-print-bytes"),
        (args.warp_size.is_some(), "--warp-size"),
    ];
    let compile_options =
        [(args.opt_level != 0, "--opt-level"), (args.fast_math, "--fast-math"), (args.debug_info, "-g")];
    let given = |flags: &[(bool, &'static str)]| flags.iter().find(|(on, _)| *on).map(|(_, f)| *f);
    if args.ulp != 0 && !compares {
        return Some("--ulp widens a comparison, and there is none (--compare)".into());
    }
    if let Some(flag) = given(&interp_options).filter(|_| !interprets) {
        return Some(format!("{flag} is an interpreter option, and only Vulkan runs"));
    }
    // An artifact without INPUT is run as it was compiled: nothing compiles.
    let compile = [(args.pipeline.is_some(), "--pipeline"), (args.pipeline_dir.is_some(), "--pipeline-dir")];
    if let Some(flag) =
        given(&compile).or(given(&compile_options)).filter(|_| args.artifact.is_some() && args.input.is_none())
    {
        return Some(format!("{flag} is a compile option, and the artifact runs as it was compiled"));
    }
    let flag = given(&compile_options).filter(|_| !compiles)?;
    Some(format!("{flag} is a compile option, and only the interpreter runs, with no --pipeline"))
}

/// Run the SPIR-V module `words` (read from `path`) on Vulkan; flags about
/// XIR or the interpreter are refused first.
fn run_spirv(
    path: &str,
    words: &[u32],
    args: &Args,
    inputs: &Inputs,
    requested: Option<[u32; 3]>,
) -> Result<(), String> {
    if args.artifact.is_some() {
        return Err(format!("xir-run: {path} is a SPIR-V module to run: --artifact does not apply to it"));
    }
    // Refusals of the module itself come before a device is opened (and name the module).
    xir_spirv::reflect::reflect(words, args.entry.as_deref())
        .map_err(|e| format!("{path}: error: {}", xir_vulkan::RunError::Foreign(e.0)))?;
    let device = open_device(false)?;
    let (outputs, timing) = xir_vulkan::run_foreign_on(&device, words, args.entry.as_deref(), inputs, requested)
        .map_err(|e| match e {
            xir_vulkan::RunError::Foreign(_) => format!("{path}: error: {e}"),
            e => run_error(e, args.inputs_file()),
        })?;
    if let Some(ns) = timing.dispatch_ns {
        eprintln!("vulkan: {} ({}): dispatch {:.1} us", device.name, device.driver, ns / 1000.0);
    }
    print_outputs(&outputs)
}

/// Read and verify the module `input`; every diagnostic names the file.
fn read_verified(input: &str, overrides: &[(String, f64)], located: bool) -> Result<Module, Failure> {
    let file = xir_pipelines::io::display_name(input);
    let render = |diags: Vec<xir::Diagnostic>| {
        Failure::Diags(diags.into_iter().map(|d| if d.file.is_some() { d } else { d.with_file(file) }).collect())
    };
    let overrides = overrides.iter().cloned().collect();
    xir_pipelines::io::read_module_verified(input, &overrides, located).map_err(render)
}

/// Load `path` through the artifact codec and run it on Vulkan.
/// Without a dispatch size (`--dispatch` or the inputs file), one block of
/// the kernel runs, as the interpreter's API does (docs/inputs-format.md).
/// Where a reproducer goes: `--reproducer-dir`, else a temporary directory.
fn repro_dir(args: &Args) -> std::path::PathBuf {
    args.reproducer_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("xir-run-repro-{}", std::process::id())))
}

/// `--inputs-template`: the kernel's inputs at zero (`xir::interp::inputs_template`) on stdout.
fn print_inputs_template(args: &Args) -> Result<(), Failure> {
    let Some(input) = &args.input else {
        return Err(Failure::from("xir-run: --inputs-template needs an INPUT module".to_string()));
    };
    let module = read_verified(input, &args.overrides, false)?;
    let kernel = xir_pipelines::backend::select_kernel(&module, args.kernel.as_deref())
        .map_err(|e| Failure::from(format!("{}: error: {e}", xir_pipelines::io::display_name(input))))?;
    let text = xir::interp::inputs_template(&module, kernel).to_text();
    Ok(xir_pipelines::io::write_output(None, text.as_bytes()).map_err(|e| format!("xir-run: {e}"))?)
}

fn one_block(m: &Module, kernel: xir::FuncId) -> [u32; 3] {
    match m.func(kernel).kind {
        xir::FunctionKind::Kernel { block_size, .. } => block_size,
        _ => [1, 1, 1],
    }
}

fn run_artifact(path: &str, args: &Args, inputs: Inputs, requested: Option<[u32; 3]>) -> Result<(), Failure> {
    use xir_spirv::artifact::{self, LoadRequirements};
    let req = match &args.input {
        Some(input) => {
            let mut m = read_verified(input, &args.overrides, args.debug_info)?;
            run_pipeline(&mut m, args.pipeline.as_deref().unwrap_or(xir_pipelines::backend::DEFAULT_PIPELINE), args)?;
            let k = xir_pipelines::backend::select_kernel(&m, args.kernel.as_deref())?;
            LoadRequirements::for_kernel(&m, k)
        }
        None => LoadRequirements::any_xir_spirv(),
    };
    let bytes = artifact::read_file(std::path::Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
    // The whole artifact (printer records included) is checked before a
    // device is chosen: a printing kernel needs the debug-printf capture.
    let art = artifact::decode(&bytes, &req, None).map_err(|e| format!("{path}: rejected: {e}"))?;
    // The artifact's required features are checked against what this
    // device actually enabled, before any Vulkan object is built from it.
    let device = open_device(!art.printers.is_empty())?;
    let art = artifact::decode(&bytes, &req, Some(&device.enabled)).map_err(|e| format!("{path}: rejected: {e}"))?;
    if let Some(name) = args.kernel.as_deref().filter(|n| *n != art.arguments.kernel_name) {
        return Err(Failure::from(format!("{path}: holds kernel `{}`, not `{name}`", art.arguments.kernel_name)));
    }
    let (sig, k) = art.signature_module().map_err(|e| format!("{path}: {e}"))?;
    let dispatch = requested.unwrap_or_else(|| one_block(&sig, k));
    let inputs = &inputs.with_dispatch(dispatch);
    let (outputs, timing) = if art.printers.is_empty() {
        xir_vulkan::run_compiled(&device, &sig, k, (&art).into(), inputs, dispatch)
            .map_err(|e| run_error(e, args.inputs_file()))?
    } else {
        run_printing(&device, &sig, k, (&art).into(), &art.printers, (inputs, args.inputs_file()), dispatch)?
    };
    if let Some(ns) = timing.dispatch_ns {
        eprintln!("vulkan: {} ({}): dispatch {:.1} us", device.name, device.driver, ns / 1000.0);
    }
    Ok(print_outputs(&outputs)?)
}

/// Print the outputs as JSON on stdout; a failed write (closed pipe, full
/// disk) is an error, not a panic.
fn print_outputs(out: &Outputs) -> Result<(), String> {
    xir_pipelines::io::write_output(None, format!("{}\n", out.to_json()).as_bytes())
        .map_err(|e| format!("xir-run: {e}"))
}

/// A Vulkan run's error; one about the inputs (an ABI mismatch: a missing or
/// malformed argument) names the inputs file.
fn run_error(e: xir_vulkan::RunError, inputs_path: &str) -> String {
    match e {
        xir_vulkan::RunError::Abi(_) => format!("{inputs_path}: error: {e}"),
        e => e.to_string(),
    }
}

/// The Vulkan device; with the debug-printf capture for a printing kernel.
fn open_device(printing: bool) -> Result<xir_vulkan::Device, String> {
    let device = if printing { xir_vulkan::Device::with_printf() } else { xir_vulkan::Device::new() };
    device
        .map_err(|e| if printing { format!("xir-run: cannot capture this kernel's print: {e}") } else { e.to_string() })
}

/// Run a printing kernel with its lines captured; a truncated capture fails.
fn run_printing(
    device: &xir_vulkan::Device,
    module: &Module,
    kernel: xir::FuncId,
    compiled: xir_vulkan::Compiled<'_>,
    printers: &[xir_spirv::artifact::PrinterRecord],
    (inputs, inputs_path): (&Inputs, &str),
    dispatch: [u32; 3],
) -> Result<(Outputs, xir_vulkan::GpuTiming), String> {
    let (outputs, timing, capture) =
        xir_vulkan::run_kernel_printing(device, module, kernel, compiled, printers, inputs, dispatch)
            .map_err(|e| run_error(e, inputs_path))?;
    if capture.truncated {
        let size = capture.buffer_size.map(|b| format!("{b}-byte ")).unwrap_or_default();
        return Err(format!(
            "vulkan: the validation layer's {size}debug-printf buffer overflowed: {} lines captured, the rest lost \
             (dispatch fewer threads, or raise khronos_validation.printf_buffer_size in your layer settings)",
            capture.lines.len()
        ));
    }
    Ok((outputs, timing))
}

fn run_pipeline(m: &mut Module, spec: &str, args: &Args) -> Result<(), Failure> {
    let reg = xir_pipelines::registry();
    let pipeline = xir_pipelines::loader(&reg, args.pipeline_dir.as_deref()).load(spec).map_err(Failure::Load)?;
    let options = RunOptions { opt_level: args.opt_level, fast_math: args.fast_math, ..RunOptions::default() };
    let input = args.input.clone().unwrap_or_default();
    PassManager::new(&pipeline, options).run(m, &mut std::io::sink()).map(|_| ()).map_err(|e| Failure::Pass(e, input))
}

/// The relative tolerance between the pass's gradients on a device and the
/// interpreter's (docs/autodiff.md, "Precision").
const AUTODIFF_TOLERANCE: f64 = 1e-4;

/// Whether two output numbers (or arrays of them) agree within `tol`
/// relative error (at least absolute `tol` near zero); signed zeros are
/// equal, as are two NaNs (floats the JSON spells as strings included).
fn relatively_close(a: &serde_json::Value, b: &serde_json::Value, tol: f64) -> bool {
    use serde_json::Value as J;
    let num = |v: &J| match v {
        J::Number(n) => n.as_f64(),
        J::String(s) => s.parse::<f64>().ok(),
        _ => None,
    };
    match (a, b) {
        (J::Array(x), J::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| relatively_close(p, q, tol)),
        _ => match (num(a), num(b)) {
            (Some(p), Some(q)) if p.is_nan() || q.is_nan() => p.is_nan() && q.is_nan(),
            (Some(p), Some(q)) => p == q || (p - q).abs() <= tol * p.abs().max(q.abs()).max(1.0),
            _ => a == b,
        },
    }
}
