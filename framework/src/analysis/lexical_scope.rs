//! Lexical scopes of structured IR: the nesting tree of constructs (if /
//! switch / loop / simple loop), which construct each block belongs to
//! (innermost first) and each construct's region, the blocks inside it at
//! any depth. Passes that rewrite one construct at a time (one-shot loops,
//! early returns, switch lowering) ask it instead of re-deriving nesting.
//!
//! Found by walking from the entry: a construct's arms / loop roles belong
//! to it, its merge to the enclosing construct; a branch to a merge, an
//! update or a prepare of an enclosing construct leaves the region and is
//! not followed. Other structured terminators (ray query, autodiff,
//! outline) open no scope. Blocks the walk never reaches (orphans) have no
//! owner. On a raw CFG there are no constructs: every reached block is top
//! level.

use xir_spec::Trait;

use crate::ir::{Block, FlatLists, Function, Inst, Opcode};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// If or switch.
    Selection,
    /// `loop` (`cont` = update) or `simple_loop` (`cont` = body).
    Loop { cont: Block, prepare: Option<Block> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Construct {
    /// The block whose terminator opens the construct.
    pub header: Block,
    pub term: Inst,
    pub merge: Block,
    pub kind: ScopeKind,
    pub parent: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexicalScopes {
    /// In discovery order: a parent comes before its children.
    pub constructs: Vec<Construct>,
    /// Per block id: `None` unvisited, `Some(None)` top level, `Some(Some(c))`
    /// inside construct `c` (innermost).
    pub owner: Vec<Option<Option<usize>>>,
    /// Per construct, the blocks inside it at any depth, in layout order
    /// (the header and the merge are not inside).
    regions: FlatLists<Block>,
}

impl LexicalScopes {
    pub fn compute(f: &Function) -> LexicalScopes {
        let mut r = Self::nesting(f);
        let ancestors = |b: Block| std::iter::successors(r.innermost(b), |&c| r.constructs[c].parent);
        r.regions = FlatLists::from_pairs(
            r.constructs.len(),
            f.blocks().iter().flat_map(|&b| ancestors(b).map(move |c| (c, b))),
        );
        r
    }

    /// The blocks inside construct `c` at any depth, in layout order.
    pub fn region(&self, c: usize) -> &[Block] {
        self.regions.get(c)
    }

    fn nesting(f: &Function) -> LexicalScopes {
        let mut r = LexicalScopes {
            constructs: Vec::new(),
            owner: vec![None; f.block_capacity()],
            regions: FlatLists::from_pairs(0, std::iter::empty()),
        };
        let Some(entry) = f.body() else { return r };
        let mut work: Vec<(Block, Option<usize>)> = vec![(entry, None)];
        // The search reads each block's terminator record in search order,
        // a miss per block on large functions. On structured IR it visits
        // blocks in about id order (builders and `compact_blocks` number them
        // in layout order), so a walk over the ids, kept at each visited
        // block, reads the terminators of the next ids ahead.
        let ids: Vec<Block> = (0..f.block_capacity()).map(Block::new).collect();
        let mut ahead = f.walk(&ids, crate::ir::reads::Terminator);
        while let Some((b, ctx)) = work.pop() {
            if r.owner[b.index()].is_some() {
                continue;
            }
            r.owner[b.index()] = Some(ctx);
            ahead.seek(f, b.index());
            let Some(t) = f.terminator(b) else { continue };
            let d = f.inst(t);
            match d.opcode {
                Opcode::If | Opcode::Switch => {
                    let Some(merge) = d.merge_block() else {
                        // Malformed (the verifier reports it): no scope.
                        work.extend(d.successors().into_iter().map(|s| (s, ctx)));
                        continue;
                    };
                    let c = r.push(Construct { header: b, term: t, merge, kind: ScopeKind::Selection, parent: ctx });
                    work.push((merge, ctx));
                    for s in d.successors() {
                        if s != merge {
                            work.push((s, Some(c)));
                        }
                    }
                }
                Opcode::Loop if d.blocks.len() == 4 => {
                    let (p, body, u, m) = (d.blocks[0], d.blocks[1], d.blocks[2], d.blocks[3]);
                    let kind = ScopeKind::Loop { cont: u, prepare: Some(p) };
                    let c = r.push(Construct { header: b, term: t, merge: m, kind, parent: ctx });
                    work.push((m, ctx));
                    work.extend([(u, Some(c)), (body, Some(c)), (p, Some(c))]);
                }
                Opcode::SimpleLoop if d.blocks.len() == 2 => {
                    let (body, m) = (d.blocks[0], d.blocks[1]);
                    let kind = ScopeKind::Loop { cont: body, prepare: None };
                    let c = r.push(Construct { header: b, term: t, merge: m, kind, parent: ctx });
                    work.push((m, ctx));
                    work.push((body, Some(c)));
                }
                _ if d.has(Trait::Structured) => {
                    // Other constructs (ray query, autodiff, outline): follow
                    // their successors at the same level.
                    for s in d.successors() {
                        work.push((s, ctx));
                    }
                }
                _ => {
                    for s in d.blocks.iter().copied() {
                        if !r.leaves(ctx, s) {
                            work.push((s, ctx));
                        }
                    }
                }
            }
        }
        r
    }

    fn push(&mut self, c: Construct) -> usize {
        self.constructs.push(c);
        self.constructs.len() - 1
    }

    /// Whether a branch to `t` from inside `ctx` leaves to (or repeats) an
    /// enclosing construct.
    pub fn leaves(&self, ctx: Option<usize>, t: Block) -> bool {
        let mut cur = ctx;
        while let Some(c) = cur {
            let k = &self.constructs[c];
            if k.merge == t {
                return true;
            }
            if let ScopeKind::Loop { cont, prepare } = k.kind {
                if cont == t || prepare == Some(t) {
                    return true;
                }
            }
            cur = k.parent;
        }
        false
    }

    /// The innermost construct of a visited block (`None`: top level or orphan).
    pub fn innermost(&self, b: Block) -> Option<usize> {
        self.owner.get(b.index()).copied().flatten().flatten()
    }

    pub fn visited(&self, b: Block) -> bool {
        self.owner.get(b.index()).is_some_and(|o| o.is_some())
    }

    /// Whether block `b` lies (at any depth) inside construct `c`.
    pub fn inside(&self, b: Block, c: usize) -> bool {
        let mut cur = self.innermost(b);
        while let Some(x) = cur {
            if x == c {
                return true;
            }
            cur = self.constructs[x].parent;
        }
        false
    }

    /// The innermost loop construct enclosing `b`.
    pub fn innermost_loop(&self, b: Block) -> Option<usize> {
        let mut cur = self.innermost(b);
        while let Some(x) = cur {
            if matches!(self.constructs[x].kind, ScopeKind::Loop { .. }) {
                return Some(x);
            }
            cur = self.constructs[x].parent;
        }
        None
    }

    /// The innermost loop construct strictly enclosing construct `c`.
    pub fn enclosing_loop(&self, c: usize) -> Option<usize> {
        let mut cur = self.constructs[c].parent;
        while let Some(x) = cur {
            if matches!(self.constructs[x].kind, ScopeKind::Loop { .. }) {
                return Some(x);
            }
            cur = self.constructs[x].parent;
        }
        None
    }
}
