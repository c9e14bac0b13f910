/* tree_draw: the tidy layout of a tree and its SVG (tree_draw.h).
 *
 * The layout works on the nodes in prefix order (an array: parents before children), so
 * children are done before their parent by going through it backwards. Each subtree has a
 * contour: for every row from the one below its parent's down to the words' row, the left
 * and right ends of what it draws there, relative to its own centre; on the rows that the
 * edge down to a tag crosses, that is the edge, of no width. A node's children are put side
 * by side, each as far left as its contour lets it stay `gap` right of those before it on
 * every row; the node is centred over its first and last child; its contour is its box on
 * its row and theirs below. Time and memory: O(nodes x rows). */
#include "tree_draw.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cachedir.h"
#include "../util/utf8.h"

tree_draw_style tree_draw_style_default(void)
{
    return (tree_draw_style){.font_size = 14, .char_width = 8.5, .pad_x = 3, .pad_y = 3,
                             .gap = 8, .row_gap = 26, .margin = 10};
}

/* East Asian wide characters, two columns of a monospace font. */
static int wide(unsigned cp)
{
    return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
           (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
           (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
           (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x20000 && cp <= 0x3fffd);
}

/* The width of s in columns: a character each, two for a wide one; a byte that is not UTF-8
 * is one (it is drawn as U+FFFD). */
static int columns(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    int cols = 0;
    while (n > 0) {
        unsigned cp;
        int len = utf8_decode(p, n, &cp);
        cols += len && wide(cp) ? 2 : 1;
        len = len ? len : 1;
        p += len;
        n -= (size_t)len;
    }
    return cols;
}

/* A node of the layout while it is made. */
typedef struct work {
    int first, last, next;         /* children, next sibling: box indices; -1 for none */
    int top;                       /* the first row of its contour: below its parent's */
    double rel;                    /* its centre relative to its parent's */
    double *left, *right;          /* its contour, rows top..bottom, relative to its centre */
} work;

/* The nodes of t in prefix order into l->box (node, parent, row = depth) and w (links). */
static cky_status flatten(const tree *t, tree_layout *l, work **wp)
{
    int cap = 64, sp = 0, *stack = malloc((size_t)cap * sizeof *stack);
    work *w = malloc((size_t)cap * sizeof *w);
    l->box = malloc((size_t)cap * sizeof *l->box);
    l->n = 0;
    for (const tree *node = t; stack && w && l->box;) {
        if (l->n == cap) {
            cap *= 2;
            void *b = realloc(l->box, (size_t)cap * sizeof *l->box);
            l->box = b ? b : l->box;
            void *v = realloc(w, (size_t)cap * sizeof *w);
            w = v ? v : w;
            void *s = realloc(stack, (size_t)cap * sizeof *stack);
            stack = s ? s : stack;
            if (!b || !v || !s)
                break;
        }
        int i = l->n++, p = sp ? stack[sp - 1] : -1;
        l->box[i] = (tree_box){.node = node, .parent = p, .row = sp};
        w[i] = (work){.first = -1, .last = -1, .next = -1};
        if (p >= 0) {
            if (w[p].last >= 0)
                w[w[p].last].next = i;
            else
                w[p].first = i;
            w[p].last = i;
        }
        if (node->child) {
            stack[sp++] = i;
            node = node->child;
            continue;
        }
        while (sp > 0 && !node->next)
            node = l->box[stack[--sp]].node;
        if (sp == 0) {
            free(stack);
            *wp = w;
            return CKY_OK;
        }
        node = node->next;
    }
    free(stack);
    free(w);
    free(l->box);
    l->box = NULL;
    return cky_fail(CKY_ERR_NOMEM, "out of memory laying out a tree");
}

/* Node i's contour, rows top..bottom (every subtree reaches the words' row): the edge down
 * to it (a tag rows below its parent), its box, then below its row its children's, which are
 * placed (rel), centred under it and freed here. */
static cky_status contour(tree_layout *l, work *w, int i, int bottom, double gap)
{
    work *v = &w[i];
    const tree_box *b = &l->box[i];
    int above = b->row - v->top, below = bottom - b->row; /* below: each child's rows */
    v->left = malloc((size_t)(above + 1 + below) * sizeof *v->left);
    v->right = malloc((size_t)(above + 1 + below) * sizeof *v->right);
    if (!v->left || !v->right)
        return cky_fail(CKY_ERR_NOMEM, "out of memory laying out a tree");
    for (int k = 0; k < above; k++)
        v->left[k] = v->right[k] = 0;
    v->left[above] = -b->w / 2;
    v->right[above] = b->w / 2;
    double *left = v->left + above + 1, *right = v->right + above + 1;
    for (int c = v->first; c >= 0; c = w[c].next) { /* relative to the first child, then */
        work *u = &w[c];
        double at = 0;
        if (c == v->first) {
            memcpy(left, u->left, (size_t)below * sizeof *left);
            memcpy(right, u->right, (size_t)below * sizeof *right);
        } else {
            at = -HUGE_VAL;
            for (int k = 0; k < below; k++)
                at = fmax(at, right[k] + gap - u->left[k]);
            for (int k = 0; k < below; k++) {
                left[k] = fmin(left[k], at + u->left[k]);
                right[k] = fmax(right[k], at + u->right[k]);
            }
        }
        u->rel = at;
        free(u->left);
        free(u->right);
        u->left = u->right = NULL;
    }
    if (v->first >= 0) {
        double mid = (w[v->first].rel + w[v->last].rel) / 2;
        for (int c = v->first; c >= 0; c = w[c].next)
            w[c].rel -= mid;
        for (int k = 0; k < below; k++) {
            left[k] -= mid;
            right[k] -= mid;
        }
    }
    return CKY_OK;
}

cky_status tree_draw_layout(const tree *t, const tree_draw_style *s, tree_layout *out)
{
    tree_layout l = {.style = *s};
    double box_h = s->font_size + 2 * s->pad_y;
    while (t && !t->label[0] && t->child && !t->child->next && t->child->child)
        t = t->child; /* "( (S ...) )": the picture starts at S */
    if (!t || (!t->child && !t->label[0])) {
        l.width = 2 * s->margin + 2 * s->pad_x + 10 * s->char_width; /* "(no parse)" */
        l.height = 2 * s->margin + box_h;
        *out = l;
        return CKY_OK;
    }
    work *w = NULL;
    cky_status st = flatten(t, &l, &w);
    if (st != CKY_OK)
        return st;
    int bottom = 0;
    for (int i = 0; i < l.n; i++)
        bottom = l.box[i].row > bottom ? l.box[i].row : bottom;
    for (int i = 0; i < l.n; i++) { /* parents first: a child's contour starts below them */
        tree_box *b = &l.box[i];
        if (!b->node->child)
            b->row = bottom;
        else if (!b->node->child->child && !b->node->child->next)
            b->row = bottom - 1; /* a tag */
        b->w = columns(b->node->label) * s->char_width + 2 * s->pad_x;
        b->h = box_h;
        w[i].top = b->parent >= 0 ? l.box[b->parent].row + 1 : 0;
    }
    for (int i = l.n - 1; i >= 0 && st == CKY_OK; i--)
        st = contour(&l, w, i, bottom, s->gap);
    if (st == CKY_OK) { /* centres from the top down, then everything right of the margin */
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        w[0].rel = 0;
        for (int i = 0; i < l.n; i++) {
            tree_box *b = &l.box[i];
            double centre = w[i].rel + (b->parent >= 0 ? l.box[b->parent].x : 0);
            b->x = centre; /* the centre for now */
            lo = fmin(lo, centre - b->w / 2);
            hi = fmax(hi, centre + b->w / 2);
        }
        for (int i = 0; i < l.n; i++) {
            tree_box *b = &l.box[i];
            b->x += s->margin - lo - b->w / 2;
            b->y = s->margin + b->row * (box_h + s->row_gap);
        }
        l.width = hi - lo + 2 * s->margin;
        l.height = 2 * s->margin + (bottom + 1) * box_h + bottom * s->row_gap;
    }
    for (int i = 0; i < l.n; i++) { /* the top's contour, and those a failure left */
        free(w[i].left);
        free(w[i].right);
    }
    free(w);
    if (st != CKY_OK)
        tree_draw_layout_free(&l);
    *out = l;
    return st;
}

void tree_draw_layout_free(tree_layout *l)
{
    free(l->box);
    l->box = NULL;
    l->n = 0;
}

/* ---- SVG ---- */

/* s as XML text: & < > " ' escaped; bytes that are not UTF-8 and characters XML forbids
 * (controls) written as U+FFFD. */
static void write_escaped(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        unsigned cp = 0;
        int len = utf8_decode(p, n, &cp);
        if (!len || cp < 0x20 || cp == 0xfffe || cp == 0xffff)
            fputs("\xef\xbf\xbd", f);
        else if (cp == '&')
            fputs("&amp;", f);
        else if (cp == '<')
            fputs("&lt;", f);
        else if (cp == '>')
            fputs("&gt;", f);
        else if (cp == '"')
            fputs("&quot;", f);
        else if (cp == '\'')
            fputs("&apos;", f);
        else
            fwrite(p, 1, (size_t)len, f);
        len = len ? len : 1;
        p += len;
        n -= (size_t)len;
    }
}

static void line(FILE *f, double x1, double y1, double x2, double y2)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x1, y1, x2, y2);
}

