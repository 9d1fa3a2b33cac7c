//! The JSON interchange form: compaction, exact round trips, and malformed
//! documents — each rejected with a message naming the problem and either
//! serde_json's `line:col` or the JSON path of the bad id, never a panic.

use proptest::prelude::*;
use serde_json::{json, Value as J};
use xir::text::json::{from_json, to_json};
use xir::text::{parse_module, print_module};
use xir::{Opcode, TypeTable};

const SMALL: &str =
    "callable @f(%a: f32) -> f32 {\n^entry:\n  %x = add %a, f32 1.0 : f32\n  br target ^next\n^next:\n  return %x\n}\n";

fn small_doc() -> J {
    let m = parse_module(SMALL, "small.xir").expect("valid");
    serde_json::from_str(&to_json(&m)).expect("to_json writes JSON")
}

/// Apply `edit` to the small document and expect `from_json` to fail with a
/// single diagnostic containing `message` (path-located, no span).
fn check_path_error(edit: impl FnOnce(&mut J), message: &str) {
    let mut doc = small_doc();
    edit(&mut doc);
    let text = serde_json::to_string_pretty(&doc).expect("serializable");
    let diags = from_json(&text, "doc.json").expect_err("the edited document is invalid");
    assert!(diags.iter().any(|d| d.message.contains(message)), "want `{message}`, got:\n{}", xir::diag::render(&diags));
    assert!(diags.iter().all(|d| d.rule == "parse" && d.file.as_deref() == Some("doc.json")));
}

/// `from_json(src)` fails at `line:col` with `message`.
fn check_located(src: &str, line: u32, col: u32, message: &str) {
    let diags = from_json(src, "doc.json").expect_err("invalid document");
    let d = &diags[0];
    let span = d.span.expect("serde errors carry a position");
    assert_eq!((span.line, span.col), (line, col), "{d}");
    assert!(d.message.contains(message), "want `{message}`, got `{}`", d.message);
}

#[test]
fn compaction_drops_dead_code_and_renumbers() {
    let mut m = parse_module(SMALL, "small.xir").expect("valid");
    let f = &mut m.functions[0];
    // A removed instruction before the live ones and an unowned block.
    let entry = f.body().expect("body");
    let dead = f.create_inst(xir::InstData::new(Opcode::Alloca, TypeTable::F32));
    f.insert_inst(entry, 0, dead);
    f.remove_inst(dead);
    let gone = f.add_block();
    f.remove_block(gone);
    let j = to_json(&m);
    let doc: J = serde_json::from_str(&j).expect("JSON");
    let blocks = doc["functions"][0]["blocks"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 2, "only owned blocks are written");
    assert_eq!(blocks[0]["insts"].as_array().map(Vec::len), Some(2));
    // `return %x` refers to instruction 0: the ids were renumbered past the dead alloca.
    assert_eq!(blocks[1]["insts"][0]["operands"], json!([{ "Inst": 0 }]));
    assert_eq!(blocks[0]["insts"][1]["blocks"], json!([1]));
    let back = from_json(&j, "small.json").expect("reads back");
    assert_eq!(print_module(&back), print_module(&m));
    assert_eq!(to_json(&back), j);
    assert!(!j.contains("span"), "text positions are not written");
}

#[test]
fn dangling_references_are_reported_not_guessed() {
    let mut m = parse_module(SMALL, "small.xir").expect("valid");
    let f = &mut m.functions[0];
    let (_, add) = f.all_insts().next().expect("has the add");
    let ret = f.all_insts().last().expect("has the return").1;
    // Remove the add while the return still uses it: broken IR.
    f.remove_inst(add);
    let _ = ret;
    let j = to_json(&m);
    let diags = from_json(&j, "d.json").expect_err("dangling id");
    assert!(diags[0].message.contains("functions[0].blocks[1].insts[0].operands[0]: inst id 4294967295 out of range"));
}

