//! Reflection of a foreign SPIR-V compute module: one this backend did not
//! write (naga's, glslang's, ...), so there is no [`crate::KernelAbi`] beside
//! it and everything the runner needs is read from the module itself.
//!
//! [`reflect`] picks the `GLCompute` entry point (by name when there are
//! several), reads its workgroup size (`LocalSize`, or a constant decorated
//! `BuiltIn WorkgroupSize`, which overrides it; `LocalSizeId` is refused by
//! the validation that comes first: Vulkan 1.2 allows it only with
//! `maintenance4`, which the runner's device does not enable) and
//! describes every descriptor variable: its `OpName`, `DescriptorSet`,
//! `Binding`, storage class, `NonWritable` / `NonReadable`, and the layout of
//! its type exactly as the decorations give it (`Offset` of each member,
//! `ArrayStride` of fixed and runtime arrays, `MatrixStride` and
//! `RowMajor` of matrices). Nothing is assumed from std140 / std430: a module
//! is free to lay a block out any way its decorations say, and the runner
//! must put each value where the module reads it.
//!
//! A push-constant block the entry point uses (SPIRV-Tools allows one) is
//! described the same way ([`Reflection::push_constants`]), keyed as a
//! descriptor variable is.
//!
//! What it cannot describe is refused with a [`ReflectError`] naming the
//! variable or instruction: samplers and combined image-samplers,
//! descriptor arrays, images other than 2D / 3D storage or sampled images
//! of 32-bit texels (RGBA32 or unknown format), booleans or pointers in a block, constants it
//! cannot evaluate (`OpSpecConstantOp`), several entry points without a
//! chosen name. Specialization constants take their default values: the
//! runner passes no specialization info, so the defaults are what run.
//!
//! Variables the entry point does not use (statically: referenced from its
//! call tree or listed in its interface) are reported apart
//! ([`Reflection::unused`]): the runner binds only what the entry point uses,
//! and an unused variable that cannot be described is left out rather than
//! refused (it is never bound).

use std::fmt;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Dim, ExecutionMode, ExecutionModel, ImageFormat, Op, StorageClass, Word};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::abi::TexelKind;

/// The SPIR-V magic number (first word of every module, in its own byte order).
pub const MAGIC: u32 = 0x0723_0203;

/// How deep types may nest (arrays of structs of arrays ...): a bound on the
/// recursion, so a hostile module cannot overflow the stack.
const MAX_TYPE_DEPTH: usize = 64;

/// Whether `bytes` start with the SPIR-V magic number, in either byte order.
pub fn is_spirv(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && [MAGIC.to_le_bytes(), MAGIC.to_be_bytes()].contains(&[bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The words of a SPIR-V binary in either byte order (the magic number
/// says which; a big-endian module is byte-swapped); its size must be a
/// whole number of words.
pub fn words_from_bytes(bytes: &[u8]) -> Result<Vec<u32>, ReflectError> {
    if !is_spirv(bytes) {
        let first = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
        return refuse(format!(
            "not a SPIR-V module: it starts with the bytes [{first}], not the magic number {MAGIC:#010x}"
        ));
    }
    if !bytes.len().is_multiple_of(4) {
        return refuse(format!(
            "a SPIR-V module is a whole number of 4-byte words; this one has {} bytes",
            bytes.len()
        ));
    }
    let little = bytes[..4] == MAGIC.to_le_bytes();
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let w = [c[0], c[1], c[2], c[3]];
            if little {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            }
        })
        .collect())
}

/// Why a module cannot be described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflectError(pub String);

impl fmt::Display for ReflectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReflectError {}

fn refuse<T>(msg: impl Into<String>) -> Result<T, ReflectError> {
    Err(ReflectError(msg.into()))
}

/// What a compute module asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Reflection {
    /// The module as it runs: the input words, validated, with naga's
    /// layout decorations on workgroup types removed where the validator
    /// refused them (`validated`).
    pub words: Vec<u32>,
    /// The entry point's name.
    pub entry_point: String,
    /// Threads per workgroup.
    pub workgroup_size: [u32; 3],
    /// The descriptor variables the entry point uses, by (set, binding).
    pub variables: Vec<Variable>,
    /// Declared descriptor variables the entry point does not use (those that
    /// can be described), by (set, binding).
    pub unused: Vec<Variable>,
    /// The push-constant block the entry point uses, if any.
    pub push_constants: Option<PushBlock>,
}

/// A push-constant block: its input key (the variable's `OpName`, else its
/// block's, as a descriptor variable's) and its layout.
#[derive(Clone, Debug, PartialEq)]
pub struct PushBlock {
    pub name: String,
    pub layout: StructLayout,
}

impl Reflection {
    /// The used or unused variable keyed `name`.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().chain(&self.unused).find(|v| v.name == name)
    }
}

/// One descriptor variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// The key of its input and output: its `OpName`, else its block's
    /// single member's (a GLSL anonymous block `buffer Data { uint x[]; };`
    /// is `x`), else its type's (`Data`); a repeated
    /// name is suffixed `.1`, `.2`, ... (in (set, binding) order); a
    /// variable without either is `set{S}.binding{B}`.
    pub name: String,
    /// The variable's result id.
    pub id: Word,
    pub set: u32,
    pub binding: u32,
    pub kind: VariableKind,
    /// `NonWritable` on the variable or on every member of its block.
    pub non_writable: bool,
    /// `NonReadable` on the variable or on every member of its block.
    pub non_readable: bool,
}

