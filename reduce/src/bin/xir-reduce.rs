//! The `xir-reduce` driver: read a module (or a reproducer directory),
//! check that it fails as asked, reduce it, write the result.
//! Exit 0: reduced and still failing; 1: bad input; 2: the input does not
//! fail as asked.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use xir::interp::{Inputs, Outputs};
use xir::pipeline::{PassManager, Pipeline, RunOptions};
use xir::Module;
use xir_reduce::{Device, Mismatch, Oracle, Signature, Stats};

#[derive(Parser)]
#[command(name = "xir-reduce", about = "Shrink a module to the smallest one that still fails the same way")]
struct Cli {
    /// The module (XIR text, JSON, WGSL/GLSL) or a reproducer directory
    /// (`input.xir`, and `repro.ron`, `inputs.json`, `failure.txt` where
    /// the failure needs them; docs/reduce.md).
    input: PathBuf,
    /// Pipeline to run each candidate through (name or file).
    #[arg(long)]
    pipeline: Option<String>,
    /// A pass panics with a message containing SUBSTRING.
    #[arg(long, value_name = "SUBSTRING")]
    panic: Option<String>,
    /// The pipeline fails with a message containing SUBSTRING or a diagnostic of rule RULE.
    #[arg(long, value_name = "RULE|SUBSTRING")]
    pass_error: Option<String>,
    /// The verifier reports RULE (after the pipeline when one is given).
    #[arg(long, value_name = "RULE")]
    verifier: Option<String>,
    /// The kernel's outputs on these inputs differ on the interpreter before
    /// and after the pipeline (with --vulkan: interpreter against Vulkan).
    #[arg(long, value_name = "INPUTS.json")]
    mismatch: Option<PathBuf>,
    /// With --mismatch: compare the interpreter against Vulkan (the
    /// pipeline, `spirv` by default, and the backend).
    #[arg(long, requires = "mismatch")]
    vulkan: bool,
    /// After the pipeline (`spirv` by default), the backend fails
    /// SPIRV-Tools validation with a message containing SUBSTRING.
    #[arg(long, value_name = "SUBSTRING")]
    spirv_val: Option<String>,
    /// A WGSL/GLSL shader whose outputs on these inputs differ between our
    /// front end's lowering on the interpreter and naga's own SPIR-V on
    /// Vulkan: its source is reduced, by lines (docs/reduce.md).
    #[arg(long, value_name = "INPUTS.json")]
    naga_mismatch: Option<PathBuf>,
    /// Optimization level of the pipeline and the backend (0..=3).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// The kernel to run (--mismatch) when the module has several.
    #[arg(long)]
    kernel: Option<String>,
    /// --mismatch: interpreter steps one run may take (a candidate that no
    /// longer terminates is given up after them); default: four times the
    /// smallest power of two the input needs.
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
    /// Where to write the reduced module (default: standard output).
    #[arg(short, long)]
    output: Option<String>,
    /// Stop after this many interestingness tests (0 = no limit).
    #[arg(long, default_value_t = 0)]
    max_tests: usize,
    /// Stop after this many seconds (0 = no limit); the smallest module
    /// found so far is written.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = parse_seconds)]
    max_time: f64,
    /// No progress on standard error.
    #[arg(long, short)]
    quiet: bool,
}

fn main() {
    std::process::exit(run());
}

/// `--max-time`: a finite number of seconds, not negative.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a finite, non-negative number of seconds")),
    }
}

/// When a `--max-time` budget runs out: `None` for no budget (0), and for
/// one past any instant the clock can name, which no run reaches.
fn deadline(max_time: f64) -> Option<Instant> {
    let budget = Duration::try_from_secs_f64(max_time).ok().filter(|d| !d.is_zero())?;
    Instant::now().checked_add(budget)
}

fn fail(code: i32, msg: &str) -> i32 {
    eprintln!("error: {msg}");
    code
}

/// What a reproducer directory's `failure.txt` says (docs/reduce.md):
/// `signature: KIND`, and `text`, `kernel`, `pipeline`, `opt-level` where
/// the kind needs them.
#[derive(Default)]
struct FailureFile {
    signature: String,
    text: String,
    kernel: Option<String>,
    pipeline: Option<String>,
    opt_level: Option<u8>,
}

