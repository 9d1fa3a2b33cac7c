//! The dialect-flow check and the pipeline lint, run on a loaded pipeline
//! before any IR is touched.
//!
//! The checker carries the set of dialects the IR may be in (one at the
//! input; an opt-level group that changes the dialect adds the "skipped"
//! branch; a fixed-point group adds every iteration's result). At each pass
//! step every possible dialect must refine one the pass consumes; the IR then
//! is in the pass's produced dialect (or stays, for `Produces::Same`). At the
//! end every possible dialect must refine the declared output. A failure
//! names a registered pass (or short chain of passes) that would lead from
//! the dialect the IR is in to one the step accepts.
//!
//! Lint (warnings): a pass whose `eliminates` opcodes are all forbidden by
//! the dialect it receives can never change anything; a pass that
//! establishes invariants which already hold re-establishes them for nothing.

use std::collections::HashSet;

use xir_spec::Dialect;

use super::{suggest, Loc, PassStep, Pipeline, PipelineDiag, Step};
use crate::diag::Severity;
use crate::pass::{eliminated_opcodes, PassRegistry};

/// A dialect the IR may be in, with how it got there ("after `reg2mem`").
#[derive(Clone)]
struct State {
    dialect: &'static Dialect,
    prov: String,
}

struct Ctx<'a> {
    reg: &'a PassRegistry,
    warnings: Vec<PipelineDiag>,
    seen: HashSet<(String, String)>,
    /// Lint only on the first walk over a step.
    lint: bool,
    /// Context appended to errors ("on iteration 2 of ...", "included at ...").
    notes: Vec<String>,
}

type Flow<T> = Result<T, PipelineDiag>;

fn dialect(name: &str) -> Option<&'static Dialect> {
    xir_spec::spec().dialect(name)
}

fn unknown_dialect(name: &str, loc: &Loc) -> PipelineDiag {
    let names = xir_spec::spec().dialects.iter().map(|d| &*d.name);
    let hint = match suggest(name, names) {
        Some(s) => format!("; did you mean `{s}`?"),
        None => format!(
            " (dialects: {})",
            xir_spec::spec().dialects.iter().map(|d| &*d.name).collect::<Vec<_>>().join(", ")
        ),
    };
    error(loc, format!("unknown dialect `{}`{hint}", super::excerpt(name)))
}

fn error(loc: &Loc, message: String) -> PipelineDiag {
    PipelineDiag::new(Severity::Error, loc.clone(), message)
}

/// Check the dialect flow of `p`; on success return the lint warnings.
pub fn check_flow(
    p: &Pipeline,
    reg: &PassRegistry,
    input_loc: &Loc,
    output_loc: &Loc,
) -> Result<Vec<PipelineDiag>, Vec<PipelineDiag>> {
    let input = dialect(&p.input).ok_or_else(|| vec![unknown_dialect(&p.input, input_loc)])?;
    let output = dialect(&p.output).ok_or_else(|| vec![unknown_dialect(&p.output, output_loc)])?;
    let mut cx = Ctx { reg, warnings: Vec::new(), seen: HashSet::new(), lint: true, notes: Vec::new() };
    let start = vec![State { dialect: input, prov: "at the pipeline input".into() }];
    let end = walk(&p.steps, start, &mut cx).map_err(|e| vec![e])?;
    for st in &end {
        if !st.dialect.refines(output) {
            let fix = match find_fix(st.dialect, &[output], reg) {
                Some(chain) => format!(": append {}", chain_text(&chain)),
                None => format!(" ({}); no registered pass leads there", st.dialect.refinement_gaps(output).join("; ")),
            };
            return Err(vec![error(
                output_loc,
                format!(
                    "pipeline `{}` declares output `{}`, but {} the IR is `{}`{fix}",
                    p.name, output.name, st.prov, st.dialect.name
                ),
            )]);
        }
    }
    Ok(cx.warnings)
}

