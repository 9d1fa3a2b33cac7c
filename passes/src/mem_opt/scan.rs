//! The block-local memory scan `local_load_elimination` and
//! `local_store_forward` share: walk one block in order keeping the known
//! contents of locations (`Avail`), drop what each instruction may write
//! (per `AliasAnalysis::mod_ref`), and replace a read whose contents are
//! known. Which facts are recorded and how a read may use them is the
//! caller's `Mode`.

use smallvec::SmallVec;
use xir::analysis::{AliasAnalysis, AliasResult, Location, ScanRecords};
use xir::{ConstData, ConstValue, FuncId, Inst, InstCore, InstData, Module, Opcode, TypeTable, Value};

/// How the scan forwards values.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A read after a read or a write of the same location reuses the value
    /// (exact must-alias only).
    Loads,
    /// A read after a write reuses the written value, also when the read
    /// location lies inside the written one at a constant path (the read
    /// becomes an `extract` of the written value).
    Stores,
}

/// A location whose contents are known to be `value`.
struct Avail {
    loc: Location,
    value: Value,
}

/// At most this many facts are kept per block (oldest dropped first), so
/// huge blocks stay linear.
const MAX_AVAIL: usize = 64;

/// The memory reads the scan may replace: `load` and typed `buffer.read`.
fn is_read(op: Opcode) -> bool {
    matches!(op, Opcode::Load | Opcode::BufferRead)
}

/// The memory writes that record a fact: `store` (value operand 1) and
/// typed `buffer.write` (value operand 2). A `buffer.write_part` records
/// none: it writes part of an element, so no read (reads take whole
/// elements) may take its value for the element; like any write it drops
/// the facts it may overlap, the whole element's among them.
fn written_value(d: &InstCore) -> Option<Value> {
    match d.opcode {
        Opcode::Store => d.operands.get(1).copied(),
        Opcode::BufferWrite => d.operands.get(2).copied(),
        _ => None,
    }
}

/// Run the scan over every block of `fid`; returns the reads replaced and
/// the `extract`s created.
pub fn forward_function(m: &mut Module, fid: FuncId, mode: Mode) -> (usize, usize) {
    let aa = AliasAnalysis::compute(m, fid);
    let blocks: Vec<_> = m.func(fid).blocks().to_vec();
    let (mut replaced, mut extracts) = (0, 0);
    // Replaced reads are unplaced in one batch at the end: a `remove_inst`
    // each scanned its block, quadratic in the length of long blocks. A
    // replaced read has no uses left and is never recorded as a fact, so
    // keeping it placed until then changes nothing the scan looks at.
    let mut dead: Vec<Inst> = Vec::new();
    // One fact list and one instruction list for every block (cleared,
    // not reallocated, per block).
    let mut avail: Vec<Avail> = Vec::new();
    let mut insts: Vec<Inst> = Vec::new();
    // Opcodes decide for most instructions (pure computations touch no fact).
    let mut walk = m.func(fid).walk(&blocks, aa.scan_reads(ScanRecords::MemoryAccesses));
    while let Some(b) = walk.next(m.func(fid)) {
        insts.clear();
        insts.extend_from_slice(m.func(fid).block(b).insts());
        avail.clear();
        for &i in &insts {
            if AliasAnalysis::never_mod_ref(m.func(fid).opcode(i)) {
                continue;
            }
            let (opcode, ty, written) = {
                let d = m.func(fid).inst(i);
                (d.opcode, d.ty, written_value(d))
            };
            if is_read(opcode) {
                if let Some(loc) = aa.access(i).copied() {
                    match lookup(m, fid, &aa, &avail, &loc, ty, mode) {
                        Some(Found::Exact(v)) => {
                            m.func_mut(fid).replace_all_uses(Value::Inst(i), v);
                            dead.push(i);
                            replaced += 1;
                            continue;
                        }
                        Some(Found::Inside(v, path)) => {
                            let e = extract(m, fid, i, v, &path, ty);
                            m.func_mut(fid).replace_all_uses(Value::Inst(i), Value::Inst(e));
                            dead.push(i);
                            replaced += 1;
                            extracts += 1;
                            continue;
                        }
                        None => {
                            if mode == Mode::Loads && !matches!(loc.root, xir::analysis::Root::Unknown(_)) {
                                push(&mut avail, Avail { loc, value: Value::Inst(i) });
                            }
                            continue;
                        }
                    }
                }
            }
            let f = m.func(fid);
            if !AliasAnalysis::never_mod_ref(opcode) {
                avail.retain(|a| !aa.mod_ref(f, i, &a.loc).writes);
            }
            if let (Some(v), Some(loc)) = (written, aa.access(i)) {
                if !matches!(loc.root, xir::analysis::Root::Unknown(_)) {
                    push(&mut avail, Avail { loc: *loc, value: v });
                }
            }
        }
    }
    m.func_mut(fid).remove_insts(&dead);
    (replaced, extracts)
}

fn push(avail: &mut Vec<Avail>, a: Avail) {
    if avail.len() >= MAX_AVAIL {
        avail.remove(0);
    }
    avail.push(a);
}

enum Found {
    /// The value of exactly the read location.
    Exact(Value),
    /// A value containing the read location at this constant path.
    Inside(Value, SmallVec<[i128; 4]>),
}

/// The most recent fact that answers a read of `loc` with type `ty`.
fn lookup(
    m: &Module,
    fid: FuncId,
    aa: &AliasAnalysis,
    avail: &[Avail],
    loc: &Location,
    ty: xir::TypeId,
    mode: Mode,
) -> Option<Found> {
    let f = m.func(fid);
    for a in avail.iter().rev() {
        if aa.alias_locations(&a.loc, loc) == AliasResult::MustAlias {
            if f.value_type(m, a.value) == ty {
                return Some(Found::Exact(a.value));
            }
            continue;
        }
        if mode == Mode::Stores {
            if let Some(path) = aa.sub_path(&a.loc, loc) {
                if !path.is_empty() {
                    return Some(Found::Inside(a.value, path));
                }
            }
        }
    }
    None
}

/// `extract value, path...` (constant `u32` indices) placed before `before`.
fn extract(m: &mut Module, fid: FuncId, before: Inst, value: Value, path: &[i128], ty: xir::TypeId) -> Inst {
    let mut ops: SmallVec<[Value; 3]> = SmallVec::new();
    ops.push(value);
    for &k in path {
        let c = m.consts.intern(ConstData { ty: TypeTable::U32, value: ConstValue::Scalar(k as u64) });
        ops.push(Value::Const(c));
    }
    let mut d = InstData::new(Opcode::Extract, ty);
    d.operands = ops;
    let f = m.func_mut(fid);
    let e = f.create_inst(d);
    crate::memory::util::insert_before(f, before, e);
    e
}
