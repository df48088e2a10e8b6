"""Privacy filter: applied to every text before it reaches the disk (memories, state, handoffs, logs, outlines).

`<private>...</private>` is removed with everything inside it, nested tags included (an unclosed one hides
its paragraph), and recognisable secrets are replaced by `[REDACTED:<kind>]`: provider and bot tokens by
their shape, private keys (PEM, PGP, PuTTY, JWK, age, bare DER), password hashes, credential files entry by
entry, URL and CLI passwords, auth headers, and any value standing where a secret stands: after a name that
says password, secret, token, key or credential (in an assignment, a typed constant, `#define`, a call
pair, a name/value field, a nested default; entropy decides where the name alone is weak). Escapes in code
strings are boundaries. Every pattern runs in time linear in its input (docs/security.md).
"""

from __future__ import annotations

from memory.base.needles import Needles, PieceMemo

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Iterator

# re.I, re.M, re.S: `re` is imported only when a pattern is first compiled (importing it costs a hook
# process a few ms, and most texts hold no trigger; a test checks the values).
_I, _M, _S = 2, 8, 16
_TAG_SOURCE = r"<\s*(/?)\s*private\b[^<>]*>"  # [^<>]: a tag never spans another tag
_BLANK_LINE = r"\n[ \t\r]*\n"


def strip_private(text: str) -> str:
    """The text without its `<private>` blocks (nested ones too). A tag never closed hides its paragraph, up
    to the next blank line, and the text after that is read afresh (up to _PARAGRAPHS times; after that it
    hides the rest: the bound keeps the cost linear in the text)."""
    if "private" not in text.lower():
        return text
    out: list[str] = []
    start = 0
    for _ in range(_PARAGRAPHS):
        depth = 0
        pos = opened = start
        for m in _pattern(_TAG_SOURCE, _I).finditer(text, start):
            if depth == 0:
                out.append(text[pos : m.start()])
                opened = m.end()
            if m.group(1) == "/":
                depth = max(0, depth - 1)  # a stray closing tag at depth 0 is dropped
            else:
                depth += 1
            pos = m.end()
        if depth == 0:
            out.append(text[pos:])
            break
        blank = _pattern(_BLANK_LINE, 0).search(text, opened)
        if blank is None:
            break
        start = blank.start()
    return "".join(out)


_PARAGRAPHS = 64


# --- judging names and values ------------------------------------------------------------------------
# A name is split into words (snake, kebab, dotted, camelCase). Its last word (after suffixes such as _PROD
# or _B64) must say secret: DB_PASSWORD, PGPASSWORD, clientSecret, x-api-key, _authToken; not max_tokens,
# secretName, token_type, test_password_hashing. Tier 3 takes any real value, 2 a non-word, 1 only a
# random-looking one (the entropy signal): `sort_key = "created_at"` stays, `AccountKey=...==` goes.
_STRONG_WORDS = {"password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "secret", "secrets",
                 "apikey", "privatekey", "secretkey", "accesskey", "authkey", "masterkey", "signingkey",
                 "encryptionkey", "accountkey", "clientsecret"}
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "apikey", "privatekey", "secretkey", "accesskey")
_MEDIUM_WORDS = {"token", "credential", "credentials", "creds", "cookie"}
_WEAK_WORDS = {"key", "auth", "sig", "signature"}
_QUALIFIERS = {"api", "access", "secret", "private", "auth", "session", "refresh", "bearer", "master", "signing",
               "encryption", "account", "shared", "app", "bot", "webhook", "client", "service", "admin", "deploy",
               "personal", "license", "consumer", "oauth", "jwt", "hmac", "sas", "storage", "subscription",
               "csrf", "xsrf", "identity", "registry", "npm", "pypi", "github", "gitlab", "slack", "stripe"}
# Fewer for a key: STORAGE_KEY = 'todos' (localStorage) and SESSION_KEY name things; their real keys are
# random-looking and caught by entropy anyway.
_KEY_QUALIFIERS = {"api", "access", "secret", "private", "auth", "master", "signing", "encryption", "account",
                   "shared", "client", "service", "license", "consumer", "hmac", "sas", "jwt", "oauth", "personal",
                   "deploy", "admin"}
_SUFFIXES = {"prod", "production", "dev", "development", "staging", "stage", "live", "local", "qa", "uat", "test",
             "b64", "base64", "value", "raw", "plain", "plaintext", "str", "string", "hex", "enc", "encoded",
             "encrypted", "old", "new", "current", "previous", "primary", "secondary", "hash", "data", "base",
             "v1", "v2", "v3", "1", "2", "3"}
_PLACEHOLDERS = {"null", "none", "nil", "true", "false", "undefined", "yes", "no", "on", "off", "required",
                 "optional", "str", "string", "bytes", "int", "number", "bool", "boolean", "any", "secretstr",
                 "secret", "password", "token", "redacted", "hidden", "masked", "example", "placeholder", "todo",
                 "tbd", "see", "the", "not", "n/a", "same", "empty", "blank", "unset", "include", "omit",
                 "same-origin", "env", "default", "text", "input", "field", "object", "dict", "list", "char",
                 "varchar", "uuid", "date", "self", "this", "is", "was", "a", "an", "it", "your", "my",
                 "continue", "break", "return", "pass", "raise", "else", "yield", "value", "content"}
_REF_HEADS = ("self.", "this.", "cls.", "os.", "sys.", "env.", "settings.", "config.", "conf.", "cfg.", "process.",
              "request.", "req.", "args.", "opts.", "options.", "params.", "ctx.", "kwargs.", "secrets.", "vault.",
              "props.", "values.", "import.meta", "context.", "app.", "st.")


_WORD_PARTS = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+"
# Atomic words, a possessive repeat: one way to read a run ("abc" was "a"+"bc", "ab"+"c", ... with the separator
# optional: 2^n ways to fail on "token=abcdefghijklmnopqrstuvwxy1", 2.2 CPU-s at 25 letters).
_WORD = r"(?>[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]++)"
# Leading underscores and a last capital are a type's (`_ProviderT`).
_JOINED_WORDS = rf"_*+{_WORD}(?:[ _.\-/:]?{_WORD})*+[A-Z]?"
_DOTTED_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"
_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_PORT = r"\d{1,5}(?:/|$)"


def _words(name: str) -> list[str]:
    parts = _pattern(_WORD_PARTS, 0).findall(name)
    return [p.lower() for p in parts]


def name_tier(name: str) -> int:
    """How strongly a name says its value is a secret: 0 not at all, 1 weak, 2 medium, 3 strong."""
    words = _words(name)
    while words and (words[-1] in _SUFFIXES or words[-1].isdigit()):
        words.pop()
    if not words or words[0] == "no":
        return 0
    last = words[-1]
    before = words[:-1]
    if last in _STRONG_WORDS or last.endswith(_STRONG_ENDINGS):
        return 3
    if last in _MEDIUM_WORDS or (last.endswith("token") and len(last) > 5):
        return 3 if any(w in _QUALIFIERS or w in _STRONG_WORDS for w in before) else 2
    if last in _WEAK_WORDS:  # API_KEY, AccountKey, private_key: strong; sort_key, key: only by entropy
        return 3 if any(w in _KEY_QUALIFIERS or w in _STRONG_WORDS for w in before) else 1
    return 0


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    import math

    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _plain_words(value: str) -> bool:
    """Words joined by separators ("created_at", "Content-Type", "users.name"): an identifier, not a secret."""
    # camelCase joins too ("protocolVersion", "subscriptionId"); digits make it a non-word.
    return bool(_pattern(_JOINED_WORDS, 0).fullmatch(value))


