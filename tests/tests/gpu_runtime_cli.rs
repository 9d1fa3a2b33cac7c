//! `gpu-runtime --peer-abi ours` (tests/src/bin/gpu-runtime.rs): a variant
//! of our own module is timed as the peer through our ABI, and a "variant"
//! whose bindings differ from ours is refused by name instead of being run
//! with its inputs bound wrong. On lavapipe the times mean nothing; the
//! rows and the refusal are what is checked.

use std::path::Path;
use std::process::Command;

use xir_tests::device::device;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root")
}

/// Our -O2 module of the WGSL corpus kernel `name`, as `gpu-runtime` compiles it.
fn our_module(name: &str) -> Vec<u32> {
    let path = root().join(format!("tests/wgsl/{name}.wgsl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let src =
        xir_frontend::Source { path: &path.display().to_string(), text: &text, language: xir_frontend::Language::Wgsl };
    let module = xir_frontend::compile(&src, &Default::default()).unwrap();
    xir_pipelines::backend::legalize_and_compile(&module, Some("main"), 2, false).unwrap().2.words
}

fn spv_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn gpu_runtime(peer: &Path, kernel: &str) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gpu-runtime"))
        .current_dir(root())
        .args(["--wgsl", "tests/wgsl", "--corpus", "tests/corpus", "--peer"])
        .arg(peer)
        .args(["--peer-abi", "ours", "--peer-label", "variant", "--only", kernel])
        .args(["--min-ms", "0", "--repeats", "2", "--max-mib", "1"])
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn a_variant_of_our_module_runs_through_our_abi_and_a_different_interface_is_refused() {
    if device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let words = our_module("saxpy");
    std::fs::write(dir.path().join("saxpy.spv"), spv_bytes(&words)).unwrap();
    let (code, out) = gpu_runtime(dir.path(), "saxpy");
    assert_eq!(code, Some(0), "{out}");
    let row = out.lines().find(|l| l.starts_with("| saxpy |")).unwrap_or_else(|| panic!("{out}"));
    assert!(out.contains("| ours -O2 ms | variant ms |"), "{out}");
    // kernel, tiles, threads, ours, peer, ratio, note: both sides timed.
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(cells[4].parse::<f64>().is_ok() && cells[5].parse::<f64>().is_ok(), "{row}");

    // The same module with one binding moved: refused, not run.
    let mut moved = words.clone();
    let mut i = 5;
    while i < moved.len() {
        let (count, opcode) = ((moved[i] >> 16) as usize, moved[i] & 0xffff);
        // OpDecorate %target Binding 1
        if opcode == 71 && count == 4 && moved[i + 2] == 33 && moved[i + 3] == 1 {
            moved[i + 3] = 7;
            break;
        }
        i += count.max(1);
    }
    assert_ne!(moved, words, "saxpy has a binding 1");
    std::fs::write(dir.path().join("saxpy.spv"), spv_bytes(&moved)).unwrap();
    let (code, out) = gpu_runtime(dir.path(), "saxpy");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("| saxpy | | | | | | failed: peer: "), "{out}");
    assert!(
        out.contains("is not a variant of our module: its descriptor bindings or push-constant block differ from ours"),
        "{out}"
    );
}