/// The descriptor a variable is.
#[derive(Clone, Debug, PartialEq)]
pub enum VariableKind {
    /// `StorageBuffer` with a `Block` struct, or `Uniform` with a `BufferBlock` struct.
    StorageBuffer(StructLayout),
    /// `Uniform` with a `Block` struct.
    UniformBuffer(StructLayout),
    /// A `UniformConstant` storage image (`Sampled` = 2).
    StorageImage(ImageLayout),
    /// A `UniformConstant` image read without a sampler (`Sampled` = 1:
    /// WGSL's `texture_2d<f32>` read by `textureLoad`).
    SampledImage(ImageLayout),
}

impl VariableKind {
    /// The Vulkan descriptor type's name, for messages.
    pub fn descriptor_name(&self) -> &'static str {
        match self {
            VariableKind::StorageBuffer(_) => "storage buffer",
            VariableKind::UniformBuffer(_) => "uniform buffer",
            VariableKind::StorageImage(_) => "storage image",
            VariableKind::SampledImage(_) => "sampled image",
        }
    }
}

/// A storage or sampled image: its dimensionality and texel kind; the
/// runner creates it as `R32G32B32A32` of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLayout {
    /// 2 or 3.
    pub dim: u32,
    pub texel: TexelKind,
    /// The declared format (`Rgba32f` / `Rgba32i` / `Rgba32ui`, or `Unknown`).
    pub format: ImageFormat,
}

/// A struct with its explicit layout.
#[derive(Clone, Debug, PartialEq)]
pub struct StructLayout {
    /// The struct type's `OpName`, if any.
    pub name: Option<String>,
    pub members: Vec<Member>,
}

/// One struct member.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Its `OpMemberName`, if any.
    pub name: Option<String>,
    /// Byte offset in the struct (`Offset`).
    pub offset: u32,
    pub ty: DataType,
}

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// 8, 16, 32 or 64 bits.
    Int { bits: u32, signed: bool },
    /// 16, 32 or 64 bits.
    Float { bits: u32 },
}

impl Scalar {
    /// Bytes of one value.
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::Int { bits, .. } | Scalar::Float { bits } => bits / 8,
        }
    }
}

/// A data type with every offset and stride the module decorates it with.
#[derive(Clone, Debug, PartialEq)]
pub enum DataType {
    Scalar(Scalar),
    /// Lanes at consecutive `scalar.bytes()` offsets.
    Vector {
        scalar: Scalar,
        lanes: u32,
    },
    /// `columns` columns of `rows` lanes; column `c`, row `r` lives at
    /// `c * stride + r * bytes` (column-major) or `r * stride + c * bytes`
    /// (`RowMajor`).
    Matrix {
        scalar: Scalar,
        columns: u32,
        rows: u32,
        stride: u32,
        row_major: bool,
    },
    /// Element `k` at `k * stride`; `len` `None` for a runtime array.
    Array {
        elem: Box<DataType>,
        len: Option<u64>,
        stride: u32,
    },
    Struct(StructLayout),
}

impl DataType {
    /// One past the last byte a value of this type occupies (a runtime
    /// array counts as empty).
    pub fn extent(&self) -> u64 {
        match self {
            DataType::Scalar(s) => u64::from(s.bytes()),
            DataType::Vector { scalar, lanes } => u64::from(scalar.bytes()) * u64::from(*lanes),
            DataType::Matrix { scalar, columns, rows, stride, row_major } => {
                let (outer, inner) = if *row_major { (*rows, *columns) } else { (*columns, *rows) };
                u64::from(outer - 1) * u64::from(*stride) + u64::from(inner) * u64::from(scalar.bytes())
            }
            DataType::Array { len: None, .. } | DataType::Array { len: Some(0), .. } => 0,
            DataType::Array { elem, len: Some(n), stride } => (n - 1) * u64::from(*stride) + elem.extent(),
            DataType::Struct(s) => s.extent(),
        }
    }
}

impl StructLayout {
    /// One past the last byte of its members (a trailing runtime array counts as empty).
    pub fn extent(&self) -> u64 {
        self.members.iter().map(|m| u64::from(m.offset) + m.ty.extent()).max().unwrap_or(0)
    }

    /// The trailing runtime array, if the struct ends in one: (member index, element, stride).
    pub fn runtime_array(&self) -> Option<(usize, &DataType, u32)> {
        match self.members.last().map(|m| &m.ty) {
            Some(DataType::Array { elem, len: None, stride }) => Some((self.members.len() - 1, elem, *stride)),
            _ => None,
        }
    }
}

/// Decorations of one id (or one struct member).
#[derive(Clone, Debug, Default)]
struct Decorations {
    set: Option<u32>,
    binding: Option<u32>,
    offset: Option<u32>,
    array_stride: Option<u32>,
    matrix_stride: Option<u32>,
    row_major: bool,
    block: bool,
    buffer_block: bool,
    non_writable: bool,
    non_readable: bool,
    builtin: Option<BuiltIn>,
}

fn literal(o: Option<&Operand>) -> Option<u32> {
    match o {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    }
}

