/* jmath: HotSpot's Math.log on x86_64 (jmath.h).
 *
 * The stub's algorithm (Intel LIBM): x = 2^e * m, m in [1, 2); B ~ 1/m from RCPPS, rounded
 * to 8 significant bits; r = B * m - 1 with a single rounding (m split into its top 7
 * fraction bits and the rest, whose products with B are exact); then
 *     log x = (e * log 2 - log B) + log(1 + r),
 * log 2 and -log B in high and low parts (the table), log(1 + r) a degree-7 polynomial in
 * r. Each operation below is one of the stub's SSE2 instructions, in the stub's order (the
 * names x0..x7 are its registers xmm0..xmm7, their upper lanes written out as *_h where they
 * matter), so that the doubles round as they do there: plain IEEE binary64 arithmetic, no
 * extended precision (checked below) and no fused multiply-add (the Makefile compiles this
 * file with -ffp-contract=off). The stub scales B and m so that their exponent fields need
 * no arithmetic: B keeps RCPPS's single-precision exponent (126 or 127) as a double's, a
 * factor 2^-896, and m is given the exponent 2^896; the products are the same. */
#include "jmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "util/jmath.c needs double arithmetic in double precision (SSE2, not x87)"
#endif

/* -log(B) in a high part (its last 11 bits zero) and a low part, for B = (128 + i) / 256,
 * i = 0..128: the stub's _L_tbl. */
