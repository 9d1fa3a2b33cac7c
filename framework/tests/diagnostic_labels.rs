//! Secondary labels of rules that involve two places (docs/diagnostics.md,
//! "Secondary labels"): each test asserts the rule, the primary span and
//! the label's span and text. The file tests in `tests/filetests/verify/`
//! hold the same rules by position.

use xir::diag::{render_human, Rule, Sources};
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, PassRegistry, Produces};
use xir::pipeline::{Loader, PassManager, RunOptions};
use xir::{Diagnostic, Span};

fn verify(text: &str) -> Vec<Diagnostic> {
    let m = xir::text::parse_module(text, "t.xir").expect("parses");
    xir::verify::verify_module(&m)
}

/// `(rule, primary span, [(label span, label text)])`.
fn shape(d: &Diagnostic) -> (Rule, Option<Span>, Vec<(Span, &str)>) {
    (d.rule, d.span, d.labels.iter().map(|l| (l.span, l.message.as_str())).collect())
}

#[test]
fn a_type_mismatch_labels_the_operand_definition() {
    let text = "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = alloca : u32\n  %v = add i32 1, i32 2 : i32\n  \
                store %x, %v\n  return\n}\n";
    let diags = verify(text);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        shape(&diags[0]),
        (
            Rule::named("store_exact_type"),
            Some(Span::with_len(5, 3, 12)),
            vec![(Span::with_len(4, 3, 27), "operand 1 is defined here, with type `i32`")]
        )
    );
    assert_eq!(diags[0].message, "`store`: the stored value has type `i32`, expected `u32`");
    let s = Sources::in_memory();
    s.add("t.xir", text);
    let d = diags[0].clone().with_file("t.xir");
    assert_eq!(
        render_human(&[d], &s),
        "error[store_exact_type]: `store`: the stored value has type `i32`, expected `u32`
  ┌─ t.xir:5:3
  │
4 │   %v = add i32 1, i32 2 : i32
  │   --------------------------- operand 1 is defined here, with type `i32`
5 │   store %x, %v
  │   ^^^^^^^^^^^^
  │
  = in @k, bb0, inst2

"
    );
}

#[test]
fn an_argument_operand_labels_the_function_header() {
    let text = "kernel @k(%out: buffer<u32>, %n: i32) block_size(1, 1, 1) {\n^entry:\n  \
                buffer.write %out, u32 0, %n\n  return\n}\n";
    let diags = verify(text);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        shape(&diags[0]),
        (
            Rule::named("buffer_write_type"),
            Some(Span::with_len(3, 3, 28)),
            vec![(Span::with_len(1, 1, 6), "operand 2 is argument 1 of `@k`, of type `i32`")]
        )
    );
}

#[test]
fn a_call_that_misses_the_signature_labels_the_callee() {
    let text = "callable @f(%a: u32) -> u32 {\n^entry:\n  return %a\n}\n\
                kernel @k() block_size(1, 1, 1) {\n^entry:\n  %r = call @f, u32 1, u32 2 : u32\n  return\n}\n";
    let diags = verify(text);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        shape(&diags[0]),
        (
            Rule::named("call_signature"),
            Some(Span::with_len(7, 3, 32)),
            vec![(Span::with_len(1, 1, 8), "`@f` is defined here")]
        )
    );
}

#[test]
fn phi_predecessor_mismatches_label_the_block() {
    let text = "kernel @k(%n: u32) block_size(1, 1, 1) {\n^entry:\n  br target ^join\n^join:\n  \
                %a = phi [%n, ^entry], [%n, ^other] : u32\n  return\n^other:\n  return\n}\n";
    let diags = verify(text);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        shape(&diags[0]),
        (
            Rule::PhiPredecessors,
            Some(Span::with_len(5, 3, 41)),
            vec![(Span::with_len(7, 1, 6), "bb2 does not branch to bb1")]
        )
    );
}

