//! `xir-opt`: read XIR (text or JSON), optionally run a RON pipeline with
//! instrumentation, and emit XIR, JSON, DOT or (through the backend) SPIR-V.
//!
//! Exit codes: 0 success; 1 any error in the input, the pipeline or a pass
//! (reported on stderr in the `--diagnostics` form: `human` shows the source
//! line with a caret, `short` is `path:line:col: error: [rule] message`,
//! `json` one object per line; an internal panic is caught and reported as
//! an error); 2 usage errors. No output file is left behind on failure.

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Mutex;

use clap::Parser;
use xir::pipeline::RunOptions;
use xir_pipelines::backend::{self, BackendEmit};
use xir_pipelines::cache::{CompileCache, Compiled, Outcome, Request, StoreError};
use xir_pipelines::report::{DiagnosticsFormat, Reporter};
use xir_pipelines::{device_features, dot, io, listing, usage};

use xir_pipelines::then::ThenEmit as Emit;

/// XIR optimizer driver: parse, verify, run a pipeline, emit.
#[derive(Parser, Debug)]
#[command(name = "xir-opt", version, about)]
struct Cli {
    /// Input module: a `.xir` text file, a `.json` file, a `.wgsl` or
    /// `.comp` shader, a SPIR-V compute module (by its magic number), or `-`
    /// for stdin (XIR text or JSON). Several inputs or a directory (its
    /// `.xir`, `.wgsl`, `.comp`, `.glsl`, `.spv` files) compile as a batch,
    /// each to `OUTDIR/NAME.EXT` (`-o OUTDIR`).
    #[arg(value_name = "INPUT")]
    inputs: Vec<String>,
    /// Compile the inputs as a batch on N threads (default: every core);
    /// each input's messages are printed whole, in input order.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Value of a shader `override` constant (repeatable).
    #[arg(long = "override", value_name = "NAME=VALUE", value_parser = io::parse_override)]
    overrides: Vec<(String, f64)>,
    /// The kernel a SPIR-V `--emit` compiles when the module has several.
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Pipeline to run: a shipped name (`pipelines/NAME.ron`) or a `.ron`
    /// path. Default: none, except with `--emit spirv|spirv-asm|artifact`,
    /// whose default is `spirv` (the legalization the backend's input
    /// contract requires, with `--opt-level`'s groups).
    #[arg(long)]
    pipeline: Option<String>,
    /// Directory searched for pipelines by name before the shipped ones,
    /// which are built into the binary (default: `$XIR_PIPELINE_DIR`).
    #[arg(long, value_name = "DIR")]
    pipeline_dir: Option<PathBuf>,
    /// Optimization level (`-O2` = `--opt-level 2`): opt-level groups with a
    /// higher `min_level` are skipped, and SPIR-V gets SPIRV-Tools' preset of the level.
    #[arg(short = 'O', long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// Allow value-changing float rewrites (reassociation, fast-math-only
    /// algebraic rules) in the passes that offer them, and in the backend
    /// (FMA contraction; no float controls: rounding mode, signed zeros,
    /// infinities and NaNs are left to the device; docs/vulkan.md).
    #[arg(long)]
    fast_math: bool,
    /// Debug info in the SPIR-V: `!loc` locations (a shader's own source
    /// lines) as `OpLine`s, XIR names as `OpName`s (docs/debug-info.md).
    #[arg(short = 'g', long = "debug-info")]
    debug_info: bool,
    /// The device the SPIR-V is planned for: `unknown` (no check, nothing
    /// optional used), `none`, `all`, `lavapipe`, `vulkan` (the running
    /// device), or a RON file listing feature names.
    #[arg(long, value_name = "PRESET|FILE", default_value = "unknown")]
    device_features: String,
    /// List the device-feature presets and every feature name, then exit.
    #[arg(long)]
    list_device_features: bool,
    /// Output form.
    #[arg(long, value_enum, default_value_t = Emit::Xir)]
    emit: Emit,
    /// Output file (default stdout).
    #[arg(short = 'o', value_name = "OUT")]
    output: Option<String>,
    /// Verify and dialect-check the IR after every pass.
    #[arg(long)]
    verify_each: bool,
    /// Print the IR before each run of PASS (repeatable).
    #[arg(long, value_name = "PASS")]
    print_before: Vec<String>,
    /// Print the IR after each run of PASS (repeatable).
    #[arg(long, value_name = "PASS")]
    print_after: Vec<String>,
    /// Print the IR after every pass.
    #[arg(long)]
    print_after_all: bool,
    /// Print a unified diff after every pass that changed the IR.
    #[arg(long)]
    print_changed: bool,
    /// Print a table of pass timings and IR sizes.
    #[arg(long)]
    time_passes: bool,
    /// Run only the first N pass executions.
    #[arg(long, value_name = "N")]
    bisect_limit: Option<usize>,
    /// Where to write a reproducer if a pass fails or the backend's output
    /// fails validation (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    reproducer_dir: Option<PathBuf>,
    /// Only load and check a pipeline file, then exit.
    #[arg(long, value_name = "FILE.ron")]
    check_pipeline: Option<String>,
    /// Incremental session: after INPUT, compile each FILE as an edit of it
    /// in the same database and report, per version, how many functions
    /// were recompiled and reused and its time (needs --pipeline; emits the
    /// last version in the --emit form).
    #[arg(long, value_name = "FILE")]
    then: Vec<String>,
    /// List every registered pass with its contract and options.
    #[arg(long)]
    list_passes: bool,
    /// List the dialects of the spec.
    #[arg(long)]
    list_dialects: bool,
    /// The compile cache's directory (default: `$XIR_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/xir`, else `~/.cache/xir`; docs/compile-cache.md).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Neither read nor write the compile cache (it is used for `--emit
    /// spirv | spirv-asm | artifact` unless a flag watches the passes).
    #[arg(long)]
    no_cache: bool,
    /// Say what the compile cache did (hit, miss, bypassed) on stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// How errors and warnings are printed (docs/diagnostics.md).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = DiagnosticsFormat::Human)]
    diagnostics: DiagnosticsFormat,
}

