//! The `xir-reduce` driver: read a module (or a pass manager reproducer
//! directory), check that it fails as asked, reduce it, write the result.
//! Exit 0: reduced and still failing; 1: bad input; 2: the input does not
//! fail as asked.

use std::path::{Path, PathBuf};

use clap::Parser;
use xir_reduce::{Oracle, Signature, Stats};

#[derive(Parser)]
#[command(name = "xir-reduce", about = "Shrink a module to the smallest one that still fails the same way")]
struct Cli {
    /// The module (XIR text, JSON, WGSL/GLSL) or a reproducer directory
    /// (`input.xir` + `repro.ron`) as the pass manager writes it.
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
    /// Where to write the reduced module (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Stop after this many interestingness tests (0 = no limit).
    #[arg(long, default_value_t = 0)]
    max_tests: usize,
    /// No progress on standard error.
    #[arg(long, short)]
    quiet: bool,
}

fn main() {
    std::process::exit(run());
}

fn fail(code: i32, msg: &str) -> i32 {
    eprintln!("error: {msg}");
    code
}

fn run() -> i32 {
    let cli = Cli::parse();
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let is_dir = cli.input.is_dir();
    let (module_path, pipeline) = if is_dir {
        let p = cli.input.join("repro.ron");
        match loader.load_path(&p) {
            Ok(p) => (cli.input.join("input.xir"), Some(p)),
            Err(e) => return fail(1, e.to_string().trim_end()),
        }
    } else {
        let p = match &cli.pipeline {
            Some(spec) => match loader.load(spec) {
                Ok(p) => Some(p),
                Err(e) => return fail(1, e.to_string().trim_end()),
            },
            None => None,
        };
        (cli.input.clone(), p)
    };
    let module = match xir_pipelines::io::read_module(&module_path.to_string_lossy()) {
        Ok(m) => m,
        Err(diags) => {
            for d in diags {
                eprintln!("{d}");
            }
            return 1;
        }
    };
    let signature = match (&cli.panic, &cli.pass_error, &cli.verifier) {
        (Some(s), None, None) => Signature::Panic(s.clone()),
        (None, Some(s), None) => Signature::PassError(s.clone()),
        (None, None, Some(s)) => Signature::Verifier(s.clone()),
        // A reproducer fails somehow: keep any failure of its pipeline
        // (the empty substring matches every message).
        (None, None, None) if is_dir => Signature::PassError(String::new()),
        (None, None, None) => return fail(1, "no failure signature: give one of --panic, --pass-error, --verifier"),
        _ => return fail(1, "give only one failure signature"),
    };
    if pipeline.is_none() && !matches!(signature, Signature::Verifier(_)) {
        return fail(1, "this failure signature needs --pipeline");
    }
    let oracle = Oracle::new(pipeline, signature);
    let silenced = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let fails = oracle.fails(&module);
    std::panic::set_hook(silenced);
    if !fails {
        return fail(2, &format!("{} does not fail as asked ({:?})", module_path.display(), oracle.signature));
    }
    let mut stats = Stats { max_tests: cli.max_tests, progress: !cli.quiet, ..Stats::default() };
    let reduced = xir_reduce::reduce(module, &oracle, &mut stats);
    let text = xir::text::print_module(&reduced);
    if !cli.quiet {
        eprintln!("xir-reduce: done after {} tests", stats.tests);
    }
    match &cli.output {
        Some(p) => write(p, &text),
        None => {
            print!("{text}");
            0
        }
    }
}

fn write(p: &Path, text: &str) -> i32 {
    match std::fs::write(p, text) {
        Ok(()) => 0,
        Err(e) => fail(1, &format!("cannot write {}: {e}", p.display())),
    }
}