#[test]
fn uses_are_rebuilt() {
    let m = parse_module(SMALL, "small.xir").expect("valid");
    let back = from_json(&to_json(&m), "small.json").expect("reads");
    let f = &back.functions[0];
    let (_, add) = f.all_insts().next().expect("add");
    assert_eq!(f.uses(xir::Value::Inst(add)).len(), 1);
    assert_eq!(f.uses(xir::Value::Arg(0)).len(), 1);
}

#[test]
fn syntax_errors_carry_line_and_column() {
    check_located("{\n  \"format\": \"xir-json-1\",\n  \"types\": [\n", 4, 0, "EOF while parsing");
    check_located("{\n  \"format\": \"xir-json-1\"\n  \"types\": []\n}", 3, 3, "expected `,` or `}`");
    // serde reads a struct from a sequence too; the first field is a string.
    check_located("[1, 2]", 1, 2, "invalid type: integer `1`, expected a string");
    check_located(
        "{\"format\": \"xir-json-1\", \"types\": [], \"consts\": [], \"functions\": [], \"extra\": 1}",
        1,
        76,
        "unknown field `extra`",
    );
    // Deep nesting is rejected where the schema expects a string, without recursing.
    check_located(&("[".repeat(100_000) + &"]".repeat(100_000)), 1, 1, "invalid type: sequence, expected a string");
}

#[test]
fn unknown_names_carry_line_and_column() {
    let mut doc = small_doc();
    doc["functions"][0]["blocks"][0]["insts"][0]["opcode"] = json!("frobnicate");
    let text = serde_json::to_string_pretty(&doc).expect("JSON");
    let line = text.lines().position(|l| l.contains("frobnicate")).expect("present") as u32 + 1;
    let col = text.lines().nth(line as usize - 1).map(|l| l.find("frobnicate").unwrap_or(0) + 11).unwrap_or(0) as u32;
    check_located(&text, line, col, "unknown opcode `frobnicate`");

    let mut doc = small_doc();
    doc["functions"][0]["blocks"][0]["insts"][0]["operands"][0] = json!({ "Reg": "lane" });
    let text = serde_json::to_string_pretty(&doc).expect("JSON");
    let diags = from_json(&text, "doc.json").expect_err("unknown register");
    assert!(diags[0].message.contains("unknown special register `lane`"), "{}", diags[0]);
    assert!(diags[0].span.is_some());
}

