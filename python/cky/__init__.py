"""cky: exact CKY parsing with Berkeley latent-variable grammars, from Python.

    import cky
    p = cky.Parser("sample-sm3.gr", engine="cpu")
    p.parse("The company said it expects full vindication.")   # raw text, tokenized here
    p.parse(["Stocks", "fell", "."])                           # tokens
    p.parse(["Stocks", "fell", "."], tags=["NNS", "VBD", "."])  # with gold POS tags
    for tree in p.parse_many(sentences, batch_size=256): ...   # in order, batched

Trees come back as strings, one line in the Berkeley parser's layout "( (S ...) )", or as
nltk.Tree objects with as_tree=True (when NLTK is installed). A sentence without a tree
(empty, longer than max_length, or no parse in the grammar) gives "(())" (None as a tree),
or raises ParseError with strict=True. Errors raise CkyError with the library's message.

cky.Client("http://127.0.0.1:9000") has the same parse and parse_many, answered by a running
`cky serve` (cky/client.py, standard library only).

Opening a parser can take long the first time a grammar is used (its kernels are compiled
into the cache): the steps are logged to the "cky" logger (logging.INFO when one ends,
DEBUG while kernels compile), or passed to Parser(..., progress=function) as Progress
tuples.

The work is done by libcky.so (the C library, api/cky.h) through ctypes; the package holds
its own copy (installed by `pip install ./python` after `make`), else $CKY_LIBRARY or the
repository's build/libcky.so is used.
"""
import collections
import ctypes
import itertools
import logging
import os
import time

__version__ = "0.1.0"
__all__ = ["Parser", "Client", "ServiceError", "CkyError", "ParseError", "Progress",
           "Scores", "tokenize", "__version__"]

NO_TREE = "(())"
_OK, _FAILED = 0, 4  # CKY_PARSE_OK, CKY_PARSE_FAILED (api/cky.h)


class CkyError(Exception):
    """An error of the cky library (its message), or of the arguments given to it."""


class ParseError(CkyError):
    """A sentence got no tree (strict mode): empty, too long, or no parse in the grammar."""


Progress = collections.namedtuple("Progress", "stage state done total cached seconds")
Progress.__doc__ = """A report of a long step while a Parser opens.

stage: "grammar" (reading the grammar's files; the cache had no image of them), "image"
(writing that image into the kernel cache) or "compile" (the kernels: compiled, or loaded
from the cache); state: "begin", "step" (counts changed) or "end"; done of total kernels,
cached of them from the cache (0 for the other stages); seconds since the stage began."""

Scores = collections.namedtuple("Scores",
                                "model_score sentence_likelihood tree_likelihood confidence")
Scores.__doc__ = """The scores the Berkeley parser prints beside a tree (its -modelScore,
-sentence_likelihood, -tree_likelihood and -confidence): the tree's max-rule score (Viterbi:
its log score), log P(words), log P(tree, words) and log P(tree | words); -inf without a
tree; the last two need pruning (nan with prune="none")."""
_NSCORE = 4  # CKY_NSCORE (api/cky.h), in Scores' order

_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                ctypes.c_long, ctypes.c_long, ctypes.c_long)
_STATES = ("begin", "step", "end")
_log = logging.getLogger("cky")


def _log_progress(p):
    """The default progress function: the steps into the "cky" logger."""
    if p.state == "end" and p.stage == "compile":
        _log.info("%d kernels ready in %.1f s (%d compiled, %d from the cache)", p.done,
                  p.seconds, p.done - p.cached, p.cached)
    elif p.state == "end":
        _log.info("%s in %.1f s", "read the grammar" if p.stage == "grammar" else
                  "wrote the grammar's image into the kernel cache", p.seconds)
    elif p.stage == "compile" and p.state == "step":
        _log.debug("compiling kernels: %d/%d (%d from the cache), %.1f s", p.done, p.total,
                   p.cached, p.seconds)


def _find_library():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.environ.get("CKY_LIBRARY"), os.path.join(here, "libcky.so"),
                 os.path.join(here, "..", "..", "build", "libcky.so")):
        if path and os.path.isfile(path):
            return path
    raise ImportError("cky: libcky.so not found: install the package with `pip install "
                      "./python` after `make`, or set CKY_LIBRARY to build/libcky.so")


