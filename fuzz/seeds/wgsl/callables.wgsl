// Twin of tests/corpus/callables.xir: sum of squares of x[4t .. 4t+3]
// through helper functions (a value argument and a ptr<function, f32>
// accumulator), then a swap of two locals through pointers and a swap of the
// two elements of a local array.
//
// The XIR kernel passes references to the array elements (gep results) to
// the same `swap`. WGSL allows a pointer argument only to a whole variable
// (without the unrestricted_pointer_parameters extension), and naga 30's
// SPIR-V writer panics on `swap(&arr[0], &arr[1])` even though its validator
// accepts it (gfx-rs/wgpu#4540), so the twin swaps the elements through a
// pointer to the whole array instead. The results are the same.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<storage, read_write> pairs: array<u32>;

// x * x, by value.
fn square(x: f32) -> f32 {
    return x * x;
}

// *acc += v * v: a value argument and a pointer argument.
fn accumulate_square(v: f32, acc: ptr<function, f32>) {
    let sq = square(v);
    let old = *acc;
    *acc = old + sq;
}

// Exchange two u32 through pointers.
fn swap(a: ptr<function, u32>, b: ptr<function, u32>) {
    let va = *a;
    let vb = *b;
    *a = vb;
    *b = va;
}

// Exchange the two elements of an array through a pointer to it.
fn swap_pair(arr: ptr<function, array<u32, 2>>) {
    let first = (*arr)[0];
    let second = (*arr)[1];
    (*arr)[0] = second;
    (*arr)[1] = first;
}

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let base = t * 4u;
    var acc = 0.0;
    for (var k = 0u; k < 4u; k++) {
        accumulate_square(x[base + k], &acc);
    }
    sums[t] = acc;
    var p = t;
    var q = t + 100u;
    swap(&p, &q);
    var arr: array<u32, 2>;
    arr[0] = 7u;
    arr[1] = base;
    swap_pair(&arr);
    let whole = arr;
    pairs[base] = p;
    pairs[base + 1u] = q;
    pairs[base + 2u] = whole[0];
    pairs[base + 3u] = whole[1];
}
