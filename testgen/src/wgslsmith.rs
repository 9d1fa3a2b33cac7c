//! Random, well-defined WGSL compute programs from a seed, in the spirit of
//! wgslsmith, for differential testing of the WGSL front end.
//!
//! [`generate`] is a pure function of its seed and [`Config`]: the same seed
//! gives the same [`Program`] (source text, interpreter inputs, dispatch
//! size) on every machine, so a failing seed is a complete reproducer.
//!
//! # How it is meant to be used
//!
//! A differential runner (wired by the front end's author, not here) loops
//! over seeds and, for each [`Program`]:
//!
//! 1. translates `source` with the WGSL front end to XIR and runs the kernel
//!    in the reference interpreter (`xir::interp`) with
//!    `xir::interp::Inputs::from_json(&program.inputs_json)`;
//! 2. runs the same XIR through the SPIR-V backend on a device, and naga's
//!    own SPIR-V for `source` (the `oracle` module) on the same device, with
//!    the same inputs;
//! 3. compares the `output` buffers bit for bit
//!    (`Outputs::first_mismatch(.., |_, _| false)`): every program is exact
//!    (see below), so no tolerance is needed.
//!
//! A mismatch names the seed; `generate(seed, &cfg).source` is the test case.
//!
//! # The programs
//!
//! One entry point, `@compute @workgroup_size(N) fn main(@builtin(
//! global_invocation_id) gid: vec3<u32>)`, a one-dimensional dispatch of a
//! whole number of workgroups, and these bindings (group 0):
//!
//! - binding 0: `var<storage, read> input: array<T>` with T one of `u32`,
//!   `i32`, `f32` (chosen per program), never empty;
//! - binding 1: `var<storage, read_write> output: array<u32>`: invocation
//!   `gid.x` owns the [`Config::out_slots`] slots from `gid.x * out_slots`
//!   and writes only those (so no two invocations race); the last statement
//!   of `main` writes a checksum of its variables to the first of them;
//! - binding 2 (optional): `var<uniform> param: u32`.
//!
//! The body mixes nested `if` / `else`, `switch` (always with a default,
//! sometimes sharing a case), `for`, `while`, `loop` with and without
//! `continuing { break if }`, `break`, `continue` and early `return`; `let`,
//! `var`, module `const`s; i32 / u32 / f32 / bool expressions with
//! arithmetic, comparisons, bit operations, shifts, `select`, integer and
//! float built-ins, conversions and `bitcast`; local arrays and structs;
//! helper functions (value-returning ones, and ones that modify a caller's
//! variable through a `ptr<function, T>` argument); optionally a
//! `var<workgroup>` array exchanged across a `workgroupBarrier()`, and
//! non-square matrices ([`Config::matrices`]).
//!
//! # Why every program is well defined and exact
//!
//! - Termination: every loop has its own `u32` counter, which only the loop
//!   header (or `continuing`, or the first statement of the body) changes,
//!   bounded by a constant of at most [`Config::max_loop_trips`] (possibly
//!   through `min(e, N)`). Loops nest at most [`Config::max_loop_nest`] deep,
//!   counting the loops of called helpers, which bounds the work.
//! - Memory: local arrays are indexed by a constant below their length or by
//!   `e % N`; `input` by `e % arrayLength(&input)`; `output` only in the
//!   invocation's own slots. Workgroup memory is written once before the
//!   barrier (each invocation its own slot) and only read after it.
//! - Integers: i32 / u32 arithmetic wraps at run time in WGSL; integer
//!   division and remainder by zero and `i32::MIN / -1` are defined
//!   (`x / 0 = x`, `x % 0 = 0`, `MIN / -1 = MIN`, `MIN % -1 = 0`), and
//!   naga's SPIR-V guards them, so they are generated freely. What WGSL
//!   makes a *shader-creation* error is never emitted: every operation has
//!   at least one run-time operand (so nothing is constant-folded, where
//!   overflow would be an error), a constant divisor is never zero, a
//!   constant shift amount is below 32, `extractBits` / `insertBits` take
//!   constant offsets and counts that fit, `clamp` takes constant bounds
//!   with low <= high.
//! - Shifts: a run-time shift amount is masked (`e & 31u`) unless
//!   [`Config::mask_shift_amounts`] is off. WGSL itself takes the amount
//!   modulo 32, but naga 30's SPIR-V writer emits the shift unmasked, which
//!   SPIR-V leaves undefined for amounts >= 32; masking keeps naga's SPIR-V
//!   usable as an oracle. Turn it off to test the front end's own handling
//!   of WGSL's rule.
//! - Floats: every f32 value is an integer of magnitude at most 2^24
//!   (inputs are integers in [-1024, 1024]; conversions from integers are of
//!   masked or clamped values; `*`, `+` and `-` are emitted only when the
//!   magnitude bounds of their operands keep the result within 2^24;
//!   `floor` / `ceil` / `round` / `trunc` take `e * 0.5`, and round the
//!   halves back to integers; stores to f32 variables clamp to +-65536;
//!   a non-square matrix's components are clamped to +-8, so its sums and
//!   products stay below 2^11 in any order of evaluation).
//!   So every f32 operation is exact, no NaN or infinity ever appears, and
//!   results compare bit for bit. The sign of a zero is never observable:
//!   floats reach integers only through comparisons, conversions
//!   (`i32(f)`, `u32(max(f, 0.0))`) and `bitcast<u32>(abs(f) + 1.0)`.
//!   Float-to-int conversions are always in range (`u32` takes
//!   `max(f, 0.0)`), so no saturation rule is relied on.
//! - Pointers: a `ptr<function, T>` argument is always `&v` of a whole local
//!   variable (naga 30's SPIR-V writer panics on pointers to array elements
//!   or struct members passed to functions), never a loop counter.
//! - Barriers: the only `workgroupBarrier()` is at the top level of `main`,
//!   before any control flow, reached by every invocation.
//!
//! [`generate`]: crate::wgslsmith::generate
//! [`Config`]: crate::wgslsmith::Config
//! [`Program`]: crate::wgslsmith::Program
//! [`Config::out_slots`]: crate::wgslsmith::Config::out_slots
//! [`Config::max_loop_trips`]: crate::wgslsmith::Config::max_loop_trips
//! [`Config::max_loop_nest`]: crate::wgslsmith::Config::max_loop_nest
//! [`Config::mask_shift_amounts`]: crate::wgslsmith::Config::mask_shift_amounts

use crate::SplitMix64;
use std::fmt::Write as _;

/// Knobs of the generator. [`Config::default`] is what the tests use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Deepest nesting of `if` / `switch` / loops inside one function.
    pub max_block_depth: u32,
    /// Most statements in one block (before a closing `break` / `continue`).
    pub max_block_stmts: u32,
    /// Deepest nesting of operators in one expression.
    pub max_expr_depth: u32,
    /// Most helper functions besides `main`.
    pub max_helpers: u32,
    /// Largest trip count of any loop (its constant bound).
    pub max_loop_trips: u32,
    /// Deepest nesting of loops, counting the loops inside called helpers:
    /// with `max_loop_trips` it bounds the iterations per invocation by
    /// `max_loop_trips ^ max_loop_nest`.
    pub max_loop_nest: u32,
    /// `output` slots owned by each invocation (at least 1).
    pub out_slots: u32,
    /// Mask run-time shift amounts with `& 31u` (see the module docs).
    pub mask_shift_amounts: bool,
    /// Allow the `var<workgroup>` exchange across a `workgroupBarrier()`.
    pub workgroup_memory: bool,
    /// Allow f32 values taken from non-square matrix arithmetic (products
    /// with vectors, scalars and matrices, sums, `transpose`). Off by
    /// default so that every seed keeps the program it had before this
    /// knob (the seeds the differential test lists are such programs);
    /// the differential test runs a batch of its own with it on.
    pub matrices: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_block_depth: 3,
            max_block_stmts: 4,
            max_expr_depth: 3,
            max_helpers: 3,
            max_loop_trips: 5,
            max_loop_nest: 3,
            out_slots: 4,
            mask_shift_amounts: true,
            workgroup_memory: true,
            matrices: false,
        }
    }
}

/// One generated program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The WGSL module.
    pub source: String,
    /// Interpreter inputs (`docs/inputs-format.md`), keyed by the WGSL
    /// variable names: `input`, `output` (`{"fill": 0, "len": n}`) and,
    /// when declared, `param`; `dispatch` equals [`Program::dispatch`].
    pub inputs_json: String,
    /// Invocations in each dimension: a whole number of workgroups in x,
    /// 1 in y and z.
    pub dispatch: [u32; 3],
    /// The entry point's `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// Which constructs the program contains, and how often.
    pub features: FeatureLog,
}

