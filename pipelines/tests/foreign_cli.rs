//! `xir-run K.spv --inputs I.json`: a foreign SPIR-V module (naga's SPIR-V
//! of small WGSL kernels, written to files) recognized by its magic number,
//! run on Vulkan with the outputs printed as for an XIR kernel; `--entry`;
//! flags that make no sense for it refused; bad files refused with the file
//! named. The runs skip loudly only when no Vulkan device exists; the
//! refusals before any device run everywhere.

mod common;
use common::scratch;

use std::path::Path;
use std::process::{Command, Output};

use xir_frontend::oracle::{naga_spirv, Language};

fn xir_run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xir-run")).args(args).output().expect("xir-run runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING FOREIGN SPIR-V CLI RUNS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

const SAXPY: &str = "
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    y[id.x] = a * x[id.x] + y[id.x];
}";

const TWO_ENTRIES: &str = "
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(2) fn twice(@builtin(global_invocation_id) id: vec3<u32>) { x[id.x] *= 2u; }
@compute @workgroup_size(2) fn inc(@builtin(global_invocation_id) id: vec3<u32>) { x[id.x] += 1u; }";

fn spirv_bytes(src: &str, big_endian: bool) -> Vec<u8> {
    let words = naga_spirv(src, Language::Wgsl, "k.wgsl").unwrap();
    words.iter().flat_map(|w| if big_endian { w.to_be_bytes() } else { w.to_le_bytes() }).collect()
}

const SAXPY_INPUTS: &str =
    r#"{"dispatch": [8, 1, 1], "args": {"a": 2, "x": [1, 2, 3, 4, 5, 6, 7, 8], "y": {"fill": 1, "len": 8}}}"#;
const SAXPY_OUTPUTS: &str = concat!(
    r#"{"buffers":{"a":2.0,"x":[1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0],"y":[3.0,5.0,7.0,9.0,11.0,13.0,15.0,17.0]},"#,
    r#""printed":[]}"#,
    "\n"
);

