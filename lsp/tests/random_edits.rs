//! Never a panic on any text: streams of random edits (SplitMix64, fixed
//! seeds, so a failure replays) of every corpus kernel and every shipped and
//! deliberately bad pipeline, and after each edit every capability at random
//! positions, in range and out of it, in both position encodings. A second
//! stream goes through the protocol as incremental changes, so the
//! server's own edit application and publishing are covered too.

mod common;

use std::path::PathBuf;

use lsp_types::{Position, Range, Uri};
use serde_json::json;
use xir_lsp::document::{path_to_uri, Context, Document};
use xir_lsp::position::Encoding;
use xir_lsp::{actions, definition, diagnostics, format, hover, semantic, symbols};
use xir_testgen::SplitMix64;

fn corpus() -> Vec<PathBuf> {
    let root = common::workspace();
    let mut files = Vec::new();
    for (dir, ext) in [
        ("tests/corpus", "xir"),
        ("pipelines", "ron"),
        ("pipelines/bad", "ron"),
        ("tests/wgsl", "wgsl"),
        ("tests/glsl", "comp"),
    ] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        here.sort();
        files.extend(here);
    }
    assert!(files.len() > 70, "{} files", files.len());
    files
}

/// Pieces random insertions draw from: sigils, brackets, quotes, keywords,
/// non-ASCII characters, line breaks.
const PIECES: &[&str] = &[
    "%",
    "^",
    "@",
    "$",
    "!",
    "\"",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ",",
    ":",
    "=",
    "->",
    "//",
    "\n",
    " ",
    "é",
    "𝄞",
    "\u{0}",
    "\\u{",
    "kernel @k(",
    "%x = add %x, %x : f32\n",
    "^bb0:\n",
    "br target ^x",
    "Pass(\"",
    "Include(\"O2\")",
    "OptGroup(min_level: 2, steps: [",
    "-",
    "0x",
    "1e",
    "buffer<",
    "undef ",
    "\r\n",
    "fn f(",
    "let v = ",
    "@compute @workgroup_size(",
    "var<storage, read_write> ",
    "array<f32>",
    "#version 450\n",
    "layout(local_size_x = ",
];

fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn edit(rng: &mut SplitMix64, text: &mut String) {
    let n = text.len().max(1) as u64;
    let a = boundary(text, (rng.next() % n) as usize);
    match rng.next() % 4 {
        0 => {
            let b = boundary(text, a + (rng.next() % 40) as usize);
            text.replace_range(a..b, "");
        }
        1 => {
            let piece = PIECES[(rng.next() % PIECES.len() as u64) as usize];
            text.insert_str(a, piece);
        }
        2 => {
            // Copy a slice of the text elsewhere (names, whole lines).
            let b = boundary(text, a + (rng.next() % 60) as usize);
            let slice = text[a..b].to_string();
            let to = boundary(text, (rng.next() % n) as usize);
            text.insert_str(to, &slice);
        }
        _ => {
            let b = boundary(text, a + 1 + (rng.next() % 3) as usize);
            let c = char::from_u32((rng.next() % 0x80) as u32).unwrap_or('x');
            text.replace_range(a..b, &c.to_string());
        }
    }
}

fn random_position(rng: &mut SplitMix64, doc: &Document) -> Position {
    match rng.next() % 8 {
        0 => Position::new(u32::MAX, u32::MAX),
        1 => Position::new((rng.next() % 1000) as u32, (rng.next() % 1000) as u32),
        _ => {
            let at = boundary(&doc.text, (rng.next() % (doc.text.len() as u64 + 1)) as usize);
            doc.lines.position(&doc.text, at)
        }
    }
}

fn exercise(rng: &mut SplitMix64, doc: &Document, cx: &Context) {
    for d in diagnostics::all(doc) {
        let l = diagnostics::to_lsp(doc, d);
        assert!(l.range.start <= l.range.end, "{l:?}");
    }
    for _ in 0..6 {
        let p = random_position(rng, doc);
        let _ = hover::hover(doc, cx, p);
        let _ = definition::definition(doc, cx, p);
        let _ = definition::references(doc, p, true);
        let q = random_position(rng, doc);
        let _ = actions::code_actions(doc, Range::new(p, q));
    }
    let _ = symbols::document_symbols(doc);
    let _ = semantic::semantic_tokens(doc);
    if let Ok(edits) = format::format(doc) {
        for e in edits {
            let again = xir::text::parse_module(&e.new_text, "formatted").expect("formatted text parses");
            assert_eq!(xir::text::print_module(&again), e.new_text);
        }
    }
}

#[test]
fn random_edit_streams_of_the_corpus_never_panic() {
    let mut cx = Context::new(vec![common::workspace()]);
    let mut rng = SplitMix64(0x15b_2026);
    let mut edits = 0;
    let start = std::time::Instant::now();
    for (k, path) in corpus().into_iter().enumerate() {
        let uri: Uri = path_to_uri(&path).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        let encoding = if k % 2 == 0 { Encoding::Utf16 } else { Encoding::Utf8 };
        for step in 0..60 {
            edit(&mut rng, &mut text);
            edits += 1;
            let doc = Document::new(uri.clone(), text.clone(), step, encoding, &mut cx);
            exercise(&mut rng, &doc, &cx);
            if step % 20 == 19 {
                let _ = diagnostics::on_save(&doc, &mut cx);
            }
        }
    }
    assert!(edits >= 5700, "{edits}");
    println!("{edits} random edits, each re-analyzed and queried, in {:?}", start.elapsed());
}

#[test]
fn random_incremental_changes_through_the_protocol() {
    let mut c = common::Client::start(&[]);
    let mut rng = SplitMix64(7);
    let uri = "file:///tmp/xir-lsp-fuzz/bitonic.xir";
    let text = include_str!("../../tests/corpus/bitonic_sort.xir");
    c.open(uri, text);
    for version in 2..150 {
        let p = |rng: &mut SplitMix64| json!({"line": rng.next() % 60, "character": rng.next() % 90});
        let (a, b) = (p(&mut rng), p(&mut rng));
        let piece = PIECES[(rng.next() % PIECES.len() as u64) as usize];
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": a, "end": b}, "text": piece}] }),
        );
        let _ = c.diagnostics(uri);
        let h = c.request("textDocument/hover", json!({ "textDocument": {"uri": uri}, "position": p(&mut rng) }));
        assert!(h.get("error").is_none(), "{h}");
        let s = c.request("textDocument/semanticTokens/full", json!({ "textDocument": {"uri": uri} }));
        assert!(s.get("error").is_none(), "{s}");
    }
    c.shutdown();
}
