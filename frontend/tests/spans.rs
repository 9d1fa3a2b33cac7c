//! The lowering's source positions (`Lowering::span`, answered from a line
//! index) are exactly naga's `Span::location` (which rescans the source for
//! every span): line, byte column and length of every expression and
//! statement span of every corpus shader.

use xir_frontend::{Language, Overrides, Source};

#[test]
fn lowering_spans_are_naga_s_locations() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/wgsl");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("wgsl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let src = Source { path: "s.wgsl", text: &text, language: Language::Wgsl };
        let (module, info) = xir_frontend::parse(&src, &Overrides::new()).unwrap();
        let arenas = xir_ast::Arenas::default();
        let lowering = xir_frontend::lower::Lowering::new(&arenas, &module, &info, &text);
        let functions = module.functions.iter().map(|(_, f)| f).chain(module.entry_points.iter().map(|e| &e.function));
        for f in functions {
            let spans =
                f.expressions.iter().map(|(h, _)| f.expressions.get_span(h)).chain(f.body.span_iter().map(|(_, s)| *s));
            for s in spans {
                let ours = lowering.span(s);
                let naga = s.is_defined().then(|| {
                    let l = s.location(&text);
                    xir::Span::with_len(l.line_number, l.line_position, l.length)
                });
                assert_eq!(ours, naga, "{}: {s:?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