fn id_ref(o: Option<&Operand>) -> Option<Word> {
    match o {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    }
}

impl Decorations {
    fn apply(&mut self, d: Decoration, extra: &[Operand]) {
        let first = literal(extra.first());
        match d {
            Decoration::DescriptorSet => self.set = first,
            Decoration::Binding => self.binding = first,
            Decoration::Offset => self.offset = first,
            Decoration::ArrayStride => self.array_stride = first,
            Decoration::MatrixStride => self.matrix_stride = first,
            Decoration::RowMajor => self.row_major = true,
            Decoration::ColMajor => self.row_major = false,
            Decoration::Block => self.block = true,
            Decoration::BufferBlock => self.buffer_block = true,
            Decoration::NonWritable => self.non_writable = true,
            Decoration::NonReadable => self.non_readable = true,
            Decoration::BuiltIn => {
                if let Some(Operand::BuiltIn(b)) = extra.first() {
                    self.builtin = Some(*b);
                }
            }
            _ => {}
        }
    }
}

/// The module's tables, built once.
struct Tables<'m> {
    module: &'m Module,
    names: FxHashMap<Word, String>,
    member_names: FxHashMap<(Word, u32), String>,
    decorations: FxHashMap<Word, Decorations>,
    member_decorations: FxHashMap<(Word, u32), Decorations>,
    /// Types, constants and global variables by result id.
    globals: FxHashMap<Word, &'m Instruction>,
}

impl<'m> Tables<'m> {
    fn new(module: &'m Module) -> Result<Self, ReflectError> {
        let mut t = Tables {
            module,
            names: FxHashMap::default(),
            member_names: FxHashMap::default(),
            decorations: FxHashMap::default(),
            member_decorations: FxHashMap::default(),
            globals: FxHashMap::default(),
        };
        for n in &module.debug_names {
            match (n.class.opcode, n.operands.as_slice()) {
                (Op::Name, [Operand::IdRef(target), Operand::LiteralString(s), ..]) => {
                    t.names.insert(*target, s.clone());
                }
                (Op::MemberName, [Operand::IdRef(target), Operand::LiteralBit32(k), Operand::LiteralString(s), ..]) => {
                    t.member_names.insert((*target, *k), s.clone());
                }
                _ => {}
            }
        }
        for a in &module.annotations {
            match (a.class.opcode, a.operands.as_slice()) {
                (Op::Decorate, [Operand::IdRef(target), Operand::Decoration(d), extra @ ..]) => {
                    t.decorations.entry(*target).or_default().apply(*d, extra);
                }
                (
                    Op::MemberDecorate,
                    [Operand::IdRef(target), Operand::LiteralBit32(k), Operand::Decoration(d), extra @ ..],
                ) => {
                    t.member_decorations.entry((*target, *k)).or_default().apply(*d, extra);
                }
                (Op::DecorationGroup | Op::GroupDecorate | Op::GroupMemberDecorate, _) => {
                    return refuse(format!(
                        "{:?}: decoration groups are not supported (the layout would be read incompletely)",
                        a.class.opcode
                    ))
                }
                _ => {}
            }
        }
        for i in &module.types_global_values {
            if let Some(r) = i.result_id {
                t.globals.insert(r, i);
            }
        }
        Ok(t)
    }

    fn deco(&self, id: Word) -> Decorations {
        self.decorations.get(&id).cloned().unwrap_or_default()
    }

    /// The name of the one member of struct type `id`, when it has exactly one.
    fn single_member_name(&self, id: Word) -> Option<String> {
        let ty = self.globals.get(&id)?;
        (ty.class.opcode == Op::TypeStruct && ty.operands.len() == 1)
            .then(|| self.member_names.get(&(id, 0)).filter(|n| !n.is_empty()).cloned())
            .flatten()
    }

    /// The input key of variable `id` of type `pointee` (a descriptor or the
    /// push-constant block): its `OpName`, else its block's. GLSL's anonymous
    /// `buffer Data { uint x[]; };` names no variable.
    fn variable_name(&self, id: Word, pointee: Word) -> Option<String> {
        self.names.get(&id).filter(|n| !n.is_empty()).cloned().or_else(|| self.block_name(pointee))
    }

    /// The name of a block whose variable has none: its single member's
    /// (`xir::interp::block_member_key`: GLSL's anonymous `buffer Data {
    /// uint x[]; };` is `x`, as the front end names it), else its own;
    /// an unnamed struct of one member (naga's wrapper around a GLSL block)
    /// is looked into for the block it wraps.
    fn block_name(&self, mut id: Word) -> Option<String> {
        loop {
            if let Some(m) = self.single_member_name(id) {
                return Some(xir::interp::block_member_key(&m));
            }
            if let Some(n) = self.names.get(&id).filter(|n| !n.is_empty()) {
                return Some(n.clone());
            }
            let ty = self.globals.get(&id)?;
            if ty.class.opcode != Op::TypeStruct || ty.operands.len() != 1 {
                return None;
            }
            id = id_ref(ty.operands.first())?;
        }
    }

    fn member_deco(&self, id: Word, k: u32) -> Decorations {
        self.member_decorations.get(&(id, k)).cloned().unwrap_or_default()
    }

