// Twin of tests/corpus/unusual_shapes.xir: control-flow shapes front ends
// emit and passes must keep: a call to a function whose `if` returns from
// both arms (nothing follows it), a switch covering every value of x & 3
// whose default shares the last case's body (the XIR default is
// unreachable; WGSL has no unreachable and requires a default), and a
// one-shot `loop` left only by `break`.
// out[3t ..] = sign(x), class of x & 3, x > 10 ? x : 2x (wrapping).
@group(0) @binding(0) var<storage, read> xs: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;

// -1, 0 or 1. Both arms of the if return.
fn sign_of(x: i32) -> i32 {
    if x < 0 {
        return -1;
    } else {
        let zero = x == 0;
        return select(1, 0, zero);
    }
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let x = xs[t];
    let base = t * 3u;
    out[base] = sign_of(x);
    let q = x & 3;
    var cls: i32;
    switch q {
        case 0: {
            cls = 100;
        }
        case 1: {
            cls = 200;
        }
        case 2: {
            cls = 300;
        }
        // x & 3 is below 4: default is never taken.
        case 3, default: {
            cls = 400;
        }
    }
    out[base + 1u] = cls;
    var y = x;
    loop {
        if x > 10 {
            break;
        }
        y = x * 2;
        break;
    }
    out[base + 2u] = y;
}
