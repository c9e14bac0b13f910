/* tree: Penn Treebank trees in memory, and reading and writing them.
 *
 * A node has a label and a list of children (first child, next sibling). A leaf (no
 * children) holds a word in its label; its parent is the preterminal (POS tag). Trees read
 * from files keep their labels as written; tree_normalize() applies the evaluation
 * normalization. Readers accept multi-line .mrg files and one-tree-per-line files, plain or
 * gzipped, and report malformed input with file, line and column.
 *
 * Text form read: a tree is "(" LABEL ITEMS ")" where LABEL (optional, "" when absent) is
 * the run of characters other than whitespace and parentheses after "(" (whitespace may come
 * between), and ITEMS is either one word (a preterminal "(NN cat)") or one or more subtrees.
 * Only the outermost node may be unlabeled ("( (S ...) )"). The failed-parse forms "()" and
 * "(())" read as the empty tree: a root labeled "" without children. Nothing in this module
 * recurses, so any nesting depth is safe. */
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

/* Free `t` and all its descendants (not its siblings); NULL is fine. */
void tree_free(tree *t);

/* Print `t` in one line, Berkeley style: "(S (NP (DT The) (NN cat)) ...)"; a leaf prints
 * as its bare word. On out-of-memory the output is cut short. */
void tree_write(const tree *t, FILE *f);

/* Write `t` in Penn Treebank style as a file line, followed by '\n': a root labeled ""
 * prints as "( " + children + " )" (Berkeley's "( (S ...) )"); any other root is wrapped
 * the same way, "( (S ...) )"; a NULL or empty tree prints "(())". */
void tree_write_line(const tree *t, FILE *f);

/* ---- reading ---- */

typedef struct tree_reader tree_reader;

/* Open `path` ("-" for stdin, plain or gzipped) for reading trees. CKY_ERR_IO on failure. */
cky_status tree_reader_open(const char *path, tree_reader **out);

/* Read trees from the NUL-terminated string `text` (not copied: it must outlive the
 * reader); `name` stands for the file name in messages. */
cky_status tree_reader_open_string(const char *name, const char *text, tree_reader **out);

/* Read the next tree into *t (the caller frees it), or *t = NULL at end of input. Trees may
 * span lines and several may share a line. Malformed input returns CKY_ERR_FORMAT with
 * "path:line:col: problem"; the reader then keeps returning that error. */
cky_status tree_reader_next(tree_reader *r, tree **t);

/* 1-based line on which the tree last returned by tree_reader_next started. */
long tree_reader_line(const tree_reader *r);

void tree_reader_close(tree_reader *r);

/* Parse `s`, which must hold exactly one tree, into *out (messages name "<string>"). */
cky_status tree_parse_string(const char *s, tree **out);

/* ---- normalization and sentences ---- */

/* The normalization parsers are evaluated with (Berkeley's StandardTreeNormalizer without
 * its X-over-X collapse, so unary chains stay for EVALB to count):
 *  1. every non-leaf label is cut at its first '-', '=' or '^' that is not at position 0
 *     (NP-SBJ-1 -> NP, NP=2 -> NP; -NONE-, -LRB- and PRP$ stay as they are);
 *  2. -NONE- subtrees are deleted, then every constituent left without children;
 *  3. a root labeled TOP or ROOT is relabeled "" (the PTB's and Berkeley's unlabeled root).
 * Leaves (words) never change. If nothing is left, *t becomes NULL. CKY_ERR_NOMEM only. */
cky_status tree_normalize(tree **t);

/* Cut a label in place as Berkeley's FunctionNodeStripper does: at the first '-', '=' or '^'
 * that is not at position 0 (NP-SBJ-1 -> NP, NP^g -> NP; -LRB- and -NONE- stay whole). */
void tree_strip_label(char *label);

/* The words of the leaves of `t` in order, leaving out the leaves under -NONE-. *words is
 * one malloc'ed block (the array and the strings): free(*words) frees all. A NULL tree has
 * no words. */
cky_status tree_words(const tree *t, char ***words, int *n);

/* The words of tree_words() joined with single spaces into a malloc'ed string: the line
 * of the sentence as a parser reads it. */
cky_status tree_sentence(const tree *t, char **out);

/* Turn an annotated binarized tree into a Penn Treebank tree in place, as the Berkeley
 * parser's unAnnotateTree: @-nodes spliced into their parents, labels cut at the first
 * '-', '=' or '^' not at position 0, and the ROOT label made "" (printed as "( ... )").
 * Returns the new root. */
tree *tree_unannotate(tree *t);

#endif
