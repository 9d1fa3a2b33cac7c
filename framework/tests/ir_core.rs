//! The core IR API: use lists stay exact through mutation, replace-all-uses
//! retargets every use, and cloning a function keeps its metadata
//! (including reg2mem spill provenance).

use xir::{text::parse_module, FuncId, Location, MetadataFields, Opcode, SpillKind, Value};

const SRC: &str = r#"
// the kernel
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  // a spill slot
  %slot = alloca : u32 !spill(phi)
  %a = add %n, u32 1 : u32 !loc("src.cpp", 3, 7)
  %b = mul %a, %a : u32
  store %slot, %b
  %c = load %slot : u32
  buffer.write %out, u32 0, %c
  return
}
"#;

fn named(m: &xir::Module, f: FuncId, name: &str) -> Value {
    let func = m.func(f);
    func.all_insts().find(|(_, i)| func.inst_name(*i) == Some(name)).map(|(_, i)| Value::Inst(i)).unwrap()
}

#[test]
fn use_lists_and_replace_all_uses_are_exact() {
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let f = m.find_function("k").unwrap();
    let (a, b, n) = (named(&m, f, "a"), named(&m, f, "b"), Value::Arg(1));
    assert_eq!(m.func(f).uses(a).len(), 2, "both operands of the mul");
    assert_eq!(m.func(f).uses(n).len(), 1);
    m.func_mut(f).replace_all_uses(a, n);
    assert!(m.func(f).uses(a).is_empty());
    assert_eq!(m.func(f).uses(n).len(), 3);
    let mul = b.as_inst().unwrap();
    assert_eq!(m.func(f).inst(mul).operands.as_slice(), &[n, n]);
    // Removing the now-dead add leaves the use lists exact.
    m.func_mut(f).remove_inst(a.as_inst().unwrap());
    assert!(xir::verify::verify_module(&m).is_empty(), "{}", xir::diag::render(&xir::verify::verify_module(&m)));
    m.func_mut(f).remove_inst(mul);
    assert_eq!(m.func(f).uses(n).len(), 0, "the mul's uses went with it");
}

#[test]
fn cloning_a_function_keeps_its_metadata() {
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let f = m.find_function("k").unwrap();
    let mut copy = m.func(f).clone();
    copy.name = "k2".into();
    let g = m.add_function(copy);
    for name in ["slot", "a", "b", "c"] {
        let (x, y) = (named(&m, f, name).as_inst().unwrap(), named(&m, g, name).as_inst().unwrap());
        assert_eq!(m.func(f).inst_md(x), m.func(g).inst_md(y), "%{name}");
    }
    let slot = named(&m, g, "slot").as_inst().unwrap();
    assert_eq!(m.func(g).inst_md(slot).spill, Some(SpillKind::Phi));
    assert_eq!(m.func(g).inst_md(slot).comments, ["a spill slot"]);
    let a = named(&m, g, "a").as_inst().unwrap();
    assert_eq!(m.func(g).inst_md(a).location, Some(Box::new(Location { file: "src.cpp".into(), line: 3, col: 7 })));
    assert_eq!(m.func(g).md, MetadataFields { comments: vec!["the kernel".into()], ..(*m.func(g).md).clone() }.into());
    assert_eq!(m.func(g).inst(a).opcode, Opcode::Add);
    // The clone round-trips through text with everything it carries.
    let printed = xir::text::print_module(&m);
    assert!(printed.contains("kernel @k2("), "{printed}");
    assert_eq!(xir::text::print_module(&parse_module(&printed, "t2.xir").unwrap()), printed);
}

const TWO_BLOCKS: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %a = add %n, u32 1 : u32
  br target ^next
^next:
  %b = mul %a, %a : u32
  buffer.write %out, u32 0, %b
  return
}
"#;

