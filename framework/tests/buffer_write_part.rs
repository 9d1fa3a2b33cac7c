//! `buffer.write_part`: a write to the part of a buffer element a path
//! reaches. The verifier walks the path as a gep's (one located error per
//! rule), the text format round-trips it, the interpreter writes only the
//! part (other invocations' writes to the element's other parts survive;
//! an index out of range is the located error of `buffer.write`), and alias
//! analysis places it inside the element.

use serde_json::json;
use xir::analysis::{AliasAnalysis, AliasResult};
use xir::verify::verify_module;

fn parse(src: &str) -> xir::Module {
    xir::text::parse_module(src, "t.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

/// Each rule of `buffer_write_part_path` rejects its case at the
/// instruction: no path, a dynamic struct member, a constant out of range,
/// a path into a scalar, a non-integer index (its operand class), a value of another type than
/// the part (and a whole element is not a part).
#[test]
fn the_path_is_checked_as_a_geps() {
    let src = "\
kernel @k(%b: buffer<struct<align 16>{vec<f32, 3>, u32}>, %i: u32, %f: f32) block_size(1, 1, 1) {
^entry:
  buffer.write_part %b, u32 0, f32 1.0
  buffer.write_part %b, u32 0, u32 1, %i
  buffer.write_part %b, u32 0, f32 1.0, u32 0, u32 3
  buffer.write_part %b, u32 0, f32 1.0, u32 1, u32 0
  buffer.write_part %b, u32 0, f32 1.0, u32 0, %f
  buffer.write_part %b, u32 0, u32 1, u32 0, u32 2
  buffer.write_part %b, u32 0, f32 1.0, u32 0
  buffer.write_part %b, u32 0, f32 1.0, u32 0, %i
  buffer.write_part %b, %i, u32 7, u32 1
  return
}
";
    let shown: Vec<String> = verify_module(&parse(src)).iter().map(|d| d.to_string()).collect();
    let at = |line: u32, inst: u32, msg: &str| {
        format!("<input>:{line}:3: error: [buffer_write_part_path] `buffer.write_part`: {msg} (in @k, bb0, inst{inst})")
    };
    assert_eq!(
        shown,
        [
            at(3, 0, "a partial write needs a path into the element (a whole element is `buffer.write`)"),
            at(4, 1, "index 0 selects a struct member and must be a constant"),
            at(5, 2, "index 1 (3) is out of range for `vec<f32, 3>`"),
            at(6, 3, "index 1 indexes into non-aggregate `u32`"),
            // (The operand class refuses a non-integer path index first.)
            "<input>:7:3: error: [operand:index] `buffer.write_part` operand 4 (`path`) must be an integer scalar, \
             found a value of type `f32` (in @k, bb0, inst4)"
                .into(),
            at(8, 5, "the written value has type `u32`, expected `f32`"),
            at(9, 6, "the written value has type `f32`, expected `vec<f32, 3>`"),
        ]
    );
}

const PARTICLES: &str = "\
kernel @k(%p: buffer<struct<align 16>{vec<f32, 3>, u32}>, %lane: u32) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %first = eq %t, u32 0 : bool
  if %first, true ^pos, false ^tag, merge ^done
^pos:
  buffer.write_part %p, u32 0, f32 2.5, u32 0, %lane
  br target ^done
^tag:
  buffer.write_part %p, u32 0, u32 9, u32 1
  br target ^done
^done:
  return
}
";

#[test]
fn the_text_format_round_trips_it() {
    let m = parse(PARTICLES);
    assert_eq!(verify_module(&m), vec![]);
    let printed = xir::text::print_module(&m);
    assert!(printed.contains("  buffer.write_part %p, u32 0, f32 2.5, u32 0, %lane\n"), "{printed}");
    assert!(printed.contains("  buffer.write_part %p, u32 0, u32 9, u32 1\n"), "{printed}");
    assert_eq!(xir::text::print_module(&parse(&printed)), printed);
}

