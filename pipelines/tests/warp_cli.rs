//! `xir-run --warp-size` and the subgroup size of a comparison: the
//! interpreter's warps are as wide as the flag says (32 by default), a size
//! Vulkan cannot have is refused, and `--compare` runs the interpreter at
//! the device's subgroup size, refusing a flag that says otherwise.

use std::process::Output;

mod common;
use common::{scratch, xir_run};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Thread t writes its lane, the warp size and its warp's sum of thread ids.
const LANES: &str = "\
kernel @k(%o: buffer<u32>) block_size(16, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %s = warp.active_sum %t : u32
  %b = mul %t, u32 3 : u32
  buffer.write %o, %b, $warp_lane_id
  %b1 = add %b, u32 1 : u32
  buffer.write %o, %b1, $warp_size
  %b2 = add %b, u32 2 : u32
  buffer.write %o, %b2, %s
  return
}
";

fn outputs(o: &Output) -> Vec<u64> {
    assert!(o.status.success(), "{}", stderr(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON outputs");
    v["buffers"]["o"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

fn expected(size: u64) -> Vec<u64> {
    (0..16u64).flat_map(|t| [t % size, size, (t / size * size..((t / size + 1) * size).min(16)).sum()]).collect()
}

#[test]
fn the_warp_size_is_a_flag_and_a_comparison_uses_the_devices() {
    let dir = scratch("warp");
    let k = dir.join("k.xir").display().to_string();
    std::fs::write(&k, LANES).unwrap();
    let inputs = dir.join("k.inputs.json").display().to_string();
    std::fs::write(&inputs, r#"{"dispatch": [16, 1, 1], "args": {"o": {"fill": 0, "len": 48}}}"#).unwrap();
    assert_eq!(outputs(&xir_run(&[&k, "--inputs", &inputs])), expected(32));
    for size in ["1", "4", "8"] {
        let o = xir_run(&[&k, "--inputs", &inputs, "--warp-size", size]);
        assert_eq!(outputs(&o), expected(size.parse().unwrap()), "--warp-size {size}");
    }
    let o = xir_run(&[&k, "--inputs", &inputs, "--warp-size", "3"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("a warp size of 3 lanes: Vulkan subgroup sizes are powers of two from 1 to 128"));
    let dev = match xir_vulkan::Device::new() {
        Ok(d) => d,
        Err(e) => return eprintln!("\n!!!!!!!! SKIPPING --compare: no Vulkan device ({e}) !!!!!!!!\n"),
    };
    let size = dev.subgroups.size;
    drop(dev);
    let o = xir_run(&[&k, "--inputs", &inputs, "--compare"]);
    assert_eq!(outputs(&o), expected(u64::from(size)), "at the device's subgroup size {size}");
    assert!(stderr(&o).contains("interpreter and Vulkan agree"), "{}", stderr(&o));
    let other = if size == 4 { "8" } else { "4" };
    let o = xir_run(&[&k, "--inputs", &inputs, "--compare", "--warp-size", other]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!("--warp-size {other} differs from the device's subgroup size {size}")),
        "{}",
        stderr(&o)
    );
}
