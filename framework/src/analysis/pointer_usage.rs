//! Pointer usage: per local slot and per instruction, which fields
//! (`field_mask` leaves) an access *kills* (overwrites whole), *touches*
//! (reads, or writes only maybe: a dynamic index) and which are *live*
//! (may be read later before being killed). Dead-store elimination removes
//! a store none of whose leaves is live after it, field by field and across
//! blocks, which the block-local alias scan cannot see.
//!
//! A backward dataflow over the executed edges (`Cfg`, structured or raw
//! CFG alike): live-in = reads ∪ (live-out − kills); nothing is live where
//! the function exits (a local dies with the call). Only thread-private
//! `alloca`s whose every use is a gep base or a load's or store's address
//! are tracked (`FieldMasks::escapes`); a shared slot can be read by other
//! threads, an escaping one by a callee. Leaves of all tracked slots share
//! one bit space per function; slots beyond [`MAX_BITS`] (bits times
//! blocks) are left untracked, so huge functions stay linear.

use rustc_hash::FxHashMap;

use super::field_mask::{FieldMask, FieldMasks};
use crate::analysis::Cfg;
use crate::ir::{Block, FlatLists, Function, Inst, Opcode};

/// Budget of tracked leaves times blocks.
pub const MAX_BITS: u64 = 1 << 24;

/// What one load or store does to its slot's leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstUsage {
    /// The tracked slot.
    pub root: Inst,
    /// Leaves it overwrites whole (an exact store).
    pub kill: FieldMask,
    /// Leaves it reads (a load) or may partly write (an inexact store).
    pub touch: FieldMask,
    /// Whether it reads `touch` (a load) rather than maybe writing it.
    pub read: bool,
}

/// Kill / touch / live facts of one function's local slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerUsage {
    /// Tracked slots with the offset of their leaves in the bit space.
    offsets: FxHashMap<Inst, (u32, u32)>,
    usage: FxHashMap<Inst, InstUsage>,
    /// Per block id, its loads and stores of tracked slots in order.
    accesses: FlatLists<Inst>,
    /// Per access: its block and index in that block's `accesses`.
    position: FxHashMap<Inst, (Block, u32)>,
    /// Per block id, leaves live at its end / start (whole bit space).
    live_out: Vec<FieldMask>,
    live_in: Vec<FieldMask>,
}