    /// `%id` with its `OpName` when it has one.
    fn describe(&self, id: Word) -> String {
        match self.names.get(&id).filter(|n| !n.is_empty()) {
            Some(n) => format!("`{n}` (%{id})"),
            None => format!("%{id}"),
        }
    }

    fn global(&self, id: Word, what: &str) -> Result<&'m Instruction, ReflectError> {
        match self.globals.get(&id) {
            Some(i) => Ok(i),
            None => refuse(format!("{what} %{id} is not declared")),
        }
    }

    /// The integer value of a constant: `OpConstant` (or a specialization
    /// constant's default, which is what runs without specialization info).
    fn constant(&self, id: Word, what: &str) -> Result<u64, ReflectError> {
        let i = self.global(id, what)?;
        let value = match (i.class.opcode, i.operands.first()) {
            (Op::Constant | Op::SpecConstant, Some(Operand::LiteralBit32(v))) => Some(u64::from(*v)),
            (Op::Constant | Op::SpecConstant, Some(Operand::LiteralBit64(v))) => Some(*v),
            _ => None,
        };
        match value {
            Some(v) => Ok(v),
            None => refuse(format!(
                "{what} {} is {:?}, not an integer constant this runner can evaluate",
                self.describe(id),
                i.class.opcode
            )),
        }
    }

    fn data_type(&self, id: Word, matrix: Option<(u32, bool)>, depth: usize) -> Result<DataType, ReflectError> {
        if depth > MAX_TYPE_DEPTH {
            return refuse(format!("type %{id} nests deeper than {MAX_TYPE_DEPTH} levels"));
        }
        let i = self.global(id, "type")?;
        let ops = &i.operands;
        let what = || format!("type {} ({:?})", self.describe(id), i.class.opcode);
        Ok(match i.class.opcode {
            Op::TypeInt => DataType::Scalar(self.scalar(id)?),
            Op::TypeFloat => DataType::Scalar(self.scalar(id)?),
            Op::TypeVector => {
                let lanes = literal(ops.get(1)).unwrap_or(0);
                let scalar = self.scalar(id_ref(ops.first()).unwrap_or(0))?;
                if !(2..=4).contains(&lanes) {
                    return refuse(format!("{}: {lanes} lanes (2 to 4 are supported)", what()));
                }
                DataType::Vector { scalar, lanes }
            }
            Op::TypeMatrix => {
                let columns = literal(ops.get(1)).unwrap_or(0);
                let column = self.data_type(id_ref(ops.first()).unwrap_or(0), None, depth + 1)?;
                let DataType::Vector { scalar, lanes: rows } = column else {
                    return refuse(format!("{}: its columns are not vectors", what()));
                };
                let Some((stride, row_major)) = matrix else {
                    return refuse(format!("{}: a matrix without a MatrixStride decoration on its member", what()));
                };
                if !(2..=4).contains(&columns) {
                    return refuse(format!("{}: {columns} columns (2 to 4 are supported)", what()));
                }
                DataType::Matrix { scalar, columns, rows, stride, row_major }
            }
            Op::TypeArray | Op::TypeRuntimeArray => {
                let Some(stride) = self.deco(id).array_stride else {
                    return refuse(format!("{}: an array in a block without an ArrayStride decoration", what()));
                };
                let len = match i.class.opcode {
                    Op::TypeArray => Some(self.constant(id_ref(ops.get(1)).unwrap_or(0), "the length of array")?),
                    _ => None,
                };
                let elem = self.data_type(id_ref(ops.first()).unwrap_or(0), matrix, depth + 1)?;
                if let DataType::Array { len: None, .. } = elem {
                    return refuse(format!("{}: an array of runtime arrays", what()));
                }
                if stride == 0 || u64::from(stride) < elem.extent() {
                    return refuse(format!(
                        "{}: ArrayStride {stride} is smaller than its {}-byte element",
                        what(),
                        elem.extent()
                    ));
                }
                DataType::Array { elem: Box::new(elem), len, stride }
            }
            Op::TypeStruct => DataType::Struct(self.struct_layout(id, depth)?),
            Op::TypeBool => return refuse(format!("{}: a boolean in a block has no defined memory layout", what())),
            _ => return refuse(format!("{}: this runner cannot lay it out in a buffer", what())),
        })
    }

    fn scalar(&self, id: Word) -> Result<Scalar, ReflectError> {
        let i = self.global(id, "type")?;
        let bits = literal(i.operands.first()).unwrap_or(0);
        match (i.class.opcode, i.operands.len()) {
            (Op::TypeInt, 2) if matches!(bits, 8 | 16 | 32 | 64) => {
                Ok(Scalar::Int { bits, signed: literal(i.operands.get(1)) == Some(1) })
            }
            (Op::TypeFloat, 1) if matches!(bits, 16 | 32 | 64) => Ok(Scalar::Float { bits }),
            _ => refuse(format!(
                "type {} ({:?}, {bits} bits): not a scalar this runner encodes (8/16/32/64-bit integers, \
                 16/32/64-bit IEEE floats)",
                self.describe(id),
                i.class.opcode
            )),
        }
    }

    fn struct_layout(&self, id: Word, depth: usize) -> Result<StructLayout, ReflectError> {
        let i = self.global(id, "type")?;
        let mut members = Vec::with_capacity(i.operands.len());
        for (k, op) in i.operands.iter().enumerate() {
            let k = k as u32;
            let d = self.member_deco(id, k);
            let name = self.member_names.get(&(id, k)).filter(|n| !n.is_empty()).cloned();
            let which = || {
                let n = name.as_deref().map(|n| format!(" `{n}`")).unwrap_or_default();
                format!("member {k}{n} of struct {}", self.describe(id))
            };
            let Some(offset) = d.offset else {
                return refuse(format!("{}: no Offset decoration", which()));
            };
            let matrix = d.matrix_stride.map(|s| (s, d.row_major));
            let ty = self
                .data_type(id_ref(Some(op)).unwrap_or(0), matrix, depth + 1)
                .map_err(|e| ReflectError(format!("{}: {e}", which())))?;
            if matches!(ty, DataType::Array { len: None, .. }) && (k as usize) + 1 != i.operands.len() {
                return refuse(format!("{}: a runtime array that is not the last member", which()));
            }
            members.push(Member { name, offset, ty });
        }
        Ok(StructLayout { name: self.names.get(&id).filter(|n| !n.is_empty()).cloned(), members })
    }
}