impl Cli {
    /// The pipeline to run: `--pipeline`, or for a backend `--emit` the
    /// `spirv` pipeline (the backend takes only legalized XIR: without it
    /// most kernels, any with a `break`, would be refused).
    fn pipeline_name(&self) -> Option<&str> {
        self.pipeline.as_deref().or(self.emit.is_backend().then_some(backend::DEFAULT_PIPELINE))
    }
}

static PANIC_LOCATION: Mutex<Option<String>> = Mutex::new(None);

fn main() {
    // Panics are reported as errors (exit 1), never as a raw panic message:
    // the hook only records where it happened.
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut l) = PANIC_LOCATION.lock() {
            *l = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        }
    }));
    let code = match catch_unwind(AssertUnwindSafe(run)) {
        Ok(code) => code,
        Err(payload) => {
            let msg = xir::pipeline::panic_message(&*payload);
            let at = PANIC_LOCATION.lock().ok().and_then(|l| l.clone()).unwrap_or_default();
            eprintln!("xir-opt: error: internal error: {msg} (at {at}); this is a bug in xir-opt");
            1
        }
    };
    std::process::exit(code);
}

/// `XIR_LOG=info` (an `EnvFilter` directive) logs one line per pass span
/// with its wall time; off by default.
fn init_tracing() {
    use tracing_subscriber::{fmt::format::FmtSpan, EnvFilter};
    let filter = EnvFilter::try_from_env("XIR_LOG").unwrap_or_else(|_| EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}

fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let binary = match cli.emit {
        Emit::Spirv => Some("spirv"),
        Emit::Artifact => Some("artifact"),
        _ => None,
    };
    if let Some(e) = usage::binary_to_terminal(binary, cli.output.as_deref()) {
        eprintln!("xir-opt: error: {e}");
        return 2;
    }
    init_tracing();
    let reg = xir_pipelines::registry();
    for problem in reg.validate() {
        eprintln!("xir-opt: warning: pass registry: {problem}");
    }
    if cli.list_device_features {
        return match io::write_output(cli.output.as_deref(), device_features::listing().as_bytes()) {
            Ok(()) => 0,
            Err(e) => fail(&e.to_string()),
        };
    }
    if cli.list_passes || cli.list_dialects {
        let mut text = String::new();
        if cli.list_passes {
            text.push_str(&listing::passes(&reg));
        }
        if cli.list_dialects {
            text.push_str(&listing::dialects());
        }
        return match io::write_output(cli.output.as_deref(), text.as_bytes()) {
            Ok(()) => 0,
            Err(e) => fail(&e.to_string()),
        };
    }
    if let Err(e) = xir_pipelines::check_pipeline_dir(cli.pipeline_dir.as_deref()) {
        eprintln!("xir-opt: error: {e}");
        return 2;
    }
    if let Some(e) =
        usage::unknown_pass(&reg, &[("--print-before", &cli.print_before), ("--print-after", &cli.print_after)])
    {
        eprintln!("xir-opt: error: {e}");
        return 2;
    }
    let loader = xir_pipelines::loader(&reg, cli.pipeline_dir.as_deref());
    let reporter = Reporter::new(cli.diagnostics);
    if let Some(path) = &cli.check_pipeline {
        return match loader.load_path(std::path::Path::new(path)) {
            Ok(p) => {
                eprint!("{}", reporter.pipeline_warnings(&p.warnings, |_| true));
                eprintln!(
                    "{path}: pipeline `{}` is well-formed: {} -> {}, {} pass steps",
                    p.name,
                    p.input,
                    p.output,
                    p.pass_steps().len()
                );
                0
            }
            Err(f) => {
                eprint!("{}", reporter.load_failure(&f));
                1
            }
        };
    }
    let Some(input) = cli.inputs.first().map(String::as_str) else {
        eprintln!("xir-opt: error: an INPUT file (or `-`) is required\n\nFor more information, try '--help'.");
        return 2;
    };
    if let Some(e) = idle_flag(&cli) {
        eprintln!("xir-opt: error: {e}");
        return 2;
    }
    let batch_mode =
        cli.jobs.is_some() || cli.inputs.len() > 1 || cli.inputs.iter().any(|i| std::path::Path::new(i).is_dir());
    if batch_mode && !cli.then.is_empty() {
        eprintln!("xir-opt: error: --then takes one INPUT, not a batch");
        return 2;
    }
    let mut pipeline = match cli.pipeline_name().map(|p| loader.load(p)).transpose() {
        Ok(p) => p,
        Err(f) => {
            eprint!("{}", reporter.load_failure(&f));
            return 1;
        }
    };
    if !cli.then.is_empty() {
        let Some(p) = pipeline else {
            eprintln!("xir-opt: error: --then needs --pipeline (the pipeline each function is compiled with)");
            return 2;
        };
        return incremental(&cli, &reporter, input, p);
    }
    let device = match device_features::resolve(&cli.device_features) {
        Ok(d) => d,
        Err(e) => return report(&reporter, &[e.to_diagnostic()], input),
    };
    if batch_mode {
        return batch(&cli, &reporter, pipeline.as_ref(), device);
    }
    if !cli.overrides.is_empty() && !io::is_shader_input(input) {
        eprintln!(
            "xir-opt: error: {}",
            usage::overrides_without_shader(&format!("{} is none", io::display_name(input)))
        );
        return 2;
    }
    let job = Job { cli: &cli, reporter: &reporter, device, cache: cache_use(&cli), batch: false };
    let mut log = std::io::stderr().lock();
    compile_file(&job, pipeline.as_mut(), input, cli.output.as_deref(), &mut log)
}

