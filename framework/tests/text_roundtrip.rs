//! Round trips of the text format: hand-written modules covering every
//! syntactic form, then (below) random well-formed modules from
//! `xir_testgen::modules`, through text and JSON.

use xir::text::{parse_module, print_module};

fn parse(src: &str) -> xir::Module {
    match parse_module(src, "test.xir") {
        Ok(m) => m,
        Err(d) => panic!("parse failed:\n{}", xir::diag::render(&d)),
    }
}

/// Print, parse, print again: the two prints must agree byte for byte.
fn check_stable(src: &str) -> String {
    let printed = print_module(&parse(src));
    let again = print_module(&parse(&printed));
    assert_eq!(printed, again, "print(parse(print(m))) != print(m)");
    printed
}

const SAXPY: &str = r#"
// y = a * x + y
kernel @saxpy(%a: f32, %x: buffer<f32>, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %n = buffer.size %x : u32
  %ok = lt %i, %n : bool
  if %ok, true ^body, false ^done, merge ^done
^body:
  %xi = buffer.read %x, %i : f32
  %yi = buffer.read %y, %i : f32
  %ax = mul %a, %xi : f32
  %r = add %ax, %yi : f32
  buffer.write %y, %i, %r
  br target ^done
^done:
  return
}
"#;

#[test]
fn saxpy_prints_as_written() {
    let printed = check_stable(SAXPY);
    assert_eq!(printed, SAXPY.trim_start());
}

/// Every syntactic form once: function kinds, argument kinds, all scalar
/// types and constant forms, composites, undef, registers, calls (forward
/// too), structured loops, switch with signed and unsigned selectors, raw
/// branches, phi with forward references, text payloads, metadata.
const ALL_FORMS: &str = r#"// a helper declared elsewhere
extern @host(%x: f32) -> f32

// calls @later before it is defined
kernel @k(%buf: buffer<vec<f32, 4>>, %bytes: byte_buffer, %tex: texture2d<f32>, %t3: texture3d<u32>, %arr: bindless_array, %acc: accel) block_size(8, 8, 1) !loc("k.cpp", 3, 1) !curve_basis(piecewise_linear, catmull_rom) {
// entry block
^entry: !loc("k.cpp", 4, 2)
  // a comment on an instruction
  %v = alloca : vec<f32, 3> !spill(phi)
  %c = alloca : struct<align 16>{vec<f32, 3>, u32, array<i8, 2>} !loc("k.cpp", 5, 7) !spill(cross_block)
  %m = alloca : mat<f32, 2>
  %sel = extract $thread_id, u32 0 : u32
  %s64 = cast.static %sel : i64
  store %v, vec<f32, 3> [1.0, -0.0, 0x7fc00001]
  store %c, struct<align 16>{vec<f32, 3>, u32, array<i8, 2>} [[0.5, 1e-7, 1e16], 4294967295, [-128, 127]]
  store %m, mat<f32, 2> [[1.0, 0.0], [0.0, 1.0]]
  %h = add f16 0x3c00, f16 0x3e00 : f16
  %e4 = add fp8e4m3 0x38, fp8e4m3 0x38 : fp8e4m3
  %e5 = add fp8e5m2 0x3c, fp8e5m2 0x7c : fp8e5m2
  %d = add f64 -0.0, f64 0x7ff8000000000001 : f64
  %big = add i64 -9223372036854775808, i64 9223372036854775807 : i64
  %ubig = add u64 18446744073709551615, u64 0 : u64
  %small = add i8 -5, i16 300 : i8
  %us = add u8 255, u16 65535 : u8
  %fl = add f32 inf, f32 -inf : f32
  %b = bit_and bool true, bool false : bool
  %un = add undef f32, f32 2.0 : f32
  %r = call @later, %un : f32
  %r2 = call @host, %r : f32
  print "value: %f\n\t\"quoted\" \u{1}", %r2
  assert "must hold", %b
  switch %sel, merge ^after, default ^def, case 0 ^c0, case 4294967295 ^c1
^c0:
  switch %s64, merge ^c0m, default ^c0m, case -1 ^c0m, case 9223372036854775807 ^c0m, case -9223372036854775808 ^c0m
^c0m:
  break target ^after
^c1:
  break target ^after
^def:
  br target ^after
^after:
  loop prepare ^p, body ^body, update ^u, merge ^exit
^p:
  %i = phi [u32 0, ^after], [%next, ^u] : u32
  %lt = lt %i, u32 10 : bool
  cond_br %lt, true ^body, false ^exit
^body:
  simple_loop body ^sb, merge ^sm
^sb:
  break target ^sm
^sm:
  continue target ^u
^u:
  %next = add %i, u32 1 : u32
  br target ^p
^exit:
  unreachable "never"
^orphan:
  unreachable
}

callable @later(%x: f32) -> f32 {
^entry:
  %0 = mul %x, %x : f32
  %1 = add %0, f32 1.0 : f32
  %x.1 = add %1, %0 : f32
  return %x.1
}

callable @refs(%p: ref f32, %0: u32) -> void {
^bb0:
  %1 = load %p : f32
  store %p, %1
  br_indexed %0, default ^bb1, case 1 ^bb1, case 2 ^bb1
^bb1:
  return
}
"#;