static const uint64_t log_table[129][2] = {
    {0x3fe62e42fefa3800, 0x3d2ef35793c76730}, {0x3fe5ee82aa241800, 0x3d2202380cda46be},
    {0x3fe5af405c364800, 0x3d2dfa63ac10c9fb}, {0x3fe5707a26bb8c00, 0x3d09980bff3303dd},
    {0x3fe5322e26867800, 0x3d05ccc45d257531}, {0x3fe4f45a835a5000, 0xbd2e6c516d93b8fb},
    {0x3fe4b6fd6f970c00, 0x3cef7115ed4c541c}, {0x3fe47a1527e8a400, 0xbd22cb6af94d60aa},
    {0x3fe43d9ff2f92400, 0xbcfd984f481051f7}, {0x3fe4019c2125cc00, 0xbd26ce7930f0c74c},
    {0x3fe3c6080c36c000, 0xbd02b7367cfe13c2}, {0x3fe38ae217197800, 0xbd218b7abb5569a4},
    {0x3fe35028ad9d8c00, 0x3d10b83f9527e6ac}, {0x3fe315da44340800, 0xbd274e93c5a0ed9c},
    {0x3fe2dbf557b0e000, 0xbd17a6e507b9dc11}, {0x3fe2a2786d0ec000, 0x3d206d2be797882d},
    {0x3fe269621134dc00, 0xbd0b61f105226250}, {0x3fe230b0d8bebc00, 0x3d12fc066e48667b},
    {0x3fe1f8635fc61800, 0xbd2a7242c9fe81d3}, {0x3fe1c07849ae6000, 0x3cccacdeed70e667},
    {0x3fe188ee40f23c00, 0x3d14cc4ef8ab4650}, {0x3fe151c3f6f29800, 0xbd2edd97a293ae49},
    {0x3fe11af823c75c00, 0xbd258647bb9ddcb2}, {0x3fe0e4898611cc00, 0x3d1c299807801742},
    {0x3fe0ae76e2d05400, 0x3d1f486b887e7e27}, {0x3fe078bf0533c400, 0x3d26812241edf5fd},
    {0x3fe04360be760400, 0xbd04c45fe79539e0}, {0x3fe00e5ae5b20800, 0xbd053ba3b1727b1c},
    {0x3fdfb358af7a4800, 0x3d0085fa3c164935}, {0x3fdf4aa7ee031800, 0x3d12cde56f014a8b},
    {0x3fdee2a156b41000, 0x3d2f27f45a470251}, {0x3fde7b42c3ddb000, 0xbd2465505372bd08},
    {0x3fde148a1a272800, 0xbd1326b207322938}, {0x3fddae75484c9800, 0xbd1ea42d60dc616a},
    {0x3fdd490246def800, 0x3d235bafe9a767a8}, {0x3fdce42f18064800, 0xbd0797c33ec7a6b0},
    {0x3fdc7ff9c7455800, 0xbd29b6ddc15249ae}, {0x3fdc1c60693fa000, 0x3d2cec807fe8e180},
    {0x3fdbb9611b80e000, 0x3d27d85bf40a666d}, {0x3fdb56fa04462800, 0x3d1095252d841995},
    {0x3fdaf5295248d000, 0xbd217cc552774458}, {0x3fda93ed3c8ad800, 0x3d1e36f2bea77a5d},
    {0x3fda33440224f800, 0x3d23c6457f9d79f5}, {0x3fd9d32bea15f000, 0xbd26279e10d0c0b0},
    {0x3fd973a343135800, 0xbd152313a502d9f0}, {0x3fd914a8635bf800, 0xbd1766b52ee6307d},
    {0x3fd8b639a88b3000, 0xbd205ae1e5e70470}, {0x3fd85855776dc800, 0x3d2fd56f3333778a},
    {0x3fd7fafa3bd81800, 0xbd272090c812566a}, {0x3fd79e26687cf800, 0x3d29ec7d2efd1778},
    {0x3fd741d876c67800, 0x3d2d8b0949dc60b3}, {0x3fd6e60ee6af1800, 0x3d1721657c222d87},
    {0x3fd68ac83e9c6800, 0x3d20a0d32756eba0}, {0x3fd630030b3ab000, 0xbd2db623e731ae00},
    {0x3fd5d5bddf596000, 0xbd0a0b2a08a465dc}, {0x3fd57bf753c8d000, 0x3d1fadedee5d40ef},
    {0x3fd522ae0738a000, 0x3d2ebe708164c759}, {0x3fd4c9e09e173000, 0xbd2e20891b0ad8a4},
    {0x3fd4718dc271c800, 0xbd2f27ce0967d675}, {0x3fd419b423d5e800, 0x3d08e436ec90e09d},
    {0x3fd3c25277333000, 0x3d183b54b606bd5c}, {0x3fd36b6776be1000, 0x3d116ecdb0f177c8},
    {0x3fd314f1e1d36000, 0xbd28e27ad3213cb8}, {0x3fd2bef07cdc9000, 0x3d2a9cfa4a5004f4},
    {0x3fd269621134d800, 0x3d2c93c1df5bb3b6}, {0x3fd214456d0eb800, 0x3d0a87deba46baea},
    {0x3fd1bf99635a6800, 0x3d2ca6ed5147bdb7}, {0x3fd16b5ccbacf800, 0x3d2b9acdf7a51681},
    {0x3fd1178e8227e800, 0xbd2c210e63a5f01c}, {0x3fd0c42d67616000, 0x3d27188b163ceae9},
    {0x3fd07138604d5800, 0x3cf89cdb16ed4e91}, {0x3fd01eae5626c800, 0xbd16f08c1485e94a},
    {0x3fcf991c6cb3b000, 0x3d1bcbecca0cdf30}, {0x3fcef5ade4dd0000, 0xbcca211565bb8e11},
    {0x3fce530effe71000, 0x3cc212276041f430}, {0x3fcdb13db0d49000, 0xbd2aff2af715b035},
    {0x3fcd1037f2656000, 0xbd084a7e75b6f6e4}, {0x3fcc6ffbc6f01000, 0xbcf1ec72c5962bd2},
    {0x3fcbd087383be000, 0xbd2d4bc4595412b6}, {0x3fcb31d8575bd000, 0xbd0c358d4eace1aa},
    {0x3fca93ed3c8ae000, 0xbd28724350562169}, {0x3fc9f6c407089000, 0x3d29904d6865817a},
    {0x3fc95a5adcf70000, 0x3d07f22858a0ff6f}, {0x3fc8beafeb390000, 0xbd073d54aae92cd1},
    {0x3fc823c16551a000, 0x3d1e0ddb9a631e83}, {0x3fc7898d85445000, 0xbd1c661070914305},
    {0x3fc6f0128b757000, 0xbd25118de59c21e1}, {0x3fc6574ebe8c1000, 0x3d19cf8b2c3c2e78},
    {0x3fc5bf406b544000, 0xbd127023eb68981c}, {0x3fc527e5e4a1b000, 0x3d2633e8e5697dc7},
    {0x3fc4913d8333b000, 0x3d25837954fdb678}, {0x3fc3fb45a5993000, 0xbd2cd1d87e6a354d},
    {0x3fc365fcb0159000, 0x3cc62fa8234b7289}, {0x3fc2d1610c868000, 0x3d039d6ccb81b4a1},
    {0x3fc23d712a49c000, 0x3d100d238fd3df5c}, {0x3fc1aa2b7e23f000, 0x3d2ca78e44389934},
    {0x3fc1178e8227e000, 0x3d21ef78ce2d07f2}, {0x3fc08598b59e4000, 0xbd27e5dd7009902c},
    {0x3fbfe89139dbe000, 0xbd2534d64fa10afd}, {0x3fbec739830a2000, 0xbd2dc068afe645e0},
    {0x3fbda72763844000, 0x3d1a89401fa71733}, {0x3fbc885801bc4000, 0x3d2646d1c65aacd3},
    {0x3fbb6ac88dad6000, 0xbd1390802bf768e5}, {0x3fba4e7640b1c000, 0xbd0e42b6b94407c8},
    {0x3fb9335e5d594000, 0x3d23115c3abd47da}, {0x3fb8197e2f40e000, 0x3d0f80dcf96ffdf7},
    {0x3fb700d30aeac000, 0x3cec1e8da99ded32}, {0x3fb5e95a4d97a000, 0xbd2c69063c5d1d1e},
    {0x3fb4d3115d208000, 0xbcf53a2582f4e1ef}, {0x3fb3bdf5a7d1e000, 0x3d2cc85ea5db4ed7},
    {0x3fb2aa04a4472000, 0xbd20b6e8ae9c697d}, {0x3fb1973bd1466000, 0xbd25325d560d9e9b},
    {0x3fb08598b59e4000, 0xbd17e5dd7009902c}, {0x3faeea31c006c000, 0xbd0e113e4fc93b7b},
    {0x3faccb73cdddc000, 0xbd1a68f247d82807}, {0x3faaaef2d0fb0000, 0x3d20fc1a353bb42e},
    {0x3fa894aa149fc000, 0xbd197995d05a267d}, {0x3fa67c94f2d4c000, 0xbd029efbec19afa2},
    {0x3fa466aed42e0000, 0xbd2c167375bdfd28}, {0x3fa252f32f8d0000, 0x3d283e9ae021b67b},
    {0x3fa0415d89e74000, 0x3d0111c05cf1d753}, {0x3f9c63d2ec148000, 0x3d2578c63f9eb2f3},
    {0x3f98492528c90000, 0xbd2aa0ba325a0c34}, {0x3f9432a925980000, 0x3d098139928637fe},
    {0x3f90205658938000, 0xbd23dc5b06e2f7d2}, {0x3f882448a3890000, 0xbd275577da74f640},
    {0x3f80101575890000, 0xbd10c76b999d2be8}, {0x3f70080559580000, 0x3d2166afcb31c67b},
    {0x0000000000000000, 0x8000000000000000},
};

