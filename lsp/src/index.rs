//! The index of one `.xir` document: its tokens (the framework's lexer, so
//! it exists for text that does not parse), the functions they delimit, and
//! every `%value`, `^block` and `@function` name with whether it is the
//! definition; plus the parsed module when the text parses (types, spans of
//! instructions). Definitions, references, hovers, symbols and semantic
//! tokens all read this one structure.

use std::collections::HashMap;
use std::ops::Range;

use xir::text::tokens::{tokens, TokenKind};
use xir::Module;

/// What a name names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NameKind {
    Value,
    Block,
    Function,
}

/// One occurrence of a name.
#[derive(Clone, Debug)]
pub struct Name {
    pub kind: NameKind,
    /// Without the sigil (quotes of `@"x"` kept: compared as written).
    pub text: String,
    /// The whole token, sigil included.
    pub range: Range<usize>,
    pub is_def: bool,
    /// The function whose body or header holds it (`None`: before any).
    pub scope: Option<usize>,
    /// For a value definition in a header: the argument's position.
    pub arg: Option<usize>,
}

/// A function as the tokens delimit it.
#[derive(Clone, Debug)]
pub struct FnEntry {
    /// `@name` without the sigil, as written.
    pub name: String,
    /// `kernel`, `callable` or `extern`.
    pub keyword: String,
    /// From the keyword to the end of the function (its `}`, or the next
    /// function's start).
    pub range: Range<usize>,
    pub name_range: Range<usize>,
}

pub struct XirIndex {
    pub tokens: Vec<(TokenKind, Range<usize>)>,
    pub functions: Vec<FnEntry>,
    pub names: Vec<Name>,
    /// The first definition of each entity: (kind, scope, name) -> index in
    /// `names` (the scope is `None` for functions).
    defs: HashMap<(NameKind, Option<usize>, String), usize>,
    /// The module, when the text parses.
    pub module: Option<Module>,
}

const FN_KEYWORDS: [&str; 3] = ["kernel", "callable", "extern"];

