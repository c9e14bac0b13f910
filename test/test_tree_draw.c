/* Tests of corpus_tools/tree_draw.h: the layout's boxes (no two overlapping, every child
 * below its parent, parents centred, the words in order on the bottom row, the edges down
 * to tags clear of every box, no two edges crossing) on every tree of the sample's dev.mrg,
 * its longest (over 60 words) by name, and that these checks see each kind of break; the
 * SVG's escaping and elements; a picture of several trees in one call, and its file written
 * whole or not at all. Python's xml.etree and a browser check the SVG files of
 * `cky draw` (python/tests/test_draw.py). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../corpus_tools/tree_draw.h"

#define DEV_MRG CKY_SHARED "/data/ptb-sample/dev.mrg"
#define EPS 1e-6

static tree *parse(const char *s)
{
    tree *t = NULL;
    cr_assert_eq(tree_parse_string(s, &t), CKY_OK, "parsing '%s': %s", s, cky_last_error());
    return t;
}

static double centre(const tree_box *b) { return b->x + b->w / 2; }

/* The edges as the SVG draws them: from the bottom of the parent's box to the top of the
 * child's, in two segments to a tag rows below (to the top of the next row, then down). */
typedef struct seg {
    double x1, y1, x2, y2;
    int child;
} seg;

static int segments(const tree_layout *l, seg *out)
{
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        const tree_box *b = &l->box[i], *p = b->parent >= 0 ? &l->box[b->parent] : NULL;
        if (!p)
            continue;
        double y = p->y + p->h + l->style.row_gap; /* the next row's top */
        if (b->row > p->row + 1) {
            out[n++] = (seg){centre(p), p->y + p->h, centre(b), y, i};
            out[n++] = (seg){centre(b), y, centre(b), b->y, i};
        } else {
            out[n++] = (seg){centre(p), p->y + p->h, centre(b), b->y, i};
        }
    }
    return n;
}

