//! `buffer.volatile_read` / `buffer.volatile_write`: the verifier checks
//! them as the plain buffer accesses (located operand and type errors), and
//! the interpreter runs them as ordinary accesses (a thread sees its own
//! writes; an out-of-bounds index is the same located error).

use serde_json::json;
use xir::verify::verify_module;

/// A volatile access takes a typed buffer and moves its element type: a
/// byte buffer, a value or a mistyped element is refused at the
/// instruction, with its line.
#[test]
fn volatile_accesses_are_checked_like_buffer_accesses() {
    let src = "\
kernel @k(%b: byte_buffer, %x: u32, %f: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.volatile_read %b, u32 0 : u32
  buffer.volatile_write %x, u32 0, u32 1
  buffer.volatile_write %f, u32 0, u32 1
  %w = buffer.volatile_read %f, u32 0 : f32
  buffer.volatile_write %f, u32 1, %w
  return
}
";
    let m = xir::text::parse_module(src, "t.xir").expect("parses");
    let shown: Vec<String> = verify_module(&m).iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        [
            "<input>:3:3: error: [operand:buffer] `buffer.volatile_read` operand 0 (`buffer`) must be a `buffer<T>`, \
             found a value of type `byte_buffer` (in @k, bb0, inst0)",
            "<input>:4:3: error: [operand:buffer] `buffer.volatile_write` operand 0 (`buffer`) must be a `buffer<T>`, \
             found a value of type `u32` (in @k, bb0, inst1)",
            "<input>:5:3: error: [buffer_write_type] `buffer.volatile_write`: the written value has type `u32`, \
             expected `f32` (in @k, bb0, inst2)",
        ]
    );
}

#[test]
fn the_interpreter_runs_volatile_accesses_as_ordinary_ones() {
    let src = "\
kernel @k(%v: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.volatile_read %v, %t : u32
  %y = add %x, u32 10 : u32
  buffer.volatile_write %v, %t, %y
  %z = buffer.volatile_read %v, %t : u32
  %w = mul %z, u32 2 : u32
  buffer.volatile_write %v, %t, %w
  return
}
";
    let m = xir::text::parse_module(src, "v.xir").expect("parses");
    assert_eq!(verify_module(&m), vec![]);
    let k = m.func_ids().next().unwrap();
    let run = |v: serde_json::Value| {
        let inputs = serde_json::from_value(json!({"dispatch": [2, 1, 1], "args": {"v": v}})).unwrap();
        xir::interp::run_kernel(&m, k, &inputs).map_err(|e| e.with_file("v.xir").to_string())
    };
    let o = run(json!([1, 4294967295u32])).expect("runs");
    assert_eq!(o.buffers["v"], json!([22, 18]), "(1 + 10) * 2; (-1 + 10) * 2");
    let e = run(json!([1])).expect_err("thread 1 reads past the end");
    assert!(e.starts_with("v.xir:4:3:"), "{e}");
}
