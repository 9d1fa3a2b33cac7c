//! Names of instructions and blocks, interned per function
//! (`ir/function/names.rs`): a name given twice is stored once, renaming
//! and unnaming go through the function, a clone keeps its names apart
//! from the original's, and equality compares names by text.

use std::mem::size_of;

use xir::{Block, Function, FunctionKind, Inst, InstData, Metadata, Opcode, TypeTable, Value};

/// A function of one block holding `names.len()` adds of its argument, the
/// `k`-th named `names[k]`, and a `return`; its tables shrunk as a reader
/// leaves them.
fn function(names: &[Option<&str>]) -> (Function, Block, Vec<Inst>) {
    let mut f = Function::new("f", FunctionKind::Callable, TypeTable::VOID);
    let a = f.add_arg(TypeTable::U32, xir::ArgKind::Value, Metadata::default());
    let b = f.add_block();
    let mut insts = Vec::new();
    for name in names {
        let mut d = InstData::new(Opcode::Add, TypeTable::U32);
        d.operands = [a, a].into_iter().collect();
        d.md = Metadata::with_name(name.map(str::to_string));
        insts.push(f.append_inst(b, d));
    }
    f.append_inst(b, InstData::new(Opcode::Return, TypeTable::VOID));
    f.shrink_to_fit();
    (f, b, insts)
}

/// The bytes of a name table holding `names` distinct names of `text`
/// bytes in all: the text, a 4-byte end each, and the index (hashbrown:
/// a power of two of 4-byte buckets, at least 4, at most 7/8 full from 8
/// on, and a control byte a bucket plus 16).
fn table_bytes(names: usize, text: usize) -> usize {
    let buckets = if names == 0 {
        return 0;
    } else if names < 4 {
        4
    } else if names < 8 {
        8
    } else {
        (names * 8 / 7).next_power_of_two()
    };
    text + 4 * names + buckets * 4 + buckets + 16
}

#[test]
fn a_name_given_twice_is_stored_once() {
    let n = 100;
    let (f, b, insts) = function(&vec![Some("x"); n]);
    assert!(insts.iter().all(|&i| f.inst_name(i) == Some("x")));
    // A 4-byte id an instruction (the return too), a 4-byte id for the
    // block, one copy of `x`.
    assert_eq!(f.footprint().metadata, 4 * (n + 1) + 4 + table_bytes(1, 1));
    assert_eq!(f.block_name(b), None);
    let distinct: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
    let (g, _, _) = function(&distinct.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>());
    let text: usize = distinct.iter().map(String::len).sum();
    assert_eq!(g.footprint().metadata, 4 * (n + 1) + 4 + table_bytes(n, text));
}

#[test]
fn renaming_and_unnaming_drop_the_old_names_on_shrink() {
    let (mut f, b, insts) = function(&[Some("a"), Some("b"), None]);
    assert_eq!(f.inst_md(insts[2]).name, None);
    f.set_inst_name(insts[0], Some("b"));
    f.set_inst_name(insts[2], Some("c"));
    f.set_block_name(b, Some("entry"));
    assert_eq!(insts.iter().map(|&i| f.inst_name(i)).collect::<Vec<_>>(), [Some("b"), Some("b"), Some("c")]);
    assert_eq!(f.block_md(b).name, Some("entry"));
    // `a` is held by nobody: dropped when the tables are shrunk.
    assert_eq!(f.footprint().metadata, 4 * 4 + 4 + table_bytes(4, 1 + 1 + 1 + 5), "`a` still held");
    f.shrink_to_fit();
    assert_eq!(f.footprint().metadata, 4 * 4 + 4 + table_bytes(3, 1 + 1 + 5));
    assert_eq!(insts.iter().map(|&i| f.inst_name(i)).collect::<Vec<_>>(), [Some("b"), Some("b"), Some("c")]);
    assert_eq!(f.block_name(b), Some("entry"));
    for &i in &insts {
        f.set_inst_name(i, None);
    }
    f.set_block_md(b, Metadata::default());
    f.shrink_to_fit();
    assert!(insts.iter().all(|&i| f.inst_md(i).is_empty()) && f.block_md(b).is_empty());
    assert_eq!(f.footprint().metadata, 4 * 4 + 4, "no names left");
}

#[test]
fn set_inst_md_and_inst_data_carry_the_name_and_the_fields() {
    let (mut f, _, insts) = function(&[Some("a"), None]);
    let mut md = Metadata::named("located");
    md.comments = vec!["why".into()];
    f.set_inst_md(insts[1], md.clone());
    assert_eq!(f.inst_md(insts[1]).to_metadata(), md);
    assert_eq!(f.inst_data(insts[1]).md, md);
    // Writing the other fields keeps the name.
    f.inst_md_mut(insts[0]).spill = Some(xir::SpillKind::Phi);
    assert_eq!(f.inst_name(insts[0]), Some("a"));
    let swept: Vec<(Inst, Option<&str>)> = f.inst_metadata().map(|(i, md)| (i, md.name)).collect();
    assert_eq!(swept, [(insts[0], Some("a")), (insts[1], Some("located"))]);
    // Metadata without a name replaces the name too.
    f.set_inst_md(insts[1], Metadata::default());
    assert!(f.inst_md(insts[1]).is_empty());
}

#[test]
fn a_clone_keeps_its_names_apart_and_equality_reads_names_by_text() {
    let (f, b, insts) = function(&[Some("p"), Some("q")]);
    let mut g = f.clone();
    assert_eq!(g, f);
    g.set_inst_name(insts[0], Some("r"));
    g.set_block_name(b, Some("entry"));
    assert_eq!((f.inst_name(insts[0]), f.block_name(b)), (Some("p"), None), "the original keeps its names");
    assert_eq!((g.inst_name(insts[0]), g.inst_name(insts[1])), (Some("r"), Some("q")));
    assert_ne!(g, f);
    // The same names interned in another order (q before p): equal.
    let (mut h, _, _) = function(&[None, Some("q")]);
    h.set_inst_name(insts[0], Some("p"));
    assert_eq!(h, f);
    // And a copy of an instruction into another function brings its name.
    let d = f.inst_data(insts[1]);
    let (mut k, kb, _) = function(&[]);
    let copied = k.append_inst(kb, d);
    assert_eq!(k.inst_name(copied), Some("q"));
    assert_eq!(k.uses(Value::Arg(0)).len(), 2);
}

#[test]
fn use_lists_are_sixteen_bytes_a_slot() {
    // Three adds of the argument: its list holds six uses (a heap list of
    // room 8 after doubling from 2); the adds' own lists are empty.
    let (f, _, insts) = function(&[None, None, None]);
    assert_eq!(f.uses(Value::Arg(0)).len(), 6);
    // The slots of the adds and the return, and the argument's heap list
    // (a length and a capacity, then its room).
    assert_eq!(f.footprint().uses, 16 * (insts.len() + 1) + 2 * size_of::<usize>() + 8 * 8);
}