/// A descriptor variable before its key is chosen; `kind` is the refusal when it cannot be described.
struct Candidate {
    id: Word,
    name: Option<String>,
    set: u32,
    binding: u32,
    kind: Result<VariableKind, ReflectError>,
    non_writable: bool,
    non_readable: bool,
    used: bool,
}

/// Describe the compute entry point `entry` (or the only one) of `words`.
pub fn reflect(words: &[u32], entry: Option<&str>) -> Result<Reflection, ReflectError> {
    if words.len() < 5 {
        return refuse(format!("not a SPIR-V module: {} words, a header alone is 5", words.len()));
    }
    if words[0] != MAGIC {
        return refuse(format!(
            "not a SPIR-V module: the first word is {:#010x}, not the magic number {MAGIC:#010x}",
            words[0]
        ));
    }
    let words = validated(words)?;
    let module = load(&words)?;
    let t = Tables::new(&module)?;
    let (entry_name, entry_fn, interface) = pick_entry(&module, entry)?;
    let workgroup_size = workgroup_size(&t, entry_fn, &entry_name)?;
    let used = used_ids(&module, entry_fn, &interface);

    let mut candidates = Vec::new();
    let mut push_constants = None;
    for i in &module.types_global_values {
        if i.class.opcode != Op::Variable {
            continue;
        }
        let (Some(id), Some(Operand::StorageClass(class))) = (i.result_id, i.operands.first()) else {
            return refuse("an OpVariable without a result id or storage class");
        };
        let is_used = used.contains(&id);
        match class {
            StorageClass::StorageBuffer | StorageClass::Uniform | StorageClass::UniformConstant => {}
            StorageClass::PushConstant if is_used => {
                let pointee = i.result_type.and_then(|p| t.globals.get(&p)).and_then(|p| match p.operands.as_slice() {
                    [Operand::StorageClass(_), Operand::IdRef(pointee)] => Some(*pointee),
                    _ => None,
                });
                let Some(pointee) = pointee else {
                    return refuse(format!("variable {}: its type is not a declared OpTypePointer", t.describe(id)));
                };
                let layout = t
                    .struct_layout(pointee, 0)
                    .map_err(|e| ReflectError(format!("variable {}: {e}", t.describe(id))))?;
                let name = t.variable_name(id, pointee).unwrap_or_else(|| "push_constants".to_string());
                push_constants = Some(PushBlock { name, layout });
                continue;
            }
            StorageClass::PhysicalStorageBuffer | StorageClass::ShaderRecordBufferKHR if is_used => {
                return refuse(format!("variable {}: storage class {class:?} is not supported", t.describe(id)))
            }
            _ => continue,
        }
        let d = t.deco(id);
        let (Some(set), Some(binding)) = (d.set, d.binding) else {
            if is_used {
                return refuse(format!(
                    "variable {} ({class:?}) has no DescriptorSet and Binding decorations",
                    t.describe(id)
                ));
            }
            continue;
        };
        let pointee = i.result_type.and_then(|p| t.globals.get(&p)).and_then(|p| match p.operands.as_slice() {
            [Operand::StorageClass(_), Operand::IdRef(pointee)] if p.class.opcode == Op::TypePointer => Some(*pointee),
            _ => None,
        });
        let Some(pointee) = pointee else {
            return refuse(format!("variable {}: its type is not a declared OpTypePointer", t.describe(id)));
        };
        let kind = describe_variable(&t, id, *class, pointee);
        let (mut non_writable, mut non_readable) = (d.non_writable, d.non_readable);
        if let Ok(VariableKind::StorageBuffer(_) | VariableKind::UniformBuffer(_)) = &kind {
            let n = t.global(pointee, "type")?.operands.len() as u32;
            let all = |f: fn(&Decorations) -> bool| n > 0 && (0..n).all(|k| f(&t.member_deco(pointee, k)));
            non_writable |= all(|d| d.non_writable);
            non_readable |= all(|d| d.non_readable);
        }
        candidates.push(Candidate {
            id,
            name: t.variable_name(id, pointee),
            set,
            binding,
            kind,
            non_writable,
            non_readable,
            used: is_used,
        });
    }
    candidates.sort_by_key(|c| (c.set, c.binding, c.id));
    // Two used variables on one binding would alias one descriptor.
    for w in candidates.iter().filter(|c| c.used).collect::<Vec<_>>().windows(2) {
        if (w[0].set, w[0].binding) == (w[1].set, w[1].binding) {
            return refuse(format!(
                "variables {} and {} share set {} binding {}: aliased descriptors are not supported",
                t.describe(w[0].id),
                t.describe(w[1].id),
                w[0].set,
                w[0].binding
            ));
        }
    }
    let mut seen: FxHashMap<String, u32> = FxHashMap::default();
    let mut taken: FxHashSet<String> = candidates.iter().filter_map(|c| c.name.clone()).collect();
    let (mut variables, mut unused) = (Vec::new(), Vec::new());
    for c in candidates {
        let name = match &c.name {
            Some(n) => {
                let k = seen.entry(n.clone()).or_insert(0);
                *k += 1;
                if *k == 1 {
                    n.clone()
                } else {
                    let mut suffix = *k - 1;
                    while taken.contains(&format!("{n}.{suffix}")) {
                        suffix += 1;
                    }
                    let key = format!("{n}.{suffix}");
                    taken.insert(key.clone());
                    key
                }
            }
            None => format!("set{}.binding{}", c.set, c.binding),
        };
        let kind = match (c.kind, c.used) {
            (Ok(k), _) => k,
            (Err(e), true) => return Err(e),
            (Err(_), false) => continue,
        };
        let v = Variable {
            name,
            id: c.id,
            set: c.set,
            binding: c.binding,
            kind,
            non_writable: c.non_writable,
            non_readable: c.non_readable,
        };
        if c.used {
            variables.push(v);
        } else {
            unused.push(v);
        }
    }
    Ok(Reflection { words, entry_point: entry_name, workgroup_size, variables, unused, push_constants })
}