/// The batch mode: every input compiled on `--jobs` threads, each to
/// `OUTDIR/STEM.EXT`; exit 1 if any failed (a failed input writes nothing).
fn batch(
    cli: &Cli,
    reporter: &Reporter,
    pipeline: Option<&xir::pipeline::Pipeline>,
    device: Option<xir_spirv::FeatureSet>,
) -> i32 {
    use xir_pipelines::batch::{self, BatchError, Done};
    let usage = |e: BatchError| {
        eprintln!("xir-opt: error: {e}");
        2
    };
    let inputs = match batch::expand_inputs(&cli.inputs) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    if !cli.overrides.is_empty() && !inputs.iter().any(|i| io::is_shader_input(&i.to_string_lossy())) {
        eprintln!("xir-opt: error: {}", usage::overrides_without_shader("none of the inputs is one"));
        return 2;
    }
    let Some(out_dir) = cli.output.as_deref().filter(|o| *o != "-").map(std::path::Path::new) else {
        return usage(BatchError::NoOutputDir);
    };
    let ext = match cli.emit {
        Emit::Xir => "xir",
        Emit::Ast => "ast",
        Emit::Json => "json",
        Emit::Dot => "dot",
        Emit::Spirv => "spv",
        Emit::SpirvAsm => "spvasm",
        Emit::Artifact => "xsa",
    };
    let outputs = match batch::output_paths(&inputs, out_dir, ext) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    if let Err(e) = std::fs::create_dir_all(out_dir) {
        return fail(&format!("{}: cannot create the output directory: {e}", out_dir.display()));
    }
    if let Some(p) = pipeline {
        eprint!("{}", reporter.pipeline_warnings(&p.warnings, |w| w.severity == xir::diag::Severity::Warning));
    }
    let jobs =
        cli.jobs.map(|j| j as usize).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cache = cache_use(cli);
    if let (CacheUse::Off(why), true, Emit::Spirv | Emit::SpirvAsm | Emit::Artifact) = (&cache, cli.verbose, cli.emit) {
        eprintln!("xir-opt: compile cache: {why}");
    }
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    // Each thread loads its own pipeline (passes hold per-run state) and
    // renderer (source texts are not shared between threads).
    let init = || {
        let reg = xir_pipelines::registry();
        let loaded = cli.pipeline_name().map(|p| xir_pipelines::loader(&reg, cli.pipeline_dir.as_deref()).load(p));
        (loaded, Reporter::new(cli.diagnostics))
    };
    let work =
        |(loaded, reporter): &mut (Option<Result<xir::pipeline::Pipeline, xir::pipeline::LoadFailure>>, Reporter),
         i: usize| {
            let mut log = Vec::new();
            let pipeline = match loaded {
                None => None,
                Some(Ok(p)) => Some(p),
                Some(Err(f)) => {
                    let _ = write!(log, "{}", reporter.load_failure(f));
                    return Done { code: 1, log };
                }
            };
            let job = Job { cli, reporter, device, cache: cache.clone(), batch: true };
            let output = outputs[i].display().to_string();
            let code =
                catch_unwind(AssertUnwindSafe(|| compile_file(&job, pipeline, &names[i], Some(&output), &mut log)))
                    .unwrap_or_else(|payload| {
                        let _ = writeln!(
                            log,
                            "xir-opt: error: {}: internal error: {}; this is a bug in xir-opt",
                            names[i],
                            xir::pipeline::panic_message(&*payload)
                        );
                        1
                    });
            Done { code, log }
        };
    let mut failed = Vec::new();
    let done = |i: usize, d: Done| {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&d.log);
        if d.code != 0 {
            failed.push(names[i].clone());
        }
    };
    batch::run(inputs.len(), jobs, progress, init, work, |i| names[i].clone(), done);
    if failed.is_empty() {
        return 0;
    }
    eprintln!("xir-opt: error: {} of {} inputs failed: {}", failed.len(), inputs.len(), failed.join(", "));
    1
}