def _basic_pair(value: str) -> bool:
    """Base64 of `user:password` (Basic auth, docker's `auth`, `.npmrc`'s `_auth`)."""
    decoded = _b64decode(value)
    return decoded is not None and 0 < decoded.find(":") < len(decoded) - 1 and " " not in decoded


def random_looking(value: str) -> bool:
    """The entropy signal: long, no spaces, mixed character classes, high entropy."""
    if len(value) < 16 or " " in value or _plain_words(value):
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    return classes >= 2 and entropy(value) >= 3.0


def _random_tail(value: str) -> bool:
    """A token's last characters are random: the entropy signal, and letters of both cases (not camelCase
    words: random_looking) or digits scattered in three runs or more (hex, base36); `selection_2024` and
    `re_compile_pattern_v2` are identifiers."""
    if not random_looking(value):
        return False
    if any(c.isupper() for c in value) and any(c.islower() for c in value):
        return True
    runs = sum(c.isdigit() and not p.isdigit() for p, c in zip(" " + value, value, strict=False))
    return runs >= 3


def placeholder(value: str) -> bool:
    """Not a secret value: empty, masked, a reference to a variable, a template, a type, a plain keyword."""
    v = value.strip()
    low = v.lower()
    if not v or low in _PLACEHOLDERS or "redacted" in low or v[0] in "$%{<@#&*" or v.endswith(("()", "...")):
        return True
    if len(set(v)) <= 2 or set(v) <= set("*xX.•-_ "):
        return True  # ****, xxxx, ...
    if low.startswith(_REF_HEADS) or "{{" in v or "${" in v or low.startswith(("optional[", "str |", "none |")):
        return True
    return bool(name_tier(v) and _pattern(_DOTTED_NAME, 0).fullmatch(v))  # password = new_password


def value_is_secret(name: str, value: str) -> bool:
    tier = name_tier(name)
    if not tier or placeholder(value):
        return False
    if tier == 3:
        if _words(name)[-1:] in (["pwd"], ["pw"]) and value[:1] in "/~.":
            return False  # PWD=/home/me is the working directory
        return len(value) >= 3
    if tier == 2:
        return len(value) >= 8 and not _plain_words(value) or random_looking(value) or _basic_pair(value)
    return random_looking(value) or _basic_pair(value)


def _b64decode(value: str) -> str | None:
    import binascii

    compact = "".join(value.split()).replace("-", "+").replace("_", "/")
    compact += "=" * (-len(compact.rstrip("=")) % 4)
    try:
        raw = binascii.a2b_base64(compact.rstrip("=") + "=" * (-len(compact.rstrip("=")) % 4))
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable >= 0.95 * len(text) else None


# --- the rules ---------------------------------------------------------------------------------------
# (kind, trigger substrings (lower case), pattern, group to redact or 0 for the whole match, flags, check).
# Patterns are compiled on first use, and only run when a trigger occurs in the text: compiling all of
# them costs a hook process several ms, and most texts contain none of the triggers. `check(match)` gets
# the last word: False keeps the match as it is.
_TOK = r"[A-Za-z0-9_\-]"
# A token wrapped over lines (a terminal or mail at 76-80 columns): continuation lines that hold nothing
# but token characters.
_CONT = r"(?:[ \t]*\\?\r?\n[ \t>#*]*[A-Za-z0-9_\-+/=.]{6,}(?=[ \t]*\\?(?:\r?\n|\Z)|[`'\"…]))*"
_VALUE_STOP = r"\s'\"`,;&()\[\]{}<>|"
_VALUE_END = r"\s'\"`,;&)\]}>|"  # not ( [ { <: `get_token()` and `environ["X"]` are code, not values
_Check = "Callable[[re.Match[str]], bool] | None"


def _at_cut(m: re.Match[str]) -> bool:
    """The match ends where a capture may have cut the text (its end, a closing backtick or quote, "…")."""
    return m.end() == len(m.string) or m.string[m.end()] in "`'\"…"


