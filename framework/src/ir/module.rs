//! The module: interned types, uniqued constants, and functions (kernels,
//! callables, external declarations) addressed by `FuncId`.

use xir_spec::SpecialRegister;

use super::{Const, ConstData, ConstTable, ConstValue, FloatFormat, FuncId, Function, Type, TypeId, TypeTable, Value};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub types: TypeTable,
    pub consts: ConstTable,
    pub functions: Vec<Function>,
}

impl Module {
    pub fn new() -> Self {
        Self::default()
    }

    /// The module's heap, by part of the core: every function's, plus the
    /// type and constant tables.
    pub fn footprint(&self) -> super::Footprint {
        let mut total = super::Footprint {
            types_and_consts: self.types.heap_bytes() + self.consts.heap_bytes(),
            other: super::footprint::vec_bytes(&self.functions),
            ..Default::default()
        };
        for f in &self.functions {
            total += f.footprint();
        }
        total
    }

    pub fn add_function(&mut self, f: Function) -> FuncId {
        self.functions.push(f);
        FuncId::new(self.functions.len() - 1)
    }

    pub fn func(&self, f: FuncId) -> &Function {
        &self.functions[f.index()]
    }
    pub fn func_mut(&mut self, f: FuncId) -> &mut Function {
        &mut self.functions[f.index()]
    }
    pub fn func_ids(&self) -> impl Iterator<Item = FuncId> {
        (0..self.functions.len()).map(FuncId::new)
    }
    pub fn find_function(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().position(|f| f.name == name).map(FuncId::new)
    }

    /// Keep only the functions for which `keep` holds, renumbering every
    /// `Value::Func` reference. Returns false (and changes nothing) if a kept
    /// function refers to a removed one.
    pub fn retain_functions(&mut self, keep: impl Fn(FuncId, &Function) -> bool) -> bool {
        let keep: Vec<bool> = self.functions.iter().enumerate().map(|(i, f)| keep(FuncId::new(i), f)).collect();
        let mut remap = vec![None; self.functions.len()];
        let mut next = 0;
        for (i, &k) in keep.iter().enumerate() {
            if k {
                remap[i] = Some(FuncId::new(next));
                next += 1;
            }
        }
        for (i, f) in self.functions.iter().enumerate() {
            if !keep[i] {
                continue;
            }
            for (_, inst) in f.all_insts() {
                for v in &f.inst(inst).operands {
                    if let Value::Func(g) = v {
                        if remap[g.index()].is_none() {
                            return false;
                        }
                    }
                }
            }
        }
        let old = std::mem::take(&mut self.functions);
        for (i, mut f) in old.into_iter().enumerate() {
            if !keep[i] {
                continue;
            }
            let insts: Vec<_> = f.all_insts().map(|(_, i)| i).collect();
            for inst in insts {
                let ops = f.inst(inst).operands.clone();
                for (k, v) in ops.iter().enumerate() {
                    if let Value::Func(g) = v {
                        f.set_operand(inst, k, Value::Func(remap[g.index()].expect("checked above")));
                    }
                }
            }
            self.functions.push(f);
        }
        true
    }

    /// The type of a module-level value (constants, undef, registers, functions).
    /// Function values have type void. Local values need `Function::value_type`.
    pub fn value_type(&self, v: Value) -> TypeId {
        match v {
            Value::Const(c) => self.consts.get(c).ty,
            Value::Undef(t) => t,
            Value::Reg(r) => self.register_type(r),
            _ => TypeTable::VOID,
        }
    }

    /// The type of a special register, from `registers.ron`.
    pub fn register_type(&self, r: SpecialRegister) -> TypeId {
        let spec = xir_spec::spec().register(r);
        match &*spec.ty {
            "u32" => TypeTable::U32,
            "vec<u32, 3>" => {
                self.types.lookup(&Type::Vector { elem: TypeTable::U32, lanes: 3 }).unwrap_or(TypeTable::VOID)
            }
            "vec<f32, 2>" => {
                self.types.lookup(&Type::Vector { elem: TypeTable::F32, lanes: 2 }).unwrap_or(TypeTable::VOID)
            }
            _ => TypeTable::VOID,
        }
    }

    /// Intern the types of every special register (so `register_type` can
    /// answer through a shared borrow).
    pub fn intern_register_types(&mut self) {
        self.types.vector(TypeTable::U32, 3);
        self.types.vector(TypeTable::F32, 2);
    }

    // ---- constants ------------------------------------------------------

    pub fn const_scalar(&mut self, ty: TypeId, bits: u64) -> Value {
        Value::Const(self.consts.intern(ConstData { ty, value: ConstValue::Scalar(bits) }))
    }
    pub fn const_composite(&mut self, ty: TypeId, members: Vec<Const>) -> Value {
        Value::Const(self.consts.intern(ConstData { ty, value: ConstValue::Composite(members) }))
    }
    pub fn const_bool(&mut self, b: bool) -> Value {
        self.const_scalar(TypeTable::BOOL, b as u64)
    }
    pub fn const_u32(&mut self, v: u32) -> Value {
        self.const_scalar(TypeTable::U32, v as u64)
    }
    pub fn const_i32(&mut self, v: i32) -> Value {
        self.const_scalar(TypeTable::I32, v as u32 as u64)
    }
    pub fn const_f32(&mut self, v: f32) -> Value {
        self.const_scalar(TypeTable::F32, v.to_bits() as u64)
    }
    pub fn const_f64(&mut self, v: f64) -> Value {
        let t = self.types.float(FloatFormat::F64);
        self.const_scalar(t, v.to_bits())
    }
    /// An integer constant of any integer type, truncated to its width.
    pub fn const_int(&mut self, ty: TypeId, v: i128) -> Value {
        let bits = self.types.scalar_bits(ty);
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        self.const_scalar(ty, (v as u64) & mask)
    }

    /// Scalar bits of a constant value, if it is a scalar constant.
    pub fn const_bits(&self, v: Value) -> Option<u64> {
        match self.consts.get(v.as_const()?).value {
            ConstValue::Scalar(b) => Some(b),
            _ => None,
        }
    }

    /// A constant integer's value, sign-extended per its type.
    pub fn const_int_value(&self, v: Value) -> Option<i128> {
        let c = v.as_const()?;
        let data = self.consts.get(c);
        let ConstValue::Scalar(bits) = data.value else { return None };
        match self.types.get(data.ty) {
            Type::Int { bits: w, signed } => Some(sign_extend(bits, *w as u32, *signed)),
            Type::Bool => Some(bits as i128),
            _ => None,
        }
    }

    /// Total live instruction count over all functions.
    pub fn inst_count(&self) -> usize {
        self.functions.iter().map(|f| f.inst_count()).sum()
    }
}

/// Interpret the low `width` bits of `bits` as signed or unsigned.
pub fn sign_extend(bits: u64, width: u32, signed: bool) -> i128 {
    if width >= 64 {
        return if signed { bits as i64 as i128 } else { bits as i128 };
    }
    let masked = bits & ((1u64 << width) - 1);
    if signed && masked >> (width - 1) & 1 == 1 {
        masked as i128 - (1i128 << width)
    } else {
        masked as i128
    }
}
