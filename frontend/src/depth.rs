//! A bound on how deeply a shader's source can make the front end recurse,
//! checked on the text before naga sees it.
//!
//! naga's front ends and validator recurse once per level of an expression
//! tree and per nested statement: a chain of 20,000 additions, an `else if`
//! chain as long, or thousands of nested braces overflow the stack and abort
//! the process, which no error handling can catch. So the front end refuses,
//! with a located diagnostic, any source whose *estimated* depth passes
//! [`MAX_DEPTH`], and runs naga and the lowering of a source deeper than
//! [`INLINE_DEPTH`] on a thread of its own with [`FRONT_END_STACK`] bytes of
//! stack (the caller's thread may be a test's or a batch worker's, with
//! 2 MiB). Starting that thread costs 40-160 us, a tenth of a typical
//! compile, so a source as shallow as real shaders are (the corpus' deepest
//! is 11) runs on the caller's thread.
//!
//! The estimate reads tokens only, and over-counts on purpose: at each token
//! it is the number of open braces, parentheses and brackets, plus the
//! operator characters since the statement or list element began (a chain
//! of `n` binary operators is a tree `n` deep; a two-character operator
//! counts twice; the elements of a list sit side by side, so a comma takes
//! the count back to where the list opened), plus the `else`s of the `if`
//! chains still open (each `else if` nests one level). Measured on this machine, naga overflows an 8 MiB stack at
//! about 4,200 nested GLSL blocks, 4,700 `else if`s or 5,400 nested
//! parentheses, and our own lowering passes 11,000-term chains; the limit
//! keeps four times that margin on a main thread's stack and sixty-four
//! times on the front end's own.

use crate::{diag, Error, Language, Source};
use xir::ir::Span;

/// The deepest estimated nesting the front end accepts.
pub const MAX_DEPTH: usize = 1024;

/// The deepest estimate run on the caller's thread: any thread's stack
/// takes it (naga's deepest frames, in a debug build, times this is well
/// under a 2 MiB thread's stack).
pub const INLINE_DEPTH: usize = 64;

/// The stack of the thread the front end runs on past [`INLINE_DEPTH`].
pub const FRONT_END_STACK: usize = 64 << 20;

/// Where the front end runs a source that passed [`check`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// On the caller's thread: the source is at most [`INLINE_DEPTH`] deep.
    Inline,
    /// On a thread of its own with [`FRONT_END_STACK`] bytes of stack.
    OwnStack,
}

/// Refuse `src` when its estimated depth passes [`MAX_DEPTH`], at the
/// first token where it does; otherwise say where to run it.
pub fn check(src: &Source<'_>) -> Result<Placement, Error> {
    let scan = scan(src.text, src.language);
    match scan.first_too_deep {
        None if scan.deepest <= INLINE_DEPTH => Ok(Placement::Inline),
        None => Ok(Placement::OwnStack),
        Some(at) => {
            let (line, col) = line_col(src.text, at);
            let message = format!(
                "the shader nests too deeply here: expressions, statements and `else if` chains together \
                 more than {MAX_DEPTH} levels (the front end's recursion limit; split the expression or \
                 the chain)"
            );
            Err(diag(src, src.language.rule(), message, Some(Span::with_len(line, col, 1))))
        }
    }
}

/// One open brace level: what its current statement has accumulated.
#[derive(Default)]
struct Level {
    /// Operator characters since this level's statement began.
    operators: usize,
    /// `else`s of this level's `if` chain.
    elses: usize,
    /// Parentheses and brackets open in this level's statement, each with
    /// the operator count where it opened: a `,` starts a sibling (the
    /// elements of a list nest side by side, not inside each other), so it
    /// takes the count back there.
    parens: Vec<usize>,
}

/// What a scan of the tokens found.
struct Scan {
    /// The largest estimate anywhere.
    deepest: usize,
    /// Where the estimate first passed [`MAX_DEPTH`].
    first_too_deep: Option<usize>,
}

