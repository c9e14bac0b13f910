/* tree: building, freeing, writing, normalizing trees and extracting their words (see
 * tree.h). Reading is in tree_read.c. All traversals are iterative (tree_walk), so a tree
 * of any depth is safe. */
#include "tree.h"

#include <stdlib.h>
#include <string.h>

tree *tree_new(const char *label)
{
    tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->label = strdup(label);
    if (!t->label) {
        free(t);
        return NULL;
    }
    return t;
}

void tree_add_child(tree *parent, tree *kid)
{
    tree **link = &parent->child;
    while (*link)
        link = &(*link)->next;
    *link = kid;
}

void tree_free(tree *t)
{
    if (!t)
        return;
    t->next = NULL; /* siblings are not ours */
    /* Seen as a binary tree (child = left, next = right): rotate left subtrees away until
     * the node has none, then free it and go right. O(n), no stack. */
    while (t) {
        if (t->child) {
            tree *c = t->child;
            t->child = c->next;
            c->next = t;
            t = c;
        } else {
            tree *n = t->next;
            free(t->label);
            free(t);
            t = n;
        }
    }
}

/* Visit `t` depth first: enter(node) before its children, leave(node) after them (leaves
 * get both). leave() may free the node's children but not the node. CKY_ERR_NOMEM only. */
static cky_status tree_walk(tree *t, void (*enter)(tree *, void *), void (*leave)(tree *, void *),
                            void *ctx)
{
    tree **stack = NULL;
    size_t n = 0, cap = 0;
    tree *node = t;
    for (;;) {
        enter(node, ctx);
        if (node->child) {
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                tree **s = realloc(stack, c * sizeof *s);
                if (!s) {
                    free(stack);
                    return cky_fail(CKY_ERR_NOMEM, "out of memory walking a tree");
                }
                stack = s;
                cap = c;
            }
            stack[n++] = node;
            node = node->child;
            continue;
        }
        leave(node, ctx);
        while (node != t && !node->next) {
            node = stack[--n];
            leave(node, ctx);
        }
        if (node == t)
            break;
        node = node->next;
    }
    free(stack);
    return CKY_OK;
}

/* ---- writing ---- */

typedef struct write_ctx {
    FILE *f;
    int space; /* something was printed that a next item must be separated from */
} write_ctx;

static void write_enter(tree *t, void *p)
{
    write_ctx *w = p;
    if (w->space)
        fputc(' ', w->f);
    if (t->child)
        fputc('(', w->f);
    fputs(t->label, w->f);
    w->space = 1;
}

static void write_leave(tree *t, void *p)
{
    write_ctx *w = p;
    if (t->child)
        fputc(')', w->f);
}

void tree_write(const tree *t, FILE *f)
{
    if (!t)
        return;
    if (!t->child && !t->label[0]) {
        fputs("()", f);
        return;
    }
    write_ctx w = {f, 0};
    tree_walk((tree *)t, write_enter, write_leave, &w); /* these callbacks only read */
}

void tree_write_line(const tree *t, FILE *f)
{
    if (!t || (!t->child && !t->label[0])) {
        fputs("(())\n", f);
        return;
    }
    fputs("( ", f);
    if (t->label[0]) {
        tree_write(t, f);
    } else {
        for (const tree *c = t->child; c; c = c->next) {
            tree_write(c, f);
            fputc(' ', f);
        }
        fputs(")\n", f);
        return;
    }
    fputs(" )\n", f);
}

/* ---- normalization ---- */

/* Berkeley's FunctionNodeStripper.transformLabel: i = first '-', j = first '=', h = first
 * '^'; the earliest of '=' and '^' wins over '-' when it comes first or the label starts
 * with '-'; cut there unless that is position 0. So -LRB- and -NONE- stay whole. */
void tree_strip_label(char *label)
{
    char *dash = strchr(label, '-'), *eq = strchr(label, '='), *hat = strchr(label, '^');
    long i = dash ? dash - label : -1, j = eq ? eq - label : -1, h = hat ? hat - label : -1;
    if (h > 0 && (h < j || j == -1))
        j = h;
    if (j > 0 && (j < i || i <= 0))
        i = j;
    if (i > 0)
        label[i] = '\0';
}

static void normalize_enter(tree *t, void *ctx)
{
    if (t->child)
        tree_strip_label(t->label);
}