/// Whether and where the compile cache is used.
#[derive(Clone)]
enum CacheUse {
    On(CompileCache),
    /// Why not, for `-v`.
    Off(String),
}

/// The flags that watch the passes, each with whether it was given.
fn watching(cli: &Cli) -> [(bool, &'static str); 7] {
    [
        (cli.time_passes, "--time-passes"),
        (cli.print_after_all, "--print-after-all"),
        (!cli.print_after.is_empty(), "--print-after"),
        (!cli.print_before.is_empty(), "--print-before"),
        (cli.print_changed, "--print-changed"),
        (cli.verify_each, "--verify-each"),
        (cli.bisect_limit.is_some(), "--bisect-limit"),
    ]
}

/// A flag given that only a pipeline or the backend reads, when neither
/// runs (no `--pipeline`, an `--emit` form short of SPIR-V), or `--kernel`
/// without a SPIR-V form: it would change nothing, in silence
/// (`--opt-level 2` printing the input as it was).
fn idle_flag(cli: &Cli) -> Option<String> {
    if cli.kernel.is_some() && !cli.emit.is_backend() {
        return Some("--kernel picks the kernel of a SPIR-V --emit form (spirv, spirv-asm, artifact)".into());
    }
    if cli.pipeline_name().is_some() {
        return None;
    }
    let compile = [
        (cli.opt_level != 0, "--opt-level"),
        (cli.fast_math, "--fast-math"),
        (cli.device_features != "unknown", "--device-features"),
    ];
    compile.into_iter().chain(watching(cli)).find(|(on, _)| *on).map(|(_, flag)| usage::compiles_nothing(flag))
}

/// The compile cache `cli` asks for: none with `--no-cache`, or when a
/// flag watches the passes (a hit would run none of them: the reference
/// forces a fresh compile when source dumping is on, for the same reason).
fn cache_use(cli: &Cli) -> CacheUse {
    let watching = watching(cli);
    if cli.no_cache {
        return CacheUse::Off("off (--no-cache)".into());
    }
    if let Some((_, flag)) = watching.iter().find(|(on, _)| *on) {
        return CacheUse::Off(format!("bypassed: {flag} watches the passes, so every kernel is compiled"));
    }
    // A debug build's planted failures (`XIR_DEBUG_*`, docs/reduce.md)
    // change what the compiler makes without changing the key.
    if cfg!(debug_assertions) {
        if let Some((var, _)) = std::env::vars_os().find(|(k, _)| k.to_string_lossy().starts_with("XIR_DEBUG_")) {
            return CacheUse::Off(format!(
                "bypassed: {} plants a failure, so every kernel is compiled",
                var.to_string_lossy()
            ));
        }
    }
    match cli.cache_dir.clone().or_else(CompileCache::default_dir) {
        Some(dir) => CacheUse::On(CompileCache::new(dir)),
        None => CacheUse::Off(format!(
            "off: no directory (set --cache-dir, ${}, $XDG_CACHE_HOME or $HOME)",
            xir_pipelines::cache::CACHE_DIR_ENV
        )),
    }
}

/// What one input's compilation shares with the others.
struct Job<'a> {
    cli: &'a Cli,
    reporter: &'a Reporter,
    device: Option<xir_spirv::FeatureSet>,
    cache: CacheUse,
    /// One input of a batch: pipeline warnings were printed once before,
    /// and each input's reproducers go to their own directory.
    batch: bool,
}