fn walk(steps: &[Step], mut states: Vec<State>, cx: &mut Ctx) -> Flow<Vec<State>> {
    for step in steps {
        states = match step {
            Step::Pass(ps) => pass_step(ps, states, cx)?,
            Step::Hook { bound: Some(ps), .. } => pass_step(ps, states, cx)?,
            Step::Hook { name, bound: None, loc } => {
                if cx.lint {
                    cx.warn(
                        loc,
                        Severity::Note,
                        format!("hook `{name}` is not bound in this build; the step does nothing"),
                    );
                }
                states
            }
            Step::Include { target, input, output, steps, loc } => {
                let inp = dialect(input).ok_or_else(|| unknown_dialect(input, loc))?;
                let out = dialect(output).ok_or_else(|| unknown_dialect(output, loc))?;
                for st in &states {
                    if !st.dialect.refines(inp) {
                        return Err(cx.err(loc, mismatch(&format!("included pipeline `{target}`"), &[inp], st, cx.reg)));
                    }
                }
                cx.notes.push(format!("included at {loc}"));
                let after = walk(steps, states, cx);
                cx.notes.pop();
                let after = after?;
                for st in &after {
                    if !st.dialect.refines(out) {
                        return Err(cx.err(
                            loc,
                            format!(
                                "included pipeline `{target}` declares output `{output}`, but {} the IR is `{}`",
                                st.prov, st.dialect.name
                            ),
                        ));
                    }
                }
                after
            }
            Step::OptGroup { min_level, steps, loc } => {
                if *min_level == 0 && cx.lint {
                    cx.warn(loc, Severity::Warning, "an opt-level group with `min_level: 0` always runs".into());
                }
                let run = walk(steps, states.clone(), cx)?;
                let same = run.len() == states.len()
                    && run.iter().zip(&states).all(|(a, b)| std::ptr::eq(a.dialect, b.dialect));
                if same {
                    run
                } else {
                    let skipped = states.into_iter().map(|st| State {
                        prov: format!("{} (when the opt-level {min_level} group at {loc} is skipped)", st.prov),
                        ..st
                    });
                    merge(run, skipped)
                }
            }
            Step::FixedPoint { max_iterations, steps, loc } => {
                let mut used: Vec<&'static Dialect> = states.iter().map(|s| s.dialect).collect();
                let mut reached = walk(steps, states, cx)?;
                let mut frontier: Vec<State> =
                    reached.iter().filter(|s| !used.iter().any(|u| std::ptr::eq(*u, s.dialect))).cloned().collect();
                let lint = std::mem::replace(&mut cx.lint, false);
                let mut iteration = 2;
                while !frontier.is_empty() && iteration <= (*max_iterations).min(16) {
                    used.extend(frontier.iter().map(|s| s.dialect));
                    cx.notes.push(format!("on iteration {iteration} of the fixed-point group at {loc}"));
                    let r = walk(steps, frontier, cx);
                    cx.notes.pop();
                    let next = match r {
                        Ok(n) => n,
                        Err(e) => {
                            cx.lint = lint;
                            return Err(e);
                        }
                    };
                    frontier =
                        next.iter().filter(|s| !used.iter().any(|u| std::ptr::eq(*u, s.dialect))).cloned().collect();
                    reached = merge(reached, next);
                    iteration += 1;
                }
                cx.lint = lint;
                reached
            }
        };
    }
    Ok(states)
}

fn merge(a: Vec<State>, b: impl IntoIterator<Item = State>) -> Vec<State> {
    let mut out = a;
    for s in b {
        if !out.iter().any(|o| std::ptr::eq(o.dialect, s.dialect)) {
            out.push(s);
        }
    }
    out
}

fn pass_step(ps: &PassStep, states: Vec<State>, cx: &mut Ctx) -> Flow<Vec<State>> {
    let info = ps.pass.info();
    let mut consumes = Vec::new();
    for c in info.consumes {
        consumes.push(dialect(c).ok_or_else(|| {
            cx.err(&ps.loc, format!("pass `{}` declares that it consumes unknown dialect `{c}`", info.name))
        })?);
    }
    for p in info.produces.named() {
        dialect(p).ok_or_else(|| {
            cx.err(&ps.loc, format!("pass `{}` declares that it produces unknown dialect `{p}`", info.name))
        })?;
    }
    let mut out = Vec::new();
    let mut matched_all = Vec::new();
    let mut produced_all = Vec::new();
    for st in &states {
        let matched = if consumes.is_empty() {
            None
        } else {
            match consumes.iter().find(|c| st.dialect.refines(c)) {
                Some(c) => Some(*c),
                None => return Err(cx.err(&ps.loc, mismatch(&format!("`{}`", info.name), &consumes, st, cx.reg))),
            }
        };
        matched_all.push(matched);
        let produced = info.produced_from(&st.dialect.name).and_then(dialect);
        produced_all.push(produced);
        out.push(match produced {
            None => st.clone(),
            Some(p) => State { dialect: p, prov: format!("after `{}`", info.name) },
        });
    }
    if cx.lint {
        lint_pass(ps, &states, &matched_all, &produced_all, cx);
    }
    Ok(merge(Vec::new(), out))
}