#[test]
fn all_forms_are_stable() {
    let printed = check_stable(ALL_FORMS);
    // Unnamed values are renumbered in order; comments, locations and spill
    // tags print back; case literals follow the selector's signedness.
    assert!(printed.contains("callable @refs(%p: ref f32, %0: u32) -> void {"), "{printed}");
    assert!(printed.contains("  %1 = load %p : f32\n"), "{printed}");
    assert!(printed.contains("case -9223372036854775808 ^c0m"), "{printed}");
    assert!(printed.contains("case 4294967295 ^c1"), "{printed}");
    assert!(printed.contains("// a comment on an instruction\n  %v = alloca : vec<f32, 3> !spill(phi)\n"));
    assert!(printed.contains("vec<f32, 3> [1.0, -0.0, 0x7fc00001]"), "{printed}");
    assert!(printed.contains("[[0.5, 1e-7, 1e16], 4294967295, [-128, 127]]"), "{printed}");
    assert!(printed.contains("print \"value: %f\\n\\t\\\"quoted\\\" \\u{1}\", %r2"), "{printed}");
    assert!(printed.contains("^orphan:\n  unreachable\n}"), "{printed}");
    assert_eq!(printed, ALL_FORMS, "the fixture is written in printed form");
}

#[test]
fn literals_normalize_to_printed_form() {
    // Decimal f16/fp8 print as hex bits; unnamed values renumber in order
    // of appearance, arguments first; `nan` prints as its bits.
    let src = "callable @f(%7: f16) -> f16 {\n^b:\n  %3 = add %7, f16 1.5 : f16\n  %9 = add fp8e4m3 1.0, fp8e5m2 -inf : fp8e4m3\n  %n = add f32 nan, f64 1 : f32\n  return %3\n}\n";
    let printed = check_stable(src);
    assert_eq!(
        printed,
        "callable @f(%0: f16) -> f16 {\n^b:\n  %1 = add %0, f16 0x3e00 : f16\n  %2 = add fp8e4m3 0x38, fp8e5m2 0xfc : fp8e4m3\n  %n = add f32 0x7fc00000, f64 1.0 : f32\n  return %1\n}\n"
    );
}

#[test]
fn print_function_matches_module_print() {
    let m = parse(ALL_FORMS);
    let module_text = print_module(&m);
    for f in &m.functions {
        let alone = xir::text::print_function(&m, f);
        assert!(module_text.contains(&alone), "{alone}");
        // A detached copy prints the same.
        assert_eq!(xir::text::print_function(&m, &f.clone()), alone);
    }
}

/// After mem2reg a function holds thousands of values of one name. Each
/// duplicate gets the first free `.k` suffix (a literal `v.3` is skipped),
/// and giving them costs linear time: the old printer probed `.1`, `.2`,
/// ... from 1 for every duplicate and took minutes here.
#[test]
fn many_duplicate_names_print_in_linear_time() {
    use xir::{Builder, FunctionKind, Metadata, Opcode, TypeTable};
    const N: usize = 100_000;
    let mut m = xir::Module::new();
    let fid = m.add_function(xir::Function::new("dups", FunctionKind::Callable, TypeTable::F32));
    let mut b = Builder::new(&mut m, fid);
    let arg = b.function().add_arg(TypeTable::F32, xir::ArgKind::Value, Metadata::named("v"));
    let entry = b.create_block();
    b.switch_to(entry);
    let mut acc = b.named("v.3", Opcode::Add, TypeTable::F32, &[arg, arg]);
    for _ in 0..N {
        acc = b.named("v", Opcode::Add, TypeTable::F32, &[acc, arg]);
    }
    b.ret(Some(acc));
    let start = std::time::Instant::now();
    let printed = print_module(&m);
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "printing took {took:?}");
    assert!(printed.starts_with("callable @dups(%v: f32) -> f32 {\n^bb0:\n  %v.3 = add %v, %v : f32\n  %v.1 = add %v.3, %v : f32\n  %v.2 = add %v.1, %v : f32\n  %v.4 = add %v.2, %v : f32\n"), "{}", &printed[..300]);
    let last = format!("  return %v.{}\n}}\n", N + 1);
    assert!(printed.ends_with(&last), "{}", &printed[printed.len() - 100..]);
    assert_eq!(print_module(&parse(&printed)), printed, "print(parse(print(m))) != print(m)");
}