def _load():
    lib = ctypes.CDLL(_find_library())
    c_str, c_int, ptr = ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p
    lib.cky_parser_open.argtypes = [c_str, c_str, c_str, c_int, c_int, c_int]
    lib.cky_parser_open.restype = ptr
    lib.cky_parser_open_progress.argtypes = [c_str, c_str, c_str, c_int, c_int, c_int,
                                             _PROGRESS_FN, ptr]
    lib.cky_parser_open_progress.restype = ptr
    lib.cky_parser_open_prune.argtypes = [c_str, c_str, c_str, c_str, c_int, c_int, c_int,
                                          _PROGRESS_FN, ptr]
    lib.cky_parser_open_prune.restype = ptr
    lib.cky_parser_prune.argtypes = [ptr]
    lib.cky_parser_prune.restype = c_str
    lib.cky_parser_engine.argtypes = [ptr]
    lib.cky_parser_engine.restype = c_str
    lib.cky_parser_decoder.argtypes = [ptr]
    lib.cky_parser_decoder.restype = c_str
    lib.cky_parser_batch_size.argtypes = [ptr]
    lib.cky_parser_batch_size.restype = c_int
    lib.cky_parser_parse.argtypes = [ptr, ctypes.POINTER(c_str), c_int, c_int,
                                     ctypes.POINTER(ptr), ctypes.POINTER(c_int),
                                     ctypes.POINTER(ptr)]
    lib.cky_parser_parse.restype = c_int
    lib.cky_parser_parse_kbest.argtypes = [ptr, ctypes.POINTER(c_str), c_int, c_int, c_int,
                                           ctypes.POINTER(ptr),
                                           ctypes.POINTER(ctypes.c_double),
                                           ctypes.POINTER(c_int), ctypes.POINTER(c_int),
                                           ctypes.POINTER(ptr)]
    lib.cky_parser_parse_kbest.restype = c_int
    lib.cky_parser_parse_scores.argtypes = [ptr, ctypes.POINTER(c_str), c_int, c_int,
                                            ctypes.POINTER(ptr),
                                            ctypes.POINTER(ctypes.c_double),
                                            ctypes.POINTER(c_int), ctypes.POINTER(ptr)]
    lib.cky_parser_parse_scores.restype = c_int
    lib.cky_parser_parse_tagged.argtypes = [ptr, ctypes.POINTER(c_str), ctypes.POINTER(c_str),
                                            c_int, ctypes.POINTER(ptr), ctypes.POINTER(c_int),
                                            ctypes.POINTER(ptr)]
    lib.cky_parser_parse_tagged.restype = c_int
    lib.cky_parser_parse_tagged_scores.argtypes = [ptr, ctypes.POINTER(c_str),
                                                   ctypes.POINTER(c_str), c_int,
                                                   ctypes.POINTER(ptr),
                                                   ctypes.POINTER(ctypes.c_double),
                                                   ctypes.POINTER(c_int), ctypes.POINTER(ptr)]
    lib.cky_parser_parse_tagged_scores.restype = c_int
    lib.cky_parser_parse_tagged_kbest.argtypes = [ptr, ctypes.POINTER(c_str),
                                                  ctypes.POINTER(c_str), c_int, c_int,
                                                  ctypes.POINTER(ptr),
                                                  ctypes.POINTER(ctypes.c_double),
                                                  ctypes.POINTER(c_int), ctypes.POINTER(c_int),
                                                  ctypes.POINTER(ptr)]
    lib.cky_parser_parse_tagged_kbest.restype = c_int
    lib.cky_tokenize.argtypes = [c_str, ctypes.POINTER(ptr)]
    lib.cky_tokenize.restype = c_int
    lib.cky_error_message.argtypes = []
    lib.cky_error_message.restype = c_str
    lib.cky_string_free.argtypes = [ptr]
    lib.cky_string_free.restype = None
    lib.cky_parser_close.argtypes = [ptr]
    lib.cky_parser_close.restype = None
    return lib


_lib = _load()


def _error():
    return CkyError(_lib.cky_error_message().decode("utf-8", "replace"))


def _encode(text):
    """UTF-8 bytes for the library (a NUL would end the C string: it becomes U+FFFD)."""
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    return text.replace("\0", "\ufffd").encode("utf-8", "surrogatepass")


