//! Malformed spec files are rejected with a message and the `file:line:col`
//! of the offending text. Each case edits one built-in file in memory and
//! states where the error must point (computed from the edit, so the tests
//! survive unrelated spec changes).

use xir_spec::{Spec, SpecError, SpecSources};

#[derive(Copy, Clone)]
enum File {
    Types,
    Opcodes,
    Dialects,
}

fn text(src: &mut SpecSources, f: File) -> &mut (String, String) {
    match f {
        File::Types => &mut src.types,
        File::Opcodes => &mut src.opcodes,
        File::Dialects => &mut src.dialects,
    }
}

/// Replace the first `from` by `to` in file `f`, load, and return the error
/// and the edited text.
fn load_edited(f: File, from: &str, to: &str) -> (SpecError, String) {
    let mut src = SpecSources::builtin();
    let t = text(&mut src, f);
    assert!(t.1.contains(from), "fixture text `{from}` not in {}", t.0);
    t.1 = t.1.replacen(from, to, 1);
    let edited = t.1.clone();
    match Spec::load(src) {
        Ok(_) => panic!("edit `{from}` -> `{to}` was accepted"),
        Err(e) => (e, edited),
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    (before.matches('\n').count() + 1, offset - before.rfind('\n').map_or(0, |i| i + 1) + 1)
}

/// Assert the error names `file`, contains `message`, and points at the
/// `nth` (0-based) occurrence of `needle` in the edited text.
#[track_caller]
fn expect_at(err: &SpecError, edited: &str, file: &str, message: &str, needle: &str, nth: usize) {
    assert!(err.message.contains(message), "message `{}` lacks `{message}`", err.message);
    assert_eq!(err.file, format!("ir-spec/spec/{file}"), "{err}");
    let offset = edited.match_indices(needle).nth(nth).expect("needle in edited text").0;
    assert_eq!((err.line, err.col), line_col(edited, offset), "{err}");
    assert!(err.to_string().starts_with(&format!("ir-spec/spec/{file}:{}:{}: error: ", err.line, err.col)));
}

#[test]
fn builtin_spec_loads() {
    Spec::load(SpecSources::builtin()).unwrap_or_else(|e| panic!("{e}"));
}

/// The compiled-in entries (`build.rs`, what `xir_spec::spec()` uses) are
/// the RON files' entries, and the traits and dialects the build resolved
/// are what the run-time check resolves from the files: the same spec,
/// field by field.
#[test]
fn compiled_in_spec_is_the_parsed_spec() {
    let parsed = Spec::load(SpecSources::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let compiled = Spec::builtin();
    assert_eq!(format!("{compiled:#?}"), format!("{parsed:#?}"));
    assert_eq!(format!("{:#?}", xir_spec::spec()), format!("{parsed:#?}"));
    let parsed = xir_spec::SpecData::load(SpecSources::builtin()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(format!("{:#?}", xir_spec::SpecData::builtin()), format!("{parsed:#?}"));
}

#[test]
fn unknown_trait() {
    let (e, t) = load_edited(File::Opcodes, "\"structured\"", "\"structurd\"");
    expect_at(&e, &t, "opcodes.ron", "unknown trait `structurd` on opcode `if`", "\"structurd\"", 0);
}

#[test]
fn duplicate_opcode() {
    let (e, t) = load_edited(File::Opcodes, "name: \"switch\",", "name: \"if\",");
    expect_at(&e, &t, "opcodes.ron", "duplicate opcode `if`", "\"if\"", 1);
}

#[test]
fn duplicate_dialect() {
    let (e, t) = load_edited(File::Dialects, "name: \"xir.raw.phi_free\"", "name: \"xir.raw\"");
    expect_at(&e, &t, "dialects.ron", "duplicate dialect `xir.raw`", "\"xir.raw\"", 1);
}

#[test]
fn duplicate_type_kind() {
    let (e, t) = load_edited(File::Types, "name: \"u8\"", "name: \"i8\"");
    expect_at(&e, &t, "types.ron", "duplicate type kind `i8`", "\"i8\"", 1);
}

#[test]
fn unknown_extends() {
    let (e, t) = load_edited(File::Dialects, "extends: Some(\"xir.raw\")", "extends: Some(\"xir.rwa\")");
    expect_at(&e, &t, "dialects.ron", "dialect `xir.raw.phi_free` extends unknown dialect `xir.rwa`", "\"xir.rwa\"", 0);
}

#[test]
fn extends_cycle() {
    let (e, t) =
        load_edited(File::Dialects, "name: \"xir\",", "name: \"xir\",\n        extends: Some(\"xir.structured\"),");
    expect_at(&e, &t, "dialects.ron", "`extends` cycle: xir -> xir.structured -> xir", "\"xir\"", 0);
}

#[test]
fn unknown_opcode_in_a_dialect() {
    let (e, t) = load_edited(File::Dialects, "remove_ops: [\"@raw_branch\"]", "remove_ops: [\"@raw_branch\", \"brr\"]");
    expect_at(&e, &t, "dialects.ron", "unknown opcode or group `brr` in dialect `xir.structured`", "\"brr\"", 0);
}

#[test]
fn unknown_trait_group_in_a_dialect() {
    let (e, t) = load_edited(File::Dialects, "\"@raw_branch\"", "\"@raw_branches\"");
    expect_at(&e, &t, "dialects.ron", "unknown opcode or group `@raw_branches`", "\"@raw_branches\"", 0);
}

#[test]
fn unknown_type_kind_in_a_dialect() {
    let (e, t) = load_edited(
        File::Dialects,
        "remove_ops: [\"@raw_branch\"],",
        "remove_ops: [\"@raw_branch\"],\n        remove_types: [\"f65\"],",
    );
    expect_at(&e, &t, "dialects.ron", "unknown type kind `f65` in dialect `xir.structured`", "\"f65\"", 0);
}

#[test]
fn dropping_an_invariant_the_parent_lacks() {
    let (e, t) = load_edited(
        File::Dialects,
        "remove_ops: [\"@structured\", \"@structured_jump\"],",
        "remove_ops: [\"@structured\", \"@structured_jump\"],\n        drop_invariants: [\"reducible_cfg\"],",
    );
    expect_at(
        &e,
        &t,
        "dialects.ron",
        "dialect `xir.raw` drops invariant `reducible_cfg`, which its parent does not have",
        "\"reducible_cfg\"",
        0,
    );
}

#[test]
fn re_adding_an_inherited_invariant() {
    let (e, t) = load_edited(
        File::Dialects,
        "remove_ops: [\"@structured\", \"@structured_jump\"],",
        "remove_ops: [\"@structured\", \"@structured_jump\"],\n        invariants: [\"verified\"],",
    );
    expect_at(
        &e,
        &t,
        "dialects.ron",
        "invariant `verified` is already inherited by dialect `xir.raw`",
        "\"verified\"",
        1,
    );
}

#[test]
fn ron_syntax_error() {
    // A missing comma between two fields of the `loop` entry: the parser
    // stops at the next field.
    let (e, t) = load_edited(File::Opcodes, "name: \"loop\",", "name: \"loop\"");
    assert_eq!(e.file, "ir-spec/spec/opcodes.ron");
    let next_field = t.find("name: \"loop\"").unwrap() + "name: \"loop\"".len();
    let after = next_field + t[next_field..].find("class").unwrap();
    assert_eq!((e.line, e.col), line_col(&t, after), "{e}");
    assert_eq!(e.message, "Expected comma");
}

#[test]
fn opcode_not_compiled_into_this_build() {
    let (e, t) = load_edited(File::Opcodes, "name: \"clock\",", "name: \"clock2\",");
    expect_at(&e, &t, "opcodes.ron", "opcode `clock2` is not compiled into this build", "\"clock2\"", 0);
}

/// A copy of the spec with an opcode this build lacks is refused by
/// [`Spec::load`] but loads as [`xir_spec::SpecData`], with the new opcode
/// in the dialects whose groups select it.
#[test]
fn spec_data_loads_an_opcode_this_build_lacks() {
    let mut src = SpecSources::builtin();
    let end = src.opcodes.1.rfind(']').expect("the opcode list ends");
    src.opcodes.1.insert_str(
        end,
        "    (name: \"test.new_op\", class: \"ArithmeticOp\", doc: \"x\", result: \"same_as_0\", traits: [\"pure\"]),\n",
    );
    assert!(Spec::load(src.clone()).is_err());
    let data = xir_spec::SpecData::load(src).unwrap_or_else(|e| panic!("{e}"));
    let structured = data.dialect("xir.structured").expect("xir.structured");
    assert!(data.dialect_ops(structured).any(|o| o.spec.name == "test.new_op"));
    let spirv = data.dialect("xir.spirv").expect("xir.spirv");
    assert!(data.dialect_ops(spirv).any(|o| o.spec.name == "test.new_op"));
    assert_eq!(data.ops.len(), xir_spec::Opcode::ALL.len() + 1);
}
