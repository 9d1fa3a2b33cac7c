//! Each capability of `xir-lsp` over JSON-RPC: the server runs on one end
//! of lsp-server's in-memory connection, the test is the client. Exact
//! answers on the saxpy kernel and shipped pipelines: diagnostics with
//! their rule codes and ranges, the "did you mean" code actions, hovers,
//! definitions and references, symbols, semantic tokens, formatting, the
//! save-time backend check, the commands, UTF-16 and UTF-8 positions, and
//! graceful answers to out-of-range and malformed requests.

mod common;

use common::{pos, workspace, Client};
use serde_json::{json, Value};

const SAXPY: &str = include_str!("../../tests/corpus/saxpy.xir");
const URI: &str = "file:///tmp/xir-lsp-test/saxpy.xir";

fn td(uri: &str) -> Value {
    json!({ "uri": uri })
}

fn at(uri: &str, p: Value) -> Value {
    json!({ "textDocument": td(uri), "position": p })
}

fn hover_text(c: &mut Client, uri: &str, p: Value) -> String {
    let h = c.request("textDocument/hover", at(uri, p));
    h["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {h}")).to_string()
}

#[test]
fn a_clean_kernel_has_no_diagnostics_and_hovers_types_and_opcodes() {
    let mut c = Client::start(&[]);
    assert_eq!(c.open(URI, SAXPY), Vec::<Value>::new());
    // A use of %ax: its type and the instruction defining it.
    let h = hover_text(&mut c, URI, pos(SAXPY, "%ax, %yi", 1));
    assert_eq!(h, "`%ax: f32`\n\ndefined by\n```xir\n%ax = mul %a, %xi : f32\n```");
    let h = hover_text(&mut c, URI, pos(SAXPY, "%a, %xi", 0));
    assert_eq!(h, "`%a: f32`\n\nargument 0 of `@saxpy`");
    let h = hover_text(&mut c, URI, pos(SAXPY, "buffer.read", 3));
    assert!(h.starts_with("**`buffer.read`** ("), "{h}");
    assert!(h.contains("- result: `"), "{h}");
    let h = hover_text(&mut c, URI, pos(SAXPY, "$dispatch_id", 2));
    assert!(h.starts_with("`$dispatch_id: vec<u32, 3>`"), "{h}");
    let h = hover_text(&mut c, URI, pos(SAXPY, "^done\n^body", 1));
    assert_eq!(h, "block `^done` of `@saxpy`, 3 use(s)");
    // Nothing to say on punctuation; nothing past the end.
    assert_eq!(c.request("textDocument/hover", at(URI, pos(SAXPY, " = extract", 1))), Value::Null);
    assert_eq!(c.request("textDocument/hover", at(URI, json!({"line": 9999, "character": 9999}))), Value::Null);
    c.shutdown();
}

#[test]
fn definitions_and_references_of_values_blocks_and_functions() {
    let mut c = Client::start(&[]);
    c.open(URI, SAXPY);
    let d = c.request("textDocument/definition", at(URI, pos(SAXPY, "^done\n^body", 2)));
    let def_line = SAXPY.lines().position(|l| l == "^done:").unwrap();
    assert_eq!(
        d["range"],
        json!({"start": {"line": def_line, "character": 0}, "end": {"line": def_line, "character": 5}})
    );
    assert_eq!(d["uri"], URI);
    let refs = c.request(
        "textDocument/references",
        json!({ "textDocument": td(URI), "position": pos(SAXPY, "%i, %n", 1), "context": {"includeDeclaration": true} }),
    );
    let lines: Vec<u64> =
        refs.as_array().unwrap().iter().map(|r| r["range"]["start"]["line"].as_u64().unwrap()).collect();
    let expect: Vec<u64> = SAXPY
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("%i ") || l.contains("%i,"))
        .map(|(k, _)| k as u64)
        .collect();
    assert_eq!(lines, expect);
    let refs = c.request(
        "textDocument/references",
        json!({ "textDocument": td(URI), "position": pos(SAXPY, "%i, %n", 1), "context": {"includeDeclaration": false} }),
    );
    assert_eq!(refs.as_array().unwrap().len(), expect.len() - 1);
    // The function's name at its definition is its own definition.
    let d = c.request("textDocument/definition", at(URI, pos(SAXPY, "@saxpy", 2)));
    assert_eq!(d["range"]["start"], pos(SAXPY, "@saxpy", 0));
    c.shutdown();
}

