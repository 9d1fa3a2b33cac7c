//! The shape of the spec files: plain serde structs, shared with `build.rs`
//! (which generates the `Opcode` and `SpecialRegister` enums from the same
//! data), so the RON files are the single source of truth.
//!
//! Strings and lists are [`Cow`]s: the built-in spec's entries borrow
//! `'static` data compiled in by `build.rs` (building them allocates
//! nothing, which was half of the spec's cost at every start-up), while a
//! spec read from files owns what it parsed. One shape serves both.

use std::borrow::Cow;

use serde::Deserialize;

/// A name or doc of the spec: borrowed when compiled in, owned when parsed.
pub type Str = Cow<'static, str>;
/// A list of the spec: borrowed when compiled in, owned when parsed.
pub type List<T> = Cow<'static, [T]>;

/// `types.ron`: every type kind of the IR.
#[derive(Debug, Clone, Deserialize)]
pub struct TypeKindSpec {
    /// Text spelling of the kind (`i32`, `vec`, `buffer`, ...).
    pub name: Str,
    pub doc: Str,
    /// Parameters written in angle brackets (`elem`, `lanes`, `len`, `dim`).
    #[serde(default)]
    pub params: List<Str>,
    /// Type classes this kind belongs to (`scalar`, `int`, `float`, `resource`, ...).
    #[serde(default)]
    pub classes: List<Str>,
    /// Named well-formedness rules (implemented in Rust, see `TypeRule`).
    #[serde(default)]
    pub rules: List<Str>,
}

/// One operand slot of an opcode.
#[derive(Debug, Clone, Deserialize)]
pub struct OperandSpec {
    pub name: Str,
    /// An operand class: a named predicate over the operand's type/kind.
    pub class: Str,
}

/// `opcodes.ron`: one entry per opcode (instructions and ops are flattened).
#[derive(Debug, Clone, Deserialize)]
pub struct OpcodeSpec {
    /// Text spelling (`add`, `if`, `atomic.fetch_add`, ...).
    pub name: Str,
    /// The reference's class this opcode belongs to (`ArithmeticOp`, `IfInst`, ...).
    pub class: Str,
    pub doc: Str,
    #[serde(default)]
    pub operands: List<OperandSpec>,
    /// Trailing variadic operands, all of one class.
    #[serde(default)]
    pub variadic: Option<OperandSpec>,
    /// Named block roles, in order.
    #[serde(default)]
    pub blocks: List<Str>,
    /// How the block list continues past the named roles (`cases`, `incoming`).
    #[serde(default)]
    pub variadic_blocks: Option<Str>,
    /// The result-type rule (a named Rust function, see `ResultRule`).
    pub result: Str,
    #[serde(default)]
    pub traits: List<Str>,
    /// Extra named typing constraints checked by the verifier.
    #[serde(default)]
    pub constraints: List<Str>,
    /// Non-value payload the instruction carries (`cases`, `text`).
    #[serde(default)]
    pub payload: Option<Str>,
    /// Named conditions on the operands under which the result is undefined
    /// (SPIR-V leaves it so; the interpreter refuses it or picks one value):
    /// `zero_divisor`, `min_by_minus_one`, `shift_past_width`,
    /// `float_to_int_out_of_range`, `clamp_bounds_reversed`,
    /// `smoothstep_edges_reversed`. Generators of well-defined programs
    /// (`xir-testgen`'s `spec_gen`) guard each name they are given here.
    #[serde(default)]
    pub undefined: List<Str>,
}

/// `registers.ron`: the special registers.
#[derive(Debug, Clone, Deserialize)]
pub struct RegisterSpec {
    pub name: Str,
    pub doc: Str,
    /// Type spelling in the text format (`vec<u32, 3>`).
    pub ty: Str,
    /// Where the register is meaningful (`compute`, `raster`, `ray`).
    #[serde(default)]
    pub stages: List<Str>,
}

/// `dialects.ron`: a named set of opcodes and types plus invariants.
#[derive(Debug, Clone, Deserialize)]
pub struct DialectSpec {
    pub name: Str,
    pub doc: Str,
    #[serde(default)]
    pub extends: Option<Str>,
    /// Opcodes allowed, by name or `@group` (all opcodes of a class or trait).
    /// Empty together with no `extends` means "every opcode".
    #[serde(default)]
    pub allow_ops: List<Str>,
    #[serde(default)]
    pub remove_ops: List<Str>,
    /// Type kinds allowed; same conventions as opcodes.
    #[serde(default)]
    pub allow_types: List<Str>,
    #[serde(default)]
    pub remove_types: List<Str>,
    /// Named invariants (Rust predicates) that hold in addition to the parent's.
    #[serde(default)]
    pub invariants: List<Str>,
    /// Invariants of the parent that no longer hold here.
    #[serde(default)]
    pub drop_invariants: List<Str>,
}

/// `rules.ron`: a diagnostic rule that is not a spec name (structural
/// verifier rules, parser, pipeline loader, passes, backend).
#[derive(Debug, Clone, Deserialize)]
pub struct RuleSpec {
    /// The spelling diagnostics print (`ssa-dominance`, `spirv-plan:textures`).
    pub name: Str,
    pub doc: Str,
}

/// The whole of a spec file: a list of entries.
pub type TypeFile = Vec<TypeKindSpec>;
pub type OpcodeFile = Vec<OpcodeSpec>;
pub type RegisterFile = Vec<RegisterSpec>;
pub type DialectFile = Vec<DialectSpec>;
pub type RuleFile = Vec<RuleSpec>;

/// `CamelCase` Rust variant name for a spec spelling (`atomic.fetch_add` ->
/// `AtomicFetchAdd`).
pub fn variant_name(spelling: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in spelling.chars() {
        if c == '.' || c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