/// Every kernel of the shared corpus parses and prints stably.
#[test]
fn corpus_kernels_are_stable() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut failures = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some("xir") {
            continue;
        }
        let src = std::fs::read_to_string(&path).expect("readable corpus file");
        match parse_module(&src, &path.display().to_string()) {
            Ok(m) => {
                let printed = print_module(&m);
                let again = print_module(&parse(&printed));
                if printed != again {
                    failures.push(format!("{}: print is not stable", path.display()));
                }
            }
            Err(d) => failures.push(xir::diag::render(&d)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

mod generated {

    /// Case count: `PROPTEST_CASES` when set (for long fuzzing runs), else `n`.
    fn cases(n: u32) -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(n)
    }

    use proptest::prelude::*;
    use xir::text::json::{from_json, to_json};
    use xir::text::{parse_module, print_module};
    use xir_testgen::modules::{generate, modules};

    /// The generator makes verifier-clean modules (so round trips are
    /// tested on IR that passes and analyses actually see).
    #[test]
    fn generated_modules_verify() {
        for seed in 0..64 {
            let m = generate(seed, 4, 12);
            let d = xir::verify::verify_module(&m);
            assert!(d.is_empty(), "seed {seed}:\n{}\n{}", xir::diag::render(&d), print_module(&m));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(256)))]

        #[test]
        fn text_round_trip(m in modules()) {
            let printed = print_module(&m);
            let back = parse_module(&printed, "gen.xir")
                .unwrap_or_else(|d| panic!("{}\n{printed}", xir::diag::render(&d)));
            prop_assert_eq!(print_module(&back), printed);
            // What was read is the same program: it still verifies.
            let d = xir::verify::verify_module(&back);
            prop_assert!(d.is_empty(), "{}", xir::diag::render(&d));
        }

        #[test]
        fn json_round_trip(m in modules()) {
            let j = to_json(&m);
            let back = from_json(&j, "gen.json").unwrap_or_else(|d| panic!("{}\n{j}", xir::diag::render(&d)));
            prop_assert_eq!(print_module(&back), print_module(&m));
            prop_assert_eq!(to_json(&back), j);
            let d = xir::verify::verify_module(&back);
            prop_assert!(d.is_empty(), "{}", xir::diag::render(&d));
        }

        #[test]
        fn text_to_json_to_text(m in modules()) {
            let printed = print_module(&m);
            let parsed = parse_module(&printed, "gen.xir").expect("printed modules parse");
            let back = from_json(&to_json(&parsed), "gen.json").expect("written JSON reads");
            prop_assert_eq!(print_module(&back), printed);
        }
    }
}

/// CURVE_BASIS metadata: a set, printed in its canonical order whatever
/// order it was written in, kept by JSON.
#[test]
fn curve_bases_print_as_a_sorted_set_and_survive_json() {
    let src = "kernel @k() block_size(1, 1, 1) !curve_basis(bezier, piecewise_linear, cubic_bspline) {\n^entry:\n  return\n}\n";
    let m = parse(src);
    use xir::ir::CurveBasis::*;
    assert_eq!(m.functions[0].md.curve_basis.iter().collect::<Vec<_>>(), vec![PiecewiseLinear, CubicBspline, Bezier]);
    let printed = xir::text::print_module(&m);
    assert!(
        printed.contains("block_size(1, 1, 1) !curve_basis(piecewise_linear, cubic_bspline, bezier) {"),
        "{printed}"
    );
    let json = xir::text::json::to_json(&m);
    let compact: String = json.split_whitespace().collect();
    assert!(compact.contains(r#""curve_basis":["piecewise_linear","cubic_bspline","bezier"]"#), "{json}");
    let back = xir::text::json::from_json(&json, "k.json").unwrap();
    assert_eq!(back.functions[0].md, m.functions[0].md);
    assert_eq!(xir::text::print_module(&back), printed);
    // A repeated basis in JSON is refused, as in the text, not merged.
    let twice = json.replacen(r#""cubic_bspline""#, r#""bezier""#, 1);
    assert_ne!(twice, json);
    let err = xir::text::json::from_json(&twice, "k.json").unwrap_err();
    assert!(format!("{err:?}").contains("curve basis `bezier` is given twice"), "{err:?}");
}

#[test]
fn kernel_flags_print_in_one_order_survive_json_and_are_given_once() {
    let src = "kernel @k() block_size(4, 1, 1) noalias whole_blocks {\n^entry:\n  return\n}\n";
    let m = parse(src);
    assert!(matches!(
        m.functions[0].kind,
        xir::FunctionKind::Kernel { block_size: [4, 1, 1], whole_blocks: true, noalias: true }
    ));
    let printed = check_stable(src);
    assert!(printed.contains("block_size(4, 1, 1) whole_blocks noalias {"), "{printed}");
    let json = xir::text::json::to_json(&m);
    let compact: String = json.split_whitespace().collect();
    assert!(compact.contains(r#""whole_blocks":true,"noalias":true"#), "{json}");
    let back = xir::text::json::from_json(&json, "k.json").unwrap();
    assert_eq!(back.functions[0].kind, m.functions[0].kind);
    // Without flags, JSON carries neither key (older files read the same).
    let plain = xir::text::json::to_json(&parse(&src.replace(" noalias whole_blocks", "")));
    assert!(!plain.contains("whole_blocks") && !plain.contains("noalias"), "{plain}");
    // A flag given twice is an error at the second one.
    let e = match parse_module(&src.replace("noalias whole_blocks", "noalias noalias"), "k.xir") {
        Ok(_) => panic!("a repeated flag parsed"),
        Err(d) => xir::diag::render(&d),
    };
    assert!(e.contains("kernel flag `noalias` is given twice"), "{e}");
    assert!(e.contains("k.xir:1:41"), "{e}");
}
