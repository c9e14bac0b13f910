/* The float key (util/floatkey.h): orders like the floats, is its own inverse, maps -inf to
 * FLOATKEY_NINF, and its text (written into the generated kernels) is the expression. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../util/floatkey.h"

static int key_of(float v)
{
    int b;
    memcpy(&b, &v, sizeof b);
    return floatkey(b);
}

Test(floatkey, orders_like_floats_and_inverts)
{
    const float v[] = {-INFINITY, -3e38f, -2.5f, -1e-40f, -0.0f, 0.0f, 1e-40f, 1.0f, 7.25f,
                       3e38f, INFINITY};
    int n = sizeof v / sizeof *v;
    for (int k = 0; k < n; k++) {
        int b;
        memcpy(&b, &v[k], sizeof b);
        cr_assert_eq(floatkey(floatkey(b)), b, "key of key of %g", v[k]);
        if (k > 0)
            cr_assert(key_of(v[k - 1]) < key_of(v[k]) || (v[k - 1] == 0 && v[k] == 0),
                      "key(%g) >= key(%g)", v[k - 1], v[k]);
    }
    cr_assert_eq((unsigned)key_of(-INFINITY), (unsigned)FLOATKEY_NINF);
    cr_assert_str_eq(FLOATKEY_TEXT(b), "b ^ ((b >> 31) & 0x7fffffff)");
}
