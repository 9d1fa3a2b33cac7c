//! Functions: arguments, blocks and instructions in dense tables, the block
//! layout (which blocks the function owns, in order), and use lists for
//! instruction results and arguments.
//!
//! **Invariant:** `uses[v]` lists exactly the operand slots of live
//! instructions that hold `v`, and a block's list holds exactly the
//! instructions whose parent it is. Both hold by construction: operand and
//! block lists are private, and every mutation goes through the methods
//! here, the cursor (`cursor.rs`) or the batched rewriter (`rewrite.rs`).

use serde::{Deserialize, Serialize};
use std::mem::size_of;

use smallvec::SmallVec;

mod cursor;
mod names;
mod prefetch;
mod rewrite;
mod table;
mod use_list;
mod walk;
pub use cursor::{Cursor, CursorPosition};
use names::{NameId, Names};
pub(crate) use prefetch::prefetch_line;
pub use prefetch::PREFETCH_MIN_INSTS;
use prefetch::{prefetch_ahead, PREFETCH_DISTANCE};
pub use rewrite::Rewriter;
use rustc_hash::FxHashMap;
use table::Table;
use use_list::UseList;
pub use walk::{reads, Chain, IdsDescending, Reads, Walk};

use super::metadata::NO_FIELDS;
use super::{
    Block, Inst, InstCore, InstData, Metadata, MetadataFields, MetadataRef, Payload, Span, TypeId, Use, Value,
};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FunctionKind {
    /// A dispatch entry point with its block (workgroup) size.
    Kernel {
        block_size: [u32; 3],
        /// Dispatched in whole blocks (text: `whole_blocks`). A dispatch of
        /// `n` threads along an axis runs `ceil(n / block_size)` blocks,
        /// every thread of each, and `$dispatch_size` is that rounded-up
        /// count: the model of WGSL and GLSL, whose dispatches count
        /// workgroups, so their kernels do their own bound checks. Without
        /// it, threads at or past the dispatch size do nothing (the
        /// backend's entry check), so any thread count may be dispatched.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        whole_blocks: bool,
        /// No resource argument the kernel writes shares memory with another
        /// resource argument (text: `noalias`): WebGPU's rule for the
        /// bindings of a dispatch, which WGSL kernels get from the front
        /// end. Alias analysis takes the kernel's distinct resource
        /// arguments to be disjoint, and the backend decorates no buffer
        /// `Aliased`. Binding overlapping resources to it is outside its
        /// contract; without it, any two may overlap.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        noalias: bool,
    },
    Callable,
    /// Declared, defined elsewhere: has no blocks.
    External,
}

/// How an argument is passed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgKind {
    /// By value (an rvalue of the type).
    Value,
    /// By reference: the argument is an lvalue of the type.
    Reference,
    /// A resource (buffer, texture, bindless array, accel).
    Resource,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArgData {
    pub ty: TypeId,
    pub kind: ArgKind,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub md: Metadata,
}

/// A block's instructions in order. Up to `INLINE_BLOCK_INSTS` ids are
/// held in the block record itself, so walking a block needs no access to
/// a separate heap list: on large functions that list is one more random
/// cache miss per block on every block walk (BlockData is one cache line;
/// about 90% of the blocks the legalization spine produces hold at most
/// eight instructions, BENCHMARKS.md).
pub type InstList = SmallVec<[Inst; INLINE_BLOCK_INSTS]>;

/// How many instruction ids a block holds without a heap list.
pub const INLINE_BLOCK_INSTS: usize = 8;

/// A block's record: its instructions (and its text position). Its
/// metadata lives in side tables (`Function::block_md`), so that walks of
/// the instruction lists and sweeps of the metadata (the spill audit, the
/// dialect check) each read only what they need.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[repr(align(64))]
pub struct BlockData {
    insts: InstList,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

impl BlockData {
    /// The block's instructions, in order.
    #[inline]
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }
}

/// The dense per-instruction record of `Function::hot`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct InstHot {
    opcode: xir_spec::Opcode,
    /// The holding block's index, or `NO_PARENT` once removed / unplaced.
    parent: u32,
}

const NO_PARENT: u32 = u32::MAX;

/// Whether a dense-table parent names a block of the layout (`owned` from
/// `Function::owned_flags`).
fn is_owned_parent(owned: &[bool], parent: u32) -> bool {
    parent != NO_PARENT && owned.get(parent as usize).copied().unwrap_or(false)
}

impl InstHot {
    fn parent(self) -> Option<Block> {
        (self.parent != NO_PARENT).then_some(Block(self.parent))
    }
}

fn pack_parent(b: Option<Block>) -> u32 {
    match b {
        Some(b) => {
            debug_assert!(b.0 != NO_PARENT, "block id reserved for `no parent`");
            b.0
        }
        None => NO_PARENT,
    }
}

/// A payload slot of the per-instruction table: one pointer, since most
/// instructions carry none (an inline `Payload` cost 32 bytes an
/// instruction; BENCHMARKS.md, "Memory per instruction").
type PayloadSlot = Option<Box<Payload>>;

fn payload_slot(p: Payload) -> PayloadSlot {
    (!matches!(p, Payload::None)).then(|| Box::new(p))
}

/// What an empty payload slot reads as.
static NO_PAYLOAD: Payload = Payload::None;

/// A span slot of the per-instruction table: an `Option<Span>` in 12
/// bytes instead of 16, no span being a line no text has.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct SpanSlot(Span);

impl SpanSlot {
    const NONE_LINE: u32 = u32::MAX;

    fn new(span: Option<Span>) -> Self {
        match span {
            Some(s) => {
                debug_assert!(s.line != Self::NONE_LINE, "line {} is reserved for `no span`", s.line);
                SpanSlot(s)
            }
            None => SpanSlot(Span { line: Self::NONE_LINE, col: 0, len: 0 }),
        }
    }

    fn get(self) -> Option<Span> {
        (self.0.line != Self::NONE_LINE).then_some(self.0)
    }
}

/// The fields `map` holds for `k`, or the empty ones.
fn sparse_fields<K: std::hash::Hash + Eq>(map: &FxHashMap<K, MetadataFields>, k: K) -> &MetadataFields {
    if map.is_empty() {
        return &NO_FIELDS;
    }
    map.get(&k).unwrap_or(&NO_FIELDS)
}

/// Store `fields` for `k` (nothing when empty).
fn set_sparse<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, MetadataFields>, k: K, fields: MetadataFields) {
    if fields.is_empty() {
        map.remove(&k);
    } else {
        map.insert(k, fields);
    }
}

