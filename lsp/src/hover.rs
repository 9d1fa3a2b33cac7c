//! Hover: in XIR, a value's type and defining instruction, a block's or
//! function's header, an opcode's entry in the spec, a special register's
//! type; in a pipeline, a pass's contract (consumes / produces / preserves),
//! options and the dialects flowing into and out of the step, an included
//! pipeline's header, a dialect's description.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use xir::text::tokens::TokenKind;
use xir::text::type_to_string;
use xir_spec::{Opcode, SpecialRegister};

use crate::document::{Context, Document, Language};
use crate::index::NameKind;
use crate::pipeline_index::StepKind;

/// The hover at `pos`, or `None` where there is nothing to say.
pub fn hover(doc: &Document, cx: &Context, pos: Position) -> Option<Hover> {
    let at = doc.offset(pos);
    let (range, text) = match doc.language {
        Language::Xir => xir_hover(doc, at)?,
        Language::Pipeline => pipeline_hover(doc, cx, at)?,
        // naga has no hover to borrow; the commands show the lowered XIR.
        Language::Shader(_) => return None,
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
        range: Some(doc.range(range)),
    })
}

fn xir_hover(doc: &Document, at: usize) -> Option<(std::ops::Range<usize>, String)> {
    let ix = doc.xir.as_ref()?;
    if let Some(n) = ix.name_at(at) {
        let def = ix.definition_of(n);
        let text = match n.kind {
            NameKind::Value => {
                let Some(def) = def else { return Some((n.range.clone(), format!("`%{}`: not defined", n.text))) };
                let line = line_of(doc, def.range.start).trim();
                let ty = value_type(doc, def);
                let head = match ty {
                    Some(t) => format!("`%{}: {t}`", n.text),
                    None => format!("`%{}`", n.text),
                };
                let fname = def.scope.and_then(|s| ix.functions.get(s)).map(|f| f.name.as_str()).unwrap_or("?");
                match def.arg {
                    Some(k) => format!("{head}\n\nargument {k} of `@{fname}`"),
                    None => format!("{head}\n\ndefined by\n```xir\n{line}\n```"),
                }
            }
            NameKind::Block => match def {
                Some(def) => {
                    let fname = def.scope.and_then(|s| ix.functions.get(s)).map_or("?", |f| f.name.as_str());
                    let uses = ix.references_of(n).filter(|o| !o.is_def).count();
                    format!("block `^{}` of `@{fname}`, {uses} use(s)", n.text)
                }
                None => format!("`^{}`: not defined", n.text),
            },
            NameKind::Function => match def {
                Some(def) => {
                    format!("```xir\n{}\n```", line_of(doc, def.range.start).trim().trim_end_matches('{').trim())
                }
                None => format!("`@{}`: not defined", n.text),
            },
        };
        return Some((n.range.clone(), text));
    }
    let (kind, r) = ix.token_at(at)?;
    let word = &doc.text[r.clone()];
    let text = match kind {
        TokenKind::Ident => opcode_doc(Opcode::from_name(word)?),
        TokenKind::Reg => {
            let reg = SpecialRegister::from_name(&word[1..])?;
            let spec = xir_spec::spec().register(reg);
            format!("`${}: {}`\n\n{}", spec.name, spec.ty, spec.doc)
        }
        _ => return None,
    };
    Some((r, text))
}

/// The text of the line holding byte `at`.
fn line_of(doc: &Document, at: usize) -> &str {
    let start = doc.text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = doc.text[at..].find('\n').map_or(doc.text.len(), |i| at + i);
    &doc.text[start..end]
}

/// The type of the value a definition defines, from the parsed module.
fn value_type(doc: &Document, def: &crate::index::Name) -> Option<String> {
    let ix = doc.xir.as_ref()?;
    let m = ix.module.as_ref()?;
    let f = ix.function(def.scope?)?;
    if let Some(k) = def.arg {
        return Some(type_to_string(&m.types, f.args.get(k)?.ty));
    }
    let here = doc.lines.position(&doc.text, def.range.start);
    let (_, i) = f.all_insts().find(|&(_, i)| f.inst_span(i).is_some_and(|s| s.line == here.line + 1))?;
    Some(type_to_string(&m.types, f.inst(i).ty))
}

/// An opcode's entry in the spec, as Markdown.
pub fn opcode_doc(op: Opcode) -> String {
    let info = xir_spec::spec().op(op);
    let s = &info.spec;
    let mut out = format!("**`{}`** ({})\n\n{}\n", s.name, s.class, s.doc);
    let mut operands: Vec<String> = s.operands.iter().map(|o| format!("`{}: {}`", o.name, o.class)).collect();
    if let Some(v) = &s.variadic {
        operands.push(format!("`{}: {}...`", v.name, v.class));
    }
    if !operands.is_empty() {
        out.push_str(&format!("\n- operands: {}", operands.join(", ")));
    }
    let mut blocks: Vec<String> = s.blocks.iter().map(|b| format!("`{b}`")).collect();
    if let Some(v) = &s.variadic_blocks {
        blocks.push(format!("`{v}...`"));
    }
    if !blocks.is_empty() {
        out.push_str(&format!("\n- blocks: {}", blocks.join(", ")));
    }
    out.push_str(&format!("\n- result: `{}`", s.result));
    if !s.traits.is_empty() {
        out.push_str(&format!("\n- traits: {}", s.traits.join(", ")));
    }
    if !s.constraints.is_empty() {
        out.push_str(&format!("\n- constraints: {}", s.constraints.join(", ")));
    }
    out
}

