"""One mailbox, however its address is written: the key under which an email address confirms
one account only (``ConfirmedEmail.mailbox``) and its password-reset mails are counted.

Mail servers deliver many spellings of an address to the same reader, so each spelling would
otherwise confirm an account of its own, and every per-account cap (bots, ladder seats,
checks, scrimmages) would multiply with it. The key folds what delivers to the same place:

- the case of the domain and of the local part (no mail provider in use tells ``Mbox`` from
  ``mbox``);
- a quoted local part (``"mbox"@example.org`` is ``mbox@example.org``);
- a sub-address: everything from the first ``+`` of the local part (``mbox+tag``), the tag
  syntax of Gmail, Outlook, iCloud, Fastmail, Proton and most servers;
- for the providers of ``IGNORED_DOTS``, the dots of the local part, and their alias domains.

The rule errs towards folding: two people whose addresses differ only in a ``+`` tag at a
server that does not treat it as a tag share a key, and the second cannot confirm.
"""

from __future__ import annotations

import re

# Providers that deliver ``m.box`` and ``mbox`` to the same mailbox, each domain with the one
# it is an alias of (Google: googlemail.com is gmail.com under another name).
IGNORED_DOTS: dict[str, str] = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}
SUB_ADDRESS = "+"
_QUOTED_PAIR = re.compile(r"\\(.)")


def mailbox_key(address: str) -> str:
    """The mailbox an address delivers to, as one canonical string (``local@domain``)."""
    local, _, domain = address.strip().rpartition("@")
    domain = domain.rstrip(".").casefold()
    if len(local) >= 2 and local.startswith('"') and local.endswith('"'):
        local = _QUOTED_PAIR.sub(r"\1", local[1:-1])
    local = local.casefold().partition(SUB_ADDRESS)[0]
    if domain in IGNORED_DOTS:
        domain = IGNORED_DOTS[domain]
        local = local.replace(".", "")
    return f"{local}@{domain}"
