// inputs: {"dispatch": [8, 1, 1], "args": {"ints": [[0, 1, -1, 127], [128, -128, -129, 255], [256, -300, 77, -77], [1000000, -1000000, 5, 9], [-2, 3, -4, 5], [2147483647, -2147483648, 64, -64], [17, 34, 51, 68], [-100, 100, -50, 50]], "dots": {"fill": [0, 0], "len": 8}}}
// expect: {"buffers":{"dots":[[4294967295,511],[16768,81536],[4294963908,50884],[1984,51136],[4294967244,6604],[0,65280],[2006,15062],[13400,77400]],"ints":[[0,1,-1,127],[128,-128,-129,255],[256,-300,77,-77],[1000000,-1000000,5,9],[-2,3,-4,5],[2147483647,-2147483648,64,-64],[17,34,51,68],[-100,100,-50,50]]},"printed":[]}
// The packed 4x8-bit dot products (naga writes them with
// SPV_KHR_integer_dot_product, which the foreign runner does not enable).
@group(0) @binding(0) var<storage, read> ints: array<vec4<i32>>;
@group(0) @binding(1) var<storage, read_write> dots: array<vec2<u32>>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let v = ints[i];
    let a = pack4xI8(v);
    let b = pack4xI8(v.wzyx * vec4(3, -1, 2, 1));
    dots[i] = vec2(bitcast<u32>(dot4I8Packed(a, b)), dot4U8Packed(a, b));
}
