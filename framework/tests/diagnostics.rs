//! The three diagnostic forms (docs/diagnostics.md), exactly: the human form
//! with the source line and a caret for a parse error, a verifier error with
//! a secondary label (the definition an SSA use is not dominated by) and a
//! pipeline error with a fix; the short form; and the JSON form, parsed and
//! checked field by field. Also: spans cover whole constructs.

use xir::diag::{render_human, render_json, render_short, Rule, Sources};
use xir::pass::{
    options_from_ron, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, PassRegistry, Produces,
};
use xir::pipeline::Loader;
use xir::{Diagnostic, Span};

const DOM: &str =
    "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add %y, %y : i32\n  %y = add i32 1, i32 2 : i32\n  return\n}\n";
const BAD_OP: &str = "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = frob i32 1 : i32\n  return\n}\n";

fn sources(name: &str, text: &str) -> Sources {
    let s = Sources::in_memory();
    s.add(name, text);
    s
}

fn verify(text: &str, file: &str) -> Vec<Diagnostic> {
    let m = xir::text::parse_module(text, file).expect("parses");
    xir::verify::verify_module(&m).into_iter().map(|d| d.with_file(file)).collect()
}

#[test]
fn a_parse_error_shows_the_line_and_a_caret_under_the_token() {
    let diags = xir::text::parse_module(BAD_OP, "bad.xir").unwrap_err();
    assert_eq!(diags.len(), 1);
    assert_eq!((diags[0].rule, diags[0].span), (Rule::Parse, Some(Span::with_len(3, 8, 4))));
    assert_eq!(
        render_human(&diags, &sources("bad.xir", BAD_OP)),
        "error[parse]: unknown opcode `frob`
  ┌─ bad.xir:3:8
  │
3 │   %x = frob i32 1 : i32
  │        ^^^^
  │
  = in @k

"
    );
}

#[test]
fn a_dominance_error_labels_the_definition() {
    let diags = verify(DOM, "dom.xir");
    assert_eq!(diags.len(), 2, "{}", render_short(&diags));
    let d = &diags[0];
    assert_eq!(d.rule, Rule::SsaDominance);
    // The whole instruction is the primary range; the definition is a label.
    assert_eq!(d.span, Some(Span::with_len(3, 3, 21)));
    assert_eq!(d.labels.len(), 1);
    assert_eq!(d.labels[0].span, Span::with_len(4, 3, 27));
    assert_eq!(
        render_human(&diags[..1], &sources("dom.xir", DOM)),
        "error[ssa-dominance]: operand 0 uses inst1 (defined in bb0), which does not dominate its use here
  ┌─ dom.xir:3:3
  │
3 │   %x = add %y, %y : i32
  │   ^^^^^^^^^^^^^^^^^^^^^
4 │   %y = add i32 1, i32 2 : i32
  │   --------------------------- inst1 is defined here, in bb0
  │
  = in @k, bb0, inst0

"
    );
    assert_eq!(
        render_short(&diags[..1]),
        "dom.xir:3:3: error: [ssa-dominance] operand 0 uses inst1 (defined in bb0), which does not dominate its use \
         here (in @k, bb0, inst0)\n"
    );
}

#[test]
fn without_the_source_the_human_form_keeps_the_position_in_a_header() {
    let diags = verify(DOM, "dom.xir");
    assert_eq!(
        render_human(&diags[..1], &Sources::in_memory()),
        "dom.xir:3:3: error: [ssa-dominance] operand 0 uses inst1 (defined in bb0), which does not dominate its use \
         here (in @k, bb0, inst0)\n  = note: dom.xir:4:3: inst1 is defined here, in bb0\n\n"
    );
}

const PIPE: &str =
    "(\n    name: \"p\",\n    input: \"xir\",\n    output: \"xir\",\n    steps: [Pass(\"nop_pas\")],\n)\n";

static NOP: PassInfo = PassInfo {
    name: "nop_pass",
    doc: "does nothing",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[],
    eliminates: &[],
};

struct Nop;

impl Pass for Nop {
    fn info(&self) -> &PassInfo {
        &NOP
    }
    fn run(&self, _m: &mut xir::Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        Ok(PassOutcome::changed(false))
    }
}

fn pipeline_failure() -> Vec<Diagnostic> {
    let mut reg = PassRegistry::new();
    reg.register(PassDecl {
        info: NOP.clone(),
        options: &[],
        create: |v| {
            options_from_ron::<()>(v)?;
            Ok(Box::new(Nop))
        },
    });
    let f = Loader::new(&reg).load_text("p.ron".into(), None, PIPE).err().expect("fails");
    f.diagnostics.iter().map(|d| d.to_diagnostic()).collect()
}