/* log(2) / 16 in a high part (its last 11 bits zero) and a low part: the stub's _log2. */
#define LOG2_HI 0x3fa62e42fefa3800
#define LOG2_LO 0x3ceef35793c76730

/* The polynomial's coefficients (_coeff), in the lanes the stub loads them into. */
#define C0 0x3fc2492492492492 /* 1/7 */
#define C1 0xbfd0000000000000 /* -1/4 */
#define C2 0xbfc5555e3d6fb175 /* ~ -1/6 */
#define C3 0x3fd5555555555555 /* 1/3 */
#define C4 0x3fc999999999999a /* 1/5 */
#define C5 0xbfe0000000000000 /* -1/2 */

/* The index i = 0..128 of B = (128 + i) / 256 that the stub takes for a mantissa whose top 12
 * bits are k: it gives RCPPS 1 + f (f: the top 23 bits of the mantissa) and rounds the
 * result (its last 11 bits zero) to 8 significant bits, adding half a unit of the 8th and
 * truncating. On both processors i depends on k alone and falls by one at each of these
 * 128 values of k (measured over all 2^23 inputs with _mm_rcp_ss); the two maps differ at
 * 64 of them, for 65 of the 4096 k. */
static const uint16_t rcp_steps[2][128] = {
    [JMATH_CPU_AMD] = {
        8,    24,   41,   57,   74,   91,   107,  124,  141,  158,  175,  193,  211,  229,  246,
        264,  283,  301,  320,  338,  357,  376,  395,  414,  434,  454,  473,  493,  513,  534,
        555,  575,  596,  617,  639,  660,  682,  703,  726,  748,  770,  793,  816,  839,  863,
        886,  910,  934,  958,  982,  1007, 1032, 1057, 1083, 1109, 1134, 1161, 1187, 1214, 1241,
        1269, 1296, 1324, 1352, 1380, 1409, 1438, 1468, 1497, 1527, 1557, 1588, 1619, 1650, 1682,
        1714, 1747, 1779, 1812, 1845, 1880, 1914, 1948, 1983, 2019, 2055, 2091, 2128, 2165, 2203,
        2241, 2279, 2318, 2357, 2398, 2438, 2479, 2521, 2562, 2605, 2648, 2692, 2736, 2780, 2826,
        2873, 2919, 2966, 3014, 3062, 3112, 3162, 3211, 3263, 3315, 3368, 3421, 3475, 3532, 3586,
        3643, 3702, 3759, 3819, 3879, 3940, 4002, 4066,
    },
    [JMATH_CPU_INTEL] = {
        8,    24,   40,   58,   74,   90,   106,  124,  140,  158,  176,  192,  210,  228,  246,
        264,  282,  300,  320,  338,  356,  376,  394,  414,  434,  454,  474,  494,  514,  534,
        554,  576,  596,  618,  638,  660,  682,  704,  726,  748,  770,  792,  816,  838,  862,
        886,  910,  934,  958,  982,  1006, 1032, 1058, 1082, 1108, 1134, 1160, 1186, 1214, 1240,
        1268, 1296, 1324, 1352, 1380, 1408, 1438, 1468, 1496, 1526, 1558, 1588, 1618, 1650, 1682,
        1714, 1746, 1778, 1812, 1846, 1880, 1914, 1948, 1984, 2018, 2054, 2090, 2128, 2164, 2202,
        2240, 2278, 2318, 2358, 2398, 2438, 2478, 2520, 2562, 2604, 2648, 2692, 2736, 2780, 2826,
        2872, 2918, 2966, 3014, 3062, 3112, 3162, 3212, 3264, 3316, 3368, 3422, 3476, 3530, 3586,
        3644, 3702, 3760, 3818, 3878, 3940, 4002, 4066,
    },
};

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t to_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* The table index for a mantissa with top 12 bits k: 128 less the steps at or below k. */
static int rcp_index(unsigned k, jmath_cpu cpu)
{
    const uint16_t *s = rcp_steps[cpu];
    int lo = 0, hi = 128; /* the count of steps <= k lies in [lo, hi] */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s[mid] <= k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 128 - lo;
}

