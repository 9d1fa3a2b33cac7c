//! Alias analysis: may / must / no alias between the memory locations of one
//! function, and which instructions may read or write a location (mod/ref).
//!
//! Every location is decomposed into a *root* and an index *path*:
//! - `alloca` (thread-private) and `alloca.shared` (workgroup) roots are
//!   distinct objects; a reference argument is an object of the caller;
//!   a typed buffer element is `buffer` root + `[index]`;
//! - `gep` appends its indices to its base's path (chains are followed);
//! - atomics add their index operands to their base; `buffer.read` /
//!   `buffer.write` address element `index` of the buffer, and
//!   `buffer.write_part` the part of it its path reaches (`[index, path..]`:
//!   a location inside the element's, so it `MayAlias`es the whole element
//!   and is never taken for it).
//!
//! Rules, in order:
//! 1. two locations with the same root compare their paths position by
//!    position: two constants that differ, or two different struct members,
//!    make them disjoint (`NoAlias`); equal paths (same constants or the same
//!    SSA index values) `MustAlias`; a path that is a prefix of the other
//!    (one location contains the other) or any undecidable position
//!    (`%i` against `2`) `MayAlias`;
//! 2. distinct allocas never alias each other, nor anything else: a local or
//!    shared slot of this function is not reachable from its arguments or
//!    from a buffer (XIR has no pointer casts and no address-taking other
//!    than `gep` and by-reference call arguments);
//! 3. reference arguments may alias each other, and a shared slot, when one
//!    location's type contains the other's (XIR objects are typed: two
//!    overlapping objects are one and the same or one is a subobject of the
//!    other); otherwise `NoAlias`;
//! 4. elements of two different buffer values `MayAlias` (one resource may be
//!    bound to two arguments), except two different resource arguments of
//!    a `noalias` kernel, which are disjoint (`NoAlias`); buffers never
//!    alias slots or references;
//! 5. anything undecomposable `MayAlias`.
//!
//! `MustAlias` through equal SSA index values holds for accesses evaluated
//! with the same dynamic instance of those values, which is always the case
//! for two accesses of one block execution (the passes that use it are
//! block-local).
//!
//! Mod/ref (`mod_ref`) treats memory other threads can see (shared slots,
//! buffers, reference arguments, which may point at a caller's shared slot)
//! conservatively: a barrier, an atomic, a call or any other side effect may
//! read and write all of it. Thread-private slots are touched only by the
//! instructions that name them (loads, stores, atomics, calls they are
//! passed to, and any other instruction with a may-aliasing lvalue operand).

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;
use xir_spec::Trait;

use crate::ir::{
    reads, ArgKind, Block, Chain, FuncId, Function, Inst, Module, Opcode, Reads, Type, TypeId, TypeTable, Value,
};

/// The answer to an alias query.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AliasResult {
    /// The locations never overlap.
    NoAlias,
    /// They may overlap (or one may contain the other).
    MayAlias,
    /// They are exactly the same location.
    MustAlias,
}

/// Which instruction records a memory scan reads, for its prefetch hints
/// (`AliasAnalysis::prefetch_scan_ahead`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScanRecords {
    /// Those of the instructions without a location that may touch memory
    /// (calls, barriers, other side effects: what `mod_ref` reads); the
    /// scan decides loads and stores by their locations alone.
    Unlocated,
    /// Those of every instruction that may touch memory (the scan also
    /// reads loads' and stores' operands or types).
    MemoryAccesses,
}

/// The object a location lies in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Root {
    /// A function-local `alloca`: private to the thread.
    Local(Inst),
    /// An `alloca.shared`: one per workgroup.
    Shared(Inst),
    /// A reference argument: an object of the caller.
    RefArg(u32),
    /// The elements of a typed buffer value (argument or other value).
    Buffer(Value),
    /// Not decomposable (malformed or unusual IR).
    Unknown(Value),
}