impl PointerUsage {
    pub fn compute(f: &Function, masks: &FieldMasks, cfg: &Cfg) -> PointerUsage {
        let blocks = f.block_capacity().max(1) as u64;
        let mut offsets = FxHashMap::default();
        let mut total = 0u32;
        for r in masks.roots() {
            if r.escapes || f.opcode(r.slot) != Opcode::Alloca {
                continue;
            }
            if (total as u64 + r.leaves as u64) * blocks > MAX_BITS {
                break;
            }
            offsets.insert(r.slot, (total, r.leaves));
            total += r.leaves;
        }
        let mut usage = FxHashMap::default();
        let mut pairs: Vec<(usize, Inst)> = Vec::new();
        let mut position = FxHashMap::default();
        let mut count = vec![0u32; f.block_capacity()];
        for &b in f.blocks() {
            for &i in f.block(b).insts() {
                let Some(a) = masks.access_of(f, i) else { continue };
                let Some(&(_, n)) = offsets.get(&a.root) else { continue };
                let u = match f.opcode(i) {
                    Opcode::Load => {
                        InstUsage { root: a.root, kill: FieldMask::empty(n), touch: a.mask.clone(), read: true }
                    }
                    _ if a.exact => {
                        InstUsage { root: a.root, kill: a.mask.clone(), touch: FieldMask::empty(n), read: false }
                    }
                    _ => InstUsage { root: a.root, kill: FieldMask::empty(n), touch: a.mask.clone(), read: false },
                };
                usage.insert(i, u);
                position.insert(i, (b, count[b.index()]));
                count[b.index()] += 1;
                pairs.push((b.index(), i));
            }
        }
        let accesses = FlatLists::from_pairs(f.block_capacity(), pairs.iter().copied());
        let mut pu = PointerUsage {
            offsets,
            usage,
            accesses,
            position,
            live_out: vec![FieldMask::empty(total); f.block_capacity()],
            live_in: vec![FieldMask::empty(total); f.block_capacity()],
        };
        // Per block: gen (read before any kill) and kill, in the bit space.
        let mut gen = vec![FieldMask::empty(total); f.block_capacity()];
        let mut kill = vec![FieldMask::empty(total); f.block_capacity()];
        for &b in f.blocks() {
            let (g, k) = (&mut gen[b.index()], &mut kill[b.index()]);
            for &i in pu.accesses.get(b.index()).iter().rev() {
                let u = &pu.usage[&i];
                let off = pu.offsets[&u.root].0;
                g.subtract_shifted(&u.kill, off);
                k.insert_shifted(&u.kill, off);
                if u.read {
                    g.insert_shifted(&u.touch, off);
                }
            }
        }
        // Round robin in post order until nothing changes.
        let order: Vec<Block> = {
            let mut o: Vec<Block> = cfg.rpo.iter().rev().copied().collect();
            o.extend(f.blocks().iter().copied().filter(|&b| !cfg.is_reachable(b)));
            o
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut out = FieldMask::empty(total);
                for &s in cfg.succs(b) {
                    out.union_with(&pu.live_in[s.index()]);
                }
                let mut inn = out.clone();
                inn.subtract(&kill[b.index()]);
                inn.union_with(&gen[b.index()]);
                if inn != pu.live_in[b.index()] {
                    pu.live_in[b.index()] = inn;
                    changed = true;
                }
                pu.live_out[b.index()] = out;
            }
        }
        pu
    }

    /// Whether `slot` is tracked (a non-escaping local within the budget).
    pub fn tracks(&self, slot: Inst) -> bool {
        self.offsets.contains_key(&slot)
    }

    /// What the load or store `i` does, if it accesses a tracked slot.
    pub fn usage(&self, i: Inst) -> Option<&InstUsage> {
        self.usage.get(&i)
    }

    /// Leaves of `slot` live at the start of `b`.
    pub fn live_in(&self, b: Block, slot: Inst) -> Option<FieldMask> {
        let &(off, n) = self.offsets.get(&slot)?;
        Some(self.live_in.get(b.index())?.slice(off, n))
    }

    /// Leaves of `slot` live at the end of `b`.
    pub fn live_out(&self, b: Block, slot: Inst) -> Option<FieldMask> {
        let &(off, n) = self.offsets.get(&slot)?;
        Some(self.live_out.get(b.index())?.slice(off, n))
    }

    /// Leaves of its slot live right after the access `i`: live-out of its
    /// block, walked back over the later accesses of the block.
    pub fn live_after(&self, i: Inst) -> Option<FieldMask> {
        let u = self.usage.get(&i)?;
        let &(b, pos) = self.position.get(&i)?;
        let mut live = self.live_out(b, u.root)?;
        for &j in self.accesses.get(b.index())[pos as usize + 1..].iter().rev() {
            let v = &self.usage[&j];
            if v.root != u.root {
                continue;
            }
            live.subtract(&v.kill);
            if v.read {
                live.union_with(&v.touch);
            }
        }
        Some(live)
    }

    /// The stores to tracked slots none of whose leaves is live after them,
    /// in block order (one backward walk per block).
    pub fn dead_stores(&self) -> Vec<Inst> {
        let mut out = Vec::new();
        for (b, live_out) in self.live_out.iter().enumerate() {
            let list = self.accesses.get(b);
            if list.is_empty() {
                continue;
            }
            let mut live = live_out.clone();
            let start = out.len();
            for &i in list.iter().rev() {
                let u = &self.usage[&i];
                let off = self.offsets[&u.root].0;
                if !u.read {
                    let written = if u.kill.is_empty() { &u.touch } else { &u.kill };
                    // (A store of no leaf, an empty struct, stays.)
                    if !written.is_empty() && !live.intersects_shifted(written, off) {
                        out.push(i);
                    }
                }
                live.subtract_shifted(&u.kill, off);
                if u.read {
                    live.insert_shifted(&u.touch, off);
                }
            }
            out[start..].reverse();
        }
        out
    }
}
