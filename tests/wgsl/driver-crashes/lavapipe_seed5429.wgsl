// wgslsmith seed 5429 (tests/tests/wgsl_differential.rs skips that seed). In the
// differential test process lavapipe (Mesa 25, LLVM 15) segfaults inside
// LLVM (RegAllocBase::postOptimization, from MCJIT) while it builds a
// compute pipeline for this program (2 runs of 2); run alone from the CLI,
// our -O2 module and naga's both build and agree. A driver crash, not a
// wrong result; which of the two modules triggers it in-process is not
// isolated yet.
// wgslsmith program; workgroup size 32, 4 workgroup(s).
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<uniform> param: u32;
const K0: u32 = 5u;
const K1: f32 = 16.0f;
struct S2 {
    m0: u32,
    m1: u32,
}
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = gid.x * 4u;
    var it3 = 0u;
    loop {
        if (K1 > (-input[gid.x % arrayLength(&input)])) {
            return;
        }
        for (var it4 = 0u; it4 < min(bitcast<u32>(i32(input[0u % arrayLength(&input)])), 5u); it4 = it4 + 1u) {
            output[base + 3u] = (clamp(it4, 13u, 859u) * firstTrailingBit(gid.x));
            var v5: f32 = clamp(max(min((input[it3 % arrayLength(&input)] * input[7u % arrayLength(&input)]), (K1 * input[it3 % arrayLength(&input)])), input[0u % arrayLength(&input)]), -65536.0f, 65536.0f);
            var it6 = 0u;
            while it6 < min(bitcast<u32>((abs(input[it3 % arrayLength(&input)]) + 1.0f)), 1u) {
                it6 += 1u;
                v5 = ceil((v5 * 0.5f));
                var st7 = S2(firstLeadingBit(gid.x), (u32(max(input[it3 % arrayLength(&input)], 0.0f)) ^ it4));
                st7.m1 = u32(max((-(input[it6 % arrayLength(&input)] - v5)), 0.0f));
                v5 = 1.0f;
            }
            var v8: f32 = (-(input[gid.x % arrayLength(&input)] + f32(clamp(i32(input[it4 % arrayLength(&input)]), -4096i, 4096i))));
        }
        for (var it9 = 0u; it9 < min(u32(max(input[0u % arrayLength(&input)], 0.0f)), 5u); it9++) {
            switch ((~min(it9, K0)) % 6u) {
                case 4u: {
                    if (!(input[it9 % arrayLength(&input)] == input[it3 % arrayLength(&input)])) {
                        break;
                    }
                    output[base + (gid.x % 4u)] = select(param, u32(max(input[gid.x % arrayLength(&input)], 0.0f)), (input[it3 % arrayLength(&input)] > 0.0f));
                    var v10: f32 = input[gid.x % arrayLength(&input)];
                    output[base + 1u] = min(it3, (~(~it3)));
                }
                case 0u: {
                    var v11: u32 = param;
                }
                case default: {
                    var arr12: array<f32, 4>;
                }
            }
        }
        continuing {
            it3 += 1u;
            break if it3 >= 5u;
        }
    }
    var it13 = 0u;
    loop {
        if it13 >= 4u {
            break;
        }
        it13++;
        var it14 = 0u;
        while it14 < 5u {
            it14 += 1u;
            if (bool(bitcast<u32>((abs(input[it14 % arrayLength(&input)]) + 1.0f))) && true) {
                output[base + 2u] = it13;
                var v15: i32 = i32(input[7u % arrayLength(&input)]);
                v15 = (-1i);
            }
            switch (((i32(input[it14 % arrayLength(&input)]) / i32(input[it14 % arrayLength(&input)])) * (i32(input[it13 % arrayLength(&input)]) / 1i)) % 4i) {
                case -3i: {
                    let v16 = (bitcast<u32>((abs(trunc((input[it14 % arrayLength(&input)] * 0.5f))) + 1.0f)) - ((param / u32(max(input[5u % arrayLength(&input)], 0.0f))) & 4u));
                    var v17: f32 = abs(min(clamp(input[it13 % arrayLength(&input)], -10.0f, -2.0f), select((-4.0f), input[4u % arrayLength(&input)], (input[it14 % arrayLength(&input)] > 0.0f))));
                    output[base + 2u] = (v16 - min((u32(max(input[it14 % arrayLength(&input)], 0.0f)) + 32u), u32(i32(input[it14 % arrayLength(&input)]))));
                    break;
                }
                case -4i: {
                    var v18: i32 = (sign((-i32(input[gid.x % arrayLength(&input)]))) >> 17u);
                    break;
                }
                case 3i: {
                    let v19 = input[gid.x % arrayLength(&input)];
                    if bool(bitcast<u32>(i32(input[gid.x % arrayLength(&input)]))) {
                        continue;
                    }
                }
                case 0i: {
                    var v20: i32 = (i32(input[it14 % arrayLength(&input)]) / (i32(input[7u % arrayLength(&input)]) - (i32(input[0u % arrayLength(&input)]) + i32(input[gid.x % arrayLength(&input)]))));
                }
                default: {
                    output[base + ((it13 * it14) % 4u)] = select(((it13 - it14) / 7u), (param % (~gid.x)), (clamp(input[4u % arrayLength(&input)], -9.0f, -8.0f) >= (input[gid.x % arrayLength(&input)] + 15.0f)));
                }
            }
            if (((i32(input[it14 % arrayLength(&input)]) % i32(input[gid.x % arrayLength(&input)])) - sign(i32(input[it14 % arrayLength(&input)]))) < i32(input[gid.x % arrayLength(&input)])) {
                if (it14 <= max(u32(max(input[gid.x % arrayLength(&input)], 0.0f)), param)) {
                    break;
                }
                let v21 = u32(max(max(sign(input[4u % arrayLength(&input)]), min(input[it14 % arrayLength(&input)], input[it13 % arrayLength(&input)])), 0.0f));
                if (i32(input[1u % arrayLength(&input)]) > i32((input[5u % arrayLength(&input)] > 0.0f))) {
                    return;
                }
                output[base + 3u] = it14;
            }
            var arr22 = array<f32, 2>(clamp(input[it13 % arrayLength(&input)], 2.0f, 7.0f), select(8.0f, input[5u % arrayLength(&input)], (input[it14 % arrayLength(&input)] > 0.0f)));
        }
        output[base + 0u] = bitcast<u32>(i32(input[gid.x % arrayLength(&input)]));
        var it23 = 0u;
        loop {
            if ((!(input[5u % arrayLength(&input)] > 0.0f)) || ((-1i) <= i32(input[it13 % arrayLength(&input)]))) {
                continue;
            }
            for (var it24 = 0u; it24 < 3u; it24 = it24 + 1u) {
                var v25: u32 = (~(output[base + 1u] << 6u));
                let v26 = i32(input[it13 % arrayLength(&input)]);
                v25 = u32(max(input[it13 % arrayLength(&input)], 0.0f));
            }
            if (bitcast<u32>(i32(input[gid.x % arrayLength(&input)])) < (K0 & gid.x)) {
                break;
            }
            output[base + (bitcast<u32>((abs(input[it13 % arrayLength(&input)]) + 1.0f)) % 4u)] = param;
            continuing {
                it23 += 1u;
                break if it23 >= 4u;
            }
        }
    }
    let v27 = max(gid.x, (bitcast<u32>(i32(input[gid.x % arrayLength(&input)])) + bitcast<u32>(i32(input[gid.x % arrayLength(&input)]))));
    var it28 = 0u;
    while it28 < 5u {
        it28 += 1u;
        switch ((~i32(input[it28 % arrayLength(&input)])) % 4i) {
            case 2i, -1i: {
                output[base + 3u] = (output[base + 0u] % (u32((input[it28 % arrayLength(&input)] > 0.0f)) ^ gid.x));
                switch (firstTrailingBit((param * gid.x)) % 6u) {
                    case 0u: {
                        output[base + 2u] = ((9u * (output[base + 1u] * it28)) + 19u);
                    }
                    case 3u: {
                        let v29 = (input[v27 % arrayLength(&input)] > 0.0f);
                        output[base + (bitcast<u32>((abs(input[gid.x % arrayLength(&input)]) + 1.0f)) % 4u)] = extractBits((u32(i32(input[it28 % arrayLength(&input)])) + u32(max(input[gid.x % arrayLength(&input)], 0.0f))), 20u, 3u);
                        let v30 = input[1u % arrayLength(&input)];
                        if ((i32(input[v27 % arrayLength(&input)]) & i32(input[it28 % arrayLength(&input)])) == i32(v29)) {
                            continue;
                        }
                        break;
                    }
                    default: {
                        if (bitcast<u32>(i32(input[v27 % arrayLength(&input)])) > select(it28, v27, (input[4u % arrayLength(&input)] > 0.0f))) {
                            continue;
                        }
                        let v31 = (!(i32((input[gid.x % arrayLength(&input)] > 0.0f)) >= firstTrailingBit(i32(input[it28 % arrayLength(&input)]))));
                        if bool(select(8u, u32(max(input[v27 % arrayLength(&input)], 0.0f)), v31)) {
                            continue;
                        }
                        if (i32(input[gid.x % arrayLength(&input)]) == (i32(input[3u % arrayLength(&input)]) << (gid.x & 31u))) {
                            break;
                        }
                    }
                }
                output[base + 3u] = (~(output[base + 0u] ^ u32(max(input[it28 % arrayLength(&input)], 0.0f))));
            }
            default: {
                var it32 = 0u;
                loop {
                    if it32 >= min(it28, 1u) {
                        break;
                    }
                    it32++;
                    var v33: i32 = (select((i32(input[it28 % arrayLength(&input)]) + i32(input[7u % arrayLength(&input)])), select(i32(input[it32 % arrayLength(&input)]), i32(input[0u % arrayLength(&input)]), (input[gid.x % arrayLength(&input)] > 0.0f)), true) / i32(countTrailingZeros(u32(max(input[gid.x % arrayLength(&input)], 0.0f)))));
                    let v34 = bool(((19u / it28) * gid.x));
                    let v35 = v34;
                    var arr36 = array<f32, 4>(input[it32 % arrayLength(&input)], (input[gid.x % arrayLength(&input)] - input[v27 % arrayLength(&input)]), clamp(input[gid.x % arrayLength(&input)], 8.0f, 15.0f), input[1u % arrayLength(&input)]);
                }
                if (u32(max(input[it28 % arrayLength(&input)], 0.0f)) != u32(bool(param))) {
                    var v37: f32 = input[v27 % arrayLength(&input)];
                    v37 = clamp(select(((-v37) + clamp(v37, 5.0f, 9.0f)), max(max(v37, v37), (v37 - K1)), bool(v27)), -65536.0f, 65536.0f);
                    if ((v37 >= v37) || (i32(input[2u % arrayLength(&input)]) != i32(input[5u % arrayLength(&input)]))) {
                        continue;
                    }
                } else {
                    if (v27 < u32((input[gid.x % arrayLength(&input)] > 0.0f))) {
                        return;
                    }
                    output[base + 1u] = param;
                    let v38 = ((-1i) & i32(input[it28 % arrayLength(&input)]));
                }
                var v39: f32 = select(K1, (floor((input[0u % arrayLength(&input)] * 0.5f)) - abs(input[0u % arrayLength(&input)])), (input[it28 % arrayLength(&input)] > 0.0f));
                output[base + (u32(max(input[it28 % arrayLength(&input)], 0.0f)) % 4u)] = reverseBits(output[base + 0u]);
            }
        }
    }
    output[base + ((param | output[base + 2u]) % 4u)] = param;
    var checksum = 0u;
    checksum = checksum * 31u + v27;
    output[base] = checksum;
}