/// A construct the generator can emit; [`FeatureLog`] counts them so tests
/// can check that a run of seeds covers everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// `if` without `else`.
    If,
    /// `if` with `else` or `else if`.
    IfElse,
    /// `switch` (always with a `default`).
    Switch,
    /// A switch clause with several selectors, or a selector sharing the
    /// `default` clause.
    SwitchSharedCase,
    /// `break` out of a switch clause.
    SwitchBreak,
    /// `for` loop.
    For,
    /// `while` loop.
    While,
    /// `loop` without `continuing`, left by `break`.
    Loop,
    /// `loop` with `continuing { ... break if ...; }`.
    LoopContinuing,
    /// `break` out of a loop.
    Break,
    /// `continue`.
    Continue,
    /// A loop bound of the form `min(e, N)`.
    RuntimeTripBound,
    /// `return` before the end of a function.
    EarlyReturn,
    /// i32 `+ - *`.
    I32Arith,
    /// u32 `+ - *`.
    U32Arith,
    /// f32 `+ - *`.
    F32Arith,
    /// Integer `/` or `%` with a run-time divisor.
    DivRem,
    /// `& | ^ ~`.
    BitOps,
    /// `<<` or `>>`.
    Shift,
    /// `<< >>` whose amount is a run-time value, not masked.
    RawShiftAmount,
    /// `< <= > >= == !=`.
    Compare,
    /// `&& || !`.
    Logical,
    /// `select`.
    Select,
    /// `min max clamp abs sign` on integers.
    IntBuiltin,
    /// `countOneBits countLeadingZeros countTrailingZeros reverseBits
    /// firstLeadingBit firstTrailingBit extractBits insertBits`.
    BitBuiltin,
    /// `min max clamp abs sign floor ceil round trunc` on f32.
    FloatBuiltin,
    /// Value conversions `u32(..) i32(..) f32(..)` between types.
    Conversion,
    /// `bitcast<T>(..)`.
    Bitcast,
    /// A local `array<T, N>` variable.
    LocalArray,
    /// A local struct variable.
    Struct,
    /// A call to a value-returning helper.
    HelperCall,
    /// A call to a helper taking a `ptr<function, T>`.
    PtrHelperCall,
    /// The `var<uniform> param: u32`.
    Uniform,
    /// `var<workgroup>` and `workgroupBarrier()`.
    WorkgroupBarrier,
    /// `+= -= *= /= %= &= |= ^= <<= >>=`.
    CompoundAssign,
    /// `++` / `--`.
    IncDec,
    /// A module-scope `const`.
    ModuleConst,
    /// A `let` declaration.
    Let,
    /// A read of `input` converted to another type.
    InputConversion,
    /// A read back from the invocation's own `output` slots.
    OutputReadBack,
    /// An f32 from non-square matrix arithmetic ([`Config::matrices`]).
    NonSquareMatrix,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: [Feature; 41] = [
        Feature::If,
        Feature::IfElse,
        Feature::Switch,
        Feature::SwitchSharedCase,
        Feature::SwitchBreak,
        Feature::For,
        Feature::While,
        Feature::Loop,
        Feature::LoopContinuing,
        Feature::Break,
        Feature::Continue,
        Feature::RuntimeTripBound,
        Feature::EarlyReturn,
        Feature::I32Arith,
        Feature::U32Arith,
        Feature::F32Arith,
        Feature::DivRem,
        Feature::BitOps,
        Feature::Shift,
        Feature::RawShiftAmount,
        Feature::Compare,
        Feature::Logical,
        Feature::Select,
        Feature::IntBuiltin,
        Feature::BitBuiltin,
        Feature::FloatBuiltin,
        Feature::Conversion,
        Feature::Bitcast,
        Feature::LocalArray,
        Feature::Struct,
        Feature::HelperCall,
        Feature::PtrHelperCall,
        Feature::Uniform,
        Feature::WorkgroupBarrier,
        Feature::CompoundAssign,
        Feature::IncDec,
        Feature::ModuleConst,
        Feature::Let,
        Feature::InputConversion,
        Feature::OutputReadBack,
        Feature::NonSquareMatrix,
    ];
}

/// How many times a program uses each [`Feature`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureLog {
    counts: [u32; Feature::ALL.len()],
}

impl Default for FeatureLog {
    fn default() -> Self {
        Self { counts: [0; Feature::ALL.len()] }
    }
}

impl FeatureLog {
    /// Uses of `f`.
    pub fn count(&self, f: Feature) -> u32 {
        self.counts[f as usize]
    }

    /// Whether the program uses `f` at all.
    pub fn contains(&self, f: Feature) -> bool {
        self.count(f) > 0
    }

    /// Every feature with its count, in [`Feature::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Feature, u32)> + '_ {
        Feature::ALL.into_iter().map(|f| (f, self.count(f)))
    }

    /// Adds the counts of `other` (coverage over a run of seeds).
    pub fn add(&mut self, other: &FeatureLog) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
    }

    fn note(&mut self, f: Feature) {
        self.counts[f as usize] += 1;
    }
}

/// Generates the program of `seed` under `cfg` (a pure function of both).
pub fn generate(seed: u64, cfg: &Config) -> Program {
    Gen::new(seed, cfg).program()
}

/// The f32 magnitude every expression stays within: integers up to 2^24
/// are exact in f32, so `+ - *` on them are exact.
const F32_LIMIT: f64 = 16_777_216.0;
/// The f32 magnitude stored variables are clamped to.
const F32_VAR_BOUND: f64 = 65_536.0;
/// The clamp applied to f32 values on their way into a variable.
const F32_VAR_CLAMP: &str = "-65536.0f, 65536.0f";
/// Workgroup sizes to choose from.
const WORKGROUP_SIZES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The generator's random choices over SplitMix64 (one stream per seed).
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next()
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + i64::from(self.below((hi - lo + 1) as u32))
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    U32,
    I32,
    F32,
    Bool,
}

impl Ty {
    fn wgsl(self) -> &'static str {
        match self {
            Ty::U32 => "u32",
            Ty::I32 => "i32",
            Ty::F32 => "f32",
            Ty::Bool => "bool",
        }
    }
}

/// A generated expression: its text, whether WGSL treats it as a
/// const-expression (only literals and module constants are), and for f32
/// the largest magnitude it can take.
struct E {
    code: String,
    konst: bool,
    bound: f64,
}

impl E {
    fn rt(code: String, bound: f64) -> E {
        E { code, konst: false, bound }
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Scalar(Ty),
    Array(Ty, u32),
    /// Index into `Gen::structs`.
    Struct(usize),
}

#[derive(Clone, Debug)]
struct Var {
    /// How the variable is spelled in expressions (`v3`, `(*p)`).
    name: String,
    kind: Kind,
    /// May be assigned (a `var` or pointer target, not a `let`/parameter).
    mutable: bool,
    /// A loop counter: readable, never written by the body.
    counter: bool,
    /// A whole local `var` that may be passed as `&name`.
    addressable: bool,
    /// For f32 scalars: the largest magnitude it holds.
    bound: f64,
}

struct StructDef {
    name: String,
    fields: Vec<(String, Ty)>,
}

#[derive(Clone)]
struct Helper {
    name: String,
    params: Vec<Ty>,
    /// `Some(T)`: returns T; `None`: takes `ptr<function, T>` first (its
    /// type in `ptr_ty`) and returns nothing.
    ret: Option<Ty>,
    ptr_ty: Option<Ty>,
    /// Deepest loop nesting inside, calls included.
    loops: u32,
}

/// What kind of statement encloses the current point, innermost last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Enclosing {
    Loop,
    Switch,
}

struct Gen<'c> {
    rng: Rng,
    cfg: &'c Config,
    log: FeatureLog,
    out: String,
    indent: usize,
    next_name: u32,
    vars: Vec<Var>,
    structs: Vec<StructDef>,
    consts: Vec<(String, Ty, String, f64)>,
    helpers: Vec<Helper>,
    input_ty: Ty,
    has_param: bool,
    // Per function:
    in_main: bool,
    ret: Option<Ty>,
    enclosing: Vec<Enclosing>,
    loop_depth: u32,
    fn_loops: u32,
}

impl<'c> Gen<'c> {
    fn new(seed: u64, cfg: &'c Config) -> Self {
        Gen {
            rng: Rng(SplitMix64(seed)),
            cfg,
            log: FeatureLog::default(),
            out: String::new(),
            indent: 0,
            next_name: 0,
            vars: Vec::new(),
            structs: Vec::new(),
            consts: Vec::new(),
            helpers: Vec::new(),
            input_ty: Ty::U32,
            has_param: false,
            in_main: false,
            ret: None,
            enclosing: Vec::new(),
            loop_depth: 0,
            fn_loops: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name - 1)
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn program(mut self) -> Program {
        let wg = self.rng.pick(&WORKGROUP_SIZES);
        let groups = 1 + self.rng.below(4);
        let threads = wg * groups;
        self.input_ty = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32]);
        self.has_param = self.rng.chance(50);
        let use_wg = self.cfg.workgroup_memory && self.rng.chance(30);