/// `live_insts_by_id` is `all_insts` as a set, in id order: removed
/// instructions, instructions of a removed block and of a block dropped from
/// the layout are not in it, and appended ones are.
#[test]
fn live_insts_by_id_is_all_insts_in_id_order() {
    let mut m = parse_module(TWO_BLOCKS, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let same = |m: &xir::Module| {
        let f = m.func(fid);
        let by_id: Vec<xir::Inst> = f.live_insts_by_id().map(|(i, _)| i).collect();
        assert!(by_id.windows(2).all(|w| w[0] < w[1]), "id order: {by_id:?}");
        let mut layout: Vec<xir::Inst> = f.all_insts().map(|(_, i)| i).collect();
        layout.sort();
        assert_eq!(by_id, layout);
        by_id.len()
    };
    assert_eq!(same(&m), 5);
    let f = m.func_mut(fid);
    let (entry, next) = (f.blocks()[0], f.blocks()[1]);
    let b = f.block(next).insts()[0];
    f.replace_all_uses(Value::Inst(b), Value::Arg(1));
    f.remove_inst(b);
    assert_eq!(same(&m), 4);
    let f = m.func_mut(fid);
    let extra =
        f.insert_before_terminator(entry, xir::InstData::new(Opcode::Add, f.inst(f.block(entry).insts()[0]).ty));
    f.set_operands(extra, [Value::Arg(1), Value::Arg(1)].into_iter().collect());
    assert_eq!(same(&m), 5);
    // Dropped from the layout without `remove_block`: parents stay set.
    m.func_mut(fid).set_layout(vec![entry]);
    assert_eq!(same(&m), 3);
    m.func_mut(fid).set_layout(vec![entry, next]);
    m.func_mut(fid).remove_block(next);
    assert_eq!(same(&m), 3);
}

/// `replace_inst` keeps the id and position and moves the uses it makes.
#[test]
fn replace_inst_keeps_the_slot_and_moves_uses() {
    let mut m = parse_module(TWO_BLOCKS, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let f = m.func_mut(fid);
    let next = f.blocks()[1];
    let (a, b) = (f.block(f.blocks()[0]).insts()[0], f.block(next).insts()[0]);
    let before = f.inst_capacity();
    let md_before = f.inst_md(b).to_metadata();
    assert!(!md_before.is_empty(), "the replaced instruction is named");
    let mut d = xir::InstData::new(Opcode::Sub, f.inst(b).ty);
    d.operands = [Value::Arg(1), Value::Inst(a)].into_iter().collect();
    f.replace_inst(b, d.clone());
    assert_eq!(f.inst_md(b).to_metadata(), md_before, "data without metadata keeps the old");
    d.md = xir::Metadata::named("renamed");
    f.replace_inst(b, d);
    assert_eq!(f.inst_name(b), Some("renamed"), "data with metadata replaces it");
    assert_eq!(f.inst_capacity(), before, "no new record");
    assert_eq!(f.block(next).insts()[0], b);
    assert_eq!(f.inst(b).opcode, Opcode::Sub);
    assert_eq!(f.parent(b), Some(next));
    assert_eq!(f.uses(Value::Inst(a)).len(), 1, "the mul's two uses of %a left, the sub's one came");
    assert_eq!(f.uses(Value::Arg(1)).len(), 2, "the add's and the sub's");
    assert_eq!(f.uses(Value::Inst(b)).len(), 1, "the buffer.write still uses the result");
}

/// The dense (opcode, parent) table agrees with the records and the block
/// lists through every kind of mutation and after a JSON round trip (where it
/// is rebuilt from the layout).
#[test]
fn dense_opcode_and_parent_table_follows_mutation() {
    fn agrees(f: &xir::Function) {
        for k in 0..f.inst_capacity() {
            let i = xir::Inst::new(k);
            assert_eq!(f.opcode(i), f.inst(i).opcode, "{i}");
        }
        let mut listed = vec![None; f.inst_capacity()];
        for &b in f.blocks() {
            for &i in f.block(b).insts() {
                listed[i.index()] = Some(b);
            }
        }
        for (k, want) in listed.iter().enumerate() {
            assert_eq!(f.parent(xir::Inst::new(k)), *want, "parent of inst{k}");
        }
        let by_table: Vec<_> = f.live_opcodes_by_id().collect();
        let by_layout: std::collections::BTreeSet<_> = f.all_insts().map(|(_, i)| (i, f.inst(i).opcode)).collect();
        assert_eq!(by_table.iter().copied().collect::<std::collections::BTreeSet<_>>(), by_layout);
        assert!(by_table.windows(2).all(|w| w[0].0 < w[1].0), "id order");
    }
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    agrees(m.func(fid));
    let (a, b) = (named(&m, fid, "a").as_inst().unwrap(), named(&m, fid, "b").as_inst().unwrap());
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    // Replace an instruction in place with another opcode.
    let mut sub = f.inst_data(a);
    sub.opcode = Opcode::Sub;
    f.replace_inst(a, sub);
    agrees(f);
    assert_eq!(f.opcode(a), Opcode::Sub);
    // Create, place, move, remove (one and many).
    let tail = f.add_block();
    let mut d = xir::InstData::new(Opcode::Unreachable, xir::TypeTable::VOID);
    d.payload = xir::Payload::Text("never".into());
    let u = f.append_inst(tail, d);
    agrees(f);
    assert_eq!(f.parent(u), Some(tail));
    f.move_inst(b, tail, 0);
    agrees(f);
    assert_eq!(f.parent(b), Some(tail));
    f.move_inst(b, entry, 2);
    f.remove_insts(&[u]);
    agrees(f);
    assert!(!f.is_live(u) && f.parent(u).is_none());
    f.remove_block(tail);
    agrees(f);
    // Rebuilt from the layout after deserializing.
    let back = xir::text::json::from_json(&xir::text::json::to_json(&m), "t.json").unwrap();
    agrees(back.func(fid));
    // Splitting a block with the cursor moves the tail and its parents.
    let f = m.func_mut(fid);
    let second = f.block(entry).insts()[1];
    let side = f.add_block();
    f.cursor().at_inst(second).split_block(side);
    agrees(f);
    assert_eq!(f.block(entry).insts().len(), 1);
    assert_eq!(f.parent(second), Some(side));
}

/// Renumbering blocks into layout order is a pure relabelling: with every
/// block named, the printed function is the same text, the layout reads
/// `0..n`, every instruction's block agrees with the block lists, and a
/// block outside the layout keeps its instructions after the owned ones.
#[test]
fn renumbering_blocks_by_layout_relabels_only() {
    const RAW: &str = r#"
kernel @k(%o: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 8 : bool
  cond_br %c, true ^then, false ^other
^then:
  %a = add %n, u32 1 : u32
  br target ^join
^other:
  %s = cast.static %n : u8
  br_indexed %s, default ^join, case 3 ^three
^three:
  br target ^join
^join:
  %p = phi [%a, ^then], [%n, ^other], [u32 3, ^three] : u32
  buffer.write %o, u32 0, %p
  return
}
"#;
    let mut m = parse_module(RAW, "r.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let f = m.func_mut(fid);
    // A layout that is not index order, and a block outside the layout.
    let order: Vec<xir::Block> = f.blocks().to_vec();
    let spare = f.add_block();
    f.set_block_name(spare, Some("spare"));
    let mut lay = vec![order[0], order[4], order[2], order[3], order[1]];
    f.set_layout(lay.clone());
    let before = xir::text::print_module(&m);
    let old_spare_term = {
        let f = m.func_mut(fid);
        let d = xir::InstData::new(Opcode::Unreachable, xir::TypeTable::VOID);
        f.append_inst(spare, d)
    };
    let f = m.func_mut(fid);
    let map = f.renumber_blocks_by_layout();
    assert_eq!(f.blocks().iter().map(|b| b.index()).collect::<Vec<_>>(), (0..5).collect::<Vec<_>>());
    lay.push(spare);
    for (new, old) in lay.iter().enumerate() {
        assert_eq!(map[old.index()].index(), new, "{old} -> {new}");
    }
    assert_eq!(f.parent(old_spare_term).map(|b| b.index()), Some(5), "the spare block follows the owned ones");
    for b in 0..f.block_capacity() {
        let b = xir::Block::new(b);
        for &i in f.block(b).insts() {
            assert_eq!(f.parent(i), Some(b));
        }
    }
    f.remove_inst(old_spare_term);
    assert_eq!(xir::text::print_module(&m), before, "renumbering changed more than the ids");
    assert!(xir::verify::verify_module(&m).is_empty(), "{}", xir::diag::render(&xir::verify::verify_module(&m)));
    // Already in layout order: the identity map, nothing moves.
    let f = m.func_mut(fid);
    let again = f.renumber_blocks_by_layout();
    assert!(again.iter().enumerate().all(|(k, b)| b.index() == k));
}

/// Compacting the blocks relabels like renumbering, and drops the blocks
/// that no longer mean anything (removed: empty, outside the layout), while
/// an unowned block that still holds an instruction is kept after the
/// owned ones.
#[test]
fn compacting_blocks_drops_only_removed_ones() {
    const RAW: &str = r#"
kernel @k(%o: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 8 : bool
  cond_br %c, true ^then, false ^join
^then:
  %a = add %n, u32 1 : u32
  br target ^join
^join:
  %p = phi [%a, ^then], [%n, ^entry] : u32
  buffer.write %o, u32 0, %p
  return
}
"#;
    let mut m = parse_module(RAW, "c.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let f = m.func_mut(fid);
    let order: Vec<xir::Block> = f.blocks().to_vec();
    let gone = f.add_block();
    f.append_inst(gone, xir::InstData::new(Opcode::Unreachable, xir::TypeTable::VOID));
    f.remove_block(gone);
    let spare = f.add_block();
    let spare_term = f.append_inst(spare, xir::InstData::new(Opcode::Unreachable, xir::TypeTable::VOID));
    f.set_layout(vec![order[0], order[2], order[1]]);
    let before = xir::text::print_module(&m);
    let f = m.func_mut(fid);
    let map = f.compact_blocks();
    assert_eq!(f.block_capacity(), 4, "three owned blocks and the spare one");
    assert_eq!(map[gone.index()], None);
    assert_eq!(map[spare.index()], Some(xir::Block::new(3)));
    assert_eq!(map[order[2].index()], Some(xir::Block::new(1)));
    assert_eq!(f.parent(spare_term), Some(xir::Block::new(3)));
    for b in 0..f.block_capacity() {
        let b = xir::Block::new(b);
        for &i in f.block(b).insts() {
            assert_eq!(f.parent(i), Some(b));
        }
    }
    assert_eq!(xir::text::print_module(&m), before, "compacting changed more than the ids");
    assert!(xir::verify::verify_module(&m).is_empty(), "{}", xir::diag::render(&xir::verify::verify_module(&m)));
}

/// The prefetching layout walk yields each owned block with exactly its
/// terminator, in layout order; a prefetch of an empty or unknown block is
/// a no-op.
#[test]
fn terminators_in_layout_is_the_terminator_walk() {
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let f = m.func_mut(fid);
    let empty = f.add_block();
    let f = m.func(fid);
    let walked: Vec<_> = f.terminators_in_layout().collect();
    let expected: Vec<_> = f.blocks().iter().map(|&b| (b, f.terminator(b))).collect();
    assert_eq!(walked, expected);
    assert_eq!(walked.last(), Some(&(empty, None)), "a block without instructions has no terminator");
    f.prefetch_terminator(empty);
    f.prefetch_terminator(xir::Block::new(f.block_capacity() + 10));
}

/// The metadata sweep the spill audit uses yields exactly the placed
/// instructions (in owned blocks) whose metadata has more than a name: a
/// removed instruction's metadata stays in the table but is not reported.
#[test]
fn inst_metadata_sweep_is_the_placed_metadata_owners() {
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let owners = |m: &xir::Module| {
        let f = m.func(fid);
        let mut by_walk: Vec<xir::Inst> =
            f.all_insts().map(|(_, i)| i).filter(|&i| !f.inst_md(i).fields.is_empty()).collect();
        by_walk.sort();
        let by_sweep: Vec<xir::Inst> = f.inst_metadata().map(|(i, _)| i).collect();
        assert_eq!(by_sweep, by_walk);
        by_sweep.len()
    };
    assert_eq!(owners(&m), 2, "%slot (a comment, a spill mark) and %a (a location); the others only a name");
    let a = named(&m, fid, "a").as_inst().unwrap();
    let f = m.func_mut(fid);
    let ty = f.inst(a).ty;
    f.replace_all_uses(Value::Inst(a), Value::Undef(ty));
    f.remove_inst(a);
    assert!(m.func(fid).inst_md(a).location.is_some(), "the table keeps removed instructions' metadata");
    assert_eq!(owners(&m), 1);
}

/// `select_in_layout_order` is `all_insts` filtered by opcode, in the same
/// order, whatever the layout and with instructions in a block outside it.
#[test]
fn select_in_layout_order_is_the_filtered_layout_walk() {
    let mut m = parse_module(SRC, "t.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    // A second block after the entry, then one outside the layout.
    let second = f.add_block();
    let outside = f.add_block();
    let mut slot = xir::InstData::new(Opcode::Alloca, xir::TypeTable::U32);
    slot.md = xir::Metadata::named("late");
    f.append_inst(second, slot.clone());
    f.append_inst(outside, slot);
    f.set_layout(vec![entry, second]);
    let f = m.func(fid);
    for select in [
        |op: Opcode| op == Opcode::Alloca,
        |op: Opcode| op == Opcode::Load || op == Opcode::Store,
        |op: Opcode| op == Opcode::Phi,
        |_: Opcode| true,
    ] {
        let walk: Vec<xir::Inst> = f.all_insts().map(|(_, i)| i).filter(|&i| select(f.opcode(i))).collect();
        assert_eq!(f.select_in_layout_order(select), walk);
    }
    assert_eq!(f.select_in_layout_order(|op| op == Opcode::Alloca).len(), 2, "the entry's slot and the late one");
}

/// A parsed function's tables hold no spare room, and instructions without
/// a payload, metadata or span own no heap for them (`Function::footprint`
/// is the core's account; BENCHMARKS.md, "Memory per instruction").
#[test]
fn parsed_tables_hold_no_spare_room() {
    use std::mem::size_of;
    let m = parse_module(SRC, "t.xir").unwrap();
    let f = &m.functions[0];
    let n = f.inst_capacity();
    let fp = f.footprint();
    assert_eq!(fp.inst_cores, n * size_of::<xir::InstCore>());
    assert_eq!(fp.dense, n * 8);
    assert_eq!(fp.spans, n * 12, "a span slot is 12 bytes");
    // One pointer a payload slot; none of these carries a payload.
    assert_eq!(fp.payloads, n * 8);
    // A 4-byte name id an instruction, and a record of the other fields
    // only where one is set: `%slot`, `%a`, `%b`, `%c` are named, `%slot`
    // has a comment and `%a` a location; the `store`, `buffer.write` and
    // `return` carry nothing.
    let with_md = f.all_insts().filter(|(_, i)| !f.inst_md(*i).is_empty()).count();
    assert_eq!(with_md, 4);
    let with_fields = f.all_insts().filter(|(_, i)| !f.inst_md(*i).fields.is_empty()).count();
    assert_eq!(with_fields, 2);
    assert!(fp.metadata >= n * 4 + with_fields * size_of::<MetadataFields>(), "{fp}");
    // A function that grew has spare room; `shrink_to_fit` (which the
    // readers and the pass manager call) gives it back.
    let mut f2 = f.clone();
    let added = f2.create_inst(xir::InstData::new(Opcode::Add, xir::TypeTable::U32));
    assert_eq!(added.index(), n);
    assert!(f2.footprint().inst_cores > (n + 1) * size_of::<xir::InstCore>());
    f2.shrink_to_fit();
    assert_eq!(f2.footprint().inst_cores, (n + 1) * size_of::<xir::InstCore>());
}
