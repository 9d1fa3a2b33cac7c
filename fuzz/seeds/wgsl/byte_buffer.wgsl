// Twin of tests/corpus/byte_buffer.xir: invocation t reads the u32 at byte
// offset 4t, writes it to words[t], and writes the f32 value of those bits
// plus one back at the same offset.
//
// WGSL has no byte-addressed buffers: `raw` is an array<u32> and byte
// offset 4t is word t. Its input is therefore the same bytes as
// little-endian words (tests/wgsl/byte_buffer.inputs.json), and the
// outputs report `raw` as words rather than bytes (same bits).
@group(0) @binding(0) var<storage, read_write> raw: array<u32>;
@group(0) @binding(1) var<storage, read_write> words: array<u32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let off = t * 4u;
    let word = off / 4u;
    let w = raw[word];
    words[t] = w;
    let f = bitcast<f32>(raw[word]);
    raw[word] = bitcast<u32>(f + 1.0);
}