/* > 0 if c is left of a->b, < 0 if right, about 0 on the line. */
static double side(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* 1 (and a message) if two edges cross: each one's ends strictly on both sides of the other
 * (edges that share an end, a parent's, touch there and are fine). */
static int edges_cross(const tree_layout *l, char *msg, size_t size)
{
    seg *e = malloc((size_t)(2 * l->n + 1) * sizeof *e);
    cr_assert(e);
    int n = segments(l, e), crossed = 0;
    for (int i = 0; i < n && !crossed; i++)
        for (int j = 0; j < i && !crossed; j++) {
            const seg *a = &e[i], *b = &e[j];
            double d1 = side(a->x1, a->y1, a->x2, a->y2, b->x1, b->y1);
            double d2 = side(a->x1, a->y1, a->x2, a->y2, b->x2, b->y2);
            double d3 = side(b->x1, b->y1, b->x2, b->y2, a->x1, a->y1);
            double d4 = side(b->x1, b->y1, b->x2, b->y2, a->x2, a->y2);
            if (((d1 > EPS && d2 < -EPS) || (d1 < -EPS && d2 > EPS)) &&
                ((d3 > EPS && d4 < -EPS) || (d3 < -EPS && d4 > EPS))) {
                snprintf(msg, size, "the edges down to boxes %d (%s) and %d (%s) cross",
                         a->child, l->box[a->child].node->label, b->child,
                         l->box[b->child].node->label);
                crossed = 1;
            }
        }
    free(e);
    return crossed;
}

/* Whether every promise of the layout holds: NULL, or what breaks the first one, in msg. The
 * promises are checked one kind after another, in the order below. */
#define PROBLEM(...) return snprintf(msg, size, __VA_ARGS__), msg
static const char *layout_problem(const tree_layout *l, char *msg, size_t size)
{
    const tree_draw_style *s = &l->style;
    const tree_box *box = l->box;
    int bottom = 0;
    for (int i = 0; i < l->n; i++)
        bottom = box[i].row > bottom ? box[i].row : bottom;
    for (int i = 0; i < l->n; i++) { /* each box holds its text and lies in the picture */
        const tree_box *b = &box[i];
        if (b->w < strlen(b->node->label) * s->char_width + 2 * s->pad_x - EPS) /* ASCII */
            PROBLEM("box %d (%s): narrower than its text", i, b->node->label);
        if (b->x < s->margin - EPS || b->x + b->w > l->width - s->margin + EPS ||
            b->y < s->margin - EPS || b->y + b->h > l->height - s->margin + EPS)
            PROBLEM("box %d (%s): outside the picture", i, b->node->label);
    }
    for (int i = 0; i < l->n; i++) /* no two boxes overlap; one row's keep the gap */
        for (int j = 0; j < i; j++) {
            const tree_box *a = &box[j], *b = &box[i];
            int apart_y = a->y + a->h <= b->y + EPS || b->y + b->h <= a->y + EPS;
            int apart_x = a->x + a->w + s->gap <= b->x + EPS || b->x + b->w + s->gap <= a->x + EPS;
            if (!apart_y && !apart_x)
                PROBLEM("boxes %d (%s) and %d (%s) overlap", j, a->node->label, i, b->node->label);
            if (a->row == b->row && !apart_x)
                PROBLEM("boxes %d (%s) and %d (%s) of row %d closer than the gap", j,
                        a->node->label, i, b->node->label, b->row);
        }
    for (int i = 0; i < l->n; i++) { /* rows: the top on 0, children below, words at the bottom */
        const tree_box *b = &box[i], *p = b->parent >= 0 ? &box[b->parent] : NULL;
        if (!p && b->row != 0)
            PROBLEM("the top is on row %d", b->row);
        if (p && (b->row <= p->row || b->y < p->y + p->h + s->row_gap - EPS))
            PROBLEM("box %d (%s) not below its parent's", i, b->node->label);
        if (!b->node->child && (b->row != bottom || p->row != bottom - 1))
            PROBLEM("word %d (%s) not on the bottom row under its tag", i, b->node->label);
    }
    double last_word = -HUGE_VAL;
    for (int i = 0; i < l->n; i++) /* the words in sentence order, left to right */
        if (!box[i].node->child) {
            if (box[i].x < last_word)
                PROBLEM("word %d (%s) out of order", i, box[i].node->label);
            last_word = box[i].x;
        }
    for (int i = 0; i < l->n; i++) { /* an edge down through rows is clear of their boxes */
        const tree_box *b = &box[i], *p = b->parent >= 0 ? &box[b->parent] : NULL;
        for (int j = 0; p && j < l->n; j++) {
            const tree_box *o = &box[j];
            if (o->row > p->row && o->row < b->row && centre(b) >= o->x - EPS &&
                centre(b) <= o->x + o->w + EPS)
                PROBLEM("the edge down to box %d (%s) crosses box %d (%s)", i, b->node->label,
                        j, o->node->label);
        }
    }
    if (edges_cross(l, msg, size))
        return msg;
    for (int i = 0; i < l->n; i++) { /* a parent centred over its first and last child */
        const tree_box *b = &box[i];
        int first = -1, last = -1;
        for (int j = i + 1; j < l->n; j++)
            if (box[j].parent == i)
                last = first < 0 ? (first = j) : j;
        if (b->node->child && first < 0)
            PROBLEM("box %d (%s) has no child boxes", i, b->node->label);
        double mid = first < 0 ? centre(b) : (centre(&box[first]) + centre(&box[last])) / 2;
        if (fabs(centre(b) - mid) > EPS)
            PROBLEM("box %d (%s) at %g, not centred over its children (%g)", i,
                    b->node->label, centre(b), mid);
    }
    return NULL;
}

static void check_layout(const tree_layout *l, int k)
{
    char msg[512];
    const char *problem = layout_problem(l, msg, sizeof msg);
    cr_assert_null(problem, "tree %d: %s", k, problem);
}

/* The number of words (leaves) of the layout. */
static int words(const tree_layout *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += !l->box[i].node->child;
    return n;
}

Test(tree_draw, every_dev_tree_and_the_longest)
{
    tree_reader *r;
    cr_assert_eq(tree_reader_open(DEV_MRG, &r), CKY_OK, "%s", cky_last_error());
    tree_draw_style style = tree_draw_style_default();
    int k = 0, longest = 0, longest_k = 0;
    tree *t;
    while (tree_reader_next(r, &t) == CKY_OK && t) {
        tree_layout l;
        cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
        check_layout(&l, ++k);
        if (words(&l) > longest) {
            longest = words(&l);
            longest_k = k;
        }
        tree_draw_layout_free(&l);
        tree_free(t);
    }
    tree_reader_close(r);
    cr_expect_eq(k, 433);
    cr_expect_geq(longest, 60, "the longest tree (%d) has %d words", longest_k, longest);
    cr_log_info("tree_draw: %d trees laid out, the longest (tree %d) with %d words", k,
                longest_k, longest);
}

Test(tree_draw, shapes)
{
    tree_draw_style style = tree_draw_style_default();
    tree_layout l;
    const char *trees[] = {"( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)) )",
                           "(NN dog)",
                           "( (NP (NN a)) (VP (VB b)) )",            /* unlabelled top kept */
                           "(S (NP-SBJ-1234567890 (PRP it)) (VP (VBZ is) (ADJP (JJ x))))",
                           "(A (B (C (D (E (F (G (H (NN deep))))))) (NN flat)))"};
    for (int k = 0; k < (int)(sizeof trees / sizeof *trees); k++) {
        tree *t = parse(trees[k]);
        cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
        check_layout(&l, k);
        tree_draw_layout_free(&l);
        tree_free(t);
    }
    tree *t = parse("( (S (NN x)) )"); /* the outer unlabelled root left out */
    cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
    cr_expect_eq(l.n, 3);
    cr_expect_str_eq(l.box[0].node->label, "S");
    tree_draw_layout_free(&l);
    tree_free(t);
    t = parse("(())");
    cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
    cr_expect_eq(l.n, 0);
    cr_expect_gt(l.width, 0);
    tree_draw_layout_free(&l);
    tree_free(t);
}

/* The checks catch what they look for: a word moved onto another, two words swapped, a
 * phrase moved over an edge that runs down through its row, one moved where its edges cross
 * others, the top moved off centre. */
Test(tree_draw, the_checks_see_breaks)
{
    tree *t = parse("( (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it))))) )");
    tree_draw_style style = tree_draw_style_default();
    tree_layout l;
    cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
    char msg[512];
    cr_assert_null(layout_problem(&l, msg, sizeof msg), "%s", msg);
    const char *order[] = {"S",  "NP", "DT", "The", "NN", "cat", "VP", "VBD",
                           "sat", "PP", "IN", "on",  "NP", "PRP", "it"};
    cr_assert_eq(l.n, 15);
    for (int i = 0; i < l.n; i++)
        cr_assert_str_eq(l.box[i].node->label, order[i]);
    tree_box saved[15], *b = l.box;
    memcpy(saved, b, sizeof saved);
    const char *want[] = {"overlap", "out of order", "crosses box", "edges down to boxes",
                          "not centred"};
    for (int k = 0; k < 5; k++) {
        if (k == 0)
            b[5].x = b[3].x; /* "cat" onto "The" (as wide) */
        else if (k == 1)
            b[11].x = saved[14].x, b[14].x = saved[11].x; /* "on" and "it" swapped */
        else if (k == 2)
            b[9].x = centre(&b[7]) - b[9].w / 2; /* PP over the edge from VP down to VBD */
        else if (k == 3) /* NP (it) between the edges down to VBD and IN: its to PRP crosses */
            b[12].x = (centre(&b[7]) + centre(&b[10])) / 2 - b[12].w / 2;
        else
            b[0].x += 5;
        const char *problem = layout_problem(&l, msg, sizeof msg);
        cr_expect(problem && strstr(problem, want[k]), "break %d: want '%s', got '%s'", k,
                  want[k], problem ? problem : "no problem");
        memcpy(b, saved, sizeof saved);
    }
    tree_draw_layout_free(&l);
    tree_free(t);
}

/* A chain 3,000 deep: no recursion, every box checked. */
Test(tree_draw, deep_chain)
{
    int depth = 3000;
    char *s = malloc((size_t)depth * 4 + 32), *p = s;
    for (int k = 0; k < depth; k++)
        p += sprintf(p, "(X ");
    p += sprintf(p, "(NN w)");
    for (int k = 0; k < depth; k++)
        *p++ = ')';
    *p = '\0';
    tree *t = parse(s);
    tree_draw_style style = tree_draw_style_default();
    tree_layout l;
    cr_assert_eq(tree_draw_layout(t, &style, &l), CKY_OK);
    cr_expect_eq(l.n, depth + 2);
    cr_expect_eq(l.box[l.n - 1].row, depth + 1);
    tree_draw_layout_free(&l);
    tree_free(t);
    free(s);
}

/* The SVG of layouts as a malloc'ed string. */
static char *svg_of(const tree_layout *l, int n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    tree_draw_svg(f, l, n);
    fclose(f);
    return text;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

Test(tree_draw, svg_elements_and_escaping)
{
    tree *t = parse("(S (NP (NN a&b) (SYM <)) (X (SYM \"'>)) (NN caf\xc3\xa9) (NN \x01\xff))");
    tree_draw_style style = tree_draw_style_default();
    tree_layout l[2];
    cr_assert_eq(tree_draw_layout(t, &style, &l[0]), CKY_OK);
    tree *empty = parse("(())");
    cr_assert_eq(tree_draw_layout(empty, &style, &l[1]), CKY_OK);
    char *svg = svg_of(l, 1);
    cr_expect(!strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns="
                       "\"http://www.w3.org/2000/svg\" version=\"1.1\" ", 87), "%s", svg);
    cr_expect_eq(count(svg, "<text class=\"label\""), 8);
    cr_expect_eq(count(svg, "<text class=\"word\""), 5);
    cr_expect_eq(count(svg, "<line "), 14, "12 edges, the two from S to tags rows below in two");
    cr_expect(strstr(svg, ">a&amp;b</text>"));
    cr_expect(strstr(svg, ">&lt;</text>"));
    cr_expect(strstr(svg, ">&quot;&apos;&gt;</text>"));
    cr_expect(strstr(svg, ">caf\xc3\xa9</text>"));
    cr_expect(strstr(svg, ">\xef\xbf\xbd\xef\xbf\xbd</text>"), "a control character and a "
              "byte that is not UTF-8 become U+FFFD");
    cr_expect_eq(count(svg, "&") , count(svg, "&amp;") + count(svg, "&lt;") +
                 count(svg, "&gt;") + count(svg, "&quot;") + count(svg, "&apos;"));
    cr_expect(strstr(svg, "</svg>\n"));
    free(svg);
    /* Two stacked: one document, as high as both, the empty tree's text below the first. */
    svg = svg_of(l, 2);
    char want[64];
    snprintf(want, sizeof want, "height=\"%.0f\"", ceil(l[0].height + l[1].height));
    cr_expect(strstr(svg, want), "no %s in %.300s", want, svg);
    cr_expect_eq(count(svg, "<svg "), 1);
    cr_expect_eq(count(svg, ">(no parse)</text>"), 1);
    free(svg);
    tree_draw_layout_free(&l[0]);
    tree_draw_layout_free(&l[1]);
    tree_free(t);
    tree_free(empty);
}

/* The trees of a picture laid out and written in one call: the bytes of tree_draw_svg over
 * their layouts; NULL is the empty tree. */
Test(tree_draw, svg_of_trees_is_svg_of_their_layouts)
{
    tree *t[3] = {parse("( (S (NP (DT a)) (VP (VBZ b))) )"), NULL, parse("(X (Y z))")};
    tree_draw_style style = tree_draw_style_default();
    tree_layout l[3];
    for (int k = 0; k < 3; k++)
        cr_assert_eq(tree_draw_layout(t[k], &style, &l[k]), CKY_OK);
    char *want = svg_of(l, 3), *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    cr_assert(f);
    cr_assert_eq(tree_draw_svg_trees(f, (const tree *const *)t, 3, &style), CKY_OK);
    fclose(f);
    cr_expect_str_eq(got, want);
    cr_expect_eq(count(got, ">(no parse)</text>"), 1);
    free(want);
    free(got);
    for (int k = 0; k < 3; k++) {
        tree_draw_layout_free(&l[k]);
        tree_free(t[k]);
    }
}

/* The names in `dir`, sorted, each followed by a space (a temporary file shows up here). */
static char *names_in(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | tr '\\n' ' '", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char *buf = calloc(1, 4096);
    cr_assert(buf && fread(buf, 1, 4095, p) < 4095);
    pclose(p);
    return buf;
}

/* tree_draw_write_file: the picture whole under its name, replacing what was there, no
 * temporary file left; a target it cannot replace (a folder) or a missing folder: an I/O
 * error naming it, the temporary file removed. */
Test(tree_draw, write_file_is_whole_or_not_at_all)
{
    char dir[] = "/tmp/cky-draw-test-XXXXXX", path[128], *names;
    cr_assert(mkdtemp(dir));
    tree *t = parse("(S (NP (NN a&b)) (VP (VBZ c)))");
    tree_draw_style style = tree_draw_style_default();
    snprintf(path, sizeof path, "%s/000001.svg", dir);
    FILE *old = fopen(path, "w");
    cr_assert(old && fputs("old", old) >= 0 && fclose(old) == 0);
    cr_assert_eq(tree_draw_write_file(path, (const tree *const *)&t, 1, &style), CKY_OK, "%s",
                 cky_last_error());
    FILE *f = fopen(path, "r");
    char got[65536] = "", *want = NULL;
    size_t len = 0;
    cr_assert(f && fread(got, 1, sizeof got - 1, f) > 0);
    fclose(f);
    FILE *m = open_memstream(&want, &len);
    cr_assert(m && tree_draw_svg_trees(m, (const tree *const *)&t, 1, &style) == CKY_OK);
    fclose(m);
    cr_expect_str_eq(got, want);
    free(want);
    cr_expect_str_eq(names = names_in(dir), "000001.svg ");
    free(names);
    snprintf(path, sizeof path, "%s/000002.svg", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    cr_expect_eq(tree_draw_write_file(path, (const tree *const *)&t, 1, &style), CKY_ERR_IO);
    cr_expect(strstr(cky_last_error(), path), "%s", cky_last_error());
    cr_expect_str_eq(names = names_in(dir), "000001.svg 000002.svg ", "a temporary file left");
    free(names);
    snprintf(path, sizeof path, "%s/no/000003.svg", dir);
    cr_expect_eq(tree_draw_write_file(path, (const tree *const *)&t, 1, &style), CKY_ERR_IO);
    cr_expect(strstr(cky_last_error(), "no temporary file"), "%s", cky_last_error());
    tree_free(t);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}
