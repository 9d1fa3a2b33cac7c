//! The core's editing API: the cursor, the batched rewriter and the walks.
//! Each edit is checked by the exact text it leaves and by the verifier
//! (whose `use-lists` and block-list rules catch any list the edit got
//! wrong); a property test runs random edit sequences on corpus kernels.

use proptest::prelude::*;
use smallvec::smallvec;
use xir::text::{parse_module, print_module};
use xir::{reads, CursorPosition, FuncId, Inst, InstData, Metadata, Module, Opcode, TypeTable, Value};

fn named(m: &Module, f: FuncId, name: &str) -> Inst {
    let func = m.func(f);
    func.all_insts().find(|(_, i)| func.inst_name(*i) == Some(name)).map(|(_, i)| i).unwrap()
}

fn add(a: Value, b: Value, name: &str) -> InstData {
    let mut d = InstData::new(Opcode::Add, TypeTable::U32);
    d.operands = smallvec![a, b];
    d.md = Metadata::named(name);
    d
}

fn verified(m: &Module) -> String {
    let diags = xir::verify::verify_module(m);
    assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
    print_module(m)
}

const STRAIGHT: &str = r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %a = add %n, u32 1 : u32
  %b = mul %a, %a : u32
  buffer.write %out, u32 0, %b
  return
}
"#;

#[test]
fn cursor_insertions_keep_program_order() {
    let mut m = parse_module(STRAIGHT, "k.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let (a, b) = (named(&m, fid, "a"), named(&m, fid, "b"));
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    let mut c = f.cursor().at_inst(b);
    assert_eq!(c.position(), CursorPosition::At(b));
    let x = c.insert(add(Value::Inst(a), Value::Arg(1), "x"));
    let y = c.insert(add(Value::Inst(x), Value::Arg(1), "y"));
    // Still at `b`: the two went before it, in order.
    assert_eq!(c.current_inst(), Some(b));
    c.goto_top(entry);
    c.insert(add(Value::Arg(1), Value::Arg(1), "top"));
    c.goto_inst(y);
    c.insert_after(add(Value::Inst(y), Value::Inst(y), "after_y"));
    assert_eq!(c.func().uses(Value::Inst(y)).len(), 2);
    assert_eq!(
        verified(&m),
        r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %top = add %n, %n : u32
  %a = add %n, u32 1 : u32
  %x = add %a, %n : u32
  %y = add %x, %n : u32
  %after_y = add %y, %y : u32
  %b = mul %a, %a : u32
  buffer.write %out, u32 0, %b
  return
}
"#
    );
}

#[test]
fn cursor_walks_removes_and_moves() {
    let mut m = parse_module(STRAIGHT, "k.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let (a, b) = (named(&m, fid, "a"), named(&m, fid, "b"));
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    let mut c = f.cursor().at_top(entry);
    assert_eq!(c.position(), CursorPosition::Top(entry));
    assert_eq!(c.next_inst(), Some(a));
    assert_eq!(c.next_inst(), Some(b));
    assert_eq!(c.prev_inst(), Some(a));
    assert_eq!(c.prev_inst(), None);
    assert_eq!(c.position(), CursorPosition::Top(entry));
    // Replace `b` by a fresh add of `a`, then drop the old mul.
    c.goto_inst(b);
    let s = c.insert(add(Value::Inst(a), Value::Inst(a), "s"));
    c.func().replace_all_uses(Value::Inst(b), Value::Inst(s));
    assert_eq!(c.remove(), b);
    // Now at the write. Move `s` to the top, then `a` above it.
    let write = c.current_inst().unwrap();
    assert_eq!(c.func().opcode(write), Opcode::BufferWrite);
    c.goto_top(entry);
    c.move_here(s);
    c.goto_inst(s);
    c.move_here(a);
    c.goto_bottom(entry);
    assert_eq!(c.position(), CursorPosition::Bottom(entry));
    assert_eq!(
        verified(&m),
        r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %a = add %n, u32 1 : u32
  %s = add %a, %a : u32
  buffer.write %out, u32 0, %s
  return
}
"#
    );
}

