"""A client of `cky serve` (docs/serve.md), standard library only (urllib).

    import cky
    c = cky.Client("http://127.0.0.1:9000")
    c.parse("The company said it expects full vindication.")   # one tree, as Parser.parse
    for tree in c.parse_many(sentences): ...                    # in order, in requests
    c.annotate("One sentence.\\nAnother one.")                  # CoreNLP's POST /, as JSON

Trees and failures are as with cky.Parser: "(())" (None as a tree) for a sentence without a
tree, or ParseError with strict=True; a refused request raises ServiceError with the
service's message and HTTP status. A 503 (queue full, shutting down) is tried again after
its Retry-After, `retries` times.
"""
import json
import time
import urllib.error
import urllib.parse
import urllib.request

from . import NO_TREE, CkyError, ParseError, _as_tree


class ServiceError(CkyError):
    """The service refused a request: `status` is the HTTP status, the message its reason."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class Client:
    """A client of the service at `url`. token: the service's --token-file token (sent as
    "Authorization: Bearer TOKEN"); timeout: seconds per request; retries: how many times a
    503 is tried again; strict: raise ParseError for a sentence without a tree."""

    def __init__(self, url="http://127.0.0.1:9000", token=None, timeout=300, retries=3,
                 strict=False):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.strict = strict

    def _call(self, path, body=None, content_type="application/json", retry=True):
        """The reply body (bytes) of a GET (body None) or POST to path."""
        headers = {"Content-Type": content_type} if body is not None else {}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        retries = self.retries if retry else 0
        for attempt in range(retries + 1):
            req = urllib.request.Request(self.url + path, data=body, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    return r.read()
            except urllib.error.HTTPError as e:
                text = e.read().decode("utf-8", "replace")
                if e.code == 503 and attempt < retries:
                    time.sleep(float(e.headers.get("Retry-After", "1") or 1))
                    continue
                try:
                    message = json.loads(text)["error"]
                except (ValueError, KeyError, TypeError):
                    message = text
                raise ServiceError(f"{self.url}{path}: {e.code}: {message}", e.code) from None
            except urllib.error.URLError as e:
                raise CkyError(f"{self.url}{path}: {e.reason}") from None
        raise AssertionError("not reached")

    def _json(self, path, body=None, content_type="application/json", retry=True):
        return json.loads(self._call(path, body, content_type, retry).decode("utf-8"))

    def request(self, sentences, tokenized=False, scores=True, kbest=None):
        """The whole reply of POST /parse for a list of sentences (str: raw text, or
        tokenized text with tokenized=True; list of str: tokens); kbest=K asks for each
        sentence's k-best list (its "kbest" entries)."""
        req = {"sentences": list(sentences), "tokenized": tokenized, "scores": scores}
        if kbest is not None:
            req["kbest"] = kbest
        return self._json("/parse", json.dumps(req).encode("utf-8"))

    def annotate(self, text, output_format="json"):
        """CoreNLP's request: POST / with raw text, one sentence per line. The reply as a
        dict (output_format "json") or its text, one tree per line ("text")."""
        props = urllib.parse.quote(json.dumps({"outputFormat": output_format}))
        reply = self._call("/?properties=" + props, text.encode("utf-8"),
                           "text/plain; charset=utf-8")
        text = reply.decode("utf-8")
        return json.loads(text) if output_format == "json" else text

    def _tree(self, s, as_tree, where):
        if self.strict and s["parse"] == NO_TREE:
            raise ParseError(where + s.get("error", "no tree"))
        return _as_tree(s["parse"]) if as_tree else s["parse"]

    def parse(self, sentence, as_tree=False, kbest=None):
        """The tree of one sentence: a str of raw text, or a list of tokens. kbest=K: its
        k-best list instead, (tree, max-rule score) pairs, as cky.Parser.parse gives it."""
        if kbest is None:
            return self._tree(self.request([sentence], scores=False)["sentences"][0],
                              as_tree, "")
        s = self.request([sentence], scores=False, kbest=kbest)["sentences"][0]
        self._tree(s, False, "")  # strict: ParseError without a tree
        return [(_as_tree(e["parse"]) if as_tree else e["parse"], e["score"])
                for e in s.get("kbest", [])]

    def parse_many(self, sentences, batch_size=100, as_tree=False):
        """Yield the trees of an iterable of sentences (raw str or token lists) in order,
        batch_size sentences per request."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, not {batch_size!r}")
        batch, done = [], 0

        def flush():
            nonlocal done
            for s in self.request(batch, scores=False)["sentences"]:
                done += 1
                yield self._tree(s, as_tree, f"sentence {done}: ")

        for sentence in sentences:
            batch.append(sentence if isinstance(sentence, str) else list(sentence))
            if len(batch) == batch_size:
                yield from flush()
                batch = []
        if batch:
            yield from flush()

    def live(self):
        return self._json("/live")["live"]

    def ready(self):
        """True when the service takes requests (False while it shuts down)."""
        try:
            return self._json("/ready", retry=False)["ready"]
        except ServiceError as e:
            if e.status == 503:
                return False
            raise

    def stats(self):
        return self._json("/stats")

    def __repr__(self):
        return f"cky.Client({self.url!r})"