#[test]
fn a_pipeline_error_suggests_a_fix() {
    let diags = pipeline_failure();
    assert_eq!(diags.len(), 1);
    let d = &diags[0];
    assert_eq!((d.rule, d.span), (Rule::Pipeline, Some(Span::with_len(5, 18, 9))));
    assert_eq!(d.fixes.len(), 1);
    assert_eq!((d.fixes[0].span, d.fixes[0].replacement.as_str()), (Span::with_len(5, 19, 7), "nop_pass"));
    assert_eq!(
        render_human(&diags, &sources("p.ron", PIPE)),
        "error[pipeline]: unknown pass `nop_pas`; did you mean `nop_pass`?
  ┌─ p.ron:5:18
  │
5 │     steps: [Pass(\"nop_pas\")],
  │                  ^^^^^^^^^
  │
  = help: did you mean `nop_pass`?

"
    );
}

#[test]
fn json_has_every_field() {
    let diags = verify(DOM, "dom.xir");
    let text = render_json(&diags, &sources("dom.xir", DOM));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one object per line");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["rule"], "ssa-dominance");
    assert_eq!(v["severity"], "error");
    assert_eq!(v["message"], "operand 0 uses inst1 (defined in bb0), which does not dominate its use here");
    assert_eq!(v["file"], "dom.xir");
    assert_eq!(
        (&v["line"], &v["column"], &v["end_line"], &v["end_column"]),
        (&3.into(), &3.into(), &3.into(), &24.into())
    );
    assert_eq!((&v["function"], &v["block"], &v["inst"]), (&"k".into(), &"bb0".into(), &"inst0".into()));
    let label = &v["labels"][0];
    assert_eq!(label["message"], "inst1 is defined here, in bb0");
    assert_eq!(label["file"], "dom.xir");
    assert_eq!(
        (&label["line"], &label["column"], &label["end_line"], &label["end_column"]),
        (&4.into(), &3.into(), &4.into(), &30.into())
    );
    assert_eq!(v["labels"].as_array().unwrap().len(), 1);
    assert_eq!(v["notes"], serde_json::json!([]));
    assert_eq!(v["fixes"], serde_json::json!([]));

    let diags = pipeline_failure();
    let v: serde_json::Value = serde_json::from_str(render_json(&diags, &sources("p.ron", PIPE)).trim()).unwrap();
    assert_eq!((v["rule"].as_str(), v["file"].as_str()), (Some("pipeline"), Some("p.ron")));
    assert_eq!((&v["line"], &v["column"], &v["end_column"]), (&5.into(), &18.into(), &27.into()));
    assert_eq!(v["function"], serde_json::Value::Null);
    let fix = &v["fixes"][0];
    assert_eq!(fix["replacement"], "nop_pass");
    assert_eq!(fix["message"], "did you mean `nop_pass`?");
    assert_eq!(
        (&fix["line"], &fix["column"], &fix["end_line"], &fix["end_column"]),
        (&5.into(), &19.into(), &5.into(), &26.into())
    );
}

#[test]
fn json_without_a_position_has_nulls() {
    let d = Diagnostic::error(Rule::FunctionNames, "twice").with_note("n");
    let v: serde_json::Value = serde_json::from_str(render_json(&[d], &Sources::in_memory()).trim()).unwrap();
    assert_eq!(
        (&v["file"], &v["line"], &v["end_column"]),
        (&serde_json::Value::Null, &serde_json::Value::Null, &serde_json::Value::Null)
    );
    assert_eq!(v["notes"], serde_json::json!(["n"]));
}

#[test]
fn spans_cover_tokens_and_instructions() {
    // A lexical error covers the offending character, even a multi-byte one.
    let diags = xir::text::parse_module("kernel @k() block_size(1, 1, 1) {\n^entry:\n  é\n}\n", "e.xir").unwrap_err();
    assert_eq!(diags[0].span, Some(Span::with_len(3, 3, 2)));
    let m = xir::text::parse_module(DOM, "dom.xir").unwrap();
    let f = &m.functions[0];
    let spans: Vec<Option<Span>> = f.all_insts().map(|(_, i)| f.inst_span(i)).collect();
    assert_eq!(
        spans,
        vec![Some(Span::with_len(3, 3, 21)), Some(Span::with_len(4, 3, 27)), Some(Span::with_len(5, 3, 6))]
    );
}
