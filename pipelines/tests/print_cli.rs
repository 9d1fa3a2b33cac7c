//! `print` through the drivers on Vulkan: `xir-run --compare` on a printing
//! kernel agrees with the interpreter (printed lines included), `--vulkan`
//! prints the interpreter's lines in the interpreter's order, and so does
//! `--artifact` (the printer records coming from the artifact); an artifact
//! whose printer records are damaged (digests resealed, so only the records'
//! own check can catch it) is rejected before any dispatch; without the
//! validation layer a printing kernel is refused by name; a printf buffer too
//! small for the dispatch is reported, not silently cut; across a barrier,
//! where the interpreter interleaves threads, `--compare` compares the lines
//! as multisets while `--vulkan` keeps each invocation's lines together.
//!
//! Skips (loudly) without any Vulkan device, or without the debug-printf
//! consumer (the Khronos validation layer).

use std::path::Path;
use std::process::{Command, Output};

use xir_spirv::artifact::{self, RawHeader, HEADER_LEN};

const KERNEL: &str = r#"
kernel @p(%o: buffer<u32>, %x: buffer<f32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %f = buffer.read %x, %t : f32
  %d = cast.static %f : f64
  %w = cast.static %t : i64
  %n = sub i64 0, %w : i64
  %v = aggregate %d, %d : vec<f64, 2>
  %e = lt %t, u32 2 : bool
  print "t={} f={} v={} n={} e={}", %t, %f, %v, %n, %e
  buffer.write %o, %t, %t
  return
}
"#;

const INPUTS: &str = r#"{"dispatch": [8, 1, 1], "args": {"o": {"fill": 0, "len": 8},
  "x": ["-0.0", "nan", "inf", "0x00800001", 0.1, 16777217, -2.5, "0x7f7fffff"]}}"#;

fn run(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the driver runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn printed(o: &Output) -> Vec<String> {
    let j: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)));
    serde_json::from_value(j["printed"].clone()).expect("printed lines")
}

/// Whether a printing kernel can run here; says loudly why not.
fn capture_available() -> bool {
    match xir_vulkan::Device::with_printf() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("\n!!!!!!!! SKIPPING PRINT RUNS: {e} !!!!!!!!\n");
            false
        }
    }
}

struct Files {
    _dir: tempfile::TempDir,
    src: String,
    inputs: String,
    xsa: String,
}

fn files() -> Files {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (src, inputs, xsa) = (p("p.xir"), p("p.inputs.json"), p("p.xsa"));
    std::fs::write(&src, KERNEL).unwrap();
    std::fs::write(&inputs, INPUTS).unwrap();
    let o = run(env!("CARGO_BIN_EXE_xir-opt"), &[&src, "--pipeline", "spirv", "--emit", "artifact", "-o", &xsa], &[]);
    assert!(o.status.success(), "{}", text(&o));
    Files { _dir: dir, src, inputs, xsa }
}

#[test]
fn compare_vulkan_and_artifact_runs_print_the_interpreters_lines() {
    if !capture_available() {
        return;
    }
    let f = files();
    let bin = env!("CARGO_BIN_EXE_xir-run");
    let interp = run(bin, &[&f.src, "--inputs", &f.inputs], &[]);
    assert!(interp.status.success(), "{}", text(&interp));
    let want = printed(&interp);
    assert_eq!(want.len(), 8);
    assert_eq!(want[0], "t=0 f=-0 v=(-0, -0) n=0 e=true");
    // Not a subnormal: converting one to f64 is device-defined (the H200
    // flushes it; docs/vulkan.md, "Subnormals"). print_vulkan prints
    // subnormal bits, which are exact everywhere.
    assert_eq!(want[3], "t=3 f=0.000000000000000000000000000000000000011754945 v=(0.00000000000000000000000000000000000001175494490952134, 0.00000000000000000000000000000000000001175494490952134) n=-3 e=false");
    assert_eq!(want[5], "t=5 f=16777216 v=(16777216, 16777216) n=-5 e=false");
    for level in ["0", "2"] {
        let c = run(bin, &[&f.src, "--compare", "--opt-level", level, "--inputs", &f.inputs], &[]);
        assert!(c.status.success(), "-O{level}: {}", text(&c));
        assert!(text(&c).contains("interpreter and Vulkan agree"), "{}", text(&c));
        assert_eq!(printed(&c), want);
        let v = run(bin, &[&f.src, "--vulkan", "--opt-level", level, "--inputs", &f.inputs], &[]);
        assert!(v.status.success(), "-O{level}: {}", text(&v));
        assert_eq!(printed(&v), want, "-O{level}: the device's lines in the interpreter's order");
    }
    let a = run(bin, &["--artifact", &f.xsa, "--inputs", &f.inputs], &[]);
    assert!(a.status.success(), "{}", text(&a));
    assert_eq!(printed(&a), want, "the artifact's printer records format the same lines");
}

/// Re-seal `bytes` with its printer section edited (section digests and
/// header digest recomputed: only the records' own check remains).
fn damage_printers(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let (h, _) = RawHeader::parse(bytes).expect("header parses");
    let mut at = HEADER_LEN;
    let mut sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    let k = artifact::Section::ALL.iter().position(|s| *s == artifact::Section::Printers).expect("printers section");
    edit(&mut sections[k]);
    let mut h = h;
    h.sections[k].size = sections[k].len() as u32;
    artifact::seal(h, &sections)
}