/* One layout, dy px down: its edges, then its texts. */
static void write_layout(FILE *f, const tree_layout *l, double dy)
{
    const tree_draw_style *s = &l->style;
    double baseline = s->pad_y + 0.8 * s->font_size; /* from a box's top */
    if (l->n == 0) {
        fprintf(f, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\">(no parse)</text>\n",
                l->width / 2, dy + s->margin + baseline);
        return;
    }
    fputs("<g stroke=\"#8c8c8c\" stroke-width=\"1\">\n", f);
    for (int i = 0; i < l->n; i++) {
        const tree_box *b = &l->box[i];
        if (b->parent < 0)
            continue;
        const tree_box *p = &l->box[b->parent];
        double x1 = p->x + p->w / 2, y1 = dy + p->y + p->h, x2 = b->x + b->w / 2;
        double next_row = y1 + s->row_gap; /* the top of the row below the parent's */
        if (b->row > p->row + 1 && fabs(x1 - x2) > 1e-6) { /* to a tag rows below */
            line(f, x1, y1, x2, next_row);
            y1 = next_row;
            x1 = x2;
        }
        line(f, x1, y1, x2, dy + b->y);
    }
    fputs("</g>\n", f);
    for (int i = 0; i < l->n; i++) {
        const tree_box *b = &l->box[i];
        if (!b->node->label[0])
            continue;
        fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", b->node->child ? "label" : "word",
                b->x + b->w / 2, dy + b->y + baseline);
        write_escaped(f, b->node->label);
        fputs("</text>\n", f);
    }
}

