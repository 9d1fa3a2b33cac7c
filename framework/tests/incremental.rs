//! The salsa database recomputes only what an edit can affect. Re-execution
//! is counted from salsa's `WillExecute` events, never timed.

use std::collections::BTreeSet;

use xir::db::Session;

fn leaf(i: usize, factor: &str) -> String {
    format!("callable @leaf{i}(%x: f32) -> f32 {{\n^entry:\n  %y = mul %x, f32 {factor} : f32\n  return %y\n}}\n\n")
}

/// 99 leaf callables and one kernel calling leaf0..leaf9.
fn module(edit: impl Fn(usize) -> Option<String>) -> String {
    let mut text = String::new();
    for i in 0..99 {
        text.push_str(&edit(i).unwrap_or_else(|| leaf(i, &format!("{i}.0"))));
    }
    text.push_str("kernel @main(%out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n");
    for i in 0..10 {
        text.push_str(&format!("  %v{i} = call @leaf{i}, f32 1.0 : f32\n  buffer.write %out, u32 {i}, %v{i}\n"));
    }
    text.push_str("  return\n}\n");
    text
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

#[test]
fn editing_one_leaf_body_reexecutes_only_its_queries() {
    let mut s = Session::new("m.xir", "identity", None);
    let (results, first) = s.update(&module(|_| None));
    assert_eq!(first.functions, 100);
    assert_eq!(first.recompiled.len(), 100);
    assert!(results.iter().all(|(_, r)| r.is_ok()), "{results:?}");

    let (_, unchanged) = s.update(&module(|_| None));
    assert!(unchanged.executed.is_empty(), "nothing changed, nothing runs: {:?}", unchanged.executed);
    assert_eq!(unchanged.reused(), 100);

    let (results, edit) = s.update(&module(|i| (i == 7).then(|| leaf(7, "77.0"))));
    assert_eq!(
        set(&edit.executed),
        set(&[
            "signature(@leaf7)".into(),
            "referenced_functions(@leaf7)".into(),
            "parse_function(@leaf7)".into(),
            "compiled(@leaf7)".into(),
        ]),
    );
    assert_eq!(edit.recompiled, ["leaf7"]);
    assert_eq!(edit.reused(), 99);
    let leaf7 = &results.iter().find(|(n, _)| n == "leaf7").unwrap().1;
    assert!(leaf7.as_ref().unwrap().contains("f32 77.0"), "{leaf7:?}");
}

#[test]
fn editing_a_signature_recompiles_the_function_and_its_callers_only() {
    let mut s = Session::new("m.xir", "identity", None);
    s.update(&module(|_| None));
    // leaf3 now returns its argument unchanged but takes a second parameter;
    // the caller passes it. Both change; no other function does.
    let text = module(|i| {
        (i == 3).then(|| "callable @leaf3(%x: f32, %z: f32) -> f32 {\n^entry:\n  return %x\n}\n\n".to_string())
    })
    .replace("call @leaf3, f32 1.0", "call @leaf3, f32 1.0, f32 2.0");
    let (results, edit) = s.update(&text);
    assert!(results.iter().all(|(_, r)| r.is_ok()), "{results:?}");
    assert_eq!(set(&edit.recompiled), set(&["leaf3".into(), "main".into()]));
    // Every other function's parse is reused: the changed signature is only
    // visible to the function that names it.
    let parses: Vec<_> = edit.executed.iter().filter(|e| e.starts_with("parse_function(")).cloned().collect();
    assert_eq!(set(&parses), set(&["parse_function(@leaf3)".into(), "parse_function(@main)".into()]));
}

#[test]
fn analyses_are_queries_too() {
    let mut s = Session::new("m.xir", "identity", None);
    s.update(&module(|_| None));
    let dom = s.dominators("leaf5").expect("leaf5 has a body");
    assert!(dom.idom(xir::Block(0)).is_none());
    assert_eq!(s.callees("main").len(), 10);
    assert!(s.callees("leaf5").is_empty());
    let leaf5 = s.function("leaf5").unwrap();
    let db = s.db();
    assert!(xir::db::post_dominators(db, leaf5).is_some());
    assert!(xir::db::dominance_frontiers(db, leaf5).is_some());
    assert!(matches!(xir::db::loop_forest(db, leaf5), Some(Ok(_))));
    assert!(xir::db::uniformity(db, leaf5).is_some());
    let cg = s.call_graph().unwrap();
    assert_eq!(cg.sccs.len(), 100);
    let pos = |n: &str| cg.sccs.iter().position(|c| c.iter().any(|x| x == n)).unwrap();
    assert!(pos("leaf3") < pos("main"), "callees come first");
    s.take_executed();

    // A body edit that keeps the calls: the call graph is reused (callees
    // re-runs, returns the same names, and is backdated).
    s.update(&module(|i| (i == 4).then(|| leaf(4, "44.0"))));
    s.call_graph();
    let executed = s.take_executed();
    assert_eq!(executed, ["callees(@leaf4)"], "{executed:?}");
    // Analyses of the edited function re-run; others are reused.
    let leaf4 = s.function("leaf4").unwrap();
    let leaf5 = s.function("leaf5").unwrap();
    xir::db::uniformity(s.db(), leaf4);
    xir::db::uniformity(s.db(), leaf5);
    let executed = s.take_executed();
    assert_eq!(executed, ["uniformity(@leaf4)"], "{executed:?}");
}

#[test]
fn a_parse_error_is_reported_in_file_coordinates() {
    let mut s = Session::new("m.xir", "identity", None);
    let text = module(|i| {
        (i == 2).then(|| {
            "callable @leaf2(%x: f32) -> f32 {\n^entry:\n  %y = frobnicate %x : f32\n  return %y\n}\n\n".to_string()
        })
    });
    let (results, _) = s.update(&text);
    let err = results.iter().find(|(n, _)| n == "leaf2").unwrap().1.as_ref().unwrap_err();
    // leaf2 starts on line 13 (two 6-line leaves before it); the bad opcode is its third line.
    assert!(err.contains("m.xir:15:"), "{err}");
}

const CALLS: &str = r#"callable @leaf(%p: ref f32, %q: ref f32, %x: f32) -> void {
^entry:
  %v = load %q : f32
  %w = add %v, %x : f32
  store %p, %w
  return
}