#[test]
fn a_typo_in_an_opcode_is_located_and_fixed_by_a_code_action() {
    let mut c = Client::start(&[]);
    let text = SAXPY.replace("%r = add %ax", "%r = ad %ax");
    let diags = c.open(URI, &text);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["code"], "parse");
    assert_eq!(d["source"], "xir");
    assert_eq!(d["severity"], 1);
    assert_eq!(d["message"], "unknown opcode `ad`");
    assert_eq!(d["range"]["start"], pos(&text, "ad %ax", 0));
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td(URI), "range": d["range"], "context": {"diagnostics": [d]} }),
    );
    let a = &actions.as_array().unwrap()[0];
    assert_eq!(a["title"], "did you mean `add`?");
    assert_eq!(a["kind"], "quickfix");
    let edit = &a["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "add");
    assert_eq!(edit["range"]["start"], pos(&text, "ad %ax", 0));
    assert_eq!(edit["range"]["end"], pos(&text, "ad %ax", 2));
    // An undefined value: the nearest value of the function.
    let text = SAXPY.replace("%r = add %ax", "%r = add %xii");
    let diags = c.open("file:///tmp/xir-lsp-test/v.xir", &text);
    assert_eq!(diags[0]["message"], "undefined value `%xii`");
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td("file:///tmp/xir-lsp-test/v.xir"), "range": diags[0]["range"], "context": {"diagnostics": []} }),
    );
    assert_eq!(actions[0]["title"], "did you mean `%xi`?");
    // A range with no diagnostic has no action.
    let none = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td(URI), "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "context": {"diagnostics": []} }),
    );
    assert_eq!(none, json!([]));
    c.shutdown();
}

#[test]
fn verifier_and_dialect_diagnostics_carry_their_rule() {
    let mut c = Client::start(&[]);
    // A type mismatch: the verifier's rule, at the instruction.
    let text = SAXPY.replace("%r = add %ax, %yi : f32", "%r = add %ax, %i : f32");
    let diags = c.open(URI, &text);
    assert!(!diags.is_empty());
    assert!(diags.iter().all(|d| d["code"] != "parse"), "{diags:?}");
    assert_eq!(diags[0]["range"]["start"]["line"], pos(&text, "%r = add", 0)["line"]);
    // The header names a dialect the structured `if` is not allowed in.
    let text = format!("// dialect: xir.raw\n{SAXPY}");
    let diags = c.open("file:///tmp/xir-lsp-test/d.xir", &text);
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["dialect:xir.raw:opcode"]);
    assert_eq!(diags[0]["range"]["start"]["line"], pos(&text, "if %ok", 0)["line"]);
    // An unknown dialect name is fixed by its nearest.
    let text = format!("// dialect: xir.rw\n{SAXPY}");
    let diags = c.open("file:///tmp/xir-lsp-test/e.xir", &text);
    assert_eq!(diags[0]["message"], "unknown dialect `xir.rw` in the header");
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td("file:///tmp/xir-lsp-test/e.xir"), "range": diags[0]["range"], "context": {"diagnostics": []} }),
    );
    assert_eq!(actions[0]["title"], "did you mean `xir.raw`?");
    assert_eq!(
        actions[0]["edit"]["changes"]["file:///tmp/xir-lsp-test/e.xir"][0]["range"]["start"],
        json!({"line": 0, "character": 12})
    );
    c.shutdown();
}

