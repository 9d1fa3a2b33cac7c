// Twin of tests/corpus/bytecode_vm.xir: a tiny stack machine, one program
// per invocation (16 instructions of two words, op and arg, at code[32t ..]):
// a `switch` inside a `for` loop whose cases fall to the end of the switch,
// `break` out of the switch, `continue` the loop (taken jumps go to the
// loop's update) or `return` from the entry point (halt, bad opcode).
// Ops: 0 push arg, 1 add, 2 mul, 3 jump to arg if the popped value is not 0,
// 4 dup, 5 halt (out = top, steps = instructions run), 6 decrement top,
// 7 swap, 8 over. After 64 instructions the program times out (out = -1).
// Stack arithmetic wraps (i32).
const OP_PUSH: u32 = 0u;
const OP_ADD: u32 = 1u;
const OP_MUL: u32 = 2u;
const OP_JNZ: u32 = 3u;
const OP_DUP: u32 = 4u;
const OP_HALT: u32 = 5u;
const OP_DEC: u32 = 6u;
const OP_SWAP: u32 = 7u;
const OP_OVER: u32 = 8u;
const MAX_STEPS: u32 = 64u;

@group(0) @binding(0) var<storage, read> code: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read_write> steps: array<u32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let base = t * 32u;
    var stack: array<i32, 8>;
    var sp = 0u;
    var pc = 0u;
    var n = 0u;
    for (; n < MAX_STEPS; n++) {
        let wi = base + pc * 2u;
        let op = code[wi];
        let argu = code[wi + 1u];
        let arg = bitcast<i32>(argu);
        pc = pc + 1u;
        let top = sp - 1u;
        let second = sp - 2u;
        switch op {
            case OP_PUSH: {
                stack[sp] = arg;
                sp = sp + 1u;
            }
            case OP_ADD: {
                stack[second] = stack[second] + stack[top];
                sp = top;
            }
            case OP_MUL: {
                stack[second] = stack[second] * stack[top];
                sp = top;
            }
            case OP_JNZ: {
                let vj = stack[top];
                sp = top;
                if vj != 0 {
                    // A taken jump goes straight to the loop's update.
                    pc = argu;
                    continue;
                }
                // Leaves the switch, not the loop.
                break;
            }
            case OP_DUP: {
                stack[sp] = stack[top];
                sp = sp + 1u;
            }
            case OP_HALT: {
                out[t] = stack[top];
                steps[t] = n + 1u;
                return;
            }
            case OP_DEC: {
                stack[top] = stack[top] - 1;
            }
            case OP_SWAP: {
                let above = stack[top];
                let below = stack[second];
                stack[top] = below;
                stack[second] = above;
            }
            case OP_OVER: {
                stack[sp] = stack[second];
                sp = sp + 1u;
            }
            default: {
                out[t] = -559038737;
                return;
            }
        }
    }
    out[t] = -1;
    steps[t] = n;
}
