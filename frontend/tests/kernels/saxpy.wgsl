// inputs: {"dispatch": [64, 1, 1], "args": {"x": [1, 2, 3, 4], "y": [10, 20, 30, 40], "p": [2.0, 4]}}
// expect: {"buffers":{"x":[1.0,2.0,3.0,4.0],"y":[13.0,25.0,37.0,49.0]},"printed":[]}
struct Params { a: f32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn axpy(a: f32, xv: f32, acc: ptr<function, f32>) {
    *acc = a * xv + *acc;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.n) { return; }
    var acc = y[i];
    axpy(p.a, x[i], &acc);
    var k = 0;
    loop {
        if k >= 3 { break; }
        acc = acc + f32(k);
        continuing { k = k + 1; break if k == 2; }
    }
    y[i] = acc;
}
