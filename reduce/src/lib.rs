//! `xir-reduce`: shrinks a module to the smallest one that still fails the
//! same way (in the spirit of llvm-reduce). The interestingness test runs in
//! process: each candidate must parse-equivalently verify (else it is skipped,
//! so a different failure is never reported) and then fail as the signature
//! says. Reduction deletes functions, collapses branches to one successor
//! (dropping unreachable blocks), then deletes instructions by ddmin chunking,
//! to a fixed point within a test budget.

use std::panic::{catch_unwind, AssertUnwindSafe};

use xir::pipeline::{FailureKind, PassManager, Pipeline, RunOptions};
use xir::{FuncId, Inst, InstData, Module, Opcode, TypeTable};

/// How the module must fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signature {
    /// A pass panics with a message containing this text.
    Panic(String),
    /// The pipeline fails (any kind) with a message or a diagnostic rule
    /// matching this text.
    PassError(String),
    /// The verifier reports this rule (after the pipeline when one is given).
    Verifier(String),
}

/// The interestingness test: a pipeline (optional) and a signature.
pub struct Oracle {
    pub pipeline: Option<Pipeline>,
    pub signature: Signature,
}

impl Oracle {
    /// Whether `m` fails as asked. A module that does not verify fails no
    /// signature but `Verifier` without a pipeline.
    pub fn fails(&self, m: &Module) -> bool {
        let verify = xir::verify::verify_module(m);
        let Some(p) = &self.pipeline else {
            return match &self.signature {
                Signature::Verifier(rule) => verify.iter().any(|d| d.rule.name() == rule),
                _ => false,
            };
        };
        if !verify.is_empty() {
            return false;
        }
        let mut m = m.clone();
        let opts = RunOptions { verify_each: true, ..RunOptions::default() };
        let run = catch_unwind(AssertUnwindSafe(|| PassManager::new(p, opts).run(&mut m, &mut std::io::sink())));
        let err = match run {
            Ok(Ok(_)) => return false,
            Ok(Err(e)) => e,
            // A panic outside a pass (the manager itself): only a panic
            // signature can match; the message is not recoverable here.
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return matches!(&self.signature, Signature::Panic(s) if msg.contains(s.as_str()));
            }
        };
        match &self.signature {
            Signature::Panic(s) => err.kind == FailureKind::Panic && err.message.contains(s.as_str()),
            Signature::PassError(s) => {
                err.message.contains(s.as_str()) || err.diagnostics.iter().any(|d| d.rule.name() == s)
            }
            Signature::Verifier(rule) => {
                err.kind == FailureKind::InvalidIr && err.diagnostics.iter().any(|d| d.rule.name() == rule)
            }
        }
    }
}

/// Limits and what happened.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub tests: usize,
    pub max_tests: usize,
    pub progress: bool,
}

/// Reduce `m`, which must already fail as `oracle` asks, to a fixed point
/// (or until the budget is spent). Panics inside candidates are silenced.
pub fn reduce(m: Module, oracle: &Oracle, stats: &mut Stats) -> Module {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = reduce_inner(m, oracle, stats);
    std::panic::set_hook(hook);
    out
}

fn reduce_inner(mut m: Module, oracle: &Oracle, stats: &mut Stats) -> Module {
    loop {
        let mut changed = false;
        changed |= delete_functions(&mut m, oracle, stats);
        let ids: Vec<FuncId> = m.func_ids().collect();
        for f in ids {
            changed |= collapse_branches(&mut m, f, oracle, stats);
            changed |= ddmin_insts(&mut m, f, oracle, stats);
        }
        if !changed || spent(stats) {
            return m;
        }
    }
}

fn spent(stats: &Stats) -> bool {
    stats.max_tests != 0 && stats.tests >= stats.max_tests
}

fn try_candidate(c: &Module, oracle: &Oracle, stats: &mut Stats) -> bool {
    stats.tests += 1;
    if stats.progress && stats.tests.is_multiple_of(100) {
        eprintln!("xir-reduce: {} tests", stats.tests);
    }
    oracle.fails(c)
}

fn delete_functions(m: &mut Module, oracle: &Oracle, stats: &mut Stats) -> bool {
    let mut changed = false;
    let mut k = 0;
    loop {
        let ids: Vec<FuncId> = m.func_ids().collect();
        let Some(&victim) = ids.get(k) else { return changed };
        if spent(stats) {
            return changed;
        }
        let mut c = m.clone();
        c.retain_functions(|id, _| id != victim);
        if try_candidate(&c, oracle, stats) {
            *m = c;
            changed = true;
        } else {
            k += 1;
        }
    }
}

/// Replace each multi-way terminator by a `br` to one of its successors,
/// dropping the blocks that no longer reach from the entry.
fn collapse_branches(m: &mut Module, f: FuncId, oracle: &Oracle, stats: &mut Stats) -> bool {
    let mut changed = false;
    let mut k = 0;
    while let Some(&b) = m.func(f).blocks().get(k) {
        k += 1;
        let Some(t) = m.func(f).terminator(b) else { continue };
        let succs = m.func(f).successors(b);
        if succs.len() < 2 {
            continue;
        }
        for s in succs {
            if spent(stats) {
                return changed;
            }
            let mut c = m.clone();
            let func = c.func_mut(f);
            let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
            br.blocks.push(s);
            func.replace_inst(t, br);
            drop_unreachable(func);
            if try_candidate(&c, oracle, stats) {
                *m = c;
                changed = true;
                k = 0;
                break;
            }
        }
    }
    changed
}

fn drop_unreachable(func: &mut xir::Function) {
    let Some(entry) = func.body() else { return };
    let mut seen = vec![entry];
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        for s in func.successors(b) {
            if !seen.contains(&s) {
                seen.push(s);
                work.push(s);
            }
        }
    }
    let dead: Vec<_> = func.blocks().iter().copied().filter(|b| !seen.contains(b)).collect();
    for b in dead {
        func.remove_block(b);
    }
}

/// The instructions of `f` that may be deleted: all but terminators.
fn deletable(m: &Module, f: FuncId) -> Vec<Inst> {
    let func = m.func(f);
    let mut out = Vec::new();
    for &b in func.blocks() {
        let term = func.terminator(b);
        out.extend(func.block(b).insts().iter().copied().filter(|&i| Some(i) != term));
    }
    out
}

/// ddmin-style: delete chunks of halving size, keeping each deletion that
/// still fails; chunks run back to front so users go before definitions.
fn ddmin_insts(m: &mut Module, f: FuncId, oracle: &Oracle, stats: &mut Stats) -> bool {
    let mut changed = false;
    let mut items = deletable(m, f);
    let mut size = items.len().div_ceil(2).max(1);
    while !items.is_empty() {
        let mut end = items.len();
        while end > 0 {
            if spent(stats) {
                return changed;
            }
            let start = end.saturating_sub(size);
            let chunk: Vec<Inst> = items[start..end].to_vec();
            let mut c = m.clone();
            c.func_mut(f).remove_insts(&chunk);
            if try_candidate(&c, oracle, stats) {
                *m = c;
                items.drain(start..end);
                changed = true;
            }
            end = start;
        }
        if size == 1 {
            break;
        }
        size = size.div_ceil(2);
    }
    changed
}