/// The module as it will run, validated for Vulkan 1.2 by SPIRV-Tools. The
/// validator runs first because rspirv's decoder panics on some malformed
/// streams (a string operand running past its instruction); the validator
/// reports them.
///
/// One repair, for naga: naga 30 decorates every array and struct type with
/// `ArrayStride` / `Offset`, those of `var<workgroup>` too, which SPIRV-Tools
/// rejects since 2025 (`VUID-StandaloneSpirv-None-10684`: explicit layout on
/// a type in Workgroup memory needs `WorkgroupMemoryExplicitLayoutKHR`).
/// Those decorations mean nothing there, so when the validator refuses a
/// module for exactly that reason, the layout decorations of the types
/// reachable only from storage classes without explicit layout are removed
/// and the result must validate; a type shared with a buffer keeps them and
/// the module stays refused.
fn validated(words: &[u32]) -> Result<Vec<u32>, ReflectError> {
    let refused = |e: String| ReflectError(format!("the module fails SPIRV-Tools validation for Vulkan 1.2: {e}"));
    let Err(first) = crate::validate::validate(words) else { return Ok(words.to_vec()) };
    if !first.breaks("VUID-StandaloneSpirv-None-10684") {
        return Err(refused(first.message));
    }
    // The validator parsed the whole module before this check, so rspirv's decoder can read it.
    let repaired = strip_unlaid_layouts(&load(words)?);
    match repaired {
        Some(w) if crate::validate::validate(&w).is_ok() => Ok(w),
        _ => Err(refused(first.message)),
    }
}

/// Whether SPIR-V `version` allows explicit layout decorations on types in `class`
/// (SPIRV-Tools' `AllowsLayout`, without `WorkgroupMemoryExplicitLayoutKHR`).
fn allows_layout(class: StorageClass, version: (u8, u8)) -> bool {
    match class {
        StorageClass::Workgroup | StorageClass::UniformConstant => false,
        StorageClass::Function | StorageClass::Private => version <= (1, 4),
        _ => true,
    }
}

/// `m` without the layout decorations of types reachable only from pointers
/// into storage classes that take none; `None` when there is nothing to remove.
fn strip_unlaid_layouts(m: &Module) -> Option<Vec<u32>> {
    use rspirv::binary::Assemble;
    let version = m.header.as_ref().map(|h| h.version()).unwrap_or((1, 0));
    let types: FxHashMap<Word, &Instruction> =
        m.types_global_values.iter().filter_map(|i| i.result_id.map(|r| (r, i))).collect();
    // The array and struct types under each pointer, by whether its class takes a layout.
    let reach = |roots: Vec<Word>| {
        let mut seen = FxHashSet::default();
        let mut stack = roots;
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            if let Some(i) = types.get(&t) {
                match i.class.opcode {
                    Op::TypeArray | Op::TypeRuntimeArray => stack.extend(id_ref(i.operands.first())),
                    Op::TypeStruct => stack.extend(i.operands.iter().filter_map(|o| id_ref(Some(o)))),
                    _ => {}
                }
            }
        }
        seen
    };
    let (mut laid, mut unlaid) = (Vec::new(), Vec::new());
    for i in &m.types_global_values {
        if let (Op::TypePointer, [Operand::StorageClass(c), Operand::IdRef(pointee)]) =
            (i.class.opcode, i.operands.as_slice())
        {
            if allows_layout(*c, version) {
                laid.push(*pointee);
            } else {
                unlaid.push(*pointee);
            }
        }
    }
    let laid = reach(laid);
    let strip: FxHashSet<Word> = reach(unlaid).into_iter().filter(|t| !laid.contains(t)).collect();
    let layout = |d: &Operand| {
        matches!(
            d,
            Operand::Decoration(
                Decoration::Block
                    | Decoration::BufferBlock
                    | Decoration::Offset
                    | Decoration::ArrayStride
                    | Decoration::MatrixStride
                    | Decoration::RowMajor
                    | Decoration::ColMajor
            )
        )
    };
    let removed = |a: &Instruction| match (a.class.opcode, a.operands.as_slice()) {
        (Op::Decorate, [Operand::IdRef(t), d, ..]) | (Op::MemberDecorate, [Operand::IdRef(t), _, d, ..]) => {
            strip.contains(t) && layout(d)
        }
        _ => false,
    };
    if !m.annotations.iter().any(removed) {
        return None;
    }
    let mut out = m.clone();
    out.annotations.retain(|a| !removed(a));
    Some(out.assemble())
}