/// Two invocations write different parts of one element: thread 0 a lane
/// of the vector member (a dynamic index), thread 1 the `u32` member. Both
/// writes survive, and nothing else of the element changes (a whole-element
/// read-modify-write would lose one of them).
#[test]
fn parts_written_by_different_invocations_both_survive() {
    let m = parse(PARTICLES);
    let k = m.func_ids().next().unwrap();
    let run = |lane: u32| {
        let inputs = serde_json::from_value(json!({"dispatch": [2, 1, 1], "args": {
            "p": [[[1.0, 2.0, 3.0], 4], [[5.0, 6.0, 7.0], 8]], "lane": lane}}))
        .unwrap();
        xir::interp::run_kernel(&m, k, &inputs).map_err(|e| e.with_file("t.xir").to_string())
    };
    let o = run(1).expect("runs");
    assert_eq!(o.buffers["p"], json!([[[1.0, 2.5, 3.0], 9], [[5.0, 6.0, 7.0], 8]]));
    // Lane 3 is past the vector: the same located error as any index out of range.
    let e = run(3).expect_err("lane 3 of a 3-lane vector");
    assert_eq!(e, "t.xir:7:3: error: [interp] index 3 out of bounds (length 3) (in @k, bb1, inst3)");
}

#[test]
fn an_element_index_out_of_range_is_the_error_of_a_buffer_write() {
    let src = |op: &str| {
        format!("kernel @k(%b: buffer<vec<u32, 2>>) block_size(1, 1, 1) {{\n^entry:\n  {op}\n  return\n}}\n")
    };
    let run = |op: &str| {
        let m = parse(&src(op));
        let k = m.func_ids().next().unwrap();
        let inputs = serde_json::from_value(json!({"dispatch": [1, 1, 1], "args": {"b": [[1, 2]]}})).unwrap();
        xir::interp::run_kernel(&m, k, &inputs).map_err(|e| e.with_file("t.xir").to_string())
    };
    let part = run("buffer.write_part %b, u32 1, u32 5, u32 0").expect_err("element 1 of 1");
    let whole = run("buffer.write %b, u32 1, vec<u32, 2> [5, 5]").expect_err("element 1 of 1");
    assert_eq!(part, whole);
    assert_eq!(part, "t.xir:3:3: error: [interp] index 1 out of bounds (length 1) (in @k, bb0, inst0)");
    let o = run("buffer.write_part %b, u32 0, u32 5, u32 1").expect("in range");
    assert_eq!(o.buffers["b"], json!([[1, 5]]));
}

/// The part lies inside its element: it may alias the whole element (never
/// must), is disjoint from the element's other constant parts, and writes
/// (never reads) what overlaps it.
#[test]
fn alias_analysis_places_the_part_inside_its_element() {
    let src = "\
kernel @k(%b: buffer<struct<align 16>{vec<f32, 3>, u32}>, %i: u32) block_size(1, 1, 1) {
^entry:
  %e = buffer.read %b, %i : struct<align 16>{vec<f32, 3>, u32}
  buffer.write_part %b, %i, u32 3, u32 1
  buffer.write_part %b, %i, f32 1.0, u32 0, u32 2
  buffer.write_part %b, %i, f32 2.0, u32 0, u32 2
  return
}
";
    let m = parse(src);
    assert_eq!(verify_module(&m), vec![]);
    let k = m.func_ids().next().unwrap();
    let f = m.func(k);
    let aa = AliasAnalysis::compute(&m, k);
    let insts = f.block(f.blocks()[0]).insts();
    let (read, tag, lane, lane_again) = (insts[0], insts[1], insts[2], insts[3]);
    let loc = |i| *aa.access(i).expect("located");
    assert_eq!(aa.alias_locations(&loc(read), &loc(tag)), AliasResult::MayAlias);
    assert_eq!(aa.alias_locations(&loc(tag), &loc(lane)), AliasResult::NoAlias);
    assert_eq!(aa.alias_locations(&loc(lane), &loc(lane_again)), AliasResult::MustAlias);
    assert_eq!(aa.sub_path(&loc(read), &loc(lane)).as_deref(), Some(&[0, 2][..]));
    assert_eq!(aa.sub_path(&loc(lane), &loc(read)), None);
    let mr = aa.mod_ref(f, tag, &loc(read));
    assert!(mr.writes && !mr.reads);
    assert!(!aa.mod_ref(f, tag, &loc(lane)).writes);
}
