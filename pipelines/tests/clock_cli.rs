//! `clock`: lowered to `OpReadClockKHR` at Subgroup scope (a u64 of ticks,
//! the `ShaderClockKHR` capability and `SPV_KHR_shader_clock`) where the
//! target has `shaderSubgroupClock`, refused by name where it does not; on
//! lavapipe two reads in order are ordered, as on the interpreter (whose
//! clock is its step count).

mod common;

use common::{scratch, xir_opt, xir_run};

const KERNEL: &str = "kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %t0 = clock : u64
  %x = mul %i, u32 3 : u32
  buffer.write %out, %i, %x
  %t1 = clock : u64
  %ok = ge %t1, %t0 : bool
  %r = cast.static %ok : u32
  %j = add %i, u32 4 : u32
  buffer.write %out, %j, %r
  return
}
";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn clock_lowers_to_a_subgroup_clock_read_or_is_refused_by_name() {
    let dir = scratch("clock");
    let k = dir.join("k.xir");
    std::fs::write(&k, KERNEL).unwrap();
    let k = k.to_str().unwrap();
    let o = xir_opt(&[k, "--emit", "spirv-asm", "--device-features", "lavapipe"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let asm = text(&o.stdout);
    assert!(asm.contains("OpCapability ShaderClockKHR\n"), "{asm}");
    assert!(asm.contains("OpExtension \"SPV_KHR_shader_clock\"\n"), "{asm}");
    // Two reads, each of a u64 at Subgroup scope (3).
    let id_of = |def: &str| {
        let line = asm.lines().find(|l| l.ends_with(def)).unwrap_or_else(|| panic!("no `{def}` in\n{asm}"));
        line.split(" = ").next().unwrap().to_string()
    };
    let (u32_t, u64_t) = (id_of("= OpTypeInt 32 0"), id_of("= OpTypeInt 64 0"));
    let scope = id_of(&format!("= OpConstant  {u32_t}  3"));
    let reads: Vec<&str> = asm.lines().filter(|l| l.contains("OpReadClockKHR")).collect();
    assert_eq!(reads.len(), 2, "{asm}");
    for r in reads {
        assert!(r.ends_with(&format!("= OpReadClockKHR  {u64_t}  {scope}")), "{r}");
    }
    // A target without the feature refuses the kernel, naming it.
    let o = xir_opt(&[k, "--emit", "spirv", "--device-features", "none", "-o", dir.join("k.spv").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("shaderSubgroupClock (VK_KHR_shader_clock)"), "{err}");
    assert!(!dir.join("k.spv").exists(), "no output on a refusal");
}

#[test]
fn two_clock_reads_are_ordered_on_vulkan_as_on_the_interpreter() {
    let dir = scratch("clock-run");
    let k = dir.join("k.xir");
    std::fs::write(&k, KERNEL).unwrap();
    let inputs = dir.join("k.json");
    std::fs::write(&inputs, r#"{"dispatch": [4, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#).unwrap();
    let o = xir_run(&[k.to_str().unwrap(), "--inputs", inputs.to_str().unwrap(), "--compare"]);
    let err = text(&o.stderr);
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(o.status.success(), "{err}");
    assert_eq!(text(&o.stdout).trim(), r#"{"buffers":{"out":[0,3,6,9,1,1,1,1]},"printed":[]}"#);
    assert!(err.contains("xir-run: interpreter and Vulkan agree"), "{err}");
}