impl Root {
    /// Whether only this thread can read or write the object.
    pub fn is_thread_private(self) -> bool {
        matches!(self, Root::Local(_))
    }
}

/// One step of a location's path.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathIndex {
    /// A constant index (struct member, lane, element). Constants outside
    /// `i64` (no object has that many elements) are kept as `Dynamic`,
    /// which only loses precision: equal values still must-alias.
    Const(i64),
    /// A run-time index: the SSA value computing it.
    Dynamic(Value),
}

/// A memory location: a root object, the index path inside it and the type
/// of its contents. The path's steps live in the analysis that made the
/// location (`AliasAnalysis::path`), so a location is a small `Copy` value:
/// scans hold and copy many, and a load or store shares its address's path
/// instead of copying it.
///
/// Equality compares where the path is stored, not its steps: it is exact
/// for locations of one analysis that were derived from each other (a load
/// and its address), and alias questions go to `AliasAnalysis`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    pub root: Root,
    path: PathRange,
    pub ty: TypeId,
}

/// Where a location's steps lie in its analysis's `paths`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
struct PathRange {
    start: u32,
    len: u32,
}

impl PathRange {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

impl Location {
    fn at_root(root: Root, ty: TypeId) -> Location {
        Location { root, path: PathRange::default(), ty }
    }
}

/// What an instruction may do to a location.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ModRef {
    /// It may read the location.
    pub reads: bool,
    /// It may write the location.
    pub writes: bool,
}

impl ModRef {
    pub const NONE: ModRef = ModRef { reads: false, writes: false };
    pub const BOTH: ModRef = ModRef { reads: true, writes: true };
}

/// Alias facts of one function: the location of every address and every
/// memory access, with what the queries need precomputed (so a query needs
/// neither the module nor the function).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasAnalysis {
    /// Per instruction id: 1 + the index in `locs` of the address it
    /// computes (lvalues) or the location it accesses (loads, stores, buffer
    /// element accesses, atomics); 0 for every other instruction. Only the
    /// instructions that have a location get one: a table of
    /// `Option<Location>` per instruction is written whole for every
    /// function.
    slot: Vec<u32>,
    locs: Vec<Location>,
    /// The steps of every location's path, each path a contiguous run.
    paths: Vec<PathIndex>,
    /// Per argument: the location of a reference argument.
    args: Vec<Option<Location>>,
    /// Ordered type pairs `(outer, inner)` where `inner` is `outer` or one of
    /// its (transitive) members, over the types of this function's locations.
    contains: FxHashSet<(TypeId, TypeId)>,
    /// The function is a `noalias` kernel: its distinct resource arguments
    /// are disjoint.
    disjoint_args: bool,
}

/// The opcodes `AliasAnalysis::decompose` gives a location (every other
/// opcode gets none).
fn may_have_location(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Alloca
            | Opcode::AllocaShared
            | Opcode::Gep
            | Opcode::Load
            | Opcode::Store
            | Opcode::BufferRead
            | Opcode::BufferWrite
            | Opcode::BufferWritePart
    ) || xir_spec::spec().op(op).has(Trait::Atomic)
}

impl AliasAnalysis {
    pub fn compute(m: &Module, f: FuncId) -> AliasAnalysis {
        Self::of_function(m, m.func(f))
    }