fn pipeline_hover(doc: &Document, cx: &Context, at: usize) -> Option<(std::ops::Range<usize>, String)> {
    let ix = doc.pipeline.as_ref()?;
    if let Some((name, r)) = ix.dialects.iter().find(|(_, r)| r.start <= at && at <= r.end) {
        let d = xir_spec::spec().dialect(name)?;
        return Some((r.clone(), format!("dialect `{}`\n\n{}", d.name, d.doc)));
    }
    let step = ix.step_at(at)?;
    let flow = step.flow.as_ref().map(|(i, o)| format!("\n\n`{i}` → `{o}`")).unwrap_or_default();
    let text = match step.kind {
        StepKind::Pass => {
            let decl = cx.registry().get(&step.name)?;
            pass_doc(decl, step.options.as_deref())
        }
        StepKind::Hook => {
            let h = cx.registry().hook(&step.name)?;
            let bound =
                h.bound.map(|b| format!("\n\nbound to `{b}`")).unwrap_or_else(|| "\n\nunbound (a no-op)".into());
            let pass = h.bound.and_then(|b| cx.registry().get(b)).map(|d| format!("\n\n{}", pass_doc(d, None)));
            format!("hook `{}`: {}{bound}{}", h.name, h.doc, pass.unwrap_or_default())
        }
        StepKind::Include => {
            let p = cx.loader().load(&step.name).ok();
            match p {
                Some(p) => format!(
                    "pipeline `{}`: `{}` → `{}`{}",
                    p.name,
                    p.input,
                    p.output,
                    p.doc.map(|d| format!("\n\n{d}")).unwrap_or_default()
                ),
                None => format!("pipeline `{}` (does not load)", step.name),
            }
        }
        StepKind::OptGroup => "runs its steps only from the given optimization level on".to_string(),
        StepKind::FixedPoint => "runs its steps until none changes the IR (at most `max_iterations` times)".to_string(),
    };
    let range = if step.name_range.is_empty() { step.range.clone() } else { step.name_range.clone() };
    Some((range, format!("{text}{flow}")))
}

/// A pass's contract and options, as Markdown.
pub fn pass_doc(decl: &xir::pass::PassDecl, written: Option<&str>) -> String {
    let i = &decl.info;
    let produces = match i.produces {
        xir::pass::Produces::Same => "the same dialect".to_string(),
        xir::pass::Produces::Dialect(d) => format!("`{d}`"),
        xir::pass::Produces::PerConsumed(ds) => ds.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", "),
    };
    let consumes = i.consumes.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ");
    let preserves = if i.preserves.is_empty() {
        "nothing".to_string()
    } else {
        i.preserves.iter().map(|a| format!("`{}`", a.name())).collect::<Vec<_>>().join(", ")
    };
    let mut out = format!(
        "pass **`{}`**: {}\n\n- consumes: {consumes}\n- produces: {produces}\n- preserves: {preserves}",
        i.name, i.doc
    );
    if !decl.options.is_empty() {
        out.push_str("\n\noptions:");
        for o in decl.options {
            out.push_str(&format!("\n- `{}: {}` (default `{}`): {}", o.name, o.ty, o.default, o.doc));
        }
    }
    if let Some(w) = written {
        out.push_str(&format!("\n\nhere: `{w}`"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Encoding;

    fn hover_at(cx: &mut Context, uri: &str, text: &str, needle: &str) -> Option<String> {
        let doc = Document::new(uri.parse().unwrap(), text.to_string(), 1, Encoding::Utf16, cx);
        let p = doc.lines.position(&doc.text, text.find(needle).unwrap() + 1);
        hover(&doc, cx, p).map(|h| match h.contents {
            HoverContents::Markup(m) => m.value,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn hovers_are_pure_functions_of_the_document() {
        let mut cx = Context::new(Vec::new());
        let text = "kernel @k(%b: buffer<u32>) block_size(1, 1, 1) {\n^e:\n  %n = buffer.size %b : u32\n  %m = add %n, %n : u32\n  return\n}\n";
        let uri = "file:///t/k.xir";
        assert_eq!(
            hover_at(&mut cx, uri, text, "%n, %n").as_deref(),
            Some("`%n: u32`\n\ndefined by\n```xir\n%n = buffer.size %b : u32\n```")
        );
        assert_eq!(
            hover_at(&mut cx, uri, text, "%b : u32").as_deref(),
            Some("`%b: buffer<u32>`\n\nargument 0 of `@k`")
        );
        assert_eq!(hover_at(&mut cx, uri, text, "add").unwrap(), opcode_doc(Opcode::from_name("add").unwrap()));
        assert_eq!(hover_at(&mut cx, uri, text, "(1, 1"), None);
        let ron = "Pipeline(name: \"p\", input: \"xir.raw\", output: \"xir.raw\", steps: [Pass(\"dce\")])";
        let h = hover_at(&mut cx, "file:///t/p.ron", ron, "\"dce\"").unwrap();
        assert!(h.starts_with("pass **`dce`**: "), "{h}");
        assert!(h.ends_with("\n\n`xir.raw` → `xir.raw`"), "{h}");
    }
}
