// inputs: {"dispatch": [4, 1, 1], "args": {"n": [0, 1, 5, 9], "out": {"fill": 0, "len": 16}}}
// expect: {"buffers":{"n":[0,1,5,9],"out":[0,0,2,100,0,1,6,201,7,3,252,205,12,5,1995840,300]},"printed":[]}
// Every WGSL loop form: for, while, loop with continuing and `break if`,
// switch with a multi-value case, break and continue, a const and an
// override with its default.
const LIMIT: u32 = 6u;
override STEP: u32 = 2u;
@group(0) @binding(0) var<storage, read> n: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let k = n[t];
    var sum = 0u;
    for (var i = 0u; i < k; i += 1u) {
        if (i == 3u) { continue; }
        if (i >= LIMIT) { break; }
        sum += i;
    }
    var w = k;
    var steps = 0u;
    while (w > 0u) {
        w = select(w - STEP, 0u, w < STEP);
        steps++;
    }
    var j = 0u;
    var prod = 1u;
    loop {
        if (j == 2u) { j++; continue; }
        prod *= (j + 2u);
        continuing {
            j++;
            break if j > k;
        }
    }
    var kind: u32;
    switch (k) {
        case 0u: { kind = 100u; }
        case 1u, 5u: { kind = 200u + k; }
        default: { kind = 300u; if (k > 8u) { break; } kind = 301u; }
    }
    out[t * 4u] = sum;
    out[t * 4u + 1u] = steps;
    out[t * 4u + 2u] = prod;
    out[t * 4u + 3u] = kind;
}
