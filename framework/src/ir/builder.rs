//! A cursor-style builder: append instructions to a block of one function,
//! interning types and constants in the module as needed.

use smallvec::SmallVec;
use xir_spec::Opcode;

use super::{Block, FuncId, Inst, InstData, Metadata, Module, Payload, TypeId, TypeTable, Value};

pub struct Builder<'m> {
    pub module: &'m mut Module,
    pub func: FuncId,
    block: Option<Block>,
}

impl<'m> Builder<'m> {
    pub fn new(module: &'m mut Module, func: FuncId) -> Self {
        Builder { module, func, block: None }
    }

    pub fn function(&mut self) -> &mut super::Function {
        self.module.func_mut(self.func)
    }

    pub fn create_block(&mut self) -> Block {
        self.function().add_block()
    }

    /// Position at the end of `b`.
    pub fn switch_to(&mut self, b: Block) {
        self.block = Some(b);
    }

    pub fn current_block(&self) -> Option<Block> {
        self.block
    }

    /// Append a fully described instruction at the cursor.
    pub fn push(&mut self, data: InstData) -> Inst {
        let b = self.block.expect("builder has no current block");
        self.function().append_inst(b, data)
    }

    /// Append `opcode` with operands, blocks and result type.
    pub fn op(&mut self, opcode: Opcode, ty: TypeId, operands: &[Value], blocks: &[Block]) -> Value {
        let mut d = InstData::new(opcode, ty);
        d.operands = SmallVec::from_slice(operands);
        d.blocks = SmallVec::from_slice(blocks);
        Value::Inst(self.push(d))
    }

    /// Like `op`, naming the result.
    pub fn named(&mut self, name: &str, opcode: Opcode, ty: TypeId, operands: &[Value]) -> Value {
        let mut d = InstData::new(opcode, ty);
        d.operands = SmallVec::from_slice(operands);
        d.md = Metadata::named(name);
        Value::Inst(self.push(d))
    }

    pub fn binary(&mut self, opcode: Opcode, lhs: Value, rhs: Value) -> Value {
        let ty = self.value_type(lhs);
        self.op(opcode, ty, &[lhs, rhs], &[])
    }

    pub fn compare(&mut self, opcode: Opcode, lhs: Value, rhs: Value) -> Value {
        let ty = self.value_type(lhs);
        let b = self.module.types.with_scalar(ty, TypeTable::BOOL);
        self.op(opcode, b, &[lhs, rhs], &[])
    }

    pub fn alloca(&mut self, ty: TypeId) -> Value {
        self.op(Opcode::Alloca, ty, &[], &[])
    }
    pub fn load(&mut self, addr: Value) -> Value {
        let ty = self.value_type(addr);
        self.op(Opcode::Load, ty, &[addr], &[])
    }
    pub fn store(&mut self, addr: Value, v: Value) {
        self.op(Opcode::Store, TypeTable::VOID, &[addr, v], &[]);
    }
    pub fn br(&mut self, target: Block) {
        self.op(Opcode::Br, TypeTable::VOID, &[], &[target]);
    }
    pub fn cond_br(&mut self, cond: Value, t: Block, f: Block) {
        self.op(Opcode::CondBr, TypeTable::VOID, &[cond], &[t, f]);
    }
    pub fn ret(&mut self, v: Option<Value>) {
        let ops: Vec<Value> = v.into_iter().collect();
        self.op(Opcode::Return, TypeTable::VOID, &ops, &[]);
    }
    pub fn if_(&mut self, cond: Value, t: Block, f: Block, merge: Block) {
        self.op(Opcode::If, TypeTable::VOID, &[cond], &[t, f, merge]);
    }
    pub fn switch(&mut self, v: Value, merge: Block, default: Block, cases: &[(u64, Block)]) {
        let mut d = InstData::new(Opcode::Switch, TypeTable::VOID);
        d.operands.push(v);
        d.blocks.push(merge);
        d.blocks.push(default);
        d.blocks.extend(cases.iter().map(|c| c.1));
        d.payload = Payload::Cases(cases.iter().map(|c| c.0).collect());
        self.push(d);
    }
    pub fn phi(&mut self, ty: TypeId, incoming: &[(Value, Block)]) -> Value {
        let mut d = InstData::new(Opcode::Phi, ty);
        d.operands = incoming.iter().map(|p| p.0).collect();
        d.blocks = incoming.iter().map(|p| p.1).collect();
        Value::Inst(self.push(d))
    }

    pub fn value_type(&self, v: Value) -> TypeId {
        self.module.func(self.func).value_type(self.module, v)
    }
}