    pub fn of_function(m: &Module, f: &Function) -> AliasAnalysis {
        let mut args = vec![None; f.args.len()];
        for (k, a) in f.args.iter().enumerate() {
            if a.kind == ArgKind::Reference {
                args[k] = Some(Location::at_root(Root::RefArg(k as u32), a.ty));
            }
        }
        // The instructions `decompose` can locate, in layout order, by their
        // opcodes in the function's dense table.
        let located: Vec<Inst> = f.all_insts().map(|(_, i)| i).filter(|&i| may_have_location(f.opcode(i))).collect();
        // Room for every location up front: grown by pushes, the table was
        // copied at each doubling (most of this analysis's cache misses).
        let mut aa = AliasAnalysis {
            slot: vec![0; f.inst_capacity()],
            locs: Vec::with_capacity(located.len()),
            paths: Vec::new(),
            args,
            contains: FxHashSet::default(),
            disjoint_args: matches!(f.kind, crate::FunctionKind::Kernel { noalias: true, .. }),
        };
        // Layout order defines gep bases first in verified code. `decompose`
        // reads only the location of its address operand, so a second round
        // is needed only when some address operand that can have a location
        // was not yet visited (a forward reference in an unusual layout).
        let mut visited = vec![false; f.inst_capacity()];
        let mut forward = false;
        // The records are read in layout order but sparsely (the located
        // instructions only).
        let mut walk = f.walk(&located, reads::Record);
        while let Some(i) = walk.next(f) {
            if let Some(&Value::Inst(j)) = f.inst(i).operands.first() {
                forward |= visited.get(j.index()) != Some(&true) && f.inst_exists(j) && may_have_location(f.opcode(j));
            }
            let loc = aa.decompose(m, f, i);
            aa.set(i, loc);
            visited[i.index()] = true;
        }
        if forward {
            for &i in &located {
                let loc = aa.decompose(m, f, i);
                aa.set(i, loc);
            }
        }
        let mut types: Vec<TypeId> = aa.locs.iter().chain(aa.args.iter().flatten()).map(|l| l.ty).collect();
        types.sort();
        types.dedup();
        let mut memo = FxHashMap::default();
        for &a in &types {
            for &b in &types {
                if type_contains(&m.types, a, b, &mut memo) {
                    aa.contains.insert((a, b));
                }
            }
        }
        aa
    }

    fn set(&mut self, i: Inst, loc: Option<Location>) {
        let k = i.index();
        match (loc, self.slot[k]) {
            (Some(l), 0) => {
                self.locs.push(l);
                self.slot[k] = self.locs.len() as u32;
            }
            (Some(l), s) => self.locs[s as usize - 1] = l,
            // `decompose` answers the same shape in both rounds; a slot
            // that loses its location is simply forgotten.
            (None, _) => self.slot[k] = 0,
        }
    }

    fn get(&self, i: Inst) -> Option<&Location> {
        match self.slot.get(i.index()).copied() {
            None | Some(0) => None,
            Some(s) => self.locs.get(s as usize - 1),
        }
    }

    /// `base` extended by `indices`: a new run of `paths` (a location with
    /// an empty path extended by nothing keeps its empty path).
    fn extend_path(&mut self, m: &Module, base: Location, indices: &[Value]) -> Location {
        if indices.is_empty() {
            return base;
        }
        let start = self.paths.len();
        self.paths.extend_from_within(base.path.range());
        self.paths.extend(indices.iter().map(|&v| match m.const_int_value(v).and_then(|c| i64::try_from(c).ok()) {
            Some(c) => PathIndex::Const(c),
            None => PathIndex::Dynamic(v),
        }));
        let len = self.paths.len() - start;
        Location { path: PathRange { start: start as u32, len: len as u32 }, ..base }
    }

