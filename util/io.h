/* io: reading text input that may be gzip-compressed, line by line or whole.
 *
 * Every input of cky (sentences, treebanks, grammars) may be gzipped: whole files go through
 * zlib's gz* functions, which read plain files unchanged; the line reader takes what read(2)
 * gives, as it arrives (a pipe or terminal is answered line by line), and inflates it when it
 * starts with the gzip magic. The path "-" is stdin. */
#ifndef CKY_UTIL_IO_H
#define CKY_UTIL_IO_H

#include <stddef.h>

#include "status.h"

typedef struct io_lines io_lines;

/* Open `path` ("-" for stdin) for reading lines. On failure returns CKY_ERR_IO with a
 * message naming the path. */
cky_status io_lines_open(const char *path, io_lines **out);

/* Read the next line into *line (NUL-terminated, without its end; the buffer belongs to the
 * reader and is valid until the next call). A line ends at LF, CR LF or a lone CR. *len is
 * its length in bytes (it may contain NUL bytes). Returns CKY_OK and sets *line = NULL at end
 * of input. It waits only while no whole line has arrived. */
cky_status io_lines_next(io_lines *r, char **line, size_t *len);

/* 1 if io_lines_next would not wait: a line (or the end of input) is there already, or the
 * input has bytes ready; 0 if it would block (a pipe or terminal with nothing new). */
int io_lines_pending(io_lines *r);

/* 1-based number of the line last returned by io_lines_next. */
long io_lines_number(const io_lines *r);

/* The path the reader was opened with ("stdin" for "-"), for error messages. */
const char *io_lines_path(const io_lines *r);

void io_lines_close(io_lines *r);

/* Read the whole (possibly gzipped) file into a malloc'ed, NUL-terminated buffer. */
cky_status io_read_file(const char *path, char **data, size_t *len);

/* Read the raw bytes of a file without decompressing (for formats that inflate themselves). */
cky_status io_read_raw(const char *path, unsigned char **data, size_t *len);

/* Offset of the first NUL byte or invalid UTF-8 sequence in s[0..n), or -1 if there is none. */
long io_text_check(const char *s, size_t n);

/* 1 if `path` names a readable regular file. */
int io_file_exists(const char *path);

#endif
