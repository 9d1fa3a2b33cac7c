// naga ends every arm of a void function's trailing `if` / `switch` with a
// `return`; the lowering drops those and keeps every other one (the early
// return of thread 7, the return inside case 1's inner `if`).
// inputs: {"dispatch": [12, 1, 1], "args": {"out": {"fill": 0, "len": 12}}}
// expect: {"buffers":{"out":[10,21,30,10,20,30,10,0,30,10,20,30]},"printed":[]}
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

fn mark(i: u32, v: u32) {
    if i < arrayLength(&out) {
        out[i] = v;
    } else {
        return;
    }
}

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i == 7u {
        return;
    }
    switch i % 3u {
        case 0u: {
            mark(i, 10u);
        }
        case 1u: {
            if i > 2u {
                mark(i, 20u);
                return;
            }
            mark(i, 21u);
        }
        default: {
            out[i] = 30u;
        }
    }
}
