// Twin of tests/corpus/switch.xir: three switches per invocation: on a
// signed i32 (negative and extreme cases), on a u32 (0 and the all-ones
// pattern) and on a 64-bit value. Each writes a code naming the case taken;
// unmatched values take default.
//
// WGSL has no 64-bit integers, so `sw` is an array of vec2<u32> (low word,
// high word: the little-endian words of the XIR kernel's u64) and the third
// switch selects on the high word, then on the low word. The twin therefore
// has its own inputs (tests/wgsl/switch.inputs.json: the same values as
// word pairs).
@group(0) @binding(0) var<storage, read> si: array<i32>;
@group(0) @binding(1) var<storage, read> su: array<u32>;
@group(0) @binding(2) var<storage, read> sw: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> out: array<i32>;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    var code: i32;
    let base = t * 3u;
    let a = si[t];
    switch a {
        case -3: {
            code = 10;
        }
        case 0: {
            code = 11;
            break;
        }
        case 2147483647: {
            code = 12;
        }
        case -2147483648: {
            code = 13;
        }
        default: {
            // default: the value itself, negated.
            code = -a;
        }
    }
    out[base] = code;
    let b = su[t];
    switch b {
        case 0u: {
            code = 20;
        }
        case 0xffffffffu: {
            code = 21;
        }
        case 7u: {
            code = 22;
        }
        default: {
            code = -1;
        }
    }
    out[base + 1u] = code;
    let w = sw[t];
    // default: the low 32 bits, reinterpreted as i32.
    let low_bits = bitcast<i32>(w.x);
    switch w.y {
        // 1 = 0x0000_0000_0000_0001
        case 0u: {
            switch w.x {
                case 1u: {
                    code = 32;
                }
                default: {
                    code = low_bits;
                }
            }
        }
        // 4294967296 = 0x0000_0001_0000_0000
        case 1u: {
            code = select(low_bits, 30, w.x == 0u);
        }
        // 18446744073709551615 = 0xffff_ffff_ffff_ffff
        case 0xffffffffu: {
            code = select(low_bits, 31, w.x == 0xffffffffu);
        }
        default: {
            code = low_bits;
        }
    }
    out[base + 2u] = code;
}