#[derive(Debug)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub ret: TypeId,
    pub args: Vec<ArgData>,
    pub md: Metadata,
    /// Every block ever created; only those in `layout` belong to the function.
    blocks: Vec<BlockData>,
    /// The names of the instructions and blocks, each distinct one once.
    names: Names,
    /// Per block id, its name.
    block_names: Vec<NameId>,
    /// The blocks' other metadata (comments, spill provenance), by id,
    /// for the few that carry any.
    block_md: FxHashMap<Block, MetadataFields>,
    /// Every instruction ever created (its core: opcode, type, operands,
    /// blocks); removed ones have no parent.
    insts: Table<InstCore>,
    /// Per instruction id, the parts few passes read, out of the core
    /// records so that those stay one cache line each: the payload (case
    /// literals, message text), the name and the source span.
    payloads: Table<PayloadSlot>,
    inst_names: Table<NameId>,
    inst_spans: Table<SpanSlot>,
    /// The instructions' other metadata (location, comments, spill
    /// provenance), by id, for the few that carry any: a dense slot cost
    /// every instruction 8 bytes (BENCHMARKS.md, "Memory per instruction").
    inst_md: FxHashMap<Inst, MetadataFields>,
    /// Per instruction id: its opcode (a copy of `insts[i].opcode`) and its
    /// block. Scans that select instructions by opcode or liveness read this
    /// 8-byte table instead of the 64-byte cores, which on large
    /// functions is the difference between streaming a few MB and a few
    /// hundred (BENCHMARKS.md, legalization). Rebuilt after deserializing.
    hot: Table<InstHot>,
    /// Owned blocks, in print order; the first is the body (entry) block.
    layout: Vec<Block>,
    inst_uses: Table<UseList>,
    arg_uses: Vec<UseList>,
    pub span: Option<Span>,
}

/// A clone keeps the spare capacity of the growing tables (instructions,
/// their use lists, blocks), so a pass run on a copy grows them exactly as
/// it would on the original. A derived clone allocates them to the byte,
/// and the first instruction a pass adds then copies the whole table.
impl Clone for Function {
    fn clone(&self) -> Self {
        fn with_room<T: Clone>(v: &[T], cap: usize) -> Vec<T> {
            let mut out = Vec::with_capacity(cap.max(v.len()));
            out.extend_from_slice(v);
            out
        }
        // Destructured so that a new field cannot be left out silently.
        let Function {
            name,
            kind,
            ret,
            args,
            md,
            blocks,
            names,
            block_names,
            block_md,
            insts,
            payloads,
            inst_names,
            inst_spans,
            inst_md,
            hot,
            layout,
            inst_uses,
            arg_uses,
            span,
        } = self;
        Function {
            name: name.clone(),
            kind: *kind,
            ret: *ret,
            args: args.clone(),
            md: md.clone(),
            blocks: with_room(blocks, blocks.capacity()),
            names: names.clone(),
            block_names: with_room(block_names, block_names.capacity()),
            block_md: block_md.clone(),
            insts: insts.clone(),
            payloads: payloads.clone(),
            inst_names: inst_names.clone(),
            inst_spans: inst_spans.clone(),
            inst_md: inst_md.clone(),
            hot: hot.clone(),
            layout: layout.clone(),
            inst_uses: inst_uses.clone(),
            arg_uses: arg_uses.clone(),
            span: *span,
        }
    }
}

/// Equal functions hold the same entities with the same metadata; names
/// are compared by their text, not by their ids in each function's table
/// (which depend on the order they were given in).
impl PartialEq for Function {
    fn eq(&self, o: &Self) -> bool {
        // Destructured so that a new field cannot be left out silently.
        let Function {
            name,
            kind,
            ret,
            args,
            md,
            blocks,
            names,
            block_names,
            block_md,
            insts,
            payloads,
            inst_names,
            inst_spans,
            inst_md,
            hot,
            layout,
            inst_uses,
            arg_uses,
            span,
        } = self;
        fn fields_eq<K: std::hash::Hash + Eq>(
            a: &FxHashMap<K, MetadataFields>,
            b: &FxHashMap<K, MetadataFields>,
        ) -> bool {
            a.iter().filter(|(_, f)| !f.is_empty()).count() == b.iter().filter(|(_, f)| !f.is_empty()).count()
                && a.iter().all(|(k, f)| f.is_empty() || b.get(k) == Some(f))
        }
        *name == o.name
            && *kind == o.kind
            && *ret == o.ret
            && *args == o.args
            && *md == o.md
            && *blocks == o.blocks
            && block_names.len() == o.block_names.len()
            && block_names.iter().zip(&o.block_names).all(|(a, b)| names.get(*a) == o.names.get(*b))
            && fields_eq(block_md, &o.block_md)
            && *insts == o.insts
            && *payloads == o.payloads
            && inst_names.len() == o.inst_names.len()
            && inst_names.iter().zip(o.inst_names.iter()).all(|(a, b)| names.get(*a) == o.names.get(*b))
            && *inst_spans == o.inst_spans
            && fields_eq(inst_md, &o.inst_md)
            && *hot == o.hot
            && *layout == o.layout
            && *inst_uses == o.inst_uses
            && *arg_uses == o.arg_uses
            && *span == o.span
    }
}

impl Function {
    pub fn new(name: impl Into<String>, kind: FunctionKind, ret: TypeId) -> Self {
        Function {
            name: name.into(),
            kind,
            ret,
            args: Vec::new(),
            md: Metadata::default(),
            blocks: Vec::new(),
            names: Names::default(),
            block_names: Vec::new(),
            block_md: FxHashMap::default(),
            insts: Table::default(),
            payloads: Table::default(),
            inst_names: Table::default(),
            inst_spans: Table::default(),
            inst_md: FxHashMap::default(),
            hot: Table::default(),
            layout: Vec::new(),
            inst_uses: Table::default(),
            arg_uses: Vec::new(),
            span: None,
        }
    }

    pub fn is_kernel(&self) -> bool {
        matches!(self.kind, FunctionKind::Kernel { .. })
    }
    pub fn is_external(&self) -> bool {
        matches!(self.kind, FunctionKind::External)
    }

    /// This function's heap, by part of the core (`Footprint`).
    pub fn footprint(&self) -> super::Footprint {
        use super::footprint::{hash_map_bytes, smallvec_bytes, vec_bytes};
        fn sparse_md<K>(map: &FxHashMap<K, MetadataFields>) -> usize {
            hash_map_bytes(map.capacity(), size_of::<(K, MetadataFields)>())
                + map.values().map(MetadataFields::heap_bytes).sum::<usize>()
        }
        let md = |m: &Metadata| m.heap_bytes();
        super::Footprint {
            inst_cores: self.insts.heap_bytes(|_| 0),
            operand_spills: self.insts.iter().map(|c| smallvec_bytes(&c.operands) + smallvec_bytes(&c.blocks)).sum(),
            payloads: self.payloads.heap_bytes(|p| p.as_ref().map_or(0, |p| size_of::<Payload>() + p.heap_bytes())),
            metadata: self.names.heap_bytes()
                + self.inst_names.heap_bytes(|_| 0)
                + sparse_md(&self.inst_md)
                + vec_bytes(&self.block_names)
                + sparse_md(&self.block_md)
                + self.args.iter().map(|a| md(&a.md)).sum::<usize>()
                + md(&self.md),
            spans: self.inst_spans.heap_bytes(|_| 0),
            dense: self.hot.heap_bytes(|_| 0),
            uses: self.inst_uses.heap_bytes(UseList::heap_bytes)
                + self.arg_uses.iter().map(UseList::heap_bytes).sum::<usize>(),
            blocks: vec_bytes(&self.blocks)
                + self.blocks.iter().map(|b| smallvec_bytes(&b.insts)).sum::<usize>()
                + vec_bytes(&self.layout),
            types_and_consts: 0,
            other: self.name.capacity() + vec_bytes(&self.args) + vec_bytes(&self.arg_uses),
        }
    }