        // Module scope: bindings, constants, structs.
        self.line(&format!("// wgslsmith program; workgroup size {wg}, {groups} workgroup(s)."));
        self.line(&format!("@group(0) @binding(0) var<storage, read> input: array<{}>;", self.input_ty.wgsl()));
        self.line("@group(0) @binding(1) var<storage, read_write> output: array<u32>;");
        if self.has_param {
            self.line("@group(0) @binding(2) var<uniform> param: u32;");
            self.log.note(Feature::Uniform);
        }
        if use_wg {
            self.line(&format!("var<workgroup> wg: array<u32, {wg}>;"));
        }
        for _ in 0..self.rng.below(3) {
            let name = self.fresh("K");
            let ty = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32]);
            let lit = self.literal(ty);
            self.line(&format!("const {name}: {} = {};", ty.wgsl(), lit.code));
            self.consts.push((name, ty, lit.code, lit.bound));
        }
        for _ in 0..self.rng.below(3) {
            let name = self.fresh("S");
            let n = 2 + self.rng.below(3);
            let fields: Vec<(String, Ty)> =
                (0..n).map(|k| (format!("m{k}"), self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32, Ty::Bool]))).collect();
            self.line(&format!("struct {name} {{"));
            for (f, ty) in &fields {
                self.line(&format!("    {f}: {},", ty.wgsl()));
            }
            self.line("}");
            self.structs.push(StructDef { name, fields });
        }

        for _ in 0..self.rng.below(self.cfg.max_helpers + 1) {
            self.helper();
        }
        self.main(wg, use_wg);

        let inputs_json = self.inputs_json(threads);
        Program {
            source: self.out,
            inputs_json,
            dispatch: [threads, 1, 1],
            workgroup_size: [wg, 1, 1],
            features: self.log,
        }
    }

    fn inputs_json(&mut self, threads: u32) -> String {
        let len = 1 + self.rng.below(32);
        let values: Vec<String> = (0..len)
            .map(|_| match self.input_ty {
                Ty::U32 => {
                    let v = match self.rng.below(4) {
                        0 => self.rng.pick(&[0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff]),
                        1 => self.rng.next() as u32,
                        _ => self.rng.below(100),
                    };
                    v.to_string()
                }
                Ty::I32 => {
                    let v = match self.rng.below(4) {
                        0 => self.rng.pick(&[0, -1, 1, i32::MIN, i32::MAX]),
                        1 => self.rng.next() as i32,
                        _ => self.rng.range(-100, 100) as i32,
                    };
                    v.to_string()
                }
                // Integers in [-1024, 1024] (the bound the f32 reasoning
                // assumes for `input`).
                _ => format!("{}.0", self.rng.range(-1024, 1024)),
            })
            .collect();
        let mut json = format!(
            "{{\"dispatch\": [{threads}, 1, 1], \"args\": {{\"input\": [{}], \"output\": {{\"fill\": 0, \"len\": {}}}",
            values.join(", "),
            threads * self.cfg.out_slots.max(1)
        );
        if self.has_param {
            let p = if self.rng.chance(70) { self.rng.below(16) } else { self.rng.next() as u32 };
            let _ = write!(json, ", \"param\": {p}");
        }
        json.push_str("}}");
        json
    }

    // ---- functions ----

    fn begin_fn(&mut self, in_main: bool, ret: Option<Ty>) {
        self.in_main = in_main;
        self.ret = ret;
        self.vars.clear();
        self.enclosing.clear();
        self.loop_depth = 0;
        self.fn_loops = 0;
    }

    fn helper(&mut self) {
        let name = self.fresh("fun");
        let ptr_helper = self.rng.chance(40);
        let ret = if ptr_helper { None } else { Some(self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32, Ty::Bool])) };
        let ptr_ty = if ptr_helper { Some(self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32])) } else { None };
        self.begin_fn(false, ret);
        let mut params = Vec::new();
        let mut sig = Vec::new();
        if let Some(t) = ptr_ty {
            sig.push(format!("p: ptr<function, {}>", t.wgsl()));
            self.vars.push(Var {
                name: "(*p)".into(),
                kind: Kind::Scalar(t),
                mutable: true,
                counter: false,
                addressable: false,
                bound: F32_VAR_BOUND,
            });
        }
        for k in 0..self.rng.below(4) {
            let t = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32, Ty::Bool]);
            let pname = format!("a{k}");
            sig.push(format!("{pname}: {}", t.wgsl()));
            self.vars.push(Var {
                name: pname,
                kind: Kind::Scalar(t),
                mutable: false,
                counter: false,
                addressable: false,
                bound: F32_VAR_BOUND,
            });
            params.push(t);
        }
        let ret_text = ret.map(|t| format!(" -> {}", t.wgsl())).unwrap_or_default();
        self.line(&format!("fn {name}({}){ret_text} {{", sig.join(", ")));
        self.indent += 1;
        let depth = self.cfg.max_block_depth.saturating_sub(1);
        self.block_body(depth);
        if let Some(t) = ret {
            let e = self.stored_expr(t, self.cfg.max_expr_depth);
            self.line(&format!("return {};", e.code));
        }
        self.indent -= 1;
        self.line("}");
        let loops = self.fn_loops;
        self.helpers.push(Helper { name, params, ret, ptr_ty, loops });
    }

    fn main(&mut self, wg: u32, use_wg: bool) {
        self.begin_fn(true, None);
        self.line(&format!("@compute @workgroup_size({wg})"));
        self.line("fn main(@builtin(global_invocation_id) gid: vec3<u32>) {");
        self.indent += 1;
        let slots = self.cfg.out_slots.max(1);
        self.line(&format!("let base = gid.x * {slots}u;"));
        if use_wg {
            self.log.note(Feature::WorkgroupBarrier);
            self.line(&format!("let lidx = gid.x % {wg}u;"));
            // Before the barrier: no calls, so control flow stays uniform.
            let saved = std::mem::take(&mut self.helpers);
            let e = self.expr(Ty::U32, 2, true);
            self.helpers = saved;
            self.line(&format!("wg[lidx] = {};", e.code));
            self.line("workgroupBarrier();");
            self.line(&format!("let wgv = wg[(lidx + 1u) % {wg}u];"));
            self.vars.push(Var {
                name: "wgv".into(),
                kind: Kind::Scalar(Ty::U32),
                mutable: false,
                counter: false,
                addressable: false,
                bound: 0.0,
            });
        }
        // The body of main is the larger part of the program: between one
        // and two blocks' worth of statements.
        let max = self.cfg.max_block_stmts.max(1);
        let n = max + self.rng.below(max + 1);
        self.block_stmts(self.cfg.max_block_depth, n);
        // The checksum of every variable still in scope.
        let mut terms = Vec::new();
        for v in self.vars.clone() {
            match v.kind {
                Kind::Scalar(t) => terms.push(as_u32(&v.name, t)),
                Kind::Array(t, n) => {
                    for k in 0..n {
                        terms.push(as_u32(&format!("{}[{k}]", v.name), t));
                    }
                }
                Kind::Struct(s) => {
                    for (f, t) in &self.structs[s].fields {
                        terms.push(as_u32(&format!("{}.{f}", v.name), *t));
                    }
                }
            }
        }
        self.line("var checksum = 0u;");
        for t in terms {
            self.line(&format!("checksum = checksum * 31u + {t};"));
        }
        self.line("output[base] = checksum;");
        self.indent -= 1;
        self.line("}");
    }

    // ---- statements ----

    /// Statements of one block; declarations made here go out of scope at
    /// its end.
    fn block_body(&mut self, depth: u32) {
        let scope = self.vars.len();
        let n = 1 + self.rng.below(self.cfg.max_block_stmts.max(1));
        self.block_stmts(depth, n);
        self.vars.truncate(scope);
    }

    /// `n` statements of one block, its declarations left in scope.
    fn block_stmts(&mut self, depth: u32, n: u32) {
        for _ in 0..n {
            self.stmt(depth);
        }
        // A closing `break` / `continue`, as the last statement only.
        if !self.enclosing.is_empty() && self.rng.chance(15) {
            if self.enclosing.contains(&Enclosing::Loop) && self.rng.chance(50) {
                self.log.note(Feature::Continue);
                self.line("continue;");
            } else {
                self.note_break();
                self.line("break;");
            }
        }
    }

    fn note_break(&mut self) {
        match self.enclosing.last() {
            Some(Enclosing::Loop) => self.log.note(Feature::Break),
            _ => self.log.note(Feature::SwitchBreak),
        }
    }

    fn nested(&mut self, depth: u32) {
        self.indent += 1;
        self.block_body(depth);
        self.indent -= 1;
    }

    fn stmt(&mut self, depth: u32) {
        let can_nest = depth > 0;
        let can_loop = can_nest && self.loop_depth < self.cfg.max_loop_nest;
        loop {
            match self.rng.below(16) {
                0 | 1 => return self.decl(),
                // Assignments, pointer calls and compound assignments may find
                // no target; then another statement is drawn.
                2..=4 if self.assign() => return,
                5 if can_nest => return self.if_stmt(depth - 1),
                6 if can_nest => return self.switch_stmt(depth - 1),
                7 | 8 if can_loop => return self.loop_stmt(depth - 1),
                9 if !self.enclosing.is_empty() => {
                    // A conditional break / continue.
                    let c = self.expr(Ty::Bool, 2, true);
                    self.line(&format!("if {} {{", c.code));
                    if self.enclosing.contains(&Enclosing::Loop) && self.rng.chance(50) {
                        self.log.note(Feature::Continue);
                        self.line("    continue;");
                    } else {
                        self.note_break();
                        self.line("    break;");
                    }
                    self.log.note(Feature::If);
                    self.line("}");
                    return;
                }
                // Not at the top level of main, which would end most
                // invocations before they do anything.
                10 if self.rng.chance(40) && !(self.in_main && depth == self.cfg.max_block_depth) => {
                    let c = self.expr(Ty::Bool, 2, true);
                    self.line(&format!("if {} {{", c.code));
                    let r = match self.ret {
                        Some(t) => format!("return {};", self.stored_expr(t, 2).code),
                        None => "return;".into(),
                    };
                    self.line(&format!("    {r}"));
                    self.line("}");
                    self.log.note(Feature::If);
                    self.log.note(Feature::EarlyReturn);
                    return;
                }
                11 if self.ptr_call() => return,
                12 | 13 if self.in_main => return self.output_write(),
                14 if self.compound() => return,
                15 => {
                    let t = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32, Ty::Bool]);
                    let e = self.expr(t, self.cfg.max_expr_depth, true);
                    let name = self.fresh("v");
                    self.line(&format!("let {name} = {};", e.code));
                    self.log.note(Feature::Let);
                    let bound = e.bound;
                    self.push_scalar(name, t, false, bound);
                    return;
                }
                _ => {}
            }
        }
    }

    fn push_scalar(&mut self, name: String, t: Ty, mutable: bool, bound: f64) {
        self.vars.push(Var { name, kind: Kind::Scalar(t), mutable, counter: false, addressable: mutable, bound });
    }

    /// A new `var`: scalar, array or struct.
    fn decl(&mut self) {
        match self.rng.below(4) {
            0 => {
                let t = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32]);
                let n = self.rng.pick(&[2, 4, 8]);
                let name = self.fresh("arr");
                if self.rng.chance(50) {
                    self.line(&format!("var {name}: array<{}, {n}>;", t.wgsl()));
                } else {
                    let items: Vec<String> = (0..n).map(|_| self.stored_expr(t, 1).code).collect();
                    self.line(&format!("var {name} = array<{}, {n}>({});", t.wgsl(), items.join(", ")));
                }
                self.log.note(Feature::LocalArray);
                self.vars.push(Var {
                    name,
                    kind: Kind::Array(t, n),
                    mutable: true,
                    counter: false,
                    addressable: false,
                    bound: F32_VAR_BOUND,
                });
            }
            1 if !self.structs.is_empty() => {
                let s = self.rng.below(self.structs.len() as u32) as usize;
                let name = self.fresh("st");
                let sname = self.structs[s].name.clone();
                if self.rng.chance(50) {
                    self.line(&format!("var {name}: {sname};"));
                } else {
                    let tys: Vec<Ty> = self.structs[s].fields.iter().map(|f| f.1).collect();
                    let items: Vec<String> = tys.into_iter().map(|t| self.stored_expr(t, 1).code).collect();
                    self.line(&format!("var {name} = {sname}({});", items.join(", ")));
                }
                self.log.note(Feature::Struct);
                self.vars.push(Var {
                    name,
                    kind: Kind::Struct(s),
                    mutable: true,
                    counter: false,
                    addressable: false,
                    bound: F32_VAR_BOUND,
                });
            }
            _ => {
                let t = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32, Ty::Bool]);
                let e = self.stored_expr(t, self.cfg.max_expr_depth);
                let name = self.fresh("v");
                self.line(&format!("var {name}: {} = {};", t.wgsl(), e.code));
                self.push_scalar(name, t, true, F32_VAR_BOUND);
            }
        }
    }

    /// An lvalue: a mutable scalar, an array element or a struct field,
    /// never a loop counter. Returns its text and type.
    fn lvalue(&mut self) -> Option<(String, Ty)> {
        let candidates: Vec<Var> = self.vars.iter().filter(|v| v.mutable && !v.counter).cloned().collect();
        if candidates.is_empty() {
            return None;
        }
        let v = candidates[self.rng.below(candidates.len() as u32) as usize].clone();
        Some(match v.kind {
            Kind::Scalar(t) => (v.name, t),
            Kind::Array(t, n) => {
                let idx = self.index(n);
                (format!("{}[{idx}]", v.name), t)
            }
            Kind::Struct(s) => {
                let (f, t) =
                    self.structs[s].fields[self.rng.below(self.structs[s].fields.len() as u32) as usize].clone();
                (format!("{}.{f}", v.name), t)
            }
        })
    }

    fn assign(&mut self) -> bool {
        let Some((lhs, t)) = self.lvalue() else { return false };
        let e = self.stored_expr(t, self.cfg.max_expr_depth);
        self.line(&format!("{lhs} = {};", e.code));
        true
    }

    fn compound(&mut self) -> bool {
        let Some((lhs, t)) = self.lvalue() else { return false };
        if t != Ty::U32 && t != Ty::I32 {
            return false;
        }
        if self.rng.chance(25) {
            self.log.note(Feature::IncDec);
            let op = if self.rng.chance(50) { "++" } else { "--" };
            self.line(&format!("{lhs}{op};"));
            return true;
        }
        self.log.note(Feature::CompoundAssign);
        match self.rng.below(10) {
            0..=5 => {
                let op = self.rng.pick(&["+=", "-=", "*=", "&=", "|=", "^="]);
                let e = self.expr(t, 2, false);
                self.line(&format!("{lhs} {op} {};", e.code));
            }
            6 | 7 => {
                self.log.note(Feature::DivRem);
                let op = self.rng.pick(&["/=", "%="]);
                let e = self.divisor(t, 2);
                self.line(&format!("{lhs} {op} {};", e.code));
            }
            _ => {
                self.log.note(Feature::Shift);
                let op = self.rng.pick(&["<<=", ">>="]);
                let amt = self.shift_amount(2);
                self.line(&format!("{lhs} {op} {};", amt.code));
            }
        }
        true
    }

    fn if_stmt(&mut self, depth: u32) {
        let c = self.expr(Ty::Bool, self.cfg.max_expr_depth, true);
        self.line(&format!("if {} {{", c.code));
        self.nested(depth);
        let mut has_else = false;
        while self.rng.chance(30) {
            has_else = true;
            let c = self.expr(Ty::Bool, 2, true);
            self.line(&format!("}} else if {} {{", c.code));
            self.nested(depth);
        }
        if self.rng.chance(40) {
            has_else = true;
            self.line("} else {");
            self.nested(depth);
        }
        self.line("}");
        self.log.note(if has_else { Feature::IfElse } else { Feature::If });
    }

    fn switch_stmt(&mut self, depth: u32) {
        self.log.note(Feature::Switch);
        let t = self.rng.pick(&[Ty::U32, Ty::I32]);
        let sel = self.expr(t, 2, true);
        // Selectors that inputs are likely to hit: small values, wrapped.
        let sel = if self.rng.chance(60) {
            match t {
                Ty::U32 => format!("({} % 6u)", sel.code),
                _ => format!("({} % 4i)", sel.code),
            }
        } else {
            sel.code
        };
        self.line(&format!("switch {sel} {{"));
        self.enclosing.push(Enclosing::Switch);
        let mut values: Vec<i64> = Vec::new();
        let clauses = 1 + self.rng.below(4);
        for _ in 0..clauses {
            let k = 1 + u32::from(self.rng.chance(25));
            let mut sels = Vec::new();
            for _ in 0..k {
                let v = if t == Ty::U32 { self.rng.range(0, 7) } else { self.rng.range(-4, 4) };
                if !values.contains(&v) {
                    values.push(v);
                    sels.push(if t == Ty::U32 { format!("{v}u") } else { format!("{v}i") });
                }
            }
            if sels.is_empty() {
                continue;
            }
            if sels.len() > 1 {
                self.log.note(Feature::SwitchSharedCase);
            }
            self.line(&format!("    case {}: {{", sels.join(", ")));
            self.indent += 1;
            self.nested(depth);
            self.indent -= 1;
            self.line("    }");
        }
        let shared = if !values.is_empty() && self.rng.chance(20) {
            let v = loop {
                let v = if t == Ty::U32 { self.rng.range(0, 7) } else { self.rng.range(-4, 4) };
                if !values.contains(&v) {
                    break v;
                }
            };
            self.log.note(Feature::SwitchSharedCase);
            if t == Ty::U32 {
                format!("{v}u, ")
            } else {
                format!("{v}i, ")
            }
        } else {
            String::new()
        };
        // `default` alone, or as a selector of a `case` clause.
        if shared.is_empty() && self.rng.chance(70) {
            self.line("    default: {");
        } else {
            self.line(&format!("    case {shared}default: {{"));
        }
        self.indent += 1;
        self.nested(depth);
        self.indent -= 1;
        self.line("    }");
        self.enclosing.pop();
        self.line("}");
    }

    /// The constant trip bound of a loop, possibly as `min(e, N)`.
    fn trip_bound(&mut self) -> String {
        let n = 1 + self.rng.below(self.cfg.max_loop_trips.max(1));
        if self.rng.chance(25) {
            self.log.note(Feature::RuntimeTripBound);
            let e = self.expr(Ty::U32, 1, true);
            format!("min({}, {n}u)", e.code)
        } else {
            format!("{n}u")
        }
    }

    fn counter_var(&mut self, name: &str) {
        self.vars.push(Var {
            name: name.to_string(),
            kind: Kind::Scalar(Ty::U32),
            mutable: true,
            counter: true,
            addressable: false,
            bound: 0.0,
        });
    }

    fn loop_stmt(&mut self, depth: u32) {
        let scope = self.vars.len();
        let i = self.fresh("it");
        self.loop_depth += 1;
        self.fn_loops = self.fn_loops.max(self.loop_depth);
        self.enclosing.push(Enclosing::Loop);
        match self.rng.below(4) {
            0 => {
                self.log.note(Feature::For);
                let bound = self.trip_bound();
                let step = self.rng.pick(&["++", " += 1u", " = {} + 1u"]).replace("{}", &i);
                self.line(&format!("for (var {i} = 0u; {i} < {bound}; {i}{step}) {{"));
                self.counter_var(&i);
                self.nested(depth);
                self.line("}");
            }
            1 => {
                self.log.note(Feature::While);
                let bound = self.trip_bound();
                self.line(&format!("var {i} = 0u;"));
                self.counter_var(&i);
                self.line(&format!("while {i} < {bound} {{"));
                // The counter moves first, so `continue` cannot skip it.
                self.line(&format!("    {i} += 1u;"));
                self.nested(depth);
                self.line("}");
            }
            2 => {
                self.log.note(Feature::Loop);
                let bound = self.trip_bound();
                self.line(&format!("var {i} = 0u;"));
                self.counter_var(&i);
                self.line("loop {");
                self.line(&format!("    if {i} >= {bound} {{"));
                self.line("        break;");
                self.line("    }");
                self.line(&format!("    {i}++;"));
                self.nested(depth);
                self.line("}");
            }
            _ => {
                self.log.note(Feature::LoopContinuing);
                self.line(&format!("var {i} = 0u;"));
                self.counter_var(&i);
                self.line("loop {");
                self.nested(depth);
                let bound = self.trip_bound();
                self.line("    continuing {");
                self.line(&format!("        {i} += 1u;"));
                self.line(&format!("        break if {i} >= {bound};"));
                self.line("    }");
                self.line("}");
            }
        }
        self.enclosing.pop();
        self.loop_depth -= 1;
        self.vars.truncate(scope);
    }

    fn output_write(&mut self) {
        let slots = self.cfg.out_slots.max(1);
        let e = self.expr(Ty::U32, self.cfg.max_expr_depth, true);
        let slot = if slots == 1 {
            "base".to_string()
        } else if self.rng.chance(50) {
            format!("base + {}u", self.rng.below(slots))
        } else {
            let k = self.expr(Ty::U32, 1, true);
            format!("base + ({} % {slots}u)", k.code)
        };
        self.line(&format!("output[{slot}] = {};", e.code));
    }

    /// A call of a pointer helper on a whole local variable.
    fn ptr_call(&mut self) -> bool {
        let helpers: Vec<Helper> = self
            .helpers
            .iter()
            .filter(|h| h.ptr_ty.is_some() && self.loop_depth + h.loops <= self.cfg.max_loop_nest)
            .cloned()
            .collect();
        if helpers.is_empty() {
            return false;
        }
        let h = helpers[self.rng.below(helpers.len() as u32) as usize].clone();
        let t = h.ptr_ty.unwrap_or(Ty::U32);
        let targets: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.addressable && matches!(v.kind, Kind::Scalar(k) if k == t))
            .map(|v| v.name.clone())
            .collect();
        if targets.is_empty() {
            return false;
        }
        let target = targets[self.rng.below(targets.len() as u32) as usize].clone();
        let args = self.call_args(&h.params, 1);
        let mut all = vec![format!("&{target}")];
        all.extend(args);
        self.line(&format!("{}({});", h.name, all.join(", ")));
        self.fn_loops = self.fn_loops.max(self.loop_depth + h.loops);
        self.log.note(Feature::PtrHelperCall);
        true
    }

    fn call_args(&mut self, params: &[Ty], depth: u32) -> Vec<String> {
        params.iter().map(|&t| self.stored_expr(t, depth).code).collect()
    }

    // ---- expressions ----

    /// An expression fit to be stored (f32 clamped to the variable bound).
    fn stored_expr(&mut self, t: Ty, depth: u32) -> E {
        let e = self.expr(t, depth, false);
        if t == Ty::F32 && e.bound > F32_VAR_BOUND {
            self.log.note(Feature::FloatBuiltin);
            return E::rt(format!("clamp({}, {F32_VAR_CLAMP})", e.code), F32_VAR_BOUND);
        }
        e
    }

    /// A constant array index below `n`, or `x % n` of a u32 variable (or
    /// `gid.x`); never an expression that could index an array itself, so
    /// leaves do not recurse.
    fn index(&mut self, n: u32) -> String {
        match self.u32_name() {
            Some(x) if self.rng.chance(60) => format!("({x} % {n}u)"),
            _ => self.rng.below(n).to_string(),
        }
    }

    /// A u32 scalar variable in scope, or `gid.x` in main.
    fn u32_name(&mut self) -> Option<String> {
        let mut names: Vec<String> =
            self.vars.iter().filter(|v| matches!(v.kind, Kind::Scalar(Ty::U32))).map(|v| v.name.clone()).collect();
        if self.in_main {
            names.push("gid.x".into());
        }
        if names.is_empty() {
            return None;
        }
        Some(names.swap_remove(self.rng.below(names.len() as u32) as usize))
    }

    fn literal(&mut self, t: Ty) -> E {
        match t {
            Ty::U32 => {
                let v: u32 = if self.rng.chance(25) {
                    self.rng.pick(&[0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 31, 32, 255])
                } else {
                    self.rng.below(20)
                };
                E { code: format!("{v}u"), konst: true, bound: 0.0 }
            }
            Ty::I32 => {
                let code = if self.rng.chance(20) {
                    self.rng.pick(&["2147483647i", "i32(-2147483648)", "(-1i)"]).to_string()
                } else {
                    let v = self.rng.range(-20, 20);
                    if v < 0 {
                        format!("({v}i)")
                    } else {
                        format!("{v}i")
                    }
                };
                E { code, konst: true, bound: 0.0 }
            }
            Ty::F32 => {
                let v = self.rng.range(-16, 16);
                let code = if v < 0 { format!("({v}.0f)") } else { format!("{v}.0f") };
                E { code, konst: true, bound: v.unsigned_abs() as f64 }
            }
            Ty::Bool => E { code: if self.rng.chance(50) { "true" } else { "false" }.into(), konst: true, bound: 0.0 },
        }
    }

    /// A leaf of type `t`; with `rt`, one WGSL does not treat as constant.
    fn leaf(&mut self, t: Ty, rt: bool) -> E {
        if !rt && self.rng.chance(30) {
            let consts: Vec<(String, f64)> =
                self.consts.iter().filter(|c| c.1 == t).map(|c| (c.0.clone(), c.3)).collect();
            if !consts.is_empty() && self.rng.chance(40) {
                let (name, bound) = consts[self.rng.below(consts.len() as u32) as usize].clone();
                self.log.note(Feature::ModuleConst);
                return E { code: name, konst: true, bound };
            }
            return self.literal(t);
        }
        // Run-time leaves: variables, array elements, struct fields, and
        // the always-available input read (and gid, param, output in main).
        let mut options: Vec<(String, Option<u32>, f64)> = Vec::new();
        for v in &self.vars {
            match v.kind {
                Kind::Scalar(k) if k == t => options.push((v.name.clone(), None, v.bound)),
                Kind::Array(k, n) if k == t => options.push((v.name.clone(), Some(n), F32_VAR_BOUND)),
                Kind::Struct(s) => {
                    for (f, k) in &self.structs[s].fields {
                        if *k == t {
                            options.push((format!("{}.{f}", v.name), None, F32_VAR_BOUND));
                        }
                    }
                }
                _ => {}
            }
        }
        if self.in_main && t == Ty::U32 {
            options.push(("gid.x".into(), None, 0.0));
            if self.has_param {
                options.push(("param".into(), None, 0.0));
            }
        }
        if options.is_empty() || self.rng.chance(15) {
            return self.input_read(t);
        }
        if self.in_main && t == Ty::U32 && self.rng.chance(10) {
            self.log.note(Feature::OutputReadBack);
            return E::rt(format!("output[base + {}u]", self.rng.below(self.cfg.out_slots.max(1))), 0.0);
        }
        let (name, array_len, bound) = options.swap_remove(self.rng.below(options.len() as u32) as usize);
        match array_len {
            Some(n) => {
                let idx = self.index(n);
                E::rt(format!("{name}[{idx}]"), bound)
            }
            None => E::rt(name, bound),
        }
    }

    /// `input[...]`, converted to `t`.
    fn input_read(&mut self, t: Ty) -> E {
        // Indexed by a u32 variable, gid.x or a constant: no recursion.
        let idx = match self.u32_name() {
            Some(x) if self.rng.chance(70) => x,
            _ => format!("{}u", self.rng.below(8)),
        };
        let x = format!("input[{idx} % arrayLength(&input)]");
        if t == self.input_ty {
            return E::rt(x, 1024.0);
        }
        self.log.note(Feature::InputConversion);
        let code = match (self.input_ty, t) {
            (Ty::U32, Ty::I32) => {
                self.log.note(Feature::Bitcast);
                format!("bitcast<i32>({x})")
            }
            (Ty::U32, Ty::F32) => format!("f32({x} & 1023u)"),
            (Ty::U32, _) => format!("(({x} & 1u) == 1u)"),
            (Ty::I32, Ty::U32) => format!("u32({x})"),
            (Ty::I32, Ty::F32) => format!("f32(clamp({x}, -1024i, 1024i))"),
            (Ty::I32, _) => format!("({x} < 0i)"),
            (_, Ty::U32) => format!("u32(max({x}, 0.0f))"),
            (_, Ty::I32) => format!("i32({x})"),
            _ => format!("({x} > 0.0f)"),
        };
        E::rt(code, 1024.0)
    }

    fn expr(&mut self, t: Ty, depth: u32, rt: bool) -> E {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(t, rt);
        }
        let d = depth - 1;
        match t {
            Ty::U32 | Ty::I32 => self.int_expr(t, d),
            Ty::F32 => self.f32_expr(d),
            Ty::Bool => self.bool_expr(d),
        }
    }

    /// Two operands of which at least one is run-time.
    fn operands(&mut self, t: Ty, d: u32) -> (E, E) {
        let a = self.expr(t, d, false);
        let b = self.expr(t, d, a.konst);
        if self.rng.chance(50) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// A divisor: a non-zero constant or any run-time value (zero included:
    /// WGSL defines division by zero at run time).
    fn divisor(&mut self, t: Ty, d: u32) -> E {
        if self.rng.chance(40) {
            let code = match t {
                Ty::U32 => format!("{}u", self.rng.pick(&[1u32, 2, 3, 7, 16, 0xffff_ffff])),
                _ => self.rng.pick(&["1i", "2i", "3i", "(-1i)", "(-7i)", "i32(-2147483648)"]).to_string(),
            };
            E { code, konst: true, bound: 0.0 }
        } else {
            self.expr(t, d, true)
        }
    }

    /// A shift amount: a constant below 32, or a run-time value (masked
    /// unless the config says otherwise).
    fn shift_amount(&mut self, d: u32) -> E {
        if self.rng.chance(40) {
            E { code: format!("{}u", self.rng.below(32)), konst: true, bound: 0.0 }
        } else {
            let e = self.expr(Ty::U32, d, true);
            if self.cfg.mask_shift_amounts {
                E::rt(format!("({} & 31u)", e.code), 0.0)
            } else {
                self.log.note(Feature::RawShiftAmount);
                E::rt(e.code, 0.0)
            }
        }
    }

    /// A call of a value helper returning `t`, its arguments of depth `d`.
    fn call(&mut self, t: Ty, d: u32) -> Option<E> {
        let helpers: Vec<Helper> = self
            .helpers
            .iter()
            .filter(|h| h.ret == Some(t) && self.loop_depth + h.loops <= self.cfg.max_loop_nest)
            .cloned()
            .collect();
        if helpers.is_empty() {
            return None;
        }
        let h = helpers[self.rng.below(helpers.len() as u32) as usize].clone();
        let args = self.call_args(&h.params, d);
        self.fn_loops = self.fn_loops.max(self.loop_depth + h.loops);
        self.log.note(Feature::HelperCall);
        Some(E::rt(format!("{}({})", h.name, args.join(", ")), F32_VAR_BOUND))
    }

    fn int_expr(&mut self, t: Ty, d: u32) -> E {
        let s = t.wgsl();
        loop {
            match self.rng.below(14) {
                0 | 1 => {
                    let (a, b) = self.operands(t, d);
                    let op = self.rng.pick(&["+", "-", "*"]);
                    self.log.note(if t == Ty::U32 { Feature::U32Arith } else { Feature::I32Arith });
                    return E::rt(format!("({} {op} {})", a.code, b.code), 0.0);
                }
                2 => {
                    let b = self.divisor(t, d);
                    let a = self.expr(t, d, b.konst);
                    let op = self.rng.pick(&["/", "%"]);
                    self.log.note(Feature::DivRem);
                    return E::rt(format!("({} {op} {})", a.code, b.code), 0.0);
                }
                3 => {
                    let (a, b) = self.operands(t, d);
                    let op = self.rng.pick(&["&", "|", "^"]);
                    self.log.note(Feature::BitOps);
                    return E::rt(format!("({} {op} {})", a.code, b.code), 0.0);
                }
                4 => {
                    let amt = self.shift_amount(d);
                    let a = self.expr(t, d, amt.konst);
                    let op = self.rng.pick(&["<<", ">>"]);
                    self.log.note(Feature::Shift);
                    return E::rt(format!("({} {op} {})", a.code, amt.code), 0.0);
                }
                5 => {
                    let a = self.expr(t, d, true);
                    self.log.note(Feature::BitOps);
                    if t == Ty::I32 && self.rng.chance(50) {
                        self.log.note(Feature::I32Arith);
                        return E::rt(format!("(-{})", a.code), 0.0);
                    }
                    return E::rt(format!("(~{})", a.code), 0.0);
                }
                6 => {
                    self.log.note(Feature::IntBuiltin);
                    match self.rng.below(4) {
                        0 | 1 => {
                            let (a, b) = self.operands(t, d);
                            let f = self.rng.pick(&["min", "max"]);
                            return E::rt(format!("{f}({}, {})", a.code, b.code), 0.0);
                        }
                        2 => {
                            let a = self.expr(t, d, true);
                            let (lo, hi) = if t == Ty::U32 {
                                let lo = self.rng.below(50);
                                (format!("{lo}u"), format!("{}u", lo + self.rng.below(1000)))
                            } else {
                                let lo = self.rng.range(-500, 20);
                                (format!("{lo}i"), format!("{}i", lo + self.rng.range(0, 1000)))
                            };
                            return E::rt(format!("clamp({}, {lo}, {hi})", a.code), 0.0);
                        }
                        _ if t == Ty::I32 => {
                            let a = self.expr(t, d, true);
                            let f = self.rng.pick(&["abs", "sign"]);
                            return E::rt(format!("{f}({})", a.code), 0.0);
                        }
                        _ => {}
                    }
                }
                7 => {
                    self.log.note(Feature::BitBuiltin);
                    let a = self.expr(t, d, true);
                    if self.rng.chance(25) {
                        let off = self.rng.below(32);
                        let cnt = self.rng.below(33 - off);
                        if self.rng.chance(50) {
                            return E::rt(format!("extractBits({}, {off}u, {cnt}u)", a.code), 0.0);
                        }
                        let b = self.expr(t, d, false);
                        return E::rt(format!("insertBits({}, {}, {off}u, {cnt}u)", a.code, b.code), 0.0);
                    }
                    let f = self.rng.pick(&[
                        "countOneBits",
                        "countLeadingZeros",
                        "countTrailingZeros",
                        "reverseBits",
                        "firstLeadingBit",
                        "firstTrailingBit",
                    ]);
                    return E::rt(format!("{f}({})", a.code), 0.0);
                }
                8 => {
                    let a = self.expr(t, d, false);
                    let b = self.expr(t, d, false);
                    let c = self.expr(Ty::Bool, d, a.konst && b.konst);
                    self.log.note(Feature::Select);
                    return E::rt(format!("select({}, {}, {})", a.code, b.code, c.code), 0.0);
                }
                9 => {
                    // From the other integer type: value conversion or bitcast.
                    let other = if t == Ty::U32 { Ty::I32 } else { Ty::U32 };
                    let a = self.expr(other, d, true);
                    if self.rng.chance(50) {
                        self.log.note(Feature::Bitcast);
                        return E::rt(format!("bitcast<{s}>({})", a.code), 0.0);
                    }
                    self.log.note(Feature::Conversion);
                    return E::rt(format!("{s}({})", a.code), 0.0);
                }
                10 => {
                    // From f32: always in range (see the module docs).
                    let a = self.expr(Ty::F32, d, true);
                    if t == Ty::U32 && a.bound <= F32_LIMIT / 2.0 && self.rng.chance(30) {
                        self.log.note(Feature::Bitcast);
                        self.log.note(Feature::FloatBuiltin);
                        return E::rt(format!("bitcast<u32>((abs({}) + 1.0f))", a.code), 0.0);
                    }
                    self.log.note(Feature::Conversion);
                    if t == Ty::U32 {
                        return E::rt(format!("u32(max({}, 0.0f))", a.code), 0.0);
                    }
                    return E::rt(format!("i32({})", a.code), 0.0);
                }
                11 => {
                    let a = self.expr(Ty::Bool, d, true);
                    self.log.note(Feature::Conversion);
                    return E::rt(format!("{s}({})", a.code), 0.0);
                }
                12 => {
                    if let Some(e) = self.call(t, d) {
                        return e;
                    }
                }
                _ => return self.leaf(t, true),
            }
        }
    }

    fn f32_expr(&mut self, d: u32) -> E {
        // The matrix case is drawn only when enabled, so that the other
        // programs' draws are the ones they always were.
        let cases = if self.cfg.matrices { 12 } else { 11 };
        loop {
            match self.rng.below(cases) {
                11 => return self.matrix_expr(),
                0..=2 => {
                    let (a, b) = self.operands(Ty::F32, d);
                    let sum = a.bound + b.bound;
                    let product = a.bound * b.bound;
                    let op = self.rng.pick(&["+", "-", "*"]);
                    if op == "*" && product <= F32_LIMIT {
                        self.log.note(Feature::F32Arith);
                        return E::rt(format!("({} * {})", a.code, b.code), product);
                    }
                    if op != "*" && sum <= F32_LIMIT {
                        self.log.note(Feature::F32Arith);
                        return E::rt(format!("({} {op} {})", a.code, b.code), sum);
                    }
                    // Out of the exact range: min / max keep the bound.
                    self.log.note(Feature::FloatBuiltin);
                    let f = self.rng.pick(&["min", "max"]);
                    return E::rt(format!("{f}({}, {})", a.code, b.code), a.bound.max(b.bound));
                }
                3 => {
                    let (a, b) = self.operands(Ty::F32, d);
                    let f = self.rng.pick(&["min", "max"]);
                    self.log.note(Feature::FloatBuiltin);
                    return E::rt(format!("{f}({}, {})", a.code, b.code), a.bound.max(b.bound));
                }
                4 => {
                    let a = self.expr(Ty::F32, d, true);
                    self.log.note(Feature::FloatBuiltin);
                    match self.rng.below(3) {
                        0 => return E::rt(format!("abs({})", a.code), a.bound),
                        1 => return E::rt(format!("sign({})", a.code), 1.0),
                        _ => {
                            self.log.note(Feature::F32Arith);
                            return E::rt(format!("(-{})", a.code), a.bound);
                        }
                    }
                }
                5 => {
                    // Halves, rounded back to integers.
                    let a = self.expr(Ty::F32, d, true);
                    let f = self.rng.pick(&["floor", "ceil", "round", "trunc"]);
                    self.log.note(Feature::FloatBuiltin);
                    return E::rt(format!("{f}(({} * 0.5f))", a.code), a.bound / 2.0 + 1.0);
                }
                6 => {
                    let a = self.expr(Ty::F32, d, true);
                    let lo = self.rng.range(-16, 8);
                    let hi = lo + self.rng.range(0, 8);
                    self.log.note(Feature::FloatBuiltin);
                    let bound = lo.unsigned_abs().max(hi.unsigned_abs()) as f64;
                    return E::rt(format!("clamp({}, {lo}.0f, {hi}.0f)", a.code), bound);
                }
                7 => {
                    let a = self.expr(Ty::F32, d, false);
                    let b = self.expr(Ty::F32, d, false);
                    let c = self.expr(Ty::Bool, d, a.konst && b.konst);
                    self.log.note(Feature::Select);
                    return E::rt(format!("select({}, {}, {})", a.code, b.code, c.code), a.bound.max(b.bound));
                }
                8 => {
                    self.log.note(Feature::Conversion);
                    match self.rng.below(4) {
                        0 => {
                            let a = self.expr(Ty::U32, d, true);
                            return E::rt(format!("f32(({} % 4096u))", a.code), 4095.0);
                        }
                        1 => {
                            let a = self.expr(Ty::I32, d, true);
                            return E::rt(format!("f32(clamp({}, -4096i, 4096i))", a.code), 4096.0);
                        }
                        2 => {
                            let a = self.expr(Ty::Bool, d, true);
                            return E::rt(format!("f32({})", a.code), 1.0);
                        }
                        _ => {
                            // A crafted bit pattern: exponent 1, so a normal
                            // value in [2, 4); floor makes it 2 or 3.
                            let a = self.expr(Ty::U32, d, true);
                            self.log.note(Feature::Bitcast);
                            return E::rt(format!("floor(bitcast<f32>((({} & 0x3fffu) | 0x40000000u)))", a.code), 3.0);
                        }
                    }
                }
                9 => {
                    if let Some(e) = self.call(Ty::F32, d) {
                        return e;
                    }
                }
                _ => return self.leaf(Ty::F32, true),
            }
        }
    }

    /// One lane of non-square matrix arithmetic: `M * v`, `v * M`, `M * N`,
    /// `M + N` / `M - N`, `M * s` or `transpose(M)`, with `M` a `matCxR<f32>`
    /// (C != R) of run-time components clamped to +-8. Every intermediate is
    /// an integer below 4 * 8 * 8 = 256 in magnitude, so any order of
    /// evaluation (and a device's fused multiply-add) gives the same value.
    fn matrix_expr(&mut self) -> E {
        self.log.note(Feature::NonSquareMatrix);
        let dims = [2u32, 3, 4];
        let c = self.rng.pick(&dims);
        let r = self.rng.pick(&dims.iter().copied().filter(|&n| n != c).collect::<Vec<_>>());
        let m = self.matrix(c, r);
        let lane = |g: &mut Self, n: u32| g.rng.below(n);
        match self.rng.below(6) {
            0 => {
                let v = self.vector(c);
                let k = lane(self, r);
                E::rt(format!("(({m}) * {v})[{k}]"), f64::from(c) * 64.0)
            }
            1 => {
                let v = self.vector(r);
                let k = lane(self, c);
                E::rt(format!("({v} * ({m}))[{k}]"), f64::from(r) * 64.0)
            }
            2 => {
                let k = self.rng.pick(&dims);
                let n = self.matrix(k, c);
                let (i, j) = (lane(self, k), lane(self, r));
                E::rt(format!("(({m}) * ({n}))[{i}][{j}]"), f64::from(c) * 64.0)
            }
            3 => {
                let n = self.matrix(c, r);
                let op = self.rng.pick(&["+", "-"]);
                let (i, j) = (lane(self, c), lane(self, r));
                E::rt(format!("(({m}) {op} ({n}))[{i}][{j}]"), 16.0)
            }
            4 => {
                let s = self.component();
                let (i, j) = (lane(self, c), lane(self, r));
                E::rt(format!("(({m}) * {s})[{i}][{j}]"), 64.0)
            }
            _ => {
                let (i, j) = (lane(self, r), lane(self, c));
                E::rt(format!("transpose({m})[{i}][{j}]"), 8.0)
            }
        }
    }

    /// A `matCxR<f32>` of clamped run-time components.
    fn matrix(&mut self, c: u32, r: u32) -> String {
        let parts: Vec<String> = (0..c * r).map(|_| self.component()).collect();
        format!("mat{c}x{r}<f32>({})", parts.join(", "))
    }

    /// A `vecN<f32>` of clamped run-time components.
    fn vector(&mut self, n: u32) -> String {
        let parts: Vec<String> = (0..n).map(|_| self.component()).collect();
        format!("vec{n}<f32>({})", parts.join(", "))
    }

    /// An f32 leaf clamped to +-8.
    fn component(&mut self) -> String {
        let a = self.leaf(Ty::F32, true);
        format!("clamp({}, -8.0f, 8.0f)", a.code)
    }

    fn bool_expr(&mut self, d: u32) -> E {
        match self.rng.below(8) {
            0..=3 => {
                let t = self.rng.pick(&[Ty::U32, Ty::I32, Ty::F32]);
                let (a, b) = self.operands(t, d);
                let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                self.log.note(Feature::Compare);
                E::rt(format!("({} {op} {})", a.code, b.code), 0.0)
            }
            4 => {
                let a = self.expr(Ty::Bool, d, true);
                self.log.note(Feature::Logical);
                E::rt(format!("(!{})", a.code), 0.0)
            }
            5 => {
                let (a, b) = self.operands(Ty::Bool, d);
                let op = self.rng.pick(&["&&", "||"]);
                self.log.note(Feature::Logical);
                E::rt(format!("({} {op} {})", a.code, b.code), 0.0)
            }
            6 => {
                let a = self.expr(Ty::U32, d, true);
                self.log.note(Feature::Conversion);
                E::rt(format!("bool({})", a.code), 0.0)
            }
            _ => match self.call(Ty::Bool, d) {
                Some(e) => e,
                None => self.leaf(Ty::Bool, true),
            },
        }
    }
}