const DIAMOND: &str = r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 8 : bool
  %a = add %n, u32 1 : u32
  cond_br %c, true ^then, false ^join
^then:
  br target ^join
^join:
  %p = phi [%a, ^entry], [%n, ^then] : u32
  buffer.write %out, u32 0, %p
  return
}
"#;

#[test]
fn splitting_a_block_moves_the_tail_and_its_phi_edges() {
    let mut m = parse_module(DIAMOND, "k.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let a = named(&m, fid, "a");
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    let tail = f.add_block();
    f.set_block_name(tail, Some("tail"));
    let mut c = f.cursor().at_inst(a);
    c.split_block(tail);
    assert_eq!(c.position(), CursorPosition::Bottom(entry));
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks = smallvec![tail];
    c.insert(br);
    assert_eq!(
        verified(&m),
        r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %c = lt %n, u32 8 : bool
  br target ^tail
^then:
  br target ^join
^join:
  %p = phi [%a, ^tail], [%n, ^then] : u32
  buffer.write %out, u32 0, %p
  return
^tail:
  %a = add %n, u32 1 : u32
  cond_br %c, true ^then, false ^join
}
"#
    );
}

#[test]
fn rewriter_places_a_batch_in_order_and_sees_replacements() {
    let mut m = parse_module(DIAMOND, "k.xir").unwrap();
    let fid = m.find_function("k").unwrap();
    let (a, p) = (named(&m, fid, "a"), named(&m, fid, "p"));
    let f = m.func_mut(fid);
    let entry = f.body().unwrap();
    let write = f.uses(Value::Inst(p))[0].user;
    let mut rw = f.rewriter();
    let x = rw.insert_before(a, add(Value::Arg(1), Value::Arg(1), "x"));
    // Anchored at an instruction of the same batch.
    rw.insert_before(x, add(Value::Arg(1), Value::Arg(1), "before_x"));
    let y = rw.insert_after(a, add(Value::Inst(a), Value::Inst(x), "y"));
    rw.insert_after(y, add(Value::Inst(y), Value::Inst(y), "after_y"));
    rw.insert_at_top(entry, add(Value::Arg(1), Value::Arg(1), "top"));
    rw.insert_before(write, add(Value::Inst(p), Value::Inst(y), "q"));
    // A replacement made during the batch reaches pending instructions.
    rw.func().replace_all_uses(Value::Inst(x), Value::Arg(1));
    assert!(rw.uses(Value::Inst(x)).is_empty());
    rw.commit();
    assert_eq!(
        verified(&m),
        r#"kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  %top = add %n, %n : u32
  %c = lt %n, u32 8 : bool
  %before_x = add %n, %n : u32
  %x = add %n, %n : u32
  %a = add %n, u32 1 : u32
  %y = add %a, %n : u32
  %after_y = add %y, %y : u32
  cond_br %c, true ^then, false ^join
^then:
  br target ^join
^join:
  %p = phi [%a, ^entry], [%n, ^then] : u32
  %q = add %p, %y : u32
  buffer.write %out, u32 0, %p
  return
}
"#
    );
}