def _long(n: int, group: int = 0) -> Callable[[re.Match[str]], bool]:
    """The match (whitespace removed) holds at least n characters: a wrapped token is judged whole. Where
    the text was cut (hooks keep the first few hundred characters of a command), half of it will do."""
    def check(m: re.Match[str]) -> bool:
        size = len("".join(m.group(group).split()))
        return size >= n or (size >= max(10, n // 2) and _at_cut(m))

    return check


def _named(m: re.Match[str]) -> bool:
    return value_is_secret(m.group("name"), m.group("value"))


def _named_pair(m: re.Match[str]) -> bool:
    """Two quoted strings are a weaker context than an assignment: below a strong name the value must look
    random (`res.append('Set-Cookie', 'fizz=buzz')` is a test's cookie)."""
    if name_tier(m.group("name")) >= 3:
        return _named(m)
    return value_is_secret(m.group("name"), m.group("value")) and random_looking(m.group("value"))


def _named_before(source: str) -> Callable[[re.Match[str]], bool]:
    """A check: the text just before the match ends in `source` (its group `name`), and the value is secret
    for that name."""
    def check(m: re.Match[str]) -> bool:
        before = _pattern(source, 0).search(m.string, max(0, m.start() - _BEFORE_KEY), m.start())
        return before is not None and value_is_secret(before.group("name"), m.group("value"))

    return check


def _real(m: re.Match[str]) -> bool:
    return not placeholder(m.group("value")) and len(m.group("value")) >= 3


def _sql(m: re.Match[str]) -> bool:
    """`IDENTIFIED BY 'x'` in a statement that makes a user or role, or with a secret-looking value; `a row
    identified by 'name'` in prose is not a password."""
    if not _real(m):
        return False
    if not m.group(0)[:10].lower().startswith("identified"):
        return True
    line = m.string[m.string.rfind("\n", 0, m.start()) + 1:m.start()].lower()
    statement = any(w in line for w in ("create ", "alter ", "grant ")) and any(
        w in line for w in ("user", "role", "login"))
    return statement or not _plain_words(m.group("value"))


def _not_port(m: re.Match[str]) -> bool:
    """`https://host:8080/a@b` is a port and a path, not a password."""
    pw = m.group("value")
    return bool(pw) and not _pattern(_PORT, 0).match(pw) and not placeholder(pw)


def _basic(m: re.Match[str]) -> bool:
    return _basic_pair(m.group("value"))


_SENTENCE_STOP = {"is", "was", "a", "an", "the", "to", "not", "in", "on", "at", "of", "for", "and", "or", "required",
                  "wrong", "incorrect", "invalid", "empty", "missing", "too", "stored", "set", "correct", "ok", "fine",
                  "expired", "hashed", "encrypted", "changed", "reset", "saved", "being", "still", "also", "now",
                  "used", "needed", "optional", "blank", "null", "none", "unknown", "same", "different", "weak",
                  "strong", "secure", "insecure", "long", "short", "hidden", "masked", "what", "that", "this", "it",
                  "protected", "visible", "valid", "sent", "shown", "generated", "rotated", "revoked", "leaked",
                  "known", "available", "here", "there", "below", "above", "safe", "good", "bad", "right", "only",
                  "just", "no", "never", "always", "from", "passed", "given", "case-sensitive", "stale",
                  "mandatory", "checked", "validated", "verified", "accepted", "rejected", "hunter",
                  "easy", "hard", "simple", "complex", "secret", "private", "public", "kept", "managed", "handled"}


def _sentence(m: re.Match[str]) -> bool:
    value = m.group("value")
    if value.lower().strip(".,;:!?") in _SENTENCE_STOP or placeholder(value.rstrip(".,;:!?")) or len(value) < 3:
        return False
    if m.group("owner") or m.group("q"):
        return True  # "my password is swordfish", "the password is `x`"
    shape = any(c.isdigit() for c in value) or not value.isalnum() or (value != value.lower() and value[1:] !=
                                                                      value[1:].lower())
    return shape or len(value) >= 10


def _prose(m: re.Match[str]) -> bool:
    """`Reset your password: click the link`: a lower-case word after a colon, more words after it."""
    value, rest = m.group("value"), m.string[m.end():m.end() + 2]
    return m.group("sep") == ":" and value.isalpha() and value.islower() and rest[:1] == " " and rest[1:].isalpha()


def _variable(m: re.Match[str]) -> bool:
    """`{_SUBSCRIPTION_KEY: rid}`, `f(token=tok)`: an identifier closing a bracket is code, not a value."""
    rest = m.string[m.end():m.end() + 1]
    return rest in (")", "}", "]") and bool(_pattern(_IDENTIFIER, 0).fullmatch(m.group("value")))


def _annotation(m: re.Match[str]) -> bool:
    """`auth_token: Final = os.environ[...]`: after a colon, a type that an `=` follows is no value."""
    if m.group("sep") != ":":
        return False
    rest = m.string[m.end():m.end() + 64].lstrip(" \t")
    return rest[:1] == "=" and rest[1:2] not in ("=", ">")


def _wrapped(m: re.Match[str]) -> bool:
    """A base64 run that decodes to text holding a secret."""
    decoded = _b64decode(m.group(0))
    return decoded is not None and len(decoded) >= 8 and _redact(decoded, depth=1)[1] != []


_PASSWORD_FLAG_CMDS = (
    # (triggers, source): mysql -pX, sshpass -p X, docker login -p X, redis-cli -a X, curl -u user:pass, ...
    (("mysql", "mariadb"), r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb|"
     r"mariadb-dump)\b[^\n|;&]{0,256}?[ \t]-p(?P<value>[^\s'\"-][^\s'\"]*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("sshpass",), r"\bsshpass\b[^\n|;&]{0,256}?[ \t]-p[ \t]*(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("login",), r"\b(?:docker|podman|buildah|skopeo|nerdctl|helm|oras|crane|regctl|az)\b[^\n|;&]{0,256}?\blogin\b"
     r"[^\n|;&]{0,256}?[ \t](?:-p|--password)(?:[ \t]+|=)(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("redis-cli",), r"\bredis-cli\b[^\n|;&]{0,256}?[ \t]-a[ \t]+(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("ldap",), r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)\b[^\n|;&]{0,256}?[ \t]-w[ \t]+"
     r"(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("sqlcmd", "bcp", "zip", "lftp"), r"\b(?:sqlcmd|bcp|zip|unzip|lftp)\b[^\n|;&]{0,256}?[ \t]-P[ \t]*"
     r"(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("mongo",), r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)\b"
     r"[^\n|;&]{0,256}?[ \t]-p[ \t]+(?P<value>[^\s'\"-]\S*|'[^'\n]*'|\"[^\"\n]*\")"),
    (("7z", "rar"), r"\b(?:7z|7za|rar|unrar)\b[^\n|;&]{0,256}?[ \t]-p(?P<value>[^\s'\"-]\S*)"),
    (("curl", "wget", "lftp"), r"\b(?:curl|wget|lftp)\b[^\n|;&]{0,256}?[ \t](?:-u|--user|--proxy-user|-U)[ \t=]*['\"]?"
     r"[^\s:'\"]+:(?P<value>[^\s'\"]+)"),
    (("smbclient",), r"\bsmbclient\b[^\n|;&]{0,256}?[ \t]-U[ \t]*['\"]?[^\s%'\"]+%(?P<value>[^\s'\"]+)"),
    (("sqlplus",), r"\bsqlplus\b[ \t]+['\"]?[^\s/'\"]+/(?P<value>[^\s@'\"]+)"),
    (("pass:",), r"[ \t]-(?:passin|passout|pass|kpass|password)[ \t]+pass:(?P<value>\S+)"),
    (("storepass", "keypass", "/p:"), r"[ \t](?:-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|"
     r"destkeypass)|/p:)[ \t]*(?P<value>[^\s'\"-]\S*)"),
    (("--password-stdin", "sudo", "--with-token", "passwd"),
     r"\b(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?P<q>['\"]?)(?P<value>[^\s'\"|]+)(?P=q)[ \t]*\|[^\n]*?"
     r"(?:--password-stdin|sudo[ \t]+-S|--with-token|\bchpasswd\b|\bpasswd\b)"),
)

_NAME = (r"(?P<name>[A-Za-z0-9_.\-]{0,40}?(?i:pass|pwd|pw|secret|token|key|credential|creds|auth|sig|cookie)"
         r"[A-Za-z0-9_.\-]{0,40})")
# "pass" only where it ends a name ("3 passed" must not cost a hook the import of re).
_NAME_TRIGGERS = ("passw", "passph", "passc", "pass=", "pass:", "pass\"", "pass'", "pass\\", "pass ", "pass\t",
                  "pass_", "pass.", "pass-", "pwd", "pw", "secret", "token", "key", "credential", "creds", "auth",
                  "sig", "cookie")

# "my password is X": the noun, one space, the verb (the triggers are these pairs, so prose and code that
# merely say "password" or " is" do not pay for the pattern).
_SENTENCE_TRIGGERS = tuple(f"{noun} {verb}" for noun in ("password", "passwd", "passphrase", "passcode", "pw",
                                                          "secret", "key", "token")
                           for verb in ("is", "was", "will be", "should be", "has been", "set to", "changed to"))
# --password X: the names that can reach tier 2 (not auth or sig alone: `pytest test_auth.py -q`).
_FLAG_TRIGGERS = ("passw", "passph", "passc", "pass=", "pass\"", "pass'", "pass ", "pass\t", "pwd", "pw", "secret",
                  "token", "credential", "creds", "cookie", "-key", "_key", "apikey", "accesskey", "secretkey",
                  "privatekey", "authkey", "masterkey", "accountkey", "signingkey", "encryptionkey")

_BASIC = r"\bBasic[ \t]+(?P<value>[A-Za-z0-9+/]{8,}={0,2})"
_BEARER = r"\b(?:bearer|token)[ \t]+(?P<value>[A-Za-z0-9._~+/\-]{20,}=*)"  # under IGNORECASE
_FLAG = (r"(?:^|(?<=[\s;&|(]))--?(?P<name>[A-Za-z0-9\-]{0,30}?(?i:pass|pwd|pw|secret|token|key|credential|creds|"
         r"cookie)[A-Za-z0-9\-]{0,30})[ \t]+(?P<q>['\"]?)(?P<value>[^\s'\"-][^\s'\"]*)(?P=q)")
# A type between the name and `=` (`TOKEN: &str =`, `apiKey: string =`, `apiKey string =`, `password As String =`).
_TYPED = (r"(?:[ \t]*:[ \t]*[&'A-Za-z_][A-Za-z0-9_.&'\[\], |<>]{0,40}?(?=[ \t]*=[^=>])"
          r"|[ \t]+(?:As[ \t]+)?[A-Za-z_][A-Za-z0-9_.\[\]]{0,30}(?=[ \t]*=[^=>]))?")
_ASSIGNED = (r"(?<![A-Za-z0-9_.\-])" + _NAME + r"\\?[\"']?\]?" + _TYPED +
             r"[ \t]*(?P<sep>=>|:=|\|\|=|\?\?=|[:=])[ \t]*"
             r"(?:(?:@|[rRbBuUfF]{1,2})?\\?(?P<q>[\"'`])(?P<qvalue>[^\n]*?)\\?(?P=q)"
             r"|\\?[\"'`]?(?P<value>[^" + _VALUE_STOP + r"]+)(?=[" + _VALUE_END + r"]|$))")
# Rules whose matches never span a line and need one of these words (lower case) in it: in a long text they
# run only over the lines that hold one (an outline of a C++ header holds `key` or `sig` somewhere, and the
# assignment rule tried at every offset of its 30 KB cost a cold Read hook ~3 ms). A line with one of the
# non-ASCII characters IGNORECASE takes for an ASCII letter (_CASE_TWINS: `ſ` for `s`, which `str.lower` does
# not give) is always searched.
# `define('DB_PASSWORD', 'x')`, `setdefault("SECRET_KEY", "x")`, `headers.put("X-Api-Key", "x")`: a quoted name,
# a comma, a quoted value without blanks (`_("password", "Your password")` is a label).
_CALL_PAIR = (r"(?P<q1>[\"'])" + _NAME + r"(?P=q1)[ \t]*,[ \t]*(?P<q>[\"'])(?P<value>[^\"'\s\\]{1,400})(?P=q)")
_NAME_WORDS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "sig", "cookie")
# What stands before a `value:`/`default =` key whose value is a named secret (the rule finds the key and
# reads back at most _BEFORE_KEY characters: a rule that tried the name at every offset cost ~25% of the
# filter on code). A field pair (`key="Password" value=`, `{"name": "DB_PASSWORD", "value":`, `- name:
# API_TOKEN` then `value:`), a nesting (`DBPassword:` then `Default:`, `variable "db_password" {` then
# `default =`).
_NAME_FIELD = (r"\b(?i:key|name|id)\\?[\"']?[ \t]*[:=][ \t]*\\?(?P<q1>[\"']?)" + _NAME + r"\\?(?P=q1)[ \t]*,?[ \t]*"
               r"(?:\r?\n[ \t]*)?(?:-[ \t]*)?\\?[\"']?\Z")
_NAME_NESTING = (r"(?<![A-Za-z0-9_.\-])[\"']?" + _NAME + r"[\"']?[ \t]*[:{][ \t]*(?:\r?\n[ \t]*)?"
                 r"(?:\{[ \t]*(?:\r?\n[ \t]*)?)?\Z")
_BEFORE_KEY = 160
_ENTRY = r"\b(?:key|name)[ \t]*=[ \t]*(?P<q1>[\"'])" + _NAME + r"(?P=q1)[^<>\n]{0,200}>(?P<value>[^<\n]{3,400})</"
_VALUE_KEY = r"\b(?i:value|content)\\?[\"']?[ \t]*[:=][ \t]*\\?(?P<q>[\"']?)(?P<value>[^\"'\s,}<>\\]{1,400})"
_DEFAULT_KEY = r"\b(?i:default)[ \t]*[:=][ \t]*(?P<q>[\"']?)(?P<value>[^\"'\s,}]{1,400})(?P=q)"
# #define API_KEY "x", (def api-key "x"), set -x TOKEN x, setx API_KEY x, setenv DB_PASSWORD x
_DEFINE_TRIGGERS = ("#define", "# define", "(def ", "set -", "setx ", "setenv ")
_DEFINE = (r"(?<![A-Za-z0-9_\-])(?:#[ \t]*define|\(def|set[ \t]+-[A-Za-z]+|setx|setenv)[ \t]+" + _NAME +
           r"[ \t]+(?P<q>[\"']?)(?P<value>[^\"'\s()]{1,400})(?P=q)")
_LINE_WORDS = {
    _BASIC: ("basic",),
    _BEARER: ("bearer", "token"),
    _FLAG: ("pass", "pw", "secret", "token", "key", "cred", "cookie"),
    _ASSIGNED: _NAME_WORDS,
    _CALL_PAIR: _NAME_WORDS,
    **{source: triggers for triggers, source in _PASSWORD_FLAG_CMDS},
    _VALUE_KEY: ("value", "content"),
    _DEFAULT_KEY: ("default",),
    _DEFINE: _DEFINE_TRIGGERS,
    _ENTRY: ("key", "name"),
}
_LINES_ABOVE = 2000  # characters: below this the whole text is searched (what the windows save is less)
_URL_PASSWORD = (r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,30}://[^\s:/@'\"<>`\[\]]*:(?P<value>[^\s'\"<>`]*)@"
                 r"(?=[^\s'\"<>`@]*(?:[\s'\"<>`]|$))")
_URL_CUT = r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,30}://[^\s:/@'\"<>`\[\]]+:(?P<value>[^\s'\"<>`/@]+)(?=$|[`'\"…])"
# Rules whose every match holds a literal within `reach` characters after its start (a URL's scheme and `://`;
# their `$` is the text's end, so lines will not do): in a long text they are tried only at the positions up
# to `reach` before each occurrence (~5 us an occurrence, where a search costs ~18 us a KB: a Ruby outline's
# two URL rules 0.09 -> 0.015 ms each), unless the literal is too frequent for that to pay (_ANCHOR_SPAN).
_URL_KEY_USER = r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,30}://(?P<value>[A-Za-z0-9_\-.~%]{16,200}):?@(?=[A-Za-z0-9\[])"
_ANCHORS = {_URL_PASSWORD: ("://", 31), _URL_CUT: ("://", 31), _URL_KEY_USER: ("://", 31)}
_ANCHOR_SPAN = 256  # characters of text per occurrence of the literal, at least
# What must come before (ending at the word, within _BEFORE_CHARS) and after the word (from its end) in a line
# these rules can match; a line whose words are not placed so is not searched. Assignment: the rest of the
# name (the word's own letters past those of _LINE_WORDS, `credential` past `cred`, and 40 more), a quote or
# bracket, the separator; an outline's `MapKey`, `signed`, `design` are not (a C++ header's outline: 51
# lines -> 7, the rule 0.55 -> 0.15 ms). A flag: a dash and the start of its name (`--db-`); `Basic` and
# `Bearer`: a blank (an LLVM outline's `BasicBlock` on 54 lines; a Ruby one's `token` 0.09 -> 0.02 ms).
_LINE_AROUND = {
    _ASSIGNED: (None, r"(?<=[A-Za-z])[A-Za-z0-9_.\-]{0,50}\\?[\"']?\]?(?:[ \t]+(?:As[ \t]+)?[A-Za-z_]"
                r"[A-Za-z0-9_.\[\]]{0,30})?[ \t]*[:=|?]"),
    _CALL_PAIR: (None, r"(?<=[A-Za-z])[A-Za-z0-9_.\-]{0,50}[\"'][ \t]*,"),
    # `value:`/`default =` with a value on the line (Go's `default:` of a switch is not searched)
    _VALUE_KEY: (None, r"(?<=[A-Za-z])\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[^\"'\s,}<>\\]"),
    _DEFAULT_KEY: (None, r"(?<=[A-Za-z])[ \t]*[:=][ \t]*[\"']?[^\"'\s,}]"),
    _FLAG: (r"-[A-Za-z0-9\-]{0,30}\Z", None),
    _BASIC: (None, r"[ \t]"),
    _BEARER: (None, r"[ \t]"),
}
_BEFORE_CHARS = 32  # the longest reach of a _LINE_AROUND pattern before the word (`--` and 30 characters)

