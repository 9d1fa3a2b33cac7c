// inputs: {"dispatch": [8, 1, 1], "args": {"xs": [[1.0, -3.5], [0.0, -0.0], [1.0000000031710769e-30, 2.999999894026671e+30], [0.10000000149011612, -7.25], [1.500000042698307e-38, 1.2676506002282294e+30], [123456.0, -0.75], [1.0, 1.0], [5.5, -0.0010000000474974513]], "ks": [[3, -2], [10, -10], [90, -90], [-126, 127], [50, -100], [-20, 20], [-130, 130], [0, 260]], "fracts": {"fill": [0, 0], "len": 8}, "exps": {"fill": [0, 0], "len": 8}, "scaled": {"fill": [0, 0], "len": 8}, "one": {"fill": [0, 0], "len": 8}}}
// expect: {"buffers":{"exps":[[1,2],[0,0],[-99,102],[-3,3],[-125,101],[17,0],[1,1],[3,-9]],"fracts":[[0.5,-0.875],[0.0,"-0.0"],[0.6338253021240234,0.5916456580162048],[0.800000011920929,-0.90625],[0.6380294561386108,0.5],[0.94189453125,-0.75],[0.5,0.5],[0.6875,-0.5120000243186951]],"ks":[[3,-2],[10,-10],[90,-90],[-126,127],[50,-100],[-20,20],[-130,130],[0,260]],"one":[[1.0,-28.0],[0.0,"-0.0"],[1.0000000031710769e-30,"inf"],[0.10000000149011612,-8.522334043461584e-38],[1.500000042698307e-38,"inf"],[123456.0,-7.152557373046875e-7],[1.0,7.346839692639297e-40],[5.5,-0.0010000000474974513]],"scaled":[[8.0,-0.875],[0.0,"-0.0"],[0.0012379400432109833,2423.380615234375],[1.1754946310819804e-39,"-inf"],[1.688849908337956e-23,1.0],[0.11773681640625,-786432.0],[7.346839692639297e-40,"inf"],[5.5,"-inf"]],"xs":[[1.0,-3.5],[0.0,"-0.0"],[1.0000000031710769e-30,2.999999894026671e+30],[0.10000000149011612,-7.25],[1.500000042698307e-38,1.2676506002282294e+30],[123456.0,-0.75],[1.0,1.0],[5.5,-0.0010000000474974513]]},"printed":[]}
// frexp and ldexp written out from the bits (normal values, zeros of both
// signs; ldexp across the exponent range, past it clamped).
@group(0) @binding(0) var<storage, read> xs: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> ks: array<vec2<i32>>;
@group(0) @binding(2) var<storage, read_write> fracts: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> exps: array<vec2<i32>>;
@group(0) @binding(4) var<storage, read_write> scaled: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> one: array<vec2<f32>>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let x = xs[i];
    let parts = frexp(x);
    fracts[i] = parts.fract;
    exps[i] = parts.exp;
    scaled[i] = ldexp(x, ks[i]);
    let s = frexp(x.x);
    one[i] = vec2(ldexp(s.fract, s.exp), ldexp(x.y, ks[i].x));
}