/// Read `input`, run the pipeline, emit to `output` (`None`: stdout);
/// everything it prints goes to `log`. Returns the exit code.
fn compile_file(
    job: &Job<'_>,
    pipeline: Option<&mut xir::pipeline::Pipeline>,
    input: &str,
    output: Option<&str>,
    log: &mut dyn Write,
) -> i32 {
    let (cli, reporter) = (job.cli, job.reporter);
    let overrides: xir_frontend::Overrides = cli.overrides.iter().cloned().collect();
    let report = |log: &mut dyn Write, diags: &[xir::Diagnostic]| {
        let _ = write!(log, "{}", reporter.render_for(diags, input));
        1
    };
    let fail = |log: &mut dyn Write, msg: &str| {
        let _ = writeln!(log, "xir-opt: error: {msg}");
        1
    };
    if cli.emit == Emit::Ast && pipeline.is_none() && io::detect(input, "").is_shader() {
        return match shader_ast(input, &overrides) {
            Ok(text) => match io::write_output(output, text.as_bytes()) {
                Ok(()) => 0,
                Err(e) => fail(log, &e.to_string()),
            },
            Err(diags) => report(log, &diags),
        };
    }
    let mut module = match io::read_module_verified(input, &overrides, cli.debug_info) {
        Ok(m) => m,
        Err(diags) => return report(log, &diags),
    };
    if let Some(p) = pipeline.as_deref().filter(|_| !job.batch) {
        let _ =
            write!(log, "{}", reporter.pipeline_warnings(&p.warnings, |w| w.severity == xir::diag::Severity::Warning));
    }
    let backend_emit = match cli.emit {
        Emit::Spirv => Some(BackendEmit::Spirv),
        Emit::SpirvAsm => Some(BackendEmit::SpirvAsm),
        Emit::Artifact => Some(BackendEmit::Artifact),
        _ => None,
    };
    // `Err(None)`: already reported.
    let bytes: Result<Vec<u8>, Option<String>> = match (backend_emit, &job.cache) {
        (Some(what), CacheUse::On(cache)) => cached_backend(job, cache, pipeline, &mut module, input, log)
            .and_then(|c| c.emit(what).map_err(|e| Some(e.to_string()))),
        (backend_emit, cache) => {
            if let (Some(_), CacheUse::Off(why), true, false) = (backend_emit, cache, cli.verbose, job.batch) {
                let _ = writeln!(log, "xir-opt: compile cache: {why}");
            }
            // The module before the pipeline, for a reproducer of a backend failure.
            let before = (pipeline.is_some() && backend_emit.is_some()).then(|| module.clone());
            let handoffs = match pipeline {
                Some(p) => match run_pipeline_logged(job, p, &mut module, input, log) {
                    Ok(h) => h,
                    Err(code) => return code,
                },
                None => xir_spirv::handoff::Handoffs::new(&module),
            };
            let module = handoffs.module();
            let mut backend = |what| {
                backend::emit_from_with(&handoffs, cli.kernel.as_deref(), what, &backend_options(job)).map_err(|e| {
                    match e {
                        backend::BackendError::Compile(d) => {
                            let _ = write!(log, "{}", reporter.render_for(&d, input));
                            note_backend_failure(job, &d, before.as_ref(), input, log);
                            None
                        }
                        e => Some(e.to_string()),
                    }
                })
            };
            match cli.emit {
                Emit::Xir => Ok(xir::text::print_module(module).into_bytes()),
                Emit::Ast => {
                    let arenas = xir_ast::Arenas::default();
                    xir_ast::xir_to_ast(&arenas, module)
                        .map(|ast| xir_ast::print_module(&ast).into_bytes())
                        .map_err(|e| Some(format!("--emit ast: {e}")))
                }
                Emit::Json => Ok(xir::text::json::to_json(module).into_bytes()),
                Emit::Dot => Ok(dot::module_to_dot(module).into_bytes()),
                Emit::Spirv => backend(BackendEmit::Spirv),
                Emit::SpirvAsm => backend(BackendEmit::SpirvAsm),
                Emit::Artifact => backend(BackendEmit::Artifact),
            }
        }
    };
    match bytes.map(|b| io::write_output(output, &b)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => fail(log, &e.to_string()),
        // About this input (no kernel, several, an artifact refused): named, as a batch needs.
        Err(Some(e)) => fail(log, &format!("{}: {e}", io::display_name(input))),
        Err(None) => 1,
    }
}