#[test]
fn damaged_printer_records_are_rejected_by_the_runner() {
    let f = files();
    let bytes = std::fs::read(&f.xsa).unwrap();
    let replace = |from: &str, to: &str| {
        damage_printers(&bytes, |s| {
            let p = s.windows(from.len()).position(|w| w == from.as_bytes()).expect("format in the section");
            s.splice(p..p + from.len(), to.bytes());
        })
    };
    let cases = [
        (replace("e={}", "e={x"), "stray `{`"),
        (replace("e={}", "e=()"), "4 placeholders for 5 arguments"),
        (replace("vec<f64, 2>", "vec<f64, 9>"), "not a printable type"),
    ];
    for (k, (bad, why)) in cases.into_iter().enumerate() {
        let path = format!("{}.bad{k}", f.xsa);
        std::fs::write(&path, bad).unwrap();
        let o = run(env!("CARGO_BIN_EXE_xir-run"), &["--artifact", &path, "--inputs", &f.inputs], &[]);
        assert!(!o.status.success(), "case {k} ran: {}", text(&o));
        assert!(text(&o).contains("rejected") && text(&o).contains(why), "case {k}: {}", text(&o));
        assert!(!text(&o).contains("vulkan:"), "case {k}: refused before any dispatch: {}", text(&o));
    }
}

#[test]
fn without_the_layer_a_printing_kernel_is_refused_by_name() {
    if xir_vulkan::Device::new().is_err() {
        eprintln!("\n!!!!!!!! SKIPPING: no Vulkan device at all !!!!!!!!\n");
        return;
    }
    let f = files();
    let empty = tempfile::tempdir().unwrap();
    let no_layers = [("VK_LAYER_PATH", empty.path().to_str().unwrap()), ("VK_ADD_LAYER_PATH", "")];
    let bin = env!("CARGO_BIN_EXE_xir-run");
    for args in [vec![f.src.as_str(), "--vulkan"], vec!["--artifact", f.xsa.as_str()]] {
        let mut a = args.clone();
        a.extend(["--inputs", f.inputs.as_str()]);
        let o = run(bin, &a, &no_layers);
        assert!(!o.status.success(), "{args:?} ran without a printf consumer: {}", text(&o));
        assert!(text(&o).contains("VK_LAYER_KHRONOS_validation"), "{args:?}: {}", text(&o));
    }
    // A kernel without print still runs without the layer.
    let plain = KERNEL.lines().filter(|l| !l.contains("print")).collect::<Vec<_>>().join("\n");
    let src = Path::new(&f.src).with_extension("plain.xir");
    std::fs::write(&src, plain).unwrap();
    let o = run(bin, &[src.to_str().unwrap(), "--vulkan", "--inputs", &f.inputs], &no_layers);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_printf_buffer_too_small_is_reported() {
    if !capture_available() {
        return;
    }
    let f = files();
    // The user's own layer settings rule: the default-sized buffer (1 KiB)
    // cannot hold 64 messages of 8 + 3 + 8 words.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vk_layer_settings.txt"), "khronos_validation.printf_buffer_size = 1024\n").unwrap();
    let settings = [("VK_LAYER_SETTINGS_PATH", dir.path().to_str().unwrap())];
    let inputs = Path::new(&f.inputs).with_extension("big.json");
    std::fs::write(
        &inputs,
        r#"{"dispatch": [64, 1, 1], "args": {"o": {"fill": 0, "len": 64}, "x": {"fill": 1.5, "len": 64}}}"#,
    )
    .unwrap();
    let o = run(env!("CARGO_BIN_EXE_xir-run"), &[&f.src, "--vulkan", "--inputs", inputs.to_str().unwrap()], &settings);
    assert!(!o.status.success(), "a truncated capture passed: {}", text(&o));
    assert!(text(&o).contains("1024-byte debug-printf buffer overflowed"), "{}", text(&o));
    // With the runner's own settings the same dispatch is captured whole.
    let o = run(env!("CARGO_BIN_EXE_xir-run"), &[&f.src, "--compare", "--inputs", inputs.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(printed(&o).len(), 64);
}

#[test]
fn across_a_barrier_compare_takes_the_lines_as_a_multiset() {
    if !capture_available() {
        return;
    }
    let f = files();
    let src = Path::new(&f.src).with_extension("barrier.xir");
    std::fs::write(
        &src,
        "kernel @b(%o: buffer<u32>, %x: buffer<f32>) block_size(2, 1, 1) {\n^entry:\n  \
         %t = extract $dispatch_id, u32 0 : u32\n  print \"before {}\", %t\n  sync_block\n  \
         print \"after {}\", %t\n  buffer.write %o, %t, %t\n  return\n}\n",
    )
    .unwrap();
    let inputs = Path::new(&f.inputs).with_extension("two.json");
    std::fs::write(&inputs, r#"{"dispatch": [2, 1, 1], "args": {"o": [0, 0], "x": [0.0, 0.0]}}"#).unwrap();
    let (src, inputs) = (src.to_str().unwrap(), inputs.to_str().unwrap());
    let bin = env!("CARGO_BIN_EXE_xir-run");
    let i = run(bin, &[src, "--inputs", inputs], &[]);
    assert!(i.status.success(), "{}", text(&i));
    assert_eq!(
        printed(&i),
        ["before 0", "before 1", "after 0", "after 1"],
        "the interpreter interleaves at the barrier"
    );
    let v = run(bin, &[src, "--vulkan", "--inputs", inputs], &[]);
    assert!(v.status.success(), "{}", text(&v));
    assert_eq!(printed(&v), ["before 0", "after 0", "before 1", "after 1"], "the runner's thread order");
    let c = run(bin, &[src, "--compare", "--inputs", inputs], &[]);
    assert!(c.status.success(), "{}", text(&c));
}