    fn decompose(&mut self, m: &Module, f: &Function, i: Inst) -> Option<Location> {
        let d = f.inst(i);
        match d.opcode {
            Opcode::Alloca => Some(Location::at_root(Root::Local(i), d.ty)),
            Opcode::AllocaShared => Some(Location::at_root(Root::Shared(i), d.ty)),
            Opcode::Gep => {
                let base = self.address(f, *d.operands.first()?);
                let loc = self.extend_path(m, base, &d.operands[1..]);
                Some(Location { ty: d.ty, ..loc })
            }
            Opcode::Load => Some(self.address(f, *d.operands.first()?)),
            // The stored value's type is the address's (`store_exact_type`)
            // and the written element's the buffer's (`buffer_write_type`):
            // taken from there, the value's own record (rarely in cache here)
            // is read only when the address or buffer says nothing.
            Opcode::Store => {
                let mut loc = self.address(f, *d.operands.first()?);
                if let (Root::Unknown(_), Some(&v)) = (loc.root, d.operands.get(1)) {
                    loc.ty = f.value_type(m, v);
                }
                Some(loc)
            }
            Opcode::BufferRead | Opcode::BufferWrite => {
                let (&buf, &ix) = (d.operands.first()?, d.operands.get(1)?);
                let ty = match d.opcode {
                    Opcode::BufferRead => d.ty,
                    _ => match m.types.get(f.value_type(m, buf)) {
                        Type::Buffer(elem) => *elem,
                        _ => f.value_type(m, *d.operands.get(2)?),
                    },
                };
                let elements = Location::at_root(Root::Buffer(buf), ty);
                Some(self.extend_path(m, elements, &[ix]))
            }
            // The part's type is the written value's (`buffer_write_part_path`).
            Opcode::BufferWritePart => {
                let (&buf, value) = (d.operands.first()?, *d.operands.get(2)?);
                let part = Location::at_root(Root::Buffer(buf), f.value_type(m, value));
                let mut path: SmallVec<[Value; 4]> = SmallVec::from_slice(&[*d.operands.get(1)?]);
                path.extend_from_slice(d.operands.get(3..)?);
                Some(self.extend_path(m, part, &path))
            }
            _ if d.has(Trait::Atomic) => {
                let base = *d.operands.first()?;
                let n = xir_spec::spec().op(d.opcode).spec.operands.len();
                let indices = d.operands.get(n..).unwrap_or(&[]);
                let base = if f.is_lvalue(base) {
                    self.address(f, base)
                } else {
                    Location::at_root(Root::Buffer(base), TypeTable::VOID)
                };
                let loc = self.extend_path(m, base, indices);
                Some(Location { ty: d.ty, ..loc })
            }
            _ => None,
        }
    }

    /// The location an address value designates (`Unknown` if it is not one).
    fn address(&self, f: &Function, v: Value) -> Location {
        let known = match v {
            Value::Inst(i) if f.is_lvalue(v) => self.get(i).copied(),
            Value::Arg(a) => self.args.get(a as usize).copied().flatten(),
            _ => None,
        };
        known.unwrap_or(Location::at_root(Root::Unknown(v), TypeTable::VOID))
    }

    /// The steps of `loc`'s path (`loc` from this analysis).
    pub fn path(&self, loc: &Location) -> &[PathIndex] {
        &self.paths[loc.path.range()]
    }

    /// Whether every step of `loc`'s path is a constant.
    pub fn is_constant(&self, loc: &Location) -> bool {
        self.path(loc).iter().all(|p| matches!(p, PathIndex::Const(_)))
    }

    /// The location an address value (alloca, gep, reference argument)
    /// designates.
    pub fn location(&self, v: Value) -> Option<&Location> {
        match v {
            Value::Inst(i) => self.get(i),
            Value::Arg(a) => self.args.get(a as usize)?.as_ref(),
            _ => None,
        }
    }

    /// The location a memory instruction accesses (load, store,
    /// buffer.read / buffer.write / buffer.write_part, atomic) or an address instruction
    /// designates.
    pub fn access(&self, i: Inst) -> Option<&Location> {
        self.get(i)
    }