# The first characters of a Discord bot id in base64 (ids 1x..., and 6x to 9x of older bots).
_DISCORD_TRIGGERS = ("mta", "mtc", "mte", "mtg", "mti", "mtk", "mtm", "mtq", "mtu", "mty", "nja", "njc", "nje", "njg",
                     "nji", "njk", "njm", "njq", "nju", "njy", "nza", "nzc", "nze", "nzg", "nzi", "nzk", "nzm", "nzq",
                     "nzu", "nzy", "oda", "odc", "ode", "odg", "odi", "odk", "odm", "odq", "odu", "ody", "ota", "otc",
                     "ote", "otg", "oti", "otk", "otm", "otq", "otu", "oty")


def _id_before_dot(text: str) -> bool:
    """Whether a Discord token may be in the text: its id part, 24 ASCII letters or digits at least, ends at a
    ".". Its triggers (_DISCORD_TRIGGERS) are common trigrams ("ode" of every "code", "encoding", "node"), and
    compiling and running its pattern for them cost a hook ~0.5-0.9 ms; a text with many dots runs it as before."""
    at = text.find(".", 24)
    for _ in range(64):
        if at < 0:
            return False
        run = text[at - 24:at]
        if run.isascii() and run.isalnum():
            return True
        at = text.find(".", at + 1)
    return True