    /// Frees the spare room of the function's tables. The readers call it
    /// on each function they finish: tables grow by doubling, and a parsed
    /// function otherwise kept up to half its tables' room unused
    /// (BENCHMARKS.md, "Memory per instruction"). Names no instruction or
    /// block holds any more (after renames) are dropped, and so are
    /// metadata records left empty.
    pub fn shrink_to_fit(&mut self) {
        self.blocks.shrink_to_fit();
        self.compact_names();
        self.names.shrink_to_fit();
        self.block_names.shrink_to_fit();
        self.block_md.retain(|_, f| !f.is_empty());
        self.block_md.shrink_to_fit();
        self.insts.shrink_to_fit();
        self.payloads.shrink_to_fit();
        self.inst_names.shrink_to_fit();
        self.inst_md.retain(|_, f| !f.is_empty());
        self.inst_md.shrink_to_fit();
        self.inst_spans.shrink_to_fit();
        self.hot.shrink_to_fit();
        self.layout.shrink_to_fit();
        self.inst_uses.shrink_to_fit();
        self.arg_uses.shrink_to_fit();
        self.args.shrink_to_fit();
    }

    /// The id of `name` in the function's names (added if new).
    fn name_id(&mut self, name: Option<&str>) -> NameId {
        name.map_or(NameId::NONE, |n| self.names.intern(n))
    }

    /// Drop the names no instruction or block holds (left by renames): one
    /// sweep of the name tables, and a rebuild only when there are any.
    fn compact_names(&mut self) {
        let mut used = vec![false; self.names.len()];
        let mut n_used = 0;
        let ids = self.inst_names.iter().chain(self.block_names.iter());
        for k in ids.filter_map(|id| id.index()) {
            if !std::mem::replace(&mut used[k], true) {
                n_used += 1;
            }
        }
        if n_used == used.len() {
            return;
        }
        let ids = self.inst_names.iter().chain(self.block_names.iter()).copied();
        let (names, map) = self.names.compacted(ids);
        let remap = |id: &mut NameId| {
            if let Some(k) = id.index() {
                *id = map[k];
            }
        };
        for k in 0..self.inst_names.len() {
            remap(&mut self.inst_names[k]);
        }
        self.block_names.iter_mut().for_each(remap);
        self.names = names;
    }

    pub fn add_arg(&mut self, ty: TypeId, kind: ArgKind, md: Metadata) -> Value {
        self.args.push(ArgData { ty, kind, md });
        self.arg_uses.push(UseList::default());
        Value::Arg((self.args.len() - 1) as u32)
    }

    // ---- blocks -------------------------------------------------------

    /// Create a block and append it to the layout.
    pub fn add_block(&mut self) -> Block {
        let b = Block::new(self.blocks.len());
        self.blocks.push(BlockData::default());
        self.block_names.push(NameId::NONE);
        self.layout.push(b);
        b
    }

