// Twin of tests/corpus/select_minmax.xir: select, min, max, clamp, abs,
// saturate and step on floats (NaN operands: min/max return the other
// operand), signed and unsigned integers, and vectors. Invocation t handles
// element t of each input.
//
// XIR `step(edge, x)` is 0 when x < edge, else 1 (so 1 when either is NaN);
// WGSL's step(edge, x) is 1 when edge <= x, else 0 (so 0 with a NaN), which
// differs on this kernel's NaN inputs: the twin spells it as a select.
@group(0) @binding(0) var<storage, read> fa: array<f32>;
@group(0) @binding(1) var<storage, read> fb: array<f32>;
@group(0) @binding(2) var<storage, read> ia: array<i32>;
@group(0) @binding(3) var<storage, read> ua: array<u32>;
@group(0) @binding(4) var<storage, read_write> fo: array<f32>;
@group(0) @binding(5) var<storage, read_write> io: array<i32>;
@group(0) @binding(6) var<storage, read_write> uo: array<u32>;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let x = fa[t];
    let y = fb[t];
    let fb0 = t * 6u;
    fo[fb0] = min(x, y);
    let mx = max(x, y);
    fo[fb0 + 1u] = mx;
    fo[fb0 + 2u] = clamp(x, -1.0, 1.0);
    let lt = x < y;
    fo[fb0 + 3u] = select(y, x, lt);
    fo[fb0 + 4u] = saturate(mx);
    fo[fb0 + 5u] = select(1.0, 0.0, x < y);
    // signed integers
    let i = ia[t];
    let ib = t * 4u;
    io[ib] = min(i, -5);
    io[ib + 1u] = max(i, -5);
    io[ib + 2u] = clamp(i, -100, 100);
    io[ib + 3u] = abs(i);
    // unsigned integers and a vector max / min, lanes summed
    let v = ua[t];
    let ub = t * 3u;
    uo[ub] = min(v, 1000u);
    uo[ub + 1u] = clamp(v, 10u, 4000000000u);
    let uv = vec2<u32>(v, t);
    let vmx = max(uv, vec2<u32>(5u, 5u));
    let vmn = min(vmx, vec2<u32>(4000000000u, 6u));
    uo[ub + 2u] = vmn.x + vmn.y;
}