void tree_draw_svg(FILE *f, const tree_layout *layouts, int n)
{
    double width = 0, height = 0;
    for (int k = 0; k < n; k++) {
        width = fmax(width, layouts[k].width);
        height += layouts[k].height;
    }
    const tree_draw_style *s = &layouts[0].style;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
               "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
               "<g font-family=\"DejaVu Sans Mono, Liberation Mono, Menlo, Consolas, monospace\" "
               "font-size=\"%g\" text-anchor=\"middle\" fill=\"#1a1a1a\">\n",
            ceil(width), ceil(height), ceil(width), ceil(height), s->font_size);
    double dy = 0;
    for (int k = 0; k < n; k++) {
        write_layout(f, &layouts[k], dy);
        dy += layouts[k].height;
    }
    fputs("</g>\n</svg>\n", f);
}

cky_status tree_draw_svg_trees(FILE *f, const tree *const *trees, int n,
                               const tree_draw_style *style)
{
    tree_layout *l = calloc((size_t)n, sizeof *l); /* zeroed: free where not laid out */
    cky_status st = l ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory laying out a tree");
    for (int k = 0; k < n && st == CKY_OK; k++)
        st = tree_draw_layout(trees[k], style, &l[k]);
    if (st == CKY_OK)
        tree_draw_svg(f, l, n);
    for (int k = 0; l && k < n; k++)
        tree_draw_layout_free(&l[k]);
    free(l);
    return st;
}

/* The temporary file of `path`, .NAME.tmp-PID-HOST~XXXXXX in its folder, opened: its
 * stream (the malloc'ed name in *tmp), or NULL with errno set. */
static FILE *open_temp(const char *path, char **tmp)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
    size_t n = strlen(slash ? slash + 1 : path) + 3;
    char *prefix = malloc(n);
    *tmp = NULL;
    if (dir && prefix) {
        snprintf(prefix, n, ".%s.", slash ? slash + 1 : path);
        *tmp = cachedir_temp_template_named(dir, prefix, "");
    }
    free(dir);
    free(prefix);
    if (!*tmp) {
        errno = ENOMEM;
        return NULL;
    }
    int fd = mkstemp(*tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        int err = errno;
        close(fd);
        unlink(*tmp);
        errno = err;
    }
    if (f)
        fchmod(fd, 0644); /* mkstemp makes 0600: a picture is an ordinary file */
    return f;
}

cky_status tree_draw_write_file(const char *path, const tree *const *trees, int n,
                                const tree_draw_style *style)
{
    char *tmp;
    FILE *f = open_temp(path, &tmp);
    if (!f) {
        cky_status st = cky_fail(errno == ENOMEM ? CKY_ERR_NOMEM : CKY_ERR_IO,
                                 "%s: cannot write (no temporary file beside it): %s", path,
                                 strerror(errno));
        free(tmp);
        return st;
    }
    cky_status st = tree_draw_svg_trees(f, trees, n, style);
    errno = 0;
    int err = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    errno = 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (st == CKY_OK && err)
        st = cky_fail(CKY_ERR_IO, "%s: write error: %s", path, strerror(err));
    if (st == CKY_OK && rename(tmp, path) != 0)
        st = cky_fail(CKY_ERR_IO, "%s: cannot replace it with %s: %s", path, tmp,
                      strerror(errno));
    if (st != CKY_OK)
        unlink(tmp);
    free(tmp);
    return st;
}