_RULES: list[tuple] = [
    ("private-key", ("private key",),
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|(?=[\"'])|\Z)",
     0, _S, None),
    ("private-key", ("private-lines",), r"Private-Lines:[ \t]*\d+[ \t]*\r?\n(?:[ \t]*[A-Za-z0-9+/=]+\r?\n?)+", 0, 0,
     None),
    ("private-key", ("age-secret-key-",), r"AGE-SECRET-KEY-1[0-9A-Z]{20,}", 0, 0, None),
    ("private-key", ("\"kty\"", "'kty'"),  # a JWK's private parts
     r"(?P<q>[\"'])(?:d|p|q|dp|dq|qi|k)(?P=q)\s*:\s*(?P=q)(?P<value>[A-Za-z0-9_\-]{16,})(?P=q)", "value", 0, None),
    ("aws-access-key", ("akia", "asia", "agpa", "aida", "aroa", "anpa", "abia", "acca", "a3t"),
     r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b", 0, 0, None),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-" + _TOK + "*" + _CONT, 0, 0, _long(30)),
    ("openai-key", ("sk-",), r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?" + _TOK + "*" + _CONT, 0, 0,
     _long(23)),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]*" + _CONT, 0, 0, _long(24)),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "gloas-", "glft-", "glimt-",
                      "gr1348941"),
     r"\b(?:glpat|gldt|glrt|glptt|glcbt|glsoat|gloas|glft|glimt)-" + _TOK + "*" + _CONT + r"|\bGR1348941" + _TOK
     + "{20,}", 0, 0, _long(24)),
    ("slack-token", ("xox", "xapp-"), r"\b(?:xox[a-z]|xapp)-[A-Za-z0-9\-]*" + _CONT, 0, 0, _long(15)),
    ("slack-webhook", ("hooks.slack.com",), r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
     0, 0, None),
    ("webhook-url", ("/api/webhooks/", "webhook.office.com"),
     r"(?<=/api/webhooks/)\d+/[A-Za-z0-9_\-]+|(?<=webhook\.office\.com/)webhookb2/\S+", 0, 0, None),
    ("stripe-key", ("_live_", "_test_", "whsec_"), r"\b(?:(?:sk|rk|pk)_(?:live|test)_|whsec_)[A-Za-z0-9]*" + _CONT,
     0, 0, _long(20)),
    ("google-api-key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}", 0, 0, None),
    ("google-oauth", ("ya29.", "gocspx-", "1//0"),
     r"\bya29\.[0-9A-Za-z_\-]{20,}|\bGOCSPX-[A-Za-z0-9_\-]{20,}|(?<![\w/])1//0[A-Za-z0-9_\-]{30,}", 0, 0, None),
    ("azure-secret", ("q~",), r"\b[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", 0, 0, None),
    ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]*" + _CONT, 0, 0, _long(36)),
    ("pypi-token", ("pypi-",), r"\bpypi-[A-Za-z0-9_\-]*" + _CONT, 0, 0, _long(40)),
    ("huggingface-token", ("hf_",), r"\bhf_[A-Za-z0-9]*" + _CONT, 0, 0, _long(30)),
    ("sendgrid-key", ("sg.",), r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", 0, 0, None),
    # Provider tokens by their prefix; what follows must look random (`key-value-store` is no Mailgun key).
    ("saas-token", ("shpat_", "shpss_", "shpca_", "shppa_", "dop_v1_", "doo_v1_", "dor_v1_", "dapi", "lin_api_",
                    "lin_oauth_", "hvs.", "hvb.", "pul-", "dckr_pat_", "figd_", "glsa_", "glc_", "sbp_", "r8_", "gsk_",
                    "xai-", "nrak-", "pmak-", "atatt3", "atctt3", "atbb", "bkua_", "squ_", "sqp_", "nfp_", "rnd_",
                    "ntn_", "secret_", "dt0c01.", "akcp", "sk.eyj", "key-", "fo1_", "fm2_", "dp.pt.", "dp.st.",
                    "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit.", "lsv2_", "tvly-", "pat-na1-", "api_org_", "hrku-",
                    "pscale_", "sntrys_", "sntryu_", "phx_", "xkeysib-", "xsmtpsib-", "pcsk_", "cfpat-", "oy2",
                    "tskey-", "pplx-", "nvapi-", "rubygems_", "ops_eyj", "sq0atp-", "sq0csp-", "shippo_", "ezak",
                    "eztk", "eaa", "aaaaaaaaaaaaaaaaaaaaa", "fw_"),
     r"\b(?:shp(?:at|ss|ca|pa)_|do[por]_v1_|dapi|lin_(?:api|oauth)_|hv[sb]\.|pul-|dckr_pat_|figd_|glsa_|glc_|sbp_|"
     r"r8_|gsk_|xai-|NRAK-|PMAK-|AT[AC]TT3|ATBB|bkua_|squ_|sqp_|nfp_|rnd_|ntn_|secret_|dt0c01\.|AKCp|sk\.eyJ|key-|"
     r"fo1_|fm2_|dp\.(?:pt|st|ct|sa|scim|audit)\.|lsv2_(?:pt|sk)_|tvly-|pat-na1-|api_org_|HRKU-|"
     r"pscale_(?:tkn|pw|oauth)_|sntry[su]_|phx_|xkeysib-|xsmtpsib-|pcsk_|CFPAT-|oy2|tskey-[a-z]+-|pplx-|nvapi-|"
     r"rubygems_|ops_eyJ|sq0atp-|sq0csp-|shippo_(?:live|test)_|EZ[AT]K|EAA[A-Za-z0-9]|A{21}|fw_)"
     r"[A-Za-z0-9_\-.=%]*" + _CONT, 0, 0,
     lambda m: len("".join(m.group(0).split())) >= 26 and _random_tail("".join(m.group(0).split())[-24:])),
    # Resend: re_<8>_<24> (a literal start: `re` finds it fast in code full of `are_` and `pre_`)
    ("saas-token", ("re_",), r"re_(?<![A-Za-z0-9_]re_)[A-Za-z0-9]{8}_[A-Za-z0-9]{24}(?![A-Za-z0-9_])", 0, 0,
     lambda m: _random_tail(m.group(0)[-24:])),
    # Terraform Cloud: <14>.atlasv1.<60+>
    ("saas-token", ("atlasv1",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{40,}", 0, 0, None),
    ("twilio-key", ("twilio",), r"\b(?:AC|SK)?[0-9a-f]{32}\b", 0, 0, lambda m: "twilio" in m.string.lower()),
    ("telegram-token", (":aa",), r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{30,}", 0, 0, None),
    # A Discord bot token: the bot's id in base64 (its first characters: _DISCORD_TRIGGERS), a timestamp, an HMAC.
    ("discord-token", _DISCORD_TRIGGERS,
     r"[MNO](?<![A-Za-z0-9_\-.][MNO])[A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])",
     0, 0, None, _id_before_dot),
    # A private key as bare base64 DER (PKCS#1, PKCS#8, PKCS#12: a SEQUENCE whose first element is a small
    # INTEGER, the version; a certificate or a public key starts with a SEQUENCE), EC and Ed25519 keys.
    ("private-key", ("mii", "mhccaqee", "mc4caqaw"),
     r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA|MHcCAQEE|MC4CAQAwBQYDK2Vw)[A-Za-z0-9+/]{20,}={0,2}"
     r"(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{8,}={0,2})*", 0, 0, None),
    # .pgpass: host:port:database:user:password, one entry a line.
    ("pgpass-password", (":5432:", ":*:", ":5433:", ":6432:", ":26257:"),
     r"(?m)(?:^|(?<=\s))[^\s:#][^\s:]{0,252}:(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:(?P<value>\S{3,200})$",
     "value", 0, _real),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-.]*" + _CONT, 0, 0,
     lambda m: "".join(m.group(0).split()).count(".") >= 2 and len(m.group(0)) >= 30),
    ("password-hash", ("$2", "$5$", "$6$", "$y$", "$argon2", "$apr1$", "$1$", "{sha}", "{ssha}"),
     r"\$(?:2[abxy]?|5|6|y|argon2(?:id|i|d)|apr1|1)\$[^\s:'\"]{20,}|\{S?SHA\}[A-Za-z0-9+/]{20,}={0,2}", 0, 0, None),
    ("url-password", ("://",), _URL_PASSWORD, "value", 0, _not_port),
    # ... and a URL cut inside its password (`psql postgres://app:Sup3rS` where a title stops): no @ is left.
    ("url-password", ("://",), _URL_CUT, "value", 0, _not_port),
    ("url-password", ("sentry",), r"(?<=://)(?P<value>[0-9a-f]{32})@[\w.\-]*sentry", "value", 0, None),
    # ... a key as the URL's user (`https://<key>@host`, `https://<token>:@host`): only a random-looking one.
    ("url-password", ("://",), _URL_KEY_USER, "value", 0, lambda m: random_looking(m.group("value")), ("@",)),
    ("signed-url", ("sig=", "signature="),
     r"[?&](?:sig|signature|x-amz-signature|x-goog-signature)=(?P<value>[^\s&'\"#]{16,})", "value", _I, None),
    ("auth-header", ("authorization",),
     r"\b(?:proxy-)?authorization\\?[\"']?\s*[:=]\s*\\?[\"']?(?:(?:bearer|basic|token|digest|negotiate|ntlm|bot|"
     r"apikey|sso-key|aws4-hmac-sha256|otp|key)[ \t]+)?(?P<value>[^\s\"'\\][^\"'\n\\]*)", "value", _I, _real),
    ("cookie", ("cookie",), r"\b(?:set-)?cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?(?P<value>[^\"'\n\\]{8,})", "value", _I,
     lambda m: "=" in m.group("value")),
    ("bearer-token", ("bearer", "token"), _BEARER, "value",
     _I, None),
    ("basic-auth", ("basic",), _BASIC, "value", 0, _basic),
    ("sql-password", ("password '", 'password "', "identified by", "password('", 'password("'),
     r"\b(?:password|identified[ \t]+by)[ \t]*+\(?[ \t]*+(?P<q>['\"])(?P<value>[^'\"\n]+)(?P=q)", "value", _I, _sql),
    ("netrc-password", ("machine", "login"),
     r"\b(?:machine|login|account)[ \t\r\n]+\S+[ \t\r\n]+(?:password|passwd)[ \t]+(?P<value>\S+)", "value", 0,
     lambda m: not placeholder(m.group("value")), ("password", "passwd")),
    ("password-sentence", _SENTENCE_TRIGGERS,
     r"\b(?:(?P<owner>my|our|your|his|her|their)[ \t]+)?(?:(?:new|old|admin|root|wifi|wi-fi|db|database|default|"
     r"temporary|temp|current|account|user|login|master|api|vault|sudo)[ \t]+)?(?:password|passwd|passphrase|"
     r"passcode|pw|secret|key|token) (?:is now|is|was|will be|should be|has been (?:set|changed) to|set to|"
     r"changed to)[ \t]*+(?::[ \t]*+)?(?P<q>[\"'`]?)(?P<value>(?:[^\s\"'`.,;!?)\]]++|[.,;!?)\]]++"
     r"(?=[^\s\"'`.,;!?)\]]))++)(?P=q)(?=[.,;!?)\]\"'`]*+(?:\s|$))", "value", _I,
     _sentence),
    # CLI flags: --password X, --db-password=X, --token X (the name decides, as for assignments)
    ("cli-password", _FLAG_TRIGGERS, _FLAG, "value", _M, lambda m: name_tier(m.group("name")) >= 2 and _named(m),
     ("-",)),
    *[("cli-password", triggers, source, "value", 0, _real) for triggers, source in _PASSWORD_FLAG_CMDS],
    # NAME = value / "NAME": "value" / NAME => 'value' / <NAME>value</NAME> / key="NAME" value="value"
    ("assigned-secret", _NAME_TRIGGERS, _ASSIGNED, "either", _M, None, ("=", ":")),
    ("assigned-secret", ("</",), r"<(?P<name>[A-Za-z0-9_:.\-]+)>(?P<value>[^<\n]{3,})</(?P=name)>", "value", 0, _named),
    ("assigned-secret", _DEFINE_TRIGGERS, _DEFINE, "value", _M, _named),
    # A name and its value in two fields: <add key="Password" value="x"/>, <property name="password" value="x"/>,
    # {"name": "DB_PASSWORD", "value": "x"}, `- name: API_TOKEN` then `value: x` (Kubernetes env).
    ("assigned-secret", ("value", "content"), _VALUE_KEY, "value", 0, _named_before(_NAME_FIELD), _NAME_WORDS),
    ("assigned-secret", _NAME_TRIGGERS, _CALL_PAIR, "value", 0, _named_pair, (",",)),
    # <entry key="db.password">x</entry>
    ("assigned-secret", ("</",), _ENTRY, "value", 0, _named, _NAME_WORDS),
    # A name whose value is a nested default: CloudFormation `DBPassword:` then `Default: x`, Terraform
    # `variable "db_password" {` then `default = "x"`.
    ("assigned-secret", ("default",), _DEFAULT_KEY, "value", 0, _named_before(_NAME_NESTING), _NAME_WORDS),
    # A base64 run that decodes to a secret (echo ... | base64 -d, Kubernetes data, docker auths): the
    # triggers are the base64 forms of the common prefixes and names at each of the three alignments.
    ("base64", (
     "0b2tlb", "0tls0tqkvhsu", "4b3hil", "4b3hwl", "5wbv", "ag9va3muc2xhy2suy29t", "b5cgktqwdf", "bbu1nxt1je",
     "bhc3n3b3jk", "bnbtx", "bs0lb", "bssvzbveugs0vz", "bsxph", "bu0lb", "c2stchjvai", "c2styw50l",
     "c2tfbgl2zv", "c2vjcmv0", "cgfzc3dvcm", "chlwas1bz0", "dg9rzw", "dob1", "doc1", "docf", "dpdgh1yl9wyxrf",
     "dscgf0l", "eg94cc", "eg94yi", "fjem", "flsu", "ftsu", "hvb2tzlnnsywnrlmnvb", "hvegit", "hvehat",
     "ls0tls1crudjt", "nag9f", "nahbf", "nahnf", "naxrodwjfcgf0x", "nbhbhdc", "nfq1jfv", "nly3jld",
     "nrlwfudc", "nrlxbyb2ot", "nrx2xpdmvf", "ob29rcy5zbgfjay5jb2", "qqvntv09sr", "quklwqvrfietfw", "qul6y",
     "qutjq", "qvnjq", "qyxnzd29yz", "rps0vo", "rva2vu", "tls0tlujfr0lo", "trunsrv", "u0vdukvu", "ucg1f",
     "ueftu1dpuk", "ufjjvkfursblrv", "ugfzc3dvcm", "ut0tft", "ve9lru", "wexbplufnr", "wyxnzd29yz", "z2hvx",
     "z2hwx", "z2hzx", "z2l0ahvix3bhdf", "z2xwyxqt", "za19saxzlx", "zay1hbnqt", "zay1wcm9ql", "zzwnyzx", "eyj"),
     r"(?<![A-Za-z0-9+/_\-])(?:[A-Za-z0-9+/_\-]{40,}={0,2}[ \t]*\\?\r?\n[ \t]*)*[A-Za-z0-9+/_\-]{12,}={0,2}", 0, 0,
     _wrapped),
]
# (..., needs): when not empty, one of these substrings must occur too (cheap, before any regex); or a function
# of the text that is False only when the rule's pattern cannot match it.
_SECRETS: list[tuple[str, tuple[str, ...], str, int | str, int, Callable[[re.Match[str]], bool] | None,
                     tuple[str, ...] | Callable[[str], bool]]] = [r if len(r) == 7 else (*r, ()) for r in _RULES]