#[test]
fn saving_runs_the_spirv_handoff_of_each_kernel() {
    let mut c = Client::start(&[]);
    assert_eq!(c.open(URI, SAXPY), Vec::<Value>::new());
    c.notify("textDocument/didSave", json!({ "textDocument": td(URI) }));
    assert_eq!(c.diagnostics(URI), Vec::<Value>::new());
    // `raster_discard` verifies in a kernel but the backend refuses it.
    let text = SAXPY.replace("^done:\n  return", "^done:\n  raster_discard");
    let uri = "file:///tmp/xir-lsp-test/discard.xir";
    assert_eq!(c.open(uri, &text), Vec::<Value>::new());
    c.notify("textDocument/didSave", json!({ "textDocument": td(uri) }));
    let diags = c.diagnostics(uri);
    assert!(!diags.is_empty());
    assert!(diags.iter().any(|d| d["code"].as_str().unwrap().starts_with("spirv-handoff")), "{diags:?}");
    // An edit clears what the save found until the next save.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text.clone()}] }),
    );
    assert_eq!(c.diagnostics(uri), Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn symbols_tokens_and_formatting() {
    let mut c = Client::start(&[]);
    c.open(URI, SAXPY);
    let s = c.request("textDocument/documentSymbol", json!({ "textDocument": td(URI) }));
    assert_eq!(s[0]["name"], "@saxpy");
    assert_eq!(s[0]["detail"], "kernel");
    let blocks: Vec<&str> = s[0]["children"].as_array().unwrap().iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(blocks, ["^entry", "^body", "^done"]);
    let t = c.request("textDocument/semanticTokens/full", json!({ "textDocument": td(URI) }));
    let data: Vec<u64> = t["data"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(data.len() % 5, 0);
    // First the comment (type 9), then `kernel` (keyword, 0), `@saxpy`
    // (function, 1, a declaration), `%a` (parameter, 3, a declaration).
    assert_eq!(&data[..5], &[0, 0, SAXPY.lines().next().unwrap().len() as u64, 9, 0]);
    assert_eq!(&data[5..20], &[1, 0, 6, 0, 0, 0, 7, 6, 1, 1, 0, 7, 2, 3, 1]);
    // The corpus file is formatted already; a re-indented copy is not.
    assert_eq!(
        c.request(
            "textDocument/formatting",
            json!({ "textDocument": td(URI), "options": {"tabSize": 2, "insertSpaces": true} })
        ),
        json!([])
    );
    let messy = SAXPY.replace("  %n = buffer.size %x : u32", "      %n   =   buffer.size   %x   :   u32");
    let u2 = "file:///tmp/xir-lsp-test/messy.xir";
    c.open(u2, &messy);
    let e = c.request(
        "textDocument/formatting",
        json!({ "textDocument": td(u2), "options": {"tabSize": 2, "insertSpaces": true} }),
    );
    assert_eq!(e[0]["newText"], SAXPY);
    // A comment the printer would drop: refused, saying where.
    let trailing = format!("{SAXPY}// the end\n");
    let u3 = "file:///tmp/xir-lsp-test/trailing.xir";
    c.open(u3, &trailing);
    let e = c.request(
        "textDocument/formatting",
        json!({ "textDocument": td(u3), "options": {"tabSize": 2, "insertSpaces": true} }),
    );
    let line = trailing.lines().count();
    assert_eq!(e["error"]["message"], format!("not formatted: the printer would drop the comment on line {line}"));
    c.shutdown();
}

#[test]
fn commands_show_xir_after_a_step_and_the_spirv_disassembly() {
    let mut c = Client::start(&[]);
    c.open(URI, SAXPY);
    let run = |c: &mut Client, cmd: &str, args: Value| {
        c.request("workspace/executeCommand", json!({ "command": cmd, "arguments": [args] }))
    };
    let r = run(&mut c, "xir.showXirAfter", json!({ "uri": URI, "after": 0 }));
    assert_eq!(r["step"], "the input");
    let m = xir::text::parse_module(SAXPY, "saxpy.xir").unwrap();
    assert_eq!(r["text"], xir::text::print_module(&m));
    let r = run(&mut c, "xir.showXirAfter", json!({ "uri": URI, "after": "destructure_cfg", "kernel": "saxpy" }));
    assert_eq!(r["step"], "after the first `destructure_cfg`");
    let text = r["text"].as_str().unwrap();
    assert!(text.starts_with("// y = a * x + y") || text.starts_with("kernel @saxpy"), "{text}");
    assert!(text.contains("cond_br %ok"), "{text}");
    assert!(!text.contains(" if %ok"), "{text}");
    let r = run(&mut c, "xir.showXirAfter", json!({ "uri": URI, "after": 1 }));
    assert_eq!(
        r["step"],
        "bisect-limit 1: stopped after execution #1, `lower_ray_query_loop` at pipelines/pre-autodiff.ron:22:9"
    );
    let r = run(&mut c, "xir.spirvDisassembly", json!({ "uri": URI }));
    assert_eq!(r["kernel"], "saxpy");
    assert!(r["text"].as_str().unwrap().contains("OpEntryPoint GLCompute"), "{r}");
    let r = run(&mut c, "xir.showXirAfter", json!({ "uri": URI, "after": "no_such_pass" }));
    assert_eq!(r["error"]["message"], "pass `no_such_pass` did not run in `spirv`");
    let r = run(&mut c, "xir.spirvDisassembly", json!({ "uri": "file:///nowhere.xir" }));
    assert_eq!(r["error"]["message"], "`file:///nowhere.xir` is not open");
    c.shutdown();
}

#[test]
fn pipelines_hover_contracts_and_flow_and_fix_unknown_passes() {
    let mut c = Client::start(&[]);
    let root = workspace();
    let path = root.join("pipelines/spirv-legalize.ron").canonicalize().unwrap();
    let uri = format!("file://{}", path.display());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(c.open(&uri, &text), Vec::<Value>::new());
    let h = hover_text(&mut c, &uri, pos(&text, "\"mem2reg\"", 2));
    assert!(h.starts_with("pass **`mem2reg`**: "), "{h}");
    assert!(h.contains("\n- consumes: `"), "{h}");
    assert!(h.contains("\n- preserves: "), "{h}");
    assert!(h.ends_with("\n\n`xir.restructured` → `xir.restructured.ssa`"), "{h}");
    let h = hover_text(&mut c, &uri, pos(&text, "Hook(\"callable", 7));
    assert!(h.starts_with("hook `callable_specialization`: "), "{h}");
    assert!(h.contains("bound to `callable_specialization`"), "{h}");
    let h = hover_text(&mut c, &uri, pos(&text, "\"xir.structured\"", 3));
    assert!(h.starts_with("dialect `xir.structured`\n\n"), "{h}");
    // A pass step leads to the file declaring the pass.
    let d = c.request("textDocument/definition", at(&uri, pos(&text, "\"mem2reg\"", 2)));
    let target = d["uri"].as_str().unwrap();
    assert!(target.ends_with("/mem2reg.rs"), "{target}");
    let src = std::fs::read_to_string(xir_lsp::document::uri_to_path(&target.parse().unwrap()).unwrap()).unwrap();
    assert!(src.contains("name: \"mem2reg\""));
    // An include leads to the included file.
    let spirv = root.join("pipelines/spirv.ron").canonicalize().unwrap();
    let suri = format!("file://{}", spirv.display());
    let stext = std::fs::read_to_string(&spirv).unwrap();
    c.open(&suri, &stext);
    let d = c.request("textDocument/definition", at(&suri, pos(&stext, "spirv-legalize\")", 1)));
    assert!(d["uri"].as_str().unwrap().ends_with("/pipelines/spirv-legalize.ron"), "{d}");
    let syms = c.request("textDocument/documentSymbol", json!({ "textDocument": td(&suri) }));
    assert_eq!(syms[0]["name"], "Include(spirv-legalize)");
    assert_eq!(syms[0]["detail"], "xir.structured -> xir.restructured.audited");
    assert_eq!(syms[1]["detail"], "xir.restructured.audited -> xir.spirv");
    // An unknown pass: located, with the nearest name as a code action.
    let bad = text.replace("Pass(\"mem2reg\")", "Pass(\"mem2rag\")");
    let buri = "file:///tmp/xir-lsp-test/bad.ron";
    let diags = c.open(buri, &bad);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "pipeline");
    assert_eq!(diags[0]["range"]["start"], pos(&bad, "\"mem2rag\"", 0));
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td(buri), "range": diags[0]["range"], "context": {"diagnostics": []} }),
    );
    assert_eq!(actions[0]["title"], "did you mean `mem2reg`?");
    assert_eq!(actions[0]["edit"]["changes"][buri][0]["range"]["start"], pos(&bad, "mem2rag", 0));
    c.shutdown();
}

