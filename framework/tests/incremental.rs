//! The salsa database recomputes only what an edit can affect. Re-execution
//! is counted from salsa's `WillExecute` events, never timed.

use std::collections::BTreeSet;
use std::sync::Arc;

use xir::db::{FunctionCompiler, Session};

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

/// A compiler that changes nothing (the queries still run it).
fn identity() -> Option<FunctionCompiler> {
    Some(Arc::new(|_: &mut xir::Module| Ok(())))
}

/// Diagnose, then compile every function, as an editor would after an update.
fn compile_all(s: &mut Session) {
    assert!(s.diagnostics().is_empty(), "{:?}", s.diagnostics());
    let names: Vec<String> = s.function_names().map(String::from).collect();
    for n in names {
        s.compiled(&n).unwrap().unwrap();
    }
}

#[test]
fn editing_one_leaf_body_reexecutes_only_it_and_its_callers() {
    let mut s = Session::new("m.xir", "identity", identity());
    let first = s.update(&module(|_| None));
    assert_eq!((first.functions, first.changed.len()), (100, 100));
    compile_all(&mut s);
    s.take_executed();

    let unchanged = s.update(&module(|_| None));
    assert_eq!(unchanged, xir::db::UpdateReport { functions: 100, ..Default::default() });
    compile_all(&mut s);
    assert_eq!(s.take_executed(), Vec::<String>::new(), "nothing changed, nothing runs");

    let edit = s.update(&module(|i| (i == 7).then(|| leaf(7, "77.0"))));
    assert_eq!(edit.changed, ["leaf7"]);
    assert_eq!(edit.affected, ["leaf7", "main"], "the kernel calls leaf7");
    compile_all(&mut s);
    assert_eq!(
        set(&s.take_executed()),
        set(&[
            "signature(@leaf7)".into(),
            "parse_function(@leaf7)".into(),
            "check_function(@leaf7)".into(),
            "callees(@leaf7)".into(),
            "linked(@leaf7)".into(),
            "compiled(@leaf7)".into(),
            // main links leaf7's body: its closure's result changed.
            "linked(@main)".into(),
            "compiled(@main)".into(),
        ]),
    );
    let leaf7 = s.compiled("leaf7").unwrap().unwrap();
    assert!(leaf7.contains("f32 77.0"), "{leaf7}");
    // The kernel's linked module holds the edited callee's body.
    let main = s.linked("main").unwrap().unwrap();
    let callee = main.module.find_function("leaf7").unwrap();
    assert!(xir::text::print_function(&main.module, main.module.func(callee)).contains("f32 77.0"));

    // An edit of a leaf no kernel calls recompiles that leaf only.
    s.update(&module(|i| match i {
        7 => Some(leaf(7, "77.0")),
        50 => Some(leaf(50, "5.5")),
        _ => None,
    }));
    compile_all(&mut s);
    let linked: Vec<String> = s.take_executed().into_iter().filter(|e| e.starts_with("linked(")).collect();
    assert_eq!(linked, ["linked(@leaf50)"]);
}

#[test]
fn editing_a_signature_recompiles_the_function_and_its_callers_only() {
    let mut s = Session::new("m.xir", "identity", identity());
    s.update(&module(|_| None));
    compile_all(&mut s);
    s.take_executed();
    // leaf3 now returns its argument unchanged but takes a second parameter;
    // the caller passes it. Both change; no other function does.
    let text = module(|i| {
        (i == 3).then(|| "callable @leaf3(%x: f32, %z: f32) -> f32 {\n^entry:\n  return %x\n}\n\n".to_string())
    })
    .replace("call @leaf3, f32 1.0", "call @leaf3, f32 1.0, f32 2.0");
    let edit = s.update(&text);
    assert_eq!(edit.changed, ["leaf3", "main"]);
    compile_all(&mut s);
    let executed = s.take_executed();
    let of = |q: &str| set(&executed.iter().filter(|e| e.starts_with(q)).cloned().collect::<Vec<_>>());
    assert_eq!(of("parse_function("), set(&["parse_function(@leaf3)".into(), "parse_function(@main)".into()]));
    assert_eq!(of("linked("), set(&["linked(@leaf3)".into(), "linked(@main)".into()]));
}