_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def _pattern(source: str, flags: int) -> re.Pattern[str]:
    pattern = _COMPILED.get((source, flags))
    if pattern is None:
        # Compiled already when memory/fastpath/_regex_table.py holds it (PATTERNS below): `re` parses a pattern in pure
        # Python, and a cold Read hook, which cleans its outline, does not import `re` at all otherwise.
        from memory.fastpath import recode

        pattern = _COMPILED[(source, flags)] = recode.compile(source, flags)
    return pattern


def _sub(text: str, kind: str, source: str, group: int | str, flags: int,
         check: Callable[[re.Match[str]], bool] | None, found: list[str], lower: str | None = None,
         present: set[str] | None = None) -> str:
    """`text` with the rule's matches redacted (their kinds added to `found`); `lower`: text.lower(), and
    `present`: the triggers it holds (_redact), if known."""
    def repl(m: re.Match[str]) -> str:
        g: int | str = group
        if g == "either":
            g = "qvalue" if m.group("qvalue") is not None else "value"
            if not value_is_secret(m.group("name"), m.group(g)) or (
                    g == "value" and (_prose(m) or _variable(m) or _annotation(m))):
                return m.group(0)
        elif check is not None and not check(m):
            return m.group(0)
        if m.group(g) is None or m.group(g).startswith("[REDACTED") or (g != 0 and not m.group(g)):
            return m.group(0)
        s, e = m.span(g)
        before = m.string[max(0, s - 40):s]
        if "[REDACTED:" in before and "]" not in before[before.rfind("[REDACTED:"):]:
            return m.group(0)  # inside an earlier marker (`[REDACTED:url-password]` holds a colon)
        found.append(kind)
        base = m.start()
        whole = m.group(0)
        return whole[: s - base] + f"[REDACTED:{kind}]" + whole[e - base :]

    pattern = _pattern(source, flags)
    matches = _matches(pattern, source, text, lower, present) if len(text) >= _LINES_ABOVE else None
    if matches is None:
        return pattern.sub(repl, text)
    from memory.fastpath import recode  # loaded already: _pattern compiles through it

    # The same matches as `sub` over the whole text (m.string is still the text: the checks that look around a
    # match see what they would), found only where they can be.
    return recode.sub_matches(text, matches, repl)  # type: ignore[return-value]