#[test]
fn positions_are_utf16_by_default_and_utf8_when_offered() {
    // `é` is 2 bytes and 1 UTF-16 unit, `𝄞` 4 bytes and 2 units.
    let text = "kernel @\"é𝄞\"(%a: f3) block_size(1, 1, 1) {\n^e:\n  return\n}\n";
    let mut c = Client::start(&[]);
    let diags = c.open(URI, text);
    assert_eq!(diags[0]["range"]["start"], json!({"line": 0, "character": 18}));
    let h = hover_text(&mut c, URI, json!({"line": 0, "character": 14}));
    assert_eq!(h, "`%a`\n\nargument 0 of `@\"é𝄞\"`");
    c.shutdown();
    let mut c = Client::start(&["utf-8", "utf-16"]);
    let diags = c.open(URI, text);
    assert_eq!(diags[0]["range"]["start"], json!({"line": 0, "character": text.find("f3").unwrap()}));
    c.shutdown();
}

#[test]
fn out_of_range_and_malformed_requests_answer_gracefully() {
    let mut c = Client::start(&[]);
    c.open(URI, SAXPY);
    let far = json!({"line": u32::MAX, "character": u32::MAX});
    for m in ["textDocument/hover", "textDocument/definition"] {
        assert_eq!(c.request(m, at(URI, far.clone())), Value::Null, "{m}");
    }
    let r = c.request(
        "textDocument/references",
        json!({ "textDocument": td(URI), "position": far, "context": {"includeDeclaration": true} }),
    );
    assert_eq!(r, json!([]));
    let r = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": td(URI), "range": {"start": {"line": 90, "character": 3}, "end": {"line": 1, "character": 0}}, "context": {"diagnostics": []} }),
    );
    assert_eq!(r, json!([]));
    assert_eq!(
        c.request("textDocument/hover", at("file:///not/open.xir", json!({"line": 0, "character": 0}))),
        Value::Null
    );
    assert_eq!(c.request("textDocument/hover", json!({"nonsense": 1}))["error"]["code"], -32602);
    assert_eq!(c.request("textDocument/rename", json!({}))["error"]["code"], -32601);
    // An incremental change past the end is clamped, and the server goes on.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"range": {"start": {"line": 500, "character": 0}, "end": {"line": 400, "character": 9}}, "text": "// tail\n"}] }),
    );
    assert_eq!(c.diagnostics(URI), Vec::<Value>::new());
    assert!(c.request("textDocument/hover", at(URI, pos(SAXPY, "%ax, %yi", 1))).is_object());
    c.shutdown();
}

