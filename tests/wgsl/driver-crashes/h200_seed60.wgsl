// wgslsmith seed 60 (tests/tests/wgsl_differential.rs skips it). Our SPIR-V of
// it passes SPIRV-Tools validation at -O0 and -O2, runs on lavapipe and agrees
// with the interpreter, yet the NVIDIA H200 driver 580.159.04 segfaults in
// libnvidia-glvkspirv.so while it builds the compute pipeline. Not reduced
// yet; to be reduced and worked around (issue 25, reproducers that reduce
// themselves). Inputs: h200_seed60.inputs.json beside it.
// wgslsmith program; workgroup size 32, 1 workgroup(s).
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<uniform> param: u32;
var<workgroup> wg: array<u32, 32>;
const K0: f32 = 14.0f;
const K1: f32 = 3.0f;
fn fun2(p: ptr<function, f32>, a0: bool) {
    for (var it3 = 0u; it3 < 1u; it3++) {
        (*p) = max(0.0f, clamp(floor(bitcast<f32>(((it3 & 0x3fffu) | 0x40000000u))), 5.0f, 13.0f));
        switch (it3 % 6u) {
            case 7u, 4u: {
                (*p) = f32(input[it3 % arrayLength(&input)] & 1023u);
            }
            case 3u: {
                (*p) = clamp(max((*p), (min((*p), (*p)) * clamp((*p), 7.0f, 14.0f))), -65536.0f, 65536.0f);
                (*p) = abs(select((*p), (*p), (K1 <= f32(input[6u % arrayLength(&input)] & 1023u))));
            }
            default: {
                if ((~input[2u % arrayLength(&input)]) == it3) {
                    break;
                }
                (*p) = max((*p), ceil((((*p) + 4.0f) * 0.5f)));
                (*p) = f32((((input[it3 % arrayLength(&input)] - 12u) % u32(max((*p), 0.0f))) % 4096u));
                if (i32(a0) < i32(a0)) {
                    continue;
                }
            }
        }
        continue;
    }
    (*p) = clamp(min((5.0f + (*p)), (*p)), 0.0f, 2.0f);
    var it4 = 0u;
    loop {
        if ((input[it4 % arrayLength(&input)] & 1u) == 1u) {
            break;
        }
        continuing {
            it4 += 1u;
            break if it4 >= 3u;
        }
    }
    for (var it5 = 0u; it5 < 1u; it5 += 1u) {
        var it6 = 0u;
        while it6 < 2u {
            it6 += 1u;
            (*p) = (*p);
            if a0 {
                continue;
            }
            let v7 = (it6 << ((it5 * input[it6 % arrayLength(&input)]) & 31u));
        }
        if a0 {
            return;
        }
    }
}
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = gid.x * 4u;
    let lidx = gid.x % 32u;
    wg[lidx] = param;
    workgroupBarrier();
    let wgv = wg[(lidx + 1u) % 32u];
    var v8: bool = ((!((input[2u % arrayLength(&input)] & 1u) == 1u)) && (i32(f32(input[wgv % arrayLength(&input)] & 1023u)) != firstLeadingBit(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
    switch (i32(f32(input[1u % arrayLength(&input)] & 1023u)) + (~bitcast<i32>(input[gid.x % arrayLength(&input)]))) {
        case 3i: {
            v8 = v8;
        }
        case 4i: {
            let v9 = v8;
            var it10 = 0u;
            loop {
                var v11: i32 = select(((bitcast<i32>(input[wgv % arrayLength(&input)]) - 3i) + i32(f32(input[gid.x % arrayLength(&input)] & 1023u))), (i32(v9) * (bitcast<i32>(input[4u % arrayLength(&input)]) & (-5i))), bool((param >> (it10 & 31u))));
                for (var it12 = 0u; it12 < 3u; it12 = it12 + 1u) {
                    output[base + (select(it10, gid.x, false) % 4u)] = u32(max(max(f32(input[4u % arrayLength(&input)] & 1023u), clamp(f32(input[wgv % arrayLength(&input)] & 1023u), 2.0f, 7.0f)), 0.0f));
                    let v13 = (floor(bitcast<f32>(((param & 0x3fffu) | 0x40000000u))) - K0);
                }
                switch (v11 % 4i) {
                    case 2i: {
                        var v14: f32 = (-11.0f);
                        let v15 = ((i32(v14) >> 30u) % ((-1i) - (~v11)));
                        output[base + 2u] = bitcast<u32>((abs(select(sign(v14), min(v14, v14), (v8 && v8))) + 1.0f));
                        output[base + 0u] = u32(v9);
                    }
                    case default: {
                        v11 = v11;
                    }
                }
                continuing {
                    it10 += 1u;
                    break if it10 >= 1u;
                }
            }
            break;
        }
        case -2i: {
            var v16: f32 = (8.0f * ((f32(input[gid.x % arrayLength(&input)] & 1023u) * (-4.0f)) - min(K0, f32(input[gid.x % arrayLength(&input)] & 1023u))));
            var it17 = 0u;
            loop {
                if it17 >= 2u {
                    break;
                }
                it17++;
                let v18 = ((input[gid.x % arrayLength(&input)] & 1u) == 1u);
                var arr19 = array<i32, 4>((~bitcast<i32>(input[3u % arrayLength(&input)])), (bitcast<i32>(input[wgv % arrayLength(&input)]) | bitcast<i32>(input[2u % arrayLength(&input)])), i32(param), clamp(bitcast<i32>(input[wgv % arrayLength(&input)]), -289i, 361i));
                output[base + 0u] = gid.x;
                output[base + 0u] = (gid.x >> ((~(14u / param)) & 31u));
            }
            output[base + 2u] = ((u32(max(v16, 0.0f)) - countLeadingZeros(input[gid.x % arrayLength(&input)])) + u32((output[base + 0u] > 12u)));
            output[base + (max(input[3u % arrayLength(&input)], 10u) % 4u)] = (extractBits(u32(max(v16, 0.0f)), 17u, 1u) + (~bitcast<u32>(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
        }
        case 2i, default: {
            var it20 = 0u;
            loop {
                var v21: i32 = bitcast<i32>(input[it20 % arrayLength(&input)]);
                switch (u32((15.0f == f32(input[2u % arrayLength(&input)] & 1023u))) % 6u) {
                    case 4u: {
                        var arr22: array<u32, 8>;
                        var v23: f32 = (-clamp(select((-7.0f), K1, v8), 1.0f, 1.0f));
                        arr22[(wgv % 8u)] = bitcast<u32>((-(v21 / i32(-2147483648))));
                        if (!((input[0u % arrayLength(&input)] & 1u) == 1u)) {
                            return;
                        }
                        continue;
                    }
                    case 2u, 5u: {
                        let v24 = u32(max(sign(f32(input[wgv % arrayLength(&input)] & 1023u)), 0.0f));
                    }
                    case 3u: {
                        v8 = (bitcast<i32>(input[7u % arrayLength(&input)]) < ((~bitcast<i32>(input[5u % arrayLength(&input)])) | select(v21, v21, v8)));
                        output[base + 0u] = input[gid.x % arrayLength(&input)];
                        var v25: f32 = f32(input[gid.x % arrayLength(&input)] & 1023u);
                        fun2(&v25, (f32(input[it20 % arrayLength(&input)] & 1023u) >= v25));
                    }
                    case 0u, default: {
                        if ((-12.0f) < f32(input[wgv % arrayLength(&input)] & 1023u)) {
                            break;
                        }
                    }
                }
                continuing {
                    it20 += 1u;
                    break if it20 >= 3u;
                }
            }
            if (input[4u % arrayLength(&input)] < wgv) {
                v8 = ((~param) != u32(max(select(f32(input[gid.x % arrayLength(&input)] & 1023u), K1, v8), 0.0f)));
                var v26: u32 = (clamp((~param), 13u, 770u) & ((~gid.x) >> (param & 31u)));
                v26--;
                if (f32(input[v26 % arrayLength(&input)] & 1023u) <= clamp(clamp(f32(input[gid.x % arrayLength(&input)] & 1023u), 4.0f, 9.0f), -16.0f, -14.0f)) {
                    output[base + 0u] = ((select(v26, input[gid.x % arrayLength(&input)], true) << ((input[gid.x % arrayLength(&input)] * gid.x) & 31u)) / 16u);
                    var v27: i32 = (countLeadingZeros(i32(v26)) * (-i32(wgv)));
                    v27 &= select(min(v27, v27), (v27 - v27), (!v8));
                    if (!bool(output[base + 0u])) {
                        break;
                    }
                } else {
                    v26 = bitcast<u32>((bitcast<i32>(input[gid.x % arrayLength(&input)]) * countLeadingZeros(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
                    var v28: u32 = (u32(bool(v26)) << ((gid.x % 16u) & 31u));
                    var v29: f32 = floor(bitcast<f32>(((u32(i32(f32(input[v28 % arrayLength(&input)] & 1023u))) & 0x3fffu) | 0x40000000u)));
                }
            }
            if v8 {
                var v30: i32 = bitcast<i32>(input[gid.x % arrayLength(&input)]);
                var it31 = 0u;
                loop {
                    if (v8 && (param == param)) {
                        break;
                    }
                    continuing {
                        it31 += 1u;
                        break if it31 >= 4u;
                    }
                }
            } else if ((f32(input[gid.x % arrayLength(&input)] & 1023u) * f32(input[wgv % arrayLength(&input)] & 1023u)) != sign(f32(input[wgv % arrayLength(&input)] & 1023u))) {
                var arr32: array<u32, 8>;
                output[base + 3u] = u32(((bitcast<i32>(input[wgv % arrayLength(&input)]) >> (input[gid.x % arrayLength(&input)] & 31u)) != (bitcast<i32>(input[gid.x % arrayLength(&input)]) / bitcast<i32>(input[7u % arrayLength(&input)]))));
                let v33 = max(((-14.0f) - f32(input[gid.x % arrayLength(&input)] & 1023u)), K1);
                output[base + 3u] = param;
                break;
            }
        }
    }
    if ((min(K1, f32(input[wgv % arrayLength(&input)] & 1023u)) * select(f32(input[5u % arrayLength(&input)] & 1023u), f32(input[gid.x % arrayLength(&input)] & 1023u), ((input[gid.x % arrayLength(&input)] & 1u) == 1u))) == f32(input[6u % arrayLength(&input)] & 1023u)) {
        var it34 = 0u;
        loop {
            if it34 >= 3u {
                break;
            }
            it34++;
            let v35 = (!(17u != select(4294967295u, gid.x, v8)));
        }
    }
    if (sign(extractBits(bitcast<i32>(input[wgv % arrayLength(&input)]), 15u, 11u)) <= (-bitcast<i32>(input[gid.x % arrayLength(&input)]))) {
        output[base + 0u] = select(11u, u32((!v8)), (f32(input[gid.x % arrayLength(&input)] & 1023u) < f32(input[2u % arrayLength(&input)] & 1023u)));
        var it36 = 0u;
        loop {
            if it36 >= 3u {
                break;
            }
            it36++;
            switch (((bitcast<i32>(input[wgv % arrayLength(&input)]) - bitcast<i32>(input[it36 % arrayLength(&input)])) ^ firstTrailingBit(bitcast<i32>(input[gid.x % arrayLength(&input)]))) % 4i) {
                case -3i: {
                    var v37: u32 = (((it36 / output[base + 3u]) >> 5u) << (it36 & 31u));
                }
                default: {
                    output[base + ((16u + gid.x) % 4u)] = firstTrailingBit(insertBits(countOneBits(it36), (5u - wgv), 5u, 20u));
                    v8 = (((input[gid.x % arrayLength(&input)] << (wgv & 31u)) <= u32(max(f32(input[gid.x % arrayLength(&input)] & 1023u), 0.0f))) || (!(8u <= it36)));
                    output[base + 1u] = u32(bitcast<i32>(input[it36 % arrayLength(&input)]));
                    let v38 = param;
                }
            }
            switch ((gid.x >> (max(it36, output[base + 3u]) & 31u)) % 6u) {
                case 3u: {
                    if (!v8) {
                        break;
                    }
                    let v39 = (sign(clamp(f32(input[0u % arrayLength(&input)] & 1023u), -10.0f, -5.0f)) * f32(clamp((~bitcast<i32>(input[it36 % arrayLength(&input)])), -4096i, 4096i)));
                    let v40 = clamp(sign(min(4.0f, f32(input[gid.x % arrayLength(&input)] & 1023u))), 4.0f, 7.0f);
                }
                case 2u: {
                    v8 = (select(i32(v8), select(bitcast<i32>(input[wgv % arrayLength(&input)]), (-14i), false), v8) == max(i32(f32(input[it36 % arrayLength(&input)] & 1023u)), (bitcast<i32>(input[wgv % arrayLength(&input)]) >> 11u)));
                    continue;
                }
                default: {
                    var v41: bool = v8;
                    output[base + (gid.x % 4u)] = bitcast<u32>((bitcast<i32>(input[it36 % arrayLength(&input)]) & abs(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
                    continue;
                }
            }
            v8 = (f32(input[3u % arrayLength(&input)] & 1023u) != 4.0f);
            output[base + 2u] = u32(clamp((bitcast<i32>(input[wgv % arrayLength(&input)]) << 16u), -327i, 362i));
        }
        v8 = (((~param) % input[wgv % arrayLength(&input)]) > u32(max((f32(input[wgv % arrayLength(&input)] & 1023u) + f32(input[3u % arrayLength(&input)] & 1023u)), 0.0f)));
        v8 = (!((input[gid.x % arrayLength(&input)] & 1u) == 1u));
    } else if ((input[gid.x % arrayLength(&input)] - gid.x) > 6u) {
        var it42 = 0u;
        loop {
            var it43 = 0u;
            loop {
                if it43 >= min(u32(max(f32(input[it42 % arrayLength(&input)] & 1023u), 0.0f)), 2u) {
                    break;
                }
                it43++;
                v8 = ((~u32(v8)) > (input[gid.x % arrayLength(&input)] & input[gid.x % arrayLength(&input)]));
            }
            var it44 = 0u;
            while it44 < min(param, 5u) {
                it44 += 1u;
                output[base + 2u] = param;
                let v45 = (((param | param) << ((gid.x >> 2u) & 31u)) <= gid.x);
                output[base + 2u] = (((gid.x - 17u) << 21u) / 7u);
            }
            v8 = v8;
            continuing {
                it42 += 1u;
                break if it42 >= 3u;
            }
        }
    } else if v8 {
        v8 = v8;
        v8 = bool(bitcast<u32>((~bitcast<i32>(input[gid.x % arrayLength(&input)]))));
    }
    if v8 {
        let v46 = (u32(v8) + 7u);
        var v47: i32 = i32((clamp(f32(input[0u % arrayLength(&input)] & 1023u), 6.0f, 14.0f) * f32(input[gid.x % arrayLength(&input)] & 1023u)));
        v8 = (param != ((wgv % 2u) >> ((~wgv) & 31u)));
    } else if v8 {
        output[base + 0u] = countTrailingZeros(output[base + 2u]);
        var it48 = 0u;
        loop {
            if it48 >= min((0u / gid.x), 2u) {
                break;
            }
            it48++;
            var v49: u32 = (firstLeadingBit(max(2147483647u, input[3u % arrayLength(&input)])) / param);
        }
        if v8 {
            for (var it50 = 0u; it50 < 5u; it50 += 1u) {
                output[base + 1u] = input[gid.x % arrayLength(&input)];
            }
            output[base + 2u] = select(clamp(max(param, 4294967295u), 3u, 567u), ((15u + input[wgv % arrayLength(&input)]) << (u32(v8) & 31u)), v8);
            for (var it51 = 0u; it51 < 3u; it51++) {
                output[base + 0u] = (countOneBits((gid.x >> 11u)) << (((gid.x | gid.x) * extractBits(param, 7u, 14u)) & 31u));
                output[base + 0u] = wgv;
                if v8 {
                    return;
                }
            }
            let v52 = param;
        } else if (i32(f32(input[wgv % arrayLength(&input)] & 1023u)) <= countLeadingZeros(bitcast<i32>(input[wgv % arrayLength(&input)]))) {
            switch (reverseBits(u32(bitcast<i32>(input[5u % arrayLength(&input)]))) % 6u) {
                case 1u: {
                    var v53: i32 = bitcast<i32>(input[wgv % arrayLength(&input)]);
                }
                case 4u: {
                    var v54: f32 = f32(input[wgv % arrayLength(&input)] & 1023u);
                    if v8 {
                        return;
                    }
                    v8 = v8;
                }
                case 2u: {
                    if v8 {
                        break;
                    }
                    v8 = v8;
                    v8 = (!v8);
                    output[base + 1u] = clamp(extractBits(u32(v8), 12u, 17u), 29u, 554u);
                }
                default: {
                    if v8 {
                        break;
                    }
                }
            }
            v8 = (select(bitcast<i32>(input[4u % arrayLength(&input)]), i32(((input[gid.x % arrayLength(&input)] & 1u) == 1u)), ((-20i) == bitcast<i32>(input[4u % arrayLength(&input)]))) == bitcast<i32>(input[wgv % arrayLength(&input)]));
            var it55 = 0u;
            loop {
                if it55 >= min((param & 2147483648u), 1u) {
                    break;
                }
                it55++;
                var v56: bool = (((f32(input[gid.x % arrayLength(&input)] & 1023u) * 14.0f) - round((f32(input[7u % arrayLength(&input)] & 1023u) * 0.5f))) != trunc((f32(input[1u % arrayLength(&input)] & 1023u) * 0.5f)));
                var v57: u32 = u32((i32(f32(input[gid.x % arrayLength(&input)] & 1023u)) - bitcast<i32>(input[wgv % arrayLength(&input)])));
                output[base + 0u] = (v57 * (u32(bitcast<i32>(input[6u % arrayLength(&input)])) & (~param)));
                continue;
            }
            var it58 = 0u;
            while it58 < 3u {
                it58 += 1u;
                var v59: bool = (bitcast<i32>(input[it58 % arrayLength(&input)]) == abs((bitcast<i32>(input[3u % arrayLength(&input)]) * bitcast<i32>(input[0u % arrayLength(&input)]))));
                if ((~bitcast<i32>(input[0u % arrayLength(&input)])) <= bitcast<i32>(input[0u % arrayLength(&input)])) {
                    return;
                }
                v8 = (clamp((f32(input[6u % arrayLength(&input)] & 1023u) + f32(input[it58 % arrayLength(&input)] & 1023u)), -6.0f, -6.0f) > (f32(input[wgv % arrayLength(&input)] & 1023u) + (f32(input[it58 % arrayLength(&input)] & 1023u) * 3.0f)));
            }
        } else if v8 {
            let v60 = ((!(v8 || v8)) || v8);
            var it61 = 0u;
            loop {
                if ((wgv >> (gid.x & 31u)) <= (output[base + 3u] * it61)) {
                    break;
                }
                v8 = v60;
                continuing {
                    it61 += 1u;
                    break if it61 >= 5u;
                }
            }
            let v62 = v60;
        } else if (clamp(gid.x, 36u, 507u) > u32(v8)) {
            var it63 = 0u;
            loop {
                if it63 >= 1u {
                    break;
                }
                it63++;
                output[base + 3u] = (insertBits(u32(max(f32(input[it63 % arrayLength(&input)] & 1023u), 0.0f)), (2147483647u * input[wgv % arrayLength(&input)]), 25u, 5u) << (u32((!v8)) & 31u));
                let v64 = u32((bitcast<i32>(input[2u % arrayLength(&input)]) % i32(-2147483648)));
                v8 = v8;
            }
            output[base + (countLeadingZeros(gid.x) % 4u)] = clamp(u32((true || ((input[wgv % arrayLength(&input)] & 1u) == 1u))), 9u, 609u);
            v8 = (f32(input[3u % arrayLength(&input)] & 1023u) <= clamp((f32(input[5u % arrayLength(&input)] & 1023u) * f32(input[gid.x % arrayLength(&input)] & 1023u)), -5.0f, 2.0f));
        } else if ((gid.x != gid.x) || v8) {
            v8 = (select(((-7i) >> (param & 31u)), (-18i), v8) >= ((-bitcast<i32>(input[2u % arrayLength(&input)])) % bitcast<i32>(input[gid.x % arrayLength(&input)])));
            v8 = v8;
        } else {
            output[base + ((11u - output[base + 2u]) % 4u)] = select(select(u32(v8), clamp(param, 0u, 222u), (bitcast<i32>(input[gid.x % arrayLength(&input)]) == (-14i))), u32(((input[gid.x % arrayLength(&input)] & 1u) == 1u)), (!(!((input[3u % arrayLength(&input)] & 1u) == 1u))));
            v8 = bool(firstLeadingBit(output[base + 3u]));
            output[base + (select(31u, param, true) % 4u)] = wgv;
        }
        var v65: u32 = input[wgv % arrayLength(&input)];
    } else if v8 {
        switch i32((13u < gid.x)) {
            case 1i: {
                v8 = (true || (bool(param) || v8));
                if v8 {
                    return;
                }
                break;
            }
            default: {
                let v66 = v8;
            }
        }
        if v8 {
            v8 = (f32(input[gid.x % arrayLength(&input)] & 1023u) >= floor((f32(input[gid.x % arrayLength(&input)] & 1023u) * 0.5f)));
            let v67 = bitcast<i32>(input[wgv % arrayLength(&input)]);
            let v68 = select(((-16.0f) + (K0 - f32(input[gid.x % arrayLength(&input)] & 1023u))), (f32((output[base + 1u] % 4096u)) * K0), (v67 > (v67 - bitcast<i32>(input[wgv % arrayLength(&input)]))));
            let v69 = output[base + 1u];
        }
        output[base + 1u] = (~(~bitcast<u32>(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
    } else if ((gid.x > param) || v8) {
        if ((extractBits(bitcast<i32>(input[wgv % arrayLength(&input)]), 0u, 11u) << (param & 31u)) <= ((bitcast<i32>(input[gid.x % arrayLength(&input)]) >> (param & 31u)) + sign(bitcast<i32>(input[gid.x % arrayLength(&input)])))) {
            output[base + (wgv % 4u)] = u32(bool((gid.x * gid.x)));
            v8 = bool(input[gid.x % arrayLength(&input)]);
        } else if bool(min(input[wgv % arrayLength(&input)], 16u)) {
            var v70: u32 = (wgv | u32((bitcast<i32>(input[gid.x % arrayLength(&input)]) == bitcast<i32>(input[0u % arrayLength(&input)]))));
            for (var it71 = 0u; it71 < 2u; it71 = it71 + 1u) {
                v70 = (input[gid.x % arrayLength(&input)] + u32((bitcast<i32>(input[wgv % arrayLength(&input)]) <= bitcast<i32>(input[it71 % arrayLength(&input)]))));
                v70 <<= (input[1u % arrayLength(&input)] & 31u);
                v70 = u32((bitcast<i32>(input[3u % arrayLength(&input)]) < firstTrailingBit(bitcast<i32>(input[gid.x % arrayLength(&input)]))));
            }
        }
        v8 = ((f32(input[gid.x % arrayLength(&input)] & 1023u) - floor(bitcast<f32>(((input[1u % arrayLength(&input)] & 0x3fffu) | 0x40000000u)))) >= select(f32(input[gid.x % arrayLength(&input)] & 1023u), min(f32(input[3u % arrayLength(&input)] & 1023u), 1.0f), true));
        v8 = bool(select(select(31u, param, v8), param, v8));
        var it72 = 0u;
        loop {
            let v73 = floor((f32(input[gid.x % arrayLength(&input)] & 1023u) * 0.5f));
            var v74: i32 = ((bitcast<i32>(gid.x) - reverseBits(bitcast<i32>(input[it72 % arrayLength(&input)]))) % 3i);
            var v75: u32 = ((select(wgv, it72, false) - min(gid.x, param)) >> ((~(gid.x + 7u)) & 31u));
            continuing {
                it72 += 1u;
                break if it72 >= 1u;
            }
        }
    }
    var checksum = 0u;
    checksum = checksum * 31u + wgv;
    checksum = checksum * 31u + select(0u, 1u, v8);
    output[base] = checksum;
}
