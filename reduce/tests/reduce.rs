//! `xir-reduce` end to end: a planted crash (`debug.panic` that fires only
//! on a given opcode) in corpus kernels shrinks to the exact expected text,
//! and the CLI's error paths give the documented exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

const PIPELINE: &str =
    "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.panic\", (opcode: \"bit_xor\"))])";

fn pipeline_file(dir: &Path) -> PathBuf {
    let p = dir.join("p.ron");
    std::fs::write(&p, PIPELINE).unwrap();
    p
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xir-reduce")).args(args).output().unwrap()
}

/// `xir-reduce` on `input` under the planted crash's pipeline `p`, into
/// `out`; checks it wrote the expected reduction and returns its text.
fn reduce_planted_crash(input: &Path, p: &Path, out: &Path) -> String {
    let o = cli(&[
        input.to_str().unwrap(),
        "--pipeline",
        p.to_str().unwrap(),
        "--panic",
        "deliberate panic",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(std::fs::read_to_string(out).unwrap(), want);
    want
}

#[test]
fn planted_crash_shrinks_to_the_expected_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let out = dir.path().join("out.xir");
    let want = reduce_planted_crash(&input, &p, &out);
    // The reduced module still holds the planted opcode, and none of the
    // original stores survives.
    let original = std::fs::read_to_string(&input).unwrap();
    assert!(original.contains("store "), "{original}");
    assert!(want.contains("bit_xor") && !want.contains("store "), "{want}");
}

/// The reduced text of corpus kernel `name` under a panic on `opcode`,
/// without the kernel's header comment (which the module keeps).
fn reduce_panic(name: &str, opcode: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.ron");
    std::fs::write(&p, PIPELINE.replace("bit_xor", opcode)).unwrap();
    let input = root().join("tests/corpus").join(format!("{name}.xir"));
    let o = cli(&[input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "deliberate panic", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    text.lines().filter(|l| !l.starts_with("//")).map(|l| format!("{l}\n")).collect()
}

/// Callables lose their parameters (and the call its arguments), the
/// kernel that nothing needs goes, and loops and branches are gone.
#[test]
fn planted_crash_in_a_call_keeps_the_call_without_arguments() {
    let want = "\
callable @square() -> f32 {
^entry:
  return f32 0.0
}

callable @accumulate_square() -> void {
^entry:
  %sq = call @square : f32
  return
}
";
    assert_eq!(reduce_panic("callables", "call"), want);
}

/// A `switch` that must stay loses its cases; a do-while inside a loop goes.
#[test]
fn planted_crash_keeps_a_switch_without_cases_and_loops_unwind() {
    let want = "\
kernel @switch(%si: buffer<i32>, %su: buffer<u32>, %sw: buffer<u64>, %out: buffer<i32>) block_size(8, 1, 1) {
^entry:
  switch u64 0, merge ^d3, default ^d3
^d3:
  return
}
";
    assert_eq!(reduce_panic("switch", "switch"), want);
    let want = "\
kernel @simple_loop_continue(%nums: buffer<u32>, %odd: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %d = mod u32 0, u32 0 : u32
  return
}
";
    assert_eq!(reduce_panic("simple_loop_continue", "mod"), want);
}

#[test]
fn input_that_does_not_fail_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = cli(&[input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "no such message", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not fail as asked"), "{err}");
}

#[test]
fn an_output_it_could_not_write_is_refused_before_reducing() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let missing = dir.path().join("missing/small.xir");
    for (out, why) in [
        (dir.path().to_path_buf(), "cannot write output: it is a directory"),
        (missing.clone(), "cannot write output: No such file or directory (os error 2)"),
    ] {
        let args = [input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "deliberate panic"];
        let o = cli(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(1));
        // Refused at once: no reduction ran (it would report its tests first).
        assert_eq!(String::from_utf8_lossy(&o.stderr), format!("error: {}: {why}\n", out.display()));
    }
    // A regular output is replaced atomically: no temporary file is left beside it.
    let out = dir.path().join("small.xir");
    std::fs::write(&out, "old").unwrap();
    reduce_planted_crash(&input, &p, &out);
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["p.ron", "small.xir"]);
}

