//! The constant UBO planner on a parsed kernel: the large array constant a
//! kernel indexes is found in first-use order, placed at offset 0 with its
//! std140 layout, and every element the interpreter reads through the
//! constant equals the element the serialized std140 bytes hold at
//! `index * 16`; the small constant beside it stays inline (under the
//! threshold), and a 16 KiB + 1 element table is kept inline with a reason.

mod common;

use common::*;
use xir_spirv::plan::constant_ubo::{candidates, plan_constants, PORTABLE_UBO_RANGE};

fn kernel(n: usize) -> String {
    let table: Vec<String> = (0..n).map(|i| format!("{:.1}", i as f32 * 1.5 - 7.0)).collect();
    format!(
        "kernel @k(%out: buffer<f32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  \
         %j = mod %i, u32 {n} : u32\n  \
         %x = extract array<f32, {n}> [{}], %j : f32\n  \
         %y = extract array<f32, 2> [1.0, 2.0], u32 1 : f32\n  \
         %z = add %x, %y : f32\n  \
         buffer.write %out, %i, %z\n  return\n}}\n",
        table.join(", ")
    )
}

fn order(m: &xir::Module) -> Vec<(xir::FuncId, Vec<xir::Block>)> {
    let k = kernel_of(m);
    let plans = xir_spirv::plan::plan_all(m, k, None).expect("plans");
    plans.callgraph.order.iter().map(|f| (*f, plans.closures[f].blocks.clone())).collect()
}

#[test]
fn a_kernel_table_is_placed_and_its_bytes_match_the_interpreter() {
    let n = 200;
    let m = parse(&kernel(n));
    let cands = candidates(&m, &order(&m));
    assert_eq!(cands.len(), 2, "the table and the small constant");
    let plan = plan_constants(&m, &cands, PORTABLE_UBO_RANGE);
    assert_eq!(plan.placed.len(), 1);
    assert!(plan.inline.is_empty(), "the small constant is no candidate: {:?}", plan.inline);
    let p = &plan.placed[0];
    assert_eq!((p.offset, p.layout.len, p.layout.stride, p.layout.size), (0, n as u64, 16, 16 * n as u64));
    assert_eq!(p.constant, cands[0]);
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [{n}, 1, 1], "args": {{"out": [{}]}}}}"#,
        vec!["0.0"; n].join(", ")
    ))
    .expect("inputs");
    let out = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter");
    let got = out.buffers["out"].as_array().expect("array").clone();
    for (i, v) in got.iter().enumerate() {
        let from_ubo = f32::from_le_bytes(plan.bytes[i * 16..i * 16 + 4].try_into().unwrap());
        assert_eq!(v.as_f64().expect("number") as f32, from_ubo + 2.0, "element {i}");
    }
}

#[test]
fn one_element_over_16_kib_stays_inline() {
    for (n, placed) in [(1024usize, true), (1025, false)] {
        let m = parse(&kernel(n));
        let plan = plan_constants(&m, &candidates(&m, &order(&m)), PORTABLE_UBO_RANGE);
        assert_eq!(plan.placed.len() == 1, placed, "{n} elements");
        if !placed {
            assert!(plan.inline[0].1.contains("exceed the portable uniform-buffer range"), "{:?}", plan.inline);
        }
    }
}