    /// What a block-local memory scan reads of each block: it decides
    /// most instructions by opcode and asks `access` and `mod_ref` for
    /// the rest, so the block record, its instructions' dense-table
    /// entries, then their locations and the records `records` names
    /// (`Function::walk`).
    pub fn scan_reads(&self, records: ScanRecords) -> ScanReads<'_> {
        ScanReads { aa: self, records }
    }

    /// Ask the cache for the locations of those of `insts` that may touch
    /// memory, and for the records `records` names, ahead of a walk that
    /// asks `access` and `mod_ref` for them (reads their opcodes and this
    /// analysis's per-id table).
    #[inline]
    pub fn prefetch_accesses(&self, f: &Function, insts: &[Inst], records: ScanRecords) {
        if self.slot.len() < crate::ir::PREFETCH_MIN_INSTS {
            return;
        }
        for &i in insts {
            if Self::never_mod_ref(f.opcode(i)) {
                continue;
            }
            let loc = self.get(i);
            if let Some(l) = loc {
                crate::ir::prefetch_line(l);
            }
            if loc.is_none() || records == ScanRecords::MemoryAccesses {
                f.prefetch_inst(i);
            }
        }
    }

    /// Alias between two address values.
    pub fn alias(&self, a: Value, b: Value) -> AliasResult {
        match (self.location(a), self.location(b)) {
            (Some(x), Some(y)) => self.alias_locations(x, y),
            _ if a == b => AliasResult::MustAlias,
            _ => AliasResult::MayAlias,
        }
    }

    /// Alias between two locations.
    pub fn alias_locations(&self, a: &Location, b: &Location) -> AliasResult {
        use AliasResult::*;
        if a.root == b.root {
            return compare_paths(self.path(a), self.path(b));
        }
        match (a.root, b.root) {
            (Root::Unknown(_), _) | (_, Root::Unknown(_)) => MayAlias,
            (Root::Local(_), _) | (_, Root::Local(_)) => NoAlias,
            (Root::Buffer(Value::Arg(x)), Root::Buffer(Value::Arg(y))) if self.disjoint_args && x != y => NoAlias,
            (Root::Buffer(_), Root::Buffer(_)) => MayAlias,
            (Root::Buffer(_), _) | (_, Root::Buffer(_)) => NoAlias,
            (Root::Shared(_), Root::Shared(_)) => NoAlias,
            // Reference arguments (and a shared slot a caller may pass):
            // overlap needs one type to contain the other.
            _ if self.overlap_types(a.ty, b.ty) => MayAlias,
            _ => NoAlias,
        }
    }

    fn overlap_types(&self, a: TypeId, b: TypeId) -> bool {
        self.contains.contains(&(a, b)) || self.contains.contains(&(b, a))
    }

    /// If `inner` lies inside `outer` at a constant offset path, the path
    /// from `outer` to `inner` (empty when they are the same location).
    pub fn sub_path(&self, outer: &Location, inner: &Location) -> Option<SmallVec<[i128; 4]>> {
        let (outer_path, inner_path) = (self.path(outer), self.path(inner));
        if outer.root != inner.root || inner_path.len() < outer_path.len() {
            return None;
        }
        if compare_paths(outer_path, &inner_path[..outer_path.len()]) != AliasResult::MustAlias {
            return None;
        }
        inner_path[outer_path.len()..]
            .iter()
            .map(|p| match p {
                PathIndex::Const(c) => Some(i128::from(*c)),
                PathIndex::Dynamic(_) => None,
            })
            .collect()
    }

    /// Whether `mod_ref` answers `ModRef::NONE` for an instruction with this
    /// opcode whatever the location: a pure, non-convergent computation.
    /// Scans keeping a set of locations can skip such instructions without
    /// asking per location.
    pub fn never_mod_ref(op: Opcode) -> bool {
        let o = xir_spec::spec().op(op);
        !matches!(op, Opcode::Load | Opcode::BufferRead | Opcode::Store | Opcode::BufferWrite | Opcode::BufferWritePart)
            && !o.has(Trait::Atomic)
            && !o.has(Trait::Call)
            && o.has(Trait::Pure)
            && !o.has(Trait::Convergent)
    }

    /// What instruction `i` of `f` may do to location `loc`.
    pub fn mod_ref(&self, f: &Function, i: Inst, loc: &Location) -> ModRef {
        // The opcode from the dense table and the traits from the spec: a
        // load (most queries) needs no record read at all, only its access.
        let op = f.opcode(i);
        let d = xir_spec::spec().op(op);
        let overlaps = |j: Inst| self.access(j).is_none_or(|l| self.alias_locations(l, loc) != AliasResult::NoAlias);
        let private = loc.root.is_thread_private();
        match op {
            Opcode::Load | Opcode::BufferRead => ModRef { reads: overlaps(i), writes: false },
            Opcode::Store | Opcode::BufferWrite | Opcode::BufferWritePart => {
                ModRef { reads: false, writes: overlaps(i) }
            }
            // Atomics synchronize with other threads: everything they can
            // see may have changed (or be read by them after it).
            _ if d.has(Trait::Atomic) => {
                if !private || overlaps(i) {
                    ModRef::BOTH
                } else {
                    ModRef::NONE
                }
            }
            _ if d.has(Trait::Call) => {
                // A callee reaches this thread's slots only through the
                // addresses it is passed.
                if !private || self.operands_reach(f, i, loc) {
                    ModRef::BOTH
                } else {
                    ModRef::NONE
                }
            }
            _ if d.has(Trait::Pure) && !d.has(Trait::Convergent) => ModRef::NONE,
            _ => {
                if self.operands_reach(f, i, loc) {
                    return ModRef::BOTH;
                }
                let effects = d.has(Trait::SideEffect) || d.has(Trait::Barrier);
                if private {
                    ModRef::NONE
                } else {
                    ModRef { reads: effects || d.has(Trait::MemoryRead), writes: effects || d.has(Trait::MemoryWrite) }
                }
            }
        }
    }

    /// Whether an lvalue operand of `i` may alias `loc`.
    fn operands_reach(&self, f: &Function, i: Inst, loc: &Location) -> bool {
        f.inst(i).operands.iter().any(|&v| {
            f.is_lvalue(v) && self.location(v).is_none_or(|l| self.alias_locations(l, loc) != AliasResult::NoAlias)
        })
    }
}

