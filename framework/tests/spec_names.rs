//! The spec is closed in both directions: every rule name `ir-spec/spec/*.ron`
//! uses has a Rust implementation, every Rust rule is used by the spec (no
//! dead rule), every opcode trait is declared by some opcode and queried by
//! some Rust code, and every instruction of the reference instruction set
//! (`xir-pipeline.md`, "XIR Instruction Set") is declared.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use xir::verify::{check_spec_names, classes, constraints, results, types};
use xir_spec::{Spec, SpecSources, Trait};

fn spec() -> &'static Spec {
    xir_spec::spec()
}

#[test]
fn builtin_spec_names_are_implemented() {
    check_spec_names(spec()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn unknown_rule_names_are_located_in_the_ron_file() {
    let cases = [
        ("opcodes", "\"store_exact_type\"", "\"store_exactly\"", "constraint `store_exactly` of opcode `store`"),
        ("opcodes", "class: \"gep_base\"", "class: \"gep_root\"", "operand class `gep_root` of opcode `gep`"),
        (
            "opcodes",
            "result: \"elem_of_buffer_0\"",
            "result: \"elem_of\"",
            "result rule `elem_of` of opcode `buffer.read`",
        ),
        ("types", "\"align_power_of_two\"", "\"align_pow2\"", "type rule `align_pow2` of type kind `struct`"),
        ("dialects", "\"reducible_cfg\"", "\"reducible\"", "invariant `reducible` of dialect `xir.restructured`"),
    ];
    for (file, from, to, message) in cases {
        let mut src = SpecSources::builtin();
        let text = match file {
            "opcodes" => &mut src.opcodes,
            "types" => &mut src.types,
            _ => &mut src.dialects,
        };
        let offset = text.1.find(from).expect("fixture text present");
        text.1 = text.1.replacen(from, to, 1);
        // Where the replaced name starts (its opening quote).
        let quote = offset + to.find('"').unwrap();
        let line = text.1[..quote].matches('\n').count() + 1;
        let col = quote - text.1[..quote].rfind('\n').map_or(0, |i| i + 1) + 1;
        let spec = Spec::load(src.clone()).expect("structurally valid");
        let err = check_spec_names(&spec).expect_err("unknown name accepted");
        assert!(err.message.contains(message), "{err}");
        assert_eq!((err.file.as_str(), err.line, err.col), (text_name(file), line, col), "{err}");
    }
}

fn text_name(file: &str) -> &'static str {
    match file {
        "opcodes" => "ir-spec/spec/opcodes.ron",
        "types" => "ir-spec/spec/types.ron",
        _ => "ir-spec/spec/dialects.ron",
    }
}

/// Every rule name the spec uses, by kind.
fn used(kind: &str) -> BTreeSet<String> {
    let s = spec();
    let mut out = BTreeSet::new();
    for info in s.ops() {
        let o = &info.spec;
        match kind {
            "class" => out.extend(o.operands.iter().chain(o.variadic.as_ref()).map(|x| x.class.to_string())),
            "result" => {
                out.insert(o.result.to_string());
            }
            "constraint" => out.extend(o.constraints.iter().map(|c| c.to_string())),
            _ => {}
        }
    }
    match kind {
        "type" => out.extend(s.types.iter().flat_map(|t| t.rules.iter().map(|r| r.to_string()))),
        "invariant" => out.extend(s.dialects.iter().flat_map(|d| d.spec.invariants.iter().map(|i| i.to_string()))),
        _ => {}
    }
    out
}

#[test]
fn no_rule_is_dead() {
    let registered: [(&str, Vec<&str>); 5] = [
        ("class", classes::names().collect()),
        ("result", results::names().collect()),
        ("constraint", constraints::names().collect()),
        ("type", types::names().collect()),
        ("invariant", xir::dialect::invariants::names().collect()),
    ];
    for (kind, names) in registered {
        let used = used(kind);
        let dead: Vec<&&str> = names.iter().filter(|n| !used.contains(**n)).collect();
        assert!(dead.is_empty(), "{kind} rules implemented but never used by the spec: {dead:?}");
        let unique: BTreeSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{kind} rules registered twice");
    }
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && name != "target" && !name.starts_with('.') {
            rust_sources(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_trait_is_declared_and_queried() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for dir in ["framework", "passes", "backend-spirv", "pipelines", "tests", "ir-spec"] {
        rust_sources(&root.join(dir), &mut files);
    }
    // Only library and binary sources count (a query made only by a test is
    // not a use), and not the definition itself.
    let text: String = files
        .iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "src") && !p.ends_with("ir-spec/src/traits.rs"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let mut undeclared = Vec::new();
    let mut unqueried = Vec::new();
    for &(t, name) in Trait::ALL {
        if !spec().ops().iter().any(|o| o.has(t)) {
            undeclared.push(name);
        }
        // A trait is queried when Rust code names `Trait::X`, or when a
        // dialect (`dialects.ron`) or a pass contract (`eliminates`) selects
        // opcodes by the `@x` group, which resolves through the trait.
        let variant = format!("Trait::{t:?}");
        let named = text
            .match_indices(&variant)
            .any(|(i, _)| !text[i + variant.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'));
        let group = format!("\"@{name}\"");
        let queried = named || text.contains(&group) || spec().sources.dialects.1.contains(&group);
        if !queried {
            unqueried.push(variant);
        }
    }
    assert!(undeclared.is_empty(), "traits no opcode declares: {undeclared:?}");
    assert!(unqueried.is_empty(), "traits no Rust code queries: {unqueried:?}");
}

/// The reference instruction set (xir-pipeline.md, "XIR Instruction Set"),
/// each reference name with our spelling(s).
const REFERENCE: &[(&str, &[&str])] = &[
    ("IfInst", &["if"]),
    ("SwitchInst", &["switch"]),
    ("LoopInst", &["loop"]),
    ("SimpleLoopInst", &["simple_loop"]),
    ("BranchInst", &["br"]),
    ("ConditionalBranchInst", &["cond_br"]),
    ("IndexedBranchInst", &["br_indexed"]),
    ("ReturnInst", &["return"]),
    ("BreakInst", &["break"]),
    ("ContinueInst", &["continue"]),
    ("UnreachableInst", &["unreachable"]),
    ("RasterDiscardInst", &["raster_discard"]),
    ("AllocaInst LOCAL/SHARED", &["alloca", "alloca.shared"]),
    ("LoadInst", &["load"]),
    ("StoreInst", &["store"]),
    ("GEPInst", &["gep"]),
    ("PhiInst", &["phi"]),
    ("CallInst", &["call"]),
    ("CastInst STATIC_CAST/BITWISE_CAST", &["cast.static", "cast.bitwise"]),
    ("UNARY_MINUS, UNARY_BIT_NOT", &["neg", "bit_not"]),
    ("ADD SUB MUL DIV MOD", &["add", "sub", "mul", "div", "mod"]),
    ("BIT_AND BIT_OR BIT_XOR", &["bit_and", "bit_or", "bit_xor"]),
    ("SHIFT_LEFT/RIGHT ROTATE_LEFT/RIGHT", &["shl", "shr", "rotl", "rotr"]),
    ("comparisons", &["lt", "gt", "le", "ge", "eq", "ne"]),
    ("ALL ANY SELECT STEP", &["all", "any", "select", "step"]),
    ("ABS MIN MAX CLAMP SATURATE LERP SMOOTHSTEP", &["abs", "min", "max", "clamp", "saturate", "lerp", "smoothstep"]),
    (
        "trig",
        &["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"],
    ),
    ("exp/log", &["exp", "exp2", "exp10", "log", "log2", "log10", "pow", "sqrt", "rsqrt"]),
    ("FMA COPYSIGN CLZ CTZ POPCOUNT REVERSE", &["fma", "copysign", "clz", "ctz", "popcount", "reverse"]),
    (
        "ISINF ISNAN CEIL FLOOR FRACT TRUNC ROUND RINT",
        &["isinf", "isnan", "ceil", "floor", "fract", "trunc", "round", "rint"],
    ),
    ("DOT CROSS LENGTH LENGTH_SQUARED NORMALIZE", &["dot", "cross", "length", "length_squared", "normalize"]),
    ("FACEFORWARD REFLECT", &["faceforward", "reflect"]),
    ("REDUCE_SUM/PRODUCT/MIN/MAX", &["reduce_sum", "reduce_product", "reduce_min", "reduce_max"]),
    ("OUTER_PRODUCT", &["outer_product"]),
    ("MATRIX_COMP_*", &["matrix_comp_neg", "matrix_comp_add", "matrix_comp_sub", "matrix_comp_mul", "matrix_comp_div"]),
    (
        "MATRIX_LINALG_MUL DETERMINANT TRANSPOSE INVERSE",
        &["matrix_linalg_mul", "matrix_determinant", "matrix_transpose", "matrix_inverse"],
    ),
    ("AGGREGATE SHUFFLE EXTRACT INSERT", &["aggregate", "shuffle", "extract", "insert"]),
    (
        "AtomicOp",
        &[
            "atomic.exchange",
            "atomic.compare_exchange",
            "atomic.fetch_add",
            "atomic.fetch_sub",
            "atomic.fetch_and",
            "atomic.fetch_or",
            "atomic.fetch_xor",
            "atomic.fetch_min",
            "atomic.fetch_max",
        ],
    ),
    ("ResourceQueryOp buffer/texture/bindless, ray queries", &["buffer.size", "texture.size", "ray.trace_closest"]),
    ("ResourceReadOp, device-address loads", &["buffer.read", "texture.read", "device_address.read"]),
    ("ResourceWriteOp, indirect dispatch", &["buffer.write", "indirect.set_dispatch_count", "device_address.write"]),
    ("ThreadGroupOp warp/sync/SER/quad", &["warp.active_sum", "sync_block", "shader_execution_reorder", "quad.ddx"]),
    ("RayQueryLoopInst RayQueryDispatchInst", &["ray_query.loop", "ray_query.dispatch"]),
    (
        "RayQueryObjectRead/WriteInst RayQueryPipelineInst",
        &["ray_query.object_read", "ray_query.object_write", "ray_query.pipeline"],
    ),
    ("AutodiffScopeInst", &["autodiff.scope"]),
    (
        "AutodiffIntrinsicInst",
        &[
            "autodiff.requires_gradient",
            "autodiff.gradient",
            "autodiff.gradient_marker",
            "autodiff.accumulate_gradient",
            "autodiff.backward",
            "autodiff.detach",
        ],
    ),
    ("PrintInst ClockInst DebugBreakInst", &["print", "clock", "debug_break"]),
    ("AssertInst AssumeInst OutlineInst", &["assert", "assume", "outline"]),
];

#[test]
fn reference_instruction_set_is_declared() {
    let missing: Vec<String> = REFERENCE
        .iter()
        .flat_map(|(r, ours)| ours.iter().map(move |o| (r, o)))
        .filter(|(_, o)| xir_spec::Opcode::from_name(o).is_none())
        .map(|(r, o)| format!("{r} -> `{o}`"))
        .collect();
    assert!(missing.is_empty(), "reference instructions not declared: {missing:?}");
    // The reference classes listed are all present as spec classes.
    for class in ["ResourceQueryOp", "ResourceReadOp", "ResourceWriteOp", "ThreadGroupOp", "ArithmeticOp", "AtomicOp"] {
        assert!(spec().ops().iter().any(|o| o.spec.class == class), "no opcode of class {class}");
    }
}
