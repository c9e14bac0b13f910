/* tree_read: reading bracketed trees from files or strings (see tree.h for the accepted
 * form). A tokenizer turns the input into "(", ")" and atoms with their line and column; a
 * parser with an explicit stack of open constituents builds one tree at a time, so any
 * nesting depth is safe and every malformed input gets a "path:line:col: problem" error. */
#include "tree.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"

enum { TOK_OPEN, TOK_CLOSE, TOK_ATOM, TOK_EOF };

/* One constituent being read: its node, its last child, where its "(" is. */
typedef struct frame {
    tree *node, *last;
    long line, col;
    int kids;  /* subtrees so far */
    int words; /* words so far (at most 1) */
    int empty; /* an unlabeled root that held "()": the empty tree */
} frame;

struct tree_reader {
    io_lines *in;      /* file source, or NULL for a string */
    const char *text;  /* string source: start of the next line */
    char *path;        /* name used in messages */
    const char *line;  /* current line (not NUL-terminated for strings) */
    size_t len, pos;   /* its length and the scan position */
    long lineno;       /* its 1-based number */
    int at_eof;
    cky_status failed; /* sticky error: replayed on later calls */
    char *failmsg;
    long tree_line;
    int tok, have_tok; /* one token of lookahead */
    long tok_line, tok_col;
    char *atom; /* text of an atom token */
    size_t atom_cap;
    frame *stack;
    size_t depth, cap;
};

static cky_status reader_new(const char *name, tree_reader **out)
{
    tree_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(name))) {
        free(r);
        return cky_fail(CKY_ERR_NOMEM, "out of memory opening %s", name);
    }
    *out = r;
    return CKY_OK;
}

cky_status tree_reader_open(const char *path, tree_reader **out)
{
    tree_reader *r = NULL;
    cky_status st = reader_new(path, &r);
    if (st != CKY_OK)
        return st;
    st = io_lines_open(path, &r->in);
    if (st != CKY_OK) {
        tree_reader_close(r);
        return st;
    }
    *out = r;
    return CKY_OK;
}

cky_status tree_reader_open_string(const char *name, const char *text, tree_reader **out)
{
    cky_status st = reader_new(name, out);
    if (st == CKY_OK)
        (*out)->text = text;
    return st;
}

long tree_reader_line(const tree_reader *r) { return r->tree_line; }

void tree_reader_close(tree_reader *r)
{
    if (!r)
        return;
    if (r->in)
        io_lines_close(r->in);
    free(r->path);
    free(r->failmsg);
    free(r->atom);
    free(r->stack);
    free(r);
}

