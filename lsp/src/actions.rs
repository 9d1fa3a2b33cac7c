//! Code actions: each "did you mean" fix of a diagnostic in the requested
//! range (unknown passes, hooks, options and dialects in pipelines; unknown
//! opcodes, values and blocks in XIR) as a quick fix that applies it.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, WorkspaceEdit};

use crate::diagnostics::{all, to_lsp};
use crate::document::Document;

pub fn code_actions(doc: &Document, range: Range) -> Vec<CodeActionOrCommand> {
    let want = doc.offset(range.start)..doc.offset(range.end);
    let mut out = Vec::new();
    for d in all(doc) {
        for fix in &d.fixes {
            if !doc.is_this_file(fix.file.as_deref()) {
                continue;
            }
            let at = doc.span_bytes(fix.span);
            let primary = d.span.map(|s| doc.span_bytes(s)).unwrap_or(at.clone());
            let touches = |r: &std::ops::Range<usize>| r.start <= want.end && want.start <= r.end;
            if !touches(&at) && !touches(&primary) {
                continue;
            }
            let edit = TextEdit { range: doc.range(at), new_text: fix.replacement.clone() };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.message.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![to_lsp(doc, d)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(doc.uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }));
        }
    }
    out
}