/* After the children: drop -NONE- children and emptied ones (marked by a NULL label). */
static void normalize_leave(tree *t, void *ctx)
{
    if (!t->child)
        return;
    tree **link = &t->child;
    while (*link) {
        tree *c = *link;
        if (!c->label || (c->child && !strcmp(c->label, "-NONE-"))) {
            *link = c->next;
            tree_free(c);
        } else {
            link = &c->next;
        }
    }
    if (!t->child) {
        free(t->label);
        t->label = NULL;
    }
}

cky_status tree_normalize(tree **t)
{
    tree *root = *t;
    if (!root)
        return CKY_OK;
    cky_status st = tree_walk(root, normalize_enter, normalize_leave, NULL);
    if (st != CKY_OK)
        return st;
    if (!root->label || (root->child && !strcmp(root->label, "-NONE-"))) {
        tree_free(root);
        *t = NULL;
        return CKY_OK;
    }
    if (root->child && (!strcmp(root->label, "TOP") || !strcmp(root->label, "ROOT")))
        root->label[0] = '\0';
    return CKY_OK;
}

/* ---- words ---- */

typedef struct words_ctx {
    int none_depth;  /* how many -NONE- nodes enclose the current node */
    int n;           /* words seen */
    size_t bytes;    /* their bytes, with NULs */
    char **words;    /* second pass: where pointers go (NULL in the counting pass) */
    char *text;      /* second pass: where strings go */
} words_ctx;

static void words_enter(tree *t, void *p)
{
    words_ctx *w = p;
    if (t->child) {
        w->none_depth += !strcmp(t->label, "-NONE-");
        return;
    }
    if (w->none_depth)
        return;
    size_t len = strlen(t->label) + 1;
    if (w->words)
        w->words[w->n] = memcpy(w->text + w->bytes, t->label, len);
    w->n++;
    w->bytes += len;
}

static void words_leave(tree *t, void *p)
{
    words_ctx *w = p;
    if (t->child)
        w->none_depth -= !strcmp(t->label, "-NONE-");
}

cky_status tree_words(const tree *t, char ***words, int *n)
{
    words_ctx w = {0};
    *words = NULL;
    *n = 0;
    tree *root = (tree *)t; /* the callbacks only read */
    cky_status st = root ? tree_walk(root, words_enter, words_leave, &w) : CKY_OK;
    if (st != CKY_OK)
        return st;
    char **block = malloc((w.n + 1) * sizeof(char *) + w.bytes);
    if (!block)
        return cky_fail(CKY_ERR_NOMEM, "out of memory extracting words");
    words_ctx fill = {.words = block, .text = (char *)(block + w.n + 1)};
    st = root ? tree_walk(root, words_enter, words_leave, &fill) : CKY_OK;
    if (st != CKY_OK) {
        free(block);
        return st;
    }
    block[w.n] = NULL;
    *words = block;
    *n = w.n;
    return CKY_OK;
}

cky_status tree_sentence(const tree *t, char **out)
{
    char **words;
    int n;
    cky_status st = tree_words(t, &words, &n);
    if (st != CKY_OK)
        return st;
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(words[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s) {
        free(words);
        return cky_fail(CKY_ERR_NOMEM, "out of memory extracting a sentence");
    }
    *p = '\0';
    for (int i = 0; i < n; i++) {
        size_t l = strlen(words[i]);
        if (i)
            *p++ = ' ';
        memcpy(p, words[i], l + 1);
        p += l;
    }
    free(words);
    *out = s;
    return CKY_OK;
}

/* ---- un-annotation ------------------------------------------------------------------- */

static int is_intermediate(const tree *t)
{
    return t->child && t->label[0] == '@' && t->label[1] != '\0';
}

/* Un-annotate the children of t (t itself is kept). */
static void unannotate_children(tree *t)
{
    tree **link = &t->child;
    while (*link) {
        tree *kid = *link;
        if (is_intermediate(kid)) {
            /* splice: kid's children take its place */
            tree *first = kid->child, *last = first;
            while (last->next)
                last = last->next;
            last->next = kid->next;
            *link = first;
            kid->child = NULL;
            kid->next = NULL;
            tree_free(kid);
            continue; /* the spliced children are examined in turn */
        }
        if (kid->child) {
            tree_strip_label(kid->label);
            unannotate_children(kid);
        }
        link = &kid->next;
    }
}

tree *tree_unannotate(tree *t)
{
    if (!t)
        return NULL;
    unannotate_children(t);
    if (strcmp(t->label, "ROOT") == 0)
        t->label[0] = '\0';
    else
        tree_strip_label(t->label);
    return t;
}
