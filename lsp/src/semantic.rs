//! Semantic tokens for XIR: the lexer's tokens, classified (opcodes, type
//! kinds and keywords, values, blocks, functions, registers, literals,
//! comments), definitions marked with the `declaration` modifier.

use lsp_types::{SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokensLegend};
use xir::text::tokens::TokenKind;

use crate::document::Document;

/// The legend's types, in the order the indices below use.
pub const TYPES: [SemanticTokenType; 12] = [
    SemanticTokenType::KEYWORD,   // 0: kernel, callable, ref, block roles...
    SemanticTokenType::FUNCTION,  // 1: @f
    SemanticTokenType::VARIABLE,  // 2: %v
    SemanticTokenType::PARAMETER, // 3: an argument
    SemanticTokenType::NAMESPACE, // 4: ^block
    SemanticTokenType::MACRO,     // 5: $register
    SemanticTokenType::TYPE,      // 6: f32, buffer, ...
    SemanticTokenType::NUMBER,    // 7
    SemanticTokenType::STRING,    // 8
    SemanticTokenType::COMMENT,   // 9
    SemanticTokenType::DECORATOR, // 10: !loc
    SemanticTokenType::METHOD,    // 11: an opcode
];

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend { token_types: TYPES.to_vec(), token_modifiers: vec![SemanticTokenModifier::DECLARATION] }
}

/// The document's tokens, delta-encoded as the protocol wants. A token
/// spanning lines (none the lexer makes but a rejected one) is left out.
pub fn semantic_tokens(doc: &Document) -> Vec<SemanticToken> {
    let Some(ix) = doc.xir.as_ref() else { return Vec::new() };
    let spec = xir_spec::spec();
    let mut out = Vec::new();
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    let mut names = ix.names.iter().peekable();
    for (kind, r) in &ix.tokens {
        let word = &doc.text[r.clone()];
        while names.peek().is_some_and(|n| n.range.start < r.start) {
            names.next();
        }
        let name = names.peek().filter(|n| n.range == *r);
        let ty = match kind {
            TokenKind::Ident => {
                if xir_spec::Opcode::from_name(word).is_some() {
                    11
                } else if spec.type_kind(word).is_some() || xir::text::is_type_keyword(word) {
                    6
                } else {
                    0
                }
            }
            TokenKind::Global => 1,
            TokenKind::Local if name.is_some_and(|n| n.arg.is_some() || is_arg_use(ix, n)) => 3,
            TokenKind::Local => 2,
            TokenKind::Label => 4,
            TokenKind::Reg => 5,
            TokenKind::Number => 7,
            TokenKind::Str => 8,
            TokenKind::Comment => 9,
            TokenKind::Meta => 10,
            TokenKind::Arrow | TokenKind::Punct | TokenKind::Bad => continue,
        };
        if word.contains('\n') {
            continue;
        }
        let start = doc.lines.position(&doc.text, r.start);
        let end = doc.lines.position(&doc.text, r.end);
        let delta_line = start.line - prev_line;
        let delta_start = if delta_line == 0 { start.character - prev_col } else { start.character };
        out.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character.saturating_sub(start.character),
            token_type: ty,
            token_modifiers_bitset: u32::from(name.is_some_and(|n| n.is_def)),
        });
        (prev_line, prev_col) = (start.line, start.character);
    }
    out
}

fn is_arg_use(ix: &crate::index::XirIndex, n: &crate::index::Name) -> bool {
    ix.definition_of(n).is_some_and(|d| d.arg.is_some())
}