#[test]
fn bad_ids_name_their_json_path() {
    check_path_error(|d| d["format"] = json!("xir-json-0"), "format: expected `xir-json-1`, found `xir-json-0`");
    check_path_error(
        |d| d["types"].as_array_mut().expect("types").push(json!({ "Vector": { "elem": 99, "lanes": 2 } })),
        "types[7]: type id 99 out of range (8 types)",
    );
    check_path_error(
        |d| {
            let t = d["types"].as_array_mut().expect("types");
            t.push(json!({ "Vector": { "elem": 8, "lanes": 2 } }));
            t.push(json!({ "Array": { "elem": 7, "len": 2 } }));
        },
        "types[7]: refers to type 8 which does not come before it (cycle)",
    );
    check_path_error(
        |d| d["types"][2] = json!({ "Int": { "bits": 7, "signed": true } }),
        "types[2]: expected an integer width",
    );
    check_path_error(
        |d| d["types"].as_array_mut().expect("types").push(json!({ "Texture": { "dim": 5, "elem": 4 } })),
        "types[7]: expected a texture dimension of 2 or 3, found 5",
    );
    check_path_error(|d| d["consts"][0]["ty"] = json!(40), "consts[0].ty: type id 40 out of range");
    check_path_error(
        |d| d["consts"][0]["value"] = json!({ "Scalar": 4294967296u64 }),
        "consts[0].value: bits 0x100000000 do not fit 32 bits",
    );
    check_path_error(
        |d| d["consts"].as_array_mut().expect("consts").push(json!({ "ty": 5, "value": { "Composite": [0, 1, 9] } })),
        "consts[1].value.Composite[1]: const id 1 does not come before it (cycle)",
    );
    check_path_error(
        |d| d["consts"].as_array_mut().expect("consts").push(json!({ "ty": 5, "value": { "Composite": [0] } })),
        "consts[1].value: expected 3 members, found 1",
    );
    check_path_error(
        |d| d["consts"][0]["value"] = json!({ "Composite": [] }),
        "consts[0].value: a composite constant cannot have type",
    );
    check_path_error(|d| d["functions"][0]["ret"] = json!(1000), "functions[0].ret: type id 1000 out of range");
    check_path_error(
        |d| d["functions"][0]["args"][0]["ty"] = json!(1000),
        "functions[0].args[0].ty: type id 1000 out of range",
    );
    let inst = |d: &mut J| d["functions"][0]["blocks"][0]["insts"][0].clone();
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["operands"][0] = json!({ "Inst": 7 }),
        "functions[0].blocks[0].insts[0].operands[0]: inst id 7 out of range (3 instructions)",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["operands"][0] = json!({ "Arg": 3 }),
        "functions[0].blocks[0].insts[0].operands[0]: argument 3 out of range (1 arguments)",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["operands"][1] = json!({ "Const": 12 }),
        "functions[0].blocks[0].insts[0].operands[1]: const id 12 out of range (1 constants)",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["operands"][1] = json!({ "Undef": 77 }),
        "functions[0].blocks[0].insts[0].operands[1]: type id 77 out of range",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["operands"][1] = json!({ "Func": 2 }),
        "functions[0].blocks[0].insts[0].operands[1]: function id 2 out of range (1 functions)",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][1]["blocks"][0] = json!(5),
        "functions[0].blocks[0].insts[1].blocks[0]: block id 5 out of range (2 blocks)",
    );
    check_path_error(
        |d| {
            let mut i = inst(d);
            i["operands"].as_array_mut().expect("operands").pop();
            d["functions"][0]["blocks"][0]["insts"][0] = i;
        },
        "functions[0].blocks[0].insts[0]: expected 2 operands for `add`, found 1",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["payload"] = json!({ "Text": "hi" }),
        "functions[0].blocks[0].insts[0]: expected no text payload for `add`, found one",
    );
    check_path_error(
        |d| d["functions"][0]["blocks"][0]["insts"][0]["ty"] = json!(300),
        "functions[0].blocks[0].insts[0].ty: type id 300 out of range",
    );
}

#[test]
fn documents_with_reordered_tables_read_correctly() {
    // Duplicate and reordered types are remapped through interning.
    let mut doc = small_doc();
    let types = doc["types"].as_array_mut().expect("types");
    types.push(json!({ "Float": "F32" }));
    let f32_dup = types.len() - 1;
    doc["functions"][0]["args"][0]["ty"] = json!(f32_dup);
    let m = from_json(&doc.to_string(), "dup.json").expect("valid");
    assert_eq!(print_module(&m), SMALL);
}

/// Case count: `PROPTEST_CASES` when set (for long fuzzing runs), else `n`.
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn mutated_json_never_panics(
        m in xir_testgen::modules::modules(),
        edits in proptest::collection::vec((any::<usize>(), 0u8..8), 1..4),
    ) {
        let mut s = to_json(&m).into_bytes();
        for (at, what) in edits {
            let i = at % s.len().max(1);
            match what {
                0 => { s.remove(i.min(s.len() - 1)); }
                1 => s.insert(i, b'9'),
                2 => s.insert(i, b'"'),
                3 => s.insert(i, b'-'),
                4 => s.insert(i, b'['),
                5 => s.splice(i..i, b"4294967295".iter().copied()).for_each(drop),
                6 => s.truncate(i),
                _ => s.insert(i, b'0'),
            }
        }
        let text = String::from_utf8_lossy(&s);
        if let Ok(back) = from_json(&text, "mut.json") {
            // Whatever reads prints and round-trips.
            let printed = print_module(&back);
            let j = to_json(&back);
            let again = from_json(&j, "mut.json").expect("written JSON reads back");
            prop_assert_eq!(print_module(&again), printed);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = from_json(&String::from_utf8_lossy(&bytes), "fuzz.json");
    }
}