callable @even(%p: ref f32, %n: u32) -> void {
^entry:
  %z = eq %n, u32 0 : bool
  cond_br %z, true ^done, false ^rec
^rec:
  %m = sub %n, u32 1 : u32
  call @odd, %p, %m
  br target ^done
^done:
  return
}

callable @odd(%p: ref f32, %n: u32) -> void {
^entry:
  %v = load %p : f32
  call @even, %p, %n
  return
}

extern @ext(%p: ref f32) -> void

callable @mid(%a: ref f32, %b: ref f32, %unused: ref f32, %e: ref f32) -> void {
^entry:
  call @leaf, %a, %b, f32 1.0
  call @ext, %e
  return
}
"#;

#[test]
fn argument_usage_is_a_query_that_agrees_with_the_whole_module_analysis() {
    let mut s = Session::new("m.xir", "identity", None);
    s.update(CALLS);
    let by_query = s.argument_usage().unwrap();
    let whole = xir::text::parse_module(CALLS, "m.xir").unwrap();
    let direct = xir::analysis::ArgumentUsage::compute(&whole);
    for f in whole.func_ids() {
        let name = &whole.func(f).name;
        assert_eq!(by_query[name], direct.usage[f.index()], "@{name}");
    }
    use xir::analysis::Usage;
    assert_eq!(by_query["mid"], [Usage::WRITE, Usage::READ, Usage::NONE, Usage::READ_WRITE]);
    assert_eq!(by_query["even"], [Usage::READ, Usage::READ]);
}
