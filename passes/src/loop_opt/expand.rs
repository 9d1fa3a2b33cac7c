//! Materializing scalar-evolution expressions as instructions (the
//! counterpart of LLVM's SCEV expander): a `Lin` becomes a chain of `mul`,
//! `add`, `sub` and `neg` at a cursor; an exit value `start + count * step`
//! additionally uses the trip count's guard as a `select`. Constant results
//! become constants and emit nothing.

use smallvec::SmallVec;
use xir::analysis::scev::{Lin, TripCount};
use xir::{Block, FuncId, InstData, Module, Opcode, TypeTable, Value};

/// Where new instructions go: before position `pos` of `block` (advanced
/// past each inserted instruction).
pub struct Cursor {
    pub block: Block,
    pub pos: usize,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn emit(m: &mut Module, fid: FuncId, at: &mut Cursor, op: Opcode, ty: xir::TypeId, ops: &[Value]) -> Value {
    let mut d = InstData::new(op, ty);
    d.operands = SmallVec::from_slice(ops);
    let f = m.func_mut(fid);
    let i = f.create_inst(d);
    f.insert_inst(at.block, at.pos, i);
    at.pos += 1;
    Value::Inst(i)
}

fn konst(m: &mut Module, lin: &Lin, k: u64) -> Value {
    m.const_scalar(lin.ty, k & mask(lin.bits))
}

/// How many instructions `expand_lin` emits for `lin`.
pub fn lin_cost(lin: &Lin) -> usize {
    let full = mask(lin.bits);
    let mut terms = lin.terms.clone();
    terms.sort_by_key(|t| t.1 != 1);
    let mut n = 0;
    for (k, &(_, c)) in terms.iter().enumerate() {
        n += match (k, c) {
            (0, 1) => 0,
            (0, _) => 1,
            (_, c) if c == 1 || c == full => 1,
            _ => 2,
        };
    }
    if lin.konst != 0 && !lin.terms.is_empty() {
        n += 1;
    }
    n
}

/// Emit `lin` at the cursor.
pub fn expand_lin(m: &mut Module, fid: FuncId, at: &mut Cursor, lin: &Lin) -> Value {
    let full = mask(lin.bits);
    let mut acc: Option<Value> = None;
    // Unit terms first, so that `-1` terms become a `sub` from them.
    let mut terms = lin.terms.clone();
    terms.sort_by_key(|t| t.1 != 1);
    for (v, c) in terms {
        acc = Some(match acc {
            Some(a) if c == full => emit(m, fid, at, Opcode::Sub, lin.ty, &[a, v]),
            Some(a) => {
                let t = scaled(m, fid, at, lin, v, c);
                emit(m, fid, at, Opcode::Add, lin.ty, &[a, t])
            }
            None => scaled(m, fid, at, lin, v, c),
        });
    }
    match acc {
        None => konst(m, lin, lin.konst),
        Some(a) if lin.konst == 0 => a,
        Some(a) => {
            let k = konst(m, lin, lin.konst);
            emit(m, fid, at, Opcode::Add, lin.ty, &[a, k])
        }
    }
}

fn scaled(m: &mut Module, fid: FuncId, at: &mut Cursor, lin: &Lin, v: Value, c: u64) -> Value {
    if c == 1 {
        v
    } else {
        let k = konst(m, lin, c);
        emit(m, fid, at, Opcode::Mul, lin.ty, &[v, k])
    }
}

/// Emit the trip count (back edges taken) at the cursor.
pub fn expand_trip(m: &mut Module, fid: FuncId, at: &mut Cursor, trip: &TripCount) -> Value {
    if let Some(k) = trip.constant() {
        return konst(m, &trip.count, k);
    }
    let count = expand_lin(m, fid, at, &trip.count);
    let Some(g) = &trip.guard else { return count };
    let lhs = expand_lin(m, fid, at, &g.lhs);
    let rhs = expand_lin(m, fid, at, &g.rhs);
    let cond = emit(m, fid, at, g.op, TypeTable::BOOL, &[lhs, rhs]);
    let zero = konst(m, &trip.count, 0);
    emit(m, fid, at, Opcode::Select, trip.count.ty, &[cond, count, zero])
}

/// Emit `start + trip * step`: the value of the recurrence `{start,+,step}`
/// in the iteration that leaves the loop.
pub fn expand_exit_value(
    m: &mut Module,
    fid: FuncId,
    at: &mut Cursor,
    start: &Lin,
    step: &Lin,
    trip: &TripCount,
) -> Value {
    if let (Some(k), Some(d)) = (trip.constant(), step.as_const()) {
        return expand_lin(
            m,
            fid,
            at,
            &start.add(&Lin::constant(start.ty, start.bits, start.signed, k.wrapping_mul(d))),
        );
    }
    let n = expand_trip(m, fid, at, trip);
    let prod = if step.as_const() == Some(1) {
        n
    } else {
        let d = expand_lin(m, fid, at, step);
        emit(m, fid, at, Opcode::Mul, start.ty, &[n, d])
    };
    if start.is_zero() {
        return prod;
    }
    let s = expand_lin(m, fid, at, start);
    emit(m, fid, at, Opcode::Add, start.ty, &[s, prod])
}