/// Position-by-position comparison of two paths of one root.
fn compare_paths(a: &[PathIndex], b: &[PathIndex]) -> AliasResult {
    let mut undecided = false;
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (PathIndex::Const(p), PathIndex::Const(q)) if p != q => return AliasResult::NoAlias,
            (PathIndex::Const(_), PathIndex::Const(_)) => {}
            (PathIndex::Dynamic(v), PathIndex::Dynamic(w)) if v == w => {}
            _ => undecided = true,
        }
    }
    if undecided || a.len() != b.len() {
        AliasResult::MayAlias
    } else {
        AliasResult::MustAlias
    }
}

/// Whether `inner` is `outer` or a (transitive) member type of it.
fn type_contains(t: &TypeTable, outer: TypeId, inner: TypeId, memo: &mut FxHashMap<(TypeId, TypeId), bool>) -> bool {
    if outer == inner {
        return true;
    }
    if let Some(&r) = memo.get(&(outer, inner)) {
        return r;
    }
    let members: Vec<TypeId> = match t.get(outer) {
        Type::Vector { elem, .. } => vec![*elem],
        Type::Matrix { elem, dim } => {
            let mut v = vec![*elem];
            v.extend(t.lookup(&Type::Vector { elem: *elem, lanes: *dim }));
            v
        }
        Type::Array { elem, .. } => vec![*elem],
        Type::Struct { fields, .. } => fields.clone(),
        _ => Vec::new(),
    };
    memo.insert((outer, inner), false);
    let r = members.into_iter().any(|m| type_contains(t, m, inner, memo));
    memo.insert((outer, inner), r);
    r
}

/// The reads of a block-local memory scan (`AliasAnalysis::scan_reads`).
pub struct ScanReads<'a> {
    aa: &'a AliasAnalysis,
    records: ScanRecords,
}

impl Reads<Block> for ScanReads<'_> {
    const CHAIN: Chain = Chain::Long;
    fn first(&self, f: &Function, b: Block) {
        f.prefetch_block(b);
    }
    fn then(&self, f: &Function, b: Block) {
        f.prefetch_block_opcodes(b);
    }
    fn last(&self, f: &Function, b: Block) {
        self.aa.prefetch_accesses(f, f.block(b).insts(), self.records);
    }
}