#[test]
fn walks_visit_every_entry_once_in_order() {
    // Hints are off on small functions and on on large ones: the walk's
    // order is the list's either way.
    for n in [10usize, (xir::PREFETCH_MIN_INSTS) + 10] {
        let mut body = String::from("kernel @k(%n: u32) block_size(1, 1, 1) {\n^entry:\n");
        for k in 0..n {
            body.push_str(&format!("  %v{k} = add %n, u32 {k} : u32\n"));
        }
        body.push_str("  return\n}\n");
        let m = parse_module(&body, "big.xir").unwrap();
        let f = &m.functions[0];
        let insts: Vec<Inst> = f.all_insts().map(|(_, i)| i).collect();
        let mut walk = f.walk(&insts, reads::RecordAndUserOpcodes);
        let mut seen = Vec::new();
        while let Some(i) = walk.next(f) {
            assert_eq!(walk.position(), seen.len());
            seen.push(i);
        }
        assert_eq!(seen, insts);
        // Reads composed over what hangs off each entry.
        let composed = (reads::Via(|i| Some(Value::Inst(i)), reads::Uses), reads::Record);
        let mut walk = f.walk(&insts, composed);
        let mut n = 0;
        while walk.next(f).is_some() {
            n += 1;
        }
        assert_eq!(n, insts.len());
        let mut walk = f.walk(&insts, reads::OperandOpcodes);
        assert_eq!(walk.seek(f, 3), Some(insts[3]));
        assert_eq!(walk.next(f), Some(insts[4]));
        let mut down = f.walk_ids_descending(reads::Record);
        let mut ids = Vec::new();
        while let Some(i) = down.next(f) {
            ids.push(i.index());
        }
        assert_eq!(ids, (0..f.inst_capacity()).rev().collect::<Vec<_>>());
    }
}

/// One random edit of a function through the cursor or the rewriter.
#[derive(Clone, Debug)]
enum Edit {
    /// Insert `add %n, %n` before the k-th instruction (by cursor).
    InsertBefore(usize),
    /// Insert after the k-th instruction with the rewriter.
    BatchAfter(usize),
    /// Remove the k-th instruction if nothing uses it and it is no
    /// terminator.
    RemoveUnused(usize),
    /// Replace the k-th instruction's result by `%n` where it is a u32.
    ReplaceUses(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::InsertBefore),
        any::<usize>().prop_map(Edit::BatchAfter),
        any::<usize>().prop_map(Edit::RemoveUnused),
        any::<usize>().prop_map(Edit::ReplaceUses),
    ]
}

fn apply(m: &mut Module, edits: &[Edit]) {
    let fid = m.find_function("k").unwrap();
    for e in edits {
        let f = m.func_mut(fid);
        let insts: Vec<Inst> = f.all_insts().map(|(_, i)| i).collect();
        let pick = |k: usize| insts[k % insts.len()];
        let fresh = || add(Value::Arg(1), Value::Arg(1), "");
        match *e {
            Edit::InsertBefore(k) => {
                let at = pick(k);
                if f.opcode(at) != Opcode::Phi {
                    f.cursor().at_inst(at).insert(fresh());
                }
            }
            Edit::BatchAfter(k) => {
                let at = pick(k);
                if !f.inst(at).is_terminator() && f.opcode(at) != Opcode::Phi {
                    let mut rw = f.rewriter();
                    let x = rw.insert_after(at, fresh());
                    rw.insert_after(x, fresh());
                }
            }
            Edit::RemoveUnused(k) => {
                let i = pick(k);
                let d = f.inst(i);
                if !d.is_terminator() && d.ty != TypeTable::VOID && !f.has_uses(Value::Inst(i)) {
                    f.cursor().at_inst(i).remove();
                }
            }
            Edit::ReplaceUses(k) => {
                let i = pick(k);
                if f.inst(i).ty == TypeTable::U32 {
                    f.replace_all_uses(Value::Inst(i), Value::Arg(1));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sequence of edits through the API leaves a verified function.
    #[test]
    fn edits_through_the_api_keep_the_function_valid(
        edits in proptest::collection::vec(edit(), 1..24),
        src in prop_oneof![Just(STRAIGHT), Just(DIAMOND)],
    ) {
        let mut m = parse_module(src, "k.xir").unwrap();
        apply(&mut m, &edits);
        let diags = xir::verify::verify_module(&m);
        prop_assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
        // And the text reads back to the same module.
        let text = print_module(&m);
        let back = parse_module(&text, "back.xir").unwrap();
        prop_assert_eq!(print_module(&back), text);
    }
}