/// `v` of type `t` as a u32 for the checksum (`u32(i32)` keeps the bits;
/// f32 values are integers in range, so `i32(v)` is exact and the sign of a
/// zero does not show).
fn as_u32(v: &str, t: Ty) -> String {
    match t {
        Ty::U32 => v.to_string(),
        Ty::I32 => format!("u32({v})"),
        Ty::F32 => format!("u32(i32({v}))"),
        Ty::Bool => format!("select(0u, 1u, {v})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    /// Parses and validates `source` with naga, and compiles it to SPIR-V
    /// (the writer has panicked on valid modules before, so a panic counts
    /// as a failure of the generator).
    fn check(source: &str) -> Result<naga::Module, String> {
        let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
        let info = Validator::new(ValidationFlags::all(), Capabilities::default())
            .validate(&module)
            .map_err(|e| e.emit_to_string(source))?;
        let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
        }));
        match written {
            Ok(Ok(_)) => Ok(module),
            Ok(Err(e)) => Err(format!("SPIR-V writer: {e}")),
            Err(_) => Err("SPIR-V writer panicked".into()),
        }
    }

    #[test]
    fn a_thousand_seeds_parse_validate_and_compile() {
        let cfg = Config::default();
        for seed in 0..1000 {
            let p = generate(seed, &cfg);
            if let Err(e) = check(&p.source) {
                panic!("seed {seed}: {e}\n{}", p.source);
            }
        }
    }

    #[test]
    fn programs_with_non_square_matrices_validate_too() {
        let cfg = Config { matrices: true, ..Config::default() };
        let mut matrices = 0;
        for seed in 0..300 {
            let p = generate(seed, &cfg);
            if let Err(e) = check(&p.source) {
                panic!("seed {seed}: {e}\n{}", p.source);
            }
            matrices += p.features.count(Feature::NonSquareMatrix);
            let in_source = ["mat2x", "mat3x", "mat4x"].iter().any(|w| p.source.contains(w));
            assert_eq!(p.features.contains(Feature::NonSquareMatrix), in_source, "seed {seed}");
        }
        assert!(matrices > 0);
    }

    #[test]
    fn raw_shift_amounts_and_no_workgroup_memory_validate_too() {
        let cfg = Config { mask_shift_amounts: false, workgroup_memory: false, out_slots: 1, ..Config::default() };
        let mut raw = 0;
        for seed in 0..200 {
            let p = generate(seed, &cfg);
            if let Err(e) = check(&p.source) {
                panic!("seed {seed}: {e}\n{}", p.source);
            }
            assert!(!p.source.contains("var<workgroup>"), "seed {seed}");
            assert!(!p.features.contains(Feature::WorkgroupBarrier), "seed {seed}");
            raw += p.features.count(Feature::RawShiftAmount);
        }
        assert!(raw > 0);
    }

    #[test]
    fn a_program_is_a_pure_function_of_its_seed() {
        let cfg = Config::default();
        let mut sources = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let a = generate(seed, &cfg);
            let b = generate(seed, &cfg);
            assert_eq!(a, b, "seed {seed}");
            sources.insert(a.source);
        }
        // And different seeds give different programs.
        assert_eq!(sources.len(), 100);
        assert_ne!(generate(1, &cfg).source, generate(1, &Config { max_expr_depth: 1, ..Config::default() }).source);
    }

    #[test]
    fn the_first_hundred_programs_use_every_feature() {
        let cfg = Config { mask_shift_amounts: false, matrices: true, ..Config::default() };
        let mut seen = FeatureLog::default();
        for seed in 0..100 {
            seen.add(&generate(seed, &cfg).features);
        }
        let missing: Vec<Feature> = seen.iter().filter(|&(_, n)| n == 0).map(|(f, _)| f).collect();
        assert!(missing.is_empty(), "never generated: {missing:?}");
    }

    /// The log says what the source holds: each feature with a telltale
    /// spelling appears in the source exactly when the log counts it.
    #[test]
    fn the_feature_log_matches_the_source() {
        let cfg = Config::default();
        let telltales: [(Feature, &[&str]); 9] = [
            (Feature::For, &["for ("]),
            (Feature::While, &["while "]),
            (Feature::LoopContinuing, &["continuing {"]),
            (Feature::Switch, &["switch "]),
            (Feature::Uniform, &["var<uniform> param"]),
            (Feature::WorkgroupBarrier, &["workgroupBarrier()"]),
            (Feature::LocalArray, &["var arr"]),
            (Feature::Struct, &["var st"]),
            (Feature::Continue, &["continue;"]),
        ];
        for seed in 0..300 {
            let p = generate(seed, &cfg);
            for (f, words) in telltales {
                let in_source = words.iter().any(|w| p.source.contains(w));
                assert_eq!(p.features.contains(f), in_source, "seed {seed}, {f:?}\n{}", p.source);
            }
            assert_eq!(p.features.contains(Feature::Bitcast), p.source.contains("bitcast<"), "seed {seed}");
            assert_eq!(p.features.contains(Feature::PtrHelperCall), p.source.contains("(&v"), "seed {seed}");
        }
    }

    #[test]
    fn inputs_match_the_program() {
        let cfg = Config::default();
        for seed in 0..300 {
            let p = generate(seed, &cfg);
            let inputs = xir::interp::Inputs::from_json(&p.inputs_json)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", p.inputs_json));
            assert_eq!(inputs.dispatch, Some(p.dispatch), "seed {seed}");
            let [x, y, z] = p.dispatch;
            let [wx, wy, wz] = p.workgroup_size;
            assert_eq!((y, z, wy, wz), (1, 1, 1, 1), "seed {seed}");
            assert!(x > 0 && x % wx == 0, "seed {seed}: a whole number of workgroups");
            assert!(p.source.contains(&format!("@workgroup_size({wx})")), "seed {seed}");
            let has_param = p.source.contains("var<uniform> param: u32;");
            let mut names: Vec<&str> = inputs.args.keys().map(String::as_str).collect();
            names.sort_unstable();
            let expected: &[&str] = if has_param { &["input", "output", "param"] } else { &["input", "output"] };
            assert_eq!(names, expected, "seed {seed}");
            let input = inputs.args["input"].as_array().expect("input is an array");
            assert!(!input.is_empty(), "seed {seed}");
            let ty = ["u32", "i32", "f32"]
                .into_iter()
                .find(|t| p.source.contains(&format!("input: array<{t}>")))
                .expect("input type");
            for v in input {
                match ty {
                    "u32" => assert!(v.as_u64().is_some_and(|v| v <= u64::from(u32::MAX)), "seed {seed}: {v}"),
                    "i32" => assert!(v.as_i64().is_some_and(|v| i32::try_from(v).is_ok()), "seed {seed}: {v}"),
                    _ => assert!(v.as_f64().is_some_and(|v| v.fract() == 0.0 && v.abs() <= 1024.0), "seed {seed}: {v}"),
                }
            }
            let output = &inputs.args["output"];
            assert_eq!(output["fill"].as_u64(), Some(0), "seed {seed}");
            assert_eq!(output["len"].as_u64(), Some(u64::from(x * cfg.out_slots)), "seed {seed}");
        }
    }

    /// Loops nest at most `max_loop_nest` deep, counting the loops of
    /// called functions: with the trip limit, that bounds the work of every
    /// invocation. Checked on naga's IR, where `for`, `while` and `loop` are
    /// all `Statement::Loop`.
    #[test]
    fn loops_nest_at_most_max_loop_nest() {
        use naga::{Block, Function, Handle, Statement as S};
        use std::collections::HashMap;
        fn depth(block: &Block, fns: &HashMap<Handle<Function>, u32>) -> u32 {
            block
                .iter()
                .map(|s| match s {
                    S::Loop { body, continuing, .. } => 1 + depth(body, fns).max(depth(continuing, fns)),
                    S::If { accept, reject, .. } => depth(accept, fns).max(depth(reject, fns)),
                    S::Switch { cases, .. } => cases.iter().map(|c| depth(&c.body, fns)).max().unwrap_or(0),
                    S::Block(b) => depth(b, fns),
                    S::Call { function, .. } => fns[function],
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
        }
        for (nest, seeds) in [(3, 300), (1, 100)] {
            let cfg = Config { max_loop_nest: nest, ..Config::default() };
            let mut deepest = 0;
            for seed in 0..seeds {
                let p = generate(seed, &cfg);
                let module = check(&p.source).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                let mut fns = HashMap::new();
                for (h, f) in module.functions.iter() {
                    let d = depth(&f.body, &fns);
                    fns.insert(h, d);
                }
                for e in &module.entry_points {
                    let d = depth(&e.function.body, &fns);
                    assert!(d <= nest, "seed {seed}: loops nest {d} deep\n{}", p.source);
                    deepest = deepest.max(d);
                }
            }
            assert_eq!(deepest, nest, "the bound is reached");
        }
    }

    /// What naga would reject as a shader-creation error, or what is
    /// undefined in naga's SPIR-V, never appears: every shift amount is a
    /// constant below 32 or masked with 31, and every constant divisor is
    /// non-zero (the validator checks that one too; this pins the reason).
    #[test]
    fn shift_amounts_are_masked_or_small_constants() {
        use naga::{BinaryOperator as B, Expression as X, Literal as L};
        let cfg = Config::default();
        let mut shifts = 0;
        for seed in 0..300 {
            let p = generate(seed, &cfg);
            let module = check(&p.source).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let functions =
                module.functions.iter().map(|(_, f)| f).chain(module.entry_points.iter().map(|e| &e.function));
            for f in functions {
                for (_, e) in f.expressions.iter() {
                    let X::Binary { op: B::ShiftLeft | B::ShiftRight, right, .. } = *e else { continue };
                    shifts += 1;
                    let ok = match f.expressions[right] {
                        X::Literal(L::U32(n)) => n < 32,
                        X::Binary { op: B::And, right: mask, .. } => {
                            matches!(f.expressions[mask], X::Literal(L::U32(31)))
                        }
                        _ => false,
                    };
                    assert!(ok, "seed {seed}: shift amount {:?}\n{}", f.expressions[right], p.source);
                }
            }
        }
        assert!(shifts > 100);
    }
}