def _take_string(ptr):
    """The library's malloc'ed string as str, freed."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        _lib.cky_string_free(ptr)


def tokenize(text):
    """The Penn Treebank tokens of one sentence of raw text (as `cky parse --tokenize`)."""
    out = ctypes.c_void_p()
    if _lib.cky_tokenize(_encode(text), ctypes.byref(out)):
        raise _error()
    s = _take_string(out.value)
    return s.split(" ") if s else []


def _tokens(items, what="token"):
    """A list of tokens (or tags: what), each a non-empty str without white space."""
    if isinstance(items, (str, bytes, bytearray)) or not hasattr(items, "__iter__"):
        raise TypeError(f"expected a list of str ({what}s), not {type(items).__name__}")
    items = list(items)
    for t in items:
        if not isinstance(t, str):
            raise TypeError(f"a {what} must be a str, not {type(t).__name__}")
        if not t or t != "".join(t.split()):
            raise ValueError(f"a {what} must be a non-empty str without white space: {t!r}")
    return items


def _line(sentence):
    """A sentence as one line for the library: raw text is tokenized, tokens are joined."""
    if isinstance(sentence, str):
        return " ".join(tokenize(sentence)).encode("utf-8")
    if isinstance(sentence, (bytes, bytearray)) or not hasattr(sentence, "__iter__"):
        raise TypeError("a sentence is a str (raw text) or a list of str (tokens), not "
                        f"{type(sentence).__name__}")
    return _encode(" ".join(_tokens(sentence)))


def _tagged_lines(sentence, tags):
    """A sentence of tokens and its gold tags, one per token, as the library's two lines."""
    if isinstance(sentence, str):
        raise TypeError("with tags, a sentence is a list of str (tokens), not raw text: the "
                        "tags are those of given tokens (as `cky parse --gold-pos`, which does "
                        "not tokenize)")
    tokens, tags = _tokens(sentence), _tokens(tags, "tag")
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} token{'s' if len(tokens) != 1 else ''} but "
                         f"{len(tags)} tag{'s' if len(tags) != 1 else ''}: a tag per token")
    return _encode(" ".join(tokens)), _encode(" ".join(tags))


def _as_tree(s):
    try:
        from nltk import Tree
    except ImportError as e:
        raise ImportError("as_tree=True needs NLTK: `pip install nltk` (in a virtual "
                          "environment, its own pip), or for the system's Python "
                          "`apt-get install python3-nltk` (Debian)") from e
    return None if s == NO_TREE else Tree.fromstring(s)


