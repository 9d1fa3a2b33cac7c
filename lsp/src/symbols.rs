//! Document symbols: in XIR each function (kernel, callable, extern) with
//! its blocks; in a pipeline each step, groups holding their steps.

use lsp_types::{DocumentSymbol, SymbolKind};

use crate::document::{Document, Language};
use crate::index::NameKind;
use crate::pipeline_index::StepKind;

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be spelled out.
fn symbol(
    doc: &Document,
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: std::ops::Range<usize>,
    sel: std::ops::Range<usize>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: doc.range(range),
        selection_range: doc.range(sel),
        children: None,
    }
}

pub fn document_symbols(doc: &Document) -> Vec<DocumentSymbol> {
    match doc.language {
        Language::Xir => xir_symbols(doc),
        Language::Pipeline => pipeline_symbols(doc),
        Language::Shader(_) => Vec::new(),
    }
}

fn xir_symbols(doc: &Document) -> Vec<DocumentSymbol> {
    let Some(ix) = doc.xir.as_ref() else { return Vec::new() };
    ix.functions
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let blocks: Vec<&crate::index::Name> =
                ix.defined_in(NameKind::Block, Some(k)).filter(|b| f.range.start <= b.range.start).collect();
            let children: Vec<DocumentSymbol> = blocks
                .iter()
                .enumerate()
                .map(|(j, b)| {
                    // A block runs to the next block's label or the function's end.
                    let end = blocks.get(j + 1).map_or(f.range.end, |n| n.range.start).max(b.range.end);
                    symbol(doc, format!("^{}", b.text), None, SymbolKind::KEY, b.range.start..end, b.range.clone())
                })
                .collect();
            let mut s = symbol(
                doc,
                format!("@{}", f.name),
                Some(f.keyword.clone()),
                SymbolKind::FUNCTION,
                f.range.clone(),
                f.name_range.clone(),
            );
            s.children = Some(children);
            s
        })
        .collect()
}

fn pipeline_symbols(doc: &Document) -> Vec<DocumentSymbol> {
    let Some(ix) = doc.pipeline.as_ref() else { return Vec::new() };
    fn level(doc: &Document, ix: &crate::pipeline_index::PipelineIndex, parent: Option<usize>) -> Vec<DocumentSymbol> {
        ix.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.parent == parent)
            .map(|(k, s)| {
                let (name, kind) = match s.kind {
                    StepKind::Pass => (s.name.clone(), SymbolKind::FUNCTION),
                    StepKind::Hook => (format!("Hook({})", s.name), SymbolKind::EVENT),
                    StepKind::Include => (format!("Include({})", s.name), SymbolKind::MODULE),
                    StepKind::OptGroup => ("OptGroup".to_string(), SymbolKind::NAMESPACE),
                    StepKind::FixedPoint => ("FixedPoint".to_string(), SymbolKind::NAMESPACE),
                };
                let detail = s.flow.as_ref().map(|(i, o)| format!("{i} -> {o}"));
                let sel = if s.name_range.is_empty() { s.range.clone() } else { s.name_range.clone() };
                let mut sym = symbol(doc, name, detail, kind, s.range.clone(), sel);
                if matches!(s.kind, StepKind::OptGroup | StepKind::FixedPoint) {
                    sym.children = Some(level(doc, ix, Some(k)));
                }
                sym
            })
            .collect()
    }
    level(doc, ix, None)
}
