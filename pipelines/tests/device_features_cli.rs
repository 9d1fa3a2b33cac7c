//! `xir-opt --device-features`: the presets, feature files and their
//! errors, and what the planner does with them (a native float atomic
//! where the device has it, a refusal naming the feature where it does
//! not). The `lavapipe` preset is checked against the live lavapipe device
//! wherever one is installed.

mod common;

use common::xir_opt;

const FLOAT_ATOMICS: &str = "../backend-spirv/tests/kernels/float_atomics_buffer_ops.xir";
const INT64: &str = "../tests/corpus/int64.xir";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn asm(kernel: &str, features: &str) -> std::process::Output {
    xir_opt(&[kernel, "--pipeline", "spirv", "--emit", "spirv-asm", "--device-features", features])
}

#[test]
fn unknown_is_the_default_and_uses_nothing_optional() {
    let default = xir_opt(&[FLOAT_ATOMICS, "--pipeline", "spirv", "--emit", "spirv-asm"]);
    let unknown = asm(FLOAT_ATOMICS, "unknown");
    assert!(default.status.success(), "{}", stderr(&default));
    assert_eq!(default.stdout, unknown.stdout);
    let text = String::from_utf8_lossy(&default.stdout);
    assert!(!text.contains("OpAtomicFAddEXT"), "no native float add on an unknown device");
    assert!(text.contains("OpAtomicCompareExchange"), "float atomics lower to a CAS loop");
}

/// Float add on a buffer no other atomic views as words.
const FLOAT_ADD: &str = "kernel @sum(%acc: buffer<f32>, %v: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %v, %t : f32
  %old = atomic.fetch_add %acc, %a, u32 0 : f32
  return
}
";

#[test]
fn a_feature_file_lets_the_planner_use_native_float_add() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("sum.xir");
    std::fs::write(&kernel, FLOAT_ADD).unwrap();
    let kernel = kernel.to_str().unwrap();
    let file = dir.path().join("dev.ron");
    std::fs::write(
        &file,
        "// native f32 add on buffers, and the float controls every float kernel needs\n\
         [BufferFloat32AtomicAdd, SignedZeroInfNanPreserve, RoundingModeRte]\n",
    )
    .unwrap();
    let o = asm(kernel, file.to_str().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("OpCapability AtomicFloat32AddEXT"), "{text}");
    assert!(text.contains("OpAtomicFAddEXT") && !text.contains("OpAtomicCompareExchange"), "{text}");
    let unknown = String::from_utf8_lossy(&asm(kernel, "unknown").stdout).into_owned();
    assert!(!unknown.contains("OpAtomicFAddEXT") && unknown.contains("OpAtomicCompareExchange"), "{unknown}");
    // A device that has the float controls but not the native add: the CAS loop.
    std::fs::write(&file, "[SignedZeroInfNanPreserve, RoundingModeRte]").unwrap();
    assert_eq!(asm(kernel, file.to_str().unwrap()).stdout, unknown.as_bytes());
}

#[test]
fn a_device_without_a_needed_feature_is_refused_by_name() {
    let o = asm(INT64, "none");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let e = stderr(&o);
    assert!(e.starts_with(&format!("{INT64}:")), "located in the input: {e}");
    assert!(e.contains("error: [spirv-features]") && e.contains("shaderInt64"), "{e}");
    for ok in ["all", "lavapipe"] {
        let o = asm(INT64, ok);
        assert!(o.status.success(), "{ok}: {}", stderr(&o));
    }
}

#[test]
fn a_bad_feature_file_is_located_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dev.ron");
    std::fs::write(&file, "[Int64,\n  NotAFeature]\n").unwrap();
    let out = dir.path().join("k.spv");
    let o = xir_opt(&[
        INT64,
        "--pipeline",
        "spirv",
        "--emit",
        "spirv",
        "-o",
        out.to_str().unwrap(),
        "--device-features",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let at = format!("{}:2:3: error: [device-features]", file.display());
    assert!(e.starts_with(&at), "{e}");
    assert!(e.contains("NotAFeature"), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_feature_file_that_is_not_text_is_located_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dev.ron");
    std::fs::write(&file, b"[Int64,\n  \xffInt8]\n").unwrap();
    let o = asm(INT64, file.to_str().unwrap());
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "{}:2:3: error: [device-features] --device-features: cannot read the feature file: not UTF-8: invalid byte 0xff",
        file.display()
    );
    assert!(stderr(&o).starts_with(&want), "{}", stderr(&o));
    // A directory, and an endless device, are refused by name instead of read.
    let o = asm(INT64, dir.path().to_str().unwrap());
    assert_eq!(o.status.code(), Some(1));
    let want =
        format!("{}: error: [device-features] --device-features: cannot read the feature file: ", dir.path().display());
    assert!(stderr(&o).starts_with(&want), "{}", stderr(&o));
    let o = asm(INT64, "/dev/zero");
    assert_eq!(
        stderr(&o),
        "/dev/zero: error: [device-features] --device-features: cannot read the feature file: larger than the 256 MiB \
         limit on source files\n"
    );
}

#[test]
fn a_missing_file_names_the_presets() {
    let o = asm(INT64, "lavapip");
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("[device-features]"), "{e}");
    assert!(e.contains("`lavapip` is not a preset (unknown, none, all, lavapipe, vulkan)"), "{e}");
}

#[test]
fn the_listing_names_every_preset_and_feature() {
    let o = xir_opt(&["--list-device-features"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for (name, _) in xir_pipelines::device_features::PRESETS {
        assert!(text.contains(&format!("    {name} ")), "{name}");
    }
    for f in xir_spirv::Feature::ALL {
        assert!(text.contains(&format!("    {f:?} ")), "{f:?}");
        assert!(text.contains(f.vulkan_name()), "{f:?}");
    }
}

/// Every listed feature name reads back from a file: the listing and the
/// file format agree.
#[test]
fn every_feature_name_parses() {
    let names: Vec<String> = xir_spirv::Feature::ALL.iter().map(|f| format!("{f:?}")).collect();
    let set = xir_pipelines::device_features::parse("all.ron", &format!("[{}]", names.join(", "))).unwrap();
    assert_eq!(set, xir_spirv::FeatureSet::all());
}

#[test]
fn the_lavapipe_preset_is_what_lavapipe_enables() {
    let device = match xir_vulkan::Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skipped: no Vulkan device ({e})");
            return;
        }
    };
    if !device.name.contains("llvmpipe") {
        eprintln!("skipped: the device is {}, not lavapipe", device.name);
        return;
    }
    let preset = xir_pipelines::device_features::lavapipe();
    let live: Vec<_> = device.enabled.iter().collect();
    assert_eq!(preset, device.enabled, "lavapipe enables {live:?}");
    let o = asm(INT64, "vulkan");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, asm(INT64, "lavapipe").stdout);
}