/// rspirv's data representation of a validated module; a panic of its
/// decoder (a bug, on a module the validator accepted) is an error too.
fn load(words: &[u32]) -> Result<Module, ReflectError> {
    match std::panic::catch_unwind(|| rspirv::dr::load_words(words)) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => refuse(format!("the SPIR-V does not load: {e}")),
        Err(_) => refuse("the SPIR-V does not load: rspirv's decoder failed on it"),
    }
}

/// The descriptor kind of a variable of storage class `class` pointing at `pointee`.
fn describe_variable(
    t: &Tables<'_>,
    id: Word,
    class: StorageClass,
    pointee: Word,
) -> Result<VariableKind, ReflectError> {
    let var = || format!("variable {}", t.describe(id));
    let ty = t.global(pointee, "type")?;
    match (class, ty.class.opcode) {
        (StorageClass::StorageBuffer | StorageClass::Uniform, Op::TypeStruct) => {
            let d = t.deco(pointee);
            let layout = t.struct_layout(pointee, 0).map_err(|e| ReflectError(format!("{}: {e}", var())))?;
            match (class, d.block, d.buffer_block) {
                (StorageClass::StorageBuffer, true, _) | (StorageClass::Uniform, false, true) => {
                    Ok(VariableKind::StorageBuffer(layout))
                }
                (StorageClass::Uniform, true, _) => {
                    if layout.runtime_array().is_some() {
                        return refuse(format!("{}: a uniform block ending in a runtime array", var()));
                    }
                    Ok(VariableKind::UniformBuffer(layout))
                }
                _ => refuse(format!("{}: its struct {} is not decorated Block", var(), t.describe(pointee))),
            }
        }
        (StorageClass::UniformConstant, Op::TypeImage) => {
            image_layout(t, pointee).map_err(|e| ReflectError(format!("{}: {e}", var())))
        }
        (_, Op::TypeArray | Op::TypeRuntimeArray) => {
            refuse(format!("{}: arrays of descriptors (binding arrays) are not supported", var()))
        }
        (_, Op::TypeSampler | Op::TypeSampledImage) => {
            refuse(format!("{}: samplers and combined image-samplers are not supported (images only)", var()))
        }
        (_, op) => refuse(format!("{}: a {class:?} variable of {op:?} is not a descriptor this runner binds", var())),
    }
}

fn image_layout(t: &Tables<'_>, id: Word) -> Result<VariableKind, ReflectError> {
    let i = t.global(id, "type")?;
    let ops = &i.operands;
    let (
        Some(sampled_ty),
        Some(Operand::Dim(dim)),
        Some(depth),
        Some(arrayed),
        Some(ms),
        Some(sampled),
        Some(Operand::ImageFormat(format)),
    ) = (
        id_ref(ops.first()),
        ops.get(1),
        literal(ops.get(2)),
        literal(ops.get(3)),
        literal(ops.get(4)),
        literal(ops.get(5)),
        ops.get(6),
    )
    else {
        return refuse(format!("image type %{id} is malformed"));
    };
    if sampled != 1 && sampled != 2 {
        return refuse("an image of unknown use (Sampled = 0)");
    }
    let dim = match dim {
        Dim::Dim2D => 2,
        Dim::Dim3D => 3,
        other => return refuse(format!("a {other:?} image: 2D and 3D images only")),
    };
    if depth == 1 || arrayed != 0 || ms != 0 {
        return refuse("a depth, arrayed or multisampled image is not supported");
    }
    let texel = match t.scalar(sampled_ty)? {
        Scalar::Float { bits: 32 } => TexelKind::F32,
        Scalar::Int { bits: 32, signed: true } => TexelKind::I32,
        Scalar::Int { bits: 32, signed: false } => TexelKind::U32,
        s => return refuse(format!("texels of {s:?}: 32-bit float, signed or unsigned only")),
    };
    let fits = matches!(
        (format, texel),
        (ImageFormat::Unknown, _)
            | (ImageFormat::Rgba32f, TexelKind::F32)
            | (ImageFormat::Rgba32i, TexelKind::I32)
            | (ImageFormat::Rgba32ui, TexelKind::U32)
    );
    if !fits {
        return refuse(format!(
            "format {format:?}: the runner creates 32-bit RGBA images only (rgba32float / rgba32sint / rgba32uint)"
        ));
    }
    let layout = ImageLayout { dim, texel, format: *format };
    Ok(if sampled == 2 { VariableKind::StorageImage(layout) } else { VariableKind::SampledImage(layout) })
}