/// The backend's options for `job`.
fn backend_options(job: &Job<'_>) -> xir_spirv::CompileOptions {
    let cli = job.cli;
    xir_spirv::CompileOptions {
        opt_level: cli.opt_level,
        fast_math: cli.fast_math,
        device_features: job.device,
        debug_info: cli.debug_info,
    }
}

/// Where a reproducer of `input`'s failure goes: `--reproducer-dir` or a
/// temporary directory, one subdirectory an input in a batch.
fn reproducer_dir(job: &Job<'_>, input: &str) -> std::path::PathBuf {
    let mut dir = job
        .cli
        .reproducer_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("xir-opt-repro-{}", std::process::id())));
    if job.batch {
        dir.push(std::path::Path::new(input).file_stem().unwrap_or_default());
    }
    dir
}

/// After the backend refused what the pipeline made of `before` (its output
/// failed validation): write a reproducer `xir-reduce` takes and say how to
/// reduce and replay it.
fn note_backend_failure(
    job: &Job<'_>,
    d: &[xir::Diagnostic],
    before: Option<&xir::Module>,
    input: &str,
    log: &mut dyn Write,
) {
    if let (Some(before), Some(p)) = (before, job.cli.pipeline_name()) {
        let dir = reproducer_dir(job, input);
        if let Some(note) = xir_pipelines::repro::after_backend_failure(d, before, p, job.cli.opt_level, &dir) {
            let _ = writeln!(log, "{note}");
        }
    }
}

