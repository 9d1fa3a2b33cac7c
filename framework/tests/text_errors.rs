//! Malformed XIR text: every fixture in `tests/malformed/*.xir` starts with
//! `// expect: LINE:COL: MESSAGE` and must fail with that first diagnostic
//! (position exact, message as a substring). `XIR_BLESS=1` rewrites the
//! expectations from the current output. Fuzz properties check the parser
//! never panics, on random bytes and on mutations of valid modules.

use std::path::Path;

use proptest::prelude::*;
use xir::text::{parse_module, print_module};

fn fixtures() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/malformed exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("xir"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("readable fixture")))
        .collect();
    out.sort();
    out
}

#[test]
fn malformed_fixtures_report_located_errors() {
    let bless = std::env::var_os("XIR_BLESS").is_some();
    let all = fixtures();
    assert!(all.len() >= 40, "expected at least 40 malformed text fixtures, found {}", all.len());
    let mut failures = Vec::new();
    for (path, src) in all {
        let (first, body) = src.split_once('\n').unwrap_or((&src, ""));
        let expect = first.strip_prefix("// expect: ").unwrap_or_else(|| panic!("{path}: no `// expect:` line"));
        let (pos, message) = expect.split_once(": ").unwrap_or_else(|| panic!("{path}: expect is `L:C: message`"));
        let diags = match parse_module(&src, "fixture.xir") {
            Ok(_) => {
                failures.push(format!("{path}: parsed without error"));
                continue;
            }
            Err(d) => d,
        };
        let d = &diags[0];
        assert_eq!(d.rule, "parse");
        assert_eq!(d.file.as_deref(), Some("fixture.xir"));
        let span = d.span.unwrap_or_else(|| panic!("{path}: diagnostic without a position: {d}"));
        let actual = format!("{}:{}", span.line, span.col);
        if bless {
            std::fs::write(&path, format!("// expect: {actual}: {}\n{body}", d.message)).expect("writable fixture");
        } else if actual != pos || !d.message.contains(message) {
            failures.push(format!("{path}:\n  expected {pos}: {message}\n  found    {actual}: {}", d.message));
        }
        // The rendered form is `file:line:col: error: [parse] message`.
        assert!(d.to_string().starts_with(&format!("fixture.xir:{actual}: error: [parse] ")), "{d}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn several_errors_are_reported_in_one_run() {
    let src = "callable @f() -> void {\n^a:\n  br target ^x\n}\ncallable @g( -> void {\n^a:\n  return\n}\n\
               callable @h() -> void {\n^a:\n  %v = add %u, %w : f32\n  return\n}\n";
    let diags = parse_module(src, "many.xir").expect_err("three broken functions");
    let got: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        got,
        vec![
            "many.xir:3:13: error: [parse] undefined block `^x` (in @f)",
            "many.xir:5:14: error: [parse] expected an argument `%name: type`, found `->` (in @g)",
            "many.xir:11:12: error: [parse] undefined value `%u` (in @h)",
            "many.xir:11:16: error: [parse] undefined value `%w` (in @h)",
        ]
    );
}

#[test]
fn spans_point_at_functions_blocks_and_instructions() {
    let src = "// c\nkernel @k() block_size(1, 1, 1) {\n^entry:\n    %p = alloca : f32\n  return\n}\n";
    let m = parse_module(src, "s.xir").expect("valid");
    let f = &m.functions[0];
    assert_eq!(f.span.map(|s| (s.line, s.col)), Some((2, 1)));
    let b = f.body().expect("has a body");
    assert_eq!(f.block(b).span.map(|s| (s.line, s.col)), Some((3, 1)));
    let i = f.block(b).insts()[0];
    assert_eq!(f.inst_span(i).map(|s| (s.line, s.col)), Some((4, 5)));
    assert_eq!(f.md.comments, vec!["c".to_string()]);
}

/// Byte-level mutations of a valid module: delete, duplicate, or replace a
/// byte range with a troublesome snippet.
fn mutate(src: &str, ops: &[(u8, usize, usize)]) -> String {
    const SNIPPETS: &[&str] = &[
        "",
        "%",
        "^",
        "@",
        "$",
        "\"",
        "[",
        "]",
        "{",
        "}",
        "<",
        ">",
        ",",
        ":",
        "=",
        "->",
        "!loc(",
        "case",
        "-",
        "0x",
        "1e999",
        "f16",
        "vec<",
        "phi [",
        "\\u{",
        "//",
        "\n",
        "struct<align",
        "99999999999999999999999",
    ];
    let mut s = src.as_bytes().to_vec();
    for &(kind, a, b) in ops {
        if s.is_empty() {
            break;
        }
        let i = a % s.len();
        let j = (i + b % 16).min(s.len());
        match kind % 3 {
            0 => {
                s.drain(i..j);
            }
            1 => {
                let chunk = s[i..j].to_vec();
                s.splice(i..i, chunk);
            }
            _ => {
                s.splice(i..j, SNIPPETS[b % SNIPPETS.len()].bytes());
            }
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// Case count: `PROPTEST_CASES` when set (for long fuzzing runs), else `n`.
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let src = String::from_utf8_lossy(&bytes);
        let _ = parse_module(&src, "fuzz.xir");
    }

    #[test]
    fn random_token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(vec![
        "callable", "kernel", "extern", "@f", "(", ")", "{", "}", "^a", ":", "%x", "=", "add", "phi", "[", "]",
        ",", "f32", "u8", "1.0", "-1", "0x7", "->", "void", "block_size", "switch", "case", "merge", "default",
        "true", "false", "if", "br", "target", "return", "vec", "<", ">", "3", "undef", "\n", "$thread_id",
        "!loc", "\"s\"", "!spill", "struct", "align", "call", "@g",
    ]), 0..80)) {
        let src = words.join(" ");
        if let Ok(m) = parse_module(&src, "soup.xir") {
            let printed = print_module(&m);
            let again = parse_module(&printed, "soup.xir").expect("printed text parses");
            prop_assert_eq!(print_module(&again), printed);
        }
    }

    #[test]
    fn mutated_modules_never_panic(
        m in xir_testgen::modules::modules(),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..4),
    ) {
        let src = mutate(&print_module(&m), &ops);
        if let Ok(m2) = parse_module(&src, "mut.xir") {
            // Whatever parses prints stably.
            let printed = print_module(&m2);
            let again = parse_module(&printed, "mut.xir").expect("printed text parses");
            prop_assert_eq!(print_module(&again), printed);
        }
    }
}