/* The stub's main path for a positive normal double of bits xb (x, or a subnormal x times
 * 2^128): k16 is 16 times the binary exponent of x, the integer the stub converts (eax). */
static double log_normal(uint64_t xb, int32_t k16, jmath_cpu cpu)
{
    int i = rcp_index((unsigned)(xb >> 40) & 0xfff, cpu);
    double b = from_bits((uint64_t)(0x3f00 + i) << 45); /* B * 2^-896 (the rounded RCPPS) */
    uint64_t m = (xb & 0x000fffffffffffff) | 0x77f0000000000000; /* 2^896 * mantissa */
    double x1 = from_bits(m);
    double x5 = from_bits(m & 0xffffe00000000000); /* its top 7 fraction bits */
    x1 = x1 - x5;                                  /* the rest, exact */
    x5 = x5 * b;                                   /* exact */
    double x7 = (double)k16;
    x1 = x1 * b;
    double x6 = from_bits(LOG2_HI);
    x5 = x5 - 1.0; /* exact */
    double t_hi = from_bits(log_table[i][0]), t_lo = from_bits(log_table[i][1]);
    x1 = x1 + x5; /* r = B m - 1 */
    double r = x1;
    x6 = x6 * x7;
    x7 = x7 * from_bits(LOG2_LO);
    double x3 = from_bits(C0) * r, x3_h = from_bits(C1);
    double x0 = t_hi + x6; /* e log 2 - log B, high parts */
    double x4 = from_bits(C2) * r, x4_h = from_bits(C3) * r;
    double r2 = r * r;
    double x6b = x0;
    x0 = x0 + r;
    x4 = x4 + from_bits(C4);
    x4_h = x4_h + from_bits(C5);
    x3 = x3 * r2;
    x3_h = x3_h * r2;
    x6b = x6b - x0; /* -(r as added), so that x1 + x6b is what the sum lost */
    x4 = x4 * r;
    x1 = x1 + x6b;
    double r4 = r2 * r2;
    x7 = x7 + t_lo; /* the low parts */
    x4 = x4 + x3;
    x4_h = x4_h + x3_h;
    x1 = x1 + x7;
    x4 = x4 * r4;
    x4_h = x4_h * r2;
    x1 = x1 + x4;
    x1 = x1 + x4_h;
    return x0 + x1;
}

