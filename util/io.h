/* io: reading text input that may be gzip-compressed, line by line or whole.
 *
 * All readers go through zlib's gz* functions, which read plain files unchanged, so every
 * input of cky (sentences, treebanks, grammars) may be gzipped. The path "-" is stdin. */
#ifndef CKY_UTIL_IO_H
#define CKY_UTIL_IO_H

#include <stddef.h>

#include "status.h"

typedef struct io_lines io_lines;

/* Open `path` ("-" for stdin) for reading lines. On failure returns CKY_ERR_IO with a
 * message naming the path. */
cky_status io_lines_open(const char *path, io_lines **out);

/* Read the next line into *line (NUL-terminated, without the '\n' or a trailing '\r'; the
 * buffer belongs to the reader and is valid until the next call). *len is its length in
 * bytes (it may contain NUL bytes). Returns CKY_OK and sets *line = NULL at end of input. */
cky_status io_lines_next(io_lines *r, char **line, size_t *len);

/* 1-based number of the line last returned by io_lines_next. */
long io_lines_number(const io_lines *r);

/* The path the reader was opened with (for error messages). */
const char *io_lines_path(const io_lines *r);

void io_lines_close(io_lines *r);

/* Read the whole (possibly gzipped) file into a malloc'ed, NUL-terminated buffer. */
cky_status io_read_file(const char *path, char **data, size_t *len);

/* Read the raw bytes of a file without decompressing (for formats that inflate themselves). */
cky_status io_read_raw(const char *path, unsigned char **data, size_t *len);

/* 1 if `path` names a readable regular file. */
int io_file_exists(const char *path);

#endif