#[test]
fn a_repeated_shutdown_is_answered_and_other_requests_refused_until_exit() {
    let mut c = Client::start(&[]);
    c.open(URI, SAXPY);
    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    let r = c.request("textDocument/hover", at(URI, pos(SAXPY, "%ax, %yi", 1)));
    assert_eq!(r["error"]["code"], -32600);
    // `Client::shutdown` sends a second `shutdown`, then `exit`, and checks
    // that the server ended cleanly.
    c.shutdown();
}

const SAXPY_WGSL: &str = include_str!("../../tests/wgsl/saxpy.wgsl");
const WGSL_URI: &str = "file:///tmp/xir-lsp-test/saxpy.wgsl";

#[test]
fn wgsl_documents_get_front_end_diagnostics_the_save_check_and_the_commands() {
    let mut c = Client::start(&[]);
    // An undefined name: naga's error, located in the shader, with its rule.
    let typo = SAXPY_WGSL.replace("let ax = a * x[i];", "let ax = b * x[i];");
    let diags = c.open(WGSL_URI, &typo);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "wgsl");
    let line = typo.lines().position(|l| l.contains("b * x[i]")).unwrap();
    let col = typo.lines().nth(line).unwrap().find("b * x").unwrap();
    assert_eq!(diags[0]["range"]["start"], json!({ "line": line, "character": col }));
    // Fixed: clean as typed and on save (front end, spirv pipeline, backend).
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": {"uri": WGSL_URI, "version": 2}, "contentChanges": [{"text": SAXPY_WGSL}] }),
    );
    assert_eq!(c.diagnostics(WGSL_URI), Vec::<Value>::new());
    c.notify("textDocument/didSave", json!({ "textDocument": td(WGSL_URI) }));
    assert_eq!(c.diagnostics(WGSL_URI), Vec::<Value>::new());
    let run = |c: &mut Client, cmd: &str, args: Value| {
        c.request("workspace/executeCommand", json!({ "command": cmd, "arguments": [args] }))
    };
    let r = run(&mut c, "xir.showXirAfter", json!({ "uri": WGSL_URI, "after": 0 }));
    assert_eq!(r["step"], "the input");
    let lowered = xir_frontend::compile(
        &xir_frontend::Source { path: "saxpy.wgsl", text: SAXPY_WGSL, language: xir_frontend::Language::Wgsl },
        &xir_frontend::Overrides::default(),
    )
    .unwrap();
    assert_eq!(r["text"], xir::text::print_module(&lowered));
    let r = run(&mut c, "xir.spirvDisassembly", json!({ "uri": WGSL_URI }));
    assert_eq!(r["kernel"], "main");
    assert!(r["text"].as_str().unwrap().contains("OpEntryPoint GLCompute"), "{r}");
    // No hover, definition or symbols to offer in a shader: empty answers.
    assert_eq!(c.request("textDocument/hover", at(WGSL_URI, json!({"line": 9, "character": 8}))), Value::Null);
    assert_eq!(c.request("textDocument/documentSymbol", json!({ "textDocument": td(WGSL_URI) })), json!([]));
    c.shutdown();
}

/// The binary run by hand: `--help` and `--version` answer at once instead
/// of starting a server on the terminal; an unknown argument is refused; a
/// malformed message names what was wrong with it.
#[test]
fn the_binary_answers_help_and_version_and_refuses_other_arguments() {
    use std::process::{Command, Stdio};
    let run = |arg: &str| {
        Command::new(env!("CARGO_BIN_EXE_xir-lsp")).arg(arg).stdin(Stdio::null()).output().expect("xir-lsp runs")
    };
    let o = run("--help");
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("xir-lsp: the language server"), "{o:?}");
    let o = run("--version");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("xir-lsp {}\n", env!("CARGO_PKG_VERSION")));
    let o = run("--nope");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("xir-lsp: error: unexpected argument `--nope`"), "{o:?}");
    // A malformed transport is reported as such, not as a disconnected channel.
    let mut child = Command::new(env!("CARGO_BIN_EXE_xir-lsp"))
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xir-lsp runs");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"garbage\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "xir-lsp: malformed header: \"garbage\\n\"\n");
}
