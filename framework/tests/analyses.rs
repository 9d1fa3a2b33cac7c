//! Analyses on small parsed functions: post-dominators, call graph SCCs,
//! fixed-point argument usage, uniformity.

use xir::{
    analysis::{ArgumentUsage, CallGraph, Cfg, PostDomTree, Uniformity, Usage},
    text::parse_module,
    Module, Value,
};

fn parse(src: &str) -> Module {
    parse_module(src, "test.xir").unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

fn inst_named(m: &Module, f: &str, name: &str) -> Value {
    let func = m.func(m.find_function(f).unwrap());
    func.all_insts()
        .find(|(_, i)| func.inst_name(*i) == Some(name))
        .map(|(_, i)| Value::Inst(i))
        .unwrap_or_else(|| panic!("no %{name} in @{f}"))
}

const DIVERGENCE: &str = r#"
kernel @k(%buf: buffer<u32>, %n: u32) block_size(64, 1, 1) {
^entry:
  %tid = extract $thread_id, u32 0 : u32
  %bid = extract $block_id, u32 0 : u32
  %uni = add %bid, %n : u32
  %div = add %tid, %n : u32
  %c = lt %tid, u32 8 : bool
  %slot = alloca : u32
  store %slot, u32 0
  cond_br %c, true ^then, false ^join
^then:
  store %slot, u32 1
  br target ^join
^join:
  %v = load %slot : u32
  %r = buffer.read %buf, %uni : u32
  buffer.write %buf, %div, %v
  return
}
"#;

#[test]
fn post_dominators_of_a_diamond() {
    let m = parse(DIVERGENCE);
    let f = m.func(m.find_function("k").unwrap());
    let pd = PostDomTree::compute(f);
    let blocks = f.blocks();
    let (entry, then, join) = (blocks[0], blocks[1], blocks[2]);
    assert_eq!(pd.ipdom(entry), Some(join));
    assert_eq!(pd.ipdom(then), Some(join));
    assert_eq!(pd.ipdom(join), None, "an exit is post-dominated only by the virtual exit");
    assert!(pd.post_dominates(join, entry));
    assert!(!pd.post_dominates(then, entry));
    assert_eq!(Cfg::compute(f).rpo.len(), 3);
}

#[test]
fn uniformity_follows_registers_memory_and_control() {
    let m = parse(DIVERGENCE);
    let u = Uniformity::compute(&m, m.find_function("k").unwrap());
    assert!(u.is_uniform(inst_named(&m, "k", "uni")), "block_id and kernel args are uniform");
    assert!(u.is_divergent(inst_named(&m, "k", "div")), "thread_id is divergent");
    assert!(u.is_divergent(inst_named(&m, "k", "v")), "a slot written under divergent control");
    assert!(u.is_divergent(inst_named(&m, "k", "r")), "the buffer is written by this kernel");
    let f = m.func(m.find_function("k").unwrap());
    assert!(u.is_divergent_block(f.blocks()[1]));
    assert!(!u.is_divergent_block(f.blocks()[2]), "the join reconverges");
}

#[test]
fn uniform_load_from_a_read_only_buffer_stays_uniform() {
    let m = parse(
        r#"
kernel @k(%src: buffer<u32>, %dst: buffer<u32>) block_size(32, 1, 1) {
^entry:
  %b = extract $block_id, u32 0 : u32
  %x = buffer.read %src, %b : u32
  %t = extract $dispatch_id, u32 0 : u32
  buffer.write %dst, %t, %x
  return
}
"#,
    );
    let u = Uniformity::compute(&m, m.find_function("k").unwrap());
    assert!(u.is_uniform(inst_named(&m, "k", "x")));
    assert!(u.is_divergent(inst_named(&m, "k", "t")));
}

const CALLS: &str = r#"
callable @leaf(%p: ref f32, %q: ref f32, %x: f32) -> void {
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

callable @mid(%a: ref f32, %b: ref f32, %unused: ref f32) -> void {
^entry:
  call @leaf, %a, %b, f32 1.0
  return
}
"#;

#[test]
fn call_graph_sccs_are_callee_first_and_find_recursion() {
    let m = parse(CALLS);
    let cg = CallGraph::compute(&m);
    let id = |n: &str| m.find_function(n).unwrap();
    assert!(cg.is_recursive(id("even")) && cg.is_recursive(id("odd")));
    assert!(!cg.is_recursive(id("leaf")) && !cg.is_recursive(id("mid")));
    let pos = |n: &str| cg.sccs.iter().position(|s| s.contains(&id(n))).unwrap();
    assert!(pos("leaf") < pos("mid"), "callee before caller");
    assert_eq!(cg.sccs[pos("even")].len(), 2);
    assert_eq!(cg.reachable_bottom_up(&[id("mid")]), vec![id("leaf"), id("mid")]);
}

#[test]
fn argument_usage_propagates_through_calls_and_recursion() {
    let m = parse(CALLS);
    let au = ArgumentUsage::compute(&m);
    let id = |n: &str| m.find_function(n).unwrap();
    assert_eq!(au.get(id("leaf"), 0), Usage::WRITE);
    assert_eq!(au.get(id("leaf"), 1), Usage::READ);
    assert_eq!(au.get(id("leaf"), 2), Usage::READ);
    assert_eq!(au.get(id("mid"), 0), Usage::WRITE, "written by the callee");
    assert_eq!(au.get(id("mid"), 1), Usage::READ);
    assert_eq!(au.get(id("mid"), 2), Usage::NONE);
    // The recursive pair reaches a fixed point: odd reads p, so even reads it too.
    assert_eq!(au.get(id("even"), 0), Usage::READ);
    assert_eq!(au.get(id("odd"), 0), Usage::READ);
}

/// Dominance frontiers of a diamond followed by a loop, exactly: the arms'
/// frontier is the join, the loop header and body have the header, and
/// `frontiers` is the flat table block by block.
#[test]
fn dominance_frontiers_of_a_diamond_and_a_loop() {
    const SRC: &str = r#"
kernel @k(%n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 8 : bool
  cond_br %c, true ^a, false ^b
^a:
  br target ^join
^b:
  br target ^join
^join:
  br target ^head
^head:
  %d = lt %n, u32 3 : bool
  cond_br %d, true ^body, false ^exit
^body:
  br target ^head
^exit:
  return
}
"#;
    let m = parse(SRC);
    let f = m.func(m.find_function("k").unwrap());
    let block = |name: &str| *f.blocks().iter().find(|&&b| f.block_name(b) == Some(name)).unwrap();
    let cfg = Cfg::compute(f);
    let dom = xir::analysis::DomTree::from_cfg(&cfg);
    let table = dom.frontier_table(&cfg);
    let lists = dom.frontiers(&cfg);
    let want = [
        ("entry", vec![]),
        ("a", vec!["join"]),
        ("b", vec!["join"]),
        ("join", vec![]),
        ("head", vec!["head"]),
        ("body", vec!["head"]),
        ("exit", vec![]),
    ];
    for (b, df) in want {
        let want: Vec<xir::Block> = df.iter().map(|n| block(n)).collect();
        assert_eq!(table.get(block(b).index()), &want[..], "DF(^{b})");
        assert_eq!(lists[block(b).index()], want, "frontiers()[^{b}]");
    }
}
