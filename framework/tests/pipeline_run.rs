//! The pass manager over real modules with stand-in passes: fixed points,
//! opt-level groups, bisecting, printing and diffs, timing, and every failure
//! path (verifier, panic, pass error, false `preserves` claim) with its
//! reproducer, which is replayed.

use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, PassRegistry, Produces};
use xir::pipeline::{FailureKind, Loader, PassManager, Pipeline, RunError, RunOptions, RunReport};
use xir::{InstData, Module, Opcode, TypeTable};

const KERNEL: &str = "kernel @k(%a: f32, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %n = buffer.size %y : u32
  %ok = lt %i, %n : bool
  if %ok, true ^body, false ^done, merge ^done
^body:
  %v = buffer.read %y, %i : f32
  %r = mul %a, %v : f32
  buffer.write %y, %i, %r
  br target ^done
^done:
  return
}
";

fn module() -> Module {
    xir::text::parse_module(KERNEL, "k.xir").unwrap_or_else(|d| panic!("{d:?}"))
}

macro_rules! pass {
    ($name:literal, $preserves:expr, $run:expr) => {{
        static INFO: PassInfo = PassInfo {
            name: $name,
            doc: "stand-in",
            consumes: &["xir"],
            produces: Produces::Same,
            preserves: $preserves,
            eliminates: &[],
        };
        struct P;
        impl Pass for P {
            fn info(&self) -> &PassInfo {
                &INFO
            }
            fn run(&self, m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
                let f: fn(&mut Module) -> Result<PassOutcome, PassError> = $run;
                f(m)
            }
        }
        PassDecl { info: INFO.clone(), options: &[], create: |_| Ok(Box::new(P)) }
    }};
}

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    // Adds a comment to the first function once; reports a change only then.
    reg.register(pass!("tag", &[AnalysisKind::Cfg, AnalysisKind::Dominators], |m| {
        let f = &mut m.functions[0];
        let fresh = !f.md.comments.iter().any(|c| c == "tagged");
        if fresh {
            f.md.comments.push("tagged".into());
        }
        let mut o = PassOutcome::changed(fresh);
        o.stats.push(("tags".into(), usize::from(fresh).to_string()));
        Ok(o)
    }));
    reg.register(pass!("break", &[], |m| {
        let f = &mut m.functions[0];
        let entry = f.body().unwrap();
        let t = f.terminator(entry).unwrap();
        f.remove_inst(t);
        Ok(PassOutcome::changed(true))
    }));
    reg.register(pass!("boom", &[], |_| panic!("boom goes the pass")));
    reg.register(pass!("nothing", &[], |_| Ok(PassOutcome::changed(false))));
    // Runs once per process; panics when run again (a pass that is not
    // deterministic, for the reproducer's replay).
    reg.register(pass!("once", &[], |_| {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        assert_eq!(RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst), 0, "`once` ran twice");
        Ok(PassOutcome::changed(false))
    }));
    reg.register(pass!("refuse", &[], |_| Err(PassError::new("refuse", "cannot handle this module"))));
    // Splits the entry block but claims to preserve the CFG.
    reg.register(pass!("liar", &[AnalysisKind::Cfg], |m| {
        let f = &mut m.functions[0];
        let entry = f.body().unwrap();
        let tail = f.add_block();
        for (pos, i) in f.block(entry).insts().to_vec().into_iter().enumerate() {
            f.move_inst(i, tail, pos);
        }
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(tail);
        f.append_inst(entry, br);
        Ok(PassOutcome::changed(true))
    }));
    reg.register(PassDecl { info: USES_CFG.clone(), options: &[], create: |_| Ok(Box::new(UsesCfg)) });
    reg
}

/// Reads the CFG of the first function through the cache and reports how
/// many CFGs the cache has computed so far.
struct UsesCfg;

static USES_CFG: PassInfo = PassInfo {
    name: "uses_cfg",
    doc: "stand-in analysis user",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::Cfg],
    eliminates: &[],
};

impl Pass for UsesCfg {
    fn info(&self) -> &PassInfo {
        &USES_CFG
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        cx.analyses.cfg(m, xir::FuncId::new(0));
        let mut o = PassOutcome::changed(false);
        o.stats.push(("cfg_computed".into(), format!("#{}", cx.analyses.computed[&AnalysisKind::Cfg])));
        Ok(o)
    }
}

