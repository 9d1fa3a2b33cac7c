//! The shape of the spec files: plain serde structs, shared with `build.rs`
//! (which generates the `Opcode` and `SpecialRegister` enums from the same
//! data), so the RON files are the single source of truth.

use serde::Deserialize;

/// `types.ron`: every type kind of the IR.
#[derive(Debug, Clone, Deserialize)]
pub struct TypeKindSpec {
    /// Text spelling of the kind (`i32`, `vec`, `buffer`, ...).
    pub name: String,
    pub doc: String,
    /// Parameters written in angle brackets (`elem`, `lanes`, `len`, `dim`).
    #[serde(default)]
    pub params: Vec<String>,
    /// Type classes this kind belongs to (`scalar`, `int`, `float`, `resource`, ...).
    #[serde(default)]
    pub classes: Vec<String>,
    /// Named well-formedness rules (implemented in Rust, see `TypeRule`).
    #[serde(default)]
    pub rules: Vec<String>,
}

/// One operand slot of an opcode.
#[derive(Debug, Clone, Deserialize)]
pub struct OperandSpec {
    pub name: String,
    /// An operand class: a named predicate over the operand's type/kind.
    pub class: String,
}

/// `opcodes.ron`: one entry per opcode (instructions and ops are flattened).
#[derive(Debug, Clone, Deserialize)]
pub struct OpcodeSpec {
    /// Text spelling (`add`, `if`, `atomic.fetch_add`, ...).
    pub name: String,
    /// The reference's class this opcode belongs to (`ArithmeticOp`, `IfInst`, ...).
    pub class: String,
    pub doc: String,
    #[serde(default)]
    pub operands: Vec<OperandSpec>,
    /// Trailing variadic operands, all of one class.
    #[serde(default)]
    pub variadic: Option<OperandSpec>,
    /// Named block roles, in order.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// How the block list continues past the named roles (`cases`, `incoming`).
    #[serde(default)]
    pub variadic_blocks: Option<String>,
    /// The result-type rule (a named Rust function, see `ResultRule`).
    pub result: String,
    #[serde(default)]
    pub traits: Vec<String>,
    /// Extra named typing constraints checked by the verifier.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Non-value payload the instruction carries (`cases`, `text`).
    #[serde(default)]
    pub payload: Option<String>,
    /// Named conditions on the operands under which the result is undefined
    /// (SPIR-V leaves it so; the interpreter refuses it or picks one value):
    /// `zero_divisor`, `min_by_minus_one`, `shift_past_width`,
    /// `float_to_int_out_of_range`, `clamp_bounds_reversed`,
    /// `smoothstep_edges_reversed`. Generators of well-defined programs
    /// (`xir-testgen`'s `spec_gen`) guard each name they are given here.
    #[serde(default)]
    pub undefined: Vec<String>,
}

/// `registers.ron`: the special registers.
#[derive(Debug, Clone, Deserialize)]
pub struct RegisterSpec {
    pub name: String,
    pub doc: String,
    /// Type spelling in the text format (`vec<u32, 3>`).
    pub ty: String,
    /// Where the register is meaningful (`compute`, `raster`, `ray`).
    #[serde(default)]
    pub stages: Vec<String>,
}

/// `dialects.ron`: a named set of opcodes and types plus invariants.
#[derive(Debug, Clone, Deserialize)]
pub struct DialectSpec {
    pub name: String,
    pub doc: String,
    #[serde(default)]
    pub extends: Option<String>,
    /// Opcodes allowed, by name or `@group` (all opcodes of a class or trait).
    /// Empty together with no `extends` means "every opcode".
    #[serde(default)]
    pub allow_ops: Vec<String>,
    #[serde(default)]
    pub remove_ops: Vec<String>,
    /// Type kinds allowed; same conventions as opcodes.
    #[serde(default)]
    pub allow_types: Vec<String>,
    #[serde(default)]
    pub remove_types: Vec<String>,
    /// Named invariants (Rust predicates) that hold in addition to the parent's.
    #[serde(default)]
    pub invariants: Vec<String>,
    /// Invariants of the parent that no longer hold here.
    #[serde(default)]
    pub drop_invariants: Vec<String>,
}

/// `rules.ron`: a diagnostic rule that is not a spec name (structural
/// verifier rules, parser, pipeline loader, passes, backend).
#[derive(Debug, Clone, Deserialize)]
pub struct RuleSpec {
    /// The spelling diagnostics print (`ssa-dominance`, `spirv-plan:textures`).
    pub name: String,
    pub doc: String,
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