#[test]
fn a_duplicate_function_name_labels_the_first_definition() {
    let text = "callable @f() -> u32 {\n^entry:\n  return u32 1\n}\ncallable @g() -> u32 {\n^entry:\n  \
                return u32 2\n}\n";
    let mut m = xir::text::parse_module(text, "t.xir").unwrap();
    m.functions[1].name = "f".into();
    let diags = xir::verify::verify_module(&m);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        shape(&diags[0]),
        (
            Rule::FunctionNames,
            Some(Span::with_len(5, 1, 8)),
            vec![(Span::with_len(1, 1, 8), "`@f` is first defined here, as fn0")]
        )
    );
}

#[test]
fn redefinitions_label_the_first_definition() {
    let cases: &[(&str, Span, Span)] = &[
        // A value: its first definition is the whole instruction.
        (
            "kernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add u32 1, u32 2 : u32\n  %x = add u32 3, u32 4 : u32\n  return\n}\n",
            Span::with_len(4, 3, 2),
            Span::with_len(3, 3, 27),
        ),
        // An argument redefined by an instruction: the argument's name.
        (
            "kernel @k(%x: u32) block_size(1, 1, 1) {\n^entry:\n  %x = add u32 3, u32 4 : u32\n  return\n}\n",
            Span::with_len(3, 3, 2),
            Span::with_len(1, 11, 2),
        ),
        // A block.
        (
            "kernel @k() block_size(1, 1, 1) {\n^entry:\n  br target ^b\n^b:\n  return\n^b:\n  return\n}\n",
            Span::with_len(6, 1, 2),
            Span::with_len(4, 1, 2),
        ),
        // A function.
        (
            "callable @f() -> u32 {\n^entry:\n  return u32 1\n}\ncallable @f() -> u32 {\n^entry:\n  return u32 2\n}\n",
            Span::with_len(5, 10, 2),
            Span::with_len(1, 1, 8),
        ),
    ];
    for (text, primary, first) in cases {
        let diags = xir::text::parse_module(text, "t.xir").unwrap_err();
        assert_eq!(diags.len(), 1, "{text}");
        let d = &diags[0];
        assert_eq!((d.rule, d.span), (Rule::Parse, Some(*primary)), "{text}");
        assert_eq!(d.labels.iter().map(|l| l.span).collect::<Vec<_>>(), vec![*first], "{text}");
        assert!(d.labels[0].message.ends_with("is first defined here"), "{}", d.labels[0].message);
    }
}

static NOP: PassInfo = PassInfo {
    name: "nop",
    doc: "does nothing",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[],
    eliminates: &[],
};

#[derive(Default)]
struct Nop;

impl Pass for Nop {
    fn info(&self) -> &PassInfo {
        &NOP
    }
    fn run(&self, _m: &mut xir::Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        Ok(PassOutcome::changed(false))
    }
}

#[test]
fn a_dialect_finding_labels_where_the_pipeline_requires_the_dialect() {
    // `if` is structured control flow, outside `xir.raw`, the pipeline's input.
    let text = "kernel @k(%c: bool) block_size(1, 1, 1) {\n^entry:\n  if %c, true ^t, false ^e, merge ^m\n^t:\n  \
                return\n^e:\n  return\n^m:\n  return\n}\n";
    let mut m = xir::text::parse_module(text, "t.xir").expect("parses");
    assert!(xir::verify::verify_module(&m).is_empty());
    let mut reg = PassRegistry::new();
    reg.register(PassDecl::without_options::<Nop>(NOP.clone()));
    let pipe =
        "(\n    name: \"p\",\n    input: \"xir.raw\",\n    output: \"xir.raw\",\n    steps: [Pass(\"nop\")],\n)\n";
    let p = Loader::new(&reg).load_text("p.ron".into(), None, pipe).expect("loads");
    let e = PassManager::new(&p, RunOptions::default()).run(&mut m, &mut std::io::sink()).unwrap_err();
    assert!(!e.diagnostics.is_empty());
    for d in &e.diagnostics {
        assert_eq!(d.labels.len(), 1, "{d}");
        let l = &d.labels[0];
        assert_eq!((l.file.as_deref(), l.span), (Some("p.ron"), Span::new(3, 12)), "{d}");
        assert_eq!(l.message, "pipeline `p` takes `xir.raw` here");
    }
    assert_eq!(e.diagnostics[0].rule, Rule::named("dialect:xir.raw:opcode"));
    assert_eq!(e.diagnostics[0].span, Some(Span::with_len(3, 3, 34)));
}