fn read_failure_file(p: &Path) -> Result<Option<FailureFile>, String> {
    let Ok(body) = std::fs::read_to_string(p) else { return Ok(None) };
    let mut f = FailureFile::default();
    for (n, line) in body.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with("//") {
            continue;
        }
        let Some((key, value)) = line.split_once(": ") else {
            return Err(format!("{}:{}: expected `key: value`", p.display(), n + 1));
        };
        match key {
            "signature" => f.signature = value.to_string(),
            "text" => f.text = value.to_string(),
            "kernel" => f.kernel = Some(value.to_string()),
            "pipeline" => f.pipeline = Some(value.to_string()),
            "opt-level" => match value.parse::<u8>() {
                Ok(l) if l <= 3 => f.opt_level = Some(l),
                _ => return Err(format!("{}:{}: `opt-level` is one of 0..=3", p.display(), n + 1)),
            },
            _ => {
                let keys = "signature, text, kernel, pipeline, opt-level";
                return Err(format!("{}:{}: unknown key `{key}` ({keys})", p.display(), n + 1));
            }
        }
    }
    Ok(Some(f))
}

fn run() -> i32 {
    let mut cli = Cli::parse();
    // A reproducer directory may bring the --mismatch these belong to.
    let mismatch_only = [(cli.kernel.is_some(), "--kernel"), (cli.max_steps.is_some(), "--max-steps")];
    if let Some((_, flag)) = mismatch_only.iter().find(|(on, _)| *on && cli.mismatch.is_none() && !cli.input.is_dir()) {
        return fail(1, &format!("{flag} applies to --mismatch, and there is none"));
    }
    // The reducer has no --pipeline-dir; `$XIR_PIPELINE_DIR` is checked as the drivers check it.
    if let Err(e) = xir_pipelines::check_pipeline_dir(None) {
        return fail(1, &e.to_string());
    }
    // A reduction can take minutes: an output it could not write is refused before it starts.
    if let Err(e) = xir_pipelines::io::check_output(cli.output.as_deref()) {
        return fail(1, &e.to_string());
    }
    if let Some(inputs) = cli.naga_mismatch.clone() {
        return naga_mismatch(&cli, &inputs);
    }
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let is_dir = cli.input.is_dir();
    let module_path = if is_dir { cli.input.join("input.xir") } else { cli.input.clone() };
    let mut failure_file = None;
    if is_dir {
        let ron = cli.input.join("repro.ron");
        if cli.pipeline.is_none() && ron.exists() {
            cli.pipeline = Some(ron.to_string_lossy().into_owned());
        }
        match read_failure_file(&cli.input.join("failure.txt")) {
            Ok(f) => failure_file = f,
            Err(e) => return fail(1, &e),
        }
        let inputs = cli.input.join("inputs.json");
        if cli.mismatch.is_none() && inputs.exists() {
            cli.mismatch = failure_file.as_ref().filter(|f| f.signature.starts_with("mismatch")).map(|_| inputs);
        }
    }
    let module = match xir_pipelines::io::read_module(&module_path.to_string_lossy()) {
        Ok(m) => m,
        Err(diags) => {
            for d in diags {
                eprintln!("{d}");
            }
            return 1;
        }
    };
    let given = [cli.panic.is_some(), cli.pass_error.is_some(), cli.verifier.is_some(), cli.spirv_val.is_some()]
        .iter()
        .filter(|&&g| g)
        .count()
        + usize::from(
            cli.mismatch.is_some() && failure_file.as_ref().is_none_or(|f| !f.signature.starts_with("mismatch")),
        );
    if given > 1 {
        return fail(1, "give only one failure signature");
    }
    if given == 0 {
        if let Some(f) = &failure_file {
            match f.signature.as_str() {
                "panic" => cli.panic = Some(f.text.clone()),
                "pass-error" => cli.pass_error = Some(f.text.clone()),
                "verifier" => cli.verifier = Some(f.text.clone()),
                "spirv-val" => cli.spirv_val = Some(f.text.clone()),
                "mismatch" => {}
                "mismatch-vulkan" => cli.vulkan = true,
                s => return fail(1, &format!("{}: unknown signature `{s}`", cli.input.join("failure.txt").display())),
            }
            if cli.kernel.is_none() {
                cli.kernel = f.kernel.clone();
            }
            if cli.pipeline.is_none() {
                cli.pipeline = f.pipeline.clone();
            }
            cli.opt_level = f.opt_level.unwrap_or(cli.opt_level);
        }
    }
    let needs_default_spirv = cli.spirv_val.is_some() || cli.vulkan;
    if cli.pipeline.is_none() && needs_default_spirv {
        cli.pipeline = Some("spirv".into());
    }
    let pipeline = match &cli.pipeline {
        Some(spec) => match loader.load(spec) {
            Ok(p) => Some(p),
            Err(e) => return fail(1, e.to_string().trim_end()),
        },
        None => None,
    };
    let signature = if let Some(s) = &cli.panic {
        Signature::Panic(s.clone())
    } else if let Some(s) = &cli.pass_error {
        Signature::PassError(s.clone())
    } else if let Some(s) = &cli.verifier {
        // Matched by exact name: an unknown one could never match, and would
        // read as "does not fail as asked".
        if xir::diag::Rule::from_name(s).is_none() {
            let names = xir::diag::Rule::ALL.iter().map(|r| r.name());
            let hint = xir::pipeline::suggest(s, names).map(|r| format!("; did you mean `{r}`?")).unwrap_or_default();
            return fail(1, &format!("--verifier `{s}` is no rule{hint} (docs/diagnostics.md, \"Rules\")"));
        }
        Signature::Verifier(s.clone())
    } else if let Some(s) = &cli.spirv_val {
        Signature::SpirvVal(s.clone())
    } else if let Some(path) = &cli.mismatch {
        let inputs = match read_inputs(path) {
            Ok(i) => i,
            Err(e) => return fail(1, &e),
        };
        let kernel = match xir_pipelines::backend::select_kernel(&module, cli.kernel.as_deref()) {
            Ok(k) => module.func(k).name.clone(),
            Err(e) => return fail(1, &e.to_string()),
        };
        Signature::Mismatch(Mismatch { inputs, kernel, max_steps: cli.max_steps.unwrap_or(MAX_STEPS) })
    } else if is_dir {
        // A pass manager reproducer fails somehow: keep any failure of its
        // pipeline (the empty substring matches every message).
        Signature::PassError(String::new())
    } else {
        return fail(1, "no failure signature: give one of --panic, --pass-error, --verifier, --mismatch, --spirv-val");
    };
    let vulkan_needed = cli.vulkan;
    let interp_only = matches!(signature, Signature::Verifier(_) | Signature::SpirvVal(_)) || vulkan_needed;
    if pipeline.is_none() && !interp_only {
        return fail(1, "this failure signature needs --pipeline");
    }
    let mut oracle = Oracle::new(pipeline, signature);
    oracle.opt_level = cli.opt_level;
    if vulkan_needed {
        let Signature::Mismatch(mm) = &oracle.signature else { unreachable!("--vulkan requires --mismatch") };
        let Some(p) = oracle.pipeline.take() else { unreachable!("`spirv` by default") };
        match vulkan_device(p, mm, cli.opt_level) {
            Ok(d) => oracle.device = Some(d),
            Err(e) => return fail(1, &format!("--vulkan: {e}")),
        }
    }
    // The budget counts from here: the first check is part of the run.
    let deadline = deadline(cli.max_time);
    let silenced = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let fails = match cli.max_steps {
        None if matches!(oracle.signature, Signature::Mismatch(_)) => calibrate(&mut oracle, &module),
        _ => oracle.fails(&module),
    };
    std::panic::set_hook(silenced);
    if !fails {
        return fail(2, &format!("{} does not fail as asked ({})", module_path.display(), describe(&oracle.signature)));
    }
    let mut stats = Stats { max_tests: cli.max_tests, deadline, progress: !cli.quiet, ..Stats::default() };
    let before = module.inst_count();
    let reduced = xir_reduce::reduce(module, &oracle, &mut stats);
    let text = xir::text::print_module(&reduced);
    if !cli.quiet {
        let why = if stats.spent() { " (budget spent)" } else { "" };
        eprintln!("xir-reduce: {before} -> {} instructions after {} tests{why}", reduced.inst_count(), stats.tests);
    }
    write(cli.output.as_deref(), &text)
}