class Parser:
    """A parser for one grammar.

    grammar: a Berkeley .gr file, or the prefix of a text export (PREFIX.grammar[.gz], ...).
    engine: "auto" (the GPU where one is usable, else the CPU), "gpu", "cpu" or "ref".
    decoder: "maxrule" (the tree that maximizes the product of its rules' posteriors, the
    Berkeley parser's default: exact with a native .gr grammar, approximate with a text
    export), "viterbi" (the best derivation), or "auto": maxrule with a native .gr grammar,
    viterbi with a text export. Every engine runs both.
    prune: "berkeley" (the Berkeley parser's coarse-to-fine cascade, then the decoder's pass
    within what it kept: the jar's default output), "accurate" (its -accurate thresholds),
    "none" (the exhaustive passes, exact), or "auto": berkeley with a native .gr grammar,
    none with a text export; p.prune says which one runs.
    threads: CPU threads (0: one per core); max_length: longest sentence parsed, in words;
    device: the CUDA device of the gpu engine; strict: raise ParseError for a sentence
    without a tree instead of returning "(())".
    progress: a function called with a Progress for each report of the open's long steps
    (reading the grammar, compiling its kernels), from the library's threads; None (the
    default) logs them to the "cky" logger. An exception it raises is raised by Parser().
    """

    def __init__(self, grammar, engine="auto", decoder="auto", threads=0, max_length=200,
                 device=0, strict=False, progress=None, prune="auto"):
        self._h = None
        for name, v in (("threads", threads), ("max_length", max_length), ("device", device)):
            if not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be a whole number >= 0, not {v!r}")
        if max_length < 1:
            raise ValueError("max_length must be at least 1")
        if progress is not None and not callable(progress):
            raise TypeError(f"progress must be a function or None, not {progress!r}")
        report, failed = progress or _log_progress, []
        began = {}

        def on_progress(ctx, stage, state, done, total, cached):
            try:
                stage, now = stage.decode(), time.monotonic()
                if state == 0:
                    began[stage] = now
                seconds = now - began.get(stage, now)
                report(Progress(stage, _STATES[state], done, total, cached, seconds))
            except BaseException as e:  # raised below, after the library call
                failed.append(e)

        callback = _PROGRESS_FN(on_progress)
        h = _lib.cky_parser_open_prune(os.fsencode(grammar), _encode(engine), _encode(decoder),
                                       _encode(prune), threads, max_length, device, callback,
                                       None)
        if not h:
            raise _error()
        if failed:
            _lib.cky_parser_close(h)
            raise failed[0]
        self._h = h
        self.engine = _lib.cky_parser_engine(h).decode()
        self.decoder = _lib.cky_parser_decoder(h).decode()
        self.prune = _lib.cky_parser_prune(h).decode()
        self.strict = strict

    def _check(self):
        if not self._h:
            raise CkyError("the parser is closed")

    def _parse_lines(self, lines, scores=False, tags=None):
        """(outcome, tree string, why there is none) of each line, in order; with scores,
        (tree string, Scores) in the tree's place; tags: the gold tag line of each line
        (why: also the note on a tree the tags did not give)."""
        self._check()
        n = len(lines)
        c_lines = (ctypes.c_char_p * n)(*lines)
        trees = (ctypes.c_void_p * n)()
        outcomes = (ctypes.c_int * n)()
        messages = (ctypes.c_void_p * n)()
        c_tags = None if tags is None else (ctypes.c_char_p * n)(*tags)
        if scores:
            sc = (ctypes.c_double * (n * _NSCORE))()
            if tags is None:
                rc = _lib.cky_parser_parse_scores(self._h, c_lines, n, 0, trees, sc, outcomes,
                                                  messages)
            else:
                rc = _lib.cky_parser_parse_tagged_scores(self._h, c_lines, c_tags, n, trees,
                                                         sc, outcomes, messages)
        elif tags is None:
            rc = _lib.cky_parser_parse(self._h, c_lines, n, 0, trees, outcomes, messages)
        else:
            rc = _lib.cky_parser_parse_tagged(self._h, c_lines, c_tags, n, trees, outcomes,
                                              messages)
        if rc:
            raise _error()
        out = []
        for k in range(n):
            tree = _take_string(trees[k])
            if scores:
                tree = (tree, Scores(*sc[k * _NSCORE:(k + 1) * _NSCORE]))
            out.append((outcomes[k], tree, _take_string(messages[k])))
        return out

    def _parse_lines_kbest(self, lines, k, tags=None):
        """(outcome, [(tree string, max-rule score), ...], why there is none) of each
        line, in order: its k-best list (tags: as _parse_lines)."""
        self._check()
        n = len(lines)
        c_lines = (ctypes.c_char_p * n)(*lines)
        trees = (ctypes.c_void_p * (n * k))()
        scores = (ctypes.c_double * (n * k))()
        counts = (ctypes.c_int * n)()
        outcomes = (ctypes.c_int * n)()
        messages = (ctypes.c_void_p * n)()
        if tags is None:
            rc = _lib.cky_parser_parse_kbest(self._h, c_lines, n, 0, k, trees, scores, counts,
                                             outcomes, messages)
        else:
            rc = _lib.cky_parser_parse_tagged_kbest(self._h, c_lines,
                                                    (ctypes.c_char_p * n)(*tags), n, k, trees,
                                                    scores, counts, outcomes, messages)
        if rc:
            raise _error()
        out = []
        for i in range(n):
            lst = [(_take_string(trees[i * k + j]), scores[i * k + j])
                   for j in range(counts[i])]
            out.append((outcomes[i], lst, _take_string(messages[i])))
        return out

    def _result(self, result, as_tree, where, kbest=None, scores=False):
        outcome, tree, why = result
        if outcome == _FAILED:
            raise CkyError(where + why)
        if self.strict and outcome != _OK:
            raise ParseError(where + why)
        if outcome == _OK and why:  # a tree its gold tags did not give (parsed without them)
            _log.warning("%s%s", where, why)
        if kbest is not None:
            return [(_as_tree(t) if as_tree else t, score) for t, score in tree]
        if scores:
            return (_as_tree(tree[0]) if as_tree else tree[0], tree[1])
        return _as_tree(tree) if as_tree else tree

    @staticmethod
    def _check_kbest(kbest, scores):
        if kbest is not None and (not isinstance(kbest, int) or isinstance(kbest, bool) or
                                  kbest < 1):
            raise ValueError(f"kbest must be a whole number >= 1 or None, not {kbest!r}")
        if kbest is not None and scores:
            raise ValueError("kbest and scores do not go together: a k-best list gives each "
                             "tree's max-rule score")

    def _lines(self, lines, kbest, scores=False, tags=None):
        return self._parse_lines(lines, scores, tags) if kbest is None else \
            self._parse_lines_kbest(lines, kbest, tags)

    def parse(self, sentence, as_tree=False, kbest=None, scores=False, tags=None):
        """The tree of one sentence: a str of raw text, or a list of tokens.

        tags=[...]: the sentence's gold part-of-speech tags, one per token (the sentence a
        list of tokens, not raw text; ValueError when the counts differ), as `cky parse
        --gold-pos` (the Berkeley parser's -useGoldPOS): each tag is taken up to its first
        "-" (NN-HLN is NN; -LRB- is the empty tag, which no grammar has), each token's
        lexicon gives a score to its tag alone, and where the tags give no tree the sentence
        is parsed again without them, as the jar does, with a warning on the "cky" logger.
        They need pruning (prune="berkeley" or "accurate": CkyError with prune="none"); they
        go with kbest and with scores.

        kbest=K: instead a list of up to K (tree, max-rule score) pairs, best first: the
        Berkeley parser's -kbest list (max-rule decoder; the pruned decoder on the ref or
        cpu engine, or prune="none" on ref; elsewhere CkyError names kbest and the engine).
        A sentence without a tree gives [] (ParseError with strict=True).

        scores=True: instead (tree, Scores), the scores the Berkeley parser prints beside
        the tree (Scores: model_score, sentence_likelihood, tree_likelihood, confidence,
        as `cky parse --model-score` and the others give them; -inf without a tree; the
        tree likelihood and confidence need pruning: nan with prune="none")."""
        self._check_kbest(kbest, scores)
        if tags is None:
            lines, tag_lines = [_line(sentence)], None
        else:
            line, tag_line = _tagged_lines(sentence, tags)
            lines, tag_lines = [line], [tag_line]
        return self._result(self._lines(lines, kbest, scores, tag_lines)[0], as_tree, "",
                            kbest, scores)

    def parse_many(self, sentences, batch_size=None, as_tree=False, kbest=None,
                   scores=False, tags=None):
        """Yield the trees of an iterable of sentences (raw str or token lists) in order,
        handing the library batch_size sentences at a time (default: as `cky parse`). An
        error is raised at the sentence it concerns, after the trees before it. kbest=K:
        each sentence's k-best list, scores=True: each (tree, Scores), tags=an iterable of
        tag lists, one per sentence (token lists then): each parsed with its gold tags, as
        parse gives them (ValueError where the sentences and tag lists differ in number)."""
        self._check()
        self._check_kbest(kbest, scores)
        size = _lib.cky_parser_batch_size(self._h) if batch_size is None else batch_size
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, not {batch_size!r}")
        if tags is not None and (isinstance(tags, (str, bytes)) or
                                 not hasattr(tags, "__iter__")):
            raise TypeError(f"tags must be an iterable of tag lists, not {type(tags).__name__}")
        items, done = self._items(sentences, tags), 0
        while True:
            batch = list(itertools.islice(items, size))
            if not batch:
                break
            tag_lines = None if tags is None else [t for _, t in batch]
            for result in self._lines([line for line, _ in batch], kbest, scores, tag_lines):
                done += 1
                yield self._result(result, as_tree, f"sentence {done}: ", kbest, scores)

    @staticmethod
    def _items(sentences, tags):
        """(line, tag line) of each sentence (tag line None without tags), in order;
        ValueError (naming the sentence) where the sentences and the tag lists differ in
        number, or a sentence and its tags in length."""
        if tags is None:
            for sentence in sentences:
                yield _line(sentence), None
            return
        end = object()
        for k, (sentence, t) in enumerate(itertools.zip_longest(sentences, tags,
                                                                 fillvalue=end)):
            if sentence is end or t is end:
                more = ("tag lists", "sentences") if sentence is end else ("sentences",
                                                                           "tag lists")
                raise ValueError(f"sentence {k + 1}: more {more[0]} than {more[1]}: a tag list "
                                 "per sentence")
            try:
                yield _tagged_lines(sentence, t)
            except (TypeError, ValueError) as e:
                raise type(e)(f"sentence {k + 1}: {e}") from None

    def close(self):
        """Release the parser and its grammar (also done when it is garbage collected)."""
        if self._h:
            _lib.cky_parser_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None and getattr(self, "_h", None):
            self.close()

    def __repr__(self):
        return (f"cky.Parser(engine={self.engine!r}, decoder={self.decoder!r}, "
                f"prune={self.prune!r})")


from .client import Client, ServiceError  # noqa: E402 (needs the names above)