/// Run `p` over `module` with the instrumentation `cli` asks for, its
/// printing to `log`; the pipeline's handoff verdicts, or the exit code of
/// a reported failure.
fn run_pipeline_logged<'m>(
    job: &Job<'_>,
    p: &mut xir::pipeline::Pipeline,
    module: &'m mut xir::Module,
    input: &str,
    log: &mut dyn Write,
) -> Result<xir_spirv::handoff::Handoffs<'m>, i32> {
    let (cli, reporter) = (job.cli, job.reporter);
    let repro_dir = reproducer_dir(job, input);
    let opts = RunOptions {
        opt_level: cli.opt_level,
        fast_math: cli.fast_math,
        verify_each: cli.verify_each,
        print_before: cli.print_before.clone(),
        print_after: cli.print_after.clone(),
        print_after_all: cli.print_after_all,
        print_changed: cli.print_changed,
        time_passes: cli.time_passes,
        bisect_limit: cli.bisect_limit,
        reproducer_dir: Some(repro_dir),
    };
    match backend::run_pipeline(p, opts, module, log) {
        Ok((rep, handoffs)) => {
            if cli.time_passes {
                let _ = write!(log, "{}", rep.timing_table());
            }
            if let Some(b) = &rep.bisect {
                let _ = writeln!(log, "{b}");
            }
            Ok(handoffs)
        }
        Err(mut e) => {
            let _ = write!(log, "{}", reporter.run_error(&mut e, input));
            Err(1)
        }
    }
}

/// The kernel from the compile cache, or compiled and stored; what the
/// cache did is said on `log` (`-v`), a rejected or unstorable entry always.
fn cached_backend(
    job: &Job<'_>,
    cache: &CompileCache,
    pipeline: Option<&mut xir::pipeline::Pipeline>,
    module: &mut xir::Module,
    input: &str,
    log: &mut dyn Write,
) -> Result<Compiled, Option<String>> {
    let (cli, reporter) = (job.cli, job.reporter);
    let request = Request {
        module,
        kernel: cli.kernel.as_deref(),
        opt_level: cli.opt_level,
        fast_math: cli.fast_math,
        device_features: job.device,
        debug_info: cli.debug_info,
    };
    let key = cache.key(&request, pipeline.as_deref());
    let result = cache.get_or_compile(&key, || {
        let before = pipeline.is_some().then(|| module.clone());
        let handoffs = match pipeline {
            Some(p) => run_pipeline_logged(job, p, module, input, log).map_err(|_| None::<String>)?,
            None => xir_spirv::handoff::Handoffs::new(module),
        };
        let (k, out) =
            backend::compile_with(&handoffs, cli.kernel.as_deref(), &backend_options(job)).map_err(|e| match e {
                backend::BackendError::Compile(d) => {
                    let _ = write!(log, "{}", reporter.render_for(&d, input));
                    note_backend_failure(job, &d, before.as_ref(), input, log);
                    None
                }
                e => Some(e.to_string()),
            })?;
        let artifact = xir_spirv::artifact::ShaderArtifact::from_compiled(handoffs.module(), k, &out).encode();
        Ok::<_, Option<String>>(Compiled { words: out.words, artifact })
    });
    let (compiled, outcome) = result?;
    let path = outcome.path().display().to_string();
    let warn = |log: &mut dyn Write, message: String| {
        let d = xir::Diagnostic::warning(xir::diag::Rule::CompileCache, message).with_file(&path);
        let _ = write!(log, "{}", reporter.render(&[d]));
    };
    let (what, stored) = match &outcome {
        Outcome::Hit { .. } => ("hit", None),
        Outcome::Miss { stored, .. } => ("miss", Some(stored)),
        Outcome::Recompiled { stored, .. } => {
            warn(log, outcome.rejection().unwrap_or_default());
            ("recompiled", Some(stored))
        }
    };
    match stored {
        None if cli.verbose => {
            let _ = writeln!(log, "xir-opt: compile cache: {input}: hit {path}");
        }
        Some(Ok(())) if cli.verbose => {
            let _ = writeln!(log, "xir-opt: compile cache: {input}: {what}, stored {path}");
        }
        Some(Err(StoreError::Uncacheable(e))) if cli.verbose => {
            let _ = writeln!(
                log,
                "xir-opt: compile cache: {input}: {what}, not stored: the kernel has no shader artifact: {e}"
            );
        }
        Some(Err(StoreError::Io(e))) => warn(log, format!("cannot store the compiled kernel: {e}")),
        _ => {}
    }
    Ok(compiled)
}

