// inputs: {"dispatch": [16, 1, 1], "args": {"seeds": [0, 1, 2, 42, 3735928559, 4294967295, 12345, 7, 99, 2147483648], "out": {"fill": [0, 0, 0, 0], "len": 10}}}
// expect: {"buffers":{"out":[[1268118805,2715340519,129708002,18],[4218009092,2715340519,2831084092,131],[3958272823,832677062,2055130248,130],[1926778335,3323930839,1223963391,130],[2424807371,2418464337,1730779506,130],[3809873841,1892120161,3861530882,21607],[3117802412,3555724745,4099845390,31279],[1527855074,59520049,2120684060,130],[2520404486,2741192805,2608255815,131],[3415550869,3013739980,566699590,13]],"seeds":[0,1,2,42,3735928559,4294967295,12345,7,99,2147483648]},"printed":[]}
// FNV-1a over 4 bytes of each word, xorshift32 rounds, a PCG-style hash,
// bucketed with a switch on the top bits; all with u32 wrap-around.
@group(0) @binding(0) var<storage, read> seeds: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;

fn fnv1a(word: u32) -> u32 {
    var h = 2166136261u;
    for (var i = 0u; i < 4u; i++) {
        let byte = (word >> (8u * i)) & 0xffu;
        h = (h ^ byte) * 16777619u;
    }
    return h;
}

fn xorshift(state: ptr<function, u32>) -> u32 {
    var x = *state;
    x ^= x << 13u;
    x ^= x >> 17u;
    x ^= x << 5u;
    *state = x;
    return x;
}

fn pcg(v: u32) -> u32 {
    let state = v * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&seeds)) { return; }
    let s = seeds[gid.x];
    var st = max(s, 1u);
    var acc = 0u;
    for (var r = 0u; r < 3u; r++) { acc += xorshift(&st); }
    let h = pcg(s);
    var bucket: u32;
    switch (h >> 30u) {
        case 0u: { bucket = countOneBits(h); }
        case 1u, 2u: { bucket = firstLeadingBit(h) + 100u; }
        default: { bucket = reverseBits(h) & 0xffffu; }
    }
    out[gid.x] = vec4<u32>(fnv1a(s), acc, h, bucket);
}