/// The chosen `GLCompute` entry point: its name, function and interface ids.
fn pick_entry(m: &Module, entry: Option<&str>) -> Result<(String, Word, Vec<Word>), ReflectError> {
    let mut compute = Vec::new();
    let mut others = Vec::new();
    for e in &m.entry_points {
        match e.operands.as_slice() {
            [Operand::ExecutionModel(model), Operand::IdRef(f), Operand::LiteralString(name), rest @ ..] => {
                let interface: Vec<Word> = rest.iter().filter_map(|o| id_ref(Some(o))).collect();
                if *model == ExecutionModel::GLCompute {
                    compute.push((name.clone(), *f, interface));
                } else {
                    others.push((name.clone(), *model));
                }
            }
            _ => return refuse("a malformed OpEntryPoint"),
        }
    }
    let names = || compute.iter().map(|c| format!("`{}`", c.0)).collect::<Vec<_>>().join(", ");
    match entry {
        Some(want) => {
            if let Some(c) = compute.iter().find(|c| c.0 == want) {
                return Ok(c.clone());
            }
            if let Some((_, model)) = others.iter().find(|o| o.0 == want) {
                return refuse(format!("entry point `{want}` is a {model:?} entry point, not a compute one"));
            }
            if compute.is_empty() {
                refuse(format!("no GLCompute entry point (asked for `{want}`)"))
            } else {
                refuse(format!("no GLCompute entry point `{want}`; the module has {}", names()))
            }
        }
        None => match compute.len() {
            1 => Ok(compute.remove(0)),
            0 => refuse("the module has no GLCompute entry point"),
            _ => refuse(format!("the module has several GLCompute entry points ({}); choose one by name", names())),
        },
    }
}

/// The workgroup size: a `WorkgroupSize` built-in constant (its components
/// constants or specialization constants, which take their defaults), else
/// the entry's `LocalSize`.
fn workgroup_size(t: &Tables<'_>, entry_fn: Word, entry: &str) -> Result<[u32; 3], ReflectError> {
    let check = |size: [u64; 3], from: &str| -> Result<[u32; 3], ReflectError> {
        if size.contains(&0) || size.iter().any(|&s| s > u64::from(u32::MAX)) {
            return refuse(format!("entry point `{entry}`: workgroup size {size:?} ({from}) is not a valid size"));
        }
        Ok(size.map(|s| s as u32))
    };
    let builtin = t
        .decorations
        .iter()
        .filter(|(_, d)| d.builtin == Some(BuiltIn::WorkgroupSize))
        .map(|(id, _)| *id)
        .filter(|id| t.globals.get(id).is_some_and(|i| i.class.opcode != Op::Variable))
        .min();
    if let Some(id) = builtin {
        let i = t.global(id, "the WorkgroupSize constant")?;
        if !matches!(i.class.opcode, Op::ConstantComposite | Op::SpecConstantComposite) || i.operands.len() != 3 {
            return refuse(format!("the WorkgroupSize built-in {} is not a 3-component constant", t.describe(id)));
        }
        let mut size = [0u64; 3];
        for (k, o) in i.operands.iter().enumerate() {
            size[k] = t.constant(id_ref(Some(o)).unwrap_or(0), "a WorkgroupSize component")?;
        }
        return check(size, "the WorkgroupSize built-in");
    }
    for e in &t.module.execution_modes {
        let ops = &e.operands;
        if id_ref(ops.first()) != Some(entry_fn) {
            continue;
        }
        if let Some(Operand::ExecutionMode(ExecutionMode::LocalSize)) = ops.get(1) {
            let lits: Vec<u64> = ops[2..].iter().filter_map(|o| literal(Some(o))).map(u64::from).collect();
            if lits.len() != 3 {
                return refuse(format!("entry point `{entry}`: a malformed LocalSize"));
            }
            return check([lits[0], lits[1], lits[2]], "LocalSize");
        }
    }
    refuse(format!("entry point `{entry}` has no LocalSize or WorkgroupSize built-in"))
}

/// Every id the entry point's call tree references, and its interface.
fn used_ids(m: &Module, entry_fn: Word, interface: &[Word]) -> FxHashSet<Word> {
    let functions: FxHashMap<Word, &rspirv::dr::Function> =
        m.functions.iter().filter_map(|f| f.def.as_ref().and_then(|d| d.result_id).map(|id| (id, f))).collect();
    let mut used: FxHashSet<Word> = interface.iter().copied().collect();
    let mut visited = FxHashSet::default();
    let mut stack = vec![entry_fn];
    while let Some(f) = stack.pop() {
        if !visited.insert(f) {
            continue;
        }
        let Some(func) = functions.get(&f) else { continue };
        for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
            for o in &inst.operands {
                if let Operand::IdRef(id) = o {
                    used.insert(*id);
                    if inst.class.opcode == Op::FunctionCall {
                        stack.push(*id);
                    }
                }
            }
        }
    }
    used
}