#[test]
fn a_spirv_file_runs_by_its_magic_number_in_either_byte_order() {
    if !vulkan_available() {
        return;
    }
    let d = scratch("magic");
    let inputs = write(&d, "i.json", SAXPY_INPUTS.as_bytes());
    for (name, big) in [("saxpy.spv", false), ("saxpy.bin", false), ("saxpy-be", true)] {
        let k = write(&d, name, &spirv_bytes(SAXPY, big));
        let o = xir_run(&[&k, "--inputs", &inputs]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), SAXPY_OUTPUTS, "{name}");
        // --vulkan is what runs anyway; --dispatch overrides the inputs.
        let o = xir_run(&[&k, "--inputs", &inputs, "--vulkan", "--dispatch", "4"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stdout(&o).contains(r#""y":[3.0,5.0,7.0,9.0,1.0,1.0,1.0,1.0]"#), "{}", stdout(&o));
    }
}

#[test]
fn entry_picks_among_several_entry_points() {
    if !vulkan_available() {
        return;
    }
    let d = scratch("entry");
    let k = write(&d, "k.spv", &spirv_bytes(TWO_ENTRIES, false));
    let inputs = write(&d, "i.json", br#"{"dispatch": [4, 1, 1], "args": {"x": [1, 2, 3, 4]}}"#);
    let o = xir_run(&[&k, "--inputs", &inputs, "--entry", "inc"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"buffers\":{\"x\":[2,3,4,5]},\"printed\":[]}\n");
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{k}: error: foreign SPIR-V: the module has several GLCompute entry points (`twice`, `inc`); choose one \
             by name\n"
        )
    );
}

#[test]
fn input_errors_name_the_inputs_file() {
    if !vulkan_available() {
        return;
    }
    let d = scratch("inputs");
    let k = write(&d, "k.spv", &spirv_bytes(SAXPY, false));
    let inputs = write(&d, "i.json", br#"{"dispatch": [6, 1, 1], "args": {"a": 1, "x": [1], "y": [1]}}"#);
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{inputs}: error: ABI mismatch: dispatch [6, 1, 1] is not a multiple of the workgroup size [4, 1, 1]: 6 \
             threads along x for workgroups of 4 (a foreign module has no bound check of its own, so the runner \
             does not round up)\n"
        )
    );
    let inputs = write(&d, "j.json", br#"{"args": {"a": 1, "x": [1]}}"#);
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(
        stderr(&o),
        format!("{inputs}: error: ABI mismatch: no input for `y` (storage buffer, set 0 binding 2)\n")
    );
}

#[test]
fn flags_about_xir_lower_the_module_through_the_spirv_front_end() {
    let d = scratch("flags");
    let k = write(&d, "k.spv", &spirv_bytes(SAXPY, false));
    let inputs = write(&d, "i.json", SAXPY_INPUTS.as_bytes());
    // The interpreter runs the SPIR-V front end's kernel.
    let o = xir_run(&[&k, "--inputs", &inputs, "--interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = xir_run(&[&k, "--inputs", &inputs]);
    if stderr(&plain).contains("no Vulkan device") {
        eprintln!("skipped: {}", stderr(&plain));
        return;
    }
    // The same buffers (the module itself also reports its uniform `a`; a kernel keeps values out).
    let buffers = |out: &str| {
        let mut j: serde_json::Value = serde_json::from_str(out).expect("outputs");
        j["buffers"].as_object_mut().expect("buffers").remove("a");
        j
    };
    assert_eq!(buffers(&stdout(&o)), buffers(&stdout(&plain)), "the kernel computes what the module does");
    // --compare: the interpreter, our module and the module itself.
    let o = xir_run(&[&k, "--inputs", &inputs, "--compare", "-O2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).ends_with("xir-run: interpreter, Vulkan and the module itself agree\n"), "{}", stderr(&o));
    assert_eq!(buffers(&stdout(&o)), buffers(&stdout(&plain)));
    // --entry belongs to the module run as it is; --artifact to neither.
    let o = xir_run(&[&k, "--inputs", &inputs, "--interp", "--entry", "main"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "xir-run: --entry picks the entry point of a SPIR-V module run as it is; with a flag about XIR {k} goes \
             through the SPIR-V front end (use --kernel)\n"
        )
    );
    let o = xir_run(&[&k, "--inputs", &inputs, "--artifact", &k]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    // --entry on an XIR module.
    let x = write(&d, "k.xir", b"kernel @k() block(1, 1, 1) {\n^entry:\n  return\n}\n");
    let inputs = write(&d, "e.json", b"{}");
    let o = xir_run(&[&x, "--inputs", &inputs, "--entry", "main"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("xir-run: --entry selects an entry point of a SPIR-V module; {x} is not one (use --kernel)\n")
    );
}

#[test]
fn bad_spirv_files_are_refused_with_the_file_named() {
    let d = scratch("bad");
    let inputs = write(&d, "i.json", b"{}");
    let k = write(&d, "text.spv", b"kernel @k() {}\n");
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{k}: error: not a SPIR-V module: it starts with the bytes [6b 65 72 6e], not the magic number \
             0x07230203\n"
        )
    );
    let mut bytes = spirv_bytes(SAXPY, false);
    bytes.push(0);
    let k = write(&d, "odd", &bytes);
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with(&format!("{k}: error: a SPIR-V module is a whole number of 4-byte words")));
    // Damaged words: refused by validation, named, no panic.
    let mut bytes = spirv_bytes(SAXPY, false);
    bytes.truncate(64);
    let k = write(&d, "short.spv", &bytes);
    let o = xir_run(&[&k, "--inputs", &inputs]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!("{k}: error: foreign SPIR-V: the module fails SPIRV-Tools validation for Vulkan 1.2")),
        "{e}"
    );
    assert!(!e.contains("panic"), "{e}");
}

/// The checked-in module the docs run (`docs/inputs-format.md`): naga's SPIR-V
/// of `foreign_saxpy.wgsl`, the same words as naga writes today.
#[test]
fn the_documented_fixture_is_naga_s_module_and_runs() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let src = std::fs::read_to_string(fixtures.join("foreign_saxpy.wgsl")).unwrap();
    let words = naga_spirv(&src, Language::Wgsl, "foreign_saxpy.wgsl").unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(std::fs::read(fixtures.join("foreign_saxpy.spv")).unwrap(), bytes, "regenerate the fixture");
    if !vulkan_available() {
        return;
    }
    let k = fixtures.join("foreign_saxpy.spv").display().to_string();
    let inputs = fixtures.join("foreign_saxpy.inputs.json").display().to_string();
    let o = xir_run(&[&k, "--inputs", &inputs, "--vulkan"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(out["buffers"]["y"], serde_json::json!(vec![3.0; 128]));
    assert_eq!(out["buffers"]["a"], serde_json::json!(0.5));
}