def _matches(pattern: re.Pattern[str], source: str, text: str, lower: str | None,
             present: set[str] | None = None) -> Iterable[re.Match[str]] | None:
    """`pattern.finditer(text)`'s matches looked for only where they can be (_LINE_WORDS, _ANCHORS), or None
    where the whole text is searched; `present`: the triggers the text holds, if known."""
    anchor = _ANCHORS.get(source)
    if anchor is not None and text.count(anchor[0]) * _ANCHOR_SPAN <= len(text):
        return _anchored(pattern, text, *anchor)
    words = _LINE_WORDS.get(source)
    if words is None:
        return None
    if present is not None:
        # A word that is a trigger itself and not among those the text holds is not in it: not looked for (a
        # C++ outline's `secret`, `token`, `auth`, `cookie`: a find over its 18 KB each, ~12 us).
        triggers = _RULES_OF or _index_rules()
        words = tuple(w for w in words if w in present or w not in triggers)
    spans = _lines_with(text, words, lower, _LINE_AROUND.get(source))
    return (m for start, end in spans for m in pattern.finditer(text, start, end))


def _anchored(pattern: re.Pattern[str], text: str, literal: str, reach: int) -> Iterator[re.Match[str]]:
    """The matches of a pattern each of which starts 1 to `reach` characters before an occurrence of `literal`,
    in order: each such position tried once, the leftmost first, none inside a match found."""
    tried = 0  # the positions below this were tried, or lie inside a match found
    at = text.find(literal)
    while at >= 0:
        for start in range(max(tried, at - reach), at):
            m = pattern.match(text, start)
            if m is not None:
                yield m
                tried = m.end()
                break
        else:
            tried = max(tried, at)
        at = text.find(literal, max(tried, at + 1))


def _lines_with(text: str, words: tuple[str, ...], lower: str | None = None,
                around: tuple[str | None, str | None] | None = None) -> list[tuple[int, int]]:
    """(start, end) offsets of the lines of `text` that hold one of `words` (lower case; with the patterns
    `around`, if given, before and after it: see _LINE_AROUND), or one of _CASE_TWINS (any non-ASCII character
    where lowering changes the text's length)."""
    if lower is None:
        lower = text.lower()
    if len(lower) == len(text):  # each character lowered to one: the offsets are the text's
        # (isascii is a flag of the string: free; an outline's `…` makes no line one to search)
        twins = () if text.isascii() else tuple(c for c in _CASE_TWINS if c in text)
        return _lines_found(text, [(lower, words, _placed(around) if around else None), (text, twins, None)])
    spans = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        if not line.isascii() or any(map(line.lower().__contains__, words)):
            spans.append((start, end))
        start = end + 1
    return spans


# The characters that re.IGNORECASE matches to an ASCII letter (a test checks every code point).
_CASE_TWINS = ("\u0130", "\u0131", "\u017f", "\u212a")  # İ ı ſ K


def _placed(around: tuple[str | None, str | None]) -> Callable[[str, int, int], bool]:
    """Whether a word at text[at:end] has _LINE_AROUND's `around` (before, after) patterns around it."""
    before = _pattern(around[0], 0).search if around[0] else None
    after = _pattern(around[1], 0).match if around[1] else None

    def placed(text: str, at: int, end: int) -> bool:
        return (before is None or before(text, max(0, at - _BEFORE_CHARS), at) is not None) and (
            after is None or after(text, end) is not None)

    return placed