fn pipeline(reg: &PassRegistry, input: &str, steps: &str) -> Pipeline {
    let text = format!("Pipeline(name: \"t\", input: \"{input}\", output: \"xir\", steps: [\n{steps}\n])");
    Loader::new(reg).load_text("t.ron".into(), None, &text).unwrap_or_else(|f| panic!("{f}"))
}

fn run(steps: &str, opts: RunOptions) -> (Result<RunReport, Box<RunError>>, String, Module) {
    let reg = registry();
    let p = pipeline(&reg, "xir", steps);
    let mut m = module();
    let mut log = Vec::new();
    let r = PassManager::new(&p, opts).run(&mut m, &mut log);
    (r, String::from_utf8(log).unwrap(), m)
}

/// A reproducer directory that does not exist yet, inside a scratch
/// directory removed when the guard drops.
fn temp_dir(tag: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let guard = tempfile::tempdir().unwrap();
    let d = guard.path().join(tag);
    (guard, d)
}

#[test]
fn a_fixed_point_group_stops_when_nothing_changes() {
    let (r, _, m) = run(
        "FixedPoint(max_iterations: 5, steps: [Pass(\"tag\")])",
        RunOptions { time_passes: true, ..Default::default() },
    );
    let r = r.unwrap();
    assert_eq!(r.executions, 2, "one changing run, one that finds nothing");
    assert_eq!(m.functions[0].md.comments, ["tagged"]);
    assert_eq!(r.timings.len(), 1);
    assert_eq!(r.timings[0].runs, 2);
    assert_eq!(r.timings[0].stats, [("tags".to_string(), "1".to_string())], "integer stats are summed");
    assert_eq!((r.timings[0].insts_before, r.timings[0].insts_after), (9, 9));
    let table = r.timing_table();
    assert!(table.contains("tag (t.ron:2:39)  [tags=1]"), "{table}");
}

#[test]
fn opt_level_groups_run_only_at_their_level() {
    let steps = "OptGroup(min_level: 2, steps: [Pass(\"tag\")])";
    assert_eq!(run(steps, RunOptions { opt_level: 1, ..Default::default() }).0.unwrap().executions, 0);
    assert_eq!(run(steps, RunOptions { opt_level: 2, ..Default::default() }).0.unwrap().executions, 1);
}

#[test]
fn print_changed_shows_a_diff_only_when_the_ir_changed() {
    let (r, log, _) = run("Pass(\"tag\"),\nPass(\"tag\")", RunOptions { print_changed: true, ..Default::default() });
    r.unwrap();
    assert_eq!(log.matches("changed the IR").count(), 1, "{log}");
    assert!(log.contains("// ----- `tag` (#1, t.ron:2:1) changed the IR [tags=1] -----"), "{log}");
    assert!(log.contains("--- before tag\n+++ after tag\n"), "{log}");
    assert!(log.contains("\n+// tagged\n"), "{log}");
}

#[test]
fn print_before_and_after_name_the_pass_and_step() {
    let opts = RunOptions { print_before: vec!["tag".into()], print_after_all: true, ..Default::default() };
    let (r, log, _) = run("Pass(\"tag\")", opts);
    r.unwrap();
    let before = log.find("// ----- IR before `tag` (#1, t.ron:2:1) -----\nkernel @k").expect(&log);
    let after = log.find("// ----- IR after `tag` (#1, t.ron:2:1) -----\n// tagged\nkernel @k").expect(&log);
    assert!(before < after);
}

#[test]
fn bisect_limit_runs_the_first_n_executions_and_names_the_last() {
    let (r, _, m) = run(
        "Pass(\"tag\"),\nPass(\"break\"),\nPass(\"boom\")",
        RunOptions { bisect_limit: Some(1), ..Default::default() },
    );
    let r = r.unwrap();
    assert_eq!(r.executions, 1);
    assert_eq!(r.bisect.as_deref(), Some("bisect-limit 1: stopped after execution #1, `tag` at t.ron:2:1"));
    assert!(xir::verify::verify_module(&m).is_empty(), "`break` did not run");
    let (r, _, _) = run("Pass(\"tag\")", RunOptions { bisect_limit: Some(4), ..Default::default() });
    assert_eq!(
        r.unwrap().bisect.as_deref(),
        Some("bisect-limit 4 not reached: the pipeline ran all 1 pass executions; the last was `tag` at t.ron:2:1")
    );
    // A limit of 0 stops before the first execution; nothing ran and the limit was reached.
    let (r, _, _) = run("Pass(\"tag\")", RunOptions { bisect_limit: Some(0), ..Default::default() });
    let r = r.unwrap();
    assert_eq!(r.executions, 0);
    assert_eq!(r.bisect.as_deref(), Some("bisect-limit 0: stopped before the first execution"));
}