/// The largest default interpreter budget of one `--mismatch` run.
const MAX_STEPS: u64 = 1 << 26;

/// Set the reduction's step budget to four times the smallest power of two
/// (from 2^14) within which the input runs on the interpreter, so
/// candidates that spin are given up soon; then whether the input fails.
fn calibrate(oracle: &mut Oracle, module: &Module) -> bool {
    let mut budget = 1 << 14;
    while budget < MAX_STEPS && !oracle.runs_within(module, budget) {
        budget *= 2;
    }
    if let Signature::Mismatch(mm) = &mut oracle.signature {
        mm.max_steps = (budget * 4).min(MAX_STEPS);
    }
    oracle.fails(module)
}

/// The signature as the error message names it.
fn describe(s: &Signature) -> String {
    match s {
        Signature::Panic(t) => format!("--panic {t:?}"),
        Signature::PassError(t) => format!("--pass-error {t:?}"),
        Signature::Verifier(t) => format!("--verifier {t:?}"),
        Signature::SpirvVal(t) => format!("--spirv-val {t:?}"),
        Signature::Mismatch(m) => format!("--mismatch on @{}", m.kernel),
    }
}

/// The Vulkan side of `--mismatch --vulkan`: the pipeline, the backend for
/// the device's features, a run on the device.
fn vulkan_device(pipeline: Pipeline, mm: &Mismatch, opt_level: u8) -> Result<Device, String> {
    let device = open_device()?;
    let kernel = mm.kernel.clone();
    let inputs = mm.inputs.clone();
    Ok(Box::new(move |m: &Module| -> Result<Outputs, String> {
        let mut legal = m.clone();
        PassManager::new(&pipeline, RunOptions { opt_level, ..RunOptions::default() })
            .run(&mut legal, &mut std::io::sink())
            .map_err(|e| e.to_string())?;
        let (k, out) = xir_pipelines::backend::compile(&legal, Some(&kernel), opt_level, false, Some(device.enabled))
            .map_err(|e| e.to_string())?;
        let block = match legal.func(k).kind {
            xir::FunctionKind::Kernel { block_size, .. } => block_size,
            _ => [1, 1, 1],
        };
        let dispatch = inputs.dispatch.unwrap_or(block);
        xir_vulkan::run_compiled(&device, &legal, k, (&out).into(), &inputs, dispatch)
            .map(|(o, _)| o)
            .map_err(|e| e.to_string())
    }))
}

