//! `Device::timed_dispatches`: one upload, N dispatches back to back, each
//! timed; the timing is their median (with the minimum and maximum) and the
//! outputs are those after the last dispatch (the benchmark's contract,
//! `tests/src/bin/gpu-runtime.rs`).

use xir_tests::device::device;

const INCREMENT: &str = "kernel @inc(%b: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %b, u32 0 : u32
  %w = add %v, u32 1 : u32
  buffer.write %b, u32 0, %w
  return
}
";

#[test]
fn n_timed_dispatches_run_the_kernel_n_times_and_time_each() {
    let Some(mut dev) = device() else { return };
    let m = xir::text::parse_module(INCREMENT, "inc.xir").unwrap();
    let (legal, k, out) = xir_pipelines::backend::legalize_and_compile(&m, Some("inc"), 0, false).unwrap();
    let inputs: xir::interp::Inputs = serde_json::from_str(r#"{"args": {"b": [40]}}"#).unwrap();
    for n in [1u32, 3, 20] {
        dev.timed_dispatches = n;
        let (outputs, timing) = xir_vulkan::run_compiled(&dev, &legal, k, (&out).into(), &inputs, [1, 1, 1]).unwrap();
        assert_eq!(outputs.buffers["b"], serde_json::json!([40 + n]), "{n} dispatches");
        if let (Some(median), Some(min), Some(max)) = (timing.dispatch_ns, timing.min_ns, timing.max_ns) {
            assert!(min <= median && median <= max, "{n}: {min} {median} {max}");
            if n == 1 {
                assert_eq!((min, max), (median, median));
            }
        }
    }
}
