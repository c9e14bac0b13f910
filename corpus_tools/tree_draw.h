/* tree_draw: pictures of Penn Treebank trees, a tidy layout and an SVG writer.
 *
 * The layout gives every node a box as wide as its text in a monospace font of a fixed width
 * per character, plus padding, on one of a tree's rows: the words (leaves) in sentence order
 * on the bottom row, their tags on the row above, every other node on the row of its depth
 * (the top node on row 0). A parent is centred over its first and last child; the children of
 * a node are placed left to right as close as their subtrees allow (Reingold and Tilford's
 * contours): on every row, the boxes of two subtrees, and the edges that run down through
 * the row to a tag, keep `gap` apart, so no two boxes overlap and no edges cross. Nothing
 * here recurses: trees of any depth are safe.
 *
 * The SVG is plain SVG 1.1: <line> elements for the edges, from the bottom of a parent's box
 * to the top of a child's (to a tag rows below: to the next row's top above the tag, then
 * straight down), and <text> elements centred in the boxes (class "label" for phrase labels
 * and tags, "word" for words, in prefix order), XML-escaped. */
#ifndef CKY_CORPUS_TREE_DRAW_H
#define CKY_CORPUS_TREE_DRAW_H

#include <stdio.h>

#include "../util/status.h"
#include "tree.h"

typedef struct tree_draw_style {
    double font_size;     /* px */
    double char_width;    /* px per character: the font's advance, rounded up; East Asian
                           * wide characters count twice */
    double pad_x, pad_y;  /* px inside a box around its text */
    double gap;           /* least px between two boxes (or a box and an edge) of one row */
    double row_gap;       /* px between two rows, where the edges run */
    double margin;        /* px around the picture */
} tree_draw_style;

/* 14 px monospace (DejaVu Sans Mono or Liberation Mono: 0.6 em a character; 8.5 px counted). */
tree_draw_style tree_draw_style_default(void);

typedef struct tree_box {
    const tree *node;  /* the node; its label is the box's text */
    int parent;        /* index of the parent's box, -1 for the top node */
    int row;           /* 0 at the top; the words on the bottom row */
    double x, y, w, h; /* left, top, width, height, px */
} tree_box;

typedef struct tree_layout {
    tree_box *box;          /* in prefix order: a parent before its children, which are in
                             * order */
    int n;                  /* 0 for the empty tree "(())" */
    double width, height;   /* of the picture, margins included */
    tree_draw_style style;
} tree_layout;

/* Lay out `t` (which must outlive the layout: boxes point into it) in *out. The unlabelled
 * outer root of "( (S ...) )" is left out (a root labelled "" with more children stays, its
 * box empty). CKY_ERR_NOMEM only. */
cky_status tree_draw_layout(const tree *t, const tree_draw_style *style, tree_layout *out);

void tree_draw_layout_free(tree_layout *l);

/* Write one SVG document holding the n layouts stacked top to bottom (n >= 1; one picture
 * per tree: n = 1); an empty tree shows "(no parse)". Write errors are left to the stream. */
void tree_draw_svg(FILE *f, const tree_layout *layouts, int n);

/* Lay out the n trees (n >= 1; NULL is the empty tree) with `style` and write them into f
 * as one SVG document, stacked (tree_draw_svg); nothing is written when a layout fails.
 * CKY_ERR_NOMEM only; write errors are left to the stream. */
cky_status tree_draw_svg_trees(FILE *f, const tree *const *trees, int n,
                               const tree_draw_style *style);

/* Write the n trees as the SVG file `path` (tree_draw_svg_trees), atomically: into a
 * temporary file beside it, .NAME.tmp-PID-HOST~XXXXXX (util/cachedir.h), renamed onto it
 * once complete, so that `path` holds the whole picture or what it held before, never part
 * of one (mode 0644; nothing synced to disk). CKY_ERR_IO (a message naming the path and the
 * reason) or CKY_ERR_NOMEM; the temporary file is removed on failure. */
cky_status tree_draw_write_file(const char *path, const tree *const *trees, int n,
                                const tree_draw_style *style);

#endif
