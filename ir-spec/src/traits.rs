//! Opcode traits: the closed vocabulary the spec may use. Each trait is
//! queried somewhere in the framework, passes or backend; a test scans the
//! sources to prove none is dead.

/// A property of an opcode, declared in `opcodes.ron`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Trait {
    /// Ends a basic block.
    Terminator,
    /// A structured control-flow terminator with role blocks.
    Structured,
    /// Structured loop (Loop / SimpleLoop).
    Loop,
    /// Break / Continue: jumps to a structured target.
    StructuredJump,
    /// Raw CFG branch.
    RawBranch,
    /// Leaves the function (Return / Unreachable / discard).
    FunctionExit,
    /// Has an effect other than its result; never removed as dead.
    SideEffect,
    /// The result is an lvalue (an address).
    Lvalue,
    /// Allocates storage.
    Alloca,
    /// Workgroup-shared storage.
    Shared,
    /// Reads memory.
    MemoryRead,
    /// Writes memory.
    MemoryWrite,
    /// No side effects; result depends only on operands.
    Pure,
    /// Calls a function.
    Call,
    /// An ArithmeticOp.
    Arithmetic,
    /// Binary op whose operands may be swapped.
    Commutative,
    /// Float op whose precision Vulkan leaves to an error bound.
    Transcendental,
    /// Atomic read-modify-write.
    Atomic,
    /// Touches a resource argument.
    Resource,
    /// Ray tracing.
    Ray,
    /// Its result depends on which threads execute it together.
    Convergent,
    /// A block-wide barrier.
    Barrier,
    /// Part of the structured ray-query loop.
    RayQueryLoop,
    /// Autodiff.
    Autodiff,
    /// Marks an outlining region.
    Outline,
    /// Combines the values of a warp's lanes with arithmetic (sum, product,
    /// min, max): a float result depends on the order the lanes are taken
    /// in, which the interpreter bounds and the backend fixes.
    LaneFold,
}

impl Trait {
    pub const ALL: &'static [(Trait, &'static str)] = &[
        (Trait::Terminator, "terminator"),
        (Trait::Structured, "structured"),
        (Trait::Loop, "loop"),
        (Trait::StructuredJump, "structured_jump"),
        (Trait::RawBranch, "raw_branch"),
        (Trait::FunctionExit, "function_exit"),
        (Trait::SideEffect, "side_effect"),
        (Trait::Lvalue, "lvalue"),
        (Trait::Alloca, "alloca"),
        (Trait::Shared, "shared"),
        (Trait::MemoryRead, "memory_read"),
        (Trait::MemoryWrite, "memory_write"),
        (Trait::Pure, "pure"),
        (Trait::Call, "call"),
        (Trait::Arithmetic, "arithmetic"),
        (Trait::Commutative, "commutative"),
        (Trait::Transcendental, "transcendental"),
        (Trait::Atomic, "atomic"),
        (Trait::Resource, "resource"),
        (Trait::Ray, "ray"),
        (Trait::Convergent, "convergent"),
        (Trait::Barrier, "barrier"),
        (Trait::RayQueryLoop, "ray_query_loop"),
        (Trait::Autodiff, "autodiff"),
        (Trait::Outline, "outline"),
        (Trait::LaneFold, "lane_fold"),
    ];

    pub fn from_name(s: &str) -> Option<Trait> {
        Self::ALL.iter().find(|(_, n)| *n == s).map(|(t, _)| *t)
    }

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(t, _)| *t == self).map(|(_, n)| *n).unwrap_or("?")
    }
}

/// A set of traits, as a bit mask.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TraitSet(u64);

impl TraitSet {
    /// The set with these bits (`build.rs` writes the built-in opcodes'
    /// sets as numbers).
    pub const fn from_bits(bits: u64) -> Self {
        TraitSet(bits)
    }
    pub fn bits(self) -> u64 {
        self.0
    }
    pub fn insert(&mut self, t: Trait) {
        self.0 |= 1 << t as u8;
    }
    pub fn contains(self, t: Trait) -> bool {
        self.0 & (1 << t as u8) != 0
    }
}
