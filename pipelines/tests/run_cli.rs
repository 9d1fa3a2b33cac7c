//! `xir-run --interp` as a process: the kernel found after the pipeline,
//! the run's limits as flags, diagnostics that name the file, input files
//! refused by size or encoding at their position, and a closed standard
//! output reported, not a panic.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{json_at, scratch, xir_run};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh scratch directory for one test.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// A callable placed before the kernel, which inlining removes.
const CALLER: &str = "\
callable @twice(%x: u32) -> u32 {
^entry:
  %y = add %x, %x : u32
  return %y
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = call @twice, u32 21 : u32
  buffer.write %out, u32 0, %v
  return
}
";

const OUT_INPUTS: &str = r#"{"dispatch": [1, 1, 1], "args": {"out": [0]}}"#;

/// From -O1 the legalization removes the unused callable placed before
/// the kernel, which renumbers the kernel.
#[test]
fn the_kernel_is_found_by_name_after_the_pipeline() {
    let dir = scratch("pipeline");
    let unused = "callable @unused(%x: u32) -> u32 {\n^entry:\n  return %x\n}\n\n";
    let k = write(&dir, "k.xir", format!("{unused}{CALLER}").as_bytes());
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    for level in ["0", "1", "2", "3"] {
        let o = xir_run(&[&k, "--interp", "--pipeline", "spirv", "--opt-level", level, "--inputs", &inputs]);
        assert!(o.status.success(), "-O{level}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), r#"{"buffers":{"out":[42]},"printed":[]}"#, "-O{level}");
    }
}

/// A loop around a barrier: each of the 64 threads waits every iteration.
const BARRIER_LOOP: &str = "\
kernel @k(%out: buffer<u32>) block_size(64, 1, 1) {
^entry:
  br target ^head
^head:
  print \"spin\"
  sync_block
  br target ^head
}
";

#[test]
fn the_run_limits_are_flags_and_errors_name_the_file() {
    let dir = scratch("limits");
    let k = write(&dir, "spin.xir", BARRIER_LOOP.as_bytes());
    let inputs = write(&dir, "spin.inputs.json", r#"{"dispatch": [64, 1, 1], "args": {"out": [0]}}"#.as_bytes());
    // Rounds of 192 steps (br, print, sync_block per thread): step 1001 is
    // thread 13's print in the sixth round.
    let o = xir_run(&[&k, "--inputs", &inputs, "--max-steps", "1000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{k}:5:3: error: [interp] step limit of 1000 instructions for the run exceeded (infinite loop?) \
             (in @k, bb1, inst1)\n"
        )
    );
    let o = xir_run(&[&k, "--inputs", &inputs, "--max-print-bytes", "100"]);
    assert_eq!(
        stderr(&o),
        format!(
            "{k}:5:3: error: [interp] printed output exceeds the limit of 100 bytes (the max-print-bytes option) \
             (in @k, bb1, inst1)\n"
        )
    );
    let o = xir_run(&[&k, "--inputs", &inputs, "--max-threads", "32"]);
    assert_eq!(
        stderr(&o),
        format!(
            "{k}: error: [interp] a dispatch of 64 threads ([64, 1, 1]) exceeds the limit of 32 (the max-threads \
             option) (in @k)\n"
        )
    );
}

#[test]
fn input_files_are_refused_by_encoding_at_their_position_and_by_size() {
    let dir = scratch("inputs");
    let mut bad = CALLER.as_bytes().to_vec();
    bad[CALLER.find("%y = add").unwrap() + 1] = 0xff;
    let k = write(&dir, "bad.xir", &bad);
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("{k}:3:4: error: [io] cannot read input: not UTF-8: invalid byte 0xff\n"));
    let good = write(&dir, "k.xir", CALLER.as_bytes());
    let bad_inputs = write(&dir, "bad.inputs.json", b"{\"args\":\n {\"out\": [\xc0]}}");
    let o = xir_run(&[&good, "--inputs", &bad_inputs]);
    assert_eq!(
        stderr(&o),
        format!("{bad_inputs}:2:11: error: [io] cannot read inputs: not UTF-8: invalid byte 0xc0\n")
    );
    // A file without end is cut at the cap instead of filling memory.
    let o = xir_run(&[&good, "--inputs", "/dev/zero"]);
    assert_eq!(
        stderr(&o),
        "/dev/zero: error: [io] cannot read inputs: larger than the 256 MiB limit on source files\n"
    );
}