#[test]
fn moving_functions_down_reruns_nothing_of_theirs() {
    let mut s = Session::new("m.xir", "identity", identity());
    s.update(&module(|_| None));
    compile_all(&mut s);
    s.take_executed();
    // Three lines more at the top: every function moves, none changes.
    let edit = s.update(&format!("// a\n// b\n\n{}", module(|_| None)));
    assert_eq!(edit.changed, Vec::<String>::new());
    compile_all(&mut s);
    assert_eq!(s.take_executed(), Vec::<String>::new());
    assert_eq!(s.first_line("leaf0"), Some(4), "the blank line keeps the comments off leaf0");
    assert_eq!(s.first_line("leaf1"), Some(10));
}

#[test]
fn adding_and_removing_a_function_reruns_only_the_functions_naming_it() {
    let mut s = Session::new("m.xir", "identity", identity());
    // main calls @extra, which does not exist yet: main does not parse.
    let with_call = module(|_| None)
        .replace("  return\n}\n", "  %e = call @extra, f32 1.0 : f32\n  buffer.write %out, u32 20, %e\n  return\n}\n");
    s.update(&with_call);
    let diags = s.diagnostics();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].function.as_deref(), Some("main"));
    assert!(s.compiled("main").unwrap().is_err());
    s.take_executed();
    let extra = "callable @extra(%x: f32) -> f32 {\n^entry:\n  return %x\n}\n\n";
    let edit = s.update(&format!("{extra}{with_call}"));
    assert_eq!(edit.changed, ["extra"]);
    assert_eq!(edit.affected, ["extra", "main"]);
    compile_all(&mut s);
    let parses: Vec<String> = s.take_executed().into_iter().filter(|e| e.starts_with("parse_function(")).collect();
    assert_eq!(set(&parses), set(&["parse_function(@extra)".into(), "parse_function(@main)".into()]));
    // And gone again.
    let edit = s.update(&with_call);
    assert_eq!(
        (edit.removed.as_slice(), edit.affected.as_slice()),
        (&["extra".to_string()][..], &["main".to_string()][..])
    );
    assert_eq!(s.diagnostics().len(), 1);
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
    let cg = s.call_graph();
    assert_eq!(cg.sccs.len(), 100);
    let pos = |n: &str| cg.sccs.iter().position(|c| c.iter().any(|x| x == n)).unwrap();
    assert!(pos("leaf3") < pos("main"), "callees come first");
    s.take_executed();

    // A body edit that keeps the calls: the call graph is reused (callees
    // re-runs, returns the same names, and is backdated).
    s.update(&module(|i| (i == 4).then(|| leaf(4, "44.0"))));
    s.call_graph();
    let executed = s.take_executed();
    assert_eq!(executed, ["parse_function(@leaf4)", "callees(@leaf4)", "signature(@leaf4)"], "{executed:?}");
    // Analyses of the edited function re-run; others are reused.
    let leaf4 = s.function("leaf4").unwrap();
    let leaf5 = s.function("leaf5").unwrap();
    xir::db::uniformity(s.db(), leaf4);
    xir::db::uniformity(s.db(), leaf5);
    let executed = s.take_executed();
    assert_eq!(executed, ["uniformity(@leaf4)"], "{executed:?}");
}