#[test]
fn verify_each_names_the_pass_and_its_reproducer_replays_the_failure() {
    let (_guard, dir) = temp_dir("verify");
    let opts = RunOptions { verify_each: true, reproducer_dir: Some(dir.clone()), ..Default::default() };
    let (r, _, _) = run("Pass(\"tag\"),\nFixedPoint(max_iterations: 3, steps: [Pass(\"tag\"), Pass(\"break\"), Pass(\"tag\")]),\nPass(\"tag\")", opts);
    let e = r.unwrap_err();
    assert_eq!(e.kind, FailureKind::InvalidIr);
    assert_eq!(e.pass.as_ref().map(|(n, l)| (n.as_str(), l.to_string())), Some(("break", "t.ron:3:52".to_string())));
    assert!(e.message.starts_with("pass `break` left IR that is not valid `xir`"), "{}", e.message);
    assert!(!e.diagnostics.is_empty());
    let rep = e.reproducer.as_ref().expect("reproducer written");
    assert_eq!(rep.command, format!("xir-opt {0}/input.xir --pipeline {0}/repro.ron --verify-each", dir.display()));
    let ron = std::fs::read_to_string(dir.join("repro.ron")).unwrap();
    // The failing pass, the rest of its iteration, the unused iterations, the rest.
    let steps: Vec<&str> = ron
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Pass") || l.starts_with("FixedPoint") || l.starts_with(']'))
        .collect();
    assert_eq!(
        steps,
        [
            "Pass(\"break\"),",
            "Pass(\"tag\"),",
            "FixedPoint(max_iterations: 2, steps: [",
            "Pass(\"tag\"),",
            "Pass(\"break\"),",
            "Pass(\"tag\"),",
            "]),",
            "Pass(\"tag\"),",
            "],"
        ]
    );
    // Replaying: the input is the IR before `break` (already tagged), and
    // the same pass fails the same way.
    let input = std::fs::read_to_string(dir.join("input.xir")).unwrap();
    assert!(input.starts_with("// tagged\n"), "{input}");
    let reg = registry();
    let p = Loader::new(&reg).load_path(&dir.join("repro.ron")).unwrap_or_else(|f| panic!("{f}"));
    let mut m = xir::text::parse_module(&input, "input.xir").unwrap();
    let e2 = PassManager::new(&p, RunOptions { verify_each: true, ..Default::default() })
        .run(&mut m, &mut Vec::new())
        .unwrap_err();
    assert_eq!(e2.kind, FailureKind::InvalidIr);
    assert_eq!(e2.pass.as_ref().unwrap().0, "break");
    let msgs = |e: &RunError| e.diagnostics.iter().map(|d| (d.rule, d.message.clone())).collect::<Vec<_>>();
    assert_eq!(msgs(&e2), msgs(&e));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reproducer_whose_replay_diverges_is_not_written() {
    // The module before a failing pass is rebuilt by running the passes
    // before it again; when they do not do the same again, the failure says
    // so instead of writing a reproducer of some other module.
    let (_guard, dir) = temp_dir("diverge");
    let (r, _, _) =
        run("Pass(\"once\"),\nPass(\"boom\")", RunOptions { reproducer_dir: Some(dir.clone()), ..Default::default() });
    let e = r.unwrap_err();
    assert_eq!(e.kind, FailureKind::Panic);
    assert!(e.reproducer.is_none());
    let why = e.reproducer_error.as_deref().expect("the replay's failure is reported");
    assert!(why.starts_with("replaying the 1 pass execution(s) before the failure failed:"), "{why}");
    assert!(why.contains("`once` ran twice"), "{why}");
    assert!(!dir.join("input.xir").exists());
}

#[test]
fn a_panicking_pass_is_reported_not_propagated() {
    let (_guard, dir) = temp_dir("panic");
    let (r, _, _) =
        run("Pass(\"tag\"),\nPass(\"boom\")", RunOptions { reproducer_dir: Some(dir.clone()), ..Default::default() });
    let e = r.unwrap_err();
    assert_eq!(e.kind, FailureKind::Panic);
    assert_eq!(e.message, "pass `boom` panicked: boom goes the pass");
    let text = e.to_string();
    assert!(text.starts_with("t.ron:3:1: error: pass `boom` panicked: boom goes the pass\n"), "{text}");
    assert!(text.contains("note: reproducer written to"), "{text}");
    assert!(std::fs::read_to_string(dir.join("repro.ron")).unwrap().contains("Pass(\"boom\")"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pass_refusing_the_input_writes_no_reproducer() {
    // A pass error is the pass refusing the user's module with a reason, not
    // an internal fault: nothing is written even with a reproducer directory.
    let (_guard, dir) = temp_dir("refuse");
    let (r, _, _) = run("Pass(\"refuse\")", RunOptions { reproducer_dir: Some(dir.clone()), ..Default::default() });
    let e = r.unwrap_err();
    assert_eq!(e.kind, FailureKind::PassError);
    assert!(e.reproducer.is_none() && e.reproducer_error.is_none());
    assert!(!e.to_string().contains("reproducer"), "{e}");
    assert!(!dir.exists(), "{} was created", dir.display());
}

#[test]
fn a_pass_error_and_an_unreached_output_are_reported() {
    let (r, _, _) = run("Pass(\"refuse\")", RunOptions::default());
    let e = r.unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (FailureKind::PassError, "pass `refuse` failed: cannot handle this module")
    );
    // Without --verify-each the broken IR is caught at the end.
    let (r, _, _) = run("Pass(\"break\")", RunOptions::default());
    let e = r.unwrap_err();
    assert_eq!(e.kind, FailureKind::Output);
    assert!(e.message.contains("rerun with --verify-each"), "{}", e.message);
}

#[test]
fn a_module_outside_the_input_dialect_is_refused_before_any_pass() {
    let reg = registry();
    let p = pipeline(&reg, "xir.raw", "Pass(\"boom\")");
    let e = PassManager::new(&p, RunOptions::default()).run(&mut module(), &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind, FailureKind::Input);
    assert!(e.message.contains("not in dialect `xir.raw`"));
}

#[test]
fn a_false_preserves_claim_fails_in_debug_builds() {
    let (r, _, _) = run("Pass(\"liar\")", RunOptions::default());
    if cfg!(debug_assertions) {
        let e = r.unwrap_err();
        assert_eq!(e.kind, FailureKind::FalsePreserve);
        assert_eq!(e.message, "pass `liar` claims to preserve the CFG, but it changed the CFG of @k");
    } else {
        r.unwrap();
    }
}

#[test]
fn analyses_survive_only_passes_that_preserve_them() {
    let opts = RunOptions { time_passes: true, ..Default::default() };
    let (r, _, _) = run("Pass(\"uses_cfg\"),\nPass(\"uses_cfg\"),\nPass(\"nothing\"),\nPass(\"uses_cfg\")", opts);
    let r = r.unwrap();
    let computed: Vec<String> = r.timings.iter().flat_map(|t| t.stats.iter().map(|(_, v)| v.clone())).collect();
    assert_eq!(computed, ["#1", "#1", "#2"], "the CFG is recomputed only after `nothing`, which preserves nothing");
}

/// Counts spans by name, those made on one thread only: it is the process's
/// global subscriber (a scoped one misses spans whose callsite another test's
/// thread registered at the same moment with no subscriber: tracing caches
/// that callsite's interest as "never"), and the other tests run passes too.
struct SpanCounter {
    thread: std::thread::ThreadId,
    names: std::sync::Mutex<Vec<String>>,
}

impl tracing::Subscriber for SpanCounter {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut v = self.names.lock().unwrap();
        if std::thread::current().id() == self.thread {
            v.push(span.metadata().name().to_string());
        }
        tracing::span::Id::from_u64(v.len() as u64 + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn every_pass_execution_has_a_tracing_span() {
    let counter = std::sync::Arc::new(SpanCounter { thread: std::thread::current().id(), names: Default::default() });
    tracing::subscriber::set_global_default(counter.clone()).expect("the only test that sets a subscriber");
    let (r, _, _) = run(
        "Pass(\"tag\"),\nFixedPoint(max_iterations: 3, steps: [Pass(\"tag\"), Pass(\"uses_cfg\")])",
        RunOptions::default(),
    );
    assert_eq!(r.unwrap().executions, 3);
    let spans = counter.names.lock().unwrap().clone();
    assert_eq!(spans.iter().filter(|s| *s == "pass").count(), 3, "{spans:?}");
    assert_eq!(spans.iter().filter(|s| *s == "fixed_point").count(), 1, "{spans:?}");
}