#[test]
fn a_verifier_error_stops_the_run_and_names_the_file() {
    let dir = scratch("verify");
    let k = write(
        &dir,
        "k.xir",
        CALLER.replace("buffer.write %out, u32 0, %v", "%w = alloca : u32\n  buffer.write %out, u32 0, %w").as_bytes(),
    );
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    let o = xir_run(&[&k, "--inputs", &inputs, "--diagnostics=json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_at(&o), vec![("operand:any".to_string(), k.clone(), 11, 3)]);
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{k}:11:3: error: [operand:any] `buffer.write` operand 2 (`value`) must be a value (not a function, not \
             void, not an lvalue), found an lvalue (a variable) of type `u32` (in @k, bb0, inst2)\n"
        )
    );
}

#[test]
fn a_huge_unknown_pipeline_name_is_cut_in_the_message() {
    let dir = scratch("huge-name");
    let k = write(&dir, "k.xir", CALLER.as_bytes());
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    // One argument stays under Linux's 128 KiB limit per argument.
    let name = "p".repeat(100_000);
    let o = xir_run(&[&k, "--inputs", &inputs, "--pipeline", &name]);
    assert_eq!(o.status.code(), Some(1));
    let cut = format!("{}... (100000 bytes)", "p".repeat(64));
    assert!(stderr(&o).len() < 2000, "{} bytes of stderr", stderr(&o).len());
    assert!(stderr(&o).starts_with(&format!("{cut}:1:1: error: no shipped pipeline named `{cut}`")), "{}", stderr(&o));
}

/// Standard output closed before the result is written: an error naming
/// stdout, exit 1, no panic.
#[test]
fn a_closed_standard_output_is_an_error_not_a_panic() {
    let dir = scratch("stdout");
    let k = write(&dir, "k.xir", CALLER.as_bytes());
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    // A pipe whose read end is closed before xir-run starts: a pipe from
    // `Stdio::piped()` would be closed only after the spawn, and a process
    // forked meanwhile by another test's thread can hold its read end open.
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array for pipe2 to fill.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
    // SAFETY: both descriptors were just created and are owned here.
    let (read_end, write_end) = unsafe {
        use std::os::fd::FromRawFd;
        (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1]))
    };
    drop(read_end);
    let mut child = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([&k, "--inputs", &inputs])
        .stdout(write_end)
        .stderr(Stdio::piped())
        .spawn()
        .expect("xir-run starts");
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.starts_with("xir-run: cannot write stdout: Broken pipe"), "{err}");
    // A full disk likewise.
    if Path::new("/dev/full").exists() {
        let o = Command::new(env!("CARGO_BIN_EXE_xir-run"))
            .args([&k, "--inputs", &inputs])
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).starts_with("xir-run: cannot write stdout: No space left on device"), "{}", stderr(&o));
    }
}

/// A pipeline file: an unknown 4 MB pass name is cut in the message (and
/// costs no edit-distance search); a byte that is not UTF-8 is located.
#[test]
fn pipeline_files_are_read_with_the_same_care() {
    let dir = scratch("ron");
    let k = write(&dir, "k.xir", CALLER.as_bytes());
    let inputs = write(&dir, "k.inputs.json", OUT_INPUTS.as_bytes());
    let name = "q".repeat(4 << 20);
    let text = format!("Pipeline(name: \"t\", input: \"xir\", output: \"xir\", steps: [Pass(\"{name}\")])\n");
    let ron = write(&dir, "huge.ron", text.as_bytes());
    let o = xir_run(&[&k, "--inputs", &inputs, "--pipeline", &ron]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.len() < 2000, "{} bytes of stderr", err.len());
    let cut = format!("{}... (4194304 bytes)", "q".repeat(64));
    assert!(err.starts_with(&format!("{ron}:1:")) && err.contains(&format!("unknown pass `{cut}`")), "{err}");
    let mut bad = b"Pipeline(\n  name: \"t\xfe\",".to_vec();
    bad.extend_from_slice(b" input: \"xir\", output: \"xir\", steps: [])\n");
    let ron = write(&dir, "bad.ron", &bad);
    let o = xir_run(&[&k, "--inputs", &inputs, "--pipeline", &ron]);
    assert_eq!(stderr(&o), format!("{ron}:2:11: error: cannot read pipeline: not UTF-8: invalid byte 0xfe\n"));
}