/// `--emit ast` of a shader without a pipeline: the tree as the front end
/// built it (XIR, or a shader after a pipeline, goes through `xir2ast`).
fn shader_ast(input: &str, overrides: &xir_frontend::Overrides) -> Result<String, Vec<xir::Diagnostic>> {
    let display = io::display_name(input);
    let text = io::read_text(input, "input")?;
    let io::InputFormat::Shader(language) = io::detect(input, &text) else {
        unreachable!("the caller checked the extension");
    };
    let src = xir_frontend::Source { path: display, text: &text, language };
    let arenas = xir_ast::Arenas::default();
    let ast = xir_frontend::to_ast(&arenas, &src, overrides).map_err(|d| vec![*d])?;
    Ok(xir_ast::print_module(&ast))
}

fn fail(msg: &str) -> i32 {
    eprintln!("xir-opt: error: {msg}");
    1
}

/// Print diagnostics about the input; those without a file name get the
/// input's path.
fn report(reporter: &Reporter, diags: &[xir::Diagnostic], input: &str) -> i32 {
    eprint!("{}", reporter.render_for(diags, input));
    1
}

/// `--then`: one salsa session over INPUT and its edits (`then.rs`).
fn incremental(cli: &Cli, reporter: &Reporter, input: &str, pipeline: xir::pipeline::Pipeline) -> i32 {
    use xir_pipelines::then::Settings;
    if cli.device_features != "unknown" {
        eprintln!("xir-opt: error: --then plans for an unknown device; --device-features is not supported with it yet");
        return 2;
    }
    if cli.kernel.is_some() {
        eprintln!("xir-opt: error: --then emits a module's only kernel; --kernel is not supported with it yet");
        return 2;
    }
    let emit = cli.emit;
    let overrides: xir_frontend::Overrides = cli.overrides.iter().cloned().collect();
    let settings = Settings {
        pipeline_key: cli.pipeline_name().unwrap_or(""),
        options: xir_pipelines::workspace::Options {
            opt_level: cli.opt_level,
            fast_math: cli.fast_math,
            debug_info: cli.debug_info,
        },
        emit,
        overrides: &overrides,
    };
    let versions: Vec<&str> = std::iter::once(input).chain(cli.then.iter().map(String::as_str)).collect();
    let mut log = std::io::stderr().lock();
    match xir_pipelines::then::run(&versions, pipeline, &settings, reporter, &mut log) {
        Ok(bytes) => match io::write_output(cli.output.as_deref(), &bytes) {
            Ok(()) => 0,
            Err(e) => fail(&e.to_string()),
        },
        Err(f) => {
            let _ = write!(log, "{}", f.message);
            f.code
        }
    }
}
