"""The symbol table in pure Python: the specification of csrc/symtab.c
(Chapter 11, listings 061-062: token_to_id / id_to_token).

    >>> SymbolTable([b"l", b"o"]).intern(b"lo")
    2
"""

from .common import NO_SYMBOL

__all__ = ["SymbolTable"]


class SymbolTable:
    """Byte strings <-> dense int IDs, in first-interned order.

    >>> t = SymbolTable([b"a", b"b"])
    >>> t.intern(b"ab"), t.intern(b"a"), t.lookup(b"zz"), len(t)
    (2, 0, -1, 3)
    """

    def __init__(self, tokens=()):
        self._tokens = []
        self._ids = {}
        for token in tokens:
            self.intern(token)

    def intern(self, token):
        """The ID of `token`, adding it with the next free ID when absent."""
        if type(token) is not bytes:
            raise TypeError("symbols are bytes, not %s" % type(token).__name__)
        found = self._ids.get(token)
        if found is not None:
            return found
        new = len(self._tokens)
        if new >= NO_SYMBOL:  # IDs are uint32_t and NO_SYMBOL is reserved
            raise OverflowError("symbol table is full (2**32 - 1 entries)")
        self._tokens.append(token)
        self._ids[token] = new
        return new

    def lookup(self, token):
        """The ID of `token`, or -1 when it was never interned."""
        if type(token) is not bytes:
            raise TypeError("symbols are bytes, not %s" % type(token).__name__)
        return self._ids.get(token, -1)

    def __len__(self):
        return len(self._tokens)

    def token(self, id):
        """The bytes of symbol `id`; IndexError when out of range."""
        if not isinstance(id, int):
            raise TypeError("symbol ID must be an int, not %s" % type(id).__name__)
        if not 0 <= id < len(self._tokens):
            raise IndexError("symbol ID %d out of range (table has %d)" % (id, len(self._tokens)))
        return self._tokens[id]

    def tokens(self):
        """Every symbol's bytes, in ID order."""
        return list(self._tokens)