/* Record a format error at line:col (sticky) and free the tree being read. */
static cky_status reader_fail(tree_reader *r, tree *partial, long line, long col,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static cky_status reader_fail(tree_reader *r, tree *partial, long line, long col,
                              const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tree_free(partial);
    r->depth = 0;
    r->failed = cky_fail(CKY_ERR_FORMAT, "%s:%ld:%ld: %s", r->path, line, col, msg);
    r->failmsg = strdup(cky_last_error());
    return r->failed;
}

/* Load the next line; sets at_eof at the end of input. */
static cky_status reader_next_line(tree_reader *r)
{
    if (r->in) {
        char *line;
        size_t len;
        cky_status st = io_lines_next(r->in, &line, &len);
        if (st != CKY_OK)
            return st;
        if (!line) {
            r->at_eof = 1;
            return CKY_OK;
        }
        r->line = line;
        r->len = len;
    } else {
        if (!r->text) {
            r->at_eof = 1;
            return CKY_OK;
        }
        const char *nl = strchr(r->text, '\n');
        r->line = r->text;
        r->len = nl ? (size_t)(nl - r->text) : strlen(r->text);
        r->text = nl ? nl + 1 : NULL;
    }
    r->pos = 0;
    r->lineno++;
    return CKY_OK;
}

static int is_blank(char c) { return c == '\0' || isspace((unsigned char)c); }

/* Make sure the lookahead token is loaded. */
static cky_status reader_peek(tree_reader *r)
{
    if (r->have_tok)
        return CKY_OK;
    for (;;) {
        while (r->line && r->pos < r->len && is_blank(r->line[r->pos]))
            r->pos++;
        if (r->line && r->pos < r->len)
            break;
        if (r->at_eof) {
            r->tok = TOK_EOF;
            r->tok_line = r->lineno ? r->lineno : 1;
            r->tok_col = (long)(r->line ? r->len : 0) + 1;
            r->have_tok = 1;
            return CKY_OK;
        }
        cky_status st = reader_next_line(r);
        if (st != CKY_OK)
            return st;
    }
    r->tok_line = r->lineno;
    r->tok_col = (long)r->pos + 1;
    r->have_tok = 1;
    char c = r->line[r->pos];
    if (c == '(' || c == ')') {
        r->tok = c == '(' ? TOK_OPEN : TOK_CLOSE;
        r->pos++;
        return CKY_OK;
    }
    size_t start = r->pos;
    while (r->pos < r->len && !is_blank(r->line[r->pos]) && r->line[r->pos] != '(' &&
           r->line[r->pos] != ')')
        r->pos++;
    size_t n = r->pos - start;
    if (n + 1 > r->atom_cap) {
        char *a = realloc(r->atom, n + 64);
        if (!a)
            return cky_fail(CKY_ERR_NOMEM, "%s:%ld: out of memory", r->path, r->lineno);
        r->atom = a;
        r->atom_cap = n + 64;
    }
    memcpy(r->atom, r->line + start, n);
    r->atom[n] = '\0';
    r->tok = TOK_ATOM;
    return CKY_OK;
}

static cky_status reader_push(tree_reader *r, tree *node, long line, long col)
{
    if (r->depth == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 64;
        frame *s = realloc(r->stack, c * sizeof *s);
        if (!s)
            return cky_fail(CKY_ERR_NOMEM, "%s:%ld: out of memory", r->path, line);
        r->stack = s;
        r->cap = c;
    }
    r->stack[r->depth++] = (frame){.node = node, .line = line, .col = col};
    return CKY_OK;
}

static void frame_append(frame *f, tree *kid)
{
    if (f->last)
        f->last->next = kid;
    else
        f->node->child = kid;
    f->last = kid;
}

/* Read "(" LABEL: open a constituent. */
static cky_status reader_open_node(tree_reader *r, tree **root)
{
    long line = r->tok_line, col = r->tok_col;
    frame *top = r->depth ? &r->stack[r->depth - 1] : NULL;
    if (top && top->words)
        return reader_fail(r, *root, line, col, "a subtree after the word '%s' of (%s ...)",
                           top->last->label, top->node->label);
    if (top && top->empty)
        return reader_fail(r, *root, line, col, "a subtree after the empty parse ()");
    r->have_tok = 0;
    cky_status st = reader_peek(r);
    if (st != CKY_OK)
        return st;
    const char *label = "";
    if (r->tok == TOK_ATOM) {
        label = r->atom; /* valid until the next peek, after tree_new */
        r->have_tok = 0;
    } else if (top && r->tok != TOK_CLOSE) {
        return reader_fail(r, *root, line, col, "a constituent without a label");
    }
    tree *node = tree_new(label);
    if (!node)
        return cky_fail(CKY_ERR_NOMEM, "%s:%ld: out of memory", r->path, line);
    if (top) {
        frame_append(top, node);
        top->kids++;
    } else {
        *root = node;
    }
    return reader_push(r, node, line, col);
}

/* Read a word inside the innermost constituent. */
static cky_status reader_word(tree_reader *r, tree **root)
{
    frame *top = &r->stack[r->depth - 1];
    long line = r->tok_line, col = r->tok_col;
    if (top->words)
        return reader_fail(r, *root, line, col, "a second word '%s' in the leaf (%s %s ...)",
                           r->atom, top->node->label, top->last->label);
    if (top->kids || top->empty)
        return reader_fail(r, *root, line, col, "the word '%s' among the subtrees of (%s ...)",
                           r->atom, top->node->label);
    tree *leaf = tree_new(r->atom);
    if (!leaf)
        return cky_fail(CKY_ERR_NOMEM, "%s:%ld: out of memory", r->path, line);
    frame_append(top, leaf);
    top->words = 1;
    r->have_tok = 0;
    return CKY_OK;
}

/* Read ")": close the innermost constituent. Sets *done when it was the root. */
static cky_status reader_close_node(tree_reader *r, tree **root, int *done)
{
    frame f = r->stack[--r->depth];
    r->have_tok = 0;
    if (!f.kids && !f.words && !f.empty) {
        if (f.node->label[0])
            return reader_fail(r, *root, f.line, f.col, "the constituent (%s) has no children",
                               f.node->label);
        if (r->depth) { /* "()" inside a tree: only "(())" is allowed, the empty parse */
            frame *parent = &r->stack[r->depth - 1];
            if (r->depth > 1 || parent->node->label[0] || parent->kids > 1)
                return reader_fail(r, *root, f.line, f.col, "an empty constituent ()");
            parent->node->child = NULL;
            parent->last = NULL;
            parent->kids = 0;
            parent->empty = 1;
            tree_free(f.node);
        }
    }
    *done = r->depth == 0;
    return CKY_OK;
}

cky_status tree_reader_next(tree_reader *r, tree **out)
{
    *out = NULL;
    if (r->failed)
        return cky_fail(r->failed, "%s", r->failmsg ? r->failmsg : "earlier error");
    cky_status st = reader_peek(r);
    if (st != CKY_OK)
        return st;
    if (r->tok == TOK_EOF)
        return CKY_OK;
    if (r->tok == TOK_ATOM)
        return reader_fail(r, NULL, r->tok_line, r->tok_col, "text '%s' outside a tree",
                           r->atom);
    if (r->tok == TOK_CLOSE)
        return reader_fail(r, NULL, r->tok_line, r->tok_col, "')' without a matching '('");
    r->tree_line = r->tok_line;
    tree *root = NULL;
    int done = 0;
    while (!done) {
        if ((st = reader_peek(r)) != CKY_OK)
            break;
        switch (r->tok) {
        case TOK_OPEN: st = reader_open_node(r, &root); break;
        case TOK_ATOM: st = reader_word(r, &root); break;
        case TOK_CLOSE: st = reader_close_node(r, &root, &done); break;
        default:
            st = reader_fail(r, root, r->tok_line, r->tok_col,
                             "end of input inside the tree that starts at line %ld (%zu "
                             "bracket(s) not closed)",
                             r->tree_line, r->depth);
            root = NULL;
        }
        if (st != CKY_OK)
            break;
    }
    if (st != CKY_OK) {
        if (!r->failed) { /* I/O or memory errors: make them sticky too */
            tree_free(root);
            r->failed = st;
            r->failmsg = strdup(cky_last_error());
        }
        r->depth = 0;
        return st;
    }
    *out = root;
    return CKY_OK;
}

cky_status tree_parse_string(const char *s, tree **out)
{
    tree_reader *r;
    *out = NULL;
    cky_status st = tree_reader_open_string("<string>", s, &r);
    if (st != CKY_OK)
        return st;
    st = tree_reader_next(r, out);
    if (st == CKY_OK && !*out)
        st = cky_fail(CKY_ERR_FORMAT, "<string>:%ld:%ld: no tree", r->tok_line, r->tok_col);
    if (st == CKY_OK && (st = reader_peek(r)) == CKY_OK && r->tok != TOK_EOF)
        st = cky_fail(CKY_ERR_FORMAT, "<string>:%ld:%ld: text after the tree", r->tok_line,
                      r->tok_col);
    if (st != CKY_OK) {
        tree_free(*out);
        *out = NULL;
    }
    tree_reader_close(r);
    return st;
}