def _lines_found(text: str, searches: list[tuple[str, tuple[str, ...], Callable | None]]) -> list[tuple[int, int]]:
    """_lines_with's lines found by C-level finds (a line at a time cost ~0.3 ms per rule on a 300-line
    outline): each (haystack, needles, placed) of `searches` is the lowered text and the words, or the text
    and its _CASE_TWINS (both have the text's offsets); `placed(text, at, end)`, when given, must hold of a
    needle found at text[at:end]."""
    starts = set()
    for haystack, needles, placed in searches:
        for needle in needles:
            at = haystack.find(needle)
            while at >= 0:
                if placed is not None and not placed(text, at, at + len(needle)):
                    at = haystack.find(needle, at + 1)
                    continue
                starts.add(text.rfind("\n", 0, at) + 1)
                end = text.find("\n", at)
                if end < 0:
                    break
                at = haystack.find(needle, end + 1)
    spans = []
    for start in sorted(starts):
        end = text.find("\n", start)
        spans.append((start, len(text) if end < 0 else end))
    return spans


# Escapes inside a code string (`"x\\nghp_..."`, an Edit stored as repr(), JSON in a string): `\\n` glues the
# letter n to the next word, and no rule's boundary sees a line start there. The rules read a view where
# each escape is two blank characters (control characters that `\\s` matches and no rule names), of the
# same length; the result is mapped back.
_ESCAPES = (("\\n", "\x85\x1c"), ("\\t", "\x85\x1d"), ("\\r", "\x85\x1e"))
_ESCAPE_MARKS = ("\x85", "\x1c", "\x1d", "\x1e")


def _unescaped(text: str) -> str | None:
    """The view of a text with escapes as blanks, or None when it holds none (or the marks themselves)."""
    if "\\" not in text or not any(e in text for e, _ in _ESCAPES) or any(c in text for c in _ESCAPE_MARKS):
        return None
    for escape, blank in _ESCAPES:
        text = text.replace(escape, blank)
    return text


def _escaped(view: str) -> str:
    """The view's escapes as they were; a mark a redaction split is its character again."""
    for escape, blank in _ESCAPES:
        view = view.replace(blank, escape)
    return view.replace("\x85", "\\").replace("\x1c", "n").replace("\x1d", "t").replace("\x1e", "r")


def _redact(text: str, depth: int = 0, present: set[str] | None = None, lower: str | None = None,
            viewed: bool = False) -> tuple[str, list[str]]:
    """The text with its secrets replaced, and their kinds. `present`: the triggers the text holds, and `lower`:
    text.lower(), when the caller knows them already (an outline's 18 KB lowered again: 0.07 ms)."""
    view = None if viewed or depth else _unescaped(text)
    if view is not None:
        # the triggers found in the text are those of the view, but for ones spanning an escape (a superset)
        out, kinds = _redact(view, depth, present, view.lower(), viewed=True)
        return _escaped(out), kinds
    found: list[str] = []
    if lower is None:
        lower = text.lower()
    # The rules to run: those with a trigger in the text, in their order; the triggers are found once (and
    # again after a redaction changes the text). Testing every rule's triggers with `in` cost ~60 us a text
    # that passed the gate.
    if present is None:
        present = _TRIGGERS.present(lower)
    todo = _rules_for(present)
    while todo:
        i = todo.pop(0)
        kind, _triggers, source, group, flags, check, needs = _SECRETS[i]
        if needs and not (needs(text) if callable(needs) else any(map(lower.__contains__, needs))):
            continue  # e.g. NAME = value needs "=" or ":" ("the tokenizer" is no secret)
        if kind == "base64" and depth:
            continue
        before = len(found)
        text = _sub(text, kind, source, group, flags, check, found, lower, present)
        if len(found) != before:
            lower = text.lower()
            present = _TRIGGERS.present(lower)
            todo = [j for j in _rules_for(present) if j > i]
    return text, found


def _rules_for(present: set[str]) -> list[int]:
    """The indices in _SECRETS of the rules one of whose triggers is in `present`, in order."""
    rules_of = _RULES_OF or _index_rules()
    return sorted({i for t in present for i in rules_of.get(t, ())})


def _index_rules() -> dict[str, list[int]]:
    """_RULES_OF, made on the first text that passes the gate (most hook processes clean no such text, and
    making it cost each ~0.1 ms); set whole, so that another thread never reads half of it."""
    global _RULES_OF
    rules_of: dict[str, list[int]] = {}
    for i, (_kind, triggers, *_rest) in enumerate(_SECRETS):
        for t in triggers:
            rules_of.setdefault(t, []).append(i)
    _RULES_OF = rules_of
    return rules_of


def redact_secrets(text: str) -> str:
    return _redact(text)[0]


def find_secrets(text: str) -> list[str]:
    """The kinds of the secrets in a text (one entry per secret), never their values."""
    if not _has_trigger(text.lower()):
        return []
    return _redact(text)[1]


_ALL_TRIGGERS = tuple(dict.fromkeys(t for _kind, triggers, *_ in _SECRETS for t in triggers))
_RULES_OF: dict[str, list[int]] = {}  # trigger -> the rules it sets off (_index_rules)
# The gate looks triggers up by their first three characters (memory/base/needles.py): one C-level set
# intersection over the text's trigrams instead of ~300 substring scans (measured 2-15x less per text; most
# texts hold no trigger).
_TRIGGERS = Needles(_ALL_TRIGGERS)


def patterns() -> list[tuple[str, int]]:
    """Every pattern _pattern compiles: scripts/gen_regex_table.py puts them in memory/fastpath/_regex_table.py (a
    function: the list built at import cost every hook ~0.06 ms)."""
    return list(dict.fromkeys([
        (_TAG_SOURCE, _I), (_BLANK_LINE, 0), (_NAME_FIELD, 0), (_NAME_NESTING, 0), (_WORD_PARTS, 0),
        (_JOINED_WORDS, 0), (_DOTTED_NAME, 0), (_IDENTIFIER, 0), (_PORT, 0),
        *((source, 0) for around in _LINE_AROUND.values() for source in around if source),
        *((source, flags) for _kind, _t, source, _g, flags, *_ in _SECRETS)]))


_has_trigger = _TRIGGERS.any_in


def clean(text: str) -> str:
    """The filter every stored text goes through."""
    if not text:
        return text
    # Most texts hold no trigger at all: one lower() and the trigram gate (a long session's state holds
    # hundreds of paths, all cleaned at every tool call).
    lower = text.lower()
    if "private" in lower:
        stripped = strip_private(text)
        if stripped != text:
            return redact_secrets(stripped)
    present = _TRIGGERS.present(lower)  # once: the gate's answer is also the rules to run (a 30 KB outline: ~1.4 ms)
    if not present:
        return text
    return _redact(text, present=present, lower=lower)[0]


class Cleaner:
    """`clean` for a stream of texts (a bulk import): the same result for every text, with a memo of the
    words already seen in front of the gate (needles.PieceMemo): a text of known, trigger-free words is
    passed in ~2 us instead of the trigram gate's ~9 us. One per batch or import, not per process: hooks
    clean a few texts each and would only pay for the memo."""

    def __init__(self) -> None:
        self.memo = PieceMemo((*_ALL_TRIGGERS, "private"))

    def __call__(self, text: str) -> str:
        if not text:
            return text
        lower = text.lower()
        present = self.memo.present(lower)
        if not present:
            return text  # no trigger and no "private": what clean returns then
        if "private" in present:
            stripped = strip_private(text)
            if stripped != text:
                return redact_secrets(stripped)
        return _redact(text, present=present, lower=lower)[0]  # "private" itself sets off no rule


def clean_obj(value: object) -> object:
    """`clean` applied to every string inside a JSON-like value."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [clean_obj(v) for v in value]
    if isinstance(value, dict):
        return {k: clean_obj(v) for k, v in value.items()}
    return value