#[test]
fn a_pipeline_dir_variable_naming_no_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = Command::new(env!("CARGO_BIN_EXE_xir-reduce"))
        .args([input.to_str().unwrap(), "--pipeline", "cleanup", "--verifier", "ssa-dominance"])
        .env("XIR_PIPELINE_DIR", &missing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let want = format!("error: XIR_PIPELINE_DIR={}: No such file or directory (os error 2)\n", missing.display());
    assert_eq!(String::from_utf8_lossy(&o.stderr), want);
}

#[test]
fn max_time_takes_finite_seconds_and_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let args = [input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "deliberate panic", "-q"];
    for bad in ["inf", "NaN", "-1"] {
        let o = cli(&[&args[..], &[&format!("--max-time={bad}")]].concat());
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        let want = format!("`{bad}` is not a finite, non-negative number of seconds");
        assert!(err.contains(&want), "{err}");
    }
    // Longer than any clock: no budget in practice, the reduction ends as without one.
    let o = cli(&[&args[..], &["--max-time", "1e300"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

#[test]
fn an_unknown_verifier_rule_is_named_not_taken_for_no_failure() {
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = cli(&[input.to_str().unwrap(), "--verifier", "ssa-dominanse", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: --verifier `ssa-dominanse` is no rule; did you mean `ssa-dominance`? (docs/diagnostics.md, \"Rules\")\n"
    );
}

/// A full disk under standard output is an error naming stdout, not a panic.
#[test]
fn a_failed_write_to_standard_output_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline_file(dir.path());
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_xir-reduce"))
        .args([input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "deliberate panic", "-q"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: cannot write stdout: No space left on device (os error 28)\n"
    );
}

#[test]
fn mismatch_options_without_a_mismatch_are_refused() {
    let input = root().join("tests/corpus/bitonic_sort.xir");
    for flag in ["--kernel", "--max-steps"] {
        let o = cli(&[input.to_str().unwrap(), "--verifier", "ssa-dominance", flag, "1"]);
        assert_eq!(o.status.code(), Some(1));
        let want = format!("error: {flag} applies to --mismatch, and there is none\n");
        assert_eq!(String::from_utf8_lossy(&o.stderr), want);
    }
}

#[test]
fn bad_input_is_a_located_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.xir");
    std::fs::write(&bad, "kernel @k( {\n").unwrap();
    let o = cli(&[bad.to_str().unwrap(), "--verifier", "ssa-dominance"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.xir:1:"), "{err}");
}

#[test]
fn missing_signature_and_pipeline_are_errors() {
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let o = cli(&[input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no failure signature"));
    let o = cli(&[input.to_str().unwrap(), "--panic", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs --pipeline"));
}

#[test]
fn a_reproducer_directory_brings_its_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("tests/corpus/bitonic_sort.xir"), dir.path().join("input.xir")).unwrap();
    std::fs::write(dir.path().join("repro.ron"), PIPELINE).unwrap();
    let o = cli(&[dir.path().to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

const MISCOMPILE: &str =
    "Pipeline(name: \"m\", input: \"xir.structured\", output: \"xir.structured\", steps: [Pass(\"debug.miscompile\")])";

/// `xir-reduce NAME.xir --pipeline P --mismatch NAME.inputs.json ARGS` on a
/// corpus kernel: exit code, stdout without the kernel's header comment, stderr.
fn reduce_mismatch(name: &str, pipeline: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.ron");
    std::fs::write(&p, pipeline).unwrap();
    let corpus = root().join("tests/corpus");
    let input = corpus.join(format!("{name}.xir"));
    let inputs = corpus.join(format!("{name}.inputs.json"));
    let mut args =
        vec![input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--mismatch", inputs.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = cli(&args);
    let text = String::from_utf8(o.stdout).unwrap();
    let text = text.lines().filter(|l| !l.starts_with("//")).map(|l| format!("{l}\n")).collect();
    (o.status.code(), text, String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The planted miscompilation (`debug.miscompile`: the first `add` becomes
/// a `sub`) in `prefix_sum` (37 instructions, a loop with barriers) shrinks
/// to the `add` whose result reaches a buffer, with operands that tell
/// `add` from `sub`: interpreter before against interpreter after the pass.
#[test]
fn planted_mismatch_shrinks_to_the_expected_text() {
    let want = "\
kernel @prefix_sum(%x: buffer<u32>, %out: buffer<u32>) block_size(64, 1, 1) {
^entry:
  %next = add u32 0, u32 1 : u32
  buffer.write %out, u32 0, %next
  return
}
";
    let (code, out, err) = reduce_mismatch("prefix_sum", MISCOMPILE, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, want);
    assert_eq!(err, "xir-reduce: 37 -> 3 instructions after 77 tests\n");
    // Floats: -0.0 + 0.0 is +0.0, -0.0 - 0.0 is -0.0; the read of the -0.0 stays.
    let want = "\
kernel @saxpy(%a: f32, %x: buffer<f32>, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %xi = buffer.read %x, u32 0 : f32
  %r = add %xi, f32 0.0 : f32
  buffer.write %y, u32 0, %r
  return
}
";
    let (code, out, err) = reduce_mismatch("saxpy", MISCOMPILE, &["-q"]);
    assert_eq!((code, out.as_str()), (Some(0), want), "{err}");
}

/// A pipeline that computes the same outputs is no mismatch (exit 2).
#[test]
fn no_mismatch_exits_2() {
    let same = MISCOMPILE.replace("debug.miscompile", "dce");
    let (code, _, err) = reduce_mismatch("prefix_sum", &same, &["-q"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.ends_with("does not fail as asked (--mismatch on @prefix_sum)\n"), "{err}");
}

/// The same planted miscompilation against Vulkan (lavapipe in CI): the
/// pipeline takes the kernel to the handoff, the backend compiles at -O0,
/// the device runs it.
#[test]
fn planted_mismatch_against_vulkan() {
    let pipeline = "Pipeline(name: \"mv\", input: \"xir.structured\", output: \"xir.spirv\", \
                    steps: [Pass(\"debug.miscompile\"), Include(\"spirv\")])";
    let (code, out, err) = reduce_mismatch("saxpy", pipeline, &["--vulkan", "-q"]);
    if code == Some(1) && err.contains("no Vulkan device") {
        eprintln!("\n!!!!!!!! SKIPPING VULKAN TEST: {err} !!!!!!!!\n");
        return;
    }
    let want = "\
kernel @saxpy(%a: f32, %x: buffer<f32>, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %r = add f32 0.0, f32 1.0 : f32
  buffer.write %y, u32 0, %r
  return
}
";
    assert_eq!((code, out.as_str()), (Some(0), want), "{err}");
}

/// `--max-time`: a spent budget writes the smallest module found so far
/// (here the input: no test ran) and says so.
#[test]
fn max_time_stops_the_reduction() {
    let (code, out, err) = reduce_mismatch("prefix_sum", MISCOMPILE, &["--max-time", "0.000001"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err, "xir-reduce: 37 -> 37 instructions after 0 tests (budget spent)\n");
    let original = std::fs::read_to_string(root().join("tests/corpus/prefix_sum.xir")).unwrap();
    let original: String = original.lines().filter(|l| !l.starts_with("//")).map(|l| format!("{l}\n")).collect();
    assert_eq!(out.lines().count(), original.lines().count());
}

/// `--spirv-val`: no emission bug is known to reduce, so the backend's
/// debug-only hook plants one (`XIR_DEBUG_INVALID_SPIRV=OPCODE` drops the
/// `OpMemoryModel` of a module holding that opcode); the `spirv` pipeline
/// and the backend at -O0 run on each candidate.
#[test]
fn planted_validation_failure_shrinks_to_the_expected_text() {
    // The hook exists where debug assertions are on (the test profile's binaries too).
    if !cfg!(debug_assertions) {
        eprintln!("skipped: XIR_DEBUG_INVALID_SPIRV is read by debug builds only");
        return;
    }
    let input = root().join("tests/corpus/bitonic_sort.xir");
    let run = |var: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_xir-reduce"));
        c.args([input.to_str().unwrap(), "--spirv-val", "memory model", "-q"]);
        if let Some(v) = var {
            c.env("XIR_DEBUG_INVALID_SPIRV", v);
        }
        c.env_remove(if var.is_none() { "XIR_DEBUG_INVALID_SPIRV" } else { "XIR_NO_SUCH_VARIABLE" });
        c.output().unwrap()
    };
    let o = run(Some("bit_xor"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    let o = run(None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not fail as asked (--spirv-val \"memory model\")"));
}

/// Write the reproducer the drivers write (`xir_pipelines::repro`) for
/// corpus kernel `name` into `dir`.
fn driver_repro(dir: &Path, name: &str, failure: xir_pipelines::repro::Failure) {
    let path = root().join("tests/corpus").join(format!("{name}.xir"));
    let m = xir::text::parse_module(&std::fs::read_to_string(path).unwrap(), name).unwrap();
    let r = xir_pipelines::repro::Repro { module: &m, kernel: name, pipeline: "spirv", opt_level: 0, failure };
    xir_pipelines::repro::write(dir, &r).unwrap();
}

/// What `xir-opt` / `xir-run` write for a validation failure, `xir-reduce
/// DIR` reduces with no other argument (the planted failure again).
#[test]
fn a_driver_reproducer_of_a_validation_failure_reduces() {
    if !cfg!(debug_assertions) {
        return eprintln!("skipped: the planted failure exists in debug builds only");
    }
    let dir = tempfile::tempdir().unwrap();
    let message = "error:0:0 - EntryPoint cannot appear before the memory model instruction\n  OpEntryPoint ...";
    driver_repro(dir.path(), "bitonic_sort", xir_pipelines::repro::Failure::SpirvVal { message });
    let o = Command::new(env!("CARGO_BIN_EXE_xir-reduce"))
        .args([dir.path().to_str().unwrap(), "-q"])
        .env("XIR_DEBUG_INVALID_SPIRV", "bit_xor")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read_to_string(root().join("reduce/tests/bitonic_panic.reduced.xir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

/// Likewise an interpreter-vs-Vulkan mismatch (`xir-run --compare`), with
/// the backend's planted miscompilation (the first addition a subtraction).
#[test]
fn a_driver_reproducer_of_a_vulkan_mismatch_reduces() {
    if !cfg!(debug_assertions) {
        return eprintln!("skipped: the planted failure exists in debug builds only");
    }
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/corpus/prefix_sum.inputs.json")).unwrap();
    let inputs = xir::interp::Inputs::from_json(&text).unwrap();
    driver_repro(dir.path(), "prefix_sum", xir_pipelines::repro::Failure::Mismatch { inputs: &inputs });
    let o = Command::new(env!("CARGO_BIN_EXE_xir-reduce"))
        .args([dir.path().to_str().unwrap(), "-q"])
        .env("XIR_DEBUG_MISCOMPILE_SPIRV", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(1) && err.contains("no Vulkan device") {
        return eprintln!("\n!!!!!!!! SKIPPING VULKAN TEST: {err} !!!!!!!!\n");
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    let want = "\
kernel @prefix_sum(%x: buffer<u32>, %out: buffer<u32>) block_size(64, 1, 1) {
^entry:
  %next = add u32 0, u32 1 : u32
  buffer.write %out, u32 0, %next
  return
}
";
    let out = String::from_utf8_lossy(&o.stdout);
    let out: String = out.lines().filter(|l| !l.starts_with("//")).map(|l| format!("{l}\n")).collect();
    assert_eq!(out, want);
}

#[test]
fn a_bad_failure_file_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("tests/corpus/saxpy.xir"), dir.path().join("input.xir")).unwrap();
    std::fs::write(dir.path().join("failure.txt"), "signature: spirv-val\ncolour: red\n").unwrap();
    let o = cli(&[dir.path().to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr).replace(dir.path().to_str().unwrap(), "DIR");
    assert_eq!(err, "error: DIR/failure.txt:2: unknown key `colour` (signature, text, kernel, pipeline, opt-level)\n");
}

/// A planted front-end bug (debug builds lower every `+` as `-` under
/// `XIR_DEBUG_MISCOMPILE_FRONTEND`) that only naga's module disagrees with:
/// `--naga-mismatch` reduces the shader's source by lines, keeping what the
/// disagreement needs (the addition and the store) and dropping the rest
/// (a helper function, unrelated statements, comments). Vulkan: lavapipe
/// in CI.
#[test]
fn planted_front_end_mismatch_against_naga_reduces_the_source() {
    const SHADER: &str = "\
// y = a * x * x, then one more.
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

fn square(v: f32) -> f32 {
    return v * v;
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&x);
    if i < n {
        let s = square(x[i]);
        let ax = a * x[i];
        y[i] = ax * s;
        y[i] = y[i] + 1.0;
    }
}
";
    let dir = tempfile::tempdir().unwrap();
    let shader = dir.path().join("k.wgsl");
    std::fs::write(&shader, SHADER).unwrap();
    let inputs = root().join("tests/corpus/saxpy.inputs.json");
    let run = |planted: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_xir-reduce"));
        c.arg(&shader).arg("--naga-mismatch").arg(&inputs).arg("-q");
        if planted {
            c.env("XIR_DEBUG_MISCOMPILE_FRONTEND", "1");
        } else {
            c.env_remove("XIR_DEBUG_MISCOMPILE_FRONTEND");
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(true);
    if code == Some(1) && err.contains("no Vulkan device") {
        eprintln!("\n!!!!!!!! SKIPPING VULKAN TEST: {err} !!!!!!!!\n");
        return;
    }
    // 21 lines to 11: each line left is needed by another or by the
    // failure (a brace pair cannot go one line at a time).
    let want = "\
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&x);
    if i < n {
        y[i] = y[i] + 1.0;
    }
}
";
    assert_eq!((code, out.as_str()), (Some(0), want), "{err}");
    // Without the planted bug the two agree: nothing to reduce.
    let (code, _, err) = run(false);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("does not fail as asked (--naga-mismatch"), "{err}");
}

/// Types shrink too: a local array indexed only by constants keeps the
/// elements those indices reach (here, after the constants went to 0, one).
#[test]
fn a_local_array_shrinks_to_the_elements_the_failure_reaches() {
    const MODULE: &str = "kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %arr = alloca : array<u32, 8>
  %p5 = gep %arr, u32 5 : u32
  store %p5, u32 7
  %p2 = gep %arr, u32 2 : u32
  store %p2, u32 3
  %v = load %p5 : u32
  %w = load %p2 : u32
  %s = add %v, %w : u32
  buffer.write %out, u32 0, %s
  return
}
";
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("k.xir");
    std::fs::write(&input, MODULE).unwrap();
    let p = dir.path().join("p.ron");
    std::fs::write(&p, PIPELINE.replace("bit_xor", "gep")).unwrap();
    let o = cli(&[input.to_str().unwrap(), "--pipeline", p.to_str().unwrap(), "--panic", "deliberate panic", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = "kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %arr = alloca : array<u32, 1>
  %p5 = gep %arr, u32 0 : u32
  return
}
";
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}