/// Corrupt an in-memory module: dangling operand, block and type ids,
/// layouts naming missing blocks, wrong payloads. `(what, which, value)`.
fn corrupt(m: &mut xir::Module, edits: &[(u8, usize, u32)]) {
    use xir::{Block, Const, FuncId, Inst, Payload, TypeId, Value};
    for &(what, which, value) in edits {
        let nf = m.functions.len();
        let f = &mut m.functions[which % nf];
        let live: Vec<Inst> =
            f.blocks().iter().filter(|b| f.block_exists(**b)).flat_map(|&b| f.block(b).insts().to_vec()).collect();
        let Some(&i) = live.get(which % live.len().max(1)) else { continue };
        // Corrupted through the core's API: a whole replacement keeps the
        // use lists as exact as dangling ids allow.
        let mut d = f.inst_data(i);
        let mut replace = true;
        match what % 9 {
            0 if !d.operands.is_empty() => d.operands[0] = Value::Inst(Inst(value)),
            1 if !d.operands.is_empty() => d.operands[0] = Value::Const(Const(value)),
            2 if !d.operands.is_empty() => d.operands[0] = Value::Undef(TypeId(value)),
            3 if !d.operands.is_empty() => d.operands[0] = Value::Func(FuncId(value)),
            4 if !d.operands.is_empty() => d.operands[0] = Value::Arg(value),
            5 if !d.blocks.is_empty() => d.blocks[0] = Block(value),
            6 => d.ty = TypeId(value),
            7 => {
                let p = if value % 2 == 0 { Payload::Cases(vec![1, 2, 3]) } else { Payload::Text("t".into()) };
                f.set_payload(i, p);
                replace = false;
            }
            _ => {
                let mut layout = f.blocks().to_vec();
                layout.push(Block(value));
                f.set_layout(layout);
                replace = false;
            }
        }
        if replace {
            f.replace_inst(i, d);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// The printer and the JSON writer are total: corrupt IR prints (with
    /// `!` placeholders) and whatever JSON it writes reads back or is
    /// rejected, never a panic.
    #[test]
    fn corrupt_ir_prints_without_panicking(
        m in xir_testgen::modules::modules(),
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), prop_oneof![0u32..8, Just(u32::MAX), 1000u32..2000]), 1..5),
    ) {
        let mut m = m;
        corrupt(&mut m, &edits);
        let printed = print_module(&m);
        let _ = parse_module(&printed, "corrupt.xir");
        let j = xir::text::json::to_json(&m);
        let _ = xir::text::json::from_json(&j, "corrupt.json");
    }
}