    /// The entry block, if the function has a body.
    pub fn body(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    /// Owned blocks in layout order.
    pub fn blocks(&self) -> &[Block] {
        &self.layout
    }

    /// Make `b` the entry block (moves it to the front of the layout).
    pub fn set_body(&mut self, b: Block) {
        self.layout.retain(|&x| x != b);
        self.layout.insert(0, b);
    }

    /// Replace the layout order (must be a permutation of a subset of blocks).
    pub fn set_layout(&mut self, layout: Vec<Block>) {
        self.layout = layout;
    }

    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.index()]
    }
    /// Record where block `b` starts in the text it was parsed from.
    pub fn set_block_span(&mut self, b: Block, span: Option<Span>) {
        self.blocks[b.index()].span = span;
    }
    /// Metadata of block `b` (name, comments, spill provenance).
    pub fn block_md(&self, b: Block) -> MetadataRef<'_> {
        MetadataRef { name: self.block_name(b), fields: sparse_fields(&self.block_md, b) }
    }
    /// The name of block `b`, if it has one.
    pub fn block_name(&self, b: Block) -> Option<&str> {
        self.names.get(self.block_names[b.index()])
    }
    /// Name block `b` (or take its name away).
    pub fn set_block_name(&mut self, b: Block, name: Option<&str>) {
        self.block_names[b.index()] = self.name_id(name);
    }
    /// The metadata of block `b` other than its name, to write.
    pub fn block_md_mut(&mut self, b: Block) -> &mut MetadataFields {
        assert!(b.index() < self.blocks.len(), "no block {b}");
        self.block_md.entry(b).or_default()
    }
    /// Replace the metadata of block `b` (its name too).
    pub fn set_block_md(&mut self, b: Block, md: Metadata) {
        let (name, fields) = md.into_parts();
        self.set_block_name(b, name.as_deref());
        set_sparse(&mut self.block_md, b, fields);
    }
    /// Blocks of the layout whose metadata has more than a name (comments,
    /// spill provenance), in id order: a sweep of the sparse table, no
    /// block record read.
    pub fn block_metadata(&self) -> impl Iterator<Item = (Block, MetadataRef<'_>)> + '_ {
        let owned = self.owned_flags();
        let mut ids: Vec<Block> =
            self.block_md.iter().filter(|(b, f)| !f.is_empty() && owned[b.index()]).map(|(b, _)| *b).collect();
        ids.sort_unstable();
        ids.into_iter().map(move |b| (b, self.block_md(b)))
    }
    /// Whether `b` is a valid id (owned or not).
    pub fn block_exists(&self, b: Block) -> bool {
        b.index() < self.blocks.len()
    }
    pub fn is_owned(&self, b: Block) -> bool {
        self.layout.contains(&b)
    }
    /// Number of block ids ever created (for dense side tables).
    pub fn block_capacity(&self) -> usize {
        self.blocks.len()
    }

    /// Renumber the blocks so that the owned ones are `0..n` in layout
    /// order, the others following in their old order. A pass that rebuilds
    /// the control flow (`restructure_cfg`) creates blocks at the end of the
    /// table and lays them out between old ones; after this, every later
    /// walk of the layout reads the block table front to back instead of at
    /// random. Rewrites every block reference the function holds (the
    /// layout, each instruction's block and its block operands). Block ids
    /// kept outside the function (cached analyses, plans) are stale
    /// afterwards. Returns the map from old id to new.
    pub fn renumber_blocks_by_layout(&mut self) -> Vec<Block> {
        let map = self.renumber_blocks(true);
        map.into_iter().map(|b| b.expect("every block is kept")).collect()
    }

    /// `renumber_blocks_by_layout`, and the block table shrinks to the
    /// blocks that still mean something: owned ones, and unowned ones that
    /// hold an instruction or that an instruction names. Blocks removed by
    /// a pass (empty, outside the layout) are dropped, so the per-block
    /// tables of every later walk are as long as the function, not its
    /// history. Returns the map from old id to new (`None`: dropped).
    pub fn compact_blocks(&mut self) -> Vec<Option<Block>> {
        self.renumber_blocks(false)
    }

    fn renumber_blocks(&mut self, keep_all: bool) -> Vec<Option<Block>> {
        const UNSET: u32 = u32::MAX;
        let n = self.blocks.len();
        let mut map = vec![UNSET; n];
        let mut order: Vec<usize> = Vec::with_capacity(n);
        fn claim(b: usize, map: &mut [u32], order: &mut Vec<usize>) {
            if map[b] == UNSET {
                map[b] = order.len() as u32;
                order.push(b);
            }
        }
        for &b in &self.layout {
            if b.index() < n {
                claim(b.index(), &mut map, &mut order);
            }
        }
        // Only opcodes with block operands can hold any (the verifier's
        // shape rule), so the records of the others are not read.
        let spec = xir_spec::spec();
        let names_blocks = |op: xir_spec::Opcode| {
            let s = &spec.op(op).spec;
            !s.blocks.is_empty() || s.variadic_blocks.is_some()
        };
        if keep_all {
            for b in 0..n {
                claim(b, &mut map, &mut order);
            }
        } else {
            for (b, d) in self.blocks.iter().enumerate() {
                if !d.insts.is_empty() {
                    claim(b, &mut map, &mut order);
                }
            }
        }
        let to_opt = |map: &[u32]| map.iter().map(|&m| (m != UNSET).then_some(Block(m))).collect::<Vec<_>>();
        if order.len() == n && order.iter().enumerate().all(|(new, &old)| new == old) {
            return to_opt(&map);
        }
        // One walk of the instructions rewrites their blocks and their block
        // operands. A live instruction naming a block nobody claimed (empty,
        // outside the layout) claims it: it still means something. Ids of
        // dropped blocks stay as they were in the records of removed
        // instructions (nothing reads those).
        // The records read are those naming blocks (terminators, Phis),
        // about one in four of the table: each is asked for twice the
        // distance ahead, so that as many requests are in flight as in a
        // walk that reads every entry.
        const AHEAD: usize = 2 * PREFETCH_DISTANCE;
        for k in 0..self.hot.len() {
            if let Some(h) = self.hot.get(k + AHEAD) {
                if names_blocks(h.opcode) {
                    prefetch_line(&self.insts[k + AHEAD]);
                }
            }
            let (h, d) = (&mut self.hot[k], &mut self.insts[k]);
            let live = h.parent != NO_PARENT;
            if live && (h.parent as usize) < n {
                h.parent = map[h.parent as usize];
            }
            if names_blocks(h.opcode) {
                for b in d.blocks.iter_mut() {
                    let k = b.index();
                    if k >= n {
                        continue;
                    }
                    if live {
                        claim(k, &mut map, &mut order);
                    }
                    if map[k] != UNSET {
                        *b = Block(map[k]);
                    }
                }
            }
        }
        let mut old = std::mem::take(&mut self.blocks);
        self.blocks = Vec::with_capacity(old.capacity());
        for (k, &o) in order.iter().enumerate() {
            if let Some(ahead) = prefetch_ahead(&order, k) {
                prefetch_line(&old[ahead]);
            }
            self.blocks.push(std::mem::take(&mut old[o]));
        }
        // Every claimed record was moved out above; the unclaimed ones
        // (removed blocks) are dropped here, found from the map. The buffer
        // is then freed without visiting each moved-out record again.
        for (k, &m) in map.iter().enumerate() {
            if m == UNSET {
                drop(std::mem::take(&mut old[k]));
            }
        }
        debug_assert!(old.iter().all(|d| !d.insts.spilled()));
        // SAFETY: shrinking the length to 0 is always in bounds; every
        // element it forgets was replaced by an empty default above and
        // owns no heap memory, so nothing leaks and nothing is read again.
        unsafe { old.set_len(0) };
        drop(old);
        let old = std::mem::take(&mut self.block_names);
        self.block_names = Vec::with_capacity(old.capacity());
        self.block_names.extend(order.iter().map(|&o| old[o]));
        let old = std::mem::take(&mut self.block_md);
        self.block_md = old
            .into_iter()
            .filter_map(|(b, f)| (map[b.index()] != UNSET).then(|| (Block(map[b.index()]), f)))
            .collect();
        for b in &mut self.layout {
            if let Some(&m) = map.get(b.index()) {
                *b = Block(m);
            }
        }
        to_opt(&map)
    }

    /// Remove a block from the function, deleting its instructions.
    pub fn remove_block(&mut self, b: Block) {
        for i in std::mem::take(&mut self.blocks[b.index()].insts) {
            self.detach_operands(i);
            self.hot[i.index()].parent = NO_PARENT;
        }
        self.layout.retain(|&x| x != b);
    }

    pub fn terminator(&self, b: Block) -> Option<Inst> {
        // The record, not the dense table: nearly every caller reads the
        // terminator's record next (its blocks or operands), so this keeps a
        // block walk at one random access per block.
        let last = *self.blocks[b.index()].insts.last()?;
        self.insts[last.index()].is_terminator().then_some(last)
    }

    /// The layout's blocks with their terminators, in order. The walk asks
    /// the cache for the terminator records a few blocks ahead
    /// (`prefetch_terminator`): on functions far larger than the caches,
    /// block walks wait on exactly this chain.
    pub fn terminators_in_layout(&self) -> impl Iterator<Item = (Block, Option<Inst>)> + '_ {
        let mut walk = self.walk(&self.layout, reads::Terminator);
        std::iter::from_fn(move || walk.next(self).map(|b| (b, self.terminator(b))))
    }

    /// The terminator of `b` with its opcode, both from the dense table: for
    /// walks that decide by opcode whether to read the record at all.
    pub fn terminator_by_table(&self, b: Block) -> Option<(Inst, xir_spec::Opcode)> {
        let last = *self.blocks[b.index()].insts.last()?;
        let op = self.opcode(last);
        xir_spec::spec().op(op).has(xir_spec::Trait::Terminator).then_some((last, op))
    }

    /// Successors of `b` along executed edges.
    pub fn successors(&self, b: Block) -> SmallVec<[Block; 4]> {
        self.successor_slice(b).iter().copied().collect()
    }

    /// `successors` as a slice of the terminator's block list (no copy).
    pub fn successor_slice(&self, b: Block) -> &[Block] {
        self.terminator(b).map(|t| self.insts[t.index()].successor_slice()).unwrap_or(&[])
    }

    // ---- instructions -------------------------------------------------

    /// The core of `i` (opcode, type, operands, blocks).
    pub fn inst(&self, i: Inst) -> &InstCore {
        &self.insts[i.index()]
    }
    /// A copy of the whole instruction (core, payload, metadata, span), to
    /// create or replace another from it.
    pub fn inst_data(&self, i: Inst) -> InstData {
        let k = i.index();
        InstData {
            core: self.insts[k].clone(),
            payload: self.payload(i).clone(),
            md: self.inst_md(i).to_metadata(),
            span: self.inst_spans[k].get(),
        }
    }
    /// The payload of `i` (case literals, message text, or none).
    pub fn payload(&self, i: Inst) -> &Payload {
        self.payloads[i.index()].as_deref().unwrap_or(&NO_PAYLOAD)
    }
    pub fn set_payload(&mut self, i: Inst, p: Payload) {
        self.payloads[i.index()] = payload_slot(p);
    }
    /// Case literals of `i` (empty unless it carries them).
    pub fn cases(&self, i: Inst) -> &[u64] {
        self.payload(i).cases()
    }
    /// Message text of `i`, if it carries one.
    pub fn text(&self, i: Inst) -> Option<&str> {
        self.payload(i).text()
    }
    /// Metadata of `i` (name, location, comments, spill provenance).
    pub fn inst_md(&self, i: Inst) -> MetadataRef<'_> {
        MetadataRef { name: self.inst_name(i), fields: sparse_fields(&self.inst_md, i) }
    }
    /// The name of `i`'s result, if it has one.
    #[inline]
    pub fn inst_name(&self, i: Inst) -> Option<&str> {
        self.names.get(self.inst_names[i.index()])
    }
    /// Name `i`'s result (or take its name away).
    pub fn set_inst_name(&mut self, i: Inst, name: Option<&str>) {
        self.inst_names[i.index()] = self.name_id(name);
    }
    /// The metadata of `i` other than its name (no name looked up: for
    /// walks that read only those fields).
    #[inline]
    pub fn inst_fields(&self, i: Inst) -> &MetadataFields {
        sparse_fields(&self.inst_md, i)
    }
    /// The metadata of `i` other than its name, to write.
    pub fn inst_md_mut(&mut self, i: Inst) -> &mut MetadataFields {
        assert!(i.index() < self.insts.len(), "no instruction {i}");
        self.inst_md.entry(i).or_default()
    }
    /// Replace the metadata of `i` (its name too).
    pub fn set_inst_md(&mut self, i: Inst, md: Metadata) {
        let (name, fields) = md.into_parts();
        self.set_inst_name(i, name.as_deref());
        set_sparse(&mut self.inst_md, i, fields);
    }
    /// Source span of `i` in the XIR text it was parsed from.
    pub fn inst_span(&self, i: Inst) -> Option<Span> {
        self.inst_spans[i.index()].get()
    }
    pub fn set_inst_span(&mut self, i: Inst, span: Option<Span>) {
        self.inst_spans[i.index()] = SpanSlot::new(span);
    }
    /// Live instructions whose metadata has more than a name (location,
    /// comments, spill provenance), in id order: a sweep of the sparse
    /// table; only the owners' placement is looked up.
    pub fn inst_metadata(&self) -> impl Iterator<Item = (Inst, MetadataRef<'_>)> + '_ {
        let owned = self.owned_flags();
        let live = |i: &Inst| is_owned_parent(&owned, self.hot[i.index()].parent);
        let mut ids: Vec<Inst> =
            self.inst_md.iter().filter(|(i, f)| !f.is_empty() && live(i)).map(|(i, _)| *i).collect();
        ids.sort_unstable();
        ids.into_iter().map(move |i| (i, self.inst_md(i)))
    }
    pub fn inst_exists(&self, i: Inst) -> bool {
        i.index() < self.insts.len()
    }
    pub fn inst_capacity(&self) -> usize {
        self.insts.len()
    }
    /// Whether the instruction is placed in a block.
    pub fn is_live(&self, i: Inst) -> bool {
        self.hot.get(i.index()).is_some_and(|h| h.parent != NO_PARENT)
    }

    /// The block holding `i`; `None` once removed or before it is placed.
    pub fn parent(&self, i: Inst) -> Option<Block> {
        self.hot[i.index()].parent()
    }

    /// The opcode of `i`, from the dense table (no access to the record).
    pub fn opcode(&self, i: Inst) -> xir_spec::Opcode {
        let op = self.hot[i.index()].opcode;
        debug_assert_eq!(op, self.insts[i.index()].opcode, "opcode of {i} changed behind the function's back");
        op
    }

    /// Create an instruction without placing it.
    pub fn create_inst(&mut self, data: InstData) -> Inst {
        let i = Inst::new(self.insts.len());
        let InstData { core, payload, md, span } = data;
        self.hot.push(InstHot { opcode: core.opcode, parent: NO_PARENT });
        self.insts.push(core);
        self.payloads.push(payload_slot(payload));
        self.inst_names.push(NameId::NONE);
        self.inst_spans.push(SpanSlot::new(span));
        if !md.is_empty() {
            self.set_inst_md(i, md);
        }
        self.inst_uses.push(UseList::default());
        i
    }

    /// Place an unplaced instruction at position `pos` of block `b`.
    pub fn insert_inst(&mut self, b: Block, pos: usize, i: Inst) {
        debug_assert!(!self.is_live(i), "instruction placed twice");
        self.blocks[b.index()].insts.insert(pos, i);
        self.hot[i.index()].parent = pack_parent(Some(b));
        self.attach_operands(i);
    }

    /// Append an instruction to block `b`.
    pub fn append_inst(&mut self, b: Block, data: InstData) -> Inst {
        let i = self.create_inst(data);
        let pos = self.blocks[b.index()].insts.len();
        self.insert_inst(b, pos, i);
        i
    }

    /// Insert before the terminator of `b` (or append if it has none).
    pub fn insert_before_terminator(&mut self, b: Block, data: InstData) -> Inst {
        let i = self.create_inst(data);
        let n = self.blocks[b.index()].insts.len();
        let pos = if self.terminator(b).is_some() { n - 1 } else { n };
        self.insert_inst(b, pos, i);
        i
    }

    /// Position of `i` within its block.
    pub fn position(&self, i: Inst) -> Option<usize> {
        let b = self.parent(i)?;
        self.blocks[b.index()].insts.iter().position(|&x| x == i)
    }

    /// Unplace an instruction, dropping the uses it makes. Its own uses must
    /// already be gone (use `replace_all_uses` first).
    pub fn remove_inst(&mut self, i: Inst) {
        let Some(b) = self.parent(i) else { return };
        // The last instruction (a terminator, or removal back to front) in
        // O(1); otherwise one scan and one shift, not a `retain` per call.
        let list = &mut self.blocks[b.index()].insts;
        if list.last() == Some(&i) {
            list.pop();
        } else if let Some(p) = list.iter().position(|&x| x == i) {
            list.remove(p);
        }
        self.detach_operands(i);
        self.hot[i.index()].parent = NO_PARENT;
    }

    /// Unplace many instructions at once, like `remove_inst` on each but in
    /// one pass over every block that holds them (linear, for passes that
    /// delete many instructions of large blocks).
    pub fn remove_insts(&mut self, dead: &[Inst]) {
        if dead.is_empty() {
            return;
        }
        // A dense flag per instruction id rather than a hash set: membership
        // tests stay in cache on large functions.
        let mut set = vec![false; self.insts.len()];
        let mut live: Vec<Inst> = Vec::with_capacity(dead.len());
        for &i in dead {
            if self.is_live(i) && !set[i.index()] {
                set[i.index()] = true;
                live.push(i);
            }
        }
        // Each holding block is filtered once, and so is each operand's use
        // list however many of its users go; first occurrences are found
        // with dense flags (a sort of the lists was a fifth of mem2reg).
        let mut block_seen = vec![false; self.blocks.len()];
        let mut blocks: Vec<Block> = Vec::new();
        for &i in &live {
            if let Some(b) = self.parent(i) {
                if !std::mem::replace(&mut block_seen[b.index()], true) {
                    blocks.push(b);
                }
            }
        }
        for b in blocks {
            self.blocks[b.index()].insts.retain(|x| !set[x.index()]);
        }
        let mut inst_seen = vec![false; self.insts.len()];
        let mut arg_seen = vec![false; self.args.len()];
        let mut operands: Vec<Value> = Vec::new();
        for &i in &live {
            for &v in &self.insts[i.index()].operands {
                let seen = match v {
                    Value::Inst(d) => inst_seen.get_mut(d.index()),
                    Value::Arg(a) => arg_seen.get_mut(a as usize),
                    _ => None,
                };
                if let Some(seen) = seen {
                    if !std::mem::replace(seen, true) {
                        operands.push(v);
                    }
                }
            }
            self.hot[i.index()].parent = NO_PARENT;
        }
        for v in operands {
            let list = match v {
                Value::Inst(d) => self.inst_uses.get_mut(d.index()),
                Value::Arg(a) => self.arg_uses.get_mut(a as usize),
                _ => None,
            };
            if let Some(list) = list {
                list.retain(|u| !set[u.user.index()]);
            }
        }
    }

    /// Place unplaced instructions, each immediately before its placed
    /// anchor (several for one anchor keep their order), rebuilding every
    /// affected block once: linear in the sizes of those blocks, where an
    /// `insert_inst` at a `position` per instruction is quadratic on long
    /// blocks.
    pub fn insert_before_each(&mut self, items: &[(Inst, Inst)]) {
        if items.is_empty() {
            return;
        }
        let mut before: rustc_hash::FxHashMap<Inst, SmallVec<[Inst; 2]>> = rustc_hash::FxHashMap::default();
        let mut blocks: Vec<Block> = Vec::new();
        for &(anchor, i) in items {
            let b = self.parent(anchor).expect("anchor instruction is placed");
            debug_assert!(!self.is_live(i), "instruction placed twice");
            before.entry(anchor).or_default().push(i);
            self.hot[i.index()].parent = pack_parent(Some(b));
            blocks.push(b);
        }
        blocks.sort_unstable();
        blocks.dedup();
        for b in blocks {
            let old = std::mem::take(&mut self.blocks[b.index()].insts);
            let mut list = InstList::with_capacity(old.len() + 1);
            for x in old {
                if let Some(news) = before.get(&x) {
                    list.extend_from_slice(news);
                }
                list.push(x);
            }
            self.blocks[b.index()].insts = list;
        }
        for &(_, i) in items {
            self.attach_operands(i);
        }
    }

    /// Replace the data of `i` in place: same id, same block and position;
    /// the uses it makes move to the new operands, and uses of its result
    /// stay (keeping them well-typed is the caller's business). Rewriting
    /// an instruction this way (a terminator into its raw form, say) adds no
    /// record at the end of the table, so the instructions of a block stay
    /// together in memory for every later sweep. The metadata and span are
    /// `data`'s if it carries any, else the old instruction's stay (a
    /// rewritten instruction keeps its name and source position without
    /// copying them out and back).
    pub fn replace_inst(&mut self, i: Inst, data: InstData) {
        let placed = self.is_live(i);
        // Same operands in the same slots (a structured terminator becoming
        // its raw form, say): the use lists already say exactly this, and
        // rewriting them would visit every operand's list for nothing.
        let same_operands = self.insts[i.index()].operands == data.operands;
        if placed && !same_operands {
            self.detach_operands(i);
        }
        let InstData { core, payload, md, span } = data;
        let k = i.index();
        let old_opcode = self.hot[k].opcode;
        self.hot[k].opcode = core.opcode;
        self.insts[k] = core;
        // The side tables are written only where something changes, so
        // rewriting payload-free terminators leaves their lines clean. An
        // opcode the spec declares without a payload holds none (the
        // verifier's `payload` rule), so its entry is not even read.
        let may_hold_payload = xir_spec::spec().op(old_opcode).spec.payload.is_some();
        if !matches!(payload, Payload::None) || (may_hold_payload && self.payloads[k].is_some()) {
            self.payloads[k] = payload_slot(payload);
        }
        if !md.is_empty() {
            self.set_inst_md(i, md);
        }
        if span.is_some() {
            self.inst_spans[k] = SpanSlot::new(span);
        }
        if placed && !same_operands {
            self.attach_operands(i);
        }
    }

    /// Unplace an instruction but keep its operands' uses recorded: for
    /// moving it elsewhere with `insert_inst` after `detach_for_move`.
    pub fn move_inst(&mut self, i: Inst, to: Block, pos: usize) {
        if let Some(b) = self.parent(i) {
            self.blocks[b.index()].insts.retain(|x| *x != i);
        }
        self.blocks[to.index()].insts.insert(pos, i);
        self.hot[i.index()].parent = pack_parent(Some(to));
    }

    pub fn set_operand(&mut self, i: Inst, index: usize, v: Value) {
        let old = self.insts[i.index()].operands[index];
        if old == v {
            return;
        }
        let placed = self.is_live(i);
        if placed {
            self.drop_use(old, Use { user: i, index: index as u32 });
        }
        self.insts[i.index()].operands[index] = v;
        if placed {
            self.add_use(v, Use { user: i, index: index as u32 });
        }
    }

    /// Replace the whole operand list of `i`.
    pub fn set_operands(&mut self, i: Inst, operands: SmallVec<[Value; 3]>) {
        let placed = self.is_live(i);
        if placed {
            self.detach_operands(i);
        }
        self.insts[i.index()].operands = operands;
        if placed {
            self.attach_operands(i);
        }
    }

    /// Set the result type of `i` (keeping it well-typed for its users is
    /// the caller's business, as with `replace_inst`).
    pub fn set_type(&mut self, i: Inst, ty: TypeId) {
        self.insts[i.index()].ty = ty;
    }

    /// Set block operand `k` of `i` (a branch target, a structured role, a
    /// Phi's incoming block). Block operands have no use lists; this and
    /// the other block-operand setters exist so that no one needs the
    /// record itself.
    pub fn set_block_operand(&mut self, i: Inst, k: usize, b: Block) {
        self.insts[i.index()].blocks[k] = b;
    }

    /// Replace the whole block operand list of `i`.
    pub fn set_block_operands(&mut self, i: Inst, blocks: SmallVec<[Block; 3]>) {
        self.insts[i.index()].blocks = blocks;
    }

    /// Every block operand of `i` naming `from` names `to` instead (a
    /// branch retargeted, a Phi's predecessor renamed). Returns whether
    /// any did.
    pub fn retarget(&mut self, i: Inst, from: Block, to: Block) -> bool {
        let mut any = false;
        for b in self.insts[i.index()].blocks.iter_mut() {
            if *b == from {
                *b = to;
                any = true;
            }
        }
        any
    }

    /// Replace the incomings of a Phi: `(value, predecessor)` pairs.
    pub fn set_phi_incomings(&mut self, phi: Inst, incomings: &[(Value, Block)]) {
        self.set_operands(phi, incomings.iter().map(|p| p.0).collect());
        self.insts[phi.index()].blocks = incomings.iter().map(|p| p.1).collect();
    }

    /// Add an incoming `(value, predecessor)` to a Phi.
    pub fn push_incoming(&mut self, phi: Inst, v: Value, pred: Block) {
        let k = self.insts[phi.index()].operands.len();
        self.insts[phi.index()].operands.push(v);
        self.insts[phi.index()].blocks.push(pred);
        if self.is_live(phi) {
            self.add_use(v, Use { user: phi, index: k as u32 });
        }
    }

    /// Drop the `k`-th incoming of a Phi (value and predecessor).
    pub fn remove_incoming(&mut self, phi: Inst, k: usize) {
        let mut ops = self.insts[phi.index()].operands.clone();
        ops.remove(k);
        self.set_operands(phi, ops);
        self.insts[phi.index()].blocks.remove(k);
    }

    /// Keep the arguments for which `keep(k)` holds, renumbering the
    /// remaining ones in every operand that names them. A dropped argument
    /// must have no uses left.
    pub fn retain_args(&mut self, keep: impl Fn(usize) -> bool) {
        let mut map: Vec<Option<u32>> = Vec::with_capacity(self.args.len());
        let mut next = 0u32;
        for k in 0..self.args.len() {
            if keep(k) {
                map.push(Some(next));
                next += 1;
            } else {
                debug_assert!(self.arg_uses[k].as_slice().is_empty(), "a dropped argument has no uses");
                map.push(None);
            }
        }
        let mut k = 0;
        self.args.retain(|_| {
            k += 1;
            map[k - 1].is_some()
        });
        let mut k = 0;
        let old_uses = std::mem::take(&mut self.arg_uses);
        self.arg_uses = old_uses
            .into_iter()
            .filter(|_| {
                k += 1;
                map[k - 1].is_some()
            })
            .collect();
        for list in &self.arg_uses {
            for u in list.as_slice() {
                let v = &mut self.insts[u.user.index()].operands[u.index as usize];
                if let Value::Arg(a) = *v {
                    *v = Value::Arg(map[a as usize].expect("a used argument is kept"));
                }
            }
        }
    }

    /// Move the placed instructions `insts` to the top of `b`, in that
    /// order, keeping their uses: one filter per source block, one rebuild
    /// of `b` (hoisting many allocas into the entry block stays linear).
    pub fn move_to_top(&mut self, b: Block, insts: &[Inst]) {
        if insts.is_empty() {
            return;
        }
        let mut moving = vec![false; self.insts.len()];
        let mut from: Vec<Block> = Vec::new();
        for &i in insts {
            moving[i.index()] = true;
            from.extend(self.parent(i));
        }
        from.sort_unstable();
        from.dedup();
        for x in from {
            self.blocks[x.index()].insts.retain(|i| !moving[i.index()]);
        }
        let mut list: InstList = insts.iter().copied().collect();
        list.extend(self.blocks[b.index()].insts.iter().copied());
        self.blocks[b.index()].insts = list;
        for &i in insts {
            self.hot[i.index()].parent = pack_parent(Some(b));
        }
    }

    /// Move the instructions of `b` from position `k` on, in order, to the
    /// empty block `into`; the Phis of the moved terminator's successors
    /// then name `into` as their predecessor instead of `b`
    /// (`Cursor::split_block`).
    fn split_block_at(&mut self, b: Block, k: usize, into: Block) {
        let moved: InstList = self.blocks[b.index()].insts.drain(k..).collect();
        for &i in &moved {
            self.hot[i.index()].parent = pack_parent(Some(into));
        }
        self.blocks[into.index()].insts = moved;
        for s in self.successors(into) {
            let phis: Vec<Inst> = self.blocks[s.index()]
                .insts
                .iter()
                .copied()
                .filter(|&i| self.hot[i.index()].opcode == xir_spec::Opcode::Phi)
                .collect();
            for phi in phis {
                self.retarget(phi, b, into);
            }
        }
    }

    /// Uses of a local value (instruction result or argument).
    pub fn uses(&self, v: Value) -> &[Use] {
        match v {
            Value::Inst(i) => self.inst_uses.get(i.index()).map(UseList::as_slice).unwrap_or(&[]),
            Value::Arg(a) => self.arg_uses.get(a as usize).map(UseList::as_slice).unwrap_or(&[]),
            _ => &[],
        }
    }

    pub fn has_uses(&self, v: Value) -> bool {
        !self.uses(v).is_empty()
    }

    /// Point every use of `old` at `new`.
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        if old == new {
            return;
        }
        // Linear: the whole use list moves at once.
        let uses: UseList = match old {
            Value::Inst(i) => self.inst_uses.get_mut(i.index()).map(std::mem::take).unwrap_or_default(),
            Value::Arg(a) => self.arg_uses.get_mut(a as usize).map(std::mem::take).unwrap_or_default(),
            _ => return,
        };
        for &u in uses.as_slice() {
            self.insts[u.user.index()].operands[u.index as usize] = new;
            self.add_use(new, u);
        }
    }

    /// Point the listed uses of `old` at their new values, in one pass over
    /// `old`'s use list (linear where repeated `set_operand` calls would be
    /// quadratic in the number of uses). Uses not listed keep `old`.
    pub fn replace_uses(&mut self, old: Value, repl: &[(Use, Value)]) {
        if repl.is_empty() {
            return;
        }
        let map: rustc_hash::FxHashMap<Use, Value> = repl.iter().copied().collect();
        let list = match old {
            Value::Inst(i) => self.inst_uses.get_mut(i.index()),
            Value::Arg(a) => self.arg_uses.get_mut(a as usize),
            _ => None,
        };
        let Some(list) = list else { return };
        let mut moved: Vec<(Use, Value)> = Vec::new();
        list.retain(|u| match map.get(u) {
            Some(&v) if v != old => {
                moved.push((*u, v));
                false
            }
            _ => true,
        });
        for (u, v) in moved {
            self.insts[u.user.index()].operands[u.index as usize] = v;
            self.add_use(v, u);
        }
    }

    /// Rebuild every use list and the dense table (opcodes, parents) from
    /// scratch (after deserializing): an instruction is placed iff a block of
    /// the layout lists it.
    pub fn rebuild_uses(&mut self) {
        self.inst_uses = Table::from_fn(self.insts.len(), |_| UseList::default());
        self.arg_uses = vec![UseList::default(); self.args.len()];
        self.hot = self.insts.iter().map(|d| InstHot { opcode: d.opcode, parent: NO_PARENT }).collect();
        for &b in &self.layout {
            for &i in &self.blocks[b.index()].insts {
                if let Some(h) = self.hot.get_mut(i.index()) {
                    h.parent = pack_parent(Some(b));
                }
            }
        }
        for idx in 0..self.insts.len() {
            if self.hot[idx].parent != NO_PARENT {
                self.attach_operands(Inst::new(idx));
            }
        }
    }

    /// The placed instructions (in blocks of the layout) whose opcode
    /// `select` accepts, in layout order: the same as filtering `all_insts`
    /// by opcode. A sweep of the dense table finds the blocks that hold one
    /// and only those are walked, so looking for a few opcodes (allocas,
    /// geps, Phis) on a large function reads 8 bytes an instruction instead
    /// of every block record.
    pub fn select_in_layout_order(&self, select: impl Fn(xir_spec::Opcode) -> bool) -> Vec<Inst> {
        let mut holds = vec![false; self.blocks.len()];
        let mut any = false;
        for h in self.hot.iter() {
            if h.parent != NO_PARENT && select(h.opcode) {
                if let Some(x) = holds.get_mut(h.parent as usize) {
                    *x = true;
                    any = true;
                }
            }
        }
        let mut out = Vec::new();
        if !any {
            return out;
        }
        for &b in &self.layout {
            if holds.get(b.index()) == Some(&true) {
                out.extend(self.blocks[b.index()].insts.iter().copied().filter(|i| select(self.hot[i.index()].opcode)));
            }
        }
        out
    }

    /// Live instructions in layout order.
    pub fn all_insts(&self) -> impl Iterator<Item = (Block, Inst)> + '_ {
        self.layout.iter().flat_map(move |&b| self.blocks[b.index()].insts.iter().map(move |&i| (b, i)))
    }

    /// Live instructions in id order: one sequential sweep of the
    /// instruction table, for scans whose result does not depend on order.
    /// On large functions this streams through memory, where `all_insts`
    /// follows the layout and jumps wherever passes have appended
    /// instructions (new terminators, Phis, slots) to the table.
    /// The same set as `all_insts` (placed in a block of the layout).
    pub fn live_insts_by_id(&self) -> impl Iterator<Item = (Inst, &InstCore)> + '_ {
        self.live_opcodes_by_id().map(|(i, _)| (i, &self.insts[i.index()]))
    }

    /// Live instructions in id order with their opcodes, read from the dense
    /// table alone: a scan that looks for a few opcodes (allocas, Phis,
    /// calls) touches only the records it selects.
    pub fn live_opcodes_by_id(&self) -> impl Iterator<Item = (Inst, xir_spec::Opcode)> + '_ {
        self.live_placements_by_id().map(|(i, _, op)| (i, op))
    }

    /// `live_opcodes_by_id` with each instruction's block: the whole dense
    /// table, for sweeps that find the few blocks they work on by opcode
    /// (a block's terminator is its one instruction with a terminator
    /// opcode) instead of reading every block record.
    pub fn live_placements_by_id(&self) -> impl Iterator<Item = (Inst, Block, xir_spec::Opcode)> + '_ {
        let owned = std::rc::Rc::new(self.owned_flags());
        self.hot.chunks().flat_map(move |(base, hots)| {
            let owned = owned.clone();
            hots.iter()
                .enumerate()
                .filter(move |(_, h)| is_owned_parent(&owned, h.parent))
                .map(move |(j, h)| (Inst::new(base + j), Block(h.parent), h.opcode))
        })
    }

    /// Per block id, whether the layout holds it (for sweeps by id).
    pub fn owned_flags(&self) -> Vec<bool> {
        let mut owned = vec![false; self.blocks.len()];
        for &b in &self.layout {
            if let Some(x) = owned.get_mut(b.index()) {
                *x = true;
            }
        }
        owned
    }

    /// Number of live instructions.
    pub fn inst_count(&self) -> usize {
        self.layout.iter().map(|b| self.blocks[b.index()].insts.len()).sum()
    }

    /// The type of a value local to this function or global to the module.
    pub fn value_type(&self, m: &super::Module, v: Value) -> TypeId {
        match v {
            Value::Inst(i) => self.insts[i.index()].ty,
            Value::Arg(a) => self.args[a as usize].ty,
            _ => m.value_type(v),
        }
    }

    /// Whether `v` denotes an address (alloca, gep, reference argument).
    pub fn is_lvalue(&self, v: Value) -> bool {
        match v {
            Value::Inst(i) => xir_spec::spec().op(self.opcode(i)).has(xir_spec::Trait::Lvalue),
            Value::Arg(a) => self.args.get(a as usize).is_some_and(|a| a.kind == ArgKind::Reference),
            _ => false,
        }
    }

    // By index, not over a copy of the operand list: a `SmallVec` clone goes
    // through its generic `extend`, and this runs for every placement.
    fn attach_operands(&mut self, i: Inst) {
        for k in 0..self.insts[i.index()].operands.len() {
            let v = self.insts[i.index()].operands[k];
            self.add_use(v, Use { user: i, index: k as u32 });
        }
    }

    fn detach_operands(&mut self, i: Inst) {
        for k in 0..self.insts[i.index()].operands.len() {
            let v = self.insts[i.index()].operands[k];
            self.drop_use(v, Use { user: i, index: k as u32 });
        }
    }

    fn add_use(&mut self, v: Value, u: Use) {
        match v {
            Value::Inst(d) if d.index() < self.inst_uses.len() => self.inst_uses[d.index()].push(u),
            Value::Arg(a) if (a as usize) < self.arg_uses.len() => self.arg_uses[a as usize].push(u),
            _ => {}
        }
    }

    fn drop_use(&mut self, v: Value, u: Use) {
        let list = match v {
            Value::Inst(d) => self.inst_uses.get_mut(d.index()),
            Value::Arg(a) => self.arg_uses.get_mut(a as usize),
            _ => None,
        };
        if let Some(list) = list {
            list.remove(u);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Value;

    /// Use lists cannot go stale through the API; the verifier still
    /// checks them (a defence against a core bug), shown here by writing
    /// an operand behind the API's back.
    #[test]
    fn stale_use_lists_are_caught() {
        let src = "kernel @k(%a: f32) block_size(1, 1, 1) {\n^e:\n  %x = add %a, %a : f32\n  %y = mul %a, %a : f32\n  %z = mul %x, %x : f32\n  return\n}\n";
        let mut m = crate::text::parse_module(src, "k.xir").expect("valid");
        let f = &mut m.functions[0];
        let insts: Vec<_> = f.all_insts().map(|(_, i)| i).collect();
        let (y, z) = (insts[1], insts[2]);
        f.insts[z.index()].operands[1] = Value::Inst(y);
        let diags = crate::verify::verify_module(&m);
        assert_eq!(diags.iter().filter(|d| d.rule == "use-lists").count(), 2, "{}", crate::diag::render(&diags));
    }
}