/// Write the result to `out` (`None`: standard output) as `xir-opt`
/// writes its output: atomically, symlinks written through, a failed write
/// to standard output an error rather than a panic
/// (`xir_pipelines::io::write_output`).
fn write(out: Option<&str>, text: &str) -> i32 {
    match xir_pipelines::io::write_output(out, text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => fail(1, &e.to_string()),
    }
}

/// `--naga-mismatch`: the shader's source reduced by lines while our
/// lowering (interpreter) and naga's module (Vulkan) still disagree.
fn naga_mismatch(cli: &Cli, inputs_path: &Path) -> i32 {
    let others = [cli.panic.is_some(), cli.pass_error.is_some(), cli.verifier.is_some(), cli.spirv_val.is_some()];
    if others.contains(&true) || cli.mismatch.is_some() || cli.pipeline.is_some() {
        return fail(1, "--naga-mismatch is its own failure signature: give no other, and no --pipeline");
    }
    let path = cli.input.to_string_lossy().into_owned();
    let Some(language) = xir_frontend::Language::from_path(&path) else {
        return fail(1, &format!("--naga-mismatch needs a .wgsl or .comp shader; {path} is not one"));
    };
    let text = match xir_pipelines::io::read_text(&path, "input") {
        Ok(t) => t,
        Err(diags) => return fail(1, xir::diag::render(&diags).trim_end()),
    };
    let inputs = match read_inputs(inputs_path) {
        Ok(i) => i,
        Err(e) => return fail(1, &e),
    };
    let device = match open_device() {
        Ok(d) => d,
        Err(e) => return fail(1, &format!("--naga-mismatch: {e}")),
    };
    let test = xir_reduce::shader::NagaMismatch {
        path: path.clone(),
        language,
        inputs,
        device,
        max_steps: cli.max_steps.unwrap_or(MAX_STEPS),
    };
    let deadline = deadline(cli.max_time);
    let silenced = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    if !test.fails(&text) {
        std::panic::set_hook(silenced);
        return fail(2, &format!("{path} does not fail as asked (--naga-mismatch: ours and naga's agree, or one does not compile or run)"));
    }
    let mut stats = Stats { max_tests: cli.max_tests, deadline, progress: !cli.quiet, ..Stats::default() };
    let reduced = xir_reduce::shader::reduce_lines(&text, |t| test.fails(t), &mut stats);
    std::panic::set_hook(silenced);
    if !cli.quiet {
        let why = if stats.spent() { " (budget spent)" } else { "" };
        eprintln!(
            "xir-reduce: {} -> {} lines after {} tests{why}",
            text.lines().count(),
            reduced.lines().count(),
            stats.tests
        );
    }
    write(cli.output.as_deref(), &reduced)
}

/// An interpreter inputs file, or its located error.
fn read_inputs(path: &Path) -> Result<Inputs, String> {
    let text = xir_pipelines::io::read_text(&path.to_string_lossy(), "inputs")
        .map_err(|diags| xir::diag::render(&diags).trim_end().to_string())?;
    Inputs::from_json(&text).map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))
}

/// The Vulkan device the comparisons run on, or why there is none.
fn open_device() -> Result<xir_vulkan::Device, String> {
    xir_vulkan::Device::new().map_err(|e| match e {
        xir_vulkan::RunError::NoVulkan(why) => format!("no Vulkan device ({why}); reduce on a machine that has one"),
        e => format!("cannot open the Vulkan device: {e}"),
    })
}