fn scan(text: &str, language: Language) -> Scan {
    let mut deepest = 0;
    let bytes = text.as_bytes();
    let mut levels = vec![Level::default()];
    // Sums over the open levels, kept in step with `levels`.
    let mut braces = 0usize;
    let mut elses = 0usize;
    let mut parens = 0usize;
    let mut line_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // GLSL preprocessor lines (`#version`, `#define`) are not code here.
        if line_start && c == b'#' && language == Language::Glsl {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
            continue;
        }
        line_start = false;
        if let Some(n) = crate::comment_len(&text[i..]) {
            i += n;
            continue;
        }
        let level = levels.last_mut().expect("the outermost level is never closed");
        let ch = text[i..].chars().next().unwrap_or_default();
        if c.is_ascii_digit() {
            // A number: its `.`, suffix and exponent sign are part of it.
            i += 1;
            while i < bytes.len() {
                let x = bytes[i];
                let sign = matches!(x, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                if !(x.is_ascii_alphanumeric() || x == b'_' || x == b'.' || sign) {
                    break;
                }
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let end = text[i..].find(|ch: char| !(ch.is_alphanumeric() || ch == '_')).map_or(text.len(), |n| i + n);
            if &text[i..end] == "else" {
                level.elses += 1;
                elses += 1;
            }
            i = end;
        } else if !ch.is_ascii() {
            // Not a token of either language: naga refuses it, located.
            i += ch.len_utf8();
        } else {
            match c {
                b'{' => {
                    parens -= level.parens.len();
                    level.parens.clear();
                    level.operators = 0;
                    levels.push(Level::default());
                    braces += 1;
                }
                b'}' => {
                    if levels.len() > 1 {
                        let closed = levels.pop().expect("checked above");
                        elses -= closed.elses;
                        parens -= closed.parens.len();
                        braces -= 1;
                    }
                }
                b';' => {
                    elses -= level.elses;
                    parens -= level.parens.len();
                    *level = Level::default();
                }
                b'(' | b'[' => {
                    level.parens.push(level.operators);
                    parens += 1;
                }
                b')' | b']' => {
                    if level.parens.pop().is_some() {
                        parens -= 1;
                    }
                }
                // A list element, struct member or argument: back to the
                // count where the list opened (the brace level's start when
                // no parenthesis is open).
                b',' => level.operators = level.parens.last().copied().unwrap_or(0),
                b'@' => {}
                _ => level.operators += 1,
            }
            i += 1;
        }
        let operators = levels.last().map_or(0, |l| l.operators);
        deepest = deepest.max(braces + parens + elses + operators);
        if deepest > MAX_DEPTH {
            return Scan { deepest, first_too_deep: Some(start) };
        }
    }
    Scan { deepest, first_too_deep: None }
}

/// Run `f` where `placement` says, waiting for it; a panic in `f`
/// continues on the caller's thread.
pub(crate) fn run_placed<T: Send>(placement: Placement, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    if placement == Placement::Inline {
        return Ok(f());
    }
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("xir-frontend".into())
            .stack_size(FRONT_END_STACK)
            .spawn_scoped(scope, f)?;
        Ok(thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_col(text: &str, at: usize) -> (u32, u32) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before, |n| &before[n + 1..]).chars().count() + 1;
    (line as u32, col as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte offset of the first token at which the estimate passes
    /// [`MAX_DEPTH`].
    fn first_too_deep(text: &str, language: Language) -> Option<usize> {
        scan(text, language).first_too_deep
    }

    fn depth_error(language: Language, text: &str) -> Option<(u32, u32)> {
        first_too_deep(text, language).map(|at| line_col(text, at))
    }

    fn chain(n: usize) -> String {
        format!("fn f() {{ var x = 1u; x = {}; }}", vec!["x"; n].join(" + "))
    }

    #[test]
    fn an_operator_chain_one_over_the_limit_is_refused_at_its_last_operator() {
        // In the function's braces (1), `x = ` opens the statement with one
        // operator (`=`), and the chain of `n` terms adds `n - 1`.
        assert_eq!(depth_error(Language::Wgsl, &chain(MAX_DEPTH - 1)), None);
        let over = chain(MAX_DEPTH);
        let at = first_too_deep(&over, Language::Wgsl).expect("one over the limit");
        assert_eq!(&over[at..at + 1], "+");
        assert_eq!(over[at..].matches('+').count(), 1, "the last `+`");
    }

    #[test]
    fn statements_reset_the_count_and_blocks_nest() {
        let many = format!("fn f() {{ {} }}", "x = x + x;".repeat(10 * MAX_DEPTH));
        assert_eq!(depth_error(Language::Wgsl, &many), None);
        // The function's own brace is the first level.
        let nested = |n: usize| format!("fn f() {}{}", "{".repeat(n), "}".repeat(n));
        assert_eq!(depth_error(Language::Wgsl, &nested(MAX_DEPTH)), None);
        assert_eq!(depth_error(Language::Wgsl, &nested(MAX_DEPTH + 1)), Some((1, 8 + MAX_DEPTH as u32)));
    }

    #[test]
    fn else_if_chains_count_each_else() {
        let chain = |n: usize| format!("fn f() {{ if a {{ x = 1; }}{} }}", " else if b { x = 2; }".repeat(n));
        // Inside the last branch: the function's brace, the branch's brace,
        // `n` elses and the assignment's `=`.
        assert_eq!(depth_error(Language::Wgsl, &chain(MAX_DEPTH - 3)), None);
        assert!(depth_error(Language::Wgsl, &chain(MAX_DEPTH - 2)).is_some());
        // Separate `if`s are not a chain.
        let separate = format!("fn f() {{ {} }}", "if a { x = 1; } else { x = 2; } y = 3;".repeat(2 * MAX_DEPTH));
        assert_eq!(depth_error(Language::Wgsl, &separate), None);
    }

    #[test]
    fn only_sources_deeper_than_the_inline_depth_get_their_own_stack() {
        let place = |text: &str| check(&Source { path: "k.wgsl", text, language: Language::Wgsl });
        // The function's braces and `=` around the chain: `n + 1` deep.
        assert_eq!(place(&chain(INLINE_DEPTH - 1)).unwrap(), Placement::Inline);
        assert_eq!(place(&chain(INLINE_DEPTH)).unwrap(), Placement::OwnStack);
        assert_eq!(place(&chain(MAX_DEPTH - 1)).unwrap(), Placement::OwnStack);
        assert!(place(&chain(MAX_DEPTH)).is_err());
    }

    #[test]
    fn parentheses_comments_and_preprocessor_lines() {
        let parens = |n: usize| format!("fn f() {{ x = {}x{}; }}", "(".repeat(n), ")".repeat(n));
        assert_eq!(depth_error(Language::Wgsl, &parens(MAX_DEPTH - 2)), None);
        assert!(depth_error(Language::Wgsl, &parens(MAX_DEPTH - 1)).is_some());
        let commented = format!("// {}\n/* {} */ fn f() {{ }}", "+".repeat(5000), "{(".repeat(5000));
        assert_eq!(depth_error(Language::Wgsl, &commented), None);
        let glsl = format!("#define X {}\nvoid main() {{ }}", "+".repeat(5000));
        assert_eq!(depth_error(Language::Glsl, &glsl), None);
        // Numbers' dots and exponent signs are part of the literal; a long
        // argument list is wide, not deep.
        let wide = format!("fn f() {{ x = g({}); }}", vec!["1.5e-3"; 5000].join(", "));
        assert_eq!(depth_error(Language::Wgsl, &wide), None);
        // A table of signed entries and a struct of many members are wide
        // too: each element's operators start over at its comma.
        let table = format!("const T = array<f32, 5000>({});", vec!["-1.5"; 5000].join(", "));
        assert_eq!(depth_error(Language::Wgsl, &table), None);
        let members: Vec<String> = (0..5000).map(|k| format!("m{k}: f32")).collect();
        let big_struct = format!("struct S {{ {} }}", members.join(", "));
        assert_eq!(depth_error(Language::Wgsl, &big_struct), None);
        // An element's own chain still counts, on top of what opened the list.
        let deep_element = format!("fn f() {{ x = g(1, {}); }}", vec!["x"; MAX_DEPTH].join(" + "));
        assert!(depth_error(Language::Wgsl, &deep_element).is_some());
    }
}