#[test]
fn diagnostics_are_in_file_coordinates_of_the_latest_file() {
    let mut s = Session::new("m.xir", "identity", None);
    let text = module(|i| {
        (i == 2).then(|| {
            "callable @leaf2(%x: f32) -> f32 {\n^entry:\n  %y = frobnicate %x : f32\n  return %y\n}\n\n".to_string()
        })
    });
    s.update(&text);
    let short = |d: &[xir::Diagnostic]| xir::diag::render_short(d);
    // leaf2 starts on line 13 (two 6-line leaves before it); the bad opcode is its third line.
    assert_eq!(short(&s.diagnostics()), "m.xir:15:8: error: [parse] unknown opcode `frobnicate` (in @leaf2)\n");
    // The same error after two lines were added above it, in the edit's file.
    s.update_file("edit.xir", &format!("\n\n{text}"));
    assert_eq!(short(&s.diagnostics()), "edit.xir:17:8: error: [parse] unknown opcode `frobnicate` (in @leaf2)\n");
    // A second @leaf2 is a redefinition at its header.
    s.update_file("edit.xir", &format!("{text}{}", leaf(2, "3.0")));
    let d = s.diagnostics();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(short(&d[1..]), "edit.xir:619:10: error: [parse] redefinition of function `@leaf2` (in @leaf2)\n");
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
    let by_query = s.argument_usage();
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

/// After every edit of a random sequence (bodies changed, functions
/// removed, repeated, renamed, broken, lines inserted), the edited session
/// answers what a fresh session on the same text answers.
#[test]
fn an_edited_session_agrees_with_a_fresh_one() {
    let mut text = module(|_| None);
    let mut s = Session::new("m.xir", "identity", identity());
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % m.max(1)
    };
    for step in 0..60 {
        let i = next(99);
        let this = leaf(i, &format!("{i}.0"));
        text = match next(6) {
            0 => text.replacen(&this, &leaf(i, "0.5"), 1),
            1 => text.replacen(&this, "", 1),
            2 => format!("{text}{}", leaf(i, "9.0")),
            3 => text.replacen(&format!("@leaf{i}("), &format!("@renamed{step}("), 1),
            4 => text.replacen(&this, &this.replace("mul", "mull"), 1),
            _ => format!("\n// moved\n{text}"),
        };
        s.update(&text);
        let mut fresh = Session::new("m.xir", "identity", identity());
        fresh.update(&text);
        let short = |d: &[xir::Diagnostic]| xir::diag::render_short(d);
        assert_eq!(short(&s.diagnostics()), short(&fresh.diagnostics()), "step {step}");
        let names: Vec<String> = fresh.function_names().map(String::from).collect();
        assert_eq!(s.function_names().collect::<Vec<_>>(), names, "step {step}");
        for n in &names {
            assert_eq!(s.first_line(n), fresh.first_line(n), "step {step}: @{n}");
            assert_eq!(s.compiled(n), fresh.compiled(n), "step {step}: @{n}");
        }
    }
}

/// Two functions with a local struct each; `k`'s stored constant is `v`.
fn slots(v: u32) -> String {
    let body = |name: &str, head: &str, v: u32| {
        format!(
            "{head} {{\n^entry:\n  %s = alloca : struct<align 4>{{u32, u32}}\n  %s0 = gep %s, u32 0 : u32\n  \
             store %s, struct<align 4>{{u32, u32}} [1, 2]\n  store %s0, u32 {v}\n  %r = load %s0 : u32\n  \
             {name}\n}}\n\n"
        )
    };
    let mut t = body("return %r", "callable @g() -> u32", 3);
    t.push_str(&body("buffer.write %out, u32 0, %r\n  return", "kernel @k(%out: buffer<u32>) block_size(1, 1, 1)", v));
    t
}

#[test]
fn field_analyses_are_cached_queries() {
    let mut s = Session::new("m.xir", "identity", None);
    s.update(&slots(5));
    assert!(s.diagnostics().is_empty(), "{:?}", s.diagnostics());
    let query = |s: &Session, name: &str| {
        let f = s.function(name).unwrap();
        let pu = xir::db::pointer_usage(s.db(), f).as_ref().expect("a body");
        let masks = xir::db::field_masks(s.db(), f).as_ref().expect("a body");
        let scopes = xir::db::lexical_scopes(s.db(), f).as_ref().expect("a body");
        (pu.dead_stores().len(), masks.roots().len(), scopes.constructs.len())
    };
    // The whole store is dead in field 1 (never read) and killed in field 0.
    assert_eq!(query(&s, "k"), (1, 1, 0));
    assert_eq!(query(&s, "g"), (1, 1, 0));
    s.take_executed();
    query(&s, "k");
    query(&s, "g");
    assert_eq!(s.take_executed(), Vec::<String>::new(), "unchanged: nothing recomputes");

    s.update(&slots(7));
    assert_eq!(query(&s, "k"), (1, 1, 0));
    query(&s, "g");
    let executed = s.take_executed();
    assert_eq!(
        executed,
        ["parse_function(@k)", "field_masks(@k)", "pointer_usage(@k)", "lexical_scopes(@k)"],
        "{executed:?}"
    );
}
