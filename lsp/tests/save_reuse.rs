//! The save-time check goes through the server's incremental workspace: after
//! an edit of one kernel, a save recompiles that kernel and nothing of the
//! other (the database's log of query executions says which ran).

use xir_lsp::diagnostics::on_save;
use xir_lsp::document::{Context, Document};
use xir_lsp::position::Encoding;

const TWO: &str = "kernel @k1(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  buffer.write %out, u32 0, u32 7
  return
}

kernel @k2(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  buffer.write %out, u32 0, u32 8
  return
}
";

fn executed(cx: &mut Context, doc: &Document) -> Vec<String> {
    cx.workspace.session_for(&doc.display, "spirv", None).unwrap().take_executed()
}

#[test]
fn a_save_after_editing_one_kernel_recompiles_only_that_kernel() {
    let mut cx = Context::new(Vec::new());
    let uri: lsp_types::Uri = "file:///tmp/xir-lsp-test/two.xir".parse().unwrap();
    let doc = Document::new(uri.clone(), TWO.to_string(), 1, Encoding::Utf16, &mut cx);
    assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
    assert_eq!(on_save(&doc, &mut cx), Vec::new());
    let first = executed(&mut cx, &doc);
    assert!(first.iter().any(|q| q.contains("(@k1)")) && first.iter().any(|q| q.contains("(@k2)")), "{first:?}");

    // A save with no edit runs nothing.
    assert_eq!(on_save(&doc, &mut cx), Vec::new());
    assert_eq!(executed(&mut cx, &doc), Vec::<String>::new());

    let edited = TWO.replace("u32 8", "u32 9");
    let doc = Document::new(uri, edited, 2, Encoding::Utf16, &mut cx);
    assert_eq!(on_save(&doc, &mut cx), Vec::new());
    let second = executed(&mut cx, &doc);
    assert!(second.iter().any(|q| q.contains("(@k2)")), "{second:?}");
    assert!(!second.iter().any(|q| q.contains("(@k1)")), "{second:?}");
}