double jmath_log_cpu(double x, jmath_cpu cpu)
{
    uint64_t xb = to_bits(x);
    uint32_t top = (uint32_t)(xb >> 48); /* sign, exponent, 4 fraction bits */
    if (top - 16 < 32736)                /* positive, exponent 1..2046 */
        return log_normal(xb, (int32_t)((top - 16) & 0x7ff0) - 0x3fe0, cpu);
    if (top >= 0x8000) { /* negative, -0, -inf, a NaN with its sign bit set */
        uint32_t hi2 = (uint32_t)(xb >> 32) << 1, lo = (uint32_t)xb;
        if (hi2 > 0xffe00000 || (hi2 == 0xffe00000 && lo))
            return from_bits(xb | 0x0008000000000000); /* NaN: x + x, quietened */
        if (!(hi2 | lo))
            return -INFINITY;                         /* -0: -1 / 0 */
        return from_bits(0xfff8000000000000);     /* 0 * inf: the default NaN */
    }
    if (top < 16) { /* +0 or subnormal */
        if (!xb)
            return -INFINITY;
        double y = x * 0x1p128; /* exact, normal */
        uint64_t yb = to_bits(y);
        return log_normal(yb, (int32_t)((uint32_t)(yb >> 48) & 0x7ff0) - 0x47f0, cpu);
    }
    return from_bits(xb == 0x7ff0000000000000 ? xb : xb | 0x0008000000000000); /* x + x */
}

double jmath_log(double x) { return jmath_log_cpu(x, JMATH_CPU_AMD); }
