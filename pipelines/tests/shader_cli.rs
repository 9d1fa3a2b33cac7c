//! The drivers on WGSL and GLSL shaders, as a user runs them: `xir-opt`
//! with every emit, `--emit ast`, `--override`, located errors without an
//! output file; `xir-run` on the interpreter and with `--oracle naga`; and
//! `--opt-level` reaching SPIRV-Tools' preset.

mod common;
use common::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A driver with the one-line diagnostics (`--diagnostics=short`).
fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).arg("--diagnostics=short").args(args).output().expect("the driver runs")
}
fn opt(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_xir-opt"), args)
}
fn xrun(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_xir-run"), args)
}
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
/// Whether a run's stderr says there is no Vulkan device: the test then
/// skips, saying so.
fn no_vulkan(stderr: &str) -> bool {
    let none = stderr.contains("no Vulkan device");
    if none {
        eprintln!("skipped: {stderr}");
    }
    none
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

const SHADER: &str = "\
override SCALE: u32 = 3u;
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    data[gid.x] = data[gid.x] * SCALE + gid.x;
}
";

#[test]
fn a_wgsl_shader_prints_as_an_ast_and_runs_with_its_overrides() {
    let d = scratch("ast");
    let k = d.join("k.wgsl");
    std::fs::write(&k, SHADER).unwrap();
    let k = k.display().to_string();
    let o = opt(&[&k, "--emit", "ast"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "kernel void main(buffer<u32> data) block_size(4, 1, 1) whole_blocks noalias {
    buffer.write(data, min($dispatch_id.x, buffer.size(data) - 1u32), buffer.read(data, min($dispatch_id.x, buffer.size(data) - 1u32)) * 3u32 + $dispatch_id.x);
}
"
    );
    let inputs = d.join("i.json");
    std::fs::write(&inputs, r#"{"dispatch": [4, 1, 1], "args": {"data": [1, 2, 3, 4]}}"#).unwrap();
    let inputs = inputs.display().to_string();
    let o = xrun(&[&k, "--inputs", &inputs]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), r#"{"buffers":{"data":[3,7,11,15]},"printed":[]}"#);
    let o = xrun(&[&k, "--inputs", &inputs, "--override", "SCALE=10"]);
    assert_eq!(text(&o.stdout).trim(), r#"{"buffers":{"data":[10,21,32,43]},"printed":[]}"#);
    let o = xrun(&[&k, "--inputs", &inputs, "--override", "SCALE"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn a_bad_shader_is_located_and_leaves_no_output() {
    let d = scratch("bad");
    let k = d.join("bad.wgsl");
    std::fs::write(&k, "@compute @workgroup_size(1)\nfn main() {\n    let x = 1u +;\n}\n").unwrap();
    let out = d.join("out.spv");
    let (k, out_s) = (k.display().to_string(), out.display().to_string());
    let o = opt(&[&k, "--pipeline", "spirv", "--emit", "spirv", "-o", &out_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with(&format!("{k}:3:17: error: [wgsl] expected expression, found \";\"")),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists());
    let g = d.join("bad.comp");
    std::fs::write(&g, "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { frobnicate(); }\n").unwrap();
    let g = g.display().to_string();
    let o = opt(&[&g]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr).trim(), format!("{g}:3:15: error: [glsl] Unknown function 'frobnicate'"));
}

/// Shaders that nest past what naga's recursion survives (a 20,000-term
/// sum, a 20,000-branch `else if` chain) used to abort the process with a
/// stack overflow: they are refused, located, before naga runs, with
/// `xir-run --oracle naga` too; one level under the limit still compiles.
#[test]
fn a_shader_nesting_past_the_front_ends_limit_is_refused_not_a_crash() {
    let d = scratch("deep");
    let limit = xir_frontend::depth::MAX_DEPTH;
    let wgsl_sum = |n: usize| {
        format!(
            "@compute @workgroup_size(1)\nfn main() {{\n    var n = 1u;\n    n = {};\n}}\n",
            vec!["n"; n].join(" + ")
        )
    };
    let glsl_elif = |n: usize| {
        format!(
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {{\n    uint n = 1u;\n    if (n == 0u) {{ n = 1u; }}{}\n}}\n",
            " else if (n == 2u) { n = 3u; }".repeat(n)
        )
    };
    let message = format!(
        "error: [{{}}] the shader nests too deeply here: expressions, statements and `else if` chains together \
         more than {limit} levels (the front end's recursion limit; split the expression or the chain)"
    );
    for (file, source, rule, at) in [
        // The function's brace, `=`, then a `+` per term after the first:
        // the `limit - 1`-th `+` is one over (`    n = n` then ` + n`s).
        ("sum.wgsl", wgsl_sum(20_000), "wgsl", format!("4:{}:", 11 + 4 * (limit - 2))),
        ("elif.comp", glsl_elif(20_000), "glsl", "5:".to_string()),
    ] {
        let path = d.join(file);
        std::fs::write(&path, source).unwrap();
        let p = path.display().to_string();
        let out = d.join("out.spv");
        let o = opt(&[&p, "--emit", "spirv", "-o", &out.display().to_string()]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.starts_with(&format!("{p}:{at}")), "{err}");
        assert!(err.trim_end().ends_with(&message.replace("{}", rule)), "{err}");
        assert!(!out.exists());
        let inputs = d.join("inputs.json");
        std::fs::write(&inputs, r#"{"dispatch": [1, 1, 1], "args": {}}"#).unwrap();
        let o = xrun(&[&p, "--inputs", &inputs.display().to_string(), "--oracle", "naga"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("nests too deeply"), "{}", text(&o.stderr));
    }
    let under = d.join("under.wgsl");
    std::fs::write(&under, wgsl_sum(limit - 1)).unwrap();
    let o = opt(&[&under.display().to_string(), "--emit", "spirv", "-o", &d.join("u.spv").display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Instructions of a disassembly (lines with an `Op`).
fn instructions(asm: &str) -> usize {
    asm.lines().filter(|l| l.trim_start().starts_with("Op") || l.contains("= Op")).count()
}

#[test]
fn opt_level_two_applies_the_spirv_tools_preset() {
    let saxpy = root().join("tests/wgsl/saxpy.wgsl").display().to_string();
    let count = |level: &str| {
        let o = opt(&[&saxpy, "--pipeline", "spirv", "--opt-level", level, "--emit", "spirv-asm"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        instructions(&text(&o.stdout))
    };
    let (o0, o2) = (count("0"), count("2"));
    assert!(o2 < o0, "-O2 has {o2} instructions, -O0 {o0}");
}

/// `--emit spirv` without `--pipeline` legalizes with the `spirv` pipeline
/// (the backend takes nothing else): a kernel with `break`s compiles, and
/// exactly as with `--pipeline spirv`, at every level.
#[test]
fn a_backend_emit_without_a_pipeline_runs_the_spirv_pipeline() {
    let vm = root().join("tests/wgsl/bytecode_vm.wgsl").display().to_string();
    for level in ["0", "2"] {
        let default = opt(&[&vm, "--opt-level", level, "--emit", "spirv-asm"]);
        assert!(default.status.success(), "-O{level}: {}", text(&default.stderr));
        let spirv = opt(&[&vm, "--pipeline", "spirv", "--opt-level", level, "--emit", "spirv-asm"]);
        assert!(spirv.status.success(), "-O{level}: {}", text(&spirv.stderr));
        assert_eq!(text(&default.stdout), text(&spirv.stdout), "-O{level}");
    }
    // Without a backend emit there is still no default pipeline: the XIR
    // comes back as parsed (its `break`s included).
    let xir = root().join("tests/corpus/break_continue.xir").display().to_string();
    let o = opt(&[&xir]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("break "), "{}", text(&o.stdout));
}

#[test]
fn xir_run_checks_a_shader_against_nagas_module() {
    let k = root().join("tests/wgsl/saxpy.wgsl").display().to_string();
    let i = root().join("tests/corpus/saxpy.inputs.json").display().to_string();
    let o = xrun(&[&k, "--inputs", &i, "--oracle", "naga"]);
    let err = text(&o.stderr);
    if no_vulkan(&err) {
        return;
    }
    assert!(o.status.success(), "{err}");
    assert!(err.contains("xir-run: interpreter, Vulkan and naga's module agree"), "{err}");
    // 70 threads run as two whole workgroups of 64 everywhere (the shader
    // checks its own bound), naga's module included.
    let o = xrun(&[&k, "--inputs", &i, "--oracle", "naga", "--dispatch", "70"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("xir-run: interpreter, Vulkan and naga's module agree"), "{}", text(&o.stderr));
    let xir = root().join("tests/corpus/saxpy.xir").display().to_string();
    let o = xrun(&[&xir, "--inputs", &i, "--oracle", "naga"]);
    assert_eq!(o.status.code(), Some(1));
    // Refused before anything runs: no Vulkan dispatch line, no outputs.
    assert_eq!(text(&o.stderr), format!("xir-run: --oracle naga needs a .wgsl or .comp shader; {xir} is not one\n"));
    assert_eq!(text(&o.stdout), "");
}

/// A disagreement with naga's module (planted: debug builds lower `+` as
/// `-` under `XIR_DEBUG_MISCOMPILE_FRONTEND`) says how to reduce it.
#[test]
fn a_naga_mismatch_prints_the_reduce_command() {
    let k = root().join("tests/wgsl/saxpy.wgsl").display().to_string();
    let i = root().join("tests/corpus/saxpy.inputs.json").display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_xir-run"))
        .args([&k, "--inputs", &i, "--oracle", "naga"])
        .env("XIR_DEBUG_MISCOMPILE_FRONTEND", "1")
        .output()
        .unwrap();
    let err = text(&o.stderr);
    if no_vulkan(&err) {
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("mismatch (interpreter vs naga's module on Vulkan): `y`[0]"), "{err}");
    let note = format!("note: reduce with: xir-reduce {k} --naga-mismatch {i} -o reduced.wgsl\n");
    assert!(err.ends_with(&note), "{err}");
}

#[test]
fn every_emit_takes_a_shader() {
    let d = scratch("emits");
    let k = root().join("tests/glsl/do_while.comp").display().to_string();
    for emit in ["xir", "json", "dot", "ast", "spirv", "spirv-asm", "artifact"] {
        let out = d.join(format!("out.{emit}")).display().to_string();
        let pipeline: &[&str] =
            if emit.starts_with("spirv") || emit == "artifact" { &["--pipeline", "spirv"] } else { &[] };
        let mut args = vec![k.as_str(), "--emit", emit, "-o", out.as_str()];
        args.extend_from_slice(pipeline);
        let o = opt(&args);
        assert!(o.status.success(), "--emit {emit}: {}", text(&o.stderr));
        let bytes = std::fs::read(&out).unwrap();
        assert!(!bytes.is_empty(), "--emit {emit} wrote nothing");
        if emit == "spirv" {
            assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "a SPIR-V module");
        }
    }
}

/// `--override` sets a shader's `override` constants; given with no shader
/// it would set nothing, so it is refused.
#[test]
fn overrides_without_a_shader_are_refused() {
    let xir = root().join("tests/corpus/saxpy.xir").display().to_string();
    let i = root().join("tests/corpus/saxpy.inputs.json").display().to_string();
    let o = opt(&[&xir, "--override", "K=1"]);
    assert_eq!(o.status.code(), Some(2));
    let want =
        format!("xir-opt: error: --override sets `override` constants of a WGSL or GLSL shader or a SPIR-V module's specialization constants; {xir} is none\n");
    assert_eq!(text(&o.stderr), want);
    let dir = tempfile::tempdir().unwrap();
    let o = opt(&[&xir, &xir.replace("saxpy", "matmul"), "--override", "K=1", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let want =
        "xir-opt: error: --override sets `override` constants of a WGSL or GLSL shader or a SPIR-V module's specialization constants; none of the inputs is one\n";
    assert_eq!(text(&o.stderr), want);
    let o = xrun(&[&xir, "--inputs", &i, "--override", "K=1"]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!("xir-run: --override sets `override` constants of a WGSL or GLSL shader or a SPIR-V module's specialization constants; {xir} is none\n");
    assert_eq!(text(&o.stderr), want);
}

/// A GLSL push-constant block: our kernel takes it as a value, naga's
/// module as a push constant the foreign runner pushes, from the same input.
#[test]
fn the_naga_oracle_pushes_a_push_constant_block() {
    let dir = scratch("oracle-push-constant");
    let shader = dir.join("k.comp");
    std::fs::write(
        &shader,
        "#version 450\nlayout(local_size_x = 4) in;\nlayout(std430, binding = 0) buffer Data { float v[]; };\n\
         layout(push_constant) uniform PC { float scale; } pc;\nvoid main() { v[gl_GlobalInvocationID.x] *= pc.scale; }\n",
    )
    .unwrap();
    let inputs = dir.join("k.inputs.json");
    std::fs::write(&inputs, r#"{"args": {"pc": 2.0, "v": [1.0, 2.0, 3.0, 4.0]}}"#).unwrap();
    let (k, i) = (shader.to_str().unwrap(), inputs.to_str().unwrap());
    let ours = xrun(&[k, "--inputs", i]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout).trim(), r#"{"buffers":{"v":[2.0,4.0,6.0,8.0]},"printed":[]}"#);
    let o = xrun(&[k, "--inputs", i, "--oracle", "naga"]);
    let err = text(&o.stderr);
    if no_vulkan(&err) {
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.ends_with("xir-run: interpreter, Vulkan and naga's module agree\n"), "{err}");
}

/// A SPIR-V module in (glslang's, `tests/spirv/`): `xir-opt` compiles it
/// like a shader, at -O2 to a module SPIRV-Tools validates; a file that is
/// not a valid module is refused by name, with no output file; `xir-run
/// --compare` checks our kernel against the module itself.
#[test]
fn a_spirv_module_compiles_and_checks_against_itself() {
    let d = scratch("spirv-in");
    let k = root().join("tests/spirv/histogram.spv").display().to_string();
    let out = d.join("o.spv").display().to_string();
    let o = opt(&[&k, "-O2", "--emit", "spirv", "-o", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = std::fs::read(&out).expect("written");
    let words: Vec<u32> = bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    xir_spirv::validate::validate(&words).expect("valid");
    let cut = d.join("cut.spv");
    std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
    let cut = cut.display().to_string();
    let bad_out = d.join("bad.xir");
    let o = opt(&[&cut, "-o", &bad_out.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "{cut}: error: [spirv] not a SPIR-V module: {} bytes, not a whole number of 32-bit words\n",
            bytes.len() - 2
        )
    );
    assert!(!bad_out.exists());
    // The module itself cannot be specialized: --override with --compare is refused first.
    let scale = root().join("tests/spirv/scale.spv").display().to_string();
    let si = root().join("tests/spirv/scale.inputs.json").display().to_string();
    let o = xrun(&[&scale, "--inputs", &si, "--compare", "--override", "0=5"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "xir-run: --compare runs {scale} itself with its specialization constants' defaults: --override cannot \
             apply to it (compare without it, or run --interp / --vulkan)\n"
        )
    );
    let i = root().join("tests/spirv/histogram.inputs.json").display().to_string();
    let o = xrun(&[&k, "--inputs", &i, "--compare"]);
    let err = text(&o.stderr);
    if no_vulkan(&err) {
        return;
    }
    assert!(o.status.success(), "{err}");
    assert!(err.ends_with("xir-run: interpreter, Vulkan and the module itself agree\n"), "{err}");
    assert!(text(&o.stdout).contains("\"hist.bins\":[31,23,23,23]"), "{}", text(&o.stdout));
}

/// An instruction's word count is 16 bits: a constant of more members than
/// one `OpConstantComposite` holds is `OpConstantNull` when all zero (the
/// front end zeroes workgroup memory with one; found by the `spirv` fuzz
/// target as a module that passed the handoff and failed validation), and
/// is refused at the handoff otherwise.
#[test]
fn a_constant_past_one_instruction_is_null_or_refused() {
    let d = scratch("big-constant");
    let tail = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
                @compute @workgroup_size(1) fn main(@builtin(local_invocation_index) l: u32) { var t = T; out[0] = t[out[1]]; }\n";
    let zero = d.join("zero.wgsl");
    std::fs::write(&zero, format!("var<private> T: array<u32, 70000>;\n{tail}")).unwrap();
    let out = d.join("zero.spv").display().to_string();
    let o = opt(&[&zero.display().to_string(), "--emit", "spirv", "-o", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = std::fs::read(&out).expect("written");
    let words: Vec<u32> = bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    xir_spirv::validate::validate(&words).expect("valid");
    let sevens = d.join("sevens.wgsl");
    std::fs::write(&sevens, format!("const T = array<u32, 70000>({});\n{tail}", vec!["7u"; 70000].join(", "))).unwrap();
    let o = opt(&[&sevens.display().to_string(), "--emit", "spirv", "-o", &d.join("sevens.spv").display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains(
            "error: [spirv-handoff:constant] a constant of 70000 members that are not all zero: an \
             OpConstantComposite holds at most 65532 (its word count is 16 bits)"
        ),
        "{}",
        text(&o.stderr)
    );
    assert!(!d.join("sevens.spv").exists());
}
