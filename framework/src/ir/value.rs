//! SSA values. A `Value` is a small copyable reference: to an instruction's
//! result, a function argument, a module constant, an undefined value of a
//! type, a special register, or a function (the callee operand of `call`).

use serde::{Deserialize, Serialize};
use xir_spec::SpecialRegister;

use super::{Const, FuncId, Inst, TypeId};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Value {
    Inst(Inst),
    Arg(u32),
    Const(Const),
    Undef(TypeId),
    Reg(#[serde(with = "reg_serde")] SpecialRegister),
    Func(FuncId),
}

impl Value {
    pub fn as_inst(self) -> Option<Inst> {
        match self {
            Value::Inst(i) => Some(i),
            _ => None,
        }
    }
    pub fn as_const(self) -> Option<Const> {
        match self {
            Value::Const(c) => Some(c),
            _ => None,
        }
    }
    /// Values whose uses the function tracks (results and arguments).
    pub fn is_local(self) -> bool {
        matches!(self, Value::Inst(_) | Value::Arg(_))
    }
}

impl From<Inst> for Value {
    fn from(i: Inst) -> Self {
        Value::Inst(i)
    }
}

impl From<Const> for Value {
    fn from(c: Const) -> Self {
        Value::Const(c)
    }
}

mod reg_serde {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};
    use xir_spec::SpecialRegister;

    pub fn serialize<S: Serializer>(r: &SpecialRegister, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SpecialRegister, D::Error> {
        let s = String::deserialize(d)?;
        SpecialRegister::from_name(&s).ok_or_else(|| D::Error::custom(format!("unknown special register `{s}`")))
    }
}

/// One use of a local value: operand `index` of instruction `user`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Use {
    pub user: Inst,
    pub index: u32,
}
