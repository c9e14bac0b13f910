/* tree: Penn Treebank trees in memory, and reading and writing them.
 *
 * A node has a label and a list of children (first child, next sibling). A leaf (no
 * children) holds a word in its label; its parent is the preterminal (POS tag). Trees read
 * from files keep their labels as written; tree_normalize() applies the evaluation
 * normalization. Readers accept multi-line .mrg files and one-tree-per-line files, plain or
 * gzipped, and report malformed input with file, line and column. */
#ifndef CKY_CORPUS_TREE_H
#define CKY_CORPUS_TREE_H

#include <stdio.h>

#include "../util/status.h"

typedef struct tree {
    char *label;        /* phrase label, POS tag, or (for a leaf) the word; "" for an empty root */
    struct tree *child; /* first child; NULL for a leaf */
    struct tree *next;  /* next sibling */
} tree;

/* A new childless node with a copy of `label`; NULL when out of memory. */
tree *tree_new(const char *label);

/* Append `kid` as the last child of `parent`. */
void tree_add_child(tree *parent, tree *kid);

/* Free a whole tree (NULL is fine). */
void tree_free(tree *t);

/* Print `t` in one line, Berkeley style: "(S (NP (DT The) (NN cat)) ...)". */
void tree_write(const tree *t, FILE *f);

/* Write `t` in Penn Treebank style as a file line: the root wrapped as "( <tree> )" if its
 * label is not empty; "(())" for a NULL tree; followed by '\n'. */
void tree_write_line(const tree *t, FILE *f);
