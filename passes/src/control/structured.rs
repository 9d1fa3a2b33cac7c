//! Construct nesting of structured IR: which construct (if / switch / loop /
//! simple loop) each block belongs to, innermost first. Found by walking
//! from the entry: a construct's arms / loop roles belong to it, its merge
//! to the enclosing construct; a branch to a merge, an update or a
//! prepare of an enclosing construct leaves the region and is not followed.
//! Blocks the walk never reaches (orphans) have no owner.

use xir::{Block, Function, Inst, Opcode, Trait};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// If or switch.
    Selection,
    /// `loop` (`cont` = update) or `simple_loop` (`cont` = body).
    Loop { cont: Block, prepare: Option<Block> },
}

#[derive(Clone, Debug)]
pub struct Construct {
    /// The block whose terminator opens the construct.
    pub header: Block,
    pub term: Inst,
    pub merge: Block,
    pub kind: Kind,
    pub parent: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Regions {
    pub constructs: Vec<Construct>,
    /// Per block id: `None` unvisited, `Some(None)` top level, `Some(Some(c))`
    /// inside construct `c` (innermost).
    pub owner: Vec<Option<Option<usize>>>,
}

impl Regions {
    pub fn compute(f: &Function) -> Regions {
        let mut r = Regions { constructs: Vec::new(), owner: vec![None; f.block_capacity()] };
        let Some(entry) = f.body() else { return r };
        let mut work: Vec<(Block, Option<usize>)> = vec![(entry, None)];
        // The search reads each block's terminator record in search order,
        // a miss per block on large functions. On structured IR it visits
        // blocks in about id order (builders and `compact_blocks` number them
        // in layout order), so a walk over the ids, kept at each visited
        // block, reads the terminators of the next ids ahead.
        let ids: Vec<Block> = (0..f.block_capacity()).map(Block::new).collect();
        let mut ahead = f.walk(&ids, xir::reads::Terminator);
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
                    let merge = d.merge_block().expect("selection has a merge");
                    let c = r.push(Construct { header: b, term: t, merge, kind: Kind::Selection, parent: ctx });
                    work.push((merge, ctx));
                    for s in d.successors() {
                        if s != merge {
                            work.push((s, Some(c)));
                        }
                    }
                }
                Opcode::Loop => {
                    let (p, body, u, m) = (d.blocks[0], d.blocks[1], d.blocks[2], d.blocks[3]);
                    let kind = Kind::Loop { cont: u, prepare: Some(p) };
                    let c = r.push(Construct { header: b, term: t, merge: m, kind, parent: ctx });
                    work.push((m, ctx));
                    work.extend([(u, Some(c)), (body, Some(c)), (p, Some(c))]);
                }
                Opcode::SimpleLoop => {
                    let (body, m) = (d.blocks[0], d.blocks[1]);
                    let kind = Kind::Loop { cont: body, prepare: None };
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
            if let Kind::Loop { cont, prepare } = k.kind {
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
            if matches!(self.constructs[x].kind, Kind::Loop { .. }) {
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
            if matches!(self.constructs[x].kind, Kind::Loop { .. }) {
                return Some(x);
            }
            cur = self.constructs[x].parent;
        }
        None
    }
}
