/* The fixed-point arithmetic of Viterbi's binary rules (util/fixedpoint.h): rounding, -inf
 * and the range's limits (no sum can overflow; a sum with a -inf in it stays -inf), the
 * binary value's monotonicity, and the grammar check that refuses weights outside the
 * range (codegen_fixed_check). */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "../grammar/grammar.h"
#include "../util/fixedpoint.h"

Test(fixedpoint, rounds_to_nearest_even_units)
{
    cr_assert_eq(fixedpoint_of(0.0f), 0);
    cr_assert_eq(fixedpoint_of(-1.0f), -65536);
    cr_assert_eq(fixedpoint_of(0.5f / 65536), 0);   /* half a unit: to even, 0 */
    cr_assert_eq(fixedpoint_of(1.5f / 65536), 2);   /* one and a half: to even, 2 */
    cr_assert_eq(fixedpoint_of(-1.5f / 65536), -2);
    cr_assert_eq(fixedpoint_of(-2.75f), -180224);
    cr_assert_eq(fixedpoint_to_float(-180224), -2.75f);
    cr_assert_eq(fixedpoint_to_float(fixedpoint_of(-123.25f)), -123.25f);
}

Test(fixedpoint, minus_infinity_and_the_range_limits)
{
    cr_assert_eq(fixedpoint_of(-INFINITY), FIXEDPOINT_NINF);
    cr_assert_eq(fixedpoint_of(nextafterf(FIXEDPOINT_LOWEST, -INFINITY)), FIXEDPOINT_NINF);
    cr_assert_eq(fixedpoint_of(FIXEDPOINT_LOWEST), -(1 << 29) + (1 << 25));
    cr_assert_eq(fixedpoint_of(1e30f), 1 << 24, "scores above the range saturate");
    cr_assert_eq(fixedpoint_of(FIXEDPOINT_WLOWEST), -(1 << 24));
    int64_t F = FIXEDPOINT_NINF, A = -(int64_t)fixedpoint_of(FIXEDPOINT_LOWEST);
    int64_t B = fixedpoint_of(FIXEDPOINT_HIGHEST), W = -(int64_t)fixedpoint_of(FIXEDPOINT_WLOWEST);
    cr_assert_geq(2 * F - W, INT_MIN, "two -inf children and the lowest weight overflow");
    cr_assert_leq(2 * B, INT_MAX);
    cr_assert_lt(F + B, FIXEDPOINT_CUT, "a -inf child with the highest sibling is finite");
    cr_assert_geq(-2 * A - W, FIXEDPOINT_CUT, "the lowest finite sum reads as -inf");
    cr_assert(isinf(fixedpoint_to_float(FIXEDPOINT_CUT - 1)));
    cr_assert(isfinite(fixedpoint_to_float(FIXEDPOINT_CUT)));
}

Test(fixedpoint, binary_values)
{
    cr_assert_eq(fixedpoint_binary(-1.0f, -2.0f, -3.0f), -6.0f);
    cr_assert(isinf(fixedpoint_binary(-1.0f, -INFINITY, 0.0f)));
    cr_assert(isinf(fixedpoint_binary(FIXEDPOINT_WLOWEST, FIXEDPOINT_HIGHEST, -INFINITY)));
    cr_assert(isfinite(fixedpoint_binary(FIXEDPOINT_WLOWEST, FIXEDPOINT_LOWEST,
                                         FIXEDPOINT_LOWEST)));
    /* monotone in each child (the back-trace and the gap checks rely on it) */
    srand(7);
    for (int k = 0; k < 100000; k++) {
        float w = -(float)rand() / RAND_MAX * 20, a = -(float)rand() / RAND_MAX * 500;
        float b = -(float)rand() / RAND_MAX * 500, d = (float)rand() / RAND_MAX * 1e-3f;
        cr_assert_leq(fixedpoint_binary(w, a - d, b), fixedpoint_binary(w, a, b));
        cr_assert_leq(fixedpoint_binary(w, a, b - d), fixedpoint_binary(w, a, b));
    }
}

Test(fixedpoint, clamps_outside_the_range)
{
    cr_assert_not(fixedpoint_clamps(-INFINITY));
    cr_assert_not(fixedpoint_clamps(FIXEDPOINT_LOWEST));
    cr_assert_not(fixedpoint_clamps(FIXEDPOINT_HIGHEST));
    cr_assert_not(fixedpoint_clamps(-180.0f));
    cr_assert(fixedpoint_clamps(nextafterf(FIXEDPOINT_LOWEST, -INFINITY)));
    cr_assert(fixedpoint_clamps(nextafterf(FIXEDPOINT_HIGHEST, INFINITY)));
}

/* sample-sm1 fits; with one weight moved below the range it is refused, the rule named (the
 * grammar parsed from its source: an image's tables are read-only). */
Test(fixedpoint, grammar_check)
{
    grammar *g;
    cr_assert_eq(grammar_load_source(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK,
                 "%s", cky_last_error());
    cr_assert_eq(codegen_fixed_check(g), CKY_OK, "%s", cky_last_error());
    grammar_binary *r = &g->binary[g->nbinary / 2];
    double keep = r->score[0];
    r->score[0] = -300.0;
    cr_assert_eq(codegen_fixed_check(g), CKY_ERR_LIMIT);
    cr_assert(strstr(cky_last_error(), g->name[r->parent]) &&
                  strstr(cky_last_error(), "-300"),
              "the message names the rule and its weight: %s", cky_last_error());
    r->score[0] = keep;
    grammar_free(g);
}
