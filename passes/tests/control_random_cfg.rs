//! Property test of `restructure_cfg` on random reducible raw CFGs, not
//! only on destructured structured programs: random forward edges
//! (`br`, `cond_br`, `br_indexed`, early `return`) plus back edges to
//! blocks that dominate their source, with every back edge guarded by a
//! global step budget so that each run terminates. Each block folds its id
//! into a per-thread hash, so equal outputs mean equal block sequences.
//!
//! Cases per run: 256, or `XIR_PROPTEST_CASES`.

mod control_support;

use control_support::{check, parse, run, run_pass};
use proptest::prelude::*;
use xir_passes::control::{clear_inactive_block_payloads, destructure_cfg, restructure};

#[derive(Clone, Debug)]
enum Term {
    Br(usize),
    Cond(usize, usize),
    Indexed(usize, usize, usize),
    Return,
}

/// Raw choices: per block, a kind and three target picks in `0..1000`.
type Raw = Vec<(u8, [u16; 3], bool)>;

fn dominators(n: usize, succ: &[Vec<usize>]) -> Vec<u64> {
    let all = (1u64 << n) - 1;
    let mut dom = vec![all; n];
    dom[0] = 1;
    let mut preds = vec![Vec::new(); n];
    for (i, s) in succ.iter().enumerate() {
        for &j in s {
            preds[j].push(i);
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for j in 1..n {
            let mut d = all;
            for &p in &preds[j] {
                d &= dom[p];
            }
            if preds[j].is_empty() {
                d = 1 << j;
            }
            d |= 1 << j;
            if d != dom[j] {
                dom[j] = d;
                changed = true;
            }
        }
    }
    dom
}

/// Build the block terminators: forward edges first, then back edges to a
/// dominator of the source (so the CFG stays reducible).
fn shape(raw: &Raw) -> Vec<Term> {
    let n = raw.len() + 1; // + the final block
    let fwd = |i: usize, pick: u16| i + 1 + (pick as usize) % (n - 1 - i);
    let mut terms: Vec<Term> = raw
        .iter()
        .enumerate()
        .map(|(i, (kind, p, _))| match kind % 7 {
            0 if i > 0 => Term::Return,
            1 | 2 => Term::Cond(fwd(i, p[0]), fwd(i, p[1])),
            3 => Term::Indexed(fwd(i, p[0]), fwd(i, p[1]), fwd(i, p[2])),
            _ => Term::Br(fwd(i, p[0])),
        })
        .collect();
    terms.push(Term::Return);
    let succ: Vec<Vec<usize>> = terms
        .iter()
        .map(|t| match *t {
            Term::Br(a) => vec![a],
            Term::Cond(a, b) => vec![a, b],
            Term::Indexed(a, b, c) => vec![a, b, c],
            Term::Return => vec![],
        })
        .collect();
    let dom = dominators(n, &succ);
    for (i, (_, p, back)) in raw.iter().enumerate() {
        if !*back || i == 0 {
            continue;
        }
        // A dominator of i other than the entry block.
        let doms: Vec<usize> = (1..=i).filter(|&h| dom[i] >> h & 1 == 1).collect();
        if doms.is_empty() {
            continue;
        }
        let h = doms[p[2] as usize % doms.len()];
        terms[i] = match terms[i] {
            Term::Br(a) => Term::Cond(h, a),
            Term::Cond(a, _) => Term::Cond(h, a),
            Term::Indexed(a, b, _) => Term::Indexed(a, b, h),
            Term::Return => Term::Return,
        };
    }
    terms
}

fn program(terms: &[Term]) -> String {
    let n = terms.len();
    let mut s = String::from(
        "kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n  %acc = alloca : u32\n  %steps = alloca : u32\n  store %acc, %t\n  store %steps, u32 0\n  br target ^b0\n",
    );
    let is_back = |i: usize, j: usize| j <= i;
    for (i, t) in terms.iter().enumerate() {
        s += &format!(
            "^b{i}:\n  %a{i} = load %acc : u32\n  %m{i} = mul %a{i}, u32 31 : u32\n  %n{i} = add %m{i}, u32 {} : u32\n  store %acc, %n{i}\n  %s{i} = load %steps : u32\n  %z{i} = add %s{i}, u32 1 : u32\n  store %steps, %z{i}\n  %ok{i} = lt %z{i}, u32 40 : bool\n  %h{i} = mul %n{i}, u32 2654435761 : u32\n  %r{i} = shr %h{i}, u32 13 : u32\n",
            i + 1
        );
        match *t {
            Term::Return => {
                s += &format!("  buffer.write %out, %t, %n{i}\n  return\n");
            }
            Term::Br(a) => s += &format!("  br target ^b{a}\n"),
            Term::Cond(a, b) => {
                s += &format!("  %bit{i} = bit_and %r{i}, u32 1 : u32\n  %c{i} = eq %bit{i}, u32 1 : bool\n");
                let cond = if is_back(i, a) {
                    s += &format!("  %g{i} = bit_and %c{i}, %ok{i} : bool\n");
                    format!("%g{i}")
                } else {
                    format!("%c{i}")
                };
                s += &format!("  cond_br {cond}, true ^b{a}, false ^b{b}\n");
            }
            Term::Indexed(a, b, c) => {
                s += &format!(
                    "  %v{i} = mod %r{i}, u32 3 : u32\n  %w{i} = select %ok{i}, %v{i}, u32 0 : u32\n  br_indexed %w{i}, default ^b{a}, case 1 ^b{b}, case 2 ^b{c}\n"
                );
            }
        }
        let _ = n;
    }
    s + "}\n"
}

fn cases() -> u32 {
    std::env::var("XIR_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

const INPUTS: &str = r#"{"dispatch": [4, 1, 1], "args": {"out": {"fill": 0, "len": 4}}}"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    // Check that restructuring any generated reducible CFG verifies, lies in
    // xir.restructured, and follows the same block sequence per thread; and
    // that destructuring and restructuring the result again does too.
    #[test]
    fn restructure_random_reducible_cfg(raw in prop::collection::vec((any::<u8>(), any::<[u16; 3]>(), any::<bool>()), 1..14)) {
        let src = program(&shape(&raw));
        let mut m = parse(&src);
        check(&m, "xir.raw.phi_free");
        let before = run(&m, "k", INPUTS);
        if let Err(e) = run_pass(&mut m, restructure::decl()) {
            panic!("{e}\n{}\n{src}", xir::diag::render(&e.diagnostics));
        }
        check(&m, "xir.restructured");
        let after = run(&m, "k", INPUTS);
        prop_assert!(before.first_mismatch(&after, |_, _| false).is_none(), "{}\n{}", src, xir::text::print_module(&m));
        run_pass(&mut m, clear_inactive_block_payloads::decl()).unwrap();
        run_pass(&mut m, destructure_cfg::decl()).unwrap();
        run_pass(&mut m, restructure::decl()).unwrap();
        check(&m, "xir.restructured");
        let again = run(&m, "k", INPUTS);
        prop_assert!(before.first_mismatch(&again, |_, _| false).is_none(), "{}\n{}", src, xir::text::print_module(&m));
    }
}

// Check that the generator exercises what it should: loops, multi-exit
// selector dispatch and guarded stages appear in a fixed sample.
#[test]
fn generator_covers_loops_and_selectors() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = prop::collection::vec((any::<u8>(), any::<[u16; 3]>(), any::<bool>()), 1..14);
    let (mut loops, mut sel) = (0, 0);
    for _ in 0..200 {
        let raw = strat.new_tree(&mut runner).unwrap().current();
        let mut m = parse(&program(&shape(&raw)));
        run_pass(&mut m, restructure::decl()).unwrap();
        loops += control_support::count_op(&m, "loop");
        sel += xir::text::print_module(&m).contains("restructure.sel") as usize;
    }
    eprintln!("loops {loops}, programs with a selector {sel}");
    assert!(loops > 50 && sel > 10, "loops {loops}, selector programs {sel}");
}
