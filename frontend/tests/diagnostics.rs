//! Bad shaders get one located diagnostic, never a panic: naga's own
//! errors (`wgsl` / `glsl`) and what XIR cannot express
//! (`frontend:unsupported`), each at the construct's `file:line:col`.

use proptest::prelude::*;
use xir_frontend::{compile, Language, Overrides, Source};

fn diag(path: &str, text: &str) -> String {
    let language = Language::from_path(path).expect("known extension");
    match compile(&Source { path, text, language }, &Overrides::new()) {
        Ok(_) => panic!("{path} compiled"),
        Err(d) => d.to_string(),
    }
}

const HEAD: &str = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n";

#[test]
fn refusals_name_the_construct_and_its_place() {
    let cases: &[(&str, String, &str)] = &[
        (
            "syntax.wgsl",
            "@compute @workgroup_size(1) fn main() { let x = ; }".into(),
            "syntax.wgsl:1:49: error: [wgsl] expected expression, found \";\"\n",
        ),
        (
            "types.wgsl",
            format!("{HEAD}@compute @workgroup_size(1) fn main() {{ out[0] = 1.5; }}"),
            "types.wgsl:2:41: error: [wgsl] ",
        ),
        (
            "vertex.wgsl",
            "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }".into(),
            "vertex.wgsl: error: [frontend:unsupported] not supported: the shader has no compute entry point",
        ),
        (
            "sampler.wgsl",
            format!("{HEAD}@group(0) @binding(1) var s: sampler;\n@compute @workgroup_size(1) fn main() {{ }}"),
            "sampler.wgsl:2:23: error: [frontend:unsupported] not supported: `s`: samplers (XIR samples only its bindless textures; `textureLoad` reads a texture without one)",
        ),
        (
            "mip.wgsl",
            format!("{HEAD}@group(0) @binding(1) var t: texture_2d<f32>;\n@compute @workgroup_size(1) fn main() {{ out[0] = u32(textureLoad(t, vec2<i32>(0), 1).x); }}"),
            "mip.wgsl:3:54: error: [frontend:unsupported] not supported: a mip level other than a constant 0 (an XIR texture has one level)",
        ),
        (
            "multisampled.wgsl",
            format!("{HEAD}@group(0) @binding(1) var t: texture_multisampled_2d<f32>;\n@compute @workgroup_size(1) fn main() {{ out[0] = u32(textureLoad(t, vec2<i32>(0), 0).x); }}"),
            "multisampled.wgsl:2:23: error: [frontend:unsupported] not supported: `t`: multisampled textures",
        ),
        (
            "array.wgsl",
            format!("{HEAD}@group(0) @binding(1) var t: texture_2d_array<f32>;\n@compute @workgroup_size(1) fn main() {{ out[0] = u32(textureLoad(t, vec2<i32>(0), 0, 0).x); }}"),
            "array.wgsl:2:23: error: [frontend:unsupported] not supported: `t`: texture arrays",
        ),
        (
            "nonsquare.wgsl",
            format!("enable f16;\n{HEAD}@compute @workgroup_size(1) fn main() {{ var m: mat2x3<f32>; let h = mat2x3<f16>(m); out[0] = u32(h[0].x); }}"),
            "nonsquare.wgsl:3:69: error: [frontend:unsupported] not supported: a conversion of a non-square matrix",
        ),
        (
            "format.wgsl",
            format!("{HEAD}@group(0) @binding(1) var t: texture_storage_2d<r32float, write>;\n@compute @workgroup_size(1) fn main() {{ textureStore(t, vec2<i32>(0), vec4<f32>(1.0)); }}"),
            "format.wgsl:2:23: error: [frontend:unsupported] not supported: `t`: texel format R32Float (only rgba32float, rgba32sint, rgba32uint)",
        ),
        (
            "unknown.comp",
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { memoryBarrierBuffer(); }".into(),
            "unknown.comp:3:15: error: [glsl] Unknown function 'memoryBarrierBuffer'",
        ),
        (
            "stray.comp",
            "#version 450\nlayout(local_size_x = 1) in;\n// a § in a comment is text\nvoid main() { int x\u{a0}= 1; }".into(),
            "stray.comp:4:20: error: [glsl] unexpected character '\\u{a0}' (U+00A0)",
        ),
        (
            // naga 30 panics evaluating it (the `glsl` fuzz target's find).
            "layout_index.comp",
            "#version 450\nlayout(local_size_x = 2[0]) in;\nvoid main() { }".into(),
            "layout_index.comp:2:24: error: [glsl] an index in a layout qualifier (naga's GLSL front end cannot evaluate one)",
        ),
        (
            "glsl_syntax.comp",
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { int x = ; }".into(),
            "glsl_syntax.comp:3:",
        ),
        (
            // A block barrier in its place would hang where only some
            // subgroups reach it.
            "subgroup_barrier.wgsl",
            format!("{HEAD}@compute @workgroup_size(64) fn main(@builtin(subgroup_invocation_id) l: u32) {{\n    if l < 8u {{ subgroupBarrier(); }}\n}}"),
            "subgroup_barrier.wgsl:3:17: error: [frontend:unsupported] not supported: `subgroupBarrier`: XIR has no subgroup barrier",
        ),
        (
            "override.wgsl",
            format!("{HEAD}override K: u32;\n@compute @workgroup_size(1) fn main() {{ out[0] = K; }}"),
            "override.wgsl: error: [wgsl] overrides: Missing value for pipeline-overridable constant with identifier string: 'K'",
        ),
    ];
    let mut bad = Vec::new();
    for (path, text, want) in cases {
        let got = diag(path, text) + "\n";
        if !got.starts_with(want) {
            bad.push(format!("{path}\n  want prefix: {want}\n  got:         {got}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// naga's notes carry what its message leaves out: its parser stops at
/// 200 nested rules with an "internal" error whose reason is only a note.
#[test]
fn nagas_notes_are_kept() {
    let mut e = "out[0]".to_string();
    for _ in 0..250 {
        e = format!("(out[0] + {e})");
    }
    let text = format!("{HEAD}@compute @workgroup_size(1) fn main() {{ out[0] = {e}; }}");
    let d = compile(&Source { path: "deep.wgsl", text: &text, language: Language::Wgsl }, &Overrides::new())
        .expect_err("too deep for naga");
    assert_eq!(d.message, "internal WGSL front end error");
    assert_eq!(d.notes, ["Parser recursion limit exceeded"]);
}

#[test]
fn overrides_take_their_values() {
    let text = format!("{HEAD}override K: u32;\noverride F: f32 = 1.5;\n@compute @workgroup_size(1) fn main() {{ out[0] = K + u32(F * 2.0); }}");
    let src = Source { path: "o.wgsl", text: &text, language: Language::Wgsl };
    let mut ov = Overrides::new();
    ov.insert("K".into(), 40.0);
    let m = compile(&src, &ov).expect("compiles with K set");
    let k = m.func_ids().next().expect("a kernel");
    let inputs: xir::interp::Inputs = serde_json::from_str(r#"{"args": {"out": [0]}}"#).expect("inputs");
    let out = xir::interp::run_kernel(&m, k, &inputs).expect("runs");
    assert_eq!(serde_json::to_string(&out).expect("json"), r#"{"buffers":{"out":[43]},"printed":[]}"#);
    ov.insert("NOPE".into(), 1.0);
    let e = compile(&src, &ov).expect_err("an unknown override is an error");
    assert!(e.to_string().contains("NOPE"), "{e}");
}

fn seeds() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("kernels") {
        let path = entry.expect("entry").path();
        let name = path.display().to_string();
        if Language::from_path(&name).is_some() {
            out.push((name, std::fs::read_to_string(&path).expect("read")));
        }
    }
    out.sort();
    out
}

/// Edits that keep most of a shader: delete a span, duplicate one, or put
/// a token from a small WGSL/GLSL vocabulary somewhere.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, &'static str),
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    ";",
    "[",
    "]",
    "<",
    ">",
    ",",
    "&",
    "*",
    "-",
    "0",
    "1u",
    "-1",
    "4294967295u",
    "1e39",
    "true",
    "let",
    "var",
    "loop",
    "break",
    "continue",
    "return",
    "if",
    "else",
    "switch",
    "default",
    "case",
    "for",
    "while",
    "fn",
    "ptr<function, u32>",
    "array<u32>",
    "atomic<u32>",
    "workgroupBarrier();",
    "@compute",
    "@workgroup_size(0)",
    "@builtin(position)",
    "vec3<f32>",
    "mat3x3<f32>",
    "bitcast<f32>",
    "override",
    "const",
    "struct",
    "discard;",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Duplicate(a, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Edit::Insert(a, t)),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    let bytes = text.as_bytes();
    let at = |a: usize| {
        let mut p = a % (bytes.len() + 1);
        while !text.is_char_boundary(p) {
            p -= 1;
        }
        p
    };
    match *e {
        Edit::Delete(a, n) => {
            let s = at(a);
            let t = at(s + n.min(bytes.len() - s));
            format!("{}{}", &text[..s], &text[t.max(s)..])
        }
        Edit::Duplicate(a, n) => {
            let s = at(a);
            let t = at(s + n.min(bytes.len() - s)).max(s);
            format!("{}{}{}", &text[..t], &text[s..t], &text[t..])
        }
        Edit::Insert(a, tok) => {
            let s = at(a);
            format!("{} {tok} {}", &text[..s], &text[s..])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Mutated shaders compile or give a located diagnostic; none panics.
    #[test]
    fn mutated_shaders_never_panic(seed in 0usize..64, edits in prop::collection::vec(edit(), 1..4)) {
        let all = seeds();
        let (path, text) = &all[seed % all.len()];
        let mut text = text.clone();
        for e in &edits {
            text = apply(&text, e);
        }
        let language = Language::from_path(path).expect("known");
        if let Err(d) = compile(&Source { path, text: &text, language }, &Overrides::new()) {
            prop_assert!(d.file.as_deref() == Some(path.as_str()), "{d}");
            prop_assert!(!d.to_string().contains("frontend:internal"), "the front end made invalid IR: {d}\n{text}");
        }
    }
}

/// The front end's recursion bound (`xir_frontend::depth`): nesting at the
/// inline depth compiles on a 1 MiB thread, nesting just under the limit
/// compiles from a test thread's 2 MiB stack (naga runs on the front end's
/// own), just over it is refused at the token that passes it, and naga's
/// own path (the oracle) refuses it the same way.
#[test]
fn nesting_at_the_depth_limit_compiles_and_one_over_is_refused() {
    use xir_frontend::depth::MAX_DEPTH;
    // `main`'s brace, `n` nested blocks, and the assignment's `=`.
    let blocks = |n: usize| {
        format!(
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {{ uint x = 1u; {}x = 2u;{} }}\n",
            "{".repeat(n),
            "}".repeat(n)
        )
    };
    // At the inline depth the front end runs on the caller's thread: naga
    // takes it with half of a 2 MiB test thread's stack to spare.
    let inline = blocks(xir_frontend::depth::INLINE_DEPTH - 2);
    let small = std::thread::Builder::new().stack_size(1 << 20);
    let compiled = small
        .spawn(move || {
            let src = Source { path: "inline.comp", text: &inline, language: Language::Glsl };
            compile(&src, &Overrides::new()).map(|_| ()).map_err(|d| d.to_string())
        })
        .unwrap()
        .join()
        .expect("no overflow on 1 MiB");
    compiled.unwrap_or_else(|d| panic!("{d}"));
    let src = blocks(MAX_DEPTH - 2);
    let ok = Source { path: "deep.comp", text: &src, language: Language::Glsl };
    compile(&ok, &Overrides::new()).unwrap_or_else(|d| panic!("{d}"));
    let over = blocks(MAX_DEPTH - 1);
    let col = "void main() { uint x = 1u; ".len() + MAX_DEPTH - 1 + 3;
    assert!(
        diag("deep.comp", &over).starts_with(&format!("deep.comp:3:{col}: error: [glsl] the shader nests too deeply")),
        "{}",
        diag("deep.comp", &over)
    );
    let naga = xir_frontend::oracle::naga_spirv(&over, Language::Glsl, "deep.comp").expect_err("refused");
    assert_eq!((naga.location, naga.stage), (Some((3, col as u32)), xir_frontend::oracle::Stage::Parse));
    assert!(naga.message.starts_with("the shader nests too deeply"), "{}", naga.message);
}

/// GLSL number literals naga's preprocessor reports without a place (or
/// takes though GLSL forbids them: an integer past 32 bits) are refused at
/// the literal, before naga runs.
#[test]
fn bad_glsl_literals_are_located() {
    let body = |stmt: &str| format!("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {{\n    {stmt}\n}}\n");
    for (stmt, col, message) in [
        ("uint x = 0x;", 14, "hexadecimal literal `0x` has no digits"),
        ("float x = 1.5e;", 15, "malformed floating-point literal `1.5e`"),
        ("uint x = 4294967296;", 14, "integer literal `4294967296` does not fit in 32 bits (GLSL 4.50, section 4.1.3)"),
        ("uint x = 1ul;", 14, "64-bit integer literals (`1ul`) are not supported"),
    ] {
        assert_eq!(diag("lit.comp", &body(stmt)), format!("lit.comp:4:{col}: error: [glsl] {message}"), "{stmt}");
    }
    // The largest 32-bit literals compile.
    let ok = body("uint x = 4294967295u + 0xFFFFFFFFu; int y = 037777777777;");
    compile(&Source { path: "ok.comp", text: &ok, language: Language::Glsl }, &Overrides::new())
        .unwrap_or_else(|d| panic!("{d}"));
}

/// A binding inside structs of one member stands for the innermost value
/// (`Lowering::peel`) up to `MAX_WRAPPERS` of them; one more is refused at
/// the binding.
#[test]
fn wrappers_at_the_limit_compile_and_one_over_is_refused() {
    use xir_frontend::lower::MAX_WRAPPERS;
    let nested = |n: u8| {
        let mut text = "struct W0 { v: u32 }\n".to_string();
        for k in 1..n {
            text += &format!("struct W{k} {{ w: W{} }}\n", k - 1);
        }
        let path = (1..n).map(|_| ".w").collect::<String>();
        format!(
            "{text}@group(0) @binding(0) var<storage, read_write> c: W{};\n\
             @compute @workgroup_size(1) fn main() {{ c{path}.v += 1u; }}",
            n - 1
        )
    };
    let text = nested(MAX_WRAPPERS);
    let m = compile(&Source { path: "w.wgsl", text: &text, language: Language::Wgsl }, &Overrides::new())
        .unwrap_or_else(|d| panic!("{d}"));
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let inputs = serde_json::from_str(r#"{"dispatch": [1, 1, 1], "args": {"c": [41]}}"#).unwrap();
    let out = xir::interp::run_kernel(&m, k, &inputs).expect("runs");
    assert_eq!(serde_json::to_string(&out.buffers).unwrap(), r#"{"c":[42]}"#);
    let over = nested(MAX_WRAPPERS + 1);
    let line = MAX_WRAPPERS as usize + 2;
    let want = format!(
        "w.wgsl:{line}:23: error: [frontend:unsupported] not supported: a binding inside more than {MAX_WRAPPERS} structs of one member"
    );
    assert!(diag("w.wgsl", &over).starts_with(&want), "{}", diag("w.wgsl", &over));
}

/// A variable WGSL zeroes is zeroed by one constant of its whole value: at
/// most `MAX_ZERO_SCALARS` scalars compile, one more is refused at the
/// variable.
#[test]
fn zeroing_at_the_limit_compiles_and_one_over_is_refused() {
    use xir_frontend::lower::MAX_ZERO_SCALARS;
    let shader = |n: u64| {
        format!(
            "var<workgroup> w: array<u32, {n}>;\n{HEAD}@compute @workgroup_size(1) fn main() {{ out[0] = w[out[1]]; }}"
        )
    };
    let text = shader(MAX_ZERO_SCALARS);
    compile(&Source { path: "w.wgsl", text: &text, language: Language::Wgsl }, &Overrides::new())
        .unwrap_or_else(|d| panic!("{d}"));
    let over = MAX_ZERO_SCALARS + 1;
    let want = format!(
        "w.wgsl:1:1: error: [frontend:unsupported] not supported: zeroing a value of {over} scalars (a variable is \
         zeroed by a constant of that many; at most {MAX_ZERO_SCALARS})"
    );
    assert!(diag("w.wgsl", &shader(over)).starts_with(&want), "{}", diag("w.wgsl", &shader(over)));
}