/// On Vulkan, an inputs file that does not fit the kernel (a missing
/// argument) is reported against that file.
#[test]
fn vulkan_input_errors_name_the_inputs_file() {
    if let Err(e) = xir_vulkan::Device::new() {
        eprintln!("\n!!!!!!!! SKIPPING: no Vulkan device ({e}) !!!!!!!!\n");
        return;
    }
    let dir = scratch("vulkan-inputs");
    let k = write(&dir, "k.xir", CALLER.as_bytes());
    let inputs = write(&dir, "k.inputs.json", br#"{"dispatch": [1, 1, 1], "args": {}}"#);
    let o = xir_run(&[&k, "--vulkan", "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("{inputs}: error: ABI mismatch: no input for argument `out`\n"));
}

#[test]
fn without_a_dispatch_size_one_block_runs() {
    // docs/inputs-format.md: without `--dispatch` or "dispatch", one block
    // (the kernel's block_size) runs; threads past it write nothing.
    let dir = scratch("one-block");
    let src = write(
        &dir,
        "k.xir",
        b"kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {\n^entry:\n  %i = extract $dispatch_id, u32 0 : u32\n  \
          %v = add %i, u32 1 : u32\n  buffer.write %out, %i, %v\n  return\n}\n",
    );
    let inputs = write(&dir, "k.inputs.json", br#"{"args": {"out": [0, 0, 0, 0, 0, 0]}}"#);
    let o = xir_run(&[&src, "--inputs", &inputs]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(out["buffers"]["out"], serde_json::json!([1, 2, 3, 4, 0, 0]), "{out}");
    let o = xir_run(&[&src, "--inputs", &inputs, "--dispatch", "6"]);
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(out["buffers"]["out"], serde_json::json!([1, 2, 3, 4, 5, 6]), "{out}");
}

/// docs/autodiff.md's scope: `xir-run` interprets it directly (the
/// interpreter's forward-mode oracle), and a refusal names the file.
#[test]
fn an_autodiff_scope_runs_in_the_interpreter() {
    const SCOPE: &str = include_str!("../../tests/autodiff/fixtures/doc_scope.xir");
    let dir = scratch("autodiff");
    let k = write(&dir, "k.xir", SCOPE.as_bytes());
    let inputs = write(&dir, "k.inputs.json", br#"{"args": {"x": 3.0, "out": [0]}}"#);
    let o = xir_run(&[&k, "--interp", "--inputs", &inputs]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"buffers":{"out":[6.0]},"printed":[]}"#);
    let bad = write(&dir, "bad.xir", SCOPE.replace("%y = mul %a, %a : f32", "%y = cast.bitwise %a : f32").as_bytes());
    let o = xir_run(&[&bad, "--interp", "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("{bad}:11:3: error: [interp] non-differentiable operation on a gradient path (in @k, bb1, inst5)\n")
    );
}

/// `--compare` on a kernel with an autodiff scope: Vulkan runs the pass's
/// output, the interpreter its own autodiff, and the floats agree within
/// docs/autodiff.md's relative tolerance (the precision shadow does not run
/// scopes).
#[test]
fn compare_runs_autodiff_kernels_against_the_interpreters_autodiff() {
    if let Err(e) = xir_vulkan::Device::new() {
        eprintln!("\n!!!!!!!! SKIPPING: no Vulkan device ({e}) !!!!!!!!\n");
        return;
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/autodiff/");
    for k in ["ad_loss", "ad_mlp", "ad_ray_sphere"] {
        let (x, i) = (format!("{root}{k}.xir"), format!("{root}{k}.inputs.json"));
        let o = xir_run(&[&x, "--inputs", &i, "--compare"]);
        assert!(o.status.success(), "{k}: {}", stderr(&o));
        assert!(stderr(&o).contains("autodiff scopes: floats compared within 1e-4 relative"), "{k}: {}", stderr(&o));
    }
}

#[test]
fn a_kernel_that_cannot_be_chosen_names_the_file() {
    let dir = scratch("no-kernel");
    let inputs = write(&dir, "k.inputs.json", b"{}");
    let empty = write(&dir, "empty.xir", b"");
    let o = xir_run(&[&empty, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("{empty}: error: the module has no kernel\n"));
    let saxpy = format!("{}/../tests/corpus/saxpy.xir", env!("CARGO_MANIFEST_DIR"));
    let o = xir_run(&[&saxpy, "--inputs", &inputs, "--kernel", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("{saxpy}: error: no kernel named `nope`\n"));
}

/// A dispatch whose thread count overflows u64 is refused by the thread
/// limit, named, instead of a panic.
#[test]
fn a_dispatch_past_u64_threads_is_refused_by_the_limit() {
    let saxpy = format!("{}/../tests/corpus/saxpy.xir", env!("CARGO_MANIFEST_DIR"));
    let inputs = format!("{}/../tests/corpus/saxpy.inputs.json", env!("CARGO_MANIFEST_DIR"));
    let o = xir_run(&[&saxpy, "--inputs", &inputs, "--dispatch", "4294967295,4294967295,4294967295"]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "{saxpy}: error: [interp] a dispatch of {} threads ([4294967295, 4294967295, 4294967295]) exceeds the limit of \
         16777216 (the max-threads option) (in @saxpy)\n",
        u128::from(u32::MAX).pow(3)
    );
    assert_eq!(stderr(&o), want);
}

/// Standard input serves one file: both from it is refused, and inputs read
/// from it are named `<stdin>` in their diagnostics.
#[test]
fn standard_input_is_read_once_and_named() {
    let saxpy = format!("{}/../tests/corpus/saxpy.xir", env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str], stdin: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_xir-run"))
            .args(args)
            .arg("--diagnostics=short")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = run(&["-", "--inputs", "-"], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "xir-run: INPUT and --inputs cannot both be `-` (standard input)\n");
    let o = run(&[&saxpy, "--inputs", "-"], "{\"args\": {]}");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "<stdin>:1:11: error: [inputs] key must be a string at line 1 column 11\n");
}

/// A flag the run does not read is refused, not ignored.
#[test]
fn a_flag_the_run_does_not_read_is_refused() {
    let saxpy = format!("{}/../tests/corpus/saxpy.xir", env!("CARGO_MANIFEST_DIR"));
    let inputs = format!("{}/../tests/corpus/saxpy.inputs.json", env!("CARGO_MANIFEST_DIR"));
    for (args, why) in [
        (&["--ulp", "4"][..], "--ulp widens a comparison, and there is none (--compare)"),
        (&["--vulkan", "--max-steps", "10"], "--max-steps is an interpreter option, and only Vulkan runs"),
        (&["--vulkan", "--warp-size", "4"], "--warp-size is an interpreter option, and only Vulkan runs"),
        (&["--opt-level", "2"], "--opt-level is a compile option, and only the interpreter runs, with no --pipeline"),
        (&["--interp", "-g"], "-g is a compile option, and only the interpreter runs, with no --pipeline"),
    ] {
        let o = xir_run(&[&[saxpy.as_str(), "--inputs", inputs.as_str()][..], args].concat());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), format!("xir-run: {why}\n"), "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
    }
    // An artifact alone runs as it was compiled.
    let dir = scratch("idle-artifact");
    let xsa = dir.join("saxpy.xsa").display().to_string();
    let opt = std::process::Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&saxpy, "--emit", "artifact", "--no-cache", "-o", &xsa])
        .output()
        .unwrap();
    assert!(opt.status.success(), "{}", stderr(&opt));
    let o = xir_run(&["--artifact", &xsa, "--inputs", &inputs, "--opt-level", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "xir-run: --opt-level is a compile option, and the artifact runs as it was compiled\n");
    // Where the run reads them, they are taken.
    let o = xir_run(&[&saxpy, "--inputs", &inputs, "--opt-level", "2", "--pipeline", "cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = xir_run(&[&saxpy, "--inputs", &inputs, "--max-steps", "100000"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `--inputs-template` prints the kernel's inputs at zero, one argument a
/// line in the kernel's order, and what it prints is an inputs file the
/// kernel runs with; it needs a module of XIR (a shader or XIR file).
#[test]
fn an_inputs_template_is_an_inputs_file_to_edit() {
    let wgsl = |k: &str| format!("{}/../tests/wgsl/{k}.wgsl", env!("CARGO_MANIFEST_DIR"));
    let o = xir_run(&[&wgsl("saxpy"), "--inputs-template"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "{\n  \"dispatch\": [64, 1, 1],\n  \"args\": {\n    \"a\": 0.0,\n    \"x\": {\"fill\":0.0,\"len\":64},\n    \
         \"y\": {\"fill\":0.0,\"len\":64}\n  }\n}\n"
    );
    // Every kind the front end makes: values, a uniform struct, buffers of
    // structs, vectors, bytes and atomics, 2D and 3D textures.
    let dir = scratch("inputs-template");
    for k in ["saxpy", "matrix_ops", "struct_gep", "byte_buffer", "vector_ops", "atomics", "texture_rw"] {
        let o = xir_run(&[&wgsl(k), "--inputs-template"]);
        assert_eq!(o.status.code(), Some(0), "{k}: {}", stderr(&o));
        let inputs = write(&dir, &format!("{k}.inputs.json"), &o.stdout);
        let run = xir_run(&[&wgsl(k), "--inputs", &inputs]);
        assert_eq!(run.status.code(), Some(0), "{k}: {}", stderr(&run));
    }
    // A SPIR-V module's kernel, through the SPIR-V front end.
    let spv = format!("{}/../tests/spirv/histogram.spv", env!("CARGO_MANIFEST_DIR"));
    let o = xir_run(&[&spv, "--inputs-template"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"hist.total\": {\"fill\":0,\"len\":1}"), "{}", stdout(&o));
    // Refusals: no module; a module that is not one; a run flag.
    let o = xir_run(&["--inputs-template"]);
    assert_eq!((o.status.code(), stderr(&o).trim()), (Some(1), "xir-run: --inputs-template needs an INPUT module"));
    let spv = write(&dir, "k.spv", &[0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0]);
    let o = xir_run(&[&spv, "--inputs-template"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("[spirv] SPIRV-Tools does not validate it for Vulkan 1.2"), "{}", stderr(&o));
    let o = xir_run(&[&wgsl("saxpy"), "--inputs-template", "--vulkan"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