fn lint_pass(
    ps: &PassStep,
    states: &[State],
    matched: &[Option<&'static Dialect>],
    produced: &[Option<&'static Dialect>],
    cx: &mut Ctx,
) {
    let info = ps.pass.info();
    if !info.eliminates.is_empty() {
        let ops: Vec<_> = info.eliminates.iter().filter_map(|e| eliminated_opcodes(e)).flatten().collect();
        let never = states.iter().all(|st| !ops.iter().any(|&op| st.dialect.ops.contains(op)));
        if never {
            let st = &states[0];
            cx.warn(
                &ps.loc,
                Severity::Warning,
                format!(
                    "`{}` can never change anything here: {} the IR is `{}`, which allows none of {}",
                    info.name,
                    st.prov,
                    st.dialect.name,
                    info.eliminates.join(", ")
                ),
            );
        }
    }
    if produced.iter().all(Option::is_some) {
        let mut redundant = true;
        let mut established = Vec::new();
        for ((st, m), p) in states.iter().zip(matched).zip(produced.iter().flatten()) {
            let base = m.map(|c| &c.invariants);
            let new: Vec<&str> = p.invariants.iter().filter(|i| base.is_none_or(|b| !b.contains(i))).collect();
            if new.is_empty() || !new.iter().all(|i| st.dialect.invariants.contains(i)) {
                redundant = false;
            }
            established = new;
        }
        if redundant {
            let st = &states[0];
            let invs: Vec<&str> = established.iter().map(|s| s.as_ref()).collect();
            cx.warn(
                &ps.loc,
                Severity::Warning,
                format!(
                    "`{}` re-establishes {} for nothing: {} the IR is `{}`, where it already holds",
                    info.name,
                    invs.join(", "),
                    st.prov,
                    st.dialect.name
                ),
            );
        }
    }
}

impl Ctx<'_> {
    fn err(&self, loc: &Loc, message: String) -> PipelineDiag {
        let mut message = message;
        for n in self.notes.iter().rev() {
            message.push_str(&format!(" ({n})"));
        }
        error(loc, message)
    }

    fn warn(&mut self, loc: &Loc, severity: Severity, message: String) {
        if self.seen.insert((loc.to_string(), message.clone())) {
            self.warnings.push(PipelineDiag::new(severity, loc.clone(), message));
        }
    }
}

/// "`x` needs `a`, but after `y` the IR is `b`: insert `z`".
fn mismatch(what: &str, needs: &[&'static Dialect], st: &State, reg: &PassRegistry) -> String {
    let needs_text = needs.iter().map(|d| format!("`{}`", d.name)).collect::<Vec<_>>().join(" or ");
    let fix = match find_fix(st.dialect, needs, reg) {
        Some(chain) => format!(": insert {}", chain_text(&chain)),
        None => {
            let gaps = needs.first().map(|n| st.dialect.refinement_gaps(n).join("; ")).unwrap_or_default();
            format!(" ({gaps}); no registered pass leads there")
        }
    };
    format!("{what} needs {needs_text}, but {} the IR is `{}`{fix}", st.prov, st.dialect.name)
}

fn chain_text(chain: &[&str]) -> String {
    chain.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", then ")
}

/// The shortest chain (up to 3) of registered dialect-changing passes leading
/// from `from` to a dialect that refines one of `targets`.
fn find_fix(from: &'static Dialect, targets: &[&'static Dialect], reg: &PassRegistry) -> Option<Vec<&'static str>> {
    let mut frontier: Vec<(&'static Dialect, Vec<&'static str>)> = vec![(from, Vec::new())];
    let mut visited: Vec<&'static Dialect> = vec![from];
    for _ in 0..3 {
        let mut next = Vec::new();
        for (d, chain) in &frontier {
            for decl in reg.iter() {
                let Some(p) = decl.info.produced_from(&d.name).and_then(dialect) else { continue };
                let accepts = decl.info.consumes.iter().filter_map(|c| dialect(c)).any(|c| d.refines(c));
                if !accepts || visited.iter().any(|v| std::ptr::eq(*v, p)) {
                    continue;
                }
                let mut chain = chain.clone();
                chain.push(decl.info.name);
                if targets.iter().any(|t| p.refines(t)) {
                    return Some(chain);
                }
                visited.push(p);
                next.push((p, chain));
            }
        }
        frontier = next;
    }
    None
}
