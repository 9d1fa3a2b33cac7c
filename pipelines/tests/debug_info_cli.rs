//! `-g` in the drivers (docs/debug-info.md): a WGSL or GLSL shader's own
//! source lines reach the SPIR-V as `OpLine`s through the front end's
//! `!loc`s; without `-g` the output is what it always was; the compile
//! cache keeps the two apart; `xir-run -g` computes the same results.

mod common;
use common::*;

use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SHADER: &str = "\
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    data[i] = data[i] * 3u + i;
}
";

const GLSL: &str = "\
#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    data[i] = data[i] * 3u + i;
}
";

/// `(line, column)` of every `OpLine` in a disassembly, in order.
fn op_lines(asm: &str) -> Vec<(u32, u32)> {
    asm.lines()
        .filter_map(|l| l.trim().strip_prefix("OpLine "))
        .map(|rest| {
            let w: Vec<&str> = rest.split_whitespace().collect();
            (w[1].parse().unwrap(), w[2].parse().unwrap())
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn asm(input: &str, extra: &[&str]) -> String {
    let mut args = vec![input, "--pipeline", "spirv", "--emit", "spirv-asm", "--no-cache"];
    args.extend_from_slice(extra);
    let o = xir_opt(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn a_wgsl_shader_compiled_with_g_carries_its_source_lines() {
    let d = scratch("g-wgsl");
    let k = write(&d, "k.wgsl", SHADER);
    // The front end locates every instruction at its statement or expression.
    let o = xir_opt(&[&k, "-g"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let xir = text(&o.stdout);
    assert!(xir.contains(&format!("!loc(\"{k}\", 5, 5)")), "{xir}");
    assert!(!text(&xir_opt(&[&k]).stdout).contains("!loc"), "locations without -g");
    for level in ["0", "1", "2", "3"] {
        let out = asm(&k, &["-g", "--opt-level", level]);
        // -O3 compacts ids, so the string's id is read back.
        let id = out.lines().find_map(|l| l.strip_suffix(&format!(" = OpString \"{k}\""))).expect("an OpString");
        assert!(out.contains(&format!("{id} = OpString \"{k}\"\nOpSource WGSL 100 {id}\n")), "-O{level}:\n{out}");
        let lines = op_lines(&out);
        // `gid.x` is located at the parameter `gid` (line 3, column 40),
        // the statement of line 5 at its expressions: the lines every
        // preset keeps.
        assert_eq!(lines, [(3, 40), (5, 5), (5, 15), (5, 25)], "-O{level}");
        assert!(out.contains("OpName %") && out.contains("\"data\""), "-O{level}:\n{out}");
    }
    let plain = asm(&k, &[]);
    for op in ["OpLine", "OpNoLine", "OpString", "OpSource"] {
        assert!(!plain.contains(op), "{op} without -g:\n{plain}");
    }
}

#[test]
fn a_glsl_shader_is_glsl_450_source() {
    let d = scratch("g-glsl");
    let k = write(&d, "k.comp", GLSL);
    let out = asm(&k, &["-g"]);
    assert!(out.contains(&format!("%2 = OpString \"{k}\"\nOpSource GLSL 450 %2\n")), "{out}");
    // Line 5's declaration and line 6's statement, by expression; the
    // backend's own instructions between them behind `OpNoLine`.
    assert_eq!(op_lines(&out), [(5, 14), (5, 35), (6, 9), (6, 19), (6, 25), (5, 14)]);
    assert_eq!(out.matches("OpNoLine").count(), 2, "{out}");
}

#[test]
fn the_cache_keeps_g_apart() {
    let d = scratch("g-cache");
    let k = write(&d, "k.wgsl", SHADER);
    let cache = d.join("cache").display().to_string();
    let run = |g: bool, out: &str| {
        let out = d.join(out).display().to_string();
        let mut args =
            vec![k.as_str(), "--pipeline", "spirv", "--emit", "spirv-asm", "-o", &out, "--cache-dir", &cache, "-v"];
        if g {
            args.push("-g");
        }
        let o = xir_opt(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        (text(&o.stderr), std::fs::read_to_string(out).unwrap())
    };
    let (e1, plain) = run(false, "1.spvasm");
    let (e2, debug) = run(true, "2.spvasm");
    let (e3, debug_again) = run(true, "3.spvasm");
    let (e4, plain_again) = run(false, "4.spvasm");
    assert!(e1.contains(": miss, stored"), "{e1}");
    assert!(e2.contains(": miss, stored"), "-g hit the plain entry: {e2}");
    assert!(e3.contains(": hit"), "{e3}");
    assert!(e4.contains(": hit"), "{e4}");
    assert!(debug.contains("OpLine") && !plain.contains("OpLine"));
    assert_eq!((debug, plain), (debug_again, plain_again));
}

#[test]
fn xir_run_with_g_computes_the_same_results() {
    let d = scratch("g-run");
    let k = write(&d, "k.wgsl", SHADER);
    let i = write(&d, "i.json", r#"{"dispatch": [4, 1, 1], "args": {"data": [1, 2, 3, 4]}}"#);
    let o = xir_run(&[&k, "--inputs", &i, "--vulkan", "-g", "--opt-level", "2"]);
    let err = text(&o.stderr);
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(o.status.success(), "{err}");
    assert_eq!(text(&o.stdout).trim(), r#"{"buffers":{"data":[3,7,11,15]},"printed":[]}"#);
}