impl XirIndex {
    pub fn build(text: &str, module: Option<Module>) -> XirIndex {
        let tokens = tokens(text);
        let mut functions: Vec<FnEntry> = Vec::new();
        let mut names = Vec::new();
        // Per function: inside the header's parentheses, and brace depth.
        let mut paren_depth = 0usize;
        let mut brace_depth = 0usize;
        let mut in_header = false;
        let mut arg_count = 0usize;
        let slice = |r: &Range<usize>| &text[r.clone()];
        let next_is =
            |i: usize, p: &str| tokens.get(i + 1).is_some_and(|(k, r)| *k == TokenKind::Punct && slice(r) == p);
        for (i, (kind, r)) in tokens.iter().enumerate() {
            let t = slice(r);
            match kind {
                TokenKind::Ident if brace_depth == 0 && FN_KEYWORDS.contains(&t) => {
                    if let Some((TokenKind::Global, nr)) = tokens.get(i + 1) {
                        if let Some(prev) = functions.last_mut() {
                            if prev.range.end > r.start || prev.range.end == prev.range.start {
                                prev.range.end = r.start;
                            }
                        }
                        functions.push(FnEntry {
                            name: slice(nr)[1..].to_string(),
                            keyword: t.to_string(),
                            range: r.start..r.start,
                            name_range: nr.clone(),
                        });
                        in_header = true;
                        paren_depth = 0;
                        arg_count = 0;
                    }
                }
                TokenKind::Punct => match t {
                    "(" if in_header => paren_depth += 1,
                    ")" if in_header => paren_depth = paren_depth.saturating_sub(1),
                    "{" => {
                        in_header = false;
                        brace_depth += 1;
                    }
                    "}" => {
                        brace_depth = brace_depth.saturating_sub(1);
                        if brace_depth == 0 {
                            if let Some(f) = functions.last_mut() {
                                f.range.end = r.end;
                            }
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
            let scope = functions.len().checked_sub(1);
            let name = match kind {
                TokenKind::Local => {
                    let arg_def = in_header && paren_depth == 1 && next_is(i, ":");
                    let is_def = arg_def || (!in_header && next_is(i, "="));
                    let arg = arg_def.then(|| {
                        arg_count += 1;
                        arg_count - 1
                    });
                    Some(Name { kind: NameKind::Value, text: t[1..].to_string(), range: r.clone(), is_def, scope, arg })
                }
                TokenKind::Label => {
                    let is_def = !in_header && next_is(i, ":");
                    Some(Name {
                        kind: NameKind::Block,
                        text: t[1..].to_string(),
                        range: r.clone(),
                        is_def,
                        scope,
                        arg: None,
                    })
                }
                TokenKind::Global => {
                    let is_def = functions.last().is_some_and(|f| f.name_range == *r);
                    Some(Name {
                        kind: NameKind::Function,
                        text: t[1..].to_string(),
                        range: r.clone(),
                        is_def,
                        scope,
                        arg: None,
                    })
                }
                _ => None,
            };
            names.extend(name);
        }
        if let Some(f) = functions.last_mut() {
            if f.range.end <= f.range.start {
                f.range.end = text.len();
            }
        }
        let mut defs = HashMap::new();
        for (k, n) in names.iter().enumerate().filter(|(_, n)| n.is_def) {
            defs.entry(Self::key(n)).or_insert(k);
        }
        XirIndex { tokens, functions, names, defs, module }
    }

    /// The name whose token holds byte `offset` (or ends right at it).
    pub fn name_at(&self, offset: usize) -> Option<&Name> {
        let k = self.names.partition_point(|n| n.range.end < offset);
        self.names.get(k).filter(|n| n.range.start <= offset && offset <= n.range.end)
    }

    /// The token holding byte `offset`.
    pub fn token_at(&self, offset: usize) -> Option<(TokenKind, Range<usize>)> {
        let k = self.tokens.partition_point(|(_, r)| r.end < offset);
        self.tokens.get(k).filter(|(_, r)| r.start <= offset && offset <= r.end).cloned()
    }

    /// Whether two occurrences name the same thing: functions module-wide,
    /// values and blocks within one function.
    pub fn same_entity(a: &Name, b: &Name) -> bool {
        a.kind == b.kind && a.text == b.text && (a.kind == NameKind::Function || a.scope == b.scope)
    }

    fn key(n: &Name) -> (NameKind, Option<usize>, String) {
        (n.kind, if n.kind == NameKind::Function { None } else { n.scope }, n.text.clone())
    }

    /// The definition of what `n` names.
    pub fn definition_of(&self, n: &Name) -> Option<&Name> {
        self.defs.get(&Self::key(n)).map(|&k| &self.names[k])
    }

    /// Every occurrence of what `n` names, in text order.
    pub fn references_of<'s>(&'s self, n: &'s Name) -> impl Iterator<Item = &'s Name> + 's {
        self.names.iter().filter(move |o| Self::same_entity(o, n))
    }

    /// The value names defined in function `scope`.
    pub fn defined_in(&self, kind: NameKind, scope: Option<usize>) -> impl Iterator<Item = &Name> {
        self.names
            .iter()
            .filter(move |n| n.is_def && n.kind == kind && (kind == NameKind::Function || n.scope == scope))
    }

    /// The parsed function that index entry `scope` is.
    pub fn function(&self, scope: usize) -> Option<&xir::Function> {
        let m = self.module.as_ref()?;
        let name = self.functions.get(scope)?.name.as_str();
        let name = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')).unwrap_or(name);
        m.functions.iter().find(|f| f.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "kernel @k(%a: f32, %b: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n  %x = add %a, %a : f32\n  br target ^done\n^done:\n  return\n}\ncallable @c(%a: u32) -> u32 {\n^e:\n  return %a\n}\n";

    #[test]
    fn names_resolve_within_their_function() {
        let ix = XirIndex::build(SRC, None);
        assert_eq!(ix.functions.len(), 2);
        assert_eq!(ix.functions[0].name, "k");
        assert_eq!(&SRC[ix.functions[1].range.clone()], &SRC[SRC.find("callable").unwrap()..SRC.len() - 1]);
        let use_a = SRC.find("add %a").unwrap() + 4;
        let n = ix.name_at(use_a).unwrap();
        let d = ix.definition_of(n).unwrap();
        assert_eq!((d.range.start, d.arg), (SRC.find("%a").unwrap(), Some(0)));
        assert_eq!(ix.references_of(n).count(), 3);
        let ret_a = SRC.rfind("%a").unwrap();
        let d2 = ix.definition_of(ix.name_at(ret_a).unwrap()).unwrap();
        assert_eq!(d2.range.start, SRC.find("@c(%a").unwrap() + 3);
        let done = ix.definition_of(ix.name_at(SRC.find("^done").unwrap() + 1).unwrap()).unwrap();
        assert_eq!(done.range.start, SRC.rfind("^done").unwrap());
    }
}
