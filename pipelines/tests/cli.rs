//! `xir-opt` as a process: exit codes, diagnostics on stderr, no output file
//! left behind on failure, and the instrumentation flags (`--time-passes`,
//! `--print-changed`, `--bisect-limit`, reproducers that replay).

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{json_at, scratch, xir_opt};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn corpus(name: &str) -> String {
    format!("{}/../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn without_a_pipeline_it_parses_verifies_and_reemits() {
    let src = std::fs::read_to_string(corpus("saxpy.xir")).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = xir::text::parse_module(&src, "saxpy.xir").unwrap();
    assert_eq!(stdout(&o), xir::text::print_module(&m));
    // JSON out, then JSON back in through stdin.
    let dir = scratch("json");
    let json = dir.join("saxpy.json");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--emit", "json", "-o", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .arg("-")
        .stdin(std::fs::File::open(&json).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), xir::text::print_module(&m));
}

#[test]
fn usage_errors_exit_2_and_input_errors_exit_1() {
    assert_eq!(xir_opt(&[]).status.code(), Some(2));
    assert_eq!(xir_opt(&["--no-such-flag"]).status.code(), Some(2));
    assert_eq!(xir_opt(&[&corpus("saxpy.xir"), "--opt-level", "9"]).status.code(), Some(2));
    assert_eq!(xir_opt(&[&corpus("saxpy.xir"), "--emit", "pdf"]).status.code(), Some(2));
    let o = xir_opt(&["/no/such/input.xir"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("/no/such/input.xir: error: [io] cannot read input"), "{}", stderr(&o));
    let o = xir_opt(&["/no/such/input.xir", "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_at(&o), vec![("io".to_string(), "/no/such/input.xir".to_string(), 0, 0)]);
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "no-such-pipeline"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no shipped pipeline named `no-such-pipeline`"), "{}", stderr(&o));
}

#[test]
fn malformed_input_is_located_and_leaves_no_output_file() {
    let dir = scratch("malformed");
    let input =
        write(&dir, "bad.xir", "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add %y, u32 1 : u32\n  return\n}\n");
    let out = dir.join("out.xir");
    let o = xir_opt(&[&input, "-o", out.to_str().unwrap(), "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_at(&o), vec![("parse".to_string(), input.clone(), 3, 12)]);
    assert!(!out.exists());
    // Invalid but parseable IR: the verifier's diagnostics, also located.
    let input = write(
        &dir,
        "unterminated.xir",
        "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add u32 1, u32 1 : u32\n}\n",
    );
    let o = xir_opt(&[&input, "-o", out.to_str().unwrap(), "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(json_at(&o), vec![("terminator".to_string(), input.clone(), 3, 3)]);
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "no temporary file left behind");
}

#[test]
fn time_passes_prints_a_table() {
    let o = xir_opt(&[&corpus("mandelbrot.xir"), "--pipeline", "to-raw", "--opt-level", "1", "--time-passes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("===== pass execution timing report ====="), "{err}");
    assert!(err.contains("wall (ms)       %  runs   insts in  insts out  pass (step) and statistics"), "{err}");
    for pass in ["destructure_cfg", "simplify_cfg", "phi_cleanup", "dce", "reg2mem"] {
        assert!(err.lines().any(|l| l.contains(&format!("  {pass} ("))), "{pass} missing:\n{err}");
    }
    let total = err.lines().find(|l| l.ends_with("total")).expect(&err);
    assert!(total.contains("100.0%"), "{total}");
}

#[test]
fn print_changed_prints_a_diff_of_the_passes_that_changed_the_ir() {
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "to-raw", "--print-changed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--- before destructure_cfg\n+++ after destructure_cfg\n"), "{err}");
    assert!(err.contains("\n-  if "), "the structured if is removed:\n{err}");
    assert!(err.contains("\n+  cond_br "), "a raw branch replaces it:\n{err}");
}

#[test]
fn bisect_limit_stops_after_n_executions_and_names_the_last() {
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "to-raw", "--bisect-limit", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    // A shipped pipeline is built in and named after its source file.
    assert!(
        err.contains("bisect-limit 1: stopped after execution #1, `destructure_cfg` at pipelines/to-raw.ron:10:9"),
        "{err}"
    );
    let out = stdout(&o);
    assert!(out.contains("cond_br ") && !out.contains("\n  if "), "{out}");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "to-raw", "--bisect-limit", "100"]);
    assert!(
        stderr(&o).contains("bisect-limit 100 not reached: the pipeline ran all 2 pass executions"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_verifier_failure_writes_a_reproducer_that_replays() {
    let dir = scratch("repro");
    let pipeline = write(
        &dir,
        "breaks.ron",
        "Pipeline(name: \"breaks\", input: \"xir\", output: \"xir\", steps: [\n    Pass(\"dce\"),\n    Pass(\"debug.break_ir\"),\n    Pass(\"dce\"),\n])\n",
    );
    let repro = dir.join("repro");
    let out = dir.join("out.xir");
    let o = xir_opt(&[
        &corpus("saxpy.xir"),
        "--pipeline",
        &pipeline,
        "--verify-each",
        "--reproducer-dir",
        repro.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("{pipeline}:3:5: error: pass `debug.break_ir` left IR that is not valid `xir`")),
        "{err}"
    );
    let command = format!("xir-opt {0}/input.xir --pipeline {0}/repro.ron --verify-each", repro.display());
    assert!(err.contains(&format!("replay with: {command}")), "{err}");
    assert!(err.contains(&format!("reduce with: xir-reduce {} -o reduced.xir", repro.display())), "{err}");
    assert!(!out.exists());
    let ron = std::fs::read_to_string(repro.join("repro.ron")).unwrap();
    assert!(ron.contains("        Pass(\"debug.break_ir\"),\n        Pass(\"dce\"),\n    ],"), "{ron}");
    assert!(ron.contains(&format!("// Reduce: xir-reduce {} -o reduced.xir\n", repro.display())), "{ron}");
    // Replay exactly the printed command. It fails again and writes its own
    // reproducer to the default place, the temporary directory: here the
    // scratch directory, so the test leaves nothing behind.
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    let replay_tmp = dir.join("tmp");
    std::fs::create_dir_all(&replay_tmp).unwrap();
    let o2 = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args(&args)
        .arg("--diagnostics=short")
        .env("TMPDIR", &replay_tmp)
        .output()
        .unwrap();
    assert_eq!(o2.status.code(), Some(1));
    let err2 = stderr(&o2);
    assert!(err2.contains("error: pass `debug.break_ir` left IR that is not valid `xir`"), "{err2}");
    let written: Vec<_> = std::fs::read_dir(&replay_tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(
        written.len() == 1
            && written[0].file_name().unwrap().to_string_lossy().starts_with("xir-opt-repro-")
            && written[0].join("repro.ron").exists(),
        "{written:?}\n{err2}"
    );
    let diags = |e: &str| {
        e.lines()
            .filter(|l| l.contains("["))
            .map(|l| l.split_once(": error: ").map(|x| x.1.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(diags(&err), diags(&err2), "the replay fails the same way");
}

#[test]
fn a_panicking_pass_exits_1_with_a_message_and_no_raw_panic() {
    let dir = scratch("panic");
    let pipeline = write(
        &dir,
        "panics.ron",
        "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.panic\")])",
    );
    let repro = dir.join("r");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", &pipeline, "--reproducer-dir", repro.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("error: pass `debug.panic` panicked: debug.panic: deliberate panic (test aid)"), "{err}");
    assert!(!err.contains("panicked at"), "no raw panic output: {err}");
    assert!(repro.join("input.xir").exists() && repro.join("repro.ron").exists());
}

#[test]
fn check_pipeline_reports_located_errors_and_accepts_shipped_ones() {
    let bad = format!("{}/bad/unknown_pass.ron", env!("CARGO_MANIFEST_DIR"));
    let o = xir_opt(&["--check-pipeline", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("{bad}:7:14: error: unknown pass `mem2rag`; did you mean `mem2reg`?\n"));
    let o = xir_opt(&["--check-pipeline", &bad, "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_at(&o), vec![("pipeline".to_string(), bad.clone(), 7, 14)]);
    let good = format!("{}/to-raw.ron", env!("CARGO_MANIFEST_DIR"));
    let o = xir_opt(&["--check-pipeline", &good]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pipeline `to-raw` is well-formed: xir.structured -> xir.raw.phi_free"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn listings_come_from_the_registry_and_the_spec() {
    let o = xir_opt(&["--list-passes"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("destructure_cfg\n"), "{out}");
    assert!(out.contains("    consumes: xir.structured | xir.structured.lowered\n    produces: xir.raw\n"), "{out}");
    assert!(out.contains("      fold_structured: bool = true  -- "), "{out}");
    assert!(out.contains("callable_specialization (bound to `callable_specialization`)"), "{out}");
    let o = xir_opt(&["--list-dialects"]);
    let out = stdout(&o);
    assert!(out.contains("xir.raw.phi_free (extends xir.raw)\n"), "{out}");
    assert!(out.contains("invariants: spill_slots_tagged, verified"), "{out}");
}

#[test]
fn emit_dot_styles_structured_role_edges_apart_from_executed_edges() {
    let o = xir_opt(&[&corpus("saxpy.xir"), "--emit", "dot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dot = stdout(&o);
    assert!(dot.starts_with("digraph \"saxpy\" {"), "{dot}");
    assert!(dot.contains("[label=\"true\", style=solid]"), "{dot}");
    assert!(dot.contains("[label=\"merge\", style=dashed"), "{dot}");
}

#[test]
fn backend_outputs_go_through_the_backend() {
    let dir = scratch("spirv");
    let spv = dir.join("k.spv");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", "spirv", "-o", spv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(bytes[..4], 0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
    let out = dir.join("k.artifact");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", "artifact", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap()[..8], *b"XIRSHADR", "artifact magic (docs/artifact.md)");
}

#[test]
fn xir_log_traces_one_span_per_pass_execution() {
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("saxpy.xir"), "--pipeline", "to-raw"])
        .env("XIR_LOG", "info")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("pipeline{name=to-raw}:pass{name=destructure_cfg execution=1 at="), "{err}");
    assert!(err.contains("pass{name=reg2mem execution=2 at="), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains(":pass{") && l.contains("close time.busy=")).count(), 2, "{err}");
}

#[test]
fn check_pipeline_warns_about_a_step_that_can_never_fire() {
    let dir = scratch("lint");
    let p = write(
        &dir,
        "lint.ron",
        "Pipeline(name: \"lint\", input: \"xir.structured\", output: \"xir.raw.phi_free\", steps: [\n    Pass(\"destructure_cfg\"),\n    Pass(\"reg2mem\"),\n    Pass(\"phi_cleanup\"),\n])\n",
    );
    let o = xir_opt(&["--check-pipeline", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!(
            "{p}:4:5: warning: `phi_cleanup` can never change anything here: after `reg2mem` the IR is \
             `xir.raw.phi_free`, which allows none of phi\n"
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn print_before_and_after_name_the_pass() {
    let o = xir_opt(&[
        &corpus("saxpy.xir"),
        "--pipeline",
        "to-raw",
        "--print-before",
        "reg2mem",
        "--print-after",
        "destructure_cfg",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let after = err.find("// ----- IR after `destructure_cfg` (#1, ").expect(&err);
    let before = err.find("// ----- IR before `reg2mem` (#2, ").expect(&err);
    assert!(after < before, "{err}");
    assert_eq!(err.matches("// ----- IR ").count(), 2, "{err}");
}

#[test]
fn a_false_preserves_claim_is_an_error_in_debug_builds() {
    let dir = scratch("preserves");
    let p = write(
        &dir,
        "liar.ron",
        "Pipeline(name: \"liar\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.false_preserves\")])",
    );
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", &p, "--reproducer-dir", dir.join("r").to_str().unwrap()]);
    if cfg!(debug_assertions) {
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains(
                "error: pass `debug.false_preserves` claims to preserve the CFG, but it changed the CFG of @saxpy"
            ),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn then_recompiles_only_the_edited_function_and_reports_reuse() {
    let dir = scratch("then");
    let original = std::fs::read_to_string(corpus("callables.xir")).unwrap();
    let edited =
        original.replacen("  %r = mul %x, %x : f32", "  %dead = add %x, f32 1.0 : f32\n  %r = mul %x, %x : f32", 1);
    assert_ne!(original, edited, "the fixture edit applies");
    let a = write(&dir, "a.xir", &original);
    let b = write(&dir, "b.xir", &edited);
    let out = dir.join("out.xir");
    let o = xir_opt(&[&a, "--pipeline", "cleanup", "--then", &b, "--then", &b, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("a.xir: recompiled 4 of 4 functions, reused 0"), "{err}");
    // @square's callers compile with its body: they recompile too.
    assert!(
        err.contains("b.xir: recompiled 3 of 4 functions, reused 1 (square, accumulate_square, callables) in "),
        "{err}"
    );
    assert!(err.contains("b.xir: recompiled 0 of 4 functions, reused 4"), "{err}");
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text.contains("callable @square") && !text.contains("%dead"), "cleanup ran on the edit: {text}");
    // Without a pipeline it is a usage error.
    assert_eq!(xir_opt(&[&a, "--then", &b]).status.code(), Some(2));
}

#[test]
fn fast_math_enables_the_value_changing_rules_the_pass_listing_advertises() {
    let dir = scratch("fast-math");
    let input = write(
        &dir,
        "k.xir",
        "kernel @k(%y: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n  %v = buffer.read %y, u32 0 : f32\n  \
         %d = sub %v, %v : f32\n  buffer.write %y, u32 0, %d\n  return\n}\n",
    );
    let pipeline = write(
        &dir,
        "simplify.ron",
        "Pipeline(name: \"s\", input: \"xir\", output: \"xir\", steps: [Pass(\"algebraic_simplify\"), Pass(\"dce\")])",
    );
    assert!(xir_opt(&["--list-passes"]).stdout.windows(11).any(|w| w == b"--fast-math"));
    // x - x is NaN for NaN and infinities: folded to 0.0 only under fast math.
    let exact = xir_opt(&[&input, "--pipeline", &pipeline]);
    assert!(exact.status.success(), "{}", stderr(&exact));
    assert!(stdout(&exact).contains("sub %v, %v"), "{}", stdout(&exact));
    let fast = xir_opt(&[&input, "--pipeline", &pipeline, "--fast-math"]);
    assert!(fast.status.success(), "{}", stderr(&fast));
    assert!(!stdout(&fast).contains("sub "), "{}", stdout(&fast));
}

#[test]
fn then_reads_its_edits_with_the_same_care_as_the_input() {
    let dir = scratch("then-utf8");
    let bad = dir.join("edit.xir");
    std::fs::write(&bad, b"// an edit\ncallable @f() -> void {\n  \xff\n}\n").unwrap();
    let o = xir_opt(&[&corpus("callables.xir"), "--pipeline", "cleanup", "--then", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains(&format!("\n{}:3:3: error: [io] cannot read input: not UTF-8", bad.display())), "{err}");
}

#[test]
fn a_pipeline_dir_that_is_not_a_directory_is_a_usage_error() {
    let dir = scratch("pipeline-dir");
    let file = write(&dir, "file.ron", "");
    let missing = dir.join("missing").display().to_string();
    let saxpy = corpus("saxpy.xir");
    let inputs = corpus("saxpy.inputs.json");
    for (bad, why) in [(&missing, "No such file or directory (os error 2)"), (&file, "not a directory")] {
        let o = xir_opt(&[&saxpy, "--pipeline", "cleanup", "--pipeline-dir", bad]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(stderr(&o), format!("xir-opt: error: --pipeline-dir {bad}: {why}\n"));
        let o = common::xir_run(&[&saxpy, "--inputs", &inputs, "--pipeline-dir", bad]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(stderr(&o), format!("xir-run: error: --pipeline-dir {bad}: {why}\n"));
    }
    // The environment variable is held to the same rule, naming itself.
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&saxpy, "--pipeline", "cleanup"])
        .env("XIR_PIPELINE_DIR", &missing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!("xir-opt: error: XIR_PIPELINE_DIR={missing}: No such file or directory (os error 2)\n")
    );
}

#[test]
fn a_pipeline_that_is_a_directory_is_named_as_one() {
    let dir = scratch("pipeline-is-dir");
    let as_path = dir.join("p.ron");
    std::fs::create_dir(&as_path).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", as_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!("{}:1:1: error: cannot read pipeline: Is a directory (os error 21)\n", as_path.display());
    assert_eq!(stderr(&o), want);
    // In a pipeline directory it is not skipped for the shipped pipeline of that name.
    std::fs::create_dir(dir.join("cleanup.ron")).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "cleanup", "--pipeline-dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "{}:1:1: error: cannot read pipeline: Is a directory (os error 21)\n",
        dir.join("cleanup.ron").display()
    );
    assert_eq!(stderr(&o), want);
}

#[test]
fn a_print_flag_naming_no_pass_is_a_usage_error() {
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "cleanup", "--print-after", "dcee"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "xir-opt: error: --print-after dcee: no pass is registered under that name; did you mean `dce`?\n"
    );
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "cleanup", "--print-before", "zzzzzzzzzz"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "xir-opt: error: --print-before zzzzzzzzzz: no pass is registered under that name; `xir-opt --list-passes` lists them\n"
    );
}

#[test]
fn a_module_without_a_kernel_is_named_in_a_batch() {
    let dir = scratch("batch-no-kernel");
    let empty = write(&dir, "empty.xir", "");
    let out = dir.join("out");
    let o = xir_opt(&[&empty, &corpus("saxpy.xir"), "--emit", "spirv", "--no-cache", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("xir-opt: error: {empty}: the module has no kernel\nxir-opt: error: 1 of 2 inputs failed: {empty}\n")
    );
}

#[test]
fn a_binary_the_tools_write_is_named_when_given_as_input() {
    // A SPIR-V module is an input of its own (the SPIR-V front end).
    let spv = format!("{}/tests/fixtures/foreign_saxpy.spv", env!("CARGO_MANIFEST_DIR"));
    let o = xir_opt(&[&spv]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("kernel @main("), "{}", stdout(&o));
    let dir = scratch("artifact-input");
    let xsa = dir.join("saxpy.xsa");
    let o = xir_opt(&[&corpus("saxpy.xir"), "--emit", "artifact", "--no-cache", "-o", xsa.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = xir_opt(&[xsa.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let note =
        "  = note: the file is a shader artifact (`--emit artifact`): `xir-run --artifact FILE --inputs ...` runs it\n";
    assert!(stderr(&o).ends_with(note), "{}", stderr(&o));
    // A text file with a bad byte gets no such note.
    let bad = dir.join("bad.xir").display().to_string();
    std::fs::write(&bad, b"kernel \xff").unwrap();
    let o = xir_opt(&[&bad]);
    assert_eq!(stderr(&o), format!("{bad}:1:8: error: [io] cannot read input: not UTF-8: invalid byte 0xff\n"));
}

#[test]
fn a_compile_flag_with_nothing_to_compile_is_a_usage_error() {
    let saxpy = corpus("saxpy.xir");
    let idle =
        "has no effect: no pipeline runs (name one with --pipeline) and this --emit form does not reach the backend";
    for args in [
        &["--opt-level", "2"][..],
        &["--fast-math"],
        &["--device-features", "none"],
        &["--time-passes"],
        &["--verify-each", "--emit", "ast"],
    ] {
        let o = xir_opt(&[&[saxpy.as_str()][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o), format!("xir-opt: error: {} {idle}\n", args[0]), "{args:?}");
    }
    // With a pipeline, or an --emit that compiles, they take effect as before.
    assert!(xir_opt(&[&saxpy, "--opt-level", "2", "--pipeline", "cleanup"]).status.success());
    assert!(xir_opt(&[&saxpy, "--fast-math", "--emit", "spirv-asm", "--no-cache"]).status.success());
}

#[test]
fn a_byte_order_mark_before_an_input_or_pipeline_is_dropped() {
    let dir = scratch("bom");
    let bom = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, [&b"\xef\xbb\xbf"[..], text.as_bytes()].concat()).unwrap();
        p.display().to_string()
    };
    let src = std::fs::read_to_string(corpus("saxpy.xir")).unwrap();
    let input = bom("saxpy.xir", &src);
    let ron = std::fs::read_to_string(format!("{}/cleanup.ron", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let pipeline = bom("p.ron", &ron);
    let o = xir_opt(&[&input, "--pipeline", &pipeline]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "cleanup"]);
    assert_eq!(stdout(&o), stdout(&want));
}

#[test]
fn kernel_picks_one_of_several_for_spirv() {
    let dir = scratch("kernel");
    let src = std::fs::read_to_string(corpus("saxpy.xir")).unwrap();
    let other = src.replace("@saxpy(", "@other(").replace("mul %a, %xi", "sub %a, %xi");
    let two = write(&dir, "two.xir", &format!("{src}\n{other}"));
    let o = xir_opt(&[&two, "--emit", "spirv-asm", "--no-cache"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("xir-opt: error: {two}: the module has 2 kernels (@saxpy, @other); name one with --kernel\n")
    );
    // Through the cache too: each kernel is its own entry, never the other's.
    let cache = dir.join("cache");
    for name in ["other", "saxpy", "other"] {
        let o = xir_opt(&[&two, "--emit", "spirv-asm", "--kernel", name, "--cache-dir", cache.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        // @saxpy multiplies, @other subtracts.
        let asm = stdout(&o);
        assert_eq!((asm.contains("OpFMul"), asm.contains("OpFSub")), (name == "saxpy", name == "other"), "{name}");
    }
    let o = xir_opt(&[&two, "--emit", "spirv-asm", "--no-cache", "--kernel", "nope"]);
    assert_eq!(stderr(&o), format!("xir-opt: error: {two}: no kernel named `nope`\n"));
    let o = xir_opt(&[&two, "--kernel", "saxpy"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "xir-opt: error: --kernel picks the kernel of a SPIR-V --emit form (spirv, spirv-asm, artifact)\n"
    );
}

/// `-O2` is `--opt-level 2`, as compiler users type it; a level past 3 is refused.
#[test]
fn dash_o_is_the_opt_level() {
    let dir = scratch("dash-o");
    let saxpy = format!("{}/../tests/wgsl/saxpy.wgsl", env!("CARGO_MANIFEST_DIR"));
    let compile = |flags: &[&str], name: &str| {
        let out = dir.join(name);
        let mut args = vec![saxpy.as_str(), "--emit", "spirv", "--no-cache", "-o", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let o = xir_opt(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    let short = compile(&["-O2"], "short.spv");
    assert_eq!(short, compile(&["--opt-level", "2"], "long.spv"));
    assert_ne!(short, compile(&["-O0"], "o0.spv"), "-O2 optimizes");
    let o = xir_opt(&[&saxpy, "-O4", "--emit", "spirv", "-o", dir.join("o4.spv").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("4 is not in 0..=3"), "{}", stderr(&o));
    assert!(!dir.join("o4.spv").exists());
}
